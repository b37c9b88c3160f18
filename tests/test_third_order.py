"""Third derivatives through the helpers that second-order code calls: np.interp's
(interp_linear_part, interp_grad_x's own pieces), np.einsum's (einsum_with,
einsum_grad_with: rules/third_order.py), scipy.linalg.expm's Frechet helpers and the
adjoint of sum() over a list (unbroadcast_sum). check_grads(order=3) compares the
third derivative with central differences of the second, in both modes; the hessian of
a gradient is compared with central differences of the (checked) hessian."""
import numpy as np
import pytest

from sgcompiler import check_grads, grad, hessian

R = np.random.default_rng(1409)
XP = np.linspace(-2.0, 2.0, 7)


def interpolated(x):
    return np.sum(np.interp(np.sin(x), XP, np.cos(XP) + x.ravel()[0] ** 2) ** 2)


def interpolated_inside(x):
    # the interpolation in a called function (a piece of its own at every order)
    return np.sum(_interpolate(x * 0.5) * x)


def _interpolate(z):
    return np.interp(z, XP, np.cos(XP) * z.ravel()[-1])


def contracted(x):
    return np.sum(np.einsum("ij,jk->ik", x, np.sin(x.T)) ** 2)


def contracted_three(x):
    return np.einsum("i,ij,j->", x[0], np.cos(x), x[-1] ** 2) ** 2


def summed_list(x):
    return np.sum(sum([np.sin(x), x.ravel()[0] * x, x ** 3]) ** 2)


CASES = [
    (interpolated, lambda: R.normal(size=3)),
    (interpolated, lambda: R.normal(size=(2, 2))),
    (interpolated_inside, lambda: R.normal(size=4)),
    (contracted, lambda: R.normal(size=(2, 3))),
    (contracted, lambda: R.normal(size=(3, 3))),
    (contracted_three, lambda: R.normal(size=(3, 3))),
    (summed_list, lambda: R.normal(size=3)),
    (summed_list, lambda: R.normal(size=(2, 3))),
]

scipy = pytest.importorskip("scipy", reason="scipy.linalg.expm's rules need SciPy")
import scipy.linalg  # noqa: E402


def exponential(a):
    return np.sum(scipy.linalg.expm(np.sin(a)) ** 2)


CASES += [(exponential, lambda: 0.5 * R.normal(size=(2, 2))),
          (exponential, lambda: 0.5 * R.normal(size=(3, 3)))]
IDS = [f"{f.__name__}-{i}" for i, (f, _) in enumerate(CASES)]


@pytest.mark.parametrize("f, make", CASES, ids=IDS)
def test_third_order_check_grads(f, make):
    check_grads(f, (make(),), order=3, modes=("rev", "fwd"))


@pytest.mark.parametrize("f, make", CASES, ids=IDS)
def test_hessian_of_a_gradient(f, make):
    x = make()
    v = R.normal(size=x.shape)
    g = grad(f)

    def along(x):
        return np.sum(g(x) * v)

    eps = 1e-5
    h = hessian(f)
    expected = (h(x + eps * v) - h(x - eps * v)) / (2 * eps)
    np.testing.assert_allclose(hessian(along)(x), expected, rtol=1e-5, atol=1e-5)
