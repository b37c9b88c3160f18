"""Second derivatives through the gradient helpers that first-order code calls
(rules/runtime.py): hessian (forward over reverse) and grad of grad, against central
differences of the first-order gradient, on several shapes.

Each specimen puts one primitive whose gradient helper is differentiated through its
source (registry.through_source) or has a second-order rule between nonlinear functions,
so that its second derivative matters.
"""
import numpy as np
import pytest

from sgcompiler import SGCompilerError, check_grads
from gradcheck import assert_hessian_and_hvp_match

R = np.random.default_rng(1405)


def _square(n):
    return R.normal(size=(n, n)) + n * np.eye(n)


def _spd(n):
    a = R.normal(size=(n, n))
    return a @ a.T + n * np.eye(n)


def prod_all(x):
    return np.prod(x) + np.sum(np.prod(x ** 2, axis=0))


def prod_with_zero(x):
    return np.prod(x * x + x)


def norm_default(x):
    return np.linalg.norm(x) ** 3 + np.sum(np.linalg.norm(x, axis=-1) ** 2)


def norm_orders(x):
    return np.linalg.norm(x, ord=3) ** 2 + np.linalg.vector_norm(x, ord=1.5)


def matrix_norms(a):
    return np.linalg.norm(a, "fro") ** 3 + np.linalg.matrix_norm(a, ord="nuc") ** 2 \
        + np.linalg.norm(a, 2) ** 2


def trace_and_diag(a):
    return np.trace(a @ a) ** 2 + np.sum(np.diag(a) ** 3) + np.sum(np.diagonal(a, 1) ** 3)


def solve_inv_det(a):
    x = np.linalg.solve(a, np.sin(a[0]))
    return np.sum(x ** 2) + np.linalg.det(a) ** 2 + np.sum(np.linalg.inv(a) ** 3) \
        + np.linalg.slogdet(a)[1] ** 2


def powers(a):
    return np.sum(np.linalg.matrix_power(a, 3) ** 2) + np.sum(np.linalg.pinv(a) ** 3)


def chained(a):
    return np.sum(np.linalg.multi_dot([a, np.sin(a), a]) ** 2)


def cholesky_of(a):
    s = a @ a.T + 3.0 * np.eye(a.shape[0])
    return np.sum(np.linalg.cholesky(s) ** 3)


def eigh_of(a):
    s = a + a.T
    w, v = np.linalg.eigh(s)
    return np.sum(w ** 3) + np.sum(v[:, 0] ** 4) + np.sum(np.linalg.eigvalsh(s) ** 3)


def svd_of(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.sum(s ** 3) + np.sum(u[:, 0] ** 4) + np.sum(np.linalg.svd(a, compute_uv=False))


def svdvals_of(a):
    return np.sum(np.linalg.svdvals(a) ** 3)


def qr_of(a):
    q, r = np.linalg.qr(a)
    return np.sum(r ** 3) + np.sum(q ** 4)


def lstsq_of(a):
    x = np.linalg.lstsq(a, np.cos(a[:, 0]))[0]
    return np.sum(x ** 3)


# (np.linalg.eig and eigvals make complex values: their second derivatives are refused
# with the other complex code's, see the README)


def cumulative_product(x):
    return np.sum(np.cumprod(np.sin(x))) + np.sum(np.cumprod(x, axis=0) ** 2)


def joined_and_split(x):
    a, b = np.split(np.concatenate([np.sin(x), x ** 2]), 2)
    return np.sum(a ** 3 * b)


def spread(x):
    return np.std(x) ** 3 + np.hypot(x[0], x[1]) ** 3


def crossed(x):
    return np.sum(np.cross(x, np.sin(x)) ** 2)


def inverted_mask(x):
    """~ and & on masks (a KeyError inside the compiler before)."""
    keep = ~(x > 0.5) & (x > -2.0) | (x > 1.5) ^ (x < -3.0)
    return np.sum(np.where(keep, x ** 3, np.sin(x)))


def written(x):
    y = np.zeros(x.size + 2)
    y[1:-1] = x * x
    y[[0, 0, 2]] = np.sin(x[:3])
    return np.sum(y ** 3)


CASES = [
    (prod_all, lambda: R.uniform(0.5, 1.5, size=(3, 2))),
    (prod_all, lambda: R.uniform(0.5, 1.5, size=(4, 3))),
    (prod_with_zero, lambda: np.array([0.0, 1.5, -0.7, 2.0])),
    (prod_with_zero, lambda: np.array([0.0, -1.0, 0.4])),      # two zero factors
    (norm_default, lambda: R.normal(size=(2, 3))),
    (norm_default, lambda: R.normal(size=(4, 2))),
    (norm_orders, lambda: R.normal(size=5)),
    (matrix_norms, lambda: R.normal(size=(3, 3))),
    (matrix_norms, lambda: R.normal(size=(4, 2))),
    (trace_and_diag, lambda: R.normal(size=(3, 3))),
    (solve_inv_det, lambda: _square(3)),
    (solve_inv_det, lambda: _square(4)),
    (powers, lambda: _square(3)),
    (chained, lambda: R.normal(size=(3, 3))),
    (cholesky_of, lambda: R.normal(size=(3, 3))),
    (eigh_of, lambda: R.normal(size=(3, 3))),
    (eigh_of, lambda: R.normal(size=(4, 4))),
    (svd_of, lambda: R.normal(size=(3, 3))),
    (svd_of, lambda: R.normal(size=(4, 3))),
    (svdvals_of, lambda: R.normal(size=(3, 4))),
    (qr_of, lambda: _square(3)),
    (qr_of, lambda: R.normal(size=(4, 3))),
    (lstsq_of, lambda: R.normal(size=(5, 3))),
    (cumulative_product, lambda: R.normal(size=5)),
    (cumulative_product, lambda: R.normal(size=(3, 2))),
    (written, lambda: R.normal(size=4)),
    (inverted_mask, lambda: np.array([0.2, 0.9, -1.0, 1.7, -2.5])),
    (joined_and_split, lambda: R.normal(size=3)),
    (joined_and_split, lambda: R.normal(size=(2, 2))),
    (spread, lambda: R.normal(size=4)),
    (crossed, lambda: R.normal(size=3)),
    (crossed, lambda: R.normal(size=(2, 3))),
]
IDS = [f"{f.__name__}-{i}" for i, (f, _) in enumerate(CASES)]




@pytest.mark.parametrize("f, make", CASES, ids=IDS)
def test_hessian_through_gradient_helpers(f, make):
    x = make()
    assert_hessian_and_hvp_match(f, x, R)


FIRST = {f: (f, make) for f, make in reversed(CASES)}     # one shape per specimen


@pytest.mark.parametrize("f, make", list(FIRST.values()), ids=[f.__name__ for f in FIRST])
def test_grad_of_grad_through_gradient_helpers(f, make):
    check_grads(f, (make(),), order=2, modes=("rev",))


# qr_grad's argument handling (mode='r', an adjoint not given, R's rows beyond k, a wide
# matrix split as [X | Y]) at orders 1 and 2, on every kind of shape

def qr_modes_of(a):
    q, r = np.linalg.qr(a)
    return np.sum(r ** 3) + np.sum(q ** 4) + np.sum(np.linalg.qr(a, mode="r") ** 2)


def qr_r_of(a):
    q, r = np.linalg.qr(a)
    return np.sum(np.sin(r))                       # Q's adjoint is not given


def qr_q_of(a):
    return np.sum(np.linalg.qr(a)[0] ** 3)         # R's adjoint is not given


def qr_complete_of(a):
    q, r = np.linalg.qr(a, mode="complete")        # of a tall a: R's rows beyond k are 0
    return np.sum(q[..., :2] ** 3) + np.sum(np.sin(r))


@pytest.mark.parametrize("f", [qr_modes_of, qr_r_of, qr_q_of, qr_complete_of])
@pytest.mark.parametrize("shape", [(3, 3), (5, 3), (3, 5), (2, 4, 3), (2, 3, 4)])
def test_qr_gradient_at_orders_1_and_2(f, shape):
    a = R.normal(size=shape)
    check_grads(f, (a,), order=2, modes=("rev",))
    if len(shape) > 2:
        return
    if f is qr_complete_of and shape[0] > shape[1]:      # complete Q of a tall a: no tangent
        with pytest.raises(SGCompilerError, match="no tangent for mode='complete'"):
            assert_hessian_and_hvp_match(f, a, R)
    else:
        assert_hessian_and_hvp_match(f, a, R)


# svd_grad's argument handling (the first k columns of U and rows of Vt, an adjoint not
# given) at orders 1 and 2; the losses do not depend on the signs of the singular vectors

def svd_vectors_of(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.sum(s ** 3) + np.sum(u ** 4) + np.sum(vt[..., :2, :] ** 4)


def svd_u_of(a):
    u, s, vt = np.linalg.svd(a)                    # full U and Vt: their first k are read
    return np.sum(u[..., :2] ** 4)                 # s's and Vt's adjoints are not given


def svd_vt_of(a):
    return np.sum(np.linalg.svd(a)[2][..., :2, :] ** 4)


@pytest.mark.parametrize("f", [svd_vectors_of, svd_u_of, svd_vt_of])
@pytest.mark.parametrize("shape", [(3, 3), (5, 3), (3, 5), (2, 4, 3)])
def test_svd_gradient_at_orders_1_and_2(f, shape):
    a = R.normal(size=shape)
    check_grads(f, (a,), order=2, modes=("rev",))
    if len(shape) == 2:
        assert_hessian_and_hvp_match(f, a, R)

