"""Python ints and tuples of ints that follow from the arguments' shapes, for sizes.py.

A gradient specialised for its arguments' shapes knows what `x.shape[1]`, `len(x)` and
tuples of them hold, so it knows the shape of what is made from them:

    _shape = xs.shape                  ->  (10, 4, 8)
    _item_1 = _shape[1]                ->  4
    _arg = (_item_1, _item_1_2)        ->  (4, 16)
    h = np.zeros(_arg)                 ->  h: (4, 16) float64

`int_value` gives the value of one normal-form right-hand side (an int, a tuple of ints, or
None: not known); `made_shape` the (shape, dtype) of an array that np.zeros, np.ones,
np.empty, np.full or a *_like function makes. Only names assigned once carry a value
(sizes.py decides that), so a counter that a loop changes is never taken for a constant.
"""
from __future__ import annotations

import math

import gast
import numpy as np

from .ops import CONTAINER, COPY, INDEX, NONDIFFERENTIABLE, RULE

_INT_OPS = {gast.Add: lambda a, b: a + b, gast.Sub: lambda a, b: a - b,
            gast.Mult: lambda a, b: a * b, gast.FloorDiv: lambda a, b: a // b,
            gast.Mod: lambda a, b: a % b}
_MAKERS = {np.zeros: "zeros", np.ones: "ones", np.empty: "empty"}
_LIKE = {np.zeros_like: "zeros_like", np.ones_like: "ones_like",
         np.empty_like: "empty_like"}


def is_int(value) -> bool:
    return type(value) is int or isinstance(value, np.integer)


def _is_size(value) -> bool:
    """An int or a tuple of ints (a shape)."""
    return is_int(value) or (isinstance(value, tuple) and all(is_int(v) for v in value))


def atom_value(node, values):
    """The int (or tuple of ints) an atom holds, or None."""
    if isinstance(node, gast.Constant):
        return node.value if is_int(node.value) and type(node.value) is not bool else None
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        inner = atom_value(node.operand, values)
        return -inner if is_int(inner) else None
    if isinstance(node, gast.Name):
        return values.get(node.id)
    if isinstance(node, gast.Tuple):
        items = tuple(atom_value(e, values) for e in node.elts)
        return items if all(is_int(i) for i in items) else None
    return None


def int_value(stmt, op, shape_of, values, callee_of):
    """The int or tuple of ints `stmt`'s right-hand side holds (as Python ints), or None.

    `shape_of(name)` is the concrete shape of an array (None: not known), `values` the
    values found so far, `callee_of(call)` the object a call calls (None: not known).
    """
    value = _value(stmt, op, shape_of, values, callee_of)
    if is_int(value):
        return int(value)
    return tuple(int(v) for v in value) if isinstance(value, tuple) else None


def _value(stmt, op, shape_of, values, callee_of):
    rhs = stmt.value
    if op.kind == COPY or isinstance(rhs, gast.Constant):
        return atom_value(rhs, values)
    if op.kind == CONTAINER and isinstance(rhs, gast.Tuple):
        return atom_value(rhs, values)
    if isinstance(rhs, gast.Attribute) and isinstance(rhs.value, gast.Name):
        shape = shape_of(rhs.value.id)
        if shape is None:
            return None
        return {"shape": shape, "ndim": len(shape), "size": math.prod(shape)}.get(rhs.attr)
    if op.kind == INDEX and isinstance(rhs.value, gast.Name):
        return _item(values.get(rhs.value.id), rhs.slice, values)
    if isinstance(rhs, gast.BinOp) and type(rhs.op) in _INT_OPS:
        left, right = atom_value(rhs.left, values), atom_value(rhs.right, values)
        if is_int(left) and is_int(right):
            if isinstance(rhs.op, (gast.FloorDiv, gast.Mod)) and right == 0:
                return None
            return int(_INT_OPS[type(rhs.op)](left, right))
        if isinstance(rhs.op, gast.Add) and isinstance(left, tuple) and \
                isinstance(right, tuple):
            return left + right
        return None
    if isinstance(rhs, gast.Call) and len(rhs.args) == 1 and not rhs.keywords and \
            op.kind in (NONDIFFERENTIABLE, RULE):
        callee = callee_of(rhs)
        arg = rhs.args[0]
        if callee is len:
            inner = atom_value(arg, values)
            if isinstance(inner, tuple):
                return len(inner)
            shape = shape_of(arg.id) if isinstance(arg, gast.Name) else None
            return shape[0] if shape else None
        if callee is int:
            inner = atom_value(arg, values)
            return int(inner) if is_int(inner) else None
    return None


def _item(container, index, values):
    """tuple[i] or tuple[a:b] of a known tuple of ints."""
    if not isinstance(container, tuple):
        return None
    if isinstance(index, gast.Slice):
        bounds = [None if b is None else atom_value(b, values)
                  for b in (index.lower, index.upper, index.step)]
        parts = (index.lower, index.upper, index.step)
        if any(p is not None and not is_int(b) for p, b in zip(parts, bounds)) or \
                bounds[2] == 0:
            return None
        return container[slice(*bounds)]
    i = atom_value(index, values)
    if is_int(i) and -len(container) <= i < len(container):
        return container[i]
    return None


def made_shape(stmt, op, atom, values, callee_of):
    """(shape, dtype) of np.zeros/ones/empty(shape), np.full(shape, v), the *_like
    functions and np.arange of ints; None when `stmt` is none of them or the shape is not known. `atom(node)` is
    the (shape, dtype) of an atom (sizes.py's)."""
    rhs = stmt.value
    if not isinstance(rhs, gast.Call) or not rhs.args:
        return None
    callee = callee_of(rhs)
    keywords = {k.arg: k.value for k in rhs.keywords}
    if op.kind == RULE and op.rule.name in ("np.full", "np.full_like"):
        callee = np.full if op.rule.name == "np.full" else np.full_like
    elif op.kind != NONDIFFERENTIABLE:
        return None
    if callee in _MAKERS or callee is np.full:
        if set(keywords) - {"dtype", "fill_value", "shape"} or len(rhs.args) > 2:
            return None
        size = atom_value(rhs.args[0], values)
        if not _is_size(size) or (is_int(size) and size < 0):
            return None
        shape = (size,) if is_int(size) else size
        if callee is np.full:
            return shape, _dtype(keywords, None)
        return shape, _dtype(keywords, np.dtype(np.float64))
    if (callee is np.eye and len(rhs.args) <= 2 or callee is np.identity and
            len(rhs.args) == 1) and not set(keywords) - {"dtype", "k"}:
        sizes = [atom_value(a, values) for a in rhs.args]
        if not all(is_int(n) and n >= 0 for n in sizes):
            return None
        return (int(sizes[0]), int(sizes[-1])), _dtype(keywords, np.dtype(np.float64))
    if callee is np.arange and not keywords and len(rhs.args) <= 3:
        bounds = [atom_value(a, values) for a in rhs.args]     # (ints alone)
        if not all(is_int(b) for b in bounds) or len(bounds) == 3 and bounds[2] == 0:
            return None
        return (len(range(*(int(b) for b in bounds))),), np.arange(1).dtype
    if callee in _LIKE or callee is np.full_like:
        if set(keywords) - {"dtype", "fill_value"} or len(rhs.args) > 2:
            return None
        like = atom(rhs.args[0])
        if not isinstance(like, tuple):
            return None
        dtype = like[1] if isinstance(like[1], np.dtype) else None
        return like[0], _dtype(keywords, dtype)
    return None


def _dtype(keywords, default):
    """The dtype when no dtype= is given, else None (not followed here)."""
    return default if "dtype" not in keywords else None


def reshape_shape(found, newshape, values):
    """The shape np.reshape(a, newshape) gives an array of (shape, dtype) `found`, where
    newshape's ints are known (one may be -1); None otherwise."""
    size = atom_value(newshape, values)
    if not isinstance(found, tuple) or not _is_size(size):
        return None
    shape = (size,) if is_int(size) else tuple(size)
    total = math.prod(found[0])
    unknown = [i for i, n in enumerate(shape) if n == -1]
    if len(unknown) > 1 or any(n < -1 for n in shape):
        return None
    if unknown:
        rest = math.prod(n for n in shape if n != -1)
        if rest == 0 or total % rest:
            return None
        shape = tuple(total // rest if n == -1 else n for n in shape)
    return (tuple(int(n) for n in shape), found[1]) if math.prod(shape) == total else None


def dot_shape(a, b):
    """The shape of np.dot(a, b) for operands of these shapes (any ranks), or None."""
    if a == () or b == ():
        return np.broadcast_shapes(a, b)
    if len(b) == 1:
        return a[:-1] if a[-1] == b[0] else None
    return a[:-1] + b[:-2] + b[-1:] if a[-1] == b[-2] else None
