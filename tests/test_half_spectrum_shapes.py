"""The shapes pass follows np.fft.rfft and np.fft.irfft (analysis/sizes.py), so the code
after them is specialised, and a complex value's adjoint that is complex for certain is
not wrapped in real_like (reverse/adjoints.complex_guard): each against finite
differences in the real and imaginary directions, with n given, padded and truncated, on
another axis, and in float32."""
import numpy as np
import pytest

from sgcompiler import grad
from gradcheck import assert_grad_matches

rng = np.random.default_rng(1916)


def fit(c, signal, weights):
    model = np.fft.irfft(c, n=signal.shape[-1], norm="ortho")
    residual = np.fft.rfft(model - signal, norm="ortho")
    return np.sum(weights * np.abs(residual) ** 2) + 1e-3 * np.sum(np.abs(c) ** 2)


def padded(x, w):
    return np.sum(np.abs(np.fft.rfft(x * w, n=9)) ** 2 * np.arange(5.0))


def truncated(x, w):
    return np.sum(np.real(np.fft.rfft(x, n=4)) * w)


def default_length(c, w):
    return np.sum(np.fft.irfft(c) * w)


def other_axis(x, w):
    spectrum = np.fft.rfft(x, axis=0)
    return np.sum(np.abs(spectrum) ** 2 * w[:, None])


def _complex(*shape):
    return rng.normal(size=shape) + 1j * rng.normal(size=shape)


@pytest.mark.parametrize("n, terms", [(16, 5), (15, 8), (8, 5)])
def test_the_spectrum_fit_is_specialised_and_right(n, terms):
    c, signal = _complex(terms), rng.normal(size=n)
    weights = rng.uniform(0.5, 1.5, size=n // 2 + 1)
    assert_grad_matches(fit, [c, signal, weights], wrt=[0, 2])
    g = grad(fit)
    g(c, signal, weights)
    header = " ".join(line.lstrip("# ") for line in g.source.splitlines()
                      if line.startswith("#"))
    assert "every active value's shape is known" in header
    backward = g.source.split("# backward")[1]
    assert "unbroadcast" not in backward
    # c and residual are complex128 for certain, and so are 0.002 * np.conj(c) and
    # 2.0 * weights * np.conj(residual): no real_like around them
    assert "dc = 0.002 * np.conj(c)" in backward
    assert "real_like(2.0" not in backward


@pytest.mark.parametrize("f, make", [
    (padded, lambda: (rng.normal(size=7), rng.normal(size=7))),
    (padded, lambda: (rng.normal(size=(2, 7)), rng.normal(size=7))),
    (truncated, lambda: (rng.normal(size=6), rng.normal(size=3))),
    (default_length, lambda: (_complex(5), rng.normal(size=8))),
    (default_length, lambda: (_complex(3, 4), rng.normal(size=6))),
    (other_axis, lambda: (rng.normal(size=(6, 3)), rng.normal(size=4))),
], ids=["padded", "padded-rows", "truncated", "irfft", "irfft-rows", "axis0"])
def test_half_spectra_of_known_shapes_against_differences(f, make):
    args = list(make())
    assert_grad_matches(f, args, wrt=[0, 1])


def test_float32_keeps_its_dtype():
    x, w = rng.normal(size=8).astype(np.float32), rng.normal(size=8).astype(np.float32)
    g = grad(padded)(x, w)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, grad(padded)(x.astype(float), w.astype(float)),
                               rtol=1e-4, atol=1e-4)
