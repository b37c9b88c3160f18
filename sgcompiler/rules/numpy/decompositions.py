"""Derivative rules of NumPy's matrix decompositions: svd, qr, lstsq, and eig and eigvals
of matrices whose eigenvalues are all real (complex ones are refused at run time). See
registry.py.

Their factors are unique only up to signs (and, for repeated singular values, rotations),
and the columns of a full orthogonal factor beyond min(m, n) are an arbitrary completion:
the rules hold for losses that do not depend on that choice, and refuse (at run time) a
loss that reads those extra columns. The helpers are in runtime/numpy/decompositions.py.
"""
import numpy as np

from ...runtime.numpy.decompositions import (eig_grad, eig_tangent_of, eigvals_grad,
                                      eigvals_tangent_of, lstsq_grad_a, lstsq_grad_b,
                                      lstsq_tangent_of, qr_grad, qr_tangent_of, svd_grad,
                                      svd_tangent_of)
from ...runtime.batched_rules import batch_lstsq_tangent_of
from ..registry import batchable, jvp, vjp


@vjp(np.linalg.svd, multiple_results=True, single_result_when=("compute_uv", False),
     notes="U, s, Vt, or s alone with compute_uv=False (a literal); distinct nonzero "
           "singular values (repeated ones leave U and V not unique: the loss must not "
           "depend on that choice, nor on the signs of the singular vectors); a loss may "
           "not read the columns beyond min(m, n) of full_matrices=True; hermitian=True "
           "reads the lower triangle")
def svd(g, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    return svd_grad(g, ans, a, full_matrices, compute_uv, hermitian)


@vjp(np.linalg.qr, multiple_results=True, single_result_when=("mode", "r"),
     notes="Q, R, or R alone with mode='r' (a literal); full-rank input; any shape; a loss "
           "may not read the columns of Q beyond min(m, n) of mode='complete'; not "
           "mode='raw'")
def qr(g, ans, a, mode="reduced"):
    return qr_grad(g, ans, a, mode)


@vjp(np.linalg.lstsq, multiple_results=True,
     notes="a of constant rank (e.g. full rank); the solution, the residuals and the "
           "singular values get gradients, the rank none")
def lstsq(g, ans, a, b, rcond=None):
    return lstsq_grad_a(g, ans, a, b), lstsq_grad_b(g, ans, a, b), None


@vjp(np.linalg.eig, multiple_results=True,
     notes="real distinct eigenvalues (complex ones are refused when the gradient is "
           "computed); the loss must not depend on the signs of the eigenvectors")
def eig(g, ans, a):
    return eig_grad(g, ans, a)


@vjp(np.linalg.eigvals, notes="real distinct eigenvalues (complex ones are refused when "
                               "the gradient is computed)")
def eigvals(g, ans, a):
    return eigvals_grad(g, a)


# --- tangents (forward mode) ---------------------------------------------------------------


@jvp(np.linalg.svd, multiple_results=True)
def svd_tangent(t, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    return svd_tangent_of(t, ans, a, full_matrices, compute_uv, hermitian)


# (svd_tangent_of and qr_tangent_of are written for stacks of matrices)
batchable(np.linalg.svd, np.linalg.qr)


@jvp(np.linalg.qr, multiple_results=True)
def qr_tangent(t, ans, a, mode="reduced"):
    return qr_tangent_of(t, ans, a, mode)


@jvp(np.linalg.lstsq, multiple_results=True)
def lstsq_tangent(a_dot, b_dot, ans, a, b, rcond=None):
    return lstsq_tangent_of(a_dot, b_dot, ans, a, b)


# (a stack of directions: each product broadcasts over it, the transposes and the diagonal
# are of the last two axes)
batchable(np.linalg.lstsq, helpers=[(lstsq_tangent_of, batch_lstsq_tangent_of)])


@jvp(np.linalg.eig, multiple_results=True)
def eig_tangent(t, ans, a):
    return eig_tangent_of(t, ans, a)


@jvp(np.linalg.eigvals)
def eigvals_tangent(t, ans, a):
    return eigvals_tangent_of(t, a)
