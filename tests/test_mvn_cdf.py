"""scipy.stats.multivariate_normal.cdf and logcdf through the compiler: the gradient in x
and in the mean (the density of each coordinate times the cdf of the others given it).

SciPy integrates the cdf numerically. In two dimensions its value is accurate to about
1e-15 (checked here against a 1-D quadrature), so finite differences of it with a small
step check the gradient tightly. In three dimensions the value is a randomised quasi-Monte
Carlo estimate (abseps 1e-5 by default); the reference there is computed with abseps 1e-6
and one fixed rng for every evaluation (a smooth function of x then), with a step of 1e-2:
the finite differences agree with the exact slopes to about 1e-6."""
import inspect

import numpy as np
import pytest

from gradcheck import assert_grad_matches
from sgcompiler import SGCompilerError, grad, jvp
from test_forward import check_jvp

stats = pytest.importorskip("scipy.stats", reason="SciPy is an optional extra")
integrate = pytest.importorskip("scipy.integrate", reason="SciPy is an optional extra")
if "rng" not in inspect.signature(stats.multivariate_normal.cdf).parameters:
    pytest.skip("this SciPy's multivariate_normal.cdf takes random_state=, not rng=: its "
                "cdf has no rule here", allow_module_level=True)
mvn = stats.multivariate_normal

R = np.random.default_rng(16)


def spd(d):
    a = R.normal(size=(d, d))
    return a @ a.T + d * np.eye(d) * 0.5


C2, C3 = spd(2), spd(3)


def quadrature_cdf(x, m, c):
    """P(X <= x) in two dimensions, as a 1-D integral of the density of X_0 times the
    conditional cdf of X_1."""
    def integrand(t):
        mean = m[1] + c[1, 0] / c[0, 0] * (t - m[0])
        return stats.norm.pdf(t, m[0], np.sqrt(c[0, 0])) * stats.norm.cdf(
            x[1], mean, np.sqrt(c[1, 1] - c[1, 0] ** 2 / c[0, 0]))
    return integrate.quad(integrand, -np.inf, x[0], epsabs=1e-14, epsrel=1e-13)[0]


def test_the_two_dimensional_cdf_is_accurate():
    x, m = np.array([0.4, -0.3]), np.array([0.1, 0.2])
    assert abs(mvn.cdf(x, m, C2) - quadrature_cdf(x, m, C2)) < 1e-12


def weighted_cdf(x, m, w):
    return np.sum(w * mvn.cdf(x, m, C2))


def weighted_logcdf(x, m, w):
    return np.sum(w * mvn.logcdf(x, mean=m, cov=C2))


@pytest.mark.parametrize("f", [weighted_cdf, weighted_logcdf], ids=lambda f: f.__name__)
@pytest.mark.parametrize("x_shape, w_shape", [((2,), ()), ((4, 2), (4,)), ((3, 4, 2), (4,))])
def test_two_dimensions_in_x_and_mean(f, x_shape, w_shape):
    x, m, w = R.normal(size=x_shape), R.normal(size=2) * 0.3, R.uniform(0.5, 1.5, w_shape)
    assert_grad_matches(f, [x, m, w], wrt=[0, 1])
    check_jvp(f, (x, m, w), (R.normal(size=x_shape), R.normal(size=2), np.zeros(w_shape)))


def one_dimension(x, m):
    return np.sum(np.log(mvn.cdf(x, m, 2.0)))


def test_one_dimension_is_the_normal_cdf():
    x = R.normal(size=5)
    assert_grad_matches(one_dimension, [x, 0.3])
    g = grad(one_dimension)(x, 0.3)
    z = stats.norm
    np.testing.assert_allclose(g, z.pdf(x, 0.3, np.sqrt(2.0)) / z.cdf(x, 0.3, np.sqrt(2.0)),
                               rtol=1e-10)


def box(x, lower, m):
    return np.sum(mvn.cdf(x, m, C2, lower_limit=lower))


def test_a_lower_limit_also_one_above_x():
    # a lower limit above x counts negatively, as SciPy orients it
    x, m = np.array([[0.5, 0.2], [-0.4, 0.6]]), np.array([0.1, -0.1])
    lower = np.array([-0.5, 0.9])
    assert_grad_matches(box, [x, lower, m], wrt=[0, 2])


def three_dimensions(x, m):
    return np.sum(mvn.cdf(x, m, C3) * np.arange(1.0, 1.0 + x.shape[0]))


def _reference_cdf(x, m):
    return np.sum(mvn.cdf(x, m, C3, abseps=1e-6, releps=1e-6, rng=np.random.default_rng(0))
                  * np.arange(1.0, 1.0 + x.shape[0]))


def _central_differences(f, x, step):
    out = np.zeros_like(x)
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = step
        out.flat[k] = (f(x + e) - f(x - e)) / (2 * step)
    return out


def test_three_dimensions_against_a_tighter_integral():
    x, m = np.array([[0.4, -0.1, 0.8], [-0.2, 0.5, 0.1]]), np.array([0.1, 0.2, -0.3])
    gx, gm = grad(three_dimensions, wrt=(0, 1))(x, m)
    np.testing.assert_allclose(gx, _central_differences(lambda v: _reference_cdf(v, m), x,
                                                        1e-2), atol=2e-5)
    np.testing.assert_allclose(gm, _central_differences(lambda v: _reference_cdf(x, v), m,
                                                        1e-2), atol=2e-5)
    _, tangent = jvp(three_dimensions, (x, m), (np.ones_like(x), np.zeros(3)))
    np.testing.assert_allclose(tangent, np.sum(gx), rtol=1e-4)


def with_cov(x, c):
    return mvn.cdf(x, np.zeros(2), c)


def test_no_gradient_in_the_covariance_nor_the_lower_limit():
    with pytest.raises(SGCompilerError, match="gives no gradient for its parameter 'cov'"):
        grad(with_cov, wrt=1)(np.array([0.1, 0.2]), C2)
    with pytest.raises(SGCompilerError, match="no gradient for its parameter 'lower_limit'"):
        grad(box, wrt=1)(np.array([0.5, 0.2]), np.array([-0.5, 0.1]), np.zeros(2))
