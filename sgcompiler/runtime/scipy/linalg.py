"""Helpers that generated gradient code calls for scipy.linalg functions
(rules/scipy_linalg.py).

Imported only when the SciPy rules are loaded, that is, once the user's code has imported
SciPy; sgcompiler itself never requires it.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg

from ...errors import RuntimeRefusal
from ..core import float_dtype, mT, unbroadcast, unreduce
from ..numpy.linalg import cholesky_grad, fold, solve_grad_a, solve_grad_b
from ..tangents import cholesky_tangent_of

# the helpers below that run on arrays of other array-API libraries too (NumPy's functions
# and the scipy.linalg functions runtime/spellings.SciPyLinalg spells: runtime/namespace.py
# binds their np and scipy to the arguments' namespace)
STANDARD = frozenset({"_triangle", "_symmetric", "inv_grad", "solve_grad_matrix",
                      "solve_grad_rhs", "solve_triangular_grad_a", "solve_triangular_grad_b",
                      "cho_factor_grad", "cho_solve_grad_factor", "cho_solve_grad_b",
                      "block_diag_grad", "block_diag_place", "_block_of", "expm_grad",
                      "_frechet_block", "_blocks", "expm_grad_second", "expm_grad_tangent_a",
                      "sqrtm_grad", "sylvester_adjoint"})

_GENERAL = (None, "gen", "general")
_SYMMETRIC = ("sym", "symmetric", "her", "hermitian", "pos", "positive definite")
ASSUME_A = _GENERAL + _SYMMETRIC        # what the rules handle (others refused when compiled)


def _triangle(assume_a, lower):
    """None for a matrix read whole, else whether its lower triangle is the one read."""
    if assume_a in _GENERAL:
        return None
    if assume_a in _SYMMETRIC:
        return lower
    raise RuntimeRefusal(f"the gradient of scipy.linalg.solve/inv with assume_a="
                         f"{assume_a!r} is not supported; the supported structures are "
                         "general, symmetric and positive definite")


def inv_grad(g, ans, a, assume_a=None, lower=False):
    """Gradient of scipy.linalg.inv: -A^-T g A^-T (on the triangle read, for symmetric a)."""
    grad = -(mT(ans) @ g @ mT(ans))
    triangle = _triangle(assume_a, lower)
    return grad if triangle is None else fold(grad, triangle)


def solve_grad_matrix(g, ans, a, b, lower=False, assume_a=None, transposed=False):
    """Gradient of scipy.linalg.solve with respect to a."""
    triangle = _triangle(assume_a, lower)
    if triangle is not None:
        return fold(solve_grad_a(g, ans, _symmetric(a, triangle), b), triangle)
    if transposed:
        return mT(solve_grad_a(g, ans, mT(a), b))
    return solve_grad_a(g, ans, a, b)


def solve_grad_rhs(g, a, b, lower=False, assume_a=None, transposed=False):
    """Gradient of scipy.linalg.solve with respect to b."""
    triangle = _triangle(assume_a, lower)
    matrix = a if triangle is None else _symmetric(a, triangle)
    return solve_grad_b(g, mT(matrix) if transposed else matrix, b)


def _symmetric(a, lower):
    """The symmetric matrix that the lower (upper) triangle of a spans."""
    part = np.tril(a) if lower else np.triu(a)
    return part + mT(part) - part * np.eye(np.shape(a)[-1], dtype=part.dtype)


def solve_triangular_grad_a(g, ans, a, b, trans=0, lower=False, unit_diagonal=False):
    """Gradient of scipy.linalg.solve_triangular with respect to a: -gb x^T on the
    triangle read (the diagonal excluded when it is taken as ones)."""
    transposed = trans in (1, 2, "T", "C")
    gb = scipy.linalg.solve_triangular(a, g, trans=0 if transposed else 1, lower=lower,
                                       unit_diagonal=unit_diagonal)
    gb, x = (gb, ans) if np.ndim(b) > 1 else (gb[:, None], ans[:, None])
    grad = -(x @ gb.T) if transposed else -(gb @ x.T)
    grad = np.tril(grad) if lower else np.triu(grad)
    return grad - np.diag(np.diag(grad)) if unit_diagonal else grad


def solve_triangular_grad_b(g, a, trans=0, lower=False, unit_diagonal=False):
    """Gradient of scipy.linalg.solve_triangular with respect to b."""
    transposed = trans in (1, 2, "T", "C")
    return scipy.linalg.solve_triangular(a, g, trans=0 if transposed else 1, lower=lower,
                                         unit_diagonal=unit_diagonal)


def expm_grad(g, A):
    """Gradient of scipy.linalg.expm: the Frechet derivative of expm at A^T applied to g."""
    grad = scipy.linalg.expm_frechet(mT(A), g, compute_expm=False)
    return np.astype(grad, float_dtype(g), copy=False)


def _frechet_block(a, e):
    """[[a^T, e], [0, a^T]]: expm of it holds the Frechet derivative of expm at a^T in
    direction e in its upper right block (Higham, Functions of Matrices, 3.16)."""
    zeros = np.zeros(np.shape(a), dtype=np.result_type(a, e))
    return _blocks(mT(a), e, zeros, mT(a))


def _blocks(a, b, c, d):
    """[[a, b], [c, d]], as np.block makes it, from concatenations (which have rules: the
    compiler reads these helpers again at third order)."""
    return np.concatenate([np.concatenate([a, b], axis=-1), np.concatenate([c, d], axis=-1)],
                          axis=-2)


def expm_grad_second(g, g_, A):
    """The gradient for A of np.sum(g * expm_grad(g_, A)): expm_grad(g_, A) is the upper
    right block of expm of [[A^T, g_], [0, A^T]], so the gradient of that expm (for g in
    the upper right block) summed over the two diagonal blocks, transposed."""
    n = np.shape(A)[-1]
    zeros = np.zeros(np.shape(A), dtype=float_dtype(g, A))
    block = expm_grad(_blocks(zeros, g, zeros, zeros), _frechet_block(A, g_))
    return mT(block[:n, :n] + block[n:, n:])


def expm_grad_tangent_a(A_dot, g_, A):
    """The tangent of expm_grad(g_, A) along A_dot (g_ held): the upper right block of the
    Frechet derivative of expm at [[A^T, g_], [0, A^T]] along [[A_dot^T, 0], [0, A_dot^T]]."""
    n = np.shape(A)[-1]
    zeros = np.zeros(np.shape(A), dtype=float_dtype(A_dot, A))
    direction = _blocks(mT(A_dot), zeros, zeros, mT(A_dot))
    # expm_frechet(M, E) is expm_grad(E, M^T): spelled so, third order reads it too
    block = expm_grad(direction, mT(_frechet_block(A, g_)))
    return np.astype(block[:n, n:], float_dtype(A_dot, g_), copy=False)


def sqrtm_grad(g, ans):
    """Gradient of S = scipy.linalg.sqrtm(A): X with S^T X + X S^T = g (dS S + S dS = dA)."""
    grad = scipy.linalg.solve_sylvester(mT(ans), mT(ans), g)
    return np.astype(grad, float_dtype(g), copy=False)


# --- factorizations: cho_factor/cho_solve, lu_factor/lu_solve -------------------------------


def cho_factor_grad(g, ans, lower=False):
    """Gradient of (c, lower) = scipy.linalg.cho_factor(a): the factor's triangle through the
    Cholesky rule; c's other triangle is a copy of a's (LAPACK leaves it untouched)."""
    gc, factor = g[0], np.tril(ans[0]) if lower else np.triu(ans[0])
    copied = np.triu(gc, 1) if lower else np.tril(gc, -1)
    return cholesky_grad(np.tril(gc) if lower else np.triu(gc), factor, not lower) + copied


def cho_solve_grad_factor(g, ans, c_and_lower, b):
    """Gradient of x = cho_solve((c, lower), b) with respect to (c, lower): with
    A = U^T U (or L L^T) and gA = -A^-1 g x^T, U gets triu(U (gA + gA^T)) (L:
    tril((gA + gA^T) L)); c's other triangle is not read."""
    c, lower = c_and_lower
    gb = scipy.linalg.cho_solve(c_and_lower, g)
    gb, x = (gb, ans) if np.ndim(b) > 1 else (gb[:, None], ans[:, None])
    sym = -(gb @ x.T) - x @ gb.T
    grad = np.tril(sym @ np.tril(c)) if lower else np.triu(np.triu(c) @ sym)
    return grad, 0.0


def cho_solve_grad_b(g, c_and_lower, b):
    """Gradient of x = cho_solve((c, lower), b) with respect to b: A^-1 g."""
    return scipy.linalg.cho_solve(c_and_lower, g)


def _lu_parts(lu, piv):
    """L (unit lower), U, and the row order `rows` with a[rows] = L U."""
    n = np.shape(lu)[0]
    rows = np.arange(n)
    for i, p in enumerate(piv):
        rows[[i, p]] = rows[[p, i]]
    return np.tril(lu, -1) + np.eye(n, dtype=lu.dtype), np.triu(lu), rows


def lu_factor_grad(g, ans):
    """Gradient of (lu, piv) = scipy.linalg.lu_factor(a), square a: with a[rows] = L U,
    a[rows] gets L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T, gL and gU the parts of g."""
    low, up, rows = _lu_parts(ans[0], ans[1])
    middle = np.tril(low.T @ np.tril(g[0], -1), -1) + np.triu(np.triu(g[0]) @ up.T)
    right = scipy.linalg.solve_triangular(up, middle.T, lower=False).T    # middle U^-T
    permuted = scipy.linalg.solve_triangular(low, right, lower=True, trans=1,
                                             unit_diagonal=True)
    grad = np.empty_like(permuted)
    grad[rows] = permuted
    return grad


def lu_solve_grad_factor(g, ans, lu_and_piv, b, trans=0):
    """Gradient of x = lu_solve((lu, piv), b, trans) with respect to (lu, piv): from
    gA = -A^-T g x^T (trans: -x (A^-1 g)^T), with a[rows] = L U, L gets
    tril(gA[rows] U^T, -1) and U triu(L^T gA[rows])."""
    transposed = trans in (1, 2, "T", "C")
    gb = scipy.linalg.lu_solve(lu_and_piv, g, trans=0 if transposed else 1)
    gb, x = (gb, ans) if np.ndim(b) > 1 else (gb[:, None], ans[:, None])
    grad_a = -(x @ gb.T) if transposed else -(gb @ x.T)
    low, up, rows = _lu_parts(lu_and_piv[0], lu_and_piv[1])
    permuted = grad_a[rows]
    return np.tril(permuted @ up.T, -1) + np.triu(low.T @ permuted), 0.0


def lu_solve_grad_b(g, lu_and_piv, b, trans=0):
    """Gradient of x = lu_solve((lu, piv), b, trans) with respect to b."""
    transposed = trans in (1, 2, "T", "C")
    return scipy.linalg.lu_solve(lu_and_piv, g, trans=0 if transposed else 1)


# --- solve_sylvester, solve_banded, block_diag ------------------------------------------------


def sylvester_adjoint(g, a, b):
    """Y with A^T Y + Y B^T = g: the gradient of X = solve_sylvester(a, b, q) in q; a gets
    -Y X^T and b gets -X^T Y."""
    return scipy.linalg.solve_sylvester(mT(a), mT(b), g)


def _band_to_dense(lower, upper, ab):
    n = np.shape(ab)[-1]
    i, j = np.indices((n, n))
    inside = (i - j <= lower) & (j - i <= upper)
    return np.where(inside, ab[np.clip(upper + i - j, 0, lower + upper), j], 0.0)


def _dense_to_band(lower, upper, a):
    n = np.shape(a)[-1]
    k, j = np.indices((lower + upper + 1, n))
    i = k - upper + j          # ab[k, j] = a[i, j] with k = upper + i - j
    inside = (i >= 0) & (i < n)
    return np.where(inside, a[np.clip(i, 0, n - 1), j], 0.0)


def solve_banded_grad_b(g, l_and_u, ab, b):
    """Gradient of x = solve_banded((l, u), ab, b) in b: A^-T g (A^T is banded with (u, l))."""
    lower, upper = l_and_u
    transposed = _dense_to_band(upper, lower, mT(_band_to_dense(lower, upper, ab)))
    return scipy.linalg.solve_banded((upper, lower), transposed, g)


def solve_banded_grad_ab(g, ans, l_and_u, ab, b):
    """Gradient of x = solve_banded((l, u), ab, b) in ab: -A^-T g x^T on the band (ab's
    unused corners get zero)."""
    gb = solve_banded_grad_b(g, l_and_u, ab, b)
    gb, x = (gb, ans) if np.ndim(b) > 1 else (gb[:, None], ans[:, None])
    lower, upper = l_and_u
    return _dense_to_band(lower, upper, -(gb @ x.T)).astype(float_dtype(g, ab), copy=False)


def block_diag_grad(g, k, a0, a1=None, a2=None, a3=None, a4=None, a5=None, a6=None,
                    a7=None):
    """Gradient of scipy.linalg.block_diag(a0, ..., a7) with respect to its k-th array
    (None: the call has fewer arrays): its block of g (g may be a plain 0.0)."""
    arrays = (a0, a1, a2, a3, a4, a5, a6, a7)
    if arrays[k] is None:
        return None
    row, col, rows, cols = _block_of(k, arrays)
    if np.ndim(g) == 0:
        return np.full(np.shape(arrays[k]), g, dtype=float_dtype(g))
    return np.reshape(g[row:row + rows, col:col + cols], np.shape(arrays[k]))


def block_diag_place(g, k, like, a0, a1=None, a2=None, a3=None, a4=None, a5=None, a6=None,
                     a7=None):
    """The adjoint of block_diag_grad(like, k, a0, ..., a7) in `like`: g (the k-th array's
    shape) at the k-th block of zeros shaped like `like` (second order of block_diag)."""
    arrays = (a0, a1, a2, a3, a4, a5, a6, a7)
    row, col, rows, cols = _block_of(k, arrays)
    out = np.zeros(np.shape(like), dtype=float_dtype(g, like))
    out[row:row + rows, col:col + cols] = np.reshape(
        np.broadcast_to(g, np.shape(arrays[k])), (rows, cols))
    return out


def _block_of(k, arrays):
    """(first row, first column, rows, columns) of the k-th array's block."""
    shapes = [np.shape(np.atleast_2d(a)) for a in arrays if a is not None]
    return (sum(s[0] for s in shapes[:k]), sum(s[1] for s in shapes[:k])) + shapes[k]


# --- tangents (forward mode) -----------------------------------------------------------------


def cho_factor_tangent(a_dot, ans, lower=False):
    """Tangent of (c, lower) = cho_factor(a): with A = L L^T (L = U^T for the upper factor),
    L' = L tril_half(L^-1 A' L^-T); c's other triangle is a copy of a's."""
    low = np.tril(ans[0]) if lower else np.triu(ans[0]).T
    sym = np.tril(a_dot) + np.tril(a_dot, -1).T if lower else \
        np.triu(a_dot) + np.triu(a_dot, 1).T
    inner = scipy.linalg.solve_triangular(low, sym, lower=True)
    inner = scipy.linalg.solve_triangular(low, inner.T, lower=True).T
    low_dot = low @ (np.tril(inner, -1) + 0.5 * np.diag(np.diagonal(inner)))
    if lower:
        return low_dot + np.triu(a_dot, 1), 0.0
    return low_dot.T + np.tril(a_dot, -1), 0.0


def cho_solve_tangent_factor(c_and_lower_dot, ans, c_and_lower):
    """Tangent of x = cho_solve((c, lower), b) along c's tangent: -A^-1 A' x, with
    A' = F' F^T + F F'^T from the factor's triangle."""
    c, lower = c_and_lower
    c_dot = c_and_lower_dot[0]
    factor = np.tril(c) if lower else np.triu(c).T
    factor_dot = np.tril(c_dot) if lower else np.triu(c_dot).T
    a_dot = factor_dot @ factor.T + factor @ factor_dot.T
    return -scipy.linalg.cho_solve(c_and_lower, a_dot @ ans)


def lu_factor_tangent(a_dot, ans):
    """Tangent of (lu, piv) = lu_factor(a): with a[rows] = L U and
    M = L^-1 a'[rows] U^-1, L' = L tril(M, -1) and U' = triu(M) U, packed as lu is."""
    low, up, rows = _lu_parts(ans[0], ans[1])
    left = scipy.linalg.solve_triangular(low, a_dot[rows], lower=True, unit_diagonal=True)
    middle = scipy.linalg.solve_triangular(up, left.T, lower=False, trans=1).T
    return low @ np.tril(middle, -1) + np.triu(middle) @ up, 0.0


def lu_solve_tangent_factor(lu_and_piv_dot, ans, lu_and_piv, b, trans=0):
    """Tangent of x = lu_solve((lu, piv), b, trans) along lu's tangent: -A^-1 A' x (trans:
    -A^-T A'^T x), with A'[rows] = L' U + L U'."""
    low, up, rows = _lu_parts(lu_and_piv[0], lu_and_piv[1])
    lu_dot = lu_and_piv_dot[0]
    permuted = np.tril(lu_dot, -1) @ up + low @ np.triu(lu_dot)
    a_dot = np.empty_like(permuted)
    a_dot[rows] = permuted
    if trans in (1, 2, "T", "C"):
        return -scipy.linalg.lu_solve(lu_and_piv, mT(a_dot) @ ans, trans=trans)
    return -scipy.linalg.lu_solve(lu_and_piv, a_dot @ ans, trans=trans)


def solve_banded_tangent_ab(ab_dot, ans, l_and_u, ab):
    """Tangent of x = solve_banded((l, u), ab, b) along ab_dot: -A^-1 A' x (A' read from
    ab_dot's band as A is from ab's)."""
    return scipy.linalg.solve_banded(l_and_u, ab, -(_band_to_dense(*l_and_u, ab_dot) @ ans))


def inv_tangent(a_dot, ans, assume_a=None, lower=False):
    """Tangent of scipy.linalg.inv: -A^-1 A' A^-1 (A' from the triangle read, for
    symmetric a)."""
    triangle = _triangle(assume_a, lower)
    a_dot = a_dot if triangle is None else _symmetric(a_dot, triangle)
    return -(ans @ a_dot @ ans)


def _solve_as(a, b, lower, assume_a, transposed):
    """scipy.linalg.solve with the options of the call being differentiated."""
    if _triangle(assume_a, lower) is None:
        return scipy.linalg.solve(a, b, transposed=transposed)
    return scipy.linalg.solve(a, b, lower=lower, assume_a=assume_a)


def _read_as_solved(a_dot, lower, assume_a, transposed):
    """A's tangent as the solve reads A: transposed, or from the triangle read for a
    symmetric one (of the last two axes: a stack of directions too)."""
    triangle = _triangle(assume_a, lower)
    if triangle is not None:
        return _symmetric(a_dot, triangle)
    return mT(a_dot) if transposed else a_dot


def solve_tangent_matrix(a_dot, ans, a, b, lower=False, assume_a=None, transposed=False):
    """Tangent of x = scipy.linalg.solve(a, b) along a: -A^-1 A' x (transposed: A^-T A'^T x;
    A' from the triangle read, for symmetric a)."""
    a_dot = _read_as_solved(a_dot, lower, assume_a, transposed)
    return _solve_as(a, -(a_dot @ ans), lower, assume_a, transposed)


def solve_tangent_rhs(b_dot, a, lower=False, assume_a=None, transposed=False):
    """Tangent of scipy.linalg.solve(a, b) along b: the same solve of b's tangent."""
    return _solve_as(a, b_dot, lower, assume_a, transposed)


def batch_solve_tangent_matrix(a_dot, ans, a, b, lower=False, assume_a=None,
                               transposed=False):
    """solve_tangent_matrix(a_dot[k], ans, a, b, ...) for each direction k (the triangle,
    the transpose and the product are of the last two axes: one solve of them all)."""
    a_dot = _read_as_solved(a_dot, lower, assume_a, transposed)
    return _batch_solve_as(a, -(a_dot @ ans), lower, assume_a, transposed)


def batch_solve_tangent_rhs(b_dot, a, lower=False, assume_a=None, transposed=False):
    """solve_tangent_rhs(b_dot[k], a, ...) for each direction k."""
    return _batch_solve_as(a, b_dot, lower, assume_a, transposed)


def _batch_solve_as(a, rhs, lower, assume_a, transposed):
    """_solve_as(a, rhs[k], ...) for each k: one solve, the directions as more columns."""
    if np.ndim(a) != 2 or np.ndim(rhs) not in (2, 3):
        from ..batched_rules import BatchMismatch
        raise BatchMismatch(f"a batched right-hand side of shape {np.shape(rhs)} for a "
                            f"matrix of shape {np.shape(a)}")
    columns = np.moveaxis(rhs, 0, -1)          # (n, B) or (n, k, B)
    found = _solve_as(a, np.reshape(columns, (np.shape(a)[0], -1)), lower, assume_a,
                      transposed)
    return np.moveaxis(np.reshape(found, (np.shape(found)[0],) + columns.shape[1:]), -1, 0)


def solve_triangular_tangent_a(a_dot, ans, a, trans=0, lower=False, unit_diagonal=False):
    """Tangent of x = scipy.linalg.solve_triangular(a, b) along a: -op(A)^-1 op(A') x, A'
    the triangle read (without its diagonal when that is taken as ones)."""
    part = np.tril(a_dot) if lower else np.triu(a_dot)
    if unit_diagonal:
        part = part - part * np.eye(np.shape(a_dot)[-1], dtype=part.dtype)
    if trans in (1, 2, "T", "C"):
        part = mT(part)
    return scipy.linalg.solve_triangular(a, -(part @ ans), trans=trans, lower=lower,
                                         unit_diagonal=unit_diagonal)


def eigvalsh_tangent(a_dot, a, lower=True):
    """Tangent of the eigenvalues of symmetric a (scipy.linalg.eigvalsh): diag(V^T S V),
    S the symmetric matrix of a_dot's triangle read (distinct eigenvalues)."""
    w, v = np.linalg.eigh(a, UPLO="L" if lower else "U")
    s = _symmetric(a_dot, lower)
    return np.diagonal(mT(v) @ s @ v, axis1=-2, axis2=-1)


def expm_tangent(a_dot, A):
    """Tangent of scipy.linalg.expm: its Frechet derivative at A in the direction a_dot."""
    out = scipy.linalg.expm_frechet(A, a_dot, compute_expm=False)
    return out.astype(float_dtype(a_dot), copy=False)


def sqrtm_tangent(a_dot, ans):
    """Tangent of S = scipy.linalg.sqrtm(A): X with S X + X S = a_dot."""
    out = scipy.linalg.solve_sylvester(ans, ans, a_dot)
    return out.astype(float_dtype(a_dot), copy=False)


def cholesky_tangent(a_dot, ans, lower=False):
    """Tangent of scipy.linalg.cholesky (the upper factor unless lower=True)."""
    return cholesky_tangent_of(a_dot, ans, upper=not lower)
