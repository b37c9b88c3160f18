"""What the activity analysis saw of each statement, as plain data with its source line.

    q = stop_gradient(_mul)      -> Flow("q", inputs=(), reads=("_mul",), kind=STOPPED,
                                         what="stop_gradient", line=8)
    r = np.round(w)              -> Flow("r", (), ("w",), NONDIFFERENTIABLE, "np.round",
                                         line=9, flat=True)

The activity analysis keeps one Flow per statement (`Activity.flows`), so explanations
(analysis/why.py, explain.py) are worked out from the very facts the compiler used.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import gast
import numpy as np

from ..frontend.resolve import METHOD, NONDIFF, PRIMITIVE
from ..rules.constants import PIECEWISE_CONSTANT
from .ops import CALL, NONDIFFERENTIABLE, RULE, target_of


@dataclass(frozen=True)
class Flow:
    """One normal-form statement as the activity analysis saw it."""

    target: str
    inputs: tuple           # names a gradient flows from (through a derivative rule)
    params: tuple           # the parameter of the operation each of `inputs` is passed as
    reads: tuple            # every name the statement reads
    kind: str               # an ops kind: RULE, STOPPED, NONDIFFERENTIABLE, CALL, ...
    what: str               # how messages name the operation ("np.argmax", "a comparison")
    line: int | None        # in the user's file
    flat: bool = False      # piecewise constant: its derivative is zero almost everywhere
    callee: object = field(default=None, compare=False)    # the user function a CALL calls


def flow_of(stmt, op, resolution) -> Flow:
    """The Flow of a normal-form statement whose Op is `op`."""
    params = tuple(p for p, _ in op.inputs)
    return Flow(target_of(stmt), tuple(n for _, n in op.inputs), params, op.reads, op.kind,
                op.what or _what(stmt, resolution), getattr(stmt, "lineno", None),
                _flat(stmt, op, resolution), op.rule if op.kind == CALL else None)


def _what(stmt, resolution) -> str:
    """How a message names an operation that has no `what` of its own."""
    value = getattr(stmt, "value", None)
    if isinstance(value, gast.Compare):
        return "a comparison"
    if isinstance(value, gast.BinOp) and isinstance(value.op, gast.FloorDiv):
        return "'//'"
    if isinstance(value, gast.Attribute):
        return f"the attribute .{value.attr}"
    if isinstance(value, gast.Call):
        callee = resolution.callee(value.func)
        return f".{callee.name}()" if callee.kind == METHOD else callee.name
    return ""


_FLAT = {id(f) for f in PIECEWISE_CONSTANT}
_FLAT_METHODS = {"round"}
_INTEGER_TYPES = {"int", "bool", "intp", "uint", "int8", "int16", "int32", "int64", "uint8",
                  "uint16", "uint32", "uint64", "bool_"}


def _flat(stmt, op, resolution) -> bool:
    value = getattr(stmt, "value", None)
    if isinstance(value, gast.Compare):
        return True
    if isinstance(value, gast.BinOp):
        return isinstance(value.op, gast.FloorDiv)
    if not isinstance(value, gast.Call):
        return False
    callee = resolution.callee(value.func)
    if callee.kind == METHOD:
        return callee.name in _FLAT_METHODS or op.kind == RULE and \
            callee.name == "astype" and _integer_dtype(op.args.get("dtype"))
    if callee.kind in (NONDIFF, PRIMITIVE) and op.kind == NONDIFFERENTIABLE:
        return id(callee.obj) in _FLAT
    return False


def _integer_dtype(node) -> bool:
    """`int`, `np.int32`, "int64": a cast to it has a zero derivative."""
    if isinstance(node, gast.Constant) and isinstance(node.value, str):
        try:
            return np.dtype(node.value).kind in "biu"
        except TypeError:
            return False
    name = node.attr if isinstance(node, gast.Attribute) else \
        node.id if isinstance(node, gast.Name) else None
    return name in _INTEGER_TYPES
