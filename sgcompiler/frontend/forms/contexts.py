"""`with` blocks whose context manager does not change values: the body is differentiated.

Runs right after parsing, before `check`:

    with np.errstate(divide="ignore"):          y = np.log(x)
        y = np.log(x)                      ->

`np.errstate` and `warnings.catch_warnings` (and `np.testing.suppress_warnings`) only
change which floating-point conditions warn or raise; the values the body computes are
the same, so the block is read as its body. The generated code does not enter them, so a
warning they would silence can show.

`with sgcompiler.checkpoint():` (or `checkpoint(k)`) around one `for` or `while` loop is read as the
loop too, and the loop's line is kept with what it asked for (`FunctionSource.checkpointed`):
its gradient runs it in segments (forms/checkpoint.py). Any other context manager is
refused (check.py).
"""
from __future__ import annotations

import warnings
from dataclasses import replace

import gast
import numpy as np

from ...errors import describe, errors_at
from ...runtime import checkpoint
from ..source import FunctionSource
from ...ir.blocks import nodes
from .checkpoint import check_policy


def _neutral():
    found = [np.errstate, warnings.catch_warnings]
    testing = getattr(np, "testing", None)
    if testing is not None and hasattr(testing, "suppress_warnings"):
        found.append(testing.suppress_warnings)
    return tuple(found)


_NEUTRAL = _neutral()


def unwrap_contexts(fn: FunctionSource) -> FunctionSource:
    """`fn` with each `with` of value-neutral context managers replaced by its body."""
    if not any(isinstance(n, gast.With) for n in nodes(fn.tree)):
        return fn
    unwrap = _Unwrap(fn)
    unwrap.visit(fn.tree)
    return replace(fn, checkpointed=fn.checkpointed + tuple(unwrap.marked))


class _Unwrap(gast.NodeTransformer):
    def __init__(self, fn):
        self.fn = fn
        self.marked = []        # (line of a loop, every)

    def visit_With(self, node):
        self.generic_visit(node)
        if len(node.items) == 1 and self._manager(node.items[0].context_expr) is checkpoint:
            return self._checkpointed(node)
        if all(item.optional_vars is None and
               any(self._manager(item.context_expr) is cm for cm in _NEUTRAL)
               for item in node.items):
            return node.body
        return node     # refused by check, with its location

    def _checkpointed(self, node):
        """The loop of `with checkpoint(every): <one for or while loop>`, its line kept."""
        item, body = node.items[0], node.body
        if item.optional_vars is not None or len(body) != 1 or \
                not isinstance(body[0], (gast.For, gast.While)):
            self._refuse(node, "`with sgcompiler.checkpoint():` must hold exactly one `for` "
                               "loop (over range(...) or a sequence) or `while` loop, with "
                               "no `as`; put the other statements outside the block")
        call = item.context_expr
        given = call.args + [k.value for k in call.keywords if k.arg == "every"]
        if len(given) > 1 or len(given) != len(call.args) + len(call.keywords) or \
                not all(isinstance(v, gast.Constant) for v in given):
            self._refuse(node, "sgcompiler.checkpoint() takes one literal: 'sqrt' (the "
                               "default) or the trips per segment, as checkpoint(20)")
        every = given[0].value if given else "sqrt"
        try:
            check_policy(every)
        except ValueError as exc:
            self._refuse(node, str(exc))
        self.marked.append((body[0].lineno, every))
        return body

    def _refuse(self, node, message):
        raise errors_at([describe(self.fn, node, message)])

    def _manager(self, expr):
        """What the function called in `expr` refers to, or None."""
        if not isinstance(expr, gast.Call):
            return None
        func, parts = expr.func, []
        while isinstance(func, gast.Attribute):
            parts.append(func.attr)
            func = func.value
        if not isinstance(func, gast.Name):
            return None
        found, obj = self.fn.lookup(func.id)
        for attr in reversed(parts):
            obj = getattr(obj, attr, None) if found else None
        return obj if found else None
