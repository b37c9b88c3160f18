"""Helpers that batched tangent code calls (forward/batch.py): each tangent carries a
leading axis, one tangent per basis direction, so `hessian` and `jacobian(mode="fwd")` run
the tangent code once for all columns. A helper here is the batched form of a linear
helper (or any function linear in some arguments: `batch_map`, one call per direction).
"""
from __future__ import annotations

import numpy as np

from ..records import is_record, rebuild, record_items
from .batched_rules import BatchMismatch
from .core import reduced_axes
from .numpy.linalg import matmul_grad_left, matmul_grad_right


_CONTAINERS = (list, tuple, dict)


def broadcast_batch(t, ans):
    """A batched tangent with the shape (batch,) + ans.shape (a contribution may have an
    operand's smaller shape: the tangent of x + c is x's, broadcast). The tangent of a
    container (tuples joined by +) is as it is: its items are batched."""
    if isinstance(ans, _CONTAINERS):
        return t
    return _shaped(_array_tangent(t), np.shape(ans))


def _shaped(t, shape):
    """A batched tangent broadcast to (batch,) + shape."""
    full = np.shape(t)[:1] + shape
    if np.shape(t) == full:
        return t
    return np.array(np.broadcast_to(t, full))


def _ranked(t, rank):
    """t of shape (batch,) + s, with ones inserted after the batch axis up to `rank` axes
    after it (s broadcasts from the right)."""
    missing = rank - (np.ndim(t) - 1)
    return np.reshape(t, np.shape(t)[:1] + (1,) * missing + np.shape(t)[1:]) \
        if missing > 0 else t


def batch_unbroadcast(t, x):
    """unbroadcast(t[k], x) for each direction k: sum the batched tangent down to
    (batch,) + x.shape."""
    if not isinstance(t, (list, tuple, dict)) and np.ndim(t) == 0:
        return t        # (a number: a zero of no direction, of any shape: batch_map's)
    shape = np.shape(x)
    t = _ranked(_as_array(_array_tangent(t)), len(shape))
    extra = np.ndim(t) - 1 - len(shape)
    if extra > 0:
        t = np.sum(t, axis=tuple(range(1, extra + 1)))
    axes = tuple(i + 1 for i, n in enumerate(shape) if n == 1 and np.shape(t)[i + 1] != 1)
    if axes:
        t = np.sum(t, axis=axes, keepdims=True)
    return _shaped(t, shape)


def _as_array(t):
    """t as an array: a number's, or t itself when it is one (a dask array stays lazy)."""
    return t if hasattr(t, "shape") and hasattr(t, "ndim") else np.asarray(t)


def batch_unreduce(t, x, axis=None, keepdims=False):
    """unreduce(t[k], x, axis, keepdims) for each direction k: the batched tangent of a
    reduction of x, broadcast back to (batch,) + x.shape."""
    shape = np.shape(x)
    t = _as_array(t)
    if axis is not None and not keepdims and np.ndim(t) - 1 < len(shape):
        t = np.expand_dims(t, tuple(a + 1 for a in reduced_axes(axis, len(shape))))
    return np.broadcast_to(_ranked(t, len(shape)), np.shape(t)[:1] + shape)


def _small(x, y) -> bool:
    """Whether x and y have 1 or 2 axes (then np.dot is x @ y, and its gradients are)."""
    return 1 <= np.ndim(x) <= 2 and 1 <= np.ndim(y) <= 2


def batch_matmul_grad_left(t, x, y, helper=matmul_grad_left):
    """helper(t[k], x, y) for each direction k, helper matmul_grad_left or dot_grad_left
    (x and y of 1 or 2 axes; else one direction at a time)."""
    if not _small(x, y):
        return batch_map(helper, (0,), t, x, y)
    if np.ndim(y) == 1:
        return t[..., None] * y
    if np.ndim(x) == 1:
        return t @ np.swapaxes(y, -1, -2)
    return t @ np.swapaxes(y, -1, -2)


def batch_matmul_grad_right(t, x, y, helper=matmul_grad_right):
    """helper(t[k], x, y) for each direction k, helper matmul_grad_right or
    dot_grad_right (x and y of 1 or 2 axes; else one direction at a time)."""
    if not _small(x, y):
        return batch_map(helper, (0,), t, x, y)
    if np.ndim(x) == 1:
        if np.ndim(y) == 1:
            return t[:, None] * x
        return x[:, None] * t[:, None, :]
    if np.ndim(y) == 1:
        return t @ x
    return np.swapaxes(x, -1, -2) @ t


def batch_matmul_grad_left_y(g, x, t, helper=matmul_grad_left):
    """helper(g, x, t[k]) for each direction k of y's batched tangent t: the gradient of
    x @ y (or np.dot) for x is linear in y too (x and y of 1 or 2 axes; else one
    direction at a time)."""
    if not 1 <= np.ndim(x) <= 2 or not 2 <= np.ndim(t) <= 3:
        return batch_map(helper, (2,), g, x, t)
    if np.ndim(t) == 2:                     # y a vector
        return g * t if np.ndim(x) == 1 else np.expand_dims(g, (0, 2)) * t[:, None, :]
    if np.ndim(x) == 1:
        return t @ g
    return g @ np.swapaxes(t, -1, -2)


def batch_matmul_grad_right_x(g, t, y, helper=matmul_grad_right):
    """helper(g, t[k], y) for each direction k of x's batched tangent t, helper
    matmul_grad_right or dot_grad_right (x and y of 1 or 2 axes; else one direction at a
    time)."""
    if not 2 <= np.ndim(t) <= 3 or not 1 <= np.ndim(y) <= 2:
        return batch_map(helper, (1,), g, t, y)
    if np.ndim(t) == 2:                     # x a vector
        return g * t if np.ndim(y) == 1 else t[:, :, None] * np.expand_dims(g, (0, 1))
    return np.swapaxes(t, -1, -2) @ g


def batch_map(fn, positions, *args, **kwargs):
    """fn applied to each direction of the batched arguments at `positions` (fn is linear
    in them), the results stacked along a new leading axis. Arguments with no array in
    them (empty lists and dicts: a dict's tangent before its first item is written) hold
    no direction: fn, linear in them, gives a zero of them, the same for every direction,
    which is its batched result too."""
    size = next((n for n in map(_size, (args[p] for p in positions)) if n is not None),
                None)
    if size is None:
        out = fn(*args, **kwargs)
        if _numbers_only(out):
            return out
        # an array made from the other arguments (item_adjoint's zeros of x's shape) has
        # no batch axis: one jvp per column instead
        raise BatchMismatch(f"{getattr(fn, '__name__', 'a function')} of a tangent with no "
                            "direction in it")
    results = []
    for k in range(size):
        call = list(args)
        for p in positions:
            call[p] = _direction(args[p], k)
        results.append(fn(*call, **kwargs))
    return _stacked(results)


def batch_array(t):
    """A batched tangent read as an array, the batch axis first: a list's (or tuple's)
    tangent, a list of batched items, has them stacked after the batch axis, as NumPy
    stacks a list's items along a new first axis; an array as it is."""
    if not isinstance(t, (list, tuple)):
        return t
    items = [batch_array(v) for v in t]
    size = next((np.shape(v)[0] for v in items if np.ndim(v) > 0), None)
    if size is None:
        raise BatchMismatch("a list's tangent without directions")
    shape = np.broadcast_shapes(*(np.shape(v)[1:] for v in items if np.ndim(v) > 0))
    return np.stack([np.broadcast_to(v, (size,) + shape) for v in items], axis=1)


def _numbers_only(value) -> bool:
    """Whether a value is a number, or a container of numbers alone (zeros of any shape)."""
    if isinstance(value, dict):
        return all(map(_numbers_only, value.values()))
    if isinstance(value, (list, tuple)):
        return all(map(_numbers_only, value))
    return np.ndim(value) == 0


def _size(tangent):
    """The number of directions of a batched tangent (of a list or a dict: its items'),
    None for a container with no array in it (a number in it is a zero of any shape)."""
    if is_record(tangent):      # (a record's tangent: a record of batched fields)
        return next((n for n in (_size(v) for _, v in record_items(tangent))
                     if n is not None), None)
    if isinstance(tangent, (dict, list, tuple)):
        items = tangent.values() if isinstance(tangent, dict) else tangent
        return next((n for n in map(_size, items) if n is not None), None)
    return len(tangent) if np.ndim(tangent) else None


def _direction(tangent, k):
    """Direction k of a batched tangent: a container's items are batched, not it."""
    if is_record(tangent):
        return rebuild(tangent, {key: _direction(v, k) for key, v in record_items(tangent)})
    if isinstance(tangent, dict):
        return {key: _direction(v, k) for key, v in tangent.items()}
    if isinstance(tangent, (list, tuple)):
        return type(tangent)(_direction(v, k) for v in tangent)
    return tangent[k] if np.ndim(tangent) else tangent


def _stacked(results):
    first = results[0]
    if isinstance(first, dict):
        return {key: _stacked([r[key] for r in results]) for key in first}
    if isinstance(first, (list, tuple)):
        return type(first)(_stacked([r[i] for r in results]) for i in range(len(first)))
    return np.stack([np.asarray(r) for r in results])


# --- where the compiler does not know a shape or an index's kind: worked out at run time


def batch_zeros(x, size):
    """The zero batched tangent of a value: zeros of shape (size,) + x.shape for an array
    or a number (None, a tape's empty slot, counts as a number), the same structure for a
    list, tuple or dict."""
    if isinstance(x, dict):
        return {k: batch_zeros(v, size) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        items = [batch_zeros(v, size) for v in x]
        return type(x)(*items) if hasattr(x, "_fields") else type(x)(items)
    dtype = np.result_type(x, float) if isinstance(x, (np.ndarray, np.generic)) else float
    return np.zeros((size,) + np.shape(x), dtype=dtype)


def batch_added(a_dot, b_dot, a, b, ans, size):
    """added_tangent with batched tangents (`size` directions): a join's items in place,
    zeros of (size,) + shape for the side without one, else the sum, lifted and
    broadcast to (size,) + ans.shape."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return _batch_items(a_dot, a, size) + _batch_items(b_dot, b, size)
    terms = [batch_lifted(t, ans) for t in (a_dot, b_dot) if t is not None]
    return broadcast_batch(terms[0] if len(terms) == 1 else terms[0] + terms[1], ans)


def _batch_items(t, x, size):
    if isinstance(t, (list, tuple)):
        return type(x)(t)
    return batch_zeros(x, size)


def batch_lifted(t, ans):
    """t of shape (batch,) + s, s broadcasting to ans.shape: with ones after the batch
    axis up to ans's number of axes, so that it broadcasts against ans's values (dask
    arrays stay lazy; the tangent of a container, tuples joined by +, is as it is)."""
    if isinstance(ans, _CONTAINERS):
        return t
    return _ranked(_array_tangent(t), np.ndim(ans))


def _array_tangent(t):
    """The batched tangent of np.asarray(v) for a list or tuple v (whose items' tangents
    are batched): the items stacked after the batch axis."""
    if isinstance(t, (list, tuple)):
        return np.stack([_array_tangent(item) for item in t], axis=1)
    return t


def batch_last(t):
    """A view of a batched tangent with the batch axis last: any index of the value's
    axes then reads and writes the same elements of every direction, NumPy's rules for
    array indexes (which may move axes to the front) leave the batch axis last."""
    return np.moveaxis(t, 0, -1)


def batch_first(t):
    """The inverse of batch_last: the batch axis back in front."""
    return np.moveaxis(t, -1, 0)


def last_index(index):
    """An index for batch_last(t) that picks what `index` picks of the value: one that
    holds an Ellipsis gets a last `:`, which keeps the batch axis out of it."""
    if index is Ellipsis:
        return (Ellipsis, slice(None))
    if isinstance(index, tuple) and any(i is Ellipsis for i in index):
        return index + (slice(None),)
    return index


def batch_item(t, x, index):
    """The batched tangent of x[index]: of a list, tuple or dict x, its item (the items'
    tangents are batched); of an array, every direction's x[index]."""
    if isinstance(x, (list, tuple, dict)):
        return t[index]
    if np.ndim(t) < np.ndim(x) + 1:
        # (a zero of any shape, batched: a container's 0.0 part, from zeros_tree)
        t = np.broadcast_to(_ranked(t, np.ndim(x)), np.shape(t)[:1] + np.shape(x))
    return batch_first(batch_last(t)[last_index(index)])


def batch_set_item(t, x, index, v):
    """x[index] = v in the batched tangent t of x (v: v's batched tangent, or 0.0)."""
    if isinstance(x, (list, dict)):
        t[index] = v
    elif isinstance(v, float):
        batch_last(t)[last_index(index)] = v
    else:
        batch_last(t)[last_index(index)] = batch_last(v)


def batch_transposed(t):
    """The batched tangent of x.T: every axis but the batch's reversed."""
    return np.transpose(t, (0,) + tuple(range(np.ndim(t) - 1, 0, -1)))


def batch_matmul_left(t, b, product=np.matmul):
    """The batched tangent of product(a, b) (a @ b, or np.dot) for a's batched tangent t."""
    if np.ndim(t) >= 2 and 1 <= np.ndim(b) <= 2:     # (the batch: one of t's stacked axes)
        return np.matmul(t, b)
    return np.stack([product(tk, b) for tk in t])


def batch_matmul_right(a, t, product=np.matmul):
    """The batched tangent of product(a, b) (a @ b, or np.dot) for b's batched tangent t."""
    if np.ndim(t) == 2 and 1 <= np.ndim(a) <= 2:    # b a vector: the batch as rows
        return np.matmul(t, np.swapaxes(a, -1, -2) if np.ndim(a) == 2 else a)
    if np.ndim(t) == 3 and 1 <= np.ndim(a) <= 2:
        return np.matmul(a, t)
    return np.stack([product(a, tk) for tk in t])
