"""Helpers of code compiled in complex mode (rules/complex_numbers.py, rules/registry.py).

Adjoints follow JAX's convention: the adjoint g of a value w pairs with a change dw as
Re(g * dw). A real value's adjoint is therefore the real part of what flows to it
(`real_like`), and a rule written for real operands refuses complex ones (`real_only`)
rather than give a wrong gradient.
"""
from __future__ import annotations

import numpy as np

from .shapes import cast_grad


def real_like(g, x):
    """The adjoint `g` of `x` in x's kind: real when `x` is real (its imaginary part pairs
    with no change of a real value), complex when `x` is complex (so that later
    contributions can be added to it in place)."""
    if np.iscomplexobj(x):
        return g if np.iscomplexobj(g) else np.asarray(g, dtype=np.result_type(g, x))
    return np.real(g) if np.iscomplexobj(g) else g


def real_only(g, name, *operands):
    """`g`, from a rule written for real operands: refused when one of them is complex."""
    for x in operands:
        if np.iscomplexobj(x):
            raise TypeError(f"{name} has no derivative rule for complex values; "
                            "differentiate it on real values (np.real, np.imag or np.abs "
                            "of the complex ones), or register a rule with "
                            "sgcompiler.adjoint")
    return g


def complex_sign(x):
    """x / |x| (0 where x == 0), for real and complex x alike."""
    magnitude = np.abs(x)
    return np.where(magnitude == 0, 0.0, x / np.where(magnitude == 0, 1.0, magnitude))


def complex_cast_grad(g, x, dtype):
    """Gradient of x.astype(dtype) in complex mode: `g` for a cast to a complex type (the
    real part of it, for a real x, is taken by `real_like`), else as `cast_grad`."""
    if np.dtype(dtype).kind == "c":
        return g
    return cast_grad(g, x, dtype)


def angle_scale(deg):
    """d angle / d radians: 1, or 180 / pi for np.angle(z, deg=True)."""
    return 180.0 / np.pi if deg else 1.0
