"""Complex values: the rules code compiled in complex mode uses (registry.py explains the
mode and the convention), and the functions whose ordinary rules already hold for complex
operands.

The convention is JAX's and autograd's: an adjoint g of w pairs with a change dw as
Re(g * dw). A holomorphic function's rule is then its real rule (dz = g * f'(z)), and the
gradient of a real loss f with respect to z = x + iy is df/dx - i df/dy (step along its
conjugate to ascend). The functions below are not holomorphic, so they get rules of their
own:

    w = np.real(z)  ->  dz = g            w = np.imag(z)  ->  dz = -1j * g
    w = np.conj(z)  ->  dz = np.conj(g)   w = np.abs(z)   ->  dz = g * conj(z) / |z|
"""
from __future__ import annotations

import operator

import numpy as np

from ..runtime import (astype, divide_or_zero, matrix_norm_grad, norm_grad, reduced_size,
                       unreduce, vector_norm_grad)
from ..runtime.complex_numbers import (angle_scale, complex_cast_grad, complex_eig_grad,
                                       complex_eig_tangent_of, complex_eigvals_grad,
                                       complex_eigvals_tangent_of, complex_sign,
                                       complex_sign_reciprocal)
from ..runtime.tangents import cast_tangent
from .registry import complex_jvp, complex_safe, complex_vjp, present


@complex_vjp(np.real, elementwise=True)
def real(g, ans, val):
    return g


@complex_jvp(np.real)
def real_tangent(t, ans, val):
    return np.real(t)


@complex_vjp(np.imag, elementwise=True)
def imag(g, ans, val):
    return -1j * g


@complex_jvp(np.imag)
def imag_tangent(t, ans, val):
    return np.imag(t)


@complex_vjp(np.conjugate, elementwise=True)
def conjugate(g, ans, x):
    return np.conj(g)


@complex_jvp(np.conjugate)
def conjugate_tangent(t, ans, x):
    return np.conj(t)


@complex_vjp(np.abs, np.absolute, elementwise=True, notes="0 at x == 0")
def absolute(g, ans, x):
    return g * np.conj(complex_sign(x))


@complex_jvp(np.abs, np.absolute)
def absolute_tangent(t, ans, x):
    return np.real(np.conj(complex_sign(x)) * t)


@complex_vjp(np.sign, elementwise=True, notes="z / |z| for complex z (a constant for real z); "
             "0 at z == 0")
def sign(g, ans, x):
    return np.real(1j * g * ans) * complex_sign_reciprocal(x)


@complex_jvp(np.sign)
def sign_tangent(t, ans, x):
    return 1j * ans * np.real(t * complex_sign_reciprocal(x))


@complex_vjp(np.angle, elementwise=True, notes="undefined at z == 0")
def angle(g, ans, z, deg=False):
    return -1j * g * angle_scale(deg) / z


@complex_jvp(np.angle)
def angle_tangent(t, ans, z, deg=False):
    return np.imag(t / z) * angle_scale(deg)


@complex_vjp(np.vdot, notes="conjugates (and flattens) its first argument")
def vdot(g, ans, a, b):
    return np.reshape(np.conj(g * b), np.shape(a)), np.reshape(g * np.conj(a), np.shape(b))


@complex_vjp(astype, name="x.astype()", notes="a cast to an integer or bool type has zero "
             "gradient; a cast to a real type keeps the real part")
def astype_complex(g, ans, x, dtype, order="K", casting="unsafe", subok=True, copy=True):
    return complex_cast_grad(g, x, dtype)


@complex_vjp(*present(np, "astype"), notes="as x.astype()")
def astype_function_complex(g, ans, x, dtype, *, copy=True, device=None):
    return complex_cast_grad(g, x, dtype)


@complex_jvp(astype, name="x.astype()")
def astype_complex_tangent(t, ans, x, dtype, order="K", casting="unsafe", subok=True,
                           copy=True):
    return cast_tangent(t, dtype)


@complex_vjp(np.linalg.eigvals, notes="distinct eigenvalues, real or complex")
def eigvals(g, ans, a):
    return complex_eigvals_grad(g, a)


@complex_jvp(np.linalg.eigvals)
def eigvals_tangent(t, ans, a):
    return complex_eigvals_tangent_of(t, a)


@complex_vjp(np.linalg.eig, multiple_results=True,
             notes="distinct eigenvalues, real or complex; the eigenvectors' phases are "
                   "LAPACK's (unit columns whose largest component is real)")
def eig(g, ans, a):
    return complex_eig_grad(g, ans, a)


@complex_jvp(np.linalg.eig, multiple_results=True)
def eig_tangent(t, ans, a):
    return complex_eig_tangent_of(t, ans, a)


# Real functions of complex values that reduce: the real rule's gradient conjugated (the
# pairing Re(g * dw) with d|z|^2 = 2 Re(conj(z) dz)); a tangent is the real part of the sum
# of the tangent times the gradient of each result element.

@complex_vjp(np.var, reduction=True, notes="ddof; the mean of |a - mean(a)| ** 2")
def var(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return (unreduce(g, a, axis, keepdims) * 2.0
            * np.conj(a - np.mean(a, axis=axis, keepdims=True)) / (reduced_size(a, axis) - ddof))


@complex_jvp(np.var)
def var_tangent(t, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return np.real(np.sum(np.conj(a - np.mean(a, axis=axis, keepdims=True)) * t, axis=axis,
                          keepdims=keepdims)) * 2.0 / (reduced_size(a, axis) - ddof)


@complex_vjp(np.std, reduction=True, notes="ddof; 0 where the std is 0")
def std(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return (unreduce(divide_or_zero(g, ans), a, axis, keepdims)
            * np.conj(a - np.mean(a, axis=axis, keepdims=True)) / (reduced_size(a, axis) - ddof))


@complex_jvp(np.std)
def std_tangent(t, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return divide_or_zero(np.real(np.sum(np.conj(a - np.mean(a, axis=axis, keepdims=True)) * t,
                                         axis=axis, keepdims=keepdims)),
                          ans * (reduced_size(a, axis) - ddof))


@complex_vjp(np.linalg.norm, reduction=True,
             notes="as for real values; 0 at a zero vector")
def norm(g, ans, x, ord=None, axis=None, keepdims=False):
    return np.conj(norm_grad(g, ans, x, ord, axis, keepdims))


@complex_jvp(np.linalg.norm)
def norm_tangent(t, ans, x, ord=None, axis=None, keepdims=False):
    return np.real(np.sum(t * np.conj(norm_grad(np.ones_like(ans), ans, x, ord, axis, keepdims)),
                          axis=axis, keepdims=keepdims))


@complex_vjp(*present(np.linalg, "vector_norm"), reduction=True, notes="as np.linalg.norm")
def vector_norm(g, ans, x, *, axis=None, keepdims=False, ord=2):
    return np.conj(vector_norm_grad(g, ans, x, ord, axis, keepdims))


@complex_jvp(*present(np.linalg, "vector_norm"))
def vector_norm_tangent(t, ans, x, *, axis=None, keepdims=False, ord=2):
    return np.real(np.sum(t * np.conj(vector_norm_grad(np.ones_like(ans), ans, x, ord, axis,
                                                       keepdims)), axis=axis, keepdims=keepdims))


@complex_vjp(*present(np.linalg, "matrix_norm"), notes="as np.linalg.norm")
def matrix_norm(g, ans, x, *, keepdims=False, ord="fro"):
    return np.conj(matrix_norm_grad(g, ans, x, ord, (-2, -1), keepdims))


@complex_jvp(*present(np.linalg, "matrix_norm"))
def matrix_norm_tangent(t, ans, x, *, keepdims=False, ord="fro"):
    return np.real(np.sum(t * np.conj(matrix_norm_grad(np.ones_like(ans), ans, x, ord, (-2, -1),
                                                       keepdims)), axis=(-2, -1),
                          keepdims=keepdims))


# rules that hold for complex operands as they are written: holomorphic functions (their
# derivative, written with operations that extend to complex numbers), and linear ones
complex_safe(
    np.exp, np.exp2, np.expm1, np.log, np.log2, np.log10, np.log1p, np.sqrt, np.square,
    np.reciprocal, np.power, operator.pow, np.sin, np.cos, np.tan, np.arcsin, np.arccos,
    np.arctan, np.sinh, np.cosh, np.tanh, np.arcsinh, np.arccosh, np.arctanh,
    np.negative, operator.neg, operator.pos, np.positive, np.add, operator.add,
    np.subtract, operator.sub, np.multiply, operator.mul, np.divide, operator.truediv,
    np.where, np.sum, np.mean, np.cumsum, np.reshape, np.transpose, np.ravel, np.squeeze,
    np.expand_dims, np.concatenate, np.stack, np.hstack, np.vstack, np.swapaxes,
    np.moveaxis, np.flip, np.roll, np.broadcast_to, np.copy, np.asarray, np.array,
    np.trace, np.diagonal, np.diag, np.matmul, operator.matmul, np.dot, np.tensordot,
    np.outer, np.inner, np.kron, np.linalg.inv, np.linalg.solve, np.linalg.det,
    # a permutation of the elements (complex values sort lexicographically, as NumPy
    # orders them), and the choice of one operand, by equality with the result
    np.sort, np.maximum, np.minimum, np.fmax, np.fmin,
    *present(np, "permute_dims", "concat"))
