"""Fitting a signal's spectrum (samples/spectrum_fit.py at benchmark size): complex Fourier
coefficients, np.fft.irfft to the signal, np.fft.rfft of the residual, a weighted power.
16384 samples, 512 complex coefficients; the gradient is with respect to the complex
coefficients (df/dx - i df/dy, the README's convention)."""
import numpy as np

from . import Workload


def spectrum_loss(c, signal, weights):
    model = np.fft.irfft(c, n=signal.shape[-1], norm="ortho")
    residual = np.fft.rfft(model - signal, norm="ortho")
    return np.sum(weights * np.abs(residual) ** 2) + 1e-3 * np.sum(np.abs(c) ** 2)


def spectrum_hand(c, signal, weights):
    n = signal.shape[-1]
    model = np.fft.irfft(c, n=n, norm="ortho")
    model -= signal
    residual = np.fft.rfft(model, norm="ortho")
    # the conjugate of residual's adjoint, its bins that stand for two halved: irfft then
    # computes the real part of the fft of the full (zero-padded) adjoint
    h = residual
    h *= 2.0 * weights
    h[1:(n + 1) // 2] *= 0.5
    dmodel = np.fft.irfft(h, n=n, norm="ortho")
    dc = np.conj(np.fft.rfft(dmodel, norm="ortho")[:c.shape[-1]])
    dc[1:(n + 1) // 2] *= 2.0
    dc += 2e-3 * np.conj(c)
    return dc


def make(sizes, rng):
    n, terms = sizes["n"], sizes["terms"]
    c = rng.normal(size=terms) + 1j * rng.normal(size=terms)
    t = np.arange(n) / n
    signal = np.sin(2 * np.pi * 3 * t) + 0.2 * rng.normal(size=n)
    weights = rng.uniform(0.5, 1.5, size=n // 2 + 1)
    return c, signal, weights


WORKLOAD = Workload(
    name="spectrum", title="spectrum fit through np.fft.irfft/rfft, complex coefficients "
                           "(16384 samples, 512 terms)",
    fn=spectrum_loss, wrt=("c",), hand=spectrum_hand, make=make,
    sizes={"full": {"n": 16384, "terms": 512}, "smoke": {"n": 16, "terms": 5}})
