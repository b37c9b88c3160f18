"""Helpers that generated gradient code calls for scipy.signal functions
(rules/scipy_signal.py).

Every mode of a convolution is a centred slice of the full one, so the adjoint puts g back
into a full-sized array of zeros and correlates it with the other operand (the full
convolution's adjoint). Imported only when the SciPy rules are loaded.
"""
from __future__ import annotations

import numpy as np
import scipy.signal

# every helper here runs on arrays of other array-API libraries too (NumPy's functions and
# scipy.signal's correlate, which runtime/spellings.SciPySignal spells)
STANDARD = frozenset({"window", "full_pads", "_full", "convolve_grad", "correlate_grad_in1",
                      "correlate_grad_in2"})


def window(g, in1, in2):
    """The shape of the result g is the adjoint of: g's own, or the full result's for a
    plain 0.0 (whose zeros fill any window)."""
    full = tuple(a + b - 1 for a, b in zip(np.shape(in1), np.shape(in2)))
    return np.shape(g) if np.ndim(g) else full


def full_pads(g, in1, in2):
    """The zeros around g's window inside the full result, where SciPy took the result
    from (the centred slice, scipy.signal's _centered), as np.pad's widths."""
    full = tuple(a + b - 1 for a, b in zip(np.shape(in1), np.shape(in2)))
    return [((f - s) // 2, f - s - (f - s) // 2) for f, s in zip(full, window(g, in1, in2))]


def _full(g, in1, in2):
    """g (the adjoint of a 'full', 'same' or 'valid' result) inside the full result's
    shape. (NumPy functions only: second order reads it through its source.)"""
    return np.pad(np.broadcast_to(g, window(g, in1, in2)), full_pads(g, in1, in2))


def convolve_grad(g, this, other, mode="full"):
    """Gradient of scipy.signal.convolve(in1, in2, mode) for the operand `this`."""
    return scipy.signal.correlate(_full(g, this, other), other, mode="valid")


def correlate_grad_in1(g, in1, in2, mode="full"):
    """Gradient of scipy.signal.correlate(in1, in2, mode) = convolve(in1, flipped in2)."""
    return scipy.signal.correlate(_full(g, in1, in2), np.flip(in2), mode="valid")


def correlate_grad_in2(g, in1, in2, mode="full"):
    """Gradient of scipy.signal.correlate(in1, in2, mode) with respect to in2."""
    return np.flip(scipy.signal.correlate(_full(g, in1, in2), in1, mode="valid"))
