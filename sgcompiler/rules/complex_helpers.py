"""Derivative rules of the helpers that code compiled in complex mode calls (real_like,
complex_sign, the FFTs' adjoints in runtime/numpy/fft.py), so that grad of grad, hessian and hvp
can read a complex function's generated gradient again (rules/runtime.py does the same for
the other helpers).

The FFTs' adjoint helpers are linear in their `g_`, and (in the pairing Re(g * dw) of
rules/complex_numbers.py) the transpose of the adjoint of a linear map is the map itself:

    rfft_grad(g_, a, n, axis, norm)   ->   d g_ = np.fft.rfft(g, n, axis, norm)

A value of which a helper reads only the shape or the kind (real or complex), and the
lengths `n` and `s`, get 0.0.
"""
from __future__ import annotations

import numpy as np

from ..runtime.complex_numbers import (abs_squared, complex_sign, complex_sign_grad,
                                       complex_sign_reciprocal, complex_sign_reciprocal_slope,
                                       complex_sign_tangent, real_like, real_only)
from ..runtime.numpy.fft import (fft_again, fft_grad, fftn_again, fftn_grad, hfft_grad, ihfft_grad,
                           irfft_grad, irfftn_grad, rfft_grad, rfftn_grad)
from ..runtime import (add_at, add_trees, as_float, copied, cumsum_grad, dot_grad_left,
                       dot_grad_right, field, index_part, inner_grad_a, inner_grad_b,
                       item_adjoint, item_of, matmul_grad_left, matmul_grad_right, mT, picked,
                       reduce_like, repeat_grad, scatter_item, sequence_adjoint,
                       sequence_parts, take_grad, tensordot_grad_a, tensordot_grad_b,
                       tile_grad, transpose_grad, tree_item, tree_with, unbroadcast,
                       unbroadcast_each, unreduce, written_back, written_part)
from .registry import complex_jvp, complex_safe, complex_vjp, jvp, linear, vjp


# np.abs(z) ** 2 as complex mode writes it (frontend/forms/powers.py): d|z|^2 = 2 Re(conj(z) dz)

@vjp(abs_squared, name="abs_squared", elementwise=True)
def abs_squared_(g, ans, z):
    return 2.0 * g * z


@jvp(abs_squared, name="abs_squared")
def abs_squared_tangent(t, ans, z):
    return 2.0 * z * t


@complex_vjp(abs_squared, name="abs_squared", elementwise=True,
             notes="np.abs(z) ** 2 and z.real ** 2 + z.imag ** 2, as complex mode writes "
                   "them (frontend/forms/powers.py)")
def abs_squared_complex(g, ans, z):
    return 2.0 * g * np.conj(z)


@complex_jvp(abs_squared, name="abs_squared")
def abs_squared_complex_tangent(t, ans, z):
    return 2.0 * np.real(np.conj(z) * t)


@vjp(real_like, name="real_like")
def real_like_(g, ans, g_, x):
    return real_like(real_like(g, x), g_), 0.0


# real_only(g_, name, operands) is g_ (the operands are only checked for complex values):
# its adjoint is g, checked again; its tangent the tangent of g_ (linear, below)
@vjp(real_only, name="real_only")
def real_only_(g, ans, g_, name, operands=()):
    return real_only(g, name, operands), 0.0, 0.0


@vjp(complex_sign, name="complex_sign", elementwise=True)
def complex_sign_(g, ans, x):
    return complex_sign_grad(g, x)


@jvp(complex_sign, name="complex_sign")
def complex_sign_tangent_(t, ans, x):
    return complex_sign_tangent(t, x)


@vjp(complex_sign_reciprocal, name="complex_sign_reciprocal", elementwise=True)
def complex_sign_reciprocal_(g, ans, x):
    return g * complex_sign_reciprocal_slope(x)


@jvp(complex_sign_reciprocal, name="complex_sign_reciprocal")
def complex_sign_reciprocal_tangent(t, ans, x):
    return t * complex_sign_reciprocal_slope(x)


@vjp(fft_grad, name="fft_grad")
def fft_grad_(g, ans, g_, a, axis, norm, transform=None):
    return fft_again(g, g_, axis, norm, transform), 0.0


@vjp(fftn_grad, name="fftn_grad")
def fftn_grad_(g, ans, g_, a, s, axes, norm, transform=None):
    return fftn_again(g, s, axes, norm, transform), 0.0, 0.0


@vjp(rfft_grad, name="rfft_grad")
def rfft_grad_(g, ans, g_, a, n, axis, norm):
    return np.fft.rfft(g, n, axis, norm), 0.0, 0.0


@vjp(irfft_grad, name="irfft_grad")
def irfft_grad_(g, ans, g_, a, n, axis, norm):
    return np.fft.irfft(g, n, axis, norm), 0.0, 0.0


@vjp(rfftn_grad, name="rfftn_grad")
def rfftn_grad_(g, ans, g_, a, s, axes, norm):
    return np.fft.rfftn(g, s, axes, norm), 0.0, 0.0


@vjp(irfftn_grad, name="irfftn_grad")
def irfftn_grad_(g, ans, g_, a, s, axes, norm):
    return np.fft.irfftn(g, s, axes, norm), 0.0, 0.0


@vjp(hfft_grad, name="hfft_grad")
def hfft_grad_(g, ans, g_, a, n, axis, norm):
    return np.fft.hfft(g, n, axis, norm), 0.0, 0.0


@vjp(ihfft_grad, name="ihfft_grad")
def ihfft_grad_(g, ans, g_, a, n, axis, norm):
    return np.fft.ihfft(g, n, axis, norm), 0.0, 0.0


_LINEAR = (real_like, real_only, fft_grad, fftn_grad, rfft_grad, irfft_grad, rfftn_grad, irfftn_grad,
           hfft_grad, ihfft_grad)
linear(*_LINEAR)
complex_safe(*_LINEAR, complex_sign, complex_sign_reciprocal)
# helpers whose rules in rules/runtime.py hold for complex values as written: they move,
# copy, sum or broadcast g, or are products (transposed, never conjugated)
complex_safe(unbroadcast, unreduce, reduce_like, unbroadcast_each, as_float, item_adjoint,
             scatter_item, copied, mT, add_trees, add_at, index_part, transpose_grad,
             written_part, written_back, cumsum_grad, take_grad, tile_grad, repeat_grad,
             sequence_adjoint, sequence_parts, picked, item_of, tree_item, field, tree_with,
             matmul_grad_left, matmul_grad_right, dot_grad_left, dot_grad_right,
             inner_grad_a, inner_grad_b, tensordot_grad_a, tensordot_grad_b)
