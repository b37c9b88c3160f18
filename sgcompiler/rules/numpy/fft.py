"""Derivative rules of the discrete Fourier transforms (np.fft); their helpers are in
runtime/numpy/fft.py. Every transform is linear, so its tangent is the transform of the
tangent; complex values flow through them in the convention of rules/complex_numbers.py.
"""
from __future__ import annotations

import numpy as np

from ...runtime.numpy.fft import (fft_grad, fftn_grad, hfft_grad, ihfft_grad, irfft_grad, irfftn_grad,
                           rfft_grad, rfftn_grad)
from ..registry import complex_safe, linear, vjp

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


_HALF = ("the imaginary parts of the bins read as real (the first and, for an even length, the "
         "middle one) are ignored")


@vjp(np.fft.rfft2, supported=_OUT, notes="real input")
def rfft2(g, ans, a, s=None, axes=(-2, -1), norm=None, out=None):
    return rfftn_grad(g, a, s, axes, norm)


@vjp(np.fft.rfftn, supported=_OUT, notes="real input")
def rfftn(g, ans, a, s=None, axes=None, norm=None, out=None):
    return rfftn_grad(g, a, s, axes, norm)


@vjp(np.fft.irfft2, supported=_OUT, notes=_HALF + ", along the last axis")
def irfft2(g, ans, a, s=None, axes=(-2, -1), norm=None, out=None):
    return irfftn_grad(g, a, s, axes, norm)


@vjp(np.fft.irfftn, supported=_OUT, notes=_HALF + ", along the last axis")
def irfftn(g, ans, a, s=None, axes=None, norm=None, out=None):
    return irfftn_grad(g, a, s, axes, norm)


@vjp(np.fft.hfft, supported=_OUT, notes=_HALF)
def hfft(g, ans, a, n=None, axis=-1, norm=None, out=None):
    return hfft_grad(g, a, n, axis, norm)


@vjp(np.fft.ihfft, supported=_OUT, notes="real input")
def ihfft(g, ans, a, n=None, axis=-1, norm=None, out=None):
    return ihfft_grad(g, a, n, axis, norm)


TRANSFORMS = (np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.irfft, np.fft.fft2, np.fft.ifft2,
              np.fft.fftn, np.fft.ifftn, np.fft.rfft2, np.fft.irfft2, np.fft.rfftn,
              np.fft.irfftn, np.fft.hfft, np.fft.ihfft)
linear(*TRANSFORMS)
complex_safe(*TRANSFORMS, np.fft.fftshift, np.fft.ifftshift)
