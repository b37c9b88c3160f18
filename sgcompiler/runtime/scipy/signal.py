"""Helpers that generated gradient code calls for scipy.signal functions
(rules/scipy_signal.py).

Every mode of a convolution is a centred slice of the full one, so the adjoint puts g back
into a full-sized array of zeros and correlates it with the other operand (the full
convolution's adjoint). Imported only when the SciPy rules are loaded.
"""
from __future__ import annotations

import numpy as np
import scipy.signal


def _full(g, in1, in2):
    """g (the adjoint of a 'full', 'same' or 'valid' result) inside the full result's shape,
    where SciPy took the result from (the centred slice, scipy.signal's _centered)."""
    full = tuple(a + b - 1 for a, b in zip(np.shape(in1), np.shape(in2)))
    out = np.zeros(full, dtype=np.result_type(g, in1, in2, 0.0))
    start = [(f - s) // 2 for f, s in zip(full, np.shape(g))]
    out[tuple(slice(b, b + s) for b, s in zip(start, np.shape(g)))] = g
    return out


def convolve_grad(g, this, other, mode="full"):
    """Gradient of scipy.signal.convolve(in1, in2, mode) for the operand `this`."""
    return scipy.signal.correlate(_full(g, this, other), other, mode="valid")


def correlate_grad_in1(g, in1, in2, mode="full"):
    """Gradient of scipy.signal.correlate(in1, in2, mode) = convolve(in1, flipped in2)."""
    return scipy.signal.correlate(_full(g, in1, in2), np.flip(in2), mode="valid")


def correlate_grad_in2(g, in1, in2, mode="full"):
    """Gradient of scipy.signal.correlate(in1, in2, mode) with respect to in2."""
    return np.flip(scipy.signal.correlate(_full(g, in1, in2), in1, mode="valid"))
