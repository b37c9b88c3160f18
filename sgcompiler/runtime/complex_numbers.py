"""Helpers of code compiled in complex mode (rules/complex_numbers.py, rules/registry.py).

Adjoints follow JAX's convention: the adjoint g of a value w pairs with a change dw as
Re(g * dw). A real value's adjoint is therefore the real part of what flows to it
(`real_like`), and a rule written for real operands refuses complex ones (`real_only`)
rather than give a wrong gradient.
"""
from __future__ import annotations

import numpy as np

from .numpy.decompositions import eig_grad, eig_tangent_of
from .numpy.shapes import cast_grad


def real_like(g, x):
    """The adjoint `g` of `x` in x's kind: real when `x` is real (its imaginary part pairs
    with no change of a real value), complex when `x` is complex (so that later
    contributions can be added to it in place). Element by element for a sequence of
    arrays (np.concatenate's)."""
    if isinstance(x, (list, tuple)) and isinstance(g, (list, tuple)):
        return type(g)(real_like(gi, xi) for gi, xi in zip(g, x))
    if np.iscomplexobj(x):
        return g if np.iscomplexobj(g) else np.asarray(g, dtype=np.result_type(g, x))
    return np.real(g) if np.iscomplexobj(g) else g


def real_only(g, name, operands=()):
    """`g`, from a rule written for real operands (a tuple of them): refused when one of
    them is complex. Linear in g (rules/complex_helpers.py), so grad of grad reads it."""
    for x in operands:
        if _any_complex(x):
            raise TypeError(f"{name} has no derivative rule for complex values; "
                            "differentiate it on real values (np.real, np.imag or np.abs "
                            "of the complex ones), or register a rule with "
                            "sgcompiler.adjoint")
    return g


def _any_complex(x) -> bool:
    """Whether x, or a leaf of x (a list, tuple or dict of arrays), is complex."""
    if isinstance(x, dict):
        return any(map(_any_complex, x.values()))
    if isinstance(x, (list, tuple)):
        return any(map(_any_complex, x))
    return isinstance(x, (complex, np.complexfloating)) or \
        np.issubdtype(getattr(x, "dtype", np.float64), np.complexfloating)


def abs_squared(z):
    """np.abs(z) ** 2, without the square root: z.real ** 2 + z.imag ** 2 (x * x for real
    x). Complex mode writes np.abs(z) ** 2 and z.real ** 2 + z.imag ** 2 so
    (frontend/forms/powers.py), whose adjoint 2 g conj(z) is one operation."""
    if np.iscomplexobj(z):
        return np.real(z) ** 2 + np.imag(z) ** 2
    return z * z


def complex_sign(x):
    """x / |x| (0 where x == 0), for real and complex x alike."""
    magnitude = np.abs(x)
    return np.where(magnitude == 0, 0.0, x / np.where(magnitude == 0, 1.0, magnitude))


def complex_sign_grad(g, x):
    """Adjoint of complex_sign(x) = s: ds = (dx - s Re(conj(s) dx)) / |x|, so
    (g - Re(g s) conj(s)) / |x| (0 where x == 0, and for real x, where s is constant)."""
    s = complex_sign(x)
    magnitude = np.abs(x)
    return np.where(magnitude == 0, 0.0, (g - np.real(g * s) * np.conj(s)) /
                    np.where(magnitude == 0, 1.0, magnitude))


def complex_sign_tangent(t, x):
    """Tangent of complex_sign(x): (t - s Re(conj(s) t)) / |x| (0 where x == 0)."""
    s = complex_sign(x)
    magnitude = np.abs(x)
    return np.where(magnitude == 0, 0.0, (t - s * np.real(np.conj(s) * t)) /
                    np.where(magnitude == 0, 1.0, magnitude))


def complex_sign_reciprocal_slope(x):
    """The derivative of complex_sign_reciprocal(x) = -1j / x: 1j / x ** 2 (0 at x == 0)."""
    return np.where(x == 0, 0.0, 1j / np.where(x == 0, 1.0, x) ** 2)


def complex_sign_reciprocal(x):
    """-1j / x (0 where x == 0): the derivative of sign(x) = x / |x| is 1j sign(x) times
    d angle(x), and d angle(x) = Im(dx / x) = Re(-1j dx / x)."""
    return np.where(x == 0, 0.0, -1j / np.where(x == 0, 1.0, x))


def complex_cast_grad(g, x, dtype):
    """Gradient of x.astype(dtype) in complex mode: `g` for a cast to a complex type (the
    real part of it, for a real x, is taken by `real_like`), else as `cast_grad`."""
    if np.dtype(dtype).kind == "c":
        return g
    return cast_grad(g, x, dtype)


def angle_scale(deg):
    """d angle / d radians: 1, or 180 / pi for np.angle(z, deg=True)."""
    return 180.0 / np.pi if deg else 1.0


# --- eig and eigvals of complex spectra -----------------------------------------------------
#
# The eigenvalues are holomorphic in the matrix (where they are distinct): dw = diag(V^-1
# dA V), so their adjoint is V^-T diag(g) V^T, transposes and not conjugates. The
# eigenvectors of a complex spectrum are unique only up to a phase, which LAPACK fixes
# (unit norm, the largest component real): their tangent and adjoint keep that choice, so
# a loss that depends on the phases gets the gradient of LAPACK's choice.


def _complex_spectrum(w, a) -> bool:
    return np.iscomplexobj(w) or np.iscomplexobj(a)


def complex_eigvals_grad(g, a):
    """Gradient of the eigenvalues of `a` (distinct, real or complex): V^-T diag(g) V^T."""
    w, v = np.linalg.eig(a)
    vt = np.swapaxes(v, -1, -2)
    return np.linalg.solve(vt, np.expand_dims(g, -1) * vt)


def complex_eig_grad(g, ans, a):
    """Gradient of (w, V) = np.linalg.eig(a) in complex mode: as eig_grad for a real
    matrix with a real spectrum; otherwise the transpose of complex_eig_tangent_of's map
    t -> (diag(P), V (F o P + diag(alpha))), P = V^-1 t V, under the pairing Re(g * dw)."""
    (gw, gv), (w, v) = g, ans
    if not _complex_spectrum(w, a):
        return eig_grad(g, ans, a)
    n = np.shape(w)[-1]
    vt = np.swapaxes(v, -1, -2)
    g_p = np.zeros(np.shape(v), dtype=np.result_type(v, complex))
    if not (type(gw) is float and gw == 0.0):
        g_p = g_p + np.expand_dims(gw, -2) * np.eye(n)
    if not (type(gv) is float and gv == 0.0):
        h = np.sum(gv * v, axis=-2, keepdims=True)
        largest = np.expand_dims(np.argmax(np.abs(v), axis=-2), -2)
        pivot = np.real(np.take_along_axis(v, largest, -2))
        g_moved = gv - np.real(h) * np.conj(v)
        at_pivot = np.take_along_axis(g_moved, largest, -2) - 1j * np.imag(h) / pivot
        np.put_along_axis(g_moved, largest, at_pivot, -2)
        gaps = np.expand_dims(w, -2) - np.expand_dims(w, -1)
        off = ~np.eye(n, dtype=bool)
        g_p = g_p + np.where(off, (vt @ g_moved) / np.where(off, gaps, 1.0), 0.0)
    return np.linalg.solve(vt, g_p @ vt)


def complex_eigvals_tangent_of(t, a):
    """Tangent of the eigenvalues of `a`: diag(V^-1 t V)."""
    w, v = np.linalg.eig(a)
    return np.diagonal(np.linalg.solve(v, t @ v), axis1=-2, axis2=-1)


def complex_eig_tangent_of(t, ans, a):
    """Tangents of (w, V) = np.linalg.eig(a) in complex mode: as eig_tangent_of for a real
    spectrum of a real matrix. Otherwise P = V^-1 t V, dw = diag(P), and dV = V (C +
    diag(alpha)) with C = F o P, where alpha keeps each column of unit length
    (Re(v^H dv) = 0) and its largest component real, as LAPACK returns it."""
    w, v = ans
    if not _complex_spectrum(w, a):
        return eig_tangent_of(t, ans, a)
    n = np.shape(w)[-1]
    p = np.linalg.solve(v, t @ v)
    gaps = np.expand_dims(w, -2) - np.expand_dims(w, -1)
    off = ~np.eye(n, dtype=bool)
    moved = v @ np.where(off, p / np.where(off, gaps, 1.0), 0.0)
    largest = np.expand_dims(np.argmax(np.abs(v), axis=-2), -2)
    pivot = np.take_along_axis(v, largest, -2)
    alpha = -np.real(np.sum(np.conj(v) * moved, axis=-2, keepdims=True)) \
        - 1j * np.imag(np.take_along_axis(moved, largest, -2)) / np.real(pivot)
    return np.diagonal(p, axis1=-2, axis2=-1), moved + v * alpha
