"""Derivative rules of the discrete Fourier transforms (np.fft); their helpers are in
runtime/fft.py. Every transform is linear, so its tangent is the transform of the
tangent; complex values flow through them in the convention of rules/complex_numbers.py.
"""
from __future__ import annotations

import numpy as np

from ..runtime.fft import fft_grad, fftn_grad, irfft_grad, rfft_grad
from .registry import complex_safe, linear, vjp

_OUT = {"out": (None,)}


@vjp(np.fft.fft, supported=_OUT)
def fft(g, ans, a, n=None, axis=-1, norm=None, out=None):
    return fft_grad(g, a, axis, norm, np.fft.fft)


@vjp(np.fft.ifft, supported=_OUT)
def ifft(g, ans, a, n=None, axis=-1, norm=None, out=None):
    return fft_grad(g, a, axis, norm, np.fft.ifft)


@vjp(np.fft.rfft, supported=_OUT, notes="real input")
def rfft(g, ans, a, n=None, axis=-1, norm=None, out=None):
    return rfft_grad(g, a, n, axis, norm)


@vjp(np.fft.irfft, supported=_OUT,
     notes="the imaginary parts of the first (and, for even n, the middle) bin are ignored")
def irfft(g, ans, a, n=None, axis=-1, norm=None, out=None):
    return irfft_grad(g, a, n, axis, norm)


@vjp(np.fft.fft2, supported=_OUT)
def fft2(g, ans, a, s=None, axes=(-2, -1), norm=None, out=None):
    return fftn_grad(g, a, s, axes, norm, np.fft.fftn)


@vjp(np.fft.ifft2, supported=_OUT)
def ifft2(g, ans, a, s=None, axes=(-2, -1), norm=None, out=None):
    return fftn_grad(g, a, s, axes, norm, np.fft.ifftn)


@vjp(np.fft.fftn, supported=_OUT)
def fftn(g, ans, a, s=None, axes=None, norm=None, out=None):
    return fftn_grad(g, a, s, axes, norm, np.fft.fftn)


@vjp(np.fft.ifftn, supported=_OUT)
def ifftn(g, ans, a, s=None, axes=None, norm=None, out=None):
    return fftn_grad(g, a, s, axes, norm, np.fft.ifftn)


TRANSFORMS = (np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.irfft, np.fft.fft2, np.fft.ifft2,
              np.fft.fftn, np.fft.ifftn)
linear(*TRANSFORMS)
complex_safe(*TRANSFORMS, np.fft.fftshift, np.fft.ifftshift)
