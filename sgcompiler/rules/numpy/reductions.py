"""Derivative rules of NumPy's reductions and cumulative functions. See registry.py.

`unreduce(g, a, axis, keepdims)` broadcasts the gradient of a reduction back to the shape
of its input; the NaN-ignoring variants send nothing to the NaNs.
"""
import numpy as np

from ...runtime.numpy.reductions import (average_grad_a, average_grad_weights, average_weights,
                                  choose_grad,
                                  cumprod_grad, cumsum_grad, divide_or_zero, median_grad,
                                  nan_count, prod_grad)
from ...runtime import reduced_size, unreduce
from ...runtime.numpy.linalg import matrix_norm_grad, norm_grad, vector_norm_grad
from ...runtime.tangents import choose_tangent, cumprod_tangent_of, cumulative_prod_tangent_of
from ...runtime.batched_rules import batch_choose_tangent, batch_cumprod_tangent_of, batch_sum
from ..registry import batchable, jvp, linear, present, vjp


@vjp(np.sum, reduction=True)
def sum(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    return unreduce(g, a, axis, keepdims)


@vjp(np.nansum, reduction=True, notes="zero at NaNs")
def nansum(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    return np.where(np.isnan(a), 0.0, unreduce(g, a, axis, keepdims))


@vjp(np.mean, reduction=True)
def mean(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    return unreduce(g / reduced_size(a, axis), a, axis, keepdims)


@vjp(np.nanmean, reduction=True, notes="zero at NaNs")
def nanmean(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    return np.where(np.isnan(a), 0.0, unreduce(g, a, axis, keepdims) / nan_count(a, axis))


@vjp(np.average, reduction=True, notes="a and weights (1-D along axis, or a's shape); "
                                       "not returned=True", supported={"returned": (False,)})
def average(g, ans, a, axis=None, weights=None, returned=False, *, keepdims=False):
    return (average_grad_a(g, a, axis, weights, keepdims, returned), None,
            average_grad_weights(g, ans, a, axis, weights, keepdims, returned))


@vjp(np.max, np.min, np.amax, np.amin, np.nanmax, np.nanmin, reduction=True,
     notes="ties split evenly")
def max(g, ans, a, axis=None, out=None, keepdims=False):
    return choose_grad(g, ans, a, axis, keepdims)


@vjp(np.ptp, reduction=True, notes="ties split evenly")
def ptp(g, ans, a, axis=None, out=None, keepdims=False):
    return (choose_grad(g, np.max(a, axis=axis, keepdims=keepdims), a, axis, keepdims)
            - choose_grad(g, np.min(a, axis=axis, keepdims=keepdims), a, axis, keepdims))


@vjp(np.median, reduction=True, notes="the middle element(s); ties split evenly")
def median(g, ans, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return median_grad(g, a, axis, keepdims)


@vjp(np.prod, reduction=True, notes="exact with zeros")
def prod(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    return prod_grad(g, ans, a, axis, keepdims)


@vjp(np.nanprod, reduction=True, notes="zero at NaNs")
def nanprod(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    return np.where(np.isnan(a), 0.0,
                    prod_grad(g, ans, np.where(np.isnan(a), 1.0, a), axis, keepdims))


@vjp(np.var, reduction=True, notes="ddof")
def var(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return (unreduce(g, a, axis, keepdims) * 2.0 * (a - np.mean(a, axis=axis, keepdims=True))
            / (reduced_size(a, axis) - ddof))


@vjp(np.std, reduction=True, notes="ddof; 0 where the std is 0")
def std(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return (unreduce(divide_or_zero(g, ans), a, axis, keepdims) * (a - np.mean(a, axis=axis, keepdims=True))
            / (reduced_size(a, axis) - ddof))


@vjp(np.nanvar, reduction=True, notes="ddof; zero at NaNs")
def nanvar(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return np.where(np.isnan(a), 0.0, unreduce(g, a, axis, keepdims) * 2.0
                    * (a - np.nanmean(a, axis=axis, keepdims=True)) / (nan_count(a, axis) - ddof))


@vjp(np.nanstd, reduction=True, notes="ddof; zero at NaNs and where the std is 0")
def nanstd(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return np.where(np.isnan(a), 0.0, unreduce(divide_or_zero(g, ans), a, axis, keepdims)
                    * (a - np.nanmean(a, axis=axis, keepdims=True)) / (nan_count(a, axis) - ddof))


@vjp(np.linalg.norm, reduction=True,
     notes="vector and matrix norms (ord, axis, keepdims); 0 at a zero vector; matrix "
           "2-norms need a distinct largest (smallest) singular value")
def norm(g, ans, x, ord=None, axis=None, keepdims=False):
    return norm_grad(g, ans, x, ord, axis, keepdims)


@vjp(*present(np.linalg, "vector_norm"), reduction=True, notes="as np.linalg.norm")
def vector_norm(g, ans, x, *, axis=None, keepdims=False, ord=2):
    return vector_norm_grad(g, ans, x, ord, axis, keepdims)


@vjp(*present(np.linalg, "matrix_norm"), notes="as np.linalg.norm")
def matrix_norm(g, ans, x, *, keepdims=False, ord="fro"):
    return matrix_norm_grad(g, ans, x, ord, (-2, -1), keepdims)


# --- cumulative ---------------------------------------------------------------------------


@vjp(np.cumsum)
def cumsum(g, ans, a, axis=None, dtype=None, out=None):
    return cumsum_grad(g, a, axis)


@vjp(np.nancumsum, notes="zero at NaNs")
def nancumsum(g, ans, a, axis=None, dtype=None, out=None):
    return np.where(np.isnan(a), 0.0, cumsum_grad(g, a, axis))


@vjp(np.cumprod, notes="exact with zeros")
def cumprod(g, ans, a, axis=None, dtype=None, out=None):
    return cumprod_grad(g, ans, a, axis)


@vjp(np.nancumprod, notes="zero at NaNs")
def nancumprod(g, ans, a, axis=None, dtype=None, out=None):
    return np.where(np.isnan(a), 0.0, cumprod_grad(g, ans, np.where(np.isnan(a), 1.0, a), axis))


@vjp(*present(np, "cumulative_sum"))
def cumulative_sum(g, ans, x, *, axis=None, dtype=None, out=None, include_initial=False):
    return cumsum_grad(np.delete(g, 0, axis) if include_initial else g, x, axis)


@vjp(*present(np, "cumulative_prod"))
def cumulative_prod(g, ans, x, *, axis=None, dtype=None, out=None, include_initial=False):
    return cumprod_grad(np.delete(g, 0, axis) if include_initial else g,
                        np.delete(ans, 0, axis) if include_initial else ans, x, axis)


# --- tangents (forward mode); the other reductions' tangents are derived (derive.py) -------

linear(np.sum, np.mean, np.cumsum, *present(np, "cumulative_sum"))


@jvp(np.max, np.min, np.amax, np.amin, np.nanmax, np.nanmin)
def max_tangent(t, ans, a, axis=None, out=None, keepdims=False):
    return choose_tangent(t, ans, a, axis, keepdims)


# (np.sum of a tangent, in any batchable rule: the derived reductions' np.sum(t * D, axis),
# softmax's; the cumulative product runs along its axis for every direction at once)
batchable(np.max, np.min, np.amax, np.amin, np.nanmax, np.nanmin, np.cumprod, np.nancumprod,
          helpers=[(choose_tangent, batch_choose_tangent), (np.sum, batch_sum),
                   (cumprod_tangent_of, batch_cumprod_tangent_of)])


@jvp(np.nancumsum)
def nancumsum_tangent(t, ans, a, axis=None, dtype=None, out=None):
    return np.cumsum(np.where(np.isnan(a), 0.0, t), axis)


@jvp(np.cumprod)
def cumprod_tangent(t, ans, a, axis=None, dtype=None, out=None):
    return cumprod_tangent_of(t, a, axis)


@jvp(np.nancumprod)
def nancumprod_tangent(t, ans, a, axis=None, dtype=None, out=None):
    return cumprod_tangent_of(np.where(np.isnan(a), 0.0, t), np.where(np.isnan(a), 1.0, a),
                              axis)


@jvp(np.average)
def average_tangent(a_dot, weights_dot, ans, a, axis=None, weights=None, returned=False, *,
                    keepdims=False):
    return (np.average(a_dot, axis, weights, returned, keepdims=keepdims),
            np.sum(average_weights(a, weights_dot, axis) * (a - unreduce(ans, a, axis, keepdims)),
                   axis=axis, keepdims=keepdims)
            / np.sum(average_weights(a, weights, axis), axis=axis, keepdims=keepdims))


@jvp(*present(np.linalg, "matrix_norm"))
def matrix_norm_tangent(t, ans, x, *, keepdims=False, ord="fro"):
    return np.sum(t * matrix_norm_grad(np.ones_like(ans), ans, x, ord, (-2, -1), keepdims),
                  axis=(-2, -1), keepdims=keepdims)


# (the sum over the last two axes of the tangent: np.sum's batched form keeps them last)
batchable(*present(np.linalg, "matrix_norm"))


@jvp(*present(np, "cumulative_prod"))
def cumulative_prod_tangent(t, ans, x, *, axis=None, dtype=None, out=None,
                            include_initial=False):
    return cumulative_prod_tangent_of(t, x, axis, include_initial)
