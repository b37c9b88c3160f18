"""Helpers that generated code calls for NumPy's filters (rules/numpy/signal.py): np.convolve,
np.correlate and np.gradient, each linear in its array arguments, so each gradient applies
the transposed filter to g.
"""
from __future__ import annotations

import numpy as np

from ..core import float_dtype, stop_gradient, unbroadcast


# (the lengths are integers: stop_gradient tells the compiler so when it reads these
# helpers again for second derivatives)


def _full(g, m, n, mode, reverse_same=False):
    """g of a 'same' or 'valid' result embedded in the 'full' one (m + n - 1 long), with
    zeros where that mode dropped values. np.correlate's 'same' window sits one step later
    when its first argument is the shorter (reverse_same)."""
    full = m + n - 1
    if mode == "full":
        return g
    if mode == "valid":
        start = min(m, n) - 1
    elif mode == "same":
        start = (min(m, n) - 1) // 2
        if reverse_same and m < n:
            start = full - max(m, n) - start
    else:
        raise ValueError(f"mode must be 'full', 'same' or 'valid', got {mode!r}")
    out = np.zeros(full, dtype=float_dtype(g))
    out[start:start + np.shape(g)[0]] = g
    return np.copy(out)   # (differentiated again, the written array must not be kept as a view)


def convolve_grad_a(g, a, v, mode="full"):
    """Gradient of np.convolve(a, v, mode) for a: correlate(g_full, v, 'valid')."""
    n = stop_gradient(_length(a, v, mode))
    g = _full(np.broadcast_to(g, (n,)), np.size(a), np.size(v), mode)
    return np.correlate(g, np.asarray(v, dtype=float_dtype(g, v)), "valid")


def convolve_grad_v(g, a, v, mode="full"):
    """Gradient of np.convolve(a, v, mode) for v: correlate(g_full, a, 'valid')."""
    return convolve_grad_a(g, v, a, mode)


def correlate_grad_a(g, a, v, mode="valid"):
    """Gradient of np.correlate(a, v, mode) for a: correlate(a, v) is convolve(a, v[::-1])
    in 'full' mode, so correlate(g_full, v[::-1], 'valid')."""
    n = stop_gradient(_length(a, v, mode))
    g = _full(np.broadcast_to(g, (n,)), np.size(a), np.size(v), mode, reverse_same=True)
    return np.correlate(g, np.asarray(v, dtype=float_dtype(g, v))[::-1], "valid")


def correlate_grad_v(g, a, v, mode="valid"):
    """Gradient of np.correlate(a, v, mode) for v: correlate(g_full, a, 'valid') reversed."""
    n = stop_gradient(_length(a, v, mode))
    g = _full(np.broadcast_to(g, (n,)), np.size(a), np.size(v), mode, reverse_same=True)
    return np.correlate(g, np.asarray(a, dtype=float_dtype(g, a)), "valid")[::-1]


def _length(a, v, mode):
    m, n = np.size(a), np.size(v)
    return {"full": m + n - 1, "same": max(m, n), "valid": max(m, n) - min(m, n) + 1}[mode]


# --- np.gradient ----------------------------------------------------------------------------


def _spacings(ndim, axes, spacing):
    """The spacing (a number or coordinates) of each axis in `axes`, as np.gradient reads
    its varargs (None for those not given): none (1.0), one for every axis, or one per
    axis."""
    spacing = [h for h in spacing if h is not None]
    if not spacing:
        return [1.0] * len(axes)
    if len(spacing) == 1 and np.ndim(spacing[0]) == 0:
        return [spacing[0]] * len(axes)
    return list(spacing)


def _axes(f, axis):
    if axis is None:
        return list(range(np.ndim(f)))
    return [a % np.ndim(f) for a in (axis if isinstance(axis, (tuple, list)) else (axis,))]


def _transposed_stencil(g, n, h, edge_order):
    """M^T g along axis 0, M the matrix of np.gradient on n points with spacing h. Row i of
    M reads the three points from start(i) = clip(i - 1, 0, n - 3), whose remainders mod 3
    differ: np.gradient of the comb of the points = r (mod 3) gives, in row i, the entry
    of the one point with that remainder."""
    rows = np.arange(n)
    start = np.clip(rows - 1, 0, max(n - 3, 0))
    out = np.zeros(np.shape(g), dtype=float_dtype(g))
    for r in range(3):
        entries = np.gradient(np.asarray(rows % 3 == r, dtype=float), h, edge_order=edge_order)
        cols = start + (r - start) % 3
        keep = np.flatnonzero(cols < n)     # (as positions: other libraries' arrays too)
        scale = np.reshape(np.take(entries, keep), (-1,) + (1,) * (np.ndim(g) - 1))
        np.add.at(out, np.take(cols, keep), np.take(g, keep, axis=0) * scale)
    return out


def gradient_grad(g, ans, f, spacing=(), axis=None, edge_order=1):
    """Gradient of np.gradient(f, *spacing, axis, edge_order) for f: the sum over the axes
    of the transposed stencil applied to that axis's g (g holds one adjoint per result,
    stacked, when there are several)."""
    axes = _axes(f, axis)
    several = isinstance(ans, (tuple, list))
    if several and isinstance(g, (tuple, list)):    # (a part may be a plain 0.0)
        gs = [np.broadcast_to(part, np.shape(f)) for part in g]
    else:
        gs = np.broadcast_to(g, (len(axes),) + np.shape(f)) if several else \
            [np.broadcast_to(g, np.shape(f))]
    out = np.zeros(np.shape(f), dtype=float_dtype(g, f))
    for gk, ax, h in zip(gs, axes, _spacings(np.ndim(f), axes, spacing)):
        moved = np.moveaxis(np.asarray(gk), ax, 0)
        out += np.moveaxis(_transposed_stencil(moved, np.shape(f)[ax], h, edge_order), 0, ax)
    return out


def gradient_adjoint(g, like, ans, f, spacing=(), axis=None, edge_order=1):
    """The adjoint of gradient_grad(like, ans, f, spacing, axis, edge_order) in its first
    argument (its transpose): np.gradient of g along each axis (second order of
    np.gradient). For a tuple of results, one part per axis, in the form `like` has
    there: a list or tuple of adjoints (a part that was a number is summed to one), or
    the parts stacked, summed down to like's shape (the first gradient's code may hold
    the tuple's adjoint as one stacked array)."""
    axes = _axes(f, axis)
    g = np.broadcast_to(g, np.shape(f))
    parts = [np.gradient(g, h, axis=ax, edge_order=edge_order)
             for ax, h in zip(axes, _spacings(np.ndim(f), axes, spacing))]
    if not isinstance(ans, (tuple, list)):
        return parts[0]
    if isinstance(like, (tuple, list)):
        return type(like)(unbroadcast(part, item) for part, item in zip(parts, like))
    return unbroadcast(np.stack(parts), like)
