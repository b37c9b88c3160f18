"""Fourth order (the gradient of the sum of a third derivative) through the helpers of the
third derivatives of np.interp and scipy.linalg.expm, against central differences of the
third derivative, and of np.einsum, whose derivatives call np.einsum and einsum_grad with
an operand replaced (tests/test_einsum_every_order.py has more)."""
import numpy as np
import pytest

from sgcompiler import grad

XP = np.linspace(0.0, 1.0, 5)


def interpolated(x):
    return np.sum(np.interp(x, XP, np.sin(XP * x[0] * 3.0)) ** 2)


def contracted(a):
    return np.sum(np.einsum("ij,jk->ik", a, a) ** 2)


def _summed(g):
    def summed(x):
        return np.sum(g(x))
    return summed


def _third(f):
    return grad(_summed(grad(_summed(grad(f)))))


def _check_fourth(f, x, seed):
    third = _third(f)
    fourth = grad(_summed(third))
    v = np.random.default_rng(seed).normal(size=np.shape(x))
    eps = 1e-5
    fd = (np.sum(third(x + eps * v)) - np.sum(third(x - eps * v))) / (2 * eps)
    np.testing.assert_allclose(np.sum(fourth(x) * v), fd, rtol=1e-6, atol=1e-8)


def test_fourth_order_through_interp():
    _check_fourth(interpolated, np.array([0.3, 0.6]), 0)


def test_fourth_order_through_expm():
    scipy_linalg = pytest.importorskip("scipy.linalg")

    def exponential(a):
        return np.sum(scipy_linalg.expm(a) ** 2)
    _check_fourth(exponential, np.array([[0.1, 0.2], [0.3, -0.1]]), 1)


def test_fourth_order_through_einsum():
    _check_fourth(contracted, np.array([[0.1, 0.2], [0.3, -0.1]]), 2)
