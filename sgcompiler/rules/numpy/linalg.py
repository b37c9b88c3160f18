"""Derivative rules of NumPy's products and linear algebra. See registry.py.

`mT(x)` is the matrix transpose (the last two axes), so the rules also hold for stacks of
matrices. Matrix functions of symmetric input (cholesky, eigvalsh) read one triangle of
their argument, and their gradients say so: they are zero on the triangle not read.
"""
import operator

import numpy as np

from ...runtime import mT
from ...runtime.numpy.linalg import (cholesky_grad, cross_grad, diag_grad, diagonal_grad, dot_grad_left,
                              dot_grad_right, eigh_grad, eigvalsh_grad, einsum_grad,
                              inner_grad_a, inner_grad_b, kron_grad, matmul_grad_left,
                              matmul_grad_right, matrix_power_grad, multi_dot_grads, pinv_grad,
                              slogdet_grad, solve_grad_a, solve_grad_b, svdvals_grad,
                              tensordot_grad_a, tensordot_grad_b, trace_grad, vecdot_grad)
from ...runtime.tangents import (cholesky_tangent_of, eigh_tangent_of, matrix_power_tangent_of,
                                multi_dot_tangent_of, pinv_tangent_of, solve_tangent_a,
                                svdvals_tangent_of)
from ...runtime.batched_rules import batch_solve, batch_solve_tangent_a
from ..registry import batchable, jvp, linear, multilinear, present, vjp

# --- products ---------------------------------------------------------------------------------


@vjp(np.matmul, operator.matmul, *present(np.linalg, "matmul"))
def matmul(g, ans, x1, x2):
    return matmul_grad_left(g, x1, x2), matmul_grad_right(g, x1, x2)


@vjp(np.dot)
def dot(g, ans, a, b):
    return dot_grad_left(g, a, b), dot_grad_right(g, a, b)


@vjp(np.vdot, notes="real input; flattens both arguments")
def vdot(g, ans, a, b):
    return g * np.reshape(b, np.shape(a)), g * np.reshape(a, np.shape(b))


@vjp(np.inner)
def inner(g, ans, a, b):
    return inner_grad_a(g, a, b), inner_grad_b(g, a, b)


@vjp(np.outer, notes="flattens both arguments")
def outer(g, ans, a, b, out=None):
    return np.reshape(g @ np.ravel(b), np.shape(a)), np.reshape(np.ravel(a) @ g, np.shape(b))


@vjp(*present(np.linalg, "outer"))
def linalg_outer(g, ans, x1, x2):
    return g @ x2, x1 @ g


@vjp(np.tensordot)
def tensordot(g, ans, a, b, axes=2):
    return tensordot_grad_a(g, a, b, axes), tensordot_grad_b(g, a, b, axes)


@vjp(*present(np.linalg, "tensordot"))
def linalg_tensordot(g, ans, x1, x2, *, axes=2):
    return tensordot_grad_a(g, x1, x2, axes), tensordot_grad_b(g, x1, x2, axes)


@vjp(np.einsum, notes="x0...x7 are the operands: up to 8; subscripts as a string (any, "
                      "with '...' and repeated indices), or index lists after the operands")
def einsum(g, ans, subscripts, x0, x1=None, x2=None, x3=None, x4=None, x5=None, x6=None,
           x7=None, *, optimize=False):
    # (`subscripts` is the first operand when index lists held in variables follow it)
    return (einsum_grad(g, -1, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad(g, 0, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad(g, 1, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad(g, 2, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad(g, 3, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad(g, 4, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad(g, 5, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad(g, 6, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad(g, 7, subscripts, x0, x1, x2, x3, x4, x5, x6, x7))


@vjp(np.kron)
def kron(g, ans, a, b):
    return kron_grad(g, a, b, 0), kron_grad(g, a, b, 1)


@vjp(np.cross, notes="2- and 3-vectors")
def cross(g, ans, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    return (cross_grad(g, a, b, axisa, axisb, axisc, axis, 0),
            cross_grad(g, a, b, axisa, axisb, axisc, axis, 1))


@vjp(*present(np.linalg, "cross"), notes="3-vectors")
def linalg_cross(g, ans, x1, x2, *, axis=-1):
    return cross_grad(g, x1, x2, axis=axis, wrt=0), cross_grad(g, x1, x2, axis=axis, wrt=1)


@vjp(*present(np, "vecdot"), *present(np.linalg, "vecdot"), notes="real input")
def vecdot(g, ans, x1, x2, *, axis=-1):
    return vecdot_grad(g, x1, x2, axis), vecdot_grad(g, x2, x1, axis)


# --- diagonals and transposes -----------------------------------------------------------------


@vjp(np.trace)
def trace(g, ans, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return trace_grad(g, a, offset, axis1, axis2)


@vjp(*present(np.linalg, "trace"))
def linalg_trace(g, ans, x, *, offset=0, dtype=None):
    return trace_grad(g, x, offset, -2, -1)


@vjp(np.diagonal)
def diagonal(g, ans, a, offset=0, axis1=0, axis2=1):
    return diagonal_grad(g, a, offset, axis1, axis2)


@vjp(*present(np.linalg, "diagonal"))
def linalg_diagonal(g, ans, x, *, offset=0):
    return diagonal_grad(g, x, offset, -2, -1)


@vjp(np.diag)
def diag(g, ans, v, k=0):
    return diag_grad(g, v, k)


@vjp(np.diagflat)
def diagflat(g, ans, v, k=0):
    return np.reshape(np.diagonal(g, k), np.shape(v))


@vjp(*present(np, "matrix_transpose"), *present(np.linalg, "matrix_transpose"))
def matrix_transpose(g, ans, x):
    return mT(g)


# --- matrix functions ---------------------------------------------------------------------------


@vjp(np.linalg.inv, notes="nonsingular input")
def inv(g, ans, a):
    return -(mT(ans) @ g @ mT(ans))


@vjp(np.linalg.solve, notes="nonsingular a; b is a vector when it is 1-D (NumPy 2)")
def solve(g, ans, a, b):
    return solve_grad_a(g, ans, a, b), solve_grad_b(g, a, b)


@vjp(np.linalg.det, notes="nonsingular input")
def det(g, ans, a):
    return np.expand_dims(g * ans, (-2, -1)) * mT(np.linalg.inv(a))


@vjp(np.linalg.matrix_power, notes="integer n")
def matrix_power(g, ans, a, n):
    return matrix_power_grad(g, a, n), None


@vjp(np.linalg.cholesky,
     notes="symmetric positive definite input; the gradient is on the triangle NumPy reads")
def cholesky(g, ans, a, *, upper=False):
    return cholesky_grad(g, ans, upper)


@vjp(np.linalg.eigvalsh, notes="symmetric input, distinct eigenvalues; the gradient is on "
                                "the triangle NumPy reads (UPLO)")
def eigvalsh(g, ans, a, UPLO="L"):
    return eigvalsh_grad(g, a, UPLO)


@vjp(*present(np.linalg, "svdvals"), notes="distinct nonzero singular values")
def svdvals(g, ans, x):
    return svdvals_grad(g, x)


@vjp(np.linalg.slogdet, multiple_results=True,
     notes="nonsingular input; the gradient comes from logabsdet (the sign is constant)")
def slogdet(g, ans, a):
    return slogdet_grad(g, a)


@vjp(np.linalg.eigh, multiple_results=True,
     notes="symmetric input, distinct eigenvalues; the loss must not depend on the signs of "
           "the eigenvectors; the gradient is on the triangle NumPy reads (UPLO)")
def eigh(g, ans, a, UPLO="L"):
    return eigh_grad(g, ans, UPLO)


@vjp(np.linalg.multi_dot, notes="a sequence of arrays; the first may be 1-D (a row) and "
                                "the last 1-D (a column)")
def multi_dot(g, ans, arrays, *, out=None):
    return multi_dot_grads(g, arrays)


@vjp(np.linalg.pinv, notes="input of constant rank (e.g. full rank)")
def pinv(g, ans, a, rcond=None, hermitian=False, *, rtol=None):
    return pinv_grad(g, ans, a, hermitian)


# --- tangents (forward mode) ---------------------------------------------------------------

# products are linear in each factor: the tangent of x @ w is x_dot @ w + x @ w_dot
multilinear(np.matmul, operator.matmul, *present(np.linalg, "matmul"), np.dot, np.vdot,
            np.inner, np.outer, *present(np.linalg, "outer"), np.tensordot,
            *present(np.linalg, "tensordot"), np.einsum, np.kron, np.cross,
            *present(np.linalg, "cross"), *present(np, "vecdot"),
            *present(np.linalg, "vecdot"))
linear(np.trace, *present(np.linalg, "trace"), np.diagonal, *present(np.linalg, "diagonal"),
       np.diag, np.diagflat, *present(np, "matrix_transpose"),
       *present(np.linalg, "matrix_transpose"))


@jvp(np.linalg.inv)
def inv_tangent(t, ans, a):
    return -(ans @ t @ ans)


@jvp(np.linalg.solve)
def solve_tangent(a_dot, b_dot, ans, a, b):
    return solve_tangent_a(a_dot, ans, a, b), np.linalg.solve(a, b_dot)


@jvp(np.linalg.det)
def det_tangent(t, ans, a):
    return ans * np.trace(np.linalg.solve(a, t), axis1=-2, axis2=-1)


@jvp(np.linalg.slogdet, multiple_results=True)
def slogdet_tangent(t, ans, a):
    return 0.0 * ans[0], np.trace(np.linalg.solve(a, t), axis1=-2, axis2=-1)


@jvp(np.linalg.cholesky)
def cholesky_tangent(t, ans, a, *, upper=False):
    return cholesky_tangent_of(t, ans, upper)


@jvp(np.linalg.eigh, multiple_results=True)
def eigh_tangent(t, ans, a, UPLO="L"):
    return eigh_tangent_of(t, ans, UPLO)


@jvp(np.linalg.eigvalsh)
def eigvalsh_tangent(t, ans, a, UPLO="L"):
    return eigh_tangent_of(t, np.linalg.eigh(a, UPLO), UPLO)[0]


# (inv, cholesky and eigh's tangents are written for stacks of matrices: a leading axis of
# directions is one more; a solve's right-hand side gets its batched form)
batchable(np.linalg.solve, np.linalg.det, np.linalg.slogdet, np.linalg.inv,
          np.linalg.cholesky, np.linalg.eigh, np.linalg.eigvalsh,
          helpers=[(np.linalg.solve, batch_solve), (solve_tangent_a, batch_solve_tangent_a)])


@jvp(np.linalg.matrix_power)
def matrix_power_tangent(t, ans, a, n):
    return matrix_power_tangent_of(t, a, n)


@jvp(*present(np.linalg, "svdvals"))
def svdvals_tangent(t, ans, x):
    return svdvals_tangent_of(t, x)


# (matrix_power_tangent_of and svdvals_tangent_of are written for stacks of matrices, the
# sum of svdvals' over the last axis kept last by np.sum's batched form)
batchable(np.linalg.matrix_power, *present(np.linalg, "svdvals"))


@jvp(np.linalg.pinv)
def pinv_tangent(t, ans, a, rcond=None, hermitian=False, *, rtol=None):
    return pinv_tangent_of(t, ans, a, hermitian)


# (pinv_tangent_of is written for stacks of matrices: products, swapaxes, tril)
batchable(np.linalg.pinv)


@jvp(np.linalg.multi_dot)
def multi_dot_tangent(t, ans, arrays, *, out=None):
    return multi_dot_tangent_of(t, arrays)
