"""Helpers that generated gradient code calls for scipy.stats distributions
(rules/scipy_stats.py).

A location-scale distribution's density is f0(z; shapes) / scale with z = (x - loc) / scale.
Its rules need, besides the distribution's own pdf and logpdf, the *score* of the standard
density, d log f0 / dz, and the derivatives of log f0 in the shape parameters: one small
function each, below. Where the support is bounded they are 0 outside it (there the pdf is
the constant 0). Imported only when the SciPy rules are loaded.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import digamma
from scipy.stats import multivariate_normal, norm

from ...errors import RuntimeRefusal
from ..core import float_dtype, unbroadcast

# the helpers below written with NumPy's functions and scipy.special's digamma alone, which
# run on arrays of other array-API libraries too (runtime/namespace.py binds them, and
# digamma, to the arguments' namespace)
STANDARD = frozenset({"exp_ratio", "_within", "norm_score", "logistic_score",
                      "laplace_score", "cauchy_score", "expon_score", "lognorm_score",
                      "lognorm_dlogpdf_ds", "lognorm_dcdf_ds", "t_score", "chi2_score",
                      "gamma_score", "beta_score", "t_dlogpdf_ddf", "chi2_dlogpdf_ddf",
                      "gamma_dlogpdf_da", "beta_dlogpdf_da", "beta_dlogpdf_db",
                      "poisson_dlogpmf_dmu"})
_SQRT_2PI = math.sqrt(2.0 * math.pi)      # (the standard normal density's, as SciPy's)


def exp_ratio(log_num, log_den):
    """exp(log_num - log_den), 0 where log_num is -inf (outside the support, where the
    log-cdf or log-sf being differentiated is a constant)."""
    outside = np.isneginf(log_num)
    return np.where(outside, 0.0, np.exp(np.where(outside, 0.0, log_num - log_den)))


def _within(z, lo, hi):
    """Whether z is inside (lo, hi), and z with the points outside moved inside, so that
    formulas valid on the support can be evaluated there without warnings."""
    inside = (z > lo) & (z < hi)
    return inside, np.where(inside, z, 0.5 if hi == 1.0 else 1.0)


# --- scores d log f0 / dz of standard densities ---------------------------------------------


def norm_score(z):
    return -z


def logistic_score(z):
    return -np.tanh(0.5 * z)


def laplace_score(z):
    return -np.sign(z)


def cauchy_score(z):
    return -2.0 * z / (1.0 + z ** 2)


def expon_score(z):
    return np.where(z >= 0.0, -1.0, 0.0)


def t_score(z, df):
    return -(df + 1.0) * z / (df + z ** 2)


def chi2_score(z, df):
    inside, z = _within(z, 0.0, np.inf)
    return np.where(inside, (0.5 * df - 1.0) / z - 0.5, 0.0)


def gamma_score(z, a):
    inside, z = _within(z, 0.0, np.inf)
    return np.where(inside, (a - 1.0) / z - 1.0, 0.0)


def beta_score(z, a, b):
    inside, z = _within(z, 0.0, 1.0)
    return np.where(inside, (a - 1.0) / z - (b - 1.0) / (1.0 - z), 0.0)


def lognorm_score(z, s):
    inside, z = _within(z, 0.0, np.inf)
    return np.where(inside, -(1.0 + np.log(z) / s ** 2) / z, 0.0)


# --- derivatives of log f0 (and of the cdf, where it has a closed form) in shapes ------------


def t_dlogpdf_ddf(z, df):
    return 0.5 * (digamma(0.5 * (df + 1.0)) - digamma(0.5 * df) - 1.0 / df
                  - np.log1p(z ** 2 / df) + (df + 1.0) * z ** 2 / (df * (df + z ** 2)))


def chi2_dlogpdf_ddf(z, df):
    inside, z = _within(z, 0.0, np.inf)
    return np.where(inside, 0.5 * (np.log(0.5 * z) - digamma(0.5 * df)), 0.0)


def gamma_dlogpdf_da(z, a):
    inside, z = _within(z, 0.0, np.inf)
    return np.where(inside, np.log(z) - digamma(a), 0.0)


def beta_dlogpdf_da(z, a, b):
    inside, z = _within(z, 0.0, 1.0)
    return np.where(inside, np.log(z) - digamma(a) + digamma(a + b), 0.0)


def beta_dlogpdf_db(z, a, b):
    inside, z = _within(z, 0.0, 1.0)
    return np.where(inside, np.log1p(-z) - digamma(b) + digamma(a + b), 0.0)


def lognorm_dlogpdf_ds(z, s):
    inside, z = _within(z, 0.0, np.inf)
    return np.where(inside, (np.log(z) ** 2 / s ** 2 - 1.0) / s, 0.0)


def lognorm_dcdf_ds(z, s):
    """d/ds of the lognormal cdf, Phi(log(z) / s)."""
    inside, z = _within(z, 0.0, np.inf)
    u = np.log(z) / s
    return np.where(inside, -(np.exp(-u ** 2 / 2.0) / _SQRT_2PI) * u / s, 0.0)


# --- scipy.stats.poisson, dirichlet, multivariate_normal ----------------------------------------


def poisson_dlogpmf_dmu(k, mu, loc=0):
    """d/dmu of log pmf: k/mu - 1 on the support (integers k - loc >= 0), else 0."""
    k = np.asarray(k, dtype=float_dtype(k)) - loc      # (integers as floats: as NumPy's k / mu)
    inside = (k >= 0) & (k == np.floor(k))
    return np.where(inside, k / mu - 1.0, 0.0)


def dirichlet_full(x, alpha):
    """x with its K components along its first axis, as SciPy reads it: given K-1, the
    last is 1 minus their sum. alpha must be 1-D (SciPy's own check, which the primal ran)."""
    if np.ndim(alpha) != 1 or np.shape(x)[0] not in (np.shape(alpha)[0],
                                                     np.shape(alpha)[0] - 1):
        raise RuntimeRefusal(f"scipy.stats.dirichlet: alpha must be 1-D and x must have "
                             f"len(alpha) or len(alpha) - 1 components along its first "
                             f"axis (x: {np.shape(x)}, alpha: {np.shape(alpha)})")
    if np.shape(x)[0] == np.shape(alpha)[0]:
        return np.asarray(x)
    return np.concatenate([x, (1.0 - np.sum(x, axis=0))[np.newaxis]], axis=0)


def dirichlet_grad_x(g, x, alpha):
    """Gradient of dirichlet.logpdf(x, alpha) in x: g (alpha - 1) / x, per component; for
    x of K-1 components, whose last one is 1 - sum(x), minus that of the last."""
    full = dirichlet_full(x, alpha)
    a = np.reshape(alpha, np.shape(alpha) + (1,) * (np.ndim(x) - 1))
    grad = g * (a - 1.0) / full
    return grad if np.shape(full) == np.shape(x) else grad[:-1] - grad[-1:]


def dirichlet_grad_alpha(g, x, alpha):
    """Gradient of dirichlet.logpdf(x, alpha) in alpha: the sum over the points of
    g (log x_i + digamma(sum alpha) - digamma(alpha_i))."""
    x = dirichlet_full(x, alpha)
    logs = np.reshape(np.log(x), (np.shape(x)[0], -1))
    weights = np.reshape(np.broadcast_to(g, np.shape(x)[1:]), (-1,))
    return logs @ weights + np.sum(weights) * (digamma(np.sum(alpha)) - digamma(alpha))


def _mvn_parts(x, mean, cov):
    """The points as rows (n, d), their residuals r and cov^-1 r as rows, and cov^-1."""
    # the dimension as SciPy infers it (multivariate_normal._process_parameters)
    if mean is not None:
        d = np.size(mean)
    else:
        d = 1 if np.ndim(cov) < 2 else np.shape(cov)[0]
    full = _mvn_cov(cov, d)
    points = np.reshape(x, (-1, d))
    r = points - (0.0 if mean is None else mean)
    inverse = np.linalg.inv(full)
    return r, r @ inverse, inverse


def _mvn_cov(cov, d):
    if np.ndim(cov) == 0:
        return cov * np.eye(d)
    if np.ndim(cov) == 1:
        return np.diag(cov)
    return np.tril(cov) + mT_lower(cov)


def mT_lower(cov):
    """The strict lower triangle of cov, transposed: with tril(cov), the symmetric matrix
    SciPy reads (it reads the lower triangle only)."""
    return np.tril(cov, -1).T


def mvn_grad_x(g, ans, x, mean=None, cov=1):
    """Gradient of multivariate_normal.logpdf in x: -g cov^-1 (x - mean), per point."""
    _, solved, _ = _mvn_parts(x, mean, cov)
    return np.reshape(-np.reshape(g, (-1, 1)) * solved, np.shape(x))


def mvn_grad_mean(g, ans, x, mean=None, cov=1):
    """Gradient of multivariate_normal.logpdf in mean: the sum of g cov^-1 (x - mean)."""
    _, solved, _ = _mvn_parts(x, mean, cov)
    return unbroadcast(np.reshape(g, (-1, 1)) * solved, mean)


def mvn_grad_cov(g, ans, x, mean=None, cov=1):
    """Gradient of multivariate_normal.logpdf in cov: the sum over points of
    g (cov^-1 r r^T cov^-1 - cov^-1) / 2, on what SciPy reads of cov (its lower triangle,
    its diagonal for a 1-D cov, the one number of a scalar cov)."""
    _, solved, inverse = _mvn_parts(x, mean, cov)
    weights = np.reshape(g, (-1,))
    grad = 0.5 * ((solved.T * weights) @ solved - np.sum(weights) * inverse)
    if np.ndim(cov) == 0:
        return np.trace(grad)
    if np.ndim(cov) == 1:
        return np.diagonal(grad).copy()
    return np.tril(grad + grad.T, -1) + np.diag(np.diagonal(grad))



# --- tangents (forward mode) of dirichlet and multivariate_normal ----------------------------


def dirichlet_tangent_alpha(alpha_dot, x, alpha):
    """Tangent of dirichlet.logpdf(x, alpha) along alpha_dot, one per point:
    sum_i alpha_dot_i (log x_i + digamma(sum alpha) - digamma(alpha_i))."""
    x = dirichlet_full(x, alpha)
    weights = alpha_dot * (digamma(np.sum(alpha)) - digamma(alpha))
    return np.tensordot(alpha_dot, np.log(x), axes=(0, 0)) + np.sum(weights)


def _mvn_shaped(per_point, ans):
    return np.reshape(per_point, np.shape(ans))


def mvn_tangent_x(x_dot, ans, x, mean=None, cov=1):
    """Tangent of multivariate_normal.logpdf along x_dot: -(x_dot . cov^-1 (x - mean))."""
    _, solved, _ = _mvn_parts(x, mean, cov)
    rows = np.reshape(np.broadcast_to(x_dot, np.shape(x)), np.shape(solved))
    return _mvn_shaped(-np.sum(rows * solved, axis=1), ans)


def mvn_tangent_mean(mean_dot, ans, x, mean=None, cov=1):
    """Tangent of multivariate_normal.logpdf along mean_dot: mean_dot . cov^-1 (x - mean)."""
    _, solved, _ = _mvn_parts(x, mean, cov)
    return _mvn_shaped(np.sum(np.reshape(mean_dot, (1, -1)) * solved, axis=1), ans)


def mvn_tangent_cov(cov_dot, ans, x, mean=None, cov=1):
    """Tangent of multivariate_normal.logpdf along cov_dot, as SciPy reads it (the map from
    cov to the full matrix is linear): (r^T C^-1 C' C^-1 r - tr(C^-1 C')) / 2."""
    _, solved, inverse = _mvn_parts(x, mean, cov)
    full_dot = _mvn_cov(cov_dot, np.shape(inverse)[0])
    quadratic = np.sum((solved @ full_dot) * solved, axis=1)
    return _mvn_shaped(0.5 * (quadratic - np.sum(inverse * full_dot.T)), ans)


# --- multivariate_normal.cdf and logcdf -------------------------------------------------------
#
# F(x) = P(lower <= X <= x), X ~ N(mean, C). Its slope in x_i is the density of X_i at x_i
# times the probability of the other coordinates given X_i = x_i, a normal distribution of
# one dimension less: mean_-i + C_-i,i (x_i - mean_i) / C_ii, covariance
# C_-i,-i - C_-i,i C_i,-i / C_ii. In two dimensions that is one normal cdf (exact); in more,
# SciPy's cdf of d - 1 dimensions, integrated as the call asked (maxpts, abseps, releps, rng).
# F depends on x - mean, so the slope in the mean is minus the slope in x.


def _conditional_probability(value, upper, lower, mean, full, i, options):
    """P(lower_-i <= X_-i <= upper_-i | X_i = value), the limits oriented as SciPy orients
    them (a lower limit above the upper one counts negatively)."""
    rest = [k for k in range(len(mean)) if k != i]
    if not rest:
        return 1.0
    column = full[rest, i]
    cond_mean = mean[rest] + column * (value - mean[i]) / full[i, i]
    cond_cov = full[np.ix_(rest, rest)] - np.outer(column, column) / full[i, i]
    if len(rest) == 1:
        scale = np.sqrt(cond_cov[0, 0])
        return norm.cdf(upper[rest[0]], cond_mean[0], scale) \
            - norm.cdf(lower[rest[0]], cond_mean[0], scale)
    from_below = None if np.all(np.isneginf(lower[rest])) else lower[rest]
    return multivariate_normal.cdf(upper[rest], cond_mean, cond_cov, lower_limit=from_below,
                                   **options)


def _mvn_cdf_limits(x, mean, cov, lower_limit):
    """The points as rows (n, d), their lower limits (-inf without lower_limit), the mean
    as a d-vector and the full covariance."""
    r, _, _ = _mvn_parts(x, mean, cov)
    d = np.shape(r)[1]
    points = np.reshape(x, (-1, d))
    if lower_limit is None:
        lower = np.full(np.shape(points), -np.inf)
    elif np.broadcast_shapes(np.shape(lower_limit), np.shape(x)) != np.shape(x):
        raise RuntimeRefusal("scipy.stats.multivariate_normal.cdf: no gradient for a "
                             "lower_limit with more points than x; broadcast x to its shape")
    else:
        lower = np.reshape(np.broadcast_to(lower_limit, np.shape(x)), np.shape(points))
    centre = np.zeros(d) if mean is None else np.broadcast_to(mean, (d,)).astype(float)
    return points, lower, centre, _mvn_cov(cov, d)


def mvn_cdf_slopes(x, mean=None, cov=1, maxpts=None, abseps=1e-5, releps=1e-5,
                   lower_limit=None, rng=None, at_lower=False):
    """d F / d x of multivariate_normal.cdf(x, mean, cov), one row per point (n, d); with
    at_lower, d F / d lower_limit (0 where the lower limit is -inf)."""
    points, lower, centre, full = _mvn_cdf_limits(x, mean, cov, lower_limit)
    options = {"maxpts": maxpts, "abseps": abseps, "releps": releps, "rng": rng}
    ends = lower if at_lower else points
    slopes = np.zeros(np.shape(points))
    for p, i in np.ndindex(*np.shape(points)):
        density = norm.pdf(ends[p, i], centre[i], np.sqrt(full[i, i]))
        if density:
            slopes[p, i] = density * _conditional_probability(ends[p, i], points[p], lower[p],
                                                              centre, full, i, options)
    return -slopes if at_lower else slopes


def _mean_slopes(x, mean, cov, maxpts, abseps, releps, lower_limit, rng):
    """d F / d mean per point: F depends on x - mean and lower_limit - mean."""
    slopes = -mvn_cdf_slopes(x, mean, cov, maxpts, abseps, releps, lower_limit, rng)
    if lower_limit is not None:
        slopes = slopes - mvn_cdf_slopes(x, mean, cov, maxpts, abseps, releps, lower_limit,
                                         rng, at_lower=True)
    return slopes


def mvn_cdf_grad_x(g, x, mean=None, cov=1, maxpts=None, abseps=1e-5, releps=1e-5,
                   lower_limit=None, rng=None):
    """Gradient of multivariate_normal.cdf in x: g times the slopes, per point."""
    slopes = mvn_cdf_slopes(x, mean, cov, maxpts, abseps, releps, lower_limit, rng)
    return np.reshape(np.reshape(g, (-1, 1)) * slopes, np.shape(x))


def mvn_cdf_grad_mean(g, x, mean=None, cov=1, maxpts=None, abseps=1e-5, releps=1e-5,
                      lower_limit=None, rng=None):
    """Gradient of multivariate_normal.cdf in the mean: minus the sum of those in x and in
    lower_limit, per point."""
    slopes = _mean_slopes(x, mean, cov, maxpts, abseps, releps, lower_limit, rng)
    return unbroadcast(np.reshape(g, (-1, 1)) * slopes, mean)


def mvn_cdf_tangent_x(x_dot, ans, x, mean=None, cov=1, maxpts=None, abseps=1e-5,
                      releps=1e-5, lower_limit=None, rng=None):
    """Tangent of multivariate_normal.cdf along x_dot: the slopes times x_dot, per point."""
    slopes = mvn_cdf_slopes(x, mean, cov, maxpts, abseps, releps, lower_limit, rng)
    rows = np.reshape(np.broadcast_to(x_dot, np.shape(x)), np.shape(slopes))
    return _mvn_shaped(np.sum(rows * slopes, axis=1), ans)


def mvn_cdf_tangent_mean(mean_dot, ans, x, mean=None, cov=1, maxpts=None, abseps=1e-5,
                         releps=1e-5, lower_limit=None, rng=None):
    """Tangent of multivariate_normal.cdf along mean_dot: the mean's slopes times mean_dot."""
    slopes = _mean_slopes(x, mean, cov, maxpts, abseps, releps, lower_limit, rng)
    return _mvn_shaped(np.sum(np.reshape(mean_dot, (1, -1)) * slopes, axis=1), ans)
