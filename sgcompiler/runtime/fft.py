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


# The scaling of a transform's adjoint is that of the inverse transform with the other norm
_SWAPPED = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _doubled(length, ndim, axis):
    """2 for the bins of a half spectrum of `length` points that stand for two (all but the
    first and, for even lengths, the middle one), 1 for the others, along `axis`."""
    twice = np.full(length // 2 + 1, 2.0)
    twice[0] = 1.0
    if length % 2 == 0:
        twice[-1] = 1.0
    return np.reshape(twice, (-1,) + (1,) * (ndim - axis - 1))


def rfft_grad(g, a, n, axis, norm):
    """Adjoint of np.fft.rfft(a, n, axis, norm), a real input's half spectrum: the real
    part of the fft of g padded with zeros to the full spectrum, which irfft computes
    from half of it (its bins but the first and the middle one count twice)."""
    axis = int(axis) % np.ndim(a)
    length = np.shape(a)[axis] if n is None else n
    half = np.conj(g) / _doubled(length, np.ndim(g), axis)
    full = np.fft.irfft(half, n=length, axis=axis, norm=_SWAPPED[norm])
    return fit_along(full, np.shape(a), (axis,))


def irfft_grad(g, a, n, axis, norm):
    """Adjoint of np.fft.irfft(a, n, axis, norm), the real signal of a half spectrum: the
    first half of ifft(g) (the conjugate of rfft(g)), its doubled bins doubled."""
    axis = int(axis) % np.ndim(a)
    length = 2 * (np.shape(a)[axis] - 1) if n is None else n
    half = np.conj(np.fft.rfft(g, n=length, axis=axis, norm=_SWAPPED[norm]))
    return fit_along(half * _doubled(length, np.ndim(half), axis), np.shape(a), (axis,))
