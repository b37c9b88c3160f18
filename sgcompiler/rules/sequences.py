"""Derivative rules of the adjoints of `+` and `*` on lists and tuples (joined_part,
repeated_part: runtime/sequences.py), which grad of grad meets when it reads generated
gradient code again. joined_part is linear in its adjoint and reads the operands only
for their lengths (or shapes); repeated_part's NumPy case is also a product with the
count. Their adjoints (joined_whole, repeated_whole) are their transposes, whose
transposes are joined_part and repeated_part again: third order and beyond."""
from __future__ import annotations

from ..runtime import (joined_part, joined_whole, repeated_count, repeated_count_tangent,
                       repeated_part, repeated_whole)
from .registry import jvp, linear, multilinear, vjp


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


# joined_whole(h, g_, a, b, side) puts h at its part's place (or broadcasts it back to g_'s
# shape): its transpose takes that part, joined_part; g_, a and b give lengths (shapes)
@vjp(joined_whole, name="joined_whole")
def joined_whole_(g, ans, h, g_, a, b, side):
    return joined_part(g, a, b, side), 0.0, 0.0, 0.0, 0.0


# repeated_whole(h, g_, items, count) puts h at each repeat's place (NumPy's: h broadcast
# back, times count, summed to g_'s shape): its transpose in h sums the repeats,
# repeated_part; in count (NumPy's case) it is repeated_count with g for g_
@vjp(repeated_whole, name="repeated_whole")
def repeated_whole_(g, ans, h, g_, items, count):
    return repeated_part(g, items, count), 0.0, 0.0, repeated_count(h, g, items, count)


linear(joined_whole)
multilinear(repeated_whole)
