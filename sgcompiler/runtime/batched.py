"""Helpers that batched tangent code calls (forward/batch.py): each tangent carries a
leading axis, one tangent per basis direction, so `hessian` and `jacobian(mode="fwd")` run
the tangent code once for all columns. A helper here is the batched form of a linear
helper (or any function linear in some arguments: `batch_map`, one call per direction).
"""
from __future__ import annotations

import numpy as np

from .core import reduced_axes


def broadcast_batch(t, ans):
    """A batched tangent with the shape (batch,) + ans.shape (a contribution may have an
    operand's smaller shape: the tangent of x + c is x's, broadcast)."""
    shape = np.shape(t)[:1] + np.shape(ans)
    if np.shape(t) == shape:
        return t
    return np.array(np.broadcast_to(t, shape))


def _ranked(t, rank):
    """t of shape (batch,) + s, with ones inserted after the batch axis up to `rank` axes
    after it (s broadcasts from the right)."""
    missing = rank - (np.ndim(t) - 1)
    return np.reshape(t, np.shape(t)[:1] + (1,) * missing + np.shape(t)[1:]) \
        if missing > 0 else t


def batch_unbroadcast(t, x):
    """unbroadcast(t[k], x) for each direction k: sum the batched tangent down to
    (batch,) + x.shape."""
    shape = np.shape(x)
    t = _ranked(np.asarray(t), len(shape))
    extra = np.ndim(t) - 1 - len(shape)
    if extra > 0:
        t = np.sum(t, axis=tuple(range(1, extra + 1)))
    axes = tuple(i + 1 for i, n in enumerate(shape) if n == 1 and np.shape(t)[i + 1] != 1)
    if axes:
        t = np.sum(t, axis=axes, keepdims=True)
    return broadcast_batch(t, x)


def batch_unreduce(t, x, axis=None, keepdims=False):
    """unreduce(t[k], x, axis, keepdims) for each direction k: the batched tangent of a
    reduction of x, broadcast back to (batch,) + x.shape."""
    shape = np.shape(x)
    t = np.asarray(t)
    if axis is not None and not keepdims and np.ndim(t) - 1 < len(shape):
        t = np.expand_dims(t, tuple(a + 1 for a in reduced_axes(axis, len(shape))))
    return np.broadcast_to(_ranked(t, len(shape)), np.shape(t)[:1] + shape)


def batch_matmul_grad_left(t, x, y):
    """matmul_grad_left(t[k], x, y) for each direction k, x and y of at most 2 axes."""
    if np.ndim(y) == 1:
        return t[..., None] * y
    if np.ndim(x) == 1:
        return t @ np.swapaxes(y, -1, -2)
    return t @ np.swapaxes(y, -1, -2)


def batch_matmul_grad_right(t, x, y):
    """matmul_grad_right(t[k], x, y) for each direction k, x and y of at most 2 axes."""
    if np.ndim(x) == 1:
        if np.ndim(y) == 1:
            return t[:, None] * x
        return x[:, None] * t[:, None, :]
    if np.ndim(y) == 1:
        return t @ x
    return np.swapaxes(x, -1, -2) @ t


def batch_map(fn, positions, *args, **kwargs):
    """fn applied to each direction of the batched arguments at `positions` (fn is linear
    in them), the results stacked along a new leading axis."""
    size = _size(args[positions[0]])
    results = []
    for k in range(size):
        call = list(args)
        for p in positions:
            call[p] = _direction(args[p], k)
        results.append(fn(*call, **kwargs))
    return _stacked(results)


def _size(tangent):
    """The number of directions of a batched tangent (of a list or a dict: its items')."""
    if isinstance(tangent, dict):
        return _size(next(iter(tangent.values())))
    if isinstance(tangent, (list, tuple)):
        return _size(tangent[0])
    return len(tangent)


def _direction(tangent, k):
    """Direction k of a batched tangent: a container's items are batched, not it."""
    if isinstance(tangent, dict):
        return {key: _direction(v, k) for key, v in tangent.items()}
    if isinstance(tangent, (list, tuple)):
        return type(tangent)(_direction(v, k) for v in tangent)
    return tangent[k]


def _stacked(results):
    first = results[0]
    if isinstance(first, dict):
        return {key: _stacked([r[key] for r in results]) for key in first}
    if isinstance(first, (list, tuple)):
        return type(first)(_stacked([r[i] for r in results]) for i in range(len(first)))
    return np.stack([np.asarray(r) for r in results])
