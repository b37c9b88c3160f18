"""Second derivatives of code that computes with complex values: grad of grad, hessian and
hvp read a complex function's generated gradient again (rules/complex_helpers.py has the
rules of the helpers it calls). Each is compared with finite differences of the first
derivative, which test_complex.py checks against finite differences of the function."""
import numpy as np
import pytest

from gradcheck import assert_grad_matches
from sgcompiler import grad, hessian, hvp

R = np.random.default_rng(1617)
pytestmark = pytest.mark.filterwarnings("error::numpy.exceptions.ComplexWarning")


def cn(*shape):
    return R.normal(size=shape) + 1j * R.normal(size=shape)


def unit_circle(x):
    return np.sum(np.abs(np.exp(1j * x) + x) ** 2)


def weighted_power(x):
    spectrum = np.fft.rfft(x, norm="ortho")
    return np.sum(np.abs(spectrum) ** 3 * (1.0 + np.arange(spectrum.shape[-1])))


def spectrum_loss(c, signal):
    model = np.fft.irfft(c, n=signal.shape[-1], norm="ortho")
    residual = np.fft.rfft(model - signal, norm="ortho")
    return np.sum(np.abs(residual) ** 2 * np.cos(model[..., :residual.shape[-1]])) + \
        1e-3 * np.sum(np.abs(c) ** 2)


def planes(x):
    out = np.fft.fft2(x * (1.0 + 0.5j), s=(4, 3))
    return np.sum(np.real(out) ** 2 * np.imag(out)) + \
        np.sum(np.abs(np.fft.ifftn(out, axes=(0,))) ** 3)


def hermitian(z):
    signal = np.fft.hfft(z, n=7)
    return np.sum(np.abs(np.fft.ihfft(signal * signal)) ** 2) + \
        np.sum(np.fft.irfftn(z * z, s=(3, 4), axes=(0, 1)) ** 3)


def phases(z):
    return np.sum(np.abs(z * z + 1.0) ** 3 + np.real(np.sign(z)) * np.abs(z))


def real_image(x):
    return np.sum(np.abs(np.fft.rfft2(x ** 2)) ** 2)


def numeric_jacobian_of(g, x, eps=1e-6):
    """Columns of central differences of the (real) gradient function g at real x."""
    columns = []
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = eps
        e = e.reshape(x.shape)
        columns.append(np.ravel(g(x + e) - g(x - e)) / (2 * eps))
    return np.stack(columns, axis=-1).reshape(x.shape + x.shape)


@pytest.mark.parametrize("f, make", [
    (unit_circle, lambda: R.normal(size=3)),
    (weighted_power, lambda: R.normal(size=6)),
    (planes, lambda: R.normal(size=(2, 3))),
    (real_image, lambda: R.normal(size=(3, 4))),
], ids=["exp-abs", "rfft", "fft2-ifftn", "rfft2"])
def test_hessian_and_hvp_of_complex_code(f, make):
    x = make()
    expected = numeric_jacobian_of(grad(f), x)
    np.testing.assert_allclose(hessian(f)(x), expected, rtol=1e-5, atol=1e-6)
    v = make()
    np.testing.assert_allclose(hvp(f, x, v),
                               np.tensordot(expected, v, axes=v.ndim), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f, make", [
    (unit_circle, lambda: R.normal(size=3)),
    (lambda c: spectrum_loss(c, np.linspace(-1.0, 1.0, 8)), lambda: cn(4)),
    (lambda c: spectrum_loss(c, np.linspace(-1.0, 1.0, 9)), lambda: cn(2, 5)),
    (planes, lambda: R.normal(size=(2, 3))),
    (hermitian, lambda: cn(3, 4)),
    (phases, lambda: cn(2, 3)),
], ids=["exp-abs", "irfft-rfft", "irfft-rfft-odd", "fft2-ifftn", "hfft-ihfft-irfftn",
        "abs-sign"])
def test_grad_of_grad_of_complex_code(f, make):
    g = grad(f)
    # a real function of the (possibly complex) gradient, differentiated again
    assert_grad_matches(lambda a: np.sum(np.abs(g(a)) ** 2), [make()])
    assert_grad_matches(lambda a: np.sum(np.real(g(a)) * np.imag(g(a) * 1j + a)), [make()])
