"""Helpers of the FFT rules (rules/numpy/fft.py).

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


def fft_grad(g, a, axis, norm, transform=None):
    """Adjoint of transform(a, n, axis, norm) for transform np.fft.fft (None) or
    np.fft.ifft."""
    transform = np.fft.fft if transform is None else transform
    return fit_along(transform(g, axis=axis, norm=norm), np.shape(a),
                     (int(axis) % np.ndim(a),))


def fftn_grad(g, a, s, axes, norm, transform=None):
    """Adjoint of transform(a, s, axes, norm) for np.fft.fftn (None) or np.fft.ifftn (fft2
    and ifft2 are these over the last two axes)."""
    transform = np.fft.fftn if transform is None else transform
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
    """Adjoint of np.fft.rfft(a, n, axis, norm), a real input's half spectrum."""
    return _rfft_adjoint(g, np.shape(a), n, int(axis) % np.ndim(a), norm)


def irfft_grad(g, a, n, axis, norm):
    """Adjoint of np.fft.irfft(a, n, axis, norm), the real signal of a half spectrum."""
    return _irfft_adjoint(g, np.shape(a), n, int(axis) % np.ndim(a), norm)


def _rfft_adjoint(g, shape, n, axis, norm):
    """The real part of the fft of g padded with zeros to the full spectrum, which irfft
    computes from half of it (its bins but the first and the middle one count twice), cut
    or padded back to `shape` (the input's) along `axis`."""
    length = shape[axis] if n is None else n
    half = np.conj(g) * (1.0 / _doubled(length, np.ndim(g), axis))   # (a product: faster)
    full = np.fft.irfft(half, n=length, axis=axis, norm=_SWAPPED[norm])
    return fit_along(full, shape, (axis,))


def _irfft_adjoint(g, shape, n, axis, norm):
    """The first half of ifft(g) (the conjugate of rfft(g)), its doubled bins doubled, cut
    or padded back to `shape` (the input's) along `axis`."""
    length = 2 * (shape[axis] - 1) if n is None else n
    half = np.conj(np.fft.rfft(g, n=length, axis=axis, norm=_SWAPPED[norm]))
    return fit_along(half * _doubled(length, np.ndim(half), axis), shape, (axis,))


def hfft_grad(g, a, n, axis, norm):
    """Adjoint of np.fft.hfft(a, n, axis, norm), which is irfft(conj(a), n, axis) with the
    other norm: the conjugate of irfft's adjoint."""
    return np.conj(irfft_grad(g, a, n, axis, _SWAPPED[norm]))


def ihfft_grad(g, a, n, axis, norm):
    """Adjoint of np.fft.ihfft(a, n, axis, norm), which is conj(rfft(a, n, axis)) with the
    other norm: rfft's adjoint of the conjugate of g."""
    return rfft_grad(np.conj(g), a, n, axis, _SWAPPED[norm])


def _nd_steps(shape, s, axes, inverse_real):
    """The 1-D transforms (axis, n) that rfftn (inverse_real False) or irfftn applies to
    an input of `shape`, with the last of `axes` the real one, as NumPy picks them."""
    ndim = len(shape)
    if axes is None:
        axes = range(ndim) if s is None else range(ndim - len(s), ndim)
    axes = [int(axis) % ndim for axis in axes]
    s = [None] * len(axes) if s is None else [None if n is None else int(n) for n in s]
    lengths = [shape[axis] if n in (None, -1) else n for n, axis in zip(s, axes)]
    if inverse_real and s[-1] in (None, -1):
        lengths[-1] = 2 * (shape[axes[-1]] - 1)
    return list(zip(axes, lengths))


def _after(shape, axis, length):
    """`shape` with `length` along `axis`."""
    return shape[:axis] + (length,) + shape[axis + 1:]


def rfftn_grad(g, a, s, axes, norm):
    """Adjoint of np.fft.rfftn(a, s, axes, norm) (rfft2 is it over the last two axes): rfft
    along the last axis, then fft along the others from the last to the first, undone in
    the opposite order, each step cut or padded back to the length it was given."""
    steps = _nd_steps(np.shape(a), s, axes, False)
    shapes = [tuple(np.shape(a))]
    axis, length = steps[-1]
    shapes.append(_after(shapes[-1], axis, length // 2 + 1))
    for axis, length in reversed(steps[:-1]):
        shapes.append(_after(shapes[-1], axis, length))
    for (axis, length), shape in zip(steps[:-1], reversed(shapes[1:-1])):
        g = fit_along(np.fft.fft(g, axis=axis, norm=norm), shape, (axis,))
    axis, length = steps[-1]
    return _rfft_adjoint(g, shapes[0], length, axis, norm)


def irfftn_grad(g, a, s, axes, norm):
    """Adjoint of np.fft.irfftn(a, s, axes, norm) (irfft2 is it over the last two axes):
    ifft along every axis but the last, first to last, then irfft along the last."""
    steps = _nd_steps(np.shape(a), s, axes, True)
    shapes = [tuple(np.shape(a))]
    for axis, length in steps[:-1]:
        shapes.append(_after(shapes[-1], axis, length))
    axis, length = steps[-1]
    g = _irfft_adjoint(g, shapes[-1], length, axis, norm)
    for (axis, length), shape in zip(reversed(steps[:-1]), reversed(shapes[:-1])):
        g = fit_along(np.fft.ifft(g, axis=axis, norm=norm), shape, (axis,))
    return g


def fft_again(g, like, axis, norm, transform):
    """transform(g) to the length `like` has along `axis`: the transpose of
    fft_grad(like, a, axis, norm, transform), which grad of grad needs."""
    transform = np.fft.fft if transform is None else transform
    return transform(g, n=np.shape(like)[axis], axis=axis, norm=norm)


def fftn_again(g, s, axes, norm, transform):
    """transform(g, s, axes, norm): the transpose of fftn_grad(g_, a, s, axes, norm,
    transform)."""
    transform = np.fft.fftn if transform is None else transform
    return transform(g, s, axes, norm)
