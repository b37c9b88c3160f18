"""Shape classes of broadcasts (part of analysis/shapes.py): which elementwise results
share a shape because they broadcast arrays of the same classes.

    a = y * p                       a: the broadcast of y's and p's classes
    b = (1.0 - y) * q   (q ~ p)  -> b: the same class as a
"""
from __future__ import annotations


class Broadcasts:
    """Classes of broadcasts: each class stands for one shape, and broadcasting is a
    function of the shapes that does not depend on their order or on repeats, so a set of
    classes broadcast together names one shape (`y * p` and `(1 - y) * q`, with p and q of
    one class, share a class). The class of a set is the first name assigned once that
    got it (a name, so that code can read its shape: `unbroadcast(g, _mul)`)."""

    def __init__(self):
        self.of_set = {}        # frozenset of whole-array classes -> representative
        self.parts = {}         # representative -> its frozenset

    def class_of(self, classes):
        """The representative of the broadcast of `classes`, or None when it has none."""
        parts = frozenset().union(*(self.parts.get(c, {c}) for c in classes))
        if len(parts) == 1:
            return next(iter(parts))
        return self.of_set.get(parts)

    def register(self, classes, name):
        """`name`, assigned once, is the broadcast of arrays of `classes`."""
        if any(c is None or c.startswith("<") for c in classes):    # (scalar, reduced)
            return
        parts = frozenset().union(*(self.parts.get(c, {c}) for c in classes))
        if len(parts) > 1 and parts not in self.of_set:
            self.of_set[parts] = name
            self.parts[name] = parts
