"""Helpers that generated gradient code calls for scipy.special functions
(rules/scipy_special.py).

Imported only when the SciPy rules are loaded, that is, once the user's code has imported
SciPy; sgcompiler itself never requires it.
"""
from __future__ import annotations

import numpy as np

from .core import unbroadcast, unreduce


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
