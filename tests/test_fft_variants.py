"""The real-input transforms of several axes (rfft2, irfft2, rfftn, irfftn) and the Hermitian
ones (hfft, ihfft), through the compiler: gradients and tangents of whole programs against
finite differences (real and imaginary directions separately), for every norm. The rules
themselves are rows of rule_cases.py."""
import numpy as np
import pytest

from gradcheck import assert_grad_matches
from sgcompiler import grad, jvp

R = np.random.default_rng(1616)
pytestmark = pytest.mark.filterwarnings("error::numpy.exceptions.ComplexWarning")
NORMS = [None, "backward", "ortho", "forward"]


def cn(*shape):
    return R.normal(size=shape) + 1j * R.normal(size=shape)


def image_filter(x, norm):
    spectrum = np.fft.rfft2(x, norm=norm) * (1.0 + np.arange(x.shape[-1] // 2 + 1))
    return np.sum(np.fft.irfft2(spectrum, s=x.shape[-2:], norm=norm) ** 2)


def volume_power(x, norm):
    spectrum = np.fft.rfftn(x, s=(4, 3), axes=(2, 0), norm=norm)
    return np.sum(np.abs(spectrum) ** 3) + np.sum(np.real(spectrum) * np.imag(spectrum))


def half_spectrum(z, norm):
    signal = np.fft.irfftn(z * z, s=(3, 7), axes=(0, 1), norm=norm)
    return np.sum(np.sin(signal)) + np.sum(np.fft.irfft2(z, norm=norm) ** 2)


def hermitian(z, norm):
    spectrum = np.fft.hfft(z, n=9, norm=norm)
    back = np.fft.ihfft(spectrum * spectrum, norm=norm)
    return np.sum(np.abs(back) ** 2) + np.sum(np.fft.hfft(z, axis=0, norm=norm) ** 3)


@pytest.mark.parametrize("norm", NORMS)
def test_real_input_transforms_of_several_axes(norm):
    assert_grad_matches(lambda x: image_filter(x, norm), [R.normal(size=(3, 5))])
    assert_grad_matches(lambda x: image_filter(x, norm), [R.normal(size=(2, 4, 6))])
    assert_grad_matches(lambda x: volume_power(x, norm), [R.normal(size=(3, 2, 5))])
    assert_grad_matches(lambda z: half_spectrum(z, norm), [cn(3, 4)])


@pytest.mark.parametrize("norm", NORMS)
def test_hermitian_transforms(norm):
    assert_grad_matches(lambda z: hermitian(z, norm), [cn(4, 5)])
    assert_grad_matches(lambda z: hermitian(z, norm), [cn(2, 3)])


@pytest.mark.parametrize("f, make", [
    (image_filter, lambda: R.normal(size=(3, 4))),
    (volume_power, lambda: R.normal(size=(2, 3, 4))),
    (half_spectrum, lambda: cn(3, 4)),
    (hermitian, lambda: cn(3, 4)),
], ids=["rfft2-irfft2", "rfftn", "irfftn", "hfft-ihfft"])
def test_tangents_of_the_new_transforms(f, make):
    arg = make()
    direction = make()
    eps = 1e-6
    for norm in ("ortho", None):
        value, tangent = jvp(lambda a: f(a, norm), (arg,), (direction,))
        numeric = (f(arg + eps * direction, norm) - f(arg - eps * direction, norm)) / (2 * eps)
        np.testing.assert_allclose(value, f(arg, norm))
        np.testing.assert_allclose(tangent, numeric, rtol=1e-5, atol=1e-7)


def spectrum_loss(c, signal, weights):
    model = np.fft.irfft(c, n=signal.shape[-1], norm="ortho")
    residual = np.fft.rfft(model - signal, norm="ortho")
    return np.sum(weights * np.abs(residual) ** 2) + 1e-3 * np.sum(np.abs(c) ** 2)


def test_a_real_values_real_adjoint_is_not_wrapped():
    # rfft_grad's result is real, and so is a real value's adjoint: real_like would change
    # nothing, so the code reads as written by hand (tests/golden/spectrum_loss.py too)
    signal, weights, c = R.normal(size=16), R.uniform(0.5, 1.5, size=9), cn(5)
    g = grad(spectrum_loss)
    assert_grad_matches(spectrum_loss, [c, signal, weights])
    g(c, signal, weights)
    assert "rfft_grad(" in g.source and "real_like(rfft_grad(" not in g.source
    assert "real_like(1.0" not in g.source
    assert "real_like(" in g.source     # c is complex: its adjoint's kind is kept
