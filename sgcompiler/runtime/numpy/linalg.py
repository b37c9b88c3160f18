"""Helpers that generated gradient code calls for linear algebra (rules/numpy/linalg.py).

Each is the adjoint of one NumPy function, written in plain NumPy with the formula it
implements in its docstring, for the cases that have no one-line spelling: matrices whose
one triangle is read, norms by `ord`, einsum with general subscripts, tensordot axes.
"""
from __future__ import annotations

import string

import numpy as np

from ...errors import RuntimeRefusal
from ..core import _other_library, as_float, float_dtype, mT, unbroadcast, unreduce
from .reductions import choose_grad


def fold_lower(s):
    """The gradient with respect to a matrix of which only the lower triangle is read (the
    function sees the symmetric matrix that triangle spans), from a gradient `s` that is
    right for symmetric changes of that matrix."""
    eye = np.eye(np.shape(s)[-1], dtype=float_dtype(s))
    return np.tril(s + mT(s), -1) + s * eye


def fold_upper(s):
    """As `fold_lower`, for functions that read the upper triangle."""
    eye = np.eye(np.shape(s)[-1], dtype=float_dtype(s))
    return np.triu(s + mT(s), 1) + s * eye


def fold(s, lower=True):
    return fold_lower(s) if lower else fold_upper(s)


def solve_grad_a(g, ans, a, b):
    """Gradient of x = solve(a, b) with respect to a: -solve(a^T, g) x^T."""
    gb = np.linalg.solve(mT(a), g if np.ndim(b) > 1 else g[..., None])
    x = ans if np.ndim(b) > 1 else ans[..., None]
    return unbroadcast(-(gb @ mT(x)), a)


def solve_grad_b(g, a, b):
    """Gradient of x = solve(a, b) with respect to b: solve(a^T, g)."""
    if np.ndim(b) == 1:
        return unbroadcast(np.linalg.solve(mT(a), g[..., None])[..., 0], b)
    return unbroadcast(np.linalg.solve(mT(a), g), b)


def cholesky_grad(g, ans, upper=False):
    """Gradient of L = cholesky(a) (Murray 2016, "Differentiation of the Cholesky
    decomposition"): S = L^-T phi(L^T tril(g)) L^-1, where phi keeps the lower triangle and
    halves the diagonal; folded onto the triangle NumPy reads."""
    low, gl = (mT(ans), mT(g)) if upper else (ans, g)
    p = mT(low) @ np.tril(gl)
    p = np.tril(p) - 0.5 * p * np.eye(np.shape(p)[-1], dtype=float_dtype(p))
    linv = np.linalg.inv(low)
    s = mT(linv) @ p @ linv
    return fold(s, lower=not upper)


def eigvalsh_grad(g, a, UPLO="L"):
    """Gradient of the eigenvalues w of a symmetric matrix: V diag(g) V^T, folded onto the
    triangle NumPy reads. Exact for distinct eigenvalues."""
    _, v = np.linalg.eigh(a, UPLO=UPLO)
    return fold((v * np.expand_dims(g, -2)) @ mT(v), lower=UPLO.upper() == "L")


def svdvals_grad(g, a):
    """Gradient of the singular values s of a: U diag(g) V^T (distinct singular values)."""
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    return (u * np.expand_dims(g, -2)) @ vh


def pinv_grad(g, ans, a, hermitian=False):
    """Gradient of P = pinv(a) (Golub and Pereyra 1973), for `a` of constant rank: the
    adjoint of dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P. With
    hermitian=True NumPy reads the lower triangle only."""
    p, pt = ans, mT(ans)
    m, n = np.shape(a)[-2], np.shape(a)[-1]
    dtype = float_dtype(a)
    left = np.eye(m, dtype=dtype) - a @ p        # (I - A P), m x m
    right = np.eye(n, dtype=dtype) - p @ a       # (I - P A), n x n
    grad = -(pt @ g @ pt) + left @ mT(g) @ p @ pt + pt @ p @ mT(g) @ right
    return fold_lower(grad) if hermitian else grad


def matrix_power_grad(g, a, n):
    """Gradient of a^n: sum over k of (a^T)^k g (a^T)^(n-1-k); for n < 0 through inv(a)."""
    if n == 0:
        return np.zeros(np.shape(a), dtype=float_dtype(a))
    if n < 0:
        inv = np.linalg.inv(a)
        ginv = matrix_power_grad(g, inv, -n)
        return -(mT(inv) @ ginv @ mT(inv))
    at = mT(a)
    powers = [np.broadcast_to(np.eye(np.shape(a)[-1], dtype=float_dtype(a)), np.shape(a))]
    for _ in range(n - 1):
        powers.append(powers[-1] @ at)
    total = powers[0] @ g @ powers[n - 1]
    for k in range(1, n):
        total = total + powers[k] @ g @ powers[n - 1 - k]
    return total


# --- norms ------------------------------------------------------------------------------


def vector_norm_grad(g, ans, x, ord=2, axis=None, keepdims=False):
    """Gradient of the vector p-norm of x over `axis` (all axes when None)."""
    x = np.asarray(x)
    ord = 2 if ord is None else ord
    if ord == np.inf or ord == -np.inf:
        return choose_grad(g, ans, np.abs(x), axis, keepdims) * np.sign(x)
    if ord == 0:
        return np.zeros(x.shape, dtype=float_dtype(x))
    g = unreduce(g, x, axis, keepdims)
    if ord == 1:
        return g * np.sign(x)
    norm = unreduce(ans, x, axis, keepdims)
    safe = np.where(norm == 0, 1.0, norm)
    if ord == 2:
        return np.where(norm == 0, 0.0, g * x / safe)
    return np.where(norm == 0, 0.0, g * np.sign(x) * np.abs(x) ** (ord - 1) / safe ** (ord - 1))


def matrix_norm_grad(g, ans, x, ord="fro", axis=(-2, -1), keepdims=False):
    """Gradient of a matrix norm of x over the two axes `axis`."""
    x, g = np.asarray(x), as_float(g, x)
    rows, cols = axis[0] % x.ndim, axis[1] % x.ndim
    m = np.moveaxis(x, (rows, cols), (-2, -1))
    if keepdims:
        g = np.squeeze(g, axis=(rows, cols))
    gm = np.expand_dims(g, (-2, -1))
    if ord in (None, "fro"):
        safe = np.where(ans == 0, 1.0, ans)
        out = np.where(np.expand_dims(ans, (-2, -1)) == 0 if not keepdims else ans == 0,
                       0.0, gm * m / np.expand_dims(np.reshape(safe, np.shape(g)), (-2, -1)))
    elif ord in ("nuc", 2, -2):
        u, _, vh = np.linalg.svd(m, full_matrices=False)
        if ord == "nuc":
            out = gm * (u @ vh)
        else:
            k = 0 if ord == 2 else -1
            out = gm * (u[..., :, k:k + 1 or None] @ vh[..., k:k + 1 or None, :])
    elif ord in (1, -1, np.inf, -np.inf):
        over = -2 if ord in (1, -1) else -1          # 1: column sums; inf: row sums
        sums = np.sum(np.abs(m), axis=over)
        chosen = np.max(sums, -1, keepdims=True) if ord > 0 else np.min(sums, -1,
                                                                         keepdims=True)
        share = (sums == chosen) / np.sum(sums == chosen, axis=-1, keepdims=True,
                                          dtype=float_dtype(m))
        out = gm * np.sign(m) * np.expand_dims(share, over)
    else:
        raise ValueError(f"invalid norm order {ord!r} for matrices")
    return np.moveaxis(out, (-2, -1), (rows, cols))


def norm_grad(g, ans, x, ord=None, axis=None, keepdims=False):
    """Gradient of np.linalg.norm(x, ord, axis, keepdims), vector or matrix norm as NumPy
    chooses it."""
    ndim = np.ndim(x)
    if axis is None:
        if ord is None or ndim == 1:
            return vector_norm_grad(g, ans, x, ord, None, keepdims)
        return matrix_norm_grad(g, ans, x, ord, (0, 1), keepdims)
    if isinstance(axis, int) or len(axis) == 1:
        return vector_norm_grad(g, ans, x, ord, axis, keepdims)
    return matrix_norm_grad(g, ans, x, ord, tuple(axis), keepdims)


# --- products ----------------------------------------------------------------------------


def tensordot_axes(a, b, axes=2):
    """np.tensordot's `axes` as two lists of non-negative axes of a and b."""
    if isinstance(axes, int):
        return (list(range(np.ndim(a) - axes, np.ndim(a))), list(range(axes)))
    left, right = axes
    left = [left] if isinstance(left, int) else list(left)
    right = [right] if isinstance(right, int) else list(right)
    return [i % np.ndim(a) for i in left], [i % np.ndim(b) for i in right]


def tensordot_grad_a(g, a, b, axes=2):
    """Gradient of np.tensordot(a, b, axes) with respect to a."""
    a_axes, b_axes = tensordot_axes(a, b, axes)
    a_free = [i for i in range(np.ndim(a)) if i not in a_axes]
    b_free = [i for i in range(np.ndim(b)) if i not in b_axes]
    t = np.tensordot(as_float(g, a, b), b, axes=(list(range(len(a_free), np.ndim(g))), b_free))
    # t's axes: a's free axes, then a's summed axes in the order of b's (sorted) axes
    paired = [a_axes[j] for j in np.argsort(b_axes)]
    return np.transpose(t, np.argsort(a_free + paired))


def tensordot_grad_b(g, a, b, axes=2):
    """Gradient of np.tensordot(a, b, axes) with respect to b."""
    a_axes, b_axes = tensordot_axes(a, b, axes)
    a_free = [i for i in range(np.ndim(a)) if i not in a_axes]
    b_free = [i for i in range(np.ndim(b)) if i not in b_axes]
    t = np.tensordot(a, as_float(g, a, b), axes=(a_free, list(range(len(a_free)))))
    paired = [b_axes[j] for j in np.argsort(a_axes)]
    return np.transpose(t, np.argsort(paired + b_free))


def inner_grad_a(g, a, b):
    """Gradient of np.inner(a, b) (a sum over the last axes) with respect to a."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * b, a)
    return tensordot_grad_a(g, a, b, ([-1], [-1]))


def inner_grad_b(g, a, b):
    """Gradient of np.inner(a, b) with respect to b."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * a, b)
    return tensordot_grad_b(g, a, b, ([-1], [-1]))


def kron_grad(g, a, b, wrt):
    """Gradient of np.kron(a, b) with respect to a (wrt=0) or b (wrt=1)."""
    a, b = np.asarray(a), np.asarray(b)
    nd = max(a.ndim, b.ndim)
    sa, sb = (1,) * (nd - a.ndim) + a.shape, (1,) * (nd - b.ndim) + b.shape
    blocks = np.reshape(as_float(g, a, b), [n for pair in zip(sa, sb) for n in pair])
    if wrt == 0:
        other = np.reshape(b, [n for s in sb for n in (1, s)])
        return np.reshape(np.sum(blocks * other, axis=tuple(range(1, 2 * nd, 2))), a.shape)
    other = np.reshape(a, [n for s in sa for n in (s, 1)])
    return np.reshape(np.sum(blocks * other, axis=tuple(range(0, 2 * nd, 2))), b.shape)


def cross_grad(g, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None, wrt=0):
    """Gradient of np.cross(a, b): b x g for a, g x a for b. A 2-vector is a 3-vector with
    a third component 0 (as np.cross takes it; two 2-vectors give that component alone)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    am, bm = np.moveaxis(a, axisa, -1), np.moveaxis(b, axisb, -1)
    g = np.asarray(as_float(g, a, b))
    if am.shape[-1] == 2 and bm.shape[-1] == 2:
        gm = np.stack([np.zeros_like(g), np.zeros_like(g), g], axis=-1)
    else:
        gm = np.moveaxis(g, axisc, -1)
    if wrt == 0:
        return np.moveaxis(unbroadcast(np.cross(_three(bm), gm)[..., :am.shape[-1]], am),
                           -1, axisa)
    return np.moveaxis(unbroadcast(np.cross(gm, _three(am))[..., :bm.shape[-1]], bm),
                       -1, axisb)


def _three(v):
    """A stack of 2- or 3-vectors (last axis) as 3-vectors."""
    v = np.asarray(v)
    return v if v.shape[-1] == 3 else np.pad(v, [(0, 0)] * (v.ndim - 1) + [(0, 1)])


def vecdot_grad(g, x1, x2, axis=-1):
    """Gradient of np.vecdot(x1, x2, axis) (sum of x1 * x2 over `axis`) with respect to x1."""
    moved = np.moveaxis(x2, axis, -1)
    grad = np.expand_dims(g, -1) * moved
    return np.moveaxis(unbroadcast(grad, np.moveaxis(x1, axis, -1)), -1, axis)


def trace_grad(g, a, offset=0, axis1=0, axis2=1):
    """Gradient of np.trace(a, offset, axis1, axis2): `g` on that diagonal, zero elsewhere."""
    shape = np.shape(a)
    eye = np.eye(shape[axis1], shape[axis2], k=offset, dtype=float_dtype(g, a))
    return np.moveaxis(np.expand_dims(as_float(g, a), (-2, -1)) * eye, (-2, -1),
                       (axis1, axis2))


def diagonal_grad(g, a, offset=0, axis1=0, axis2=1):
    """Gradient of np.diagonal(a, offset, axis1, axis2): `g` written onto that diagonal
    (chosen by a mask: the array API standard has no assignment at integer arrays)."""
    shape = list(np.shape(a))
    n, m = shape[axis1], shape[axis2]
    rest = [k for i, k in enumerate(shape) if i not in (axis1 % len(shape), axis2 % len(shape))]
    first, k = max(-offset, 0), np.shape(g)[-1]
    dtype = float_dtype(g, a)
    # g's entries at the rows of the diagonal (zeros around), then on it by a mask
    rows = np.concatenate([np.zeros(tuple(rest) + (first,), dtype=dtype),
                           np.zeros(tuple(rest) + (k,), dtype=dtype) + g,
                           np.zeros(tuple(rest) + (n - first - k,), dtype=dtype)], axis=-1)
    on = np.reshape(np.arange(m), (1, m)) - np.reshape(np.arange(n), (n, 1)) == offset
    out = np.where(on, np.expand_dims(rows, -1), np.zeros((), dtype=dtype))
    return np.moveaxis(out, (-2, -1), (axis1, axis2))


def diag_grad(g, v, k=0):
    """Gradient of np.diag(v, k): the k-th diagonal of g for a vector v; g placed on the
    k-th diagonal for a matrix v."""
    if np.ndim(v) == 1:
        return np.copy(np.diagonal(g, k))
    return diagonal_grad(g, v, k)


# --- einsum ------------------------------------------------------------------------------


def _einsum_parse(subscripts, ndims):
    """Explicit, ellipsis-free subscripts: (one string per operand, the output string)."""
    spec = subscripts.replace(" ", "")
    inputs, _, output = spec.partition("->")
    inputs = inputs.split(",")
    used = set(spec)
    spare = [c for c in string.ascii_letters if c not in used]
    width = max([n - len(s.replace("...", "")) for s, n in zip(inputs, ndims)
                 if "..." in s] or [0])
    ellipsis = "".join(spare[:width])
    expanded = [s.replace("...", ellipsis[width - (n - len(s.replace("...", ""))):])
                for s, n in zip(inputs, ndims)]
    if "->" not in spec:
        letters = "".join(expanded)
        output = ellipsis + "".join(sorted(c for c in set(letters) - set(ellipsis)
                                           if letters.count(c) == 1))
    else:
        output = output.replace("...", ellipsis)
    return expanded, output


def _einsum_sublists(i, args):
    """np.einsum(a, [0, 1], b, [1, 2], [0, 2]) (index lists held in variables, so the front
    end could not write them as a string): (subscripts string, operands, the operand that
    argument i + 1 is, or None for an index list)."""
    count = len(args) // 2
    text = [_sublist_text(s) for s in args[1::2][:count]]
    spec = ",".join(text) + ("->" + _sublist_text(args[-1]) if len(args) % 2 else "")
    position = i + 1
    k = position // 2 if position % 2 == 0 and position // 2 < count else None
    return spec, list(args[0::2][:count]), k


def _sublist_text(sublist) -> str:
    letters = string.ascii_uppercase + string.ascii_lowercase    # as NumPy numbers them
    return "".join("..." if e is Ellipsis else letters[e] for e in sublist)


def einsum_grad(g, i, subscripts, x0, x1=None, x2=None, x3=None, x4=None, x5=None,
                x6=None, x7=None):
    """Gradient of np.einsum(subscripts, x0, x1, ...) with respect to operand i (-1: the
    first argument, an operand when the index lists follow the operands): an einsum
    of g with the other operands, broadcast over indices that only operand i has and
    written onto the diagonal for an index repeated in it ('ii->i')."""
    operands = [x0, x1, x2, x3, x4, x5, x6, x7]
    while operands and operands[-1] is None:
        operands.pop()
    if not isinstance(subscripts, str):
        subscripts, operands, i = _einsum_sublists(i, [subscripts] + operands)
    if i is None or i < 0 or i >= len(operands):
        return None         # an index list, or no such operand (the rule has room for 8)
    inputs, output = _einsum_parse(subscripts, [np.ndim(x) for x in operands])
    shape, mine = np.shape(operands[i]), inputs[i]
    others = [s for k, s in enumerate(inputs) if k != i]
    unique = "".join(dict.fromkeys(mine))
    kept = "".join(c for c in unique if c in output or any(c in s for s in others))
    spec = ",".join([output] + others) + "->" + kept
    t = np.einsum(spec, as_float(g, *operands), *[x for k, x in enumerate(operands) if k != i])
    sizes = dict(zip(mine, shape))
    t = np.reshape(t, [t.shape[kept.index(c)] if c in kept else 1 for c in unique])
    # an operand broadcast along an ellipsis axis of length 1 sums over it
    summed = tuple(k for k, c in enumerate(unique) if sizes[c] == 1 and t.shape[k] != 1)
    t = np.broadcast_to(np.sum(t, axis=summed, keepdims=True), [sizes[c] for c in unique])
    if _other_library(t):       # a dask gradient stays lazy (its arrays are never written)
        if len(unique) != len(mine):
            raise RuntimeRefusal(
                f"np.einsum({subscripts!r}): the gradient of an operand with a repeated "
                "index is written onto a diagonal, which arrays of another library (dask) "
                "cannot be written into; compute the data into NumPy first")
        return t.astype(float_dtype(t))
    if len(unique) == len(mine):
        return np.array(t, dtype=float_dtype(t))
    # t on the diagonal of each repeated index: t with an axis of length 1 at each repeat
    # (unique is in the order of first appearance), times the identity of the two axes
    dtype = float_dtype(t)
    first = {c: mine.index(c) for c in unique}
    out = np.reshape(np.asarray(t, dtype=dtype),
                     [sizes[c] if first[c] == k else 1 for k, c in enumerate(mine)])
    for k, c in enumerate(mine):
        if first[c] != k:
            eye = np.eye(sizes[c], dtype=dtype)
            out = out * np.reshape(eye, [sizes[c] if j in (first[c], k) else 1
                                         for j in range(len(mine))])
    return out


# --- several results (g is a list, 0.0 for a result that got no adjoint) -------------------


def _given(g):
    return not (type(g) is float and g == 0.0)


def slogdet_grad(g, a):
    """Gradient of (sign, logabsdet) = slogdet(a): g[1] inv(a)^T; the sign is piecewise
    constant."""
    if not _given(g[1]):
        return np.zeros(np.shape(a), dtype=float_dtype(a))
    return np.expand_dims(as_float(g[1], a), (-2, -1)) * mT(np.linalg.inv(a))


def eigh_grad(g, ans, UPLO="L"):
    """Gradient of (w, v) = eigh(a) for symmetric a with distinct eigenvalues (Giles 2008):
    V (diag(gw) + F o (V^T gv)) V^T with F[i, j] = 1 / (w[j] - w[i]) off the diagonal,
    folded onto the triangle NumPy reads."""
    (gw, gv), (w, v) = g, ans
    inner = np.zeros(np.shape(v), dtype=float_dtype(v))
    if _given(gw):
        inner = inner + np.expand_dims(gw, -2) * np.eye(np.shape(w)[-1], dtype=inner.dtype)
    if _given(gv):
        gaps = np.expand_dims(w, -2) - np.expand_dims(w, -1)          # w[j] - w[i]
        off = ~np.eye(np.shape(w)[-1], dtype=bool)
        f = np.where(off, 1.0 / np.where(off, gaps, 1.0), 0.0)
        inner = inner + f * (mT(v) @ gv)
    return fold(v @ inner @ mT(v), lower=UPLO.upper() == "L")


def multi_dot_grads(g, arrays):
    """Gradients of np.linalg.multi_dot(arrays) for each array, as a list: the product of
    those on its left, transposed, times g times the product of those on its right,
    transposed. A 1-D first (last) array is a row (column)."""
    # (no list is written in place or joined with +: the helper is differentiated again)
    count = len(arrays)
    first_1d, last_1d = np.ndim(arrays[0]) == 1, np.ndim(arrays[-1]) == 1
    mats = [_as_matrix_end(arrays[i], i, count) for i in range(count)]
    g = np.reshape(g, (mats[0].shape[0], mats[-1].shape[1]))
    # the products of every prefix and every suffix, once each
    prefix = [np.eye(mats[0].shape[0], dtype=float_dtype(g, mats[0]))]
    for m in mats[:-1]:
        prefix.append(prefix[-1] @ m)
    suffix = [np.eye(mats[-1].shape[1], dtype=float_dtype(g, mats[-1]))]
    for m in reversed(mats[1:]):
        suffix.append(m @ suffix[-1])
    suffix = suffix[::-1]
    return [_as_vector_end(mT(prefix[i]) @ g @ mT(suffix[i]), i, count, first_1d, last_1d)
            for i in range(count)]


def _as_matrix_end(a, i, count):
    """multi_dot's i-th operand as a matrix: a 1-D first one is a row, a 1-D last one a
    column."""
    a = np.asarray(a)
    if a.ndim == 1 and i == 0:
        return a[None, :]
    if a.ndim == 1 and i == count - 1:
        return a[:, None]
    return a


def _as_vector_end(grad, i, count, first_1d, last_1d):
    """The gradient of multi_dot's i-th operand, 1-D again where the operand was."""
    if i == 0 and first_1d:
        return grad[0]
    if i == count - 1 and last_1d:
        return grad[:, 0]
    return grad


def _ndim(a):
    ndim = getattr(a, "ndim", None)
    return np.ndim(a) if ndim is None else ndim


def _new_axis(a, axis):
    """np.expand_dims(a, axis) for axis -1 or -2; indexing is several times faster for
    the small arrays of loops (and works on any array type that indexes like NumPy)."""
    if not hasattr(a, "ndim"):
        return np.expand_dims(a, axis)
    return a[..., None] if axis == -1 else a[..., None, :]


def _swap_last(a):
    """np.swapaxes(a, -1, -2), by the array's own method when it has one (no dispatch):
    `a.T` for a matrix, which every array type has (a scipy.sparse matrix has nothing else)."""
    if _ndim(a) == 2:
        return a.T
    return a.swapaxes(-1, -2) if hasattr(a, "swapaxes") else np.swapaxes(a, -1, -2)


def _operand(a):
    """An operand given as a list or tuple of numbers (np.dot([u, v], w) takes one), as
    the array NumPy makes of it; any array as it is."""
    return np.asarray(a) if isinstance(a, (list, tuple)) else a


def matmul_grad_left(g, x, y):
    """d(x @ y)/dx applied to g, for any of NumPy's 1-D/2-D/stacked cases."""
    x, y = _operand(x), _operand(y)
    if _ndim(y) == 1:
        if _ndim(x) == 1:
            return g * y
        return _new_axis(g, -1) * y
    if _ndim(x) == 1:
        # x is one row that each matrix of a stack y multiplies: (y @ g[..., None])[..., 0]
        return unbroadcast((y @ _new_axis(g, -1))[..., 0] if _ndim(y) > 2 else y @ g, x)
    return unbroadcast(g @ _swap_last(y), x)


def matmul_grad_right(g, x, y):
    """d(x @ y)/dy applied to g, for any of NumPy's 1-D/2-D/stacked cases."""
    x, y = _operand(x), _operand(y)
    if _ndim(x) == 1:
        if _ndim(y) == 1:
            return g * x
        return unbroadcast(_new_axis(x, -1) * _new_axis(g, -2), y)
    if _ndim(y) == 1:
        return unbroadcast(np.sum(_swap_last(x) * _new_axis(g, -2), axis=-1)
                           if _ndim(x) > 2 else g @ x, y)
    return unbroadcast(_swap_last(x) @ g, y)


def dot_grad_left(g, x, y):
    """d(np.dot(x, y))/dx applied to g (np.dot's N-d rule: last axis of x, second-last of y)."""
    x, y = _operand(x), _operand(y)
    if np.ndim(x) == 0 or np.ndim(y) == 0:
        return unbroadcast(g * y, x)
    if np.ndim(y) <= 2:
        return matmul_grad_left(g, x, y)
    yt = np.moveaxis(y, -2, -1).reshape(-1, np.shape(y)[-2])
    return np.reshape(g, np.shape(g)[: np.ndim(x) - 1] + (-1,)) @ yt


def dot_grad_right(g, x, y):
    """d(np.dot(x, y))/dy applied to g."""
    x, y = _operand(x), _operand(y)
    if np.ndim(x) == 0 or np.ndim(y) == 0:
        return unbroadcast(g * x, y)
    if np.ndim(y) <= 2:
        return matmul_grad_right(g, x, y)
    xf = np.reshape(x, (-1, np.shape(x)[-1]))
    gf = np.reshape(g, (xf.shape[0], -1))
    out = xf.T @ gf
    ys = np.shape(y)
    return np.moveaxis(out.reshape((ys[-2],) + ys[:-2] + (ys[-1],)), 0, -2)
