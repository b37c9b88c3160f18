"""Derivative rules of scipy.signal functions. See registry.py.

Loaded with the other SciPy rule modules (rules/scipy.py), so SciPy stays optional.
"""
import scipy.signal

from ...runtime.scipy.signal import (convolve_grad, correlate_grad_in1, correlate_grad_in2,
                                    full_pads, window)
from ..registry import multilinear, nondifferentiable, through_source, vjp

_MODES = "real inputs; every mode (full, same, valid) and method"


@vjp(scipy.signal.convolve, name="scipy.signal.convolve", notes=_MODES)
def convolve(g, ans, in1, in2, mode="full", method="auto"):
    return convolve_grad(g, in1, in2, mode), convolve_grad(g, in2, in1, mode)


@vjp(scipy.signal.correlate, name="scipy.signal.correlate", notes=_MODES)
def correlate(g, ans, in1, in2, mode="full", method="auto"):
    return correlate_grad_in1(g, in1, in2, mode), correlate_grad_in2(g, in1, in2, mode)

# bilinear: the tangent is convolve(in1_dot, in2) + convolve(in1, in2_dot), in the same mode
multilinear(scipy.signal.convolve, scipy.signal.correlate)

# second order: the gradient helpers pad g to the full result (np.pad) and correlate it
# with the other operand, read through their own source (rules/runtime.py)
nondifferentiable(window, full_pads)
through_source(convolve_grad, correlate_grad_in1, correlate_grad_in2)
