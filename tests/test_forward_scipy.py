"""jvp through SciPy functions, compiled, against central differences: the tangent rules
that tests/test_tangent_rules.py cannot reach on numbers alone (a factor tuple passed from
cho_factor or lu_factor to its solver, dirichlet's x moved inside the simplex) and one
function of each kind (a derived scipy.stats rule, a bilinear scipy.signal one)."""
import numpy as np
import pytest

scipy = pytest.importorskip("scipy")
import scipy.linalg  # noqa: E402
import scipy.signal  # noqa: E402
import scipy.stats  # noqa: E402

import sgcompiler  # noqa: E402
from test_forward import check_jvp  # noqa: E402

R = np.random.default_rng(14)


def _spd(n):
    a = R.normal(size=(n, n))
    return a @ a.T + n * np.eye(n)


def cho_upper(a, b):
    return scipy.linalg.cho_solve(scipy.linalg.cho_factor(a), b)


def cho_lower(a, b):
    factor = scipy.linalg.cho_factor(a, lower=True)
    return scipy.linalg.cho_solve(factor, b)


def lu_plain(a, b):
    return scipy.linalg.lu_solve(scipy.linalg.lu_factor(a), b)


def lu_transposed(a, b):
    return scipy.linalg.lu_solve(scipy.linalg.lu_factor(a), b, trans=1)


def banded(ab, b):
    return scipy.linalg.solve_banded((1, 1), ab, b)


def sylvester(a, b):
    return scipy.linalg.solve_sylvester(a, b, a @ b)


def stats_mix(x, s):
    return np.sum(scipy.stats.norm.logpdf(x, 0.5, s) + scipy.stats.gamma.cdf(x * x, 2.0, 0.0, s))


def convolved(x, k):
    return scipy.signal.convolve(x, k, mode="same") * scipy.signal.correlate(x, k, mode="same")


def mvn(x, cov):
    return scipy.stats.multivariate_normal.logpdf(x, np.zeros(3), cov)


def matrix_functions(a, b):
    """The scipy.linalg functions whose tangent rules came last, chained."""
    s = _sym(a)
    x = scipy.linalg.solve(a, b) + scipy.linalg.solve(s, b, assume_a="pos")
    t = scipy.linalg.solve_triangular(a, x, lower=True, trans=1)
    e = scipy.linalg.expm(0.1 * a) @ scipy.linalg.sqrtm(s)
    w = scipy.linalg.eigvalsh(s) + np.diag(scipy.linalg.cholesky(s, lower=True))
    return np.sum(e @ t) + scipy.linalg.det(a) * np.sum(w) \
        + np.sum(scipy.linalg.inv(a) * e)


def _sym(a):
    return a @ a.T + 4.0 * np.eye(a.shape[0])


def _banded_matrix():
    ab = R.normal(size=(3, 5))
    ab[1] += 4.0
    return ab


CASES = [
    (cho_upper, lambda: (_spd(4), R.normal(size=4))),
    (cho_lower, lambda: (_spd(3), R.normal(size=(3, 2)))),
    (lu_plain, lambda: (R.normal(size=(4, 4)), R.normal(size=4))),
    (lu_transposed, lambda: (R.normal(size=(3, 3)), R.normal(size=(3, 2)))),
    (banded, lambda: (_banded_matrix(), R.normal(size=5))),
    (sylvester, lambda: (R.normal(size=(3, 3)) + 3 * np.eye(3), R.normal(size=(3, 3)))),
    (stats_mix, lambda: (R.uniform(0.5, 1.5, size=4), 1.3)),
    (convolved, lambda: (R.normal(size=6), R.normal(size=3))),
    (mvn, lambda: (R.normal(size=(4, 3)), _spd(3))),
    (matrix_functions, lambda: (R.normal(size=(3, 3)) + 3 * np.eye(3), R.normal(size=3))),
    (matrix_functions, lambda: (R.normal(size=(4, 4)) + 4 * np.eye(4), R.normal(size=(4, 2)))),
]


@pytest.mark.parametrize("f, make", CASES, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(CASES)])
def test_jvp_through_scipy_matches_finite_differences(f, make):
    primals = make()
    tangents = tuple(R.normal(size=np.shape(p)) if np.ndim(p) else float(R.normal())
                     for p in primals)
    check_jvp(f, primals, tangents)


def dirichlet_points(x, alpha):
    return np.sum(scipy.stats.dirichlet.logpdf(x, alpha) + scipy.stats.dirichlet.pdf(x, alpha))


def test_jvp_of_dirichlet_along_the_simplex():
    x = R.dirichlet(np.ones(3), size=4).T          # 4 points, 3 components
    alpha = R.uniform(1.5, 3.0, size=3)
    x_dot = R.normal(size=x.shape)
    x_dot -= x_dot.mean(axis=0)                     # stays on the simplex
    check_jvp(dirichlet_points, (x, alpha), (x_dot, R.normal(size=3)))


def second_inv(a):
    return np.sum(scipy.linalg.inv(a) ** 3) + scipy.linalg.det(a) ** 2


def second_solve(a):
    x = scipy.linalg.solve(a, np.sin(a[0])) + scipy.linalg.solve(a @ a.T, a[1], assume_a="pos")
    return np.sum(x ** 3) + np.sum(scipy.linalg.solve(a, a[:, :2], transposed=True) ** 2)


def second_triangular(a):
    return np.sum(scipy.linalg.solve_triangular(a, np.cos(a[:, 0]), lower=True) ** 3) + \
        np.sum(scipy.linalg.solve_triangular(a, a[:, :2], trans=1) ** 2)


def second_sqrtm(a):
    return np.sum(scipy.linalg.sqrtm(a @ a.T + 3.0 * np.eye(a.shape[0])) ** 3)


@pytest.mark.parametrize("f", [second_inv, second_solve, second_triangular, second_sqrtm])
@pytest.mark.parametrize("n", [2, 3])
def test_hessian_through_scipy_linalg_gradient_helpers(f, n):
    """Forward over reverse through the gradient helpers read through their source,
    against central differences of the first-order gradient."""
    a = R.normal(size=(n, n)) + n * np.eye(n)
    gradient, eps = sgcompiler.grad(f), 1e-5
    columns = []
    for i in range(a.size):
        e = np.zeros(a.size)
        e[i] = eps
        e = e.reshape(a.shape)
        columns.append(((gradient(a + e) - gradient(a - e)) / (2 * eps)).ravel())
    expected = np.array(columns).T.reshape(a.shape + a.shape)
    np.testing.assert_allclose(sgcompiler.hessian(f)(a), expected, rtol=1e-5, atol=1e-5)
