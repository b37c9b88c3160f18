"""Helpers that generated gradient code calls for scipy.special functions
(rules/scipy_special.py).

Imported only when the SciPy rules are loaded, that is, once the user's code has imported
SciPy; sgcompiler itself never requires it.
"""
from __future__ import annotations

import numpy as np

from ...errors import RuntimeRefusal
from ..batched_rules import _moved, _ranked
from ..core import unbroadcast, unreduce


def _signed(g, ans, a, axis, keepdims, return_sign):
    """The value's adjoint, the value and exp(a - value) times its sign: with return_sign
    the result is (value, sign), and the sign (piecewise constant) gets no gradient."""
    if return_sign:
        g, ans, sign = g[0], ans[0], ans[1]
        return g, np.exp(a - unreduce(ans, a, axis, keepdims)) * unreduce(sign, a, axis,
                                                                           keepdims)
    return g, np.exp(a - unreduce(ans, a, axis, keepdims))


def logsumexp_grad_a(g, ans, a, axis=None, b=None, keepdims=False, return_sign=False):
    """Gradient of scipy.special.logsumexp with respect to a: b * exp(a - ans) (times the
    sign, with return_sign)."""
    g, weights = _signed(g, ans, a, axis, keepdims, return_sign)
    if b is not None:
        weights = weights * b
    return unbroadcast(unreduce(g, weights, axis, keepdims) * weights, a)


def logsumexp_grad_b(g, ans, a, axis=None, b=None, keepdims=False, return_sign=False):
    """Gradient of scipy.special.logsumexp with respect to b: exp(a - ans) (times the sign,
    with return_sign; None when there is no b)."""
    if b is None:
        return None
    g, weights = _signed(g, ans, a, axis, keepdims, return_sign)
    weights = np.broadcast_to(weights, np.broadcast_shapes(np.shape(a), np.shape(b)))
    return unbroadcast(unreduce(g, weights, axis, keepdims) * weights, b)


def logsumexp_tangent_a(a_dot, ans, a, axis=None, b=None, keepdims=False,
                        return_sign=False):
    """Tangent of scipy.special.logsumexp along a_dot: sum(b exp(a - value) a_dot)."""
    return _weighted_sum(a_dot if b is None else a_dot * b, ans, a, axis, keepdims,
                         return_sign)


def logsumexp_tangent_b(b_dot, ans, a, axis=None, b=None, keepdims=False,
                        return_sign=False):
    """Tangent of scipy.special.logsumexp along b's tangent: sum(exp(a - value) b_dot)."""
    return _weighted_sum(b_dot, ans, a, axis, keepdims, return_sign)


def batch_logsumexp_tangent_a(a_dot, ans, a, axis=None, b=None, keepdims=False,
                              return_sign=False):
    """logsumexp_tangent_a(a_dot[k], ...) for each direction k of a batched a_dot."""
    rank = max(np.ndim(a), np.ndim(b))
    t = _ranked(a_dot, rank)
    return _batch_weighted_sum(t if b is None else t * b, ans, a, axis, keepdims,
                               return_sign, rank)


def batch_logsumexp_tangent_b(b_dot, ans, a, axis=None, b=None, keepdims=False,
                              return_sign=False):
    """logsumexp_tangent_b(b_dot[k], ...) for each direction k of a batched b_dot."""
    rank = max(np.ndim(a), np.ndim(b))
    return _batch_weighted_sum(_ranked(b_dot, rank), ans, a, axis, keepdims, return_sign,
                               rank)


def _batch_weighted_sum(t, ans, a, axis, keepdims, return_sign, rank):
    _refuse_sign(return_sign)
    weights = np.exp(a - unreduce(ans, a, axis, keepdims))
    return np.sum(weights * t, axis=_moved(axis, rank), keepdims=keepdims)


def _weighted_sum(t, ans, a, axis, keepdims, return_sign):
    _refuse_sign(return_sign)
    weights = np.exp(a - unreduce(ans, a, axis, keepdims))
    return np.sum(weights * t, axis=axis, keepdims=keepdims)


def _refuse_sign(return_sign):
    if return_sign:
        raise RuntimeRefusal("the tangent of scipy.special.logsumexp(..., return_sign=True) "
                             "is not supported (hessian, hvp, jvp); take the value without "
                             "its sign, or use reverse mode")
