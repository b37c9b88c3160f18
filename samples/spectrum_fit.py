"""Fitting a signal's spectrum: gradients through np.fft, with respect to complex numbers.

A noisy periodic signal is modelled by its first Fourier coefficients `c`, complex numbers.
The loss compares the spectrum of the model's residual, weighted per frequency, and keeps
the coefficients small. Its gradient with respect to a complex `c = x + iy` is
df/dx - i df/dy (the convention of JAX and autograd), so gradient descent steps along its
conjugate: `c -= rate * np.conj(g)`.

Run:  python samples/spectrum_fit.py
See the code:  sgcompiler samples/spectrum_fit.py:spectrum_loss
Explain it:  sgcompiler explain samples/spectrum_fit.py:spectrum_loss"""
import numpy as np

from sgcompiler import grad, value_and_grad


def spectrum_loss(c, signal, weights):
    model = np.fft.irfft(c, n=signal.shape[-1], norm="ortho")
    residual = np.fft.rfft(model - signal, norm="ortho")
    return np.sum(weights * np.abs(residual) ** 2) + 1e-3 * np.sum(np.abs(c) ** 2)


def noisy_signal(n=64, seed=0):
    """Two tones and noise, sampled n times over one period."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) / n
    clean = np.sin(2 * np.pi * 3 * t) + 0.5 * np.cos(2 * np.pi * 5 * t + 0.3)
    return clean + 0.2 * rng.normal(size=n), clean


def fit(signal, weights, terms=9, steps=200, rate=0.5):
    """Gradient descent on `terms` complex coefficients; returns them and the losses."""
    c = np.zeros(terms, dtype=complex)
    step = value_and_grad(spectrum_loss)
    losses = []
    for _ in range(steps):
        loss, g = step(c, signal, weights)
        losses.append(loss)
        c = c - rate * np.conj(g)
    return c, losses


def main():
    signal, clean = noisy_signal()
    weights = np.ones(signal.size // 2 + 1)
    c, losses = fit(signal, weights)
    model = np.fft.irfft(c, n=signal.size, norm="ortho")
    print(f"loss: {losses[0]:.3f} at the start, {losses[-1]:.3f} after {len(losses)} steps")
    print(f"distance to the clean signal: noisy {np.linalg.norm(signal - clean):.3f}, "
          f"fitted {np.linalg.norm(model - clean):.3f}")
    print("largest coefficients (frequency: magnitude):",
          ", ".join(f"{k}: {abs(v):.2f}" for k, v in enumerate(c) if abs(v) > 0.5))
    g = grad(spectrum_loss)(c, signal, weights)
    print(f"gradient at the fit: |g| = {np.linalg.norm(g):.1e} (a minimum)")


if __name__ == "__main__":
    main()
