"""Helpers that generated gradient code calls for SciPy functions (rules/scipy.py).

Imported only when the SciPy rules are loaded, that is, once the user's code has imported
SciPy; sgcompiler itself never requires it.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg

from .core import float_dtype, mT, unbroadcast, unreduce
from .linalg import fold, solve_grad_a, solve_grad_b

_GENERAL = (None, "gen", "general")
_SYMMETRIC = ("sym", "symmetric", "her", "hermitian", "pos", "positive definite")
ASSUME_A = _GENERAL + _SYMMETRIC        # what the rules handle (others refused when compiled)


def logsumexp_grad_a(g, ans, a, axis=None, b=None, keepdims=False, return_sign=False):
    """Gradient of scipy.special.logsumexp with respect to a: b * exp(a - ans)."""
    _no_sign(return_sign)
    weights = np.exp(a - unreduce(ans, a, axis, keepdims))
    if b is not None:
        weights = weights * b
    return unbroadcast(unreduce(g, weights, axis, keepdims) * weights, a)


def logsumexp_grad_b(g, ans, a, axis=None, b=None, keepdims=False, return_sign=False):
    """Gradient of scipy.special.logsumexp with respect to b: exp(a - ans) (None when
    there is no b)."""
    _no_sign(return_sign)
    if b is None:
        return None
    weights = np.broadcast_to(np.exp(a - unreduce(ans, a, axis, keepdims)),
                              np.broadcast_shapes(np.shape(a), np.shape(b)))
    return unbroadcast(unreduce(g, weights, axis, keepdims) * weights, b)


def _no_sign(return_sign):
    if return_sign:
        raise NotImplementedError("the gradient of logsumexp(..., return_sign=True) is not "
                                  "supported")


def _triangle(assume_a, lower):
    """None for a matrix read whole, else whether its lower triangle is the one read."""
    if assume_a in _GENERAL:
        return None
    if assume_a in _SYMMETRIC:
        return lower
    raise NotImplementedError(f"the gradient of scipy.linalg.solve/inv with assume_a="
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
    return grad.astype(float_dtype(g), copy=False)


def sqrtm_grad(g, ans):
    """Gradient of S = scipy.linalg.sqrtm(A): X with S^T X + X S^T = g (dS S + S dS = dA)."""
    grad = scipy.linalg.solve_sylvester(mT(ans), mT(ans), g)
    return grad.astype(float_dtype(g), copy=False)
