"""Derivative rules of the adjoints of `+` and `*` on lists and tuples (joined_part,
repeated_part: runtime/sequences.py), which grad of grad meets when it reads generated
gradient code again. joined_part is linear in its adjoint and reads the operands only
for their lengths (or shapes); repeated_part's NumPy case is also a product with the
count."""
from __future__ import annotations

from ..runtime import (joined_part, joined_whole, repeated_count, repeated_count_tangent,
                       repeated_part, repeated_whole)
from .registry import jvp, linear, vjp


@vjp(joined_part, name="joined_part")
def joined_part_(g, ans, g_, a, b, side):
    return joined_whole(g, g_, a, b, side), 0.0, 0.0, 0.0


@vjp(repeated_part, name="repeated_part")
def repeated_part_(g, ans, g_, items, count):
    return repeated_whole(g, g_, items, count), 0.0, repeated_count(g, g_, items, count)


@jvp(repeated_part, name="repeated_part", trees=True)     # (a list and a zero count's 0.0)
def repeated_part_tangent(g__dot, count_dot, ans, g_, items, count):
    return repeated_part(g__dot, items, count), \
        repeated_count_tangent(g_, items, count, count_dot)


linear(joined_part)
