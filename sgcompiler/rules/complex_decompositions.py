"""Complex mode's rules for the Hermitian and unitary decompositions: np.linalg.svd, qr,
cholesky, eigh and eigvalsh of complex matrices (real ones keep the real rules' helpers).
The convention, the gauges and the formulas are in runtime/complex_decompositions.py."""
import numpy as np

from ..runtime.complex_decompositions import (complex_cholesky_grad,
                                              complex_cholesky_tangent_of, complex_eigh_grad,
                                              complex_eigh_tangent_of, complex_eigvalsh_grad,
                                              complex_qr_grad, complex_qr_tangent_of,
                                              complex_svd_grad, complex_svd_tangent_of)
from .registry import complex_jvp, complex_vjp, present


@complex_vjp(np.linalg.svd, multiple_results=True, single_result_when=("compute_uv", False),
             notes="complex a: distinct nonzero singular values; the loss must not depend "
                   "on the phases of the singular vectors (U -> U D, Vh -> D^H Vh for a "
                   "diagonal unitary D); as for real a otherwise")
def svd(g, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    return complex_svd_grad(g, ans, a, full_matrices, compute_uv, hermitian)


@complex_jvp(np.linalg.svd, multiple_results=True)
def svd_tangent(t, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    return complex_svd_tangent_of(t, ans, a, full_matrices, compute_uv, hermitian)


@complex_vjp(*present(np.linalg, "svdvals"), notes="complex x: distinct nonzero singular values")
def svdvals(g, ans, x):
    return complex_svd_grad(g, ans, x, False, False)


@complex_jvp(*present(np.linalg, "svdvals"))
def svdvals_tangent(t, ans, x):
    return complex_svd_tangent_of(t, ans, x, False, False)


@complex_vjp(np.linalg.qr, multiple_results=True, single_result_when=("mode", "r"),
             notes="complex a: full rank; R has a real diagonal, as LAPACK returns it; as "
                   "for real a otherwise")
def qr(g, ans, a, mode="reduced"):
    return complex_qr_grad(g, ans, a, mode)


@complex_jvp(np.linalg.qr, multiple_results=True)
def qr_tangent(t, ans, a, mode="reduced"):
    return complex_qr_tangent_of(t, ans, a, mode)


@complex_vjp(np.linalg.cholesky,
             notes="Hermitian positive definite a; the gradient is on the triangle NumPy "
                   "reads (the imaginary part of the diagonal is not read)")
def cholesky(g, ans, a, *, upper=False):
    return complex_cholesky_grad(g, ans, a, upper)


@complex_jvp(np.linalg.cholesky)
def cholesky_tangent(t, ans, a, *, upper=False):
    return complex_cholesky_tangent_of(t, ans, a, upper)


@complex_vjp(np.linalg.eigh, multiple_results=True,
             notes="Hermitian a, distinct eigenvalues; the loss must not depend on the "
                   "phases of the eigenvectors; the gradient is on the triangle NumPy reads")
def eigh(g, ans, a, UPLO="L"):
    return complex_eigh_grad(g, ans, a, UPLO)


@complex_jvp(np.linalg.eigh, multiple_results=True)
def eigh_tangent(t, ans, a, UPLO="L"):
    return complex_eigh_tangent_of(t, ans, a, UPLO)


@complex_vjp(np.linalg.eigvalsh,
             notes="Hermitian a, distinct eigenvalues; the gradient is on the triangle NumPy "
                   "reads")
def eigvalsh(g, ans, a, UPLO="L"):
    return complex_eigvalsh_grad(g, a, UPLO)


@complex_jvp(np.linalg.eigvalsh)
def eigvalsh_tangent(t, ans, a, UPLO="L"):
    return complex_eigh_tangent_of(t, np.linalg.eigh(a, UPLO), a, UPLO)[0]
