"""Helpers that generated gradient code calls for reductions (rules/numpy/reductions.py).

Each sends the gradient of a reduced value back over the axes the reduction removed:
max/min to their ties, prod to the product of the others, cumulative sums and products
along their axis, median to its middle elements, average with and without weights.
"""
from __future__ import annotations

import numpy as np

from ...errors import RuntimeRefusal
from ..core import float_dtype, reduced_axes, reduced_size, unreduce


def choose_grad(g, ans, x, axis=None, keepdims=False):
    """Gradient of max/min: `g` goes to the chosen elements, split evenly among ties."""
    ans = unreduce(ans, x, axis, keepdims)
    chosen = x == ans
    count = np.sum(chosen, axis=axis, keepdims=True, dtype=float_dtype(x))
    # (where, not `* chosen`: the array API standard has no arithmetic on bool arrays)
    return np.where(chosen, unreduce(g, x, axis, keepdims), 0.0) / count


def prod_grad(g, ans, x, axis=None, keepdims=False):
    """Gradient of prod; exact also when some elements are zero."""
    x = np.asarray(x)
    if axis is None:
        flat = np.reshape(x, (-1,))
        return np.reshape(g * _prod_others(flat, 0), x.shape)
    axes = reduced_axes(axis, x.ndim)
    if len(axes) != 1:
        moved = np.moveaxis(x, axes, tuple(range(-len(axes), 0)))
        flat = np.reshape(moved, moved.shape[:-len(axes)] + (-1,))
        others = np.reshape(_prod_others(flat, -1), moved.shape)
        others = np.moveaxis(others, tuple(range(-len(axes), 0)), axes)
    else:
        others = _prod_others(x, axes[0])
    return unreduce(g, x, axis, keepdims) * others


def _prod_others(x, axis):
    """For each element, the product of the other elements along `axis` (no division)."""
    x = np.moveaxis(x, axis, -1)
    ones = np.ones(x.shape[:-1] + (1,), dtype=x.dtype)
    before = np.cumprod(np.concatenate([ones, x[..., :-1]], axis=-1), axis=-1)
    after = np.cumprod(np.concatenate([ones, x[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    return np.moveaxis(before * after, -1, axis)


def cumsum_grad(g, a, axis=None):
    """Gradient of np.cumsum(a, axis): the reversed cumulative sum of `g`."""
    if axis is None:
        return np.reshape(np.flip(np.cumsum(np.flip(np.ravel(g)))), np.shape(a))
    return np.flip(np.cumsum(np.flip(g, axis), axis), axis)


def cumprod_grad(g, ans, a, axis=None):
    """Gradient of np.cumprod(a, axis); exact also when `a` has zeros."""
    if axis is None:
        flat = cumprod_grad(np.ravel(g), np.ravel(ans), np.ravel(a), 0)
        return np.reshape(flat, np.shape(a))
    a = np.asarray(a)
    if np.all(a != 0):
        return cumsum_grad(g * ans, a, axis) / a
    # d out[j] / d a[i] = prod(a[:i]) * prod(a[i+1:j+1]) for j >= i; the sum over j of
    # g[j] * prod(a[i+1:j+1]) follows the recurrence s[i] = g[i] + a[i+1] * s[i+1].
    am, gm = np.moveaxis(a, axis, -1), np.moveaxis(np.broadcast_to(g, a.shape), axis, -1)
    ones = np.ones(am.shape[:-1] + (1,), dtype=am.dtype)
    before = np.cumprod(np.concatenate([ones, am[..., :-1]], axis=-1), axis=-1)
    s = np.zeros(am.shape, dtype=np.result_type(gm, am, float_dtype(am)))
    acc = 0.0
    for i in reversed(range(am.shape[-1])):
        acc = gm[..., i] + (am[..., i + 1] * acc if i + 1 < am.shape[-1] else 0.0)
        s[..., i] = acc
    return np.moveaxis(before * s, -1, axis)


def axes_last(x, axis=None):
    """`x` with the axes of a reduction over `axis` merged into one last axis, and a
    function that puts an array of that layout back into x's shape."""
    x = np.asarray(x)
    axes = reduced_axes(axis, x.ndim)
    moved = np.moveaxis(x, axes, tuple(range(-len(axes), 0))) if axes else x[..., None]
    merged = np.reshape(moved, moved.shape[:x.ndim - len(axes)] + (-1,))

    def restore(y):
        if not axes:
            return y[..., 0]
        return np.moveaxis(np.reshape(y, moved.shape), tuple(range(-len(axes), 0)), axes)
    return merged, restore


def median_grad(g, a, axis=None, keepdims=False):
    """Gradient of np.median: `g` goes to the middle element, or half to each of the two
    middle ones for an even count; ties split evenly."""
    merged, restore = axes_last(a, axis)
    n = merged.shape[-1]
    ordered = np.sort(merged, axis=-1)
    low = ordered[..., (n - 1) // 2:(n - 1) // 2 + 1]
    high = ordered[..., n // 2:n // 2 + 1]
    dtype = float_dtype(merged)
    # (selected with where, not a bool array divided: the array API standard has no
    # arithmetic on bools)
    share = 0.5 * (np.where(merged == low, 1.0 / np.sum(merged == low, axis=-1,
                                                        keepdims=True, dtype=dtype), 0.0)
                   + np.where(merged == high, 1.0 / np.sum(merged == high, axis=-1,
                                                           keepdims=True, dtype=dtype), 0.0))
    return unreduce(g, a, axis, keepdims) * restore(share)


def average_weights(a, weights, axis=None):
    """The weights of np.average broadcast to a's shape (they may be 1-D along `axis`)."""
    a, weights = np.asarray(a), np.asarray(weights)
    if weights.shape == a.shape:
        return weights
    axes = reduced_axes(axis, a.ndim)
    shape = [a.shape[i] if i in axes else 1 for i in range(a.ndim)]
    return np.broadcast_to(np.reshape(weights, shape), a.shape)


def average_grad_a(g, a, axis=None, weights=None, keepdims=False, returned=False):
    """Gradient of np.average(a, axis, weights) with respect to a."""
    _no_returned(returned)
    g = unreduce(g, a, axis, keepdims)
    if weights is None:
        return g / reduced_size(a, axis)
    w = average_weights(a, weights, axis)
    return g * w / np.sum(w, axis=axis, keepdims=True)


def average_grad_weights(g, ans, a, axis=None, weights=None, keepdims=False, returned=False):
    """Gradient of np.average(a, axis, weights) with respect to the weights (None when
    there are none)."""
    _no_returned(returned)
    if weights is None:
        return None
    w = average_weights(a, weights, axis)
    grad = unreduce(g, a, axis, keepdims) * (a - unreduce(ans, a, axis, keepdims)) \
        / np.sum(w, axis=axis, keepdims=True)
    if np.shape(weights) == np.shape(a):
        return grad
    others = tuple(i for i in range(np.ndim(a)) if i not in reduced_axes(axis, np.ndim(a)))
    return np.reshape(np.sum(grad, axis=others), np.shape(weights))


def _no_returned(returned):
    if returned:
        raise RuntimeRefusal("the gradient of np.average(..., returned=True) is not "
                             "supported; compute np.sum(weights) separately")


def divide_or_zero(g, d):
    """`g / d`, and 0 where `d` is 0: the gradient of a norm (np.std, np.hypot) where it is
    0, a kink at its minimum, at which 0 is the subgradient (as for abs at 0)."""
    zero = np.equal(d, 0)
    if not np.any(zero):
        return g / d
    return np.where(zero, 0.0, g / np.where(zero, 1.0, d))


def nan_count(a, axis=None):
    """How many elements of `a` are not NaN, per reduction over `axis` (dimensions kept)."""
    return np.sum(~np.isnan(a), axis=axis, keepdims=True, dtype=float_dtype(a))
