"""The adjoints of Python's `+` and `*` on lists and tuples: `a + b` joins them and
`[v] * n` repeats one (reverse/adjoints.py calls these where an operand may be a list).
Whether an operand is a list is known only when the code runs (a parameter passed as a
tree may hold an array, whose `+` is NumPy's), so each helper decides then:

    c = a + b      ->  da = joined_part(dc, a, b, 0); db = joined_part(dc, a, b, 1)
    c = a * n      ->  da = repeated_part(dc, a, n)
"""
from __future__ import annotations

import numpy as np

from .core import add_trees, unbroadcast


def _sequence(x) -> bool:
    return isinstance(x, (list, tuple))


def _zero(g) -> bool:
    return type(g) is float and g == 0.0


def joined_part(g, a, b, side):
    """The adjoint of `a` (side 0) or `b` (side 1) in `a + b`, whose adjoint is `g`: its
    part of `g` when a + b joined two lists or tuples, else NumPy's (unbroadcast)."""
    if not (_sequence(a) and _sequence(b)):
        return unbroadcast(g, b if side else a)
    if _zero(g):
        return 0.0
    part = list(g[len(a):]) if side else list(g[:len(a)])
    return tuple(part) if isinstance(b if side else a, tuple) else part


def repeated_part(g, items, count):
    """The adjoint of `items` in `items * count` (or `count * items`), whose adjoint is
    `g`: the sum of `g`'s parts when it repeated a list or tuple, else NumPy's product."""
    if not _sequence(items) or not isinstance(count, (int, np.integer)):
        return unbroadcast(g * count, items)
    if _zero(g):
        return 0.0
    n = len(items)
    total = [0.0] * n
    for start in range(0, n * count, n):
        total = [add_trees(t, p) for t, p in zip(total, g[start:start + n])]
    return tuple(total) if isinstance(items, tuple) else total


# --- their adjoints (grad of grad reads the code that calls them: rules/sequences.py) ---


def joined_whole(h, g, a, b, side):
    """The adjoint of joined_part(g, a, b, side) for `g`, whose part's adjoint is `h`: `h`
    put back at that part's place in a list as long as `g` (zeros elsewhere) when a + b
    joined two lists or tuples, else `h` broadcast back to g's shape (unbroadcast's)."""
    if not (_sequence(a) and _sequence(b)):
        return unbroadcast(h, g)
    if _zero(g) or _zero(h):
        return 0.0
    whole = [0.0] * len(g)
    start = len(a) if side else 0
    for i, part in enumerate(h):
        whole[start + i] = part
    return whole


def repeated_whole(h, g, items, count):
    """The adjoint of repeated_part(g, items, count) for `g`: `h` at each repeat's place
    in a list as long as `g` (the sum's transpose), else NumPy's: h * count, summed to
    g's shape, with h broadcast back from items' shape to that of g * count."""
    if not _sequence(items) or not isinstance(count, (int, np.integer)):
        return unbroadcast(unbroadcast(h, g * count) * count, g)
    if _zero(g) or _zero(h):
        return 0.0
    n = len(items)
    return [h[j % n] if j < n * count else 0.0 for j in range(len(g))]


def repeated_count(h, g, items, count):
    """The adjoint of repeated_part(g, items, count) for `count`: none for a list repeated
    a whole number of times, else NumPy's product's (h broadcast back, times g)."""
    if _sequence(items) and isinstance(count, (int, np.integer)) or _zero(h):
        return 0.0
    return unbroadcast(unbroadcast(h, g * count) * g, count)


def repeated_count_tangent(g, items, count, count_dot):
    """The tangent of repeated_part(g, items, count) for a tangent `count_dot` of the
    count: none for a list repeated a whole number of times, else NumPy's product's."""
    if _sequence(items) and isinstance(count, (int, np.integer)):
        return 0.0
    return unbroadcast(g * count_dot, items)


# (for core.TREE_HELPERS: what each returns has the kind of that argument, a list's for a
# list; the kinds analysis reads them in generated code read again, so that their results
# are added with add_trees, not joined by `+`)
SEQUENCE_HELPERS = ((joined_part, 1), (repeated_part, 1), (joined_whole, 1),
                    (repeated_whole, 1))
