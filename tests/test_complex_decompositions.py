"""np.linalg.svd, qr, cholesky, eigh and eigvalsh of complex matrices (complex mode's rules,
rules/complex_decompositions.py): gradients against finite differences in the real and
imaginary directions of every element, and tangents against finite differences along
complex directions, on tall, square and wide matrices and stacks of them. The singular
vectors and eigenvectors are unique only up to a phase per column, so the losses here do
not depend on the phases (np.abs of the vectors, U diag(s) Vh, V diag(w) V^H); Q and R are
unique (R's diagonal is real)."""
import numpy as np
import pytest

from gradcheck import assert_grad_matches
from sgcompiler import grad
from test_forward import check_jvp

R = np.random.default_rng(16)


def cnormal(*shape):
    return R.normal(size=shape) + 1j * R.normal(size=shape)


def hermitian(n, *batch, upper_noise=True):
    """A Hermitian positive definite matrix, with noise (never read) in the other triangle
    and in the imaginary part of the diagonal."""
    a = cnormal(*batch, n, n)
    h = a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)
    noise = np.triu(cnormal(*batch, n, n), 1) if upper_noise else np.tril(cnormal(*batch, n, n), -1)
    return h + noise + 0.5j * np.eye(n) * R.normal(size=batch + (n, 1))


SHAPES = [(4, 3), (3, 3), (3, 5), (2, 4, 3), (2, 3, 4)]


def weights_for(shape):
    m, n = shape[-2:]
    k = min(m, n)
    return (R.normal(size=shape[:-1] + (k,)), R.normal(size=shape[:-2] + (k, n)),
            cnormal(*shape))


def svd_loss_for(w_u, w_v, c):
    def svd_loss(a):
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        return (np.sum(np.abs(u) ** 2 * w_u) + np.sum(np.abs(vh) * w_v) + np.sum(s ** 3)
                + np.real(np.sum(c * ((u * s[..., None, :]) @ vh))))
    return svd_loss


@pytest.mark.parametrize("shape", SHAPES)
def test_svd_of_a_complex_matrix(shape):
    f = svd_loss_for(*weights_for(shape))
    a = cnormal(*shape)
    assert_grad_matches(f, [a])
    check_jvp(f, (a,), (cnormal(*shape),))


def singular_values_cubed(a):
    return np.sum(np.linalg.svd(a, compute_uv=False) ** 3)


@pytest.mark.parametrize("shape", SHAPES)
def test_singular_values_of_a_complex_matrix(shape):
    a = cnormal(*shape)
    assert_grad_matches(singular_values_cubed, [a])
    check_jvp(singular_values_cubed, (a,), (cnormal(*shape),))


def full_svd_loss(a, c):
    u, s, vh = np.linalg.svd(a)          # full_matrices=True: the loss reads the first k
    k = s.shape[-1]
    return np.real(np.sum(c[:, :k] * (u[:, :k] * s) @ vh[:k])) + np.sum(np.abs(u[:, 0]))


def test_full_matrices_svd_of_a_complex_matrix():
    a, c = cnormal(5, 3), cnormal(5, 3)
    assert_grad_matches(full_svd_loss, [a, c], wrt=[0])


def hermitian_svd_loss(a, c):
    u, s, vh = np.linalg.svd(a, hermitian=True)
    return np.real(np.sum(c * (u * s) @ vh)) + np.sum(s ** 2)


def test_hermitian_svd_reads_the_lower_triangle():
    a, c = hermitian(3), cnormal(3, 3)
    assert_grad_matches(hermitian_svd_loss, [a, c], wrt=[0])
    check_jvp(lambda a: hermitian_svd_loss(a, c), (a,), (cnormal(3, 3),))


def qr_loss_for(c, w):
    def qr_loss(a):
        q, r = np.linalg.qr(a)
        return np.real(np.sum(c * q)) + np.sum(np.abs(r) ** 2 * w) + np.imag(np.sum(r * r))
    return qr_loss


@pytest.mark.parametrize("shape", SHAPES)
def test_qr_of_a_complex_matrix(shape):
    k = min(shape[-2:])
    f = qr_loss_for(cnormal(*shape[:-1], k), R.normal(size=shape[:-2] + (k, shape[-1])))
    a = cnormal(*shape)
    assert_grad_matches(f, [a])
    check_jvp(f, (a,), (cnormal(*shape),))


def r_alone(a, c):
    return np.real(np.sum(c * np.linalg.qr(a, mode="r"))) + np.sum(np.abs(np.linalg.qr(a, mode="r")))


def q_complete_wide(a, c):
    q, r = np.linalg.qr(a, mode="complete")
    return np.real(np.sum(c[:, :3] * q)) + np.real(np.sum(c * r))


@pytest.mark.parametrize("shape", [(5, 3), (3, 5)])
def test_qr_modes_of_a_complex_matrix(shape):
    a, c = cnormal(*shape), cnormal(min(shape), shape[1])
    assert_grad_matches(r_alone, [a, c], wrt=[0])
    check_jvp(lambda a: r_alone(a, c), (a,), (cnormal(*shape),))
    a, c = cnormal(3, 5), cnormal(3, 5)
    assert_grad_matches(q_complete_wide, [a, c], wrt=[0])


def cholesky_loss(a, c):
    l = np.linalg.cholesky(a)
    return np.real(np.sum(c * l)) + np.sum(np.abs(l) ** 3)


def cholesky_upper_loss(a, c):
    u = np.linalg.cholesky(a, upper=True)
    return np.real(np.sum(c * u)) + np.sum(np.abs(u))


@pytest.mark.parametrize("n, batch", [(3, ()), (4, ()), (3, (2,))])
def test_cholesky_of_a_hermitian_matrix(n, batch):
    a, c = hermitian(n, *batch), cnormal(*batch, n, n)
    assert_grad_matches(cholesky_loss, [a, c], wrt=[0])
    check_jvp(lambda a: cholesky_loss(a, c), (a,), (cnormal(*batch, n, n),))
    a = hermitian(n, *batch, upper_noise=False)
    assert_grad_matches(cholesky_upper_loss, [a, c], wrt=[0])
    check_jvp(lambda a: cholesky_upper_loss(a, c), (a,), (cnormal(*batch, n, n),))


def eigh_loss(a, w, c):
    e, v = np.linalg.eigh(a)
    return (np.sum(e ** 2 * w) + np.sum(np.abs(v) ** 2 * c)
            + np.real(np.sum(c * (v * e[..., None, :]) @ np.conj(np.swapaxes(v, -1, -2)))))


def eigh_upper_loss(a, w, c):
    e, v = np.linalg.eigh(a, UPLO="U")
    return np.sum(np.abs(v[..., 0, :]) ** 3 * e) + np.sum(e * w)


def eigenvalues_cubed(a):
    return np.sum(np.linalg.eigvalsh(a) ** 3) + np.sum(np.linalg.eigvalsh(a, UPLO="U"))


@pytest.mark.parametrize("n, batch", [(3, ()), (4, ()), (3, (2,))])
def test_eigh_of_a_hermitian_matrix(n, batch):
    a, w, c = hermitian(n, *batch), R.normal(size=batch + (n,)), R.normal(size=batch + (n, n))
    assert_grad_matches(eigh_loss, [a, w, c], wrt=[0])
    check_jvp(lambda a: eigh_loss(a, w, c), (a,), (cnormal(*batch, n, n),))
    a = hermitian(n, *batch, upper_noise=False)
    assert_grad_matches(eigh_upper_loss, [a, w, c], wrt=[0])
    check_jvp(lambda a: eigh_upper_loss(a, w, c), (a,), (cnormal(*batch, n, n),))
    a = a + np.triu(cnormal(*batch, n, n), 1)     # eigvalsh reads both triangles here
    assert_grad_matches(eigenvalues_cubed, [a])
    check_jvp(eigenvalues_cubed, (a,), (cnormal(*batch, n, n),))


def mixed(x, z):
    # a real matrix made complex on the way, and a real matrix's svd in complex mode
    u, s, vh = np.linalg.svd(x * np.exp(1j * z))
    q, r = np.linalg.qr(x)
    return np.sum(s * np.abs(u[:, :3]).sum(axis=0)) + np.real(np.sum(q * np.exp(1j * r[0, 0])))


def test_real_arguments_of_complex_code():
    x, z = R.normal(size=(4, 3)), R.normal(size=(4, 3))
    g = grad(mixed)(x, z)
    assert not np.iscomplexobj(g)
    assert_grad_matches(mixed, [x, z])
