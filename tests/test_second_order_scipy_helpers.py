"""Second derivatives through the gradient helpers of SciPy functions read through their
source (scipy.special.logsumexp, scipy.linalg.cho_factor, cho_solve, lu_factor, lu_solve, solve_banded
and solve_sylvester, the scores, dirichlet and multivariate_normal
and shape derivatives of the scipy.stats distributions) or with rules of their own
(scipy.linalg.expm): hessian,
hvp and grad of grad against central differences of the first-order gradient."""
import numpy as np
import pytest

scipy = pytest.importorskip("scipy", reason="the SciPy rules need SciPy")
import scipy.linalg  # noqa: E402
import scipy.special  # noqa: E402
import scipy.stats as st  # noqa: E402

from sgcompiler import check_grads  # noqa: E402
from gradcheck import assert_hessian_and_hvp_match

R = np.random.default_rng(1407)
S = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
FACTOR = scipy.linalg.cho_factor(S)


def log_sum_exp(x):
    return scipy.special.logsumexp(np.sin(x)) ** 2 \
        + np.sum(scipy.special.logsumexp(x * x, axis=0, b=np.arange(1.0, x.shape[-1] + 1)) ** 3)


def log_sum_exp_kept(x):
    return np.sum(scipy.special.logsumexp(x ** 3, axis=-1, keepdims=True) * x)


def log_sum_exp_weighted(x):
    # b depends on x (the tangent rule had no tangent for b: hessian refused); the second
    # b, one row, is broadcast against a
    return scipy.special.logsumexp(x[0], b=np.exp(x[-1])) ** 2 \
        + np.sum(scipy.special.logsumexp(np.sin(x), axis=0, b=x[0] ** 2 + 0.5) ** 3)


def cho_solved(x):
    return np.sum(scipy.linalg.cho_solve(FACTOR, np.sin(x)) ** 3)


def lu_solved(a):
    s = a + 3.0 * np.eye(a.shape[0])
    factor = scipy.linalg.lu_factor(s)
    return np.sum(scipy.linalg.lu_solve(factor, np.sin(a[0])) ** 2) \
        + np.sum(scipy.linalg.lu_solve(factor, a[1], trans=1) ** 3)


def banded(l_and_u, n, rng=R):
    """A diagonally dominant matrix in solve_banded's storage."""
    ab = 0.3 * rng.normal(size=(sum(l_and_u) + 1, n))
    ab[l_and_u[1]] += 4.0
    return ab


RHS = R.normal(size=(5, 2))


def banded_solved(ab):
    # the (1, 1) tuple is saved by a called function's forward: it is made again in the
    # backward, and the band's corners are picked twice (np.add.at, not a written sum)
    return np.sum(scipy.linalg.solve_banded((1, 1), ab, np.sin(ab[1])) ** 2)


def banded_solved_wide(ab):
    return np.sum(scipy.linalg.solve_banded((2, 1), ab * ab[2], RHS[:ab.shape[1]]) ** 3)


def sylvester_solved(x):
    a = S[:x.shape[0], :x.shape[0]] + np.diag(x[:, 0] ** 2)
    b = np.eye(x.shape[1]) + 0.1 * x[:x.shape[1]].T
    return np.sum(scipy.linalg.solve_sylvester(a, b, np.sin(x)) ** 2)


def cho_factored(a):
    s = a @ a.T + 3.0 * np.eye(a.shape[0])
    c, lower = scipy.linalg.cho_factor(s)
    return np.sum(np.sin(c) ** 2)


def cho_factored_solved(a):
    # the factor's adjoint is the tuple cho_solve's gradient helper returns, handed on to
    # cho_factor's (it was taken for an array: np.zeros_like of a tuple)
    factor = scipy.linalg.cho_factor(a @ a.T + 3.0 * np.eye(a.shape[0]), lower=True)
    return np.sum(scipy.linalg.cho_solve(factor, np.sin(a[:, 0])) ** 2)


def lu_solved_once(a):
    factor = scipy.linalg.lu_factor(a + 3.0 * np.eye(a.shape[0]))
    return np.sum(scipy.linalg.lu_solve(factor, np.sin(a[0]) + a[:, 1]) ** 2)


def normal_density(x):
    # mean and a full covariance from x, the points x's rows (mvn_grad_* through source)
    cov = S[:x.shape[1], :x.shape[1]] + np.diag(x[0] ** 2)
    return np.sum(st.multivariate_normal.logpdf(np.sin(x), x[-1] * 0.5, cov) ** 2) \
        + np.sum(st.multivariate_normal.pdf(x, np.zeros(x.shape[1]), np.diag(S)[:x.shape[1]]))


def dirichlet_density(x):
    p = np.exp(x) / np.sum(np.exp(x))
    return st.dirichlet.logpdf(p, 1.5 + x ** 2) + st.dirichlet.pdf(p, 2.0 + np.sin(x)) ** 2


def exponential(a):
    return np.sum(scipy.linalg.expm(np.sin(a)) ** 2) + np.trace(scipy.linalg.expm(a @ a)) ** 2


def densities(x):
    return np.sum(st.norm.logpdf(x, np.sin(x[0]), 1.5 + x[1] ** 2) ** 2) \
        + np.sum(st.t.logpdf(x, 2.0 + x[0] ** 2) ** 2) + np.sum(st.logistic.logcdf(x) ** 2) \
        + np.sum(st.cauchy.logpdf(x * 0.5) ** 2) + np.sum(st.laplace.logpdf(x, 0.1, 2.0) * x)


def positive_densities(x):
    y = 1.0 + x ** 2
    return np.sum(st.gamma.logpdf(y, 2.0 + x[0] ** 2) ** 2) \
        + np.sum(st.lognorm.logpdf(y, 0.5 + x[1] ** 2) ** 2) \
        + np.sum(st.chi2.logpdf(y, 3.0 + x[0] ** 2) ** 2) \
        + np.sum(st.beta.logpdf(0.5 / y, 2.0 + x[0] ** 2, 1.5) ** 2) \
        + np.sum(st.lognorm.logcdf(y, 0.5 + x[1] ** 2) ** 2) \
        + np.sum(st.expon.logpdf(y, 0.0, 1.0 + x[0] ** 2) ** 2) \
        + np.sum(st.poisson.logpmf(np.array([0.0, 2.0, 5.0]), 1.0 + y) ** 2)


CASES = [
    (log_sum_exp, lambda: R.normal(size=(3, 2))),
    (log_sum_exp, lambda: R.normal(size=4)),
    (log_sum_exp_kept, lambda: R.normal(size=(2, 3))),
    (log_sum_exp_weighted, lambda: R.normal(size=(2, 3))),
    (log_sum_exp_weighted, lambda: R.normal(size=(3, 2))),
    (cho_solved, lambda: R.normal(size=3)),
    (cho_solved, lambda: R.normal(size=(3, 2))),
    (lu_solved, lambda: R.normal(size=(3, 3))),
    (lu_solved, lambda: R.normal(size=(4, 4))),
    (cho_factored, lambda: R.normal(size=(3, 3))),
    (cho_factored, lambda: R.normal(size=(2, 4))),
    (cho_factored_solved, lambda: R.normal(size=(3, 3))),
    (cho_factored_solved, lambda: R.normal(size=(4, 2))),
    (lu_solved_once, lambda: R.normal(size=(3, 3))),
    (banded_solved, lambda: banded((1, 1), 4)),
    (banded_solved, lambda: banded((1, 1), 6)),
    (banded_solved_wide, lambda: banded((2, 1), 5)),
    (banded_solved_wide, lambda: banded((2, 1), 3)),
    (sylvester_solved, lambda: R.normal(size=(3, 2))),
    (sylvester_solved, lambda: R.normal(size=(2, 2))),
    (normal_density, lambda: R.normal(size=(2, 3))),
    (normal_density, lambda: R.normal(size=(4, 2))),
    (dirichlet_density, lambda: R.normal(size=3)),
    (dirichlet_density, lambda: R.normal(size=4)),
    (exponential, lambda: 0.5 * R.normal(size=(2, 2))),
    (exponential, lambda: 0.5 * R.normal(size=(3, 3))),
    (densities, lambda: R.normal(size=3)),
    (densities, lambda: R.normal(size=(2, 3))),
    (positive_densities, lambda: R.normal(size=3)),
]
IDS = [f"{f.__name__}-{i}" for i, (f, _) in enumerate(CASES)]




@pytest.mark.parametrize("f, make", CASES, ids=IDS)
def test_hessian_through_scipy_helpers(f, make):
    x = make()
    assert_hessian_and_hvp_match(f, x, R)


FIRST = {f: (f, make) for f, make in reversed(CASES)}


@pytest.mark.parametrize("f, make", list(FIRST.values()), ids=[f.__name__ for f in FIRST])
def test_grad_of_grad_through_scipy_helpers(f, make):
    check_grads(f, (make(),), order=2, modes=("rev", "fwd"))
