"""The algebra of concrete shapes and dtypes, shared by the two readers that follow them:
sizes.py, through the normal form of the user's function, and optimize/known/code_shapes.py,
through the generated code. A fact is `(shape, dtype)`, None when unknown, or `_PENDING`
(sizes.py: an input not evaluated yet); a dtype is a floating np.dtype, WEAK (a Python
number) or None (unknown).

    broadcast([((3, 1), float64), ((4,), WEAK)])      ->  ((3, 4), float64)
    reduce_shape(((3, 4), float64), 1, False)         ->  ((3,), float64)
    matmul_shape(((3, 4), float64), ((4,), float64))  ->  ((3,), float64)
"""
from __future__ import annotations

import gast
import numpy as np

from .values import dot_shape


class _Weak:
    def __repr__(self):
        return "weak"


WEAK = _Weak()          # the dtype of a Python number: it takes the dtype of arrays it meets
# (dtypes are compared with same(), never with ==: np.dtype("float64") == None is True)
_PENDING = object()    # an input not assigned yet in this sweep (a loop carries it around)


def same_dtype(a, b) -> bool:
    """a and b are the same dtype (np.dtype, WEAK or None for unknown)."""
    if isinstance(a, np.dtype) and isinstance(b, np.dtype):
        return a == b
    return a is b


def same(a, b) -> bool:
    """Two (shape, dtype) facts (or None) are the same."""
    if a is None or b is None:
        return a is b
    return a[0] == b[0] and same_dtype(a[1], b[1])


def broadcast(found):
    pending = False
    for f in found:     # (loops, not any(): it is asked for every operation's operands)
        if f is None:
            return None
        pending = pending or f is _PENDING
    if pending:
        return _PENDING
    first = found[0][0] if found else None
    if type(first) is tuple and _plain(first) and all(s == first for s, _ in found):
        shape = first       # (the common case, without NumPy's broadcast_shapes call)
    else:
        try:
            shape = np.broadcast_shapes(*(s for s, _ in found))
        except ValueError:
            return None
    strong = [d for _, d in found if d is not WEAK]
    if not strong:
        return shape, (WEAK if shape == () else None)
    dtype = strong[0] if all(same_dtype(d, strong[0]) for d in strong) else None
    if dtype is not None and not (isinstance(dtype, np.dtype) and dtype.kind == "f"):
        dtype = None
    return shape, dtype


def _plain(shape) -> bool:
    """A shape of non-negative Python ints."""
    for n in shape:
        if type(n) is not int or n < 0:
            return False
    return True


def reduce_shape(found, axis, keepdims):
    """(shape, dtype) of a reduction over `axis` (None, an int or a tuple of ints) of an
    operand of (shape, dtype) `found`."""
    if found is None or found is _PENDING:
        return found
    shape, dtype = found
    axes = axes_of(axis, len(shape))
    if axes is None or not isinstance(keepdims, bool):
        return None
    if keepdims:
        out = tuple(1 if i in axes else n for i, n in enumerate(shape))
    else:
        out = tuple(n for i, n in enumerate(shape) if i not in axes)
    return out, (None if dtype is WEAK else dtype)


def axes_of(axis, ndim):
    """The sorted axes a constant `axis` (None, an int or a tuple of ints) names for an
    array of `ndim` axes, or None."""
    if axis is None:
        return tuple(range(ndim))
    if axis is NOT_CONSTANT:
        return None
    axes = set()
    for a in (axis if isinstance(axis, tuple) else (axis,)):
        if type(a) is not int or not -ndim <= a < ndim:
            return None
        axes.add(a % ndim)
    return tuple(sorted(axes))


def matmul_shape(left, right):
    if left is None or right is None:
        return None
    if left is _PENDING or right is _PENDING:
        return _PENDING
    (a, da), (b, db) = left, right
    if not (1 <= len(a) <= 2 and 1 <= len(b) <= 2):
        return None
    if a[-1] != b[0]:
        return None
    shape = a[:-1] + b[1:]
    dtype = da if same_dtype(da, db) and isinstance(da, np.dtype) and da.kind == "f" else None
    return shape, dtype


NOT_CONSTANT = object()     # what `constant` gives for a node that is not a constant


def constant(node, default):
    """The value of a constant argument (an int, a tuple of ints, a bool or None)."""
    if node is None:
        return default
    if isinstance(node, gast.Constant):
        return node.value
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub) and \
            isinstance(node.operand, gast.Constant) and type(node.operand.value) is int:
        return -node.operand.value
    if isinstance(node, gast.Tuple):
        items = tuple(constant(e, NOT_CONSTANT) for e in node.elts)
        return NOT_CONSTANT if NOT_CONSTANT in items else items
    return NOT_CONSTANT


def _dot(left, right):
    """(shape, dtype) of np.dot of operands of any rank."""
    if left is None or right is None:
        return None
    if left is _PENDING or right is _PENDING:
        return _PENDING
    if len(left[0]) <= 2 and len(right[0]) <= 2 and left[0] != () and right[0] != ():
        return matmul_shape(left, right)
    shape = dot_shape(left[0], right[0])
    dtype = broadcast([((), left[1]), ((), right[1])])
    return None if shape is None or dtype is None else (shape, dtype[1])


def _int_array(found) -> bool:
    """Whether (shape, dtype) is that of an array of ints (not a number, not bools)."""
    return isinstance(found, tuple) and found[0] != () and isinstance(found[1], np.dtype) \
        and found[1].kind in "iu"


def _index(found, index, ints, values=None, atom=None):
    """The shape of an index of an array of known shape: ints (constants or loop
    indexes), slices with bounds that are constants or known ints, None, Ellipsis and
    (given `atom`, a name's (shape, dtype)) arrays of ints of known shape, whose result's
    shape does not depend on the ints they hold (x[np.arange(n), y])."""
    if found is None or found is _PENDING:
        return found
    shape, dtype = found
    if shape == ():
        return None
    items = index.elts if isinstance(index, gast.Tuple) else [index]
    key = []
    for item in items:
        if isinstance(item, gast.Slice):
            bounds = [values.get(b.id, NOT_CONSTANT) if isinstance(b, gast.Name) and values
                      else constant(b, None) for b in (item.lower, item.upper, item.step)]
            if any(b is NOT_CONSTANT or not (b is None or type(b) is int) for b in bounds):
                return None
            key.append(slice(*bounds))
        elif isinstance(item, gast.Name) and item.id in ints:
            key.append(0)       # any in-range int gives the same shape
        elif isinstance(item, gast.Name) and atom is not None and \
                _int_array(atom(item)):
            key.append(np.zeros(atom(item)[0], dtype=np.intp))     # (in range: 0)
        else:
            value = constant(item, NOT_CONSTANT)
            if value is Ellipsis or value is None or type(value) is int:
                key.append(value)
            else:
                return None
    key = tuple(key) if isinstance(index, gast.Tuple) else key[0]
    try:
        dummy = np.lib.stride_tricks.as_strided(np.zeros(1), shape=shape,
                                                strides=(0,) * len(shape))
        result = dummy[key]
    except (IndexError, TypeError, ValueError):
        return None
    return np.shape(result), dtype
