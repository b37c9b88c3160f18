"""`with` blocks whose context manager does not change values: the body is differentiated.

Runs right after parsing, before `check`:

    with np.errstate(divide="ignore"):          y = np.log(x)
        y = np.log(x)                      ->

`np.errstate` and `warnings.catch_warnings` (and `np.testing.suppress_warnings`) only
change which floating-point conditions warn or raise; the values the body computes are
the same, so the block is read as its body. The generated code does not enter them, so a
warning they would silence can show. Any other context manager is refused (check.py).
"""
from __future__ import annotations

import warnings
from dataclasses import replace

import gast
import numpy as np

from ..source import FunctionSource
from ...ir.blocks import walk


def _neutral():
    found = [np.errstate, warnings.catch_warnings]
    testing = getattr(np, "testing", None)
    if testing is not None and hasattr(testing, "suppress_warnings"):
        found.append(testing.suppress_warnings)
    return tuple(found)


_NEUTRAL = _neutral()


def unwrap_contexts(fn: FunctionSource) -> FunctionSource:
    """`fn` with each `with` of value-neutral context managers replaced by its body."""
    if not any(isinstance(n, gast.With) for n in walk(fn.tree)):
        return fn
    _Unwrap(fn).visit(fn.tree)
    return replace(fn)


class _Unwrap(gast.NodeTransformer):
    def __init__(self, fn):
        self.fn = fn

    def visit_With(self, node):
        self.generic_visit(node)
        if all(item.optional_vars is None and self._neutral(item.context_expr)
               for item in node.items):
            return node.body
        return node     # refused by check, with its location

    def _neutral(self, expr) -> bool:
        if not isinstance(expr, gast.Call):
            return False
        func, parts = expr.func, []
        while isinstance(func, gast.Attribute):
            parts.append(func.attr)
            func = func.value
        if not isinstance(func, gast.Name):
            return False
        found, obj = self.fn.lookup(func.id)
        for attr in reversed(parts):
            obj = getattr(obj, attr, None) if found else None
        return found and any(obj is cm for cm in _NEUTRAL)
