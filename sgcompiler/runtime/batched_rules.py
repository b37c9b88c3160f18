"""Batched forms of the helpers that explicit tangent rules call (rules/registry.batchable,
forward/batch.py): the tangent has a leading axis of directions, so an axis of the value
is one further along in it, and a solve's right-hand side is a stack of them. Each gives,
for every direction k, what its unbatched helper gives for t[k].
"""
from __future__ import annotations

import string

import numpy as np

from ..errors import RuntimeRefusal
from .core import float_dtype, reduced_axes
from .numpy.linalg import _einsum_parse, einsum_grad
from .tangents import cumprod_recurrence


class BatchMismatch(RuntimeRefusal):
    """A batched tangent without its leading axis of directions where one was expected:
    the caller (hessian, jacobian) runs one jvp per column instead."""


def _ranked(t, rank):
    """t with ones after the batch axis up to `rank` axes after it."""
    missing = rank - (np.ndim(t) - 1)
    return np.reshape(t, np.shape(t)[:1] + (1,) * missing + np.shape(t)[1:]) \
        if missing > 0 else t


def _moved(axis, rank):
    """A reduction's axes of a value of `rank` axes, in its batched tangent."""
    return tuple(a + 1 for a in reduced_axes(axis, rank))


def batch_sum(x, axis=None, keepdims=False):
    """np.sum(x[k], axis, keepdims) for each direction k."""
    x = np.asarray(x)
    return np.sum(x, axis=_moved(axis, x.ndim - 1), keepdims=keepdims)


def batch_mean(x, axis=None, keepdims=False):
    """np.mean(x[k], axis, keepdims) for each direction k."""
    x = np.asarray(x)
    return np.mean(x, axis=_moved(axis, x.ndim - 1), keepdims=keepdims)


def batch_diff_padded(t, n=1, axis=-1, prepend=None, append=None):
    """diff_padded(t[k], n, axis, prepend, append) for each direction k: np.diff along the
    axis one further along, with zero ends that have the batch axis too (a number's zero
    NumPy expands itself)."""
    size = np.shape(t)[0]

    def zero(v):
        if v is None:
            return np._NoValue
        v = np.asarray(v, dtype=np.result_type(t))
        return np.zeros((size,) + v.shape if v.ndim else (), dtype=v.dtype)
    moved = axis if axis < 0 else axis + 1
    if prepend is None and append is None:
        return np.diff(t, n, moved)
    return np.diff(t, n, moved, zero(prepend), zero(append))


def batch_pad(t, pad_width, mode="constant"):
    """np.pad(t[k], pad_width, mode) for each direction k (a copying mode, or zeros): no
    padding along the batch axis, pad_width's for the others."""
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.intp), (np.ndim(t) - 1, 2))
    return np.pad(t, [(0, 0)] + [tuple(w) for w in widths.tolist()], mode)


def batch_polyval(p, x):
    """np.polyval(p[k], x) for each direction k of the coefficients (Horner's rule along
    p's second axis)."""
    p, x = np.asarray(p), np.asarray(x)
    out = np.zeros((p.shape[0],) + x.shape, dtype=np.result_type(p, x, float))
    for j in range(p.shape[1]):
        out = out * x + np.reshape(p[:, j], (-1,) + (1,) * x.ndim)
    return out


def batch_cumprod_tangent_of(t, a, axis=None):
    """cumprod_tangent_of(t[k], a, axis) for each k: d_j = d_{j-1} a_j + p_{j-1} t_j along
    the axis, for all directions at once."""
    a = np.asarray(a)
    size = np.shape(t)[0]
    t = np.broadcast_to(_ranked(t, a.ndim), (size,) + a.shape)
    if axis is None:
        a, t, axis = a.ravel(), np.reshape(t, (size, -1)), 0
    axis = reduced_axes(axis, a.ndim)[0]
    out = cumprod_recurrence(np.moveaxis(a, axis, 0), np.moveaxis(t, axis + 1, 0))
    return np.moveaxis(out, 0, axis + 1)


def batch_choose_tangent(t, ans, a, axis=None, keepdims=False):
    """choose_tangent(t[k], ans, a, axis, keepdims) for each k: the mean of the tangents
    at the chosen elements of max/min."""
    kept = ans if keepdims or axis is None else np.expand_dims(ans, axis)
    chosen = a == kept
    t = _ranked(t, np.ndim(a))
    total = np.sum(np.where(chosen, t, 0.0), axis=_moved(axis, np.ndim(a)),
                   keepdims=keepdims)
    return total / np.sum(chosen, axis=axis, keepdims=keepdims)


def batch_solve(a, t):
    """np.linalg.solve(a, t[k]) for each k (NumPy 2's rule: a right-hand side of one axis
    is a vector, else a stack of matrices)."""
    if np.ndim(t) == 2:     # b a vector: each direction a column, a broadcast over them
        shape = np.shape(t)[:1] + (1,) * (np.ndim(a) - 2) + np.shape(t)[1:] + (1,)
        return np.linalg.solve(a, np.reshape(t, shape))[..., 0]
    # (ones after the batch axis where a is a longer stack than b: they broadcast)
    return np.linalg.solve(a, _ranked(t, max(np.ndim(a), np.ndim(t) - 1)))


def batch_solve_tangent_a(t, ans, a, b):
    """solve_tangent_a(t[k], ans, a, b) for each k: -solve(a, t[k] @ x)."""
    if np.ndim(b) == 1:
        return -np.linalg.solve(a, t @ ans[..., None])[..., 0]
    return -np.linalg.solve(a, _ranked(t, max(np.ndim(a), np.ndim(ans))) @ ans)


def batch_lstsq_tangent_of(a_dot, b_dot, ans, a, b):
    """lstsq_tangent_of(a_dot[k], b_dot[k], ans, a, b) for each direction k (a tangent
    not given: 0.0): the directions are a stack of matrices, which every product, the
    sum over the rows of the residuals and the diagonal of U^T dA V broadcast over."""
    x, res, _, s = ans
    given = [t for t in (a_dot, b_dot) if np.ndim(t)]
    size = np.shape(given[0])[0]
    for t, v in ((a_dot, a), (b_dot, b)):
        if np.ndim(t) and np.shape(t) != (size,) + np.shape(v):
            raise BatchMismatch(f"a batched tangent of lstsq of shape {np.shape(t)} "
                                f"where {(size,) + np.shape(v)} was expected")
    p = np.linalg.pinv(a)
    bm, xm = _column(b), _column(x)
    dx = 0.0
    changed = 0.0       # the change of b - a x at a fixed x, for the residuals
    if np.ndim(b_dot):
        b_dot = b_dot[..., None] if np.ndim(b) == 1 else b_dot
        dx, changed = p @ b_dot, b_dot
    if np.ndim(a_dot):
        m, n = np.shape(a)
        at = np.swapaxes(a_dot, -1, -2)
        dp = -(p @ a_dot @ p) + p @ p.T @ at @ (np.eye(m) - a @ p) + \
            (np.eye(n) - p @ a) @ at @ p.T @ p
        dx = dx + dp @ bm
        changed = changed - a_dot @ xm
        u, _, vt = np.linalg.svd(a, full_matrices=False)
        ds = np.diagonal(u.T @ a_dot @ vt.T, axis1=-2, axis2=-1)
    else:
        ds = np.zeros((size,) + np.shape(s))
    dres = 2.0 * np.sum((bm - a @ xm) * changed, axis=-2) if np.size(res) else \
        np.zeros((size,) + np.shape(res))
    return np.reshape(dx, (size,) + np.shape(x)), dres, np.zeros(size), ds


def _column(b):
    """A vector as a matrix of one column (lstsq's b and x)."""
    return b[..., None] if np.ndim(b) == 1 else b


def batch_einsum_grad(t, i, subscripts, *operands):
    """einsum_grad(t[k], i, subscripts, *operands) for each direction k: the gradient
    for operand i of the einsum in which operand i and the output have one more index,
    the directions' (operand i read for its shape only: broadcast along it)."""
    inputs, output, operands, batch = _batch_einsum(subscripts, operands, t)
    shape = tuple(_einsum_sizes(inputs, operands)[c] for c in output)
    t = np.broadcast_to(_ranked(t, len(output)), (len(t),) + shape)
    spec = _einsum_spec(inputs, output, {i}, batch, batch + output)
    return einsum_grad(t, i, spec, *_lifted(operands, {i: None}, len(t)))


def batch_einsum_grad_with(g, i, k, t, subscripts, *operands):
    """einsum_grad_with(g, i, k, t[d], subscripts, *operands) for each direction d: the
    gradient for operand i of the einsum in which operands i and k have one more index,
    the directions' (operand k's tangent t in its place; zeros when k is i)."""
    inputs, output, operands, batch = _batch_einsum(subscripts, operands, t)
    if k >= len(operands):
        return None
    if k == i:
        return np.zeros((len(t),) + np.shape(operands[k]), dtype=float_dtype(g, operands[k]))
    t = np.broadcast_to(_ranked(t, np.ndim(operands[k])), (len(t),) + np.shape(operands[k]))
    spec = _einsum_spec(inputs, output, {i, k}, batch, output)
    return einsum_grad(g, i, spec, *_lifted(operands, {i: None, k: t}, len(t)))


def _batch_einsum(subscripts, operands, t):
    """(explicit index strings of the operands, of the output, the operands, a letter for
    the directions that no operand uses); BatchMismatch for index lists or a tangent
    without its axis of directions."""
    if not isinstance(subscripts, str) or np.ndim(t) == 0:
        raise BatchMismatch("a batched einsum gradient of index lists or without a batch "
                            "axis")
    operands = list(operands)
    while operands and operands[-1] is None:
        operands.pop()
    inputs, output = _einsum_parse(subscripts, [np.ndim(x) for x in operands])
    used = set("".join(inputs) + output)
    batch = next(c for c in string.ascii_letters if c not in used)
    return inputs, output, operands, batch


def _einsum_sizes(inputs, operands):
    sizes = {}
    for letters, x in zip(inputs, operands):
        for c, n in zip(letters, np.shape(x)):
            sizes[c] = max(sizes.get(c, 1), n)
    return sizes


def _einsum_spec(inputs, output, batched, batch, out):
    """The subscripts with `batch` in front of the operands in `batched`, -> `out`."""
    return ",".join(batch + s if k in batched else s for k, s in enumerate(inputs)) + \
        "->" + out


def _lifted(operands, replaced, size):
    """The operands with those in `replaced` given their batched stand-in (None: the
    operand broadcast along a leading axis of `size`, for an operand read for its shape)."""
    return [np.broadcast_to(x, (size,) + np.shape(x)) if replaced.get(k, x) is None else
            replaced.get(k, x) for k, x in enumerate(operands)]


def batch_checked(t, ans, size):
    """t, the batched tangent of `ans` (a tuple's: each item's) of `size` directions:
    (size,) + ans.shape; a zero with ans's shape (a result with no tangent) as zeros of
    that shape; anything else raises BatchMismatch (the caller runs one jvp per column)."""
    if isinstance(ans, tuple) and isinstance(t, tuple) and len(t) == len(ans):
        return type(t)(batch_checked(u, v, size) for u, v in zip(t, ans))
    shape = (size,) + np.shape(ans)
    if np.shape(t) == shape:
        return t
    if np.shape(t) in ((), np.shape(ans)) and not np.any(t):
        return np.zeros(shape, dtype=np.result_type(t, ans, float))
    raise BatchMismatch(f"a batched tangent of shape {np.shape(t)} where {shape} was expected")
