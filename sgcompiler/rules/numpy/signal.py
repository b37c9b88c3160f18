"""Derivative rules of NumPy's filters: np.convolve, np.correlate, np.gradient, and the
FFT shifts (np.fft.fftshift, ifftshift, which roll the array). See registry.py.

All are linear in their array arguments (convolve and correlate in each of the two), so
their tangents are the functions of the tangents. Helpers: runtime/numpy/signal.py.
"""
import numpy as np

from ...runtime.numpy.signal import (convolve_grad_a, convolve_grad_v, correlate_grad_a,
                              correlate_grad_v, gradient_adjoint, gradient_grad)
from ..registry import linear, multilinear, through_source, vjp


@vjp(np.convolve, notes="1-D real input; every mode")
def convolve(g, ans, a, v, mode="full"):
    return convolve_grad_a(g, a, v, mode), convolve_grad_v(g, a, v, mode)


@vjp(np.correlate, notes="1-D real input; every mode")
def correlate(g, ans, a, v, mode="valid"):
    return correlate_grad_a(g, a, v, mode), correlate_grad_v(g, a, v, mode)


@vjp(np.gradient, notes="f, not the spacings (numbers or coordinates, at most four); "
                        "every axis and edge_order; several axes give a tuple")
def gradient(g, ans, f, h0=None, h1=None, h2=None, h3=None, *, axis=None, edge_order=1):
    return gradient_grad(g, ans, f, (h0, h1, h2, h3), axis, edge_order)


# np.gradient's gradient applies the transposed stencil to g_ (f gives only its shape), and
# np.gradient itself is its transpose: the two are each other's adjoints (second and third
# order). The spacings get no derivative (None: refused where one is differentiated).
@vjp(gradient_grad, name="gradient_grad")
def gradient_grad_(g, ans, g_, ans_, f, spacing=(), axis=None, edge_order=1):
    return (gradient_adjoint(g, g_, ans_, f, spacing, axis, edge_order), 0.0, 0.0, None,
            0.0, 0.0)


@vjp(gradient_adjoint, name="gradient_adjoint")
def gradient_adjoint_(g, ans, g_, like, ans_, f, spacing=(), axis=None, edge_order=1):
    return gradient_grad(g, ans_, f, spacing, axis, edge_order), 0.0, 0.0, 0.0, None, 0.0, \
        0.0


@vjp(np.fft.fftshift)
def fftshift(g, ans, x, axes=None):
    return np.fft.ifftshift(g, axes=axes)


@vjp(np.fft.ifftshift)
def ifftshift(g, ans, x, axes=None):
    return np.fft.fftshift(g, axes=axes)


# --- tangents (forward mode) ---------------------------------------------------------------

multilinear(np.convolve, np.correlate)
linear(np.gradient, np.fft.fftshift, np.fft.ifftshift, gradient_grad, gradient_adjoint)

# second order: the gradient helpers are read through their own source (rules/runtime.py)
# (np.gradient's is not: it adds into an array in place, np.add.at)
through_source(convolve_grad_a, convolve_grad_v, correlate_grad_a, correlate_grad_v)
