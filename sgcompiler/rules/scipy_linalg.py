"""Derivative rules of scipy.linalg functions. See registry.py.

Loaded with the other SciPy rule modules (rules/scipy.py), so SciPy stays optional.
"""
import numpy as np
import scipy.linalg

from ..runtime import mT
from ..runtime.linalg import cholesky_grad, eigvalsh_grad
from ..runtime.scipy_linalg import (expm_grad, inv_grad, solve_grad_matrix, solve_grad_rhs,
                                    solve_triangular_grad_a, solve_triangular_grad_b,
                                    sqrtm_grad)
from .registry import vjp


def linalg(name, **options):
    """Register a rule for scipy.linalg.`name`."""
    return vjp(getattr(scipy.linalg, name), name=f"scipy.linalg.{name}", **options)


@linalg("inv", notes="nonsingular input; assume_a general, symmetric or positive definite")
def inv(g, ans, a, overwrite_a=False, check_finite=True, *, assume_a=None, lower=False):
    return inv_grad(g, ans, a, assume_a, lower)


@linalg("det", notes="nonsingular input")
def det(g, ans, a, overwrite_a=False, check_finite=True):
    return g * ans * mT(np.linalg.inv(a))


@linalg("solve", notes="assume_a general, symmetric or positive definite")
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
