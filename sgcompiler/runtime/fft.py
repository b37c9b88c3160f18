"""Helpers of the FFT rules (rules/fft.py).

The DFT matrix is symmetric, so (in the complex convention of runtime/complex_numbers.py, where an
adjoint pairs with a change as Re(g * dw)) the adjoint of `fft(a, norm=k)` is `fft(g,
norm=k)`, and the same holds for ifft. `n=` (or `s=`) pads or truncates the input first:
its adjoint truncates or pads back to the input's length. rfft keeps the first n // 2 + 1
outputs of the fft of a real input; irfft reads its input as the first half of a Hermitian
spectrum, in which every bin but the first (and the middle one, for even n) counts twice.
"""
from __future__ import annotations

import numpy as np


def fit_along(g, shape, axes):
    """`g` truncated or zero-padded at the end of each of `axes` to the length `shape`
    has there."""
    for axis in axes:
        have, want = g.shape[axis], shape[axis]
        if have > want:
            g = np.take(g, np.arange(want), axis=axis)
        elif have < want:
            widths = [(0, 0)] * g.ndim
            widths[axis] = (0, want - have)
            g = np.pad(g, widths)
    return g


def transform_axes(a, s, axes):
    """The axes fftn(a, s, axes) transforms, as NumPy picks them."""
    ndim = np.ndim(a)
    if axes is None:
        axes = range(ndim) if s is None else range(ndim - len(s), ndim)
    return tuple(int(axis) % ndim for axis in axes)


def fft_grad(g, a, axis, norm, transform=np.fft.fft):
    """Adjoint of transform(a, n, axis, norm) for transform np.fft.fft or np.fft.ifft."""
    return fit_along(transform(g, axis=axis, norm=norm), np.shape(a),
                     (int(axis) % np.ndim(a),))


def fftn_grad(g, a, s, axes, norm, transform=np.fft.fftn):
    """Adjoint of transform(a, s, axes, norm) for np.fft.fftn or np.fft.ifftn (fft2 and
    ifft2 are these over the last two axes)."""
    axes = transform_axes(a, s, axes)
    return fit_along(transform(g, axes=axes, norm=norm), np.shape(a), axes)


def rfft_grad(g, a, n, axis, norm):
    """Adjoint of np.fft.rfft(a, n, axis, norm), a real input's half spectrum."""
    axis = int(axis) % np.ndim(a)
    length = np.shape(a)[axis] if n is None else n
    shape = list(np.shape(g))
    shape[axis] = length
    full = np.fft.fft(fit_along(g, shape, (axis,)), axis=axis, norm=norm)
    return np.real(fit_along(full, np.shape(a), (axis,)))


def irfft_grad(g, a, n, axis, norm):
    """Adjoint of np.fft.irfft(a, n, axis, norm), the real signal of a half spectrum."""
    axis = int(axis) % np.ndim(a)
    length = 2 * (np.shape(a)[axis] - 1) if n is None else n
    half = np.fft.ifft(g, axis=axis, norm=norm)
    half = np.take(half, np.arange(length // 2 + 1), axis=axis)
    twice = np.full(length // 2 + 1, 2.0)
    twice[0] = 1.0
    if length % 2 == 0:
        twice[-1] = 1.0
    weights = np.reshape(twice, (-1,) + (1,) * (np.ndim(half) - axis - 1))
    return fit_along(half * weights, np.shape(a), (axis,))
