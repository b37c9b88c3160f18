"""Real functions of complex values that reduce (np.linalg.norm for every ord, np.std,
np.var), sorting and np.maximum on complex values, through the compiler: gradients,
tangents and second derivatives against finite differences (the rules are rows of
rule_cases.py)."""
import numpy as np
import pytest

from gradcheck import assert_grad_matches
from sgcompiler import grad, hessian, jvp

R = np.random.default_rng(1618)
pytestmark = pytest.mark.filterwarnings("error::numpy.exceptions.ComplexWarning")


def cn(*shape):
    return R.normal(size=shape) + 1j * R.normal(size=shape)


def norms(z):
    return (np.linalg.norm(z) + np.linalg.norm(z, ord="nuc") + np.sum(np.linalg.norm(z, axis=0))
            + np.linalg.norm(z[0], ord=1) + np.linalg.norm(z[1], ord=3) +
            np.linalg.norm(z, ord=np.inf))


def spread(z):
    return np.std(z) * np.sum(np.var(z, axis=1, ddof=1)) + np.mean(np.std(z * z, axis=0))


def ordered(z):
    return np.sum(np.abs(np.sort(z * (1.0 + 2.0j), axis=1)) * np.arange(4)) + \
        np.sum(np.abs(np.maximum(z, z[0] * 0.5)) ** 2)


def of_real(x):
    z = np.exp(1j * x) * (1.0 + x)
    return np.linalg.norm(z) + np.std(z) ** 2 + np.var(z * x)


@pytest.mark.parametrize("f", [norms, spread, ordered])
def test_gradients_of_complex_reductions(f):
    assert_grad_matches(f, [cn(3, 4)])


@pytest.mark.parametrize("f", [norms, spread, ordered])
def test_tangents_of_complex_reductions(f):
    z, dz = cn(3, 4), cn(3, 4)
    eps = 1e-6
    value, tangent = jvp(f, (z,), (dz,))
    np.testing.assert_allclose(tangent, (f(z + eps * dz) - f(z - eps * dz)) / (2 * eps),
                               rtol=1e-5, atol=1e-7)


def test_second_order_through_complex_norms():
    x = R.normal(size=4)
    assert_grad_matches(of_real, [x])
    g = grad(of_real)
    eps = 1e-6
    expected = np.stack([(g(x + eps * e) - g(x - eps * e)) / (2 * eps) for e in np.eye(4)], -1)
    np.testing.assert_allclose(hessian(of_real)(x), expected, rtol=1e-5, atol=1e-6)
