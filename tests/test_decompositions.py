"""np.linalg.svd, qr, lstsq and eig through the compiler: what the rule table cannot show (the
single result of compute_uv=False and mode='r', refusals, forward mode with several
tangents). Their finite-difference rows are in rule_cases.py; end-to-end gradients in
specimens_numpy.py."""
import numpy as np
import pytest

from gradcheck import assert_grad_matches
from sgcompiler import SGCompilerError, grad
from test_forward import check_jvp

R = np.random.default_rng(7)


def svd_option(A, uv):
    out = np.linalg.svd(A, compute_uv=uv)
    return np.sum(out[0])


def test_compute_uv_must_be_a_literal():
    # it decides whether the result is one array or a tuple: the compiler must know which
    with pytest.raises(SGCompilerError, match="compute_uv.*literal"):
        grad(svd_option)(R.normal(size=(3, 3)), False)


def values_indexed(A):
    s = np.linalg.svd(A, compute_uv=False)
    return s[0] * 3.0 + s[-1]


def test_singular_values_alone_are_an_array_not_a_tuple():
    # s[0] is the largest singular value, not the first result of a tuple
    A = R.normal(size=(3, 4))
    u, _, vt = np.linalg.svd(A, full_matrices=False)
    expected = 3.0 * np.outer(u[:, 0], vt[0]) + np.outer(u[:, -1], vt[-1])
    np.testing.assert_allclose(grad(values_indexed)(A), expected, rtol=1e-10)


def reads_the_completion(A):
    u, s, vt = np.linalg.svd(A)
    return np.sum(u[:, -1] * A[:, 0])


def test_a_loss_on_the_arbitrary_columns_of_a_full_factor_is_refused():
    with pytest.raises(ValueError, match="full_matrices=False"):
        grad(reads_the_completion)(R.normal(size=(4, 2)))


def qr_complete(A):
    q, r = np.linalg.qr(A, mode="complete")
    return np.sum(q[:, -1] ** 3)


def test_the_completion_of_q_is_refused():
    with pytest.raises(ValueError, match="mode='reduced'"):
        grad(qr_complete)(R.normal(size=(4, 2)))


def decompositions(A, b):
    u, s, vt = np.linalg.svd(A, full_matrices=False)
    q, r = np.linalg.qr(A)
    x, residuals, rank, sv = np.linalg.lstsq(A, b, rcond=None)
    return np.sum(s) + np.sum(u[:, 0] * vt[0, 0]) + np.sum(r ** 2) + np.sum(q[0]) \
        + np.sum(x ** 3) + np.sum(residuals) + np.sum(sv ** 2)


def test_forward_mode_through_the_decompositions():
    A, b = R.normal(size=(5, 3)), R.normal(size=(5,))
    # both tangents at once: lstsq's tangent rule takes a_dot and b_dot together
    check_jvp(decompositions, (A, b), (R.normal(size=A.shape), R.normal(size=b.shape)))
    check_jvp(decompositions, (A, b), (None, R.normal(size=b.shape)))
    check_jvp(decompositions, (A, b), (R.normal(size=A.shape), None))


def values_and_r(A):
    return np.sum(np.linalg.svd(A, compute_uv=False) ** 2) + \
        np.sum(np.linalg.qr(A, mode="r") ** 2)


def test_forward_mode_of_the_single_results():
    A = R.normal(size=(3, 4))
    check_jvp(values_and_r, (A,), (R.normal(size=A.shape),))


def real_spectrum(n):
    p = R.normal(size=(n, n)) + 3.0 * np.eye(n)
    return p @ (np.linspace(-2.0, 2.0, n)[:, None] * np.linalg.inv(p))


def eigen_loss(A):
    w, v = np.linalg.eig(A)
    return np.sum(w ** 3) + np.sum(v[:, 0] ** 2 * A[0]) + np.sum(np.linalg.eigvals(A) * w)


def test_eig_of_a_real_spectrum_matches_finite_differences():
    A = real_spectrum(4)
    assert_grad_matches(eigen_loss, [A])
    check_jvp(eigen_loss, (A,), (R.normal(size=A.shape),))


def complex_eigen_loss(A):
    w, v = np.linalg.eig(A)
    return np.sum(np.abs(w) ** 3 + np.imag(w)) + np.sum(np.abs(v[:, 0]) ** 2 * A[0]) + \
        np.real(np.sum(v[1] * np.conj(v[2])))


def test_eig_of_a_complex_spectrum_matches_finite_differences():
    rotation = np.array([[0.1, -1.0, 0.3], [1.0, 0.2, 0.0], [0.4, 0.1, 0.9]])
    assert np.iscomplexobj(np.linalg.eigvals(rotation))
    assert_grad_matches(complex_eigen_loss, [rotation])
    check_jvp(complex_eigen_loss, (rotation,), (R.normal(size=rotation.shape),))
