"""Derivative rules of scipy.linalg functions. See registry.py.

Loaded with the other SciPy rule modules (rules/scipy.py), so SciPy stays optional.
"""
import inspect

import numpy as np
import scipy.linalg

from ...runtime import mT
from ...runtime.numpy.linalg import cholesky_grad, eigvalsh_grad
from ...runtime.scipy.linalg import (ASSUME_A, batch_solve_tangent_matrix, batch_solve_tangent_rhs,
                                    block_diag_grad, block_diag_place,
                                    cho_factor_grad,
                                    cho_solve_grad_b, cho_solve_grad_factor, expm_grad,
                                    expm_grad_second, expm_grad_tangent_a, inv_grad,
                                    lu_factor_grad, lu_solve_grad_b, lu_solve_grad_factor, solve_banded_grad_ab,
                                    solve_banded_grad_b, solve_grad_matrix, solve_grad_rhs,
                                    solve_triangular_grad_a, solve_triangular_grad_b,
                                    sqrtm_grad, sylvester_adjoint)
from ...runtime.scipy.linalg import (cho_factor_tangent, cho_solve_tangent_factor,
                                    cholesky_tangent,
                                    eigvalsh_tangent, expm_tangent, inv_tangent,
                                    lu_factor_tangent, lu_solve_tangent_factor,
                                    solve_banded_tangent_ab, solve_tangent_matrix,
                                    solve_tangent_rhs, solve_triangular_tangent_a,
                                    sqrtm_tangent)
from ..registry import batchable, jvp, linear, through_source, vjp


def linalg(name, **options):
    """Register a rule for scipy.linalg.`name`."""
    return vjp(getattr(scipy.linalg, name), name=f"scipy.linalg.{name}", **options)


if "assume_a" in inspect.signature(scipy.linalg.inv).parameters:      # SciPy 1.17 and later
    @linalg("inv", notes="nonsingular input; assume_a general, symmetric or positive definite",
            supported={"assume_a": ASSUME_A})
    def inv(g, ans, a, overwrite_a=False, check_finite=True, *, assume_a=None, lower=False):
        return inv_grad(g, ans, a, assume_a, lower)
else:
    @linalg("inv", notes="nonsingular input")
    def inv(g, ans, a, overwrite_a=False, check_finite=True):
        return inv_grad(g, ans, a)


@linalg("det", notes="nonsingular input")
def det(g, ans, a, overwrite_a=False, check_finite=True):
    return g * ans * mT(np.linalg.inv(a))


@linalg("solve", notes="assume_a general, symmetric or positive definite",
        supported={"assume_a": ASSUME_A})
def solve(g, ans, a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
          assume_a=None, transposed=False):
    return (solve_grad_matrix(g, ans, a, b, lower, assume_a, transposed),
            solve_grad_rhs(g, a, b, lower, assume_a, transposed))


@linalg("solve_triangular")
def solve_triangular(g, ans, a, b, trans=0, lower=False, unit_diagonal=False,
                     overwrite_b=False, check_finite=True):
    return (solve_triangular_grad_a(g, ans, a, b, trans, lower, unit_diagonal),
            solve_triangular_grad_b(g, a, trans, lower, unit_diagonal))


@linalg("cholesky", notes="symmetric positive definite input; the gradient is on the "
                          "triangle SciPy reads (upper unless lower=True)")
def cholesky(g, ans, a, lower=False, overwrite_a=False, check_finite=True):
    return cholesky_grad(g, ans, not lower)


@linalg("eigvalsh", notes="standard problem (b=None), distinct eigenvalues")
def eigvalsh(g, ans, a, b=None, *, lower=True):
    return eigvalsh_grad(g, a, "L" if lower else "U"), None


@linalg("expm")
def expm(g, ans, A):
    return expm_grad(g, A)


@linalg("sqrtm", notes="input with a real square root (e.g. positive definite)")
def sqrtm(g, ans, A):
    return sqrtm_grad(g, ans)


# --- factorizations and the solvers that take them -------------------------------------------


@linalg("cho_factor", multiple_results=True,
        notes="symmetric positive definite input; c's unused triangle is a copy of a's")
def cho_factor(g, ans, a, lower=False, overwrite_a=False, check_finite=True):
    return cho_factor_grad(g, ans, lower)


@linalg("cho_solve", notes="c_and_lower as cho_factor returns it")
def cho_solve(g, ans, c_and_lower, b, overwrite_b=False, check_finite=True):
    return cho_solve_grad_factor(g, ans, c_and_lower, b), cho_solve_grad_b(g, c_and_lower, b)


@linalg("lu_factor", multiple_results=True, notes="square nonsingular input; piv is integer")
def lu_factor(g, ans, a, overwrite_a=False, check_finite=True):
    return lu_factor_grad(g, ans)


@linalg("lu_solve", notes="lu_and_piv as lu_factor returns it; square a")
def lu_solve(g, ans, lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    return lu_solve_grad_factor(g, ans, lu_and_piv, b, trans), lu_solve_grad_b(g, lu_and_piv, b,
                                                                               trans)


@linalg("solve_sylvester", notes="a and -b with no common eigenvalue")
def solve_sylvester(g, ans, a, b, q):
    return (-(sylvester_adjoint(g, a, b) @ mT(ans)), -(mT(ans) @ sylvester_adjoint(g, a, b)),
            sylvester_adjoint(g, a, b))


@linalg("solve_banded", notes="l_and_u integers; the gradient of ab is on its band "
                              "(the unused corners get zero)")
def solve_banded(g, ans, l_and_u, ab, b, overwrite_ab=False, overwrite_b=False,
                 check_finite=True):
    return (None, solve_banded_grad_ab(g, ans, l_and_u, ab, b),
            solve_banded_grad_b(g, l_and_u, ab, b))


@linalg("block_diag", notes="a0...a7 are the blocks: up to 8")
def block_diag(g, ans, a0, a1=None, a2=None, a3=None, a4=None, a5=None, a6=None, a7=None):
    return (block_diag_grad(g, 0, a0, a1, a2, a3, a4, a5, a6, a7),
            block_diag_grad(g, 1, a0, a1, a2, a3, a4, a5, a6, a7),
            block_diag_grad(g, 2, a0, a1, a2, a3, a4, a5, a6, a7),
            block_diag_grad(g, 3, a0, a1, a2, a3, a4, a5, a6, a7),
            block_diag_grad(g, 4, a0, a1, a2, a3, a4, a5, a6, a7),
            block_diag_grad(g, 5, a0, a1, a2, a3, a4, a5, a6, a7),
            block_diag_grad(g, 6, a0, a1, a2, a3, a4, a5, a6, a7),
            block_diag_grad(g, 7, a0, a1, a2, a3, a4, a5, a6, a7))


# block_diag's gradient takes its array's block of g_ (the arrays give only the shapes), and
# placing a block into zeros is its transpose: the two are each other's adjoints (second and
# third order)
@vjp(block_diag_grad, name="block_diag_grad")
def block_diag_grad_(g, ans, g_, k, a0, a1=None, a2=None, a3=None, a4=None, a5=None,
                     a6=None, a7=None):
    return (block_diag_place(g, k, g_, a0, a1, a2, a3, a4, a5, a6, a7),
            0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@vjp(block_diag_place, name="block_diag_place")
def block_diag_place_(g, ans, g_, k, like, a0, a1=None, a2=None, a3=None, a4=None, a5=None,
                      a6=None, a7=None):
    return (block_diag_grad(g, k, a0, a1, a2, a3, a4, a5, a6, a7),
            0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


# second order (grad of grad, hessian): these gradient helpers are differentiated through
# their own source (rules/runtime.py says why); expm's has rules (below). cho_factor's and
# lu_factor's take the adjoint of their result, a tuple (reverse/calls.py: a helper's
# argument that a call made may be one)
through_source(cho_factor_grad, inv_grad, solve_grad_matrix, solve_grad_rhs, solve_triangular_grad_a,
               solve_triangular_grad_b, sqrtm_grad, cho_solve_grad_factor,
               cho_solve_grad_b, lu_factor_grad, lu_solve_grad_factor, lu_solve_grad_b,
               solve_banded_grad_ab, solve_banded_grad_b, sylvester_adjoint,
               expm_grad_second, expm_grad_tangent_a)


# --- tangent rules (forward mode) ------------------------------------------------------------

linear(scipy.linalg.block_diag, block_diag_grad, block_diag_place)


@jvp(scipy.linalg.cho_factor, multiple_results=True)
def cho_factor_jvp(t, ans, a, lower=False, overwrite_a=False, check_finite=True):
    return cho_factor_tangent(t, ans, lower)


@jvp(scipy.linalg.cho_solve)
def cho_solve_jvp(c_and_lower_dot, b_dot, ans, c_and_lower, b, overwrite_b=False,
                  check_finite=True):
    return (cho_solve_tangent_factor(c_and_lower_dot, ans, c_and_lower),
            scipy.linalg.cho_solve(c_and_lower, b_dot))


@jvp(scipy.linalg.lu_factor, multiple_results=True)
def lu_factor_jvp(t, ans, a, overwrite_a=False, check_finite=True):
    return lu_factor_tangent(t, ans)


@jvp(scipy.linalg.lu_solve)
def lu_solve_jvp(lu_and_piv_dot, b_dot, ans, lu_and_piv, b, trans=0, overwrite_b=False,
                 check_finite=True):
    return (lu_solve_tangent_factor(lu_and_piv_dot, ans, lu_and_piv, b, trans),
            scipy.linalg.lu_solve(lu_and_piv, b_dot, trans=trans))


# A X + X B = Q: A X' + X' B = Q' - A' X - X B'
@jvp(scipy.linalg.solve_sylvester)
def solve_sylvester_jvp(a_dot, b_dot, q_dot, ans, a, b, q):
    return (scipy.linalg.solve_sylvester(a, b, -(a_dot @ ans)),
            scipy.linalg.solve_sylvester(a, b, -(ans @ b_dot)),
            scipy.linalg.solve_sylvester(a, b, q_dot))


@jvp(scipy.linalg.solve_banded)
def solve_banded_jvp(ab_dot, b_dot, ans, l_and_u, ab, b, overwrite_ab=False,
                     overwrite_b=False, check_finite=True):
    return (solve_banded_tangent_ab(ab_dot, ans, l_and_u, ab),
            scipy.linalg.solve_banded(l_and_u, ab, b_dot))


if "assume_a" in inspect.signature(scipy.linalg.inv).parameters:      # SciPy 1.17 and later
    @jvp(scipy.linalg.inv)
    def inv_jvp(t, ans, a, overwrite_a=False, check_finite=True, *, assume_a=None,
                lower=False):
        return inv_tangent(t, ans, assume_a, lower)
else:
    @jvp(scipy.linalg.inv)
    def inv_jvp(t, ans, a, overwrite_a=False, check_finite=True):
        return inv_tangent(t, ans)


@jvp(scipy.linalg.det)
def det_jvp(t, ans, a, overwrite_a=False, check_finite=True):
    return ans * np.trace(np.linalg.solve(a, t), axis1=-2, axis2=-1)


@jvp(scipy.linalg.solve)
def solve_jvp(a_dot, b_dot, ans, a, b, lower=False, overwrite_a=False, overwrite_b=False,
              check_finite=True, assume_a=None, transposed=False):
    return (solve_tangent_matrix(a_dot, ans, a, b, lower, assume_a, transposed),
            solve_tangent_rhs(b_dot, a, lower, assume_a, transposed))


# (batched: the directions more columns of one solve; det's np.linalg.solve of a stack)
batchable(scipy.linalg.solve, scipy.linalg.det,
          helpers=[(solve_tangent_matrix, batch_solve_tangent_matrix),
                   (solve_tangent_rhs, batch_solve_tangent_rhs)])


@jvp(scipy.linalg.solve_triangular)
def solve_triangular_jvp(a_dot, b_dot, ans, a, b, trans=0, lower=False, unit_diagonal=False,
                         overwrite_b=False, check_finite=True):
    return (solve_triangular_tangent_a(a_dot, ans, a, trans, lower, unit_diagonal),
            scipy.linalg.solve_triangular(a, b_dot, trans=trans, lower=lower,
                                          unit_diagonal=unit_diagonal))


@jvp(scipy.linalg.cholesky)
def cholesky_jvp(t, ans, a, lower=False, overwrite_a=False, check_finite=True):
    return cholesky_tangent(t, ans, lower)


@jvp(scipy.linalg.eigvalsh)
def eigvalsh_jvp(t, ans, a, b=None, *, lower=True):
    return eigvalsh_tangent(t, a, lower)


@jvp(scipy.linalg.expm)
def expm_jvp(t, ans, A):
    return expm_tangent(t, A)


# expm's gradient helper at second order: expm_grad(g_, A) is the Frechet derivative
# L(A^T, g_), linear in g_ (its transpose is L(A, g)), and the Frechet derivative at a
# block matrix gives its derivative in A
@vjp(expm_grad, name="expm_grad")
def expm_grad_(g, ans, g_, A):
    return expm_grad(g, mT(A)), expm_grad_second(g, g_, A)


@jvp(expm_grad, name="expm_grad")
def expm_grad_tangent(g__dot, A_dot, ans, g_, A):
    return expm_grad(g__dot, A), expm_grad_tangent_a(A_dot, g_, A)


@jvp(scipy.linalg.sqrtm)
def sqrtm_jvp(t, ans, A):
    return sqrtm_tangent(t, ans)
