"""Functions that use a representative sample of the NumPy (and SciPy) rules, compiled end
to end. Each row of ROWS is (function, argument maker)."""
import numpy as np

from sgcompiler import stop_gradient


def elementwise(x):
    a = np.arcsin(x) + np.arccos(x) * np.arctan(x) + np.sinh(x) - np.cosh(x)
    b = np.arcsinh(x) + np.arctanh(x) + np.exp2(x) + np.log2(x + 2.0) + np.log10(x + 2.0)
    c = np.cbrt(x + 2.0) + np.reciprocal(x + 2.0) + np.deg2rad(x) + np.hypot(x, 1.5)
    d = np.logaddexp(x, 2.0 * x) + np.arctan2(x, 1.0 + x * x) + np.fmax(x, 0.1) \
        + np.fmin(x, -0.1) + np.true_divide(x, 3.0) + np.negative(x) + np.positive(x)
    return np.sum(a * b + c + d + np.sign(x) * x + np.logaddexp2(x, 0.5))


def statistics(x, w):
    v = x.var(ddof=1) + np.std(x, axis=0).sum() + x.std(axis=1, ddof=1).mean()
    c = np.sum(np.cumsum(x, axis=1) * x.cumprod(axis=0))
    m = np.median(x, axis=0).sum() + np.average(x, axis=1, weights=w).sum()
    n = np.nansum(x) + np.nanmean(x, axis=1).sum() + np.ptp(x, axis=0).sum()
    return v + c + m + n + np.max(x) - np.amin(x) + x.prod() + x.mean(axis=-1).sum()


def norms(x):
    return (np.linalg.norm(x) + np.sum(np.linalg.norm(x, ord=1, axis=0))
            + np.linalg.norm(x, "nuc") + np.linalg.norm(x, np.inf) + np.linalg.norm(x[0], 3))


def linear_algebra(A, b):
    L = np.linalg.cholesky(A)
    x = np.linalg.solve(A, b)
    d = np.linalg.det(A) + np.trace(np.linalg.inv(A)) + np.sum(L * L) + x @ x
    e = np.einsum("ij,ji->", A, A) + np.sum(np.kron(A, b)) + np.sum(np.tensordot(A, A, 1))
    f = np.vdot(b, b) + np.sum(np.outer(b, x)) + np.sum(np.linalg.eigvalsh(A) ** 2)
    return d + e + f + np.inner(b, x) + np.sum(np.diag(A) * np.diagonal(A)) + A.trace()


def einsum_forms(a, b):
    t = np.einsum("bij,bjk->bik", a, b)
    return np.einsum("bii->", t) + np.sum(np.einsum("...ij->...j", a) ** 2)


def shapes(x):
    a = np.flip(x, 0) * np.roll(x, 1, axis=1) + np.triu(x) - np.tril(x, -1)
    b = np.tile(x, (2, 1)).sum(axis=0) + np.repeat(x, 2, axis=1)[:, ::2].sum(axis=0)
    c = np.pad(x, 1, mode="edge") ** 2
    d = np.swapaxes(x[None], 0, 2)[:, 0, :] * np.moveaxis(x[..., None], 2, 0)[0].T
    e = np.sort(x, axis=1) * np.linspace(0.0, 1.0, 3) + np.diff(x, axis=0).sum()
    f = x.ravel() @ x.flatten() + np.broadcast_to(x[0], (4, 3)).sum()
    return np.sum(a * a) + np.sum(b) + np.sum(c) + np.sum(d) + np.sum(e) + f


def indexing(x, idx, mask):
    fancy = x[idx] * x[idx]
    masked = x[mask] ** 2
    positive = x[x > 0.5]
    taken = np.take(x, idx) + np.take_along_axis(x, np.argsort(x), axis=0)[:4]
    return np.sum(fancy) + np.sum(masked) + np.sum(positive) + np.sum(taken)


def casts(x):
    y = (x * 2.0).astype(float) + x.real
    z = x.astype(np.float64, copy=False) * x
    k = np.floor(x * 3.0).astype(int)
    return np.sum(y * x) + np.sum(z) + np.sum(k * x) + np.sum(np.asarray(x, dtype=float))


def constants(x):
    n = np.arange(x.shape[0]) + np.zeros_like(x) + np.ones(x.shape) + np.eye(3)[0]
    i = (np.argmax(x) + np.argsort(x)[0] + np.count_nonzero(x > 0)) % 3
    r = np.random.default_rng(0).normal(size=x.shape)
    return np.sum(x * n) + x[i] * np.sum(r * x) + np.sum(np.isnan(x) * x) + np.round(x[0])


def full_and_where(x, s):
    f = np.full((2, 3), s) * x
    return np.sum(np.where(x > 0, f, x * s)) + np.sum(np.full_like(x, s) ** 2)


def stopped_max_softmax(x):
    z = x - stop_gradient(np.max(x, axis=-1, keepdims=True))
    return np.sum(np.exp(z) / np.sum(np.exp(z), axis=-1, keepdims=True) * np.arange(3.0))


ROWS = [
    (elementwise, lambda r: [r.uniform(-0.8, 0.8, size=(2, 3))]),
    (statistics, lambda r: [r.normal(size=(3, 4)), r.uniform(0.5, 2, size=(4,))]),
    (norms, lambda r: [r.normal(size=(3, 4))]),
    (linear_algebra, lambda r: [(lambda m: m @ m.T + 3 * np.eye(3))(r.normal(size=(3, 3))),
                                r.normal(size=(3,))]),
    (einsum_forms, lambda r: [r.normal(size=(2, 3, 3)), r.normal(size=(2, 3, 3))]),
    (shapes, lambda r: [r.normal(size=(2, 3))]),
    (indexing, lambda r: [r.normal(size=(5,)), np.array([0, 2, 2, 4]),
                          np.array([True, False, True, True, False])]),
    (casts, lambda r: [r.normal(size=(2, 3))]),
    (constants, lambda r: [r.normal(size=(3,))]),
    (full_and_where, lambda r: [r.normal(size=(2, 3)), float(r.normal())]),
    (stopped_max_softmax, lambda r: [r.normal(size=(2, 3))]),
]

try:
    import scipy.linalg
    import scipy.special as sp
except ImportError as exc:
    sp = None
    SCIPY_MISSING = f"SciPy is not installed ({exc}): the SciPy specimens are not run"
else:
    SCIPY_MISSING = ""

    def special(x, y):
        a = sp.expit(x) + sp.logit(sp.expit(x)) + sp.erf(x) + sp.gammaln(y) + sp.xlogy(y, y)
        b = sp.logsumexp(x, axis=0) + sp.softmax(x, axis=0)[0] + sp.log_softmax(x)[1]
        return np.sum(a) + np.sum(b) + sp.logsumexp(x)

    def scipy_linalg(A, b):
        x = scipy.linalg.solve(A, b, assume_a="pos")
        return np.sum(x * b) + np.sum(scipy.linalg.expm(0.1 * A)) + scipy.linalg.det(A)

    ROWS += [
        (special, lambda r: [r.normal(size=(2, 3)), r.uniform(0.5, 2, size=(2, 3))]),
        (scipy_linalg, lambda r: [(lambda m: m @ m.T + 3 * np.eye(3))(r.normal(size=(3, 3))),
                                  r.normal(size=(3,))]),
    ]


def sequences(x, y):
    c = np.concatenate([x, y], axis=0)
    s = np.stack((x, 2.0 * x), axis=-1)
    h = np.hstack([x, y[:2]]) + np.vstack([x, y])[1:3, :1]
    return np.sum(c ** 2) + np.sum(s[..., 1] * s[..., 0]) + np.sum(h * h)


def split_parts(x):
    a, b, c = np.split(x, 3)
    left, right = np.array_split(x, [2], axis=0)
    return np.sum(a * c) + np.sum(left ** 3) + np.sum(b)


def eigen(A):
    w, v = np.linalg.eigh(A)
    sign, logdet = np.linalg.slogdet(A)
    return np.sum(w ** 2) + np.sum(v[:, -1] ** 2 * w) + logdet * sign


def eigenvalues_only(A):
    w, _ = np.linalg.eigh(A)
    return np.sum(np.log(w))


def chain(A, B):
    return np.sum(np.linalg.multi_dot([A, B, A.T]))


def from_scalars(x, s):
    v = np.array([x[0] * s, x[1], s * s])
    m = np.array([[x[0], x[1]], [x[2], s]])
    return np.sum(v * v) + np.sum(m @ m)


ROWS += [
    (sequences, lambda r: [r.normal(size=(2, 3)), r.normal(size=(3, 3))]),
    (split_parts, lambda r: [r.normal(size=(6, 2))]),
    (eigen, lambda r: [(lambda m: m @ m.T + 3 * np.eye(3))(r.normal(size=(3, 3)))]),
    (eigenvalues_only, lambda r: [(lambda m: m @ m.T + 3 * np.eye(3))(r.normal(size=(3, 3)))]),
    (chain, lambda r: [r.normal(size=(2, 3)), r.normal(size=(3, 3))]),
    (from_scalars, lambda r: [r.normal(size=(3,)), float(r.normal())]),
]


def attributes(x):
    return np.sum(x.mT @ x.real) + np.sum(x.mT * x.mT.real)


if hasattr(np, "matrix_transpose"):          # x.mT is new in NumPy 2
    ROWS.append((attributes, lambda r: [r.normal(size=(2, 3, 4))]))


def broadcast_seed(x, y):
    """The seed of np.sum/np.mean reaching a broadcast operand (y, or a scalar sum): its
    adjoint must count the copies (a regression: it once got the seed itself)."""
    a = np.sum(x * 2.0 + y) + np.sum(np.sin(x) + np.sum(x, axis=0).sum())
    b = np.mean(np.where(x > 0, y, 1.0)) + np.sum(x - y) + np.mean(np.fmod(y, 0.7) + x)
    return a + b


ROWS.append((broadcast_seed, lambda r: [r.normal(size=(2, 3)), r.uniform(0.1, 0.5, size=(3,))]))


def svd_parts(A):
    """Losses that do not depend on the signs of the singular vectors."""
    u, s, vt = np.linalg.svd(A, full_matrices=False)
    first = np.outer(u[:, 0], vt[0]) * s[0]
    return np.sum(s ** 2) + np.sum(first * A) + np.sum(u[:, 1] ** 2 * A[:, 0])


def singular_values(A):
    s = np.linalg.svd(A, compute_uv=False)
    return np.sum(np.log(s)) + s[0] ** 2


def square_svd(A):
    result = np.linalg.svd(A)
    return np.sum(result[1] * 2.0) + np.sum(result[0][:, 0] ** 2 * A[0])


def qr_parts(A):
    q, r = np.linalg.qr(A)
    return np.sum(q[:, 0] * A[:, 0]) + np.sum(r ** 3) + np.sum(np.linalg.qr(A, mode="r") ** 2)


def least_squares(A, b):
    x, residuals, rank, s = np.linalg.lstsq(A, b, rcond=None)
    return np.sum(x ** 2) + np.sum(residuals) + np.sum(s) * rank


ROWS += [
    (svd_parts, lambda r: [r.normal(size=(4, 3))]),
    (svd_parts, lambda r: [r.normal(size=(3, 5))]),
    (singular_values, lambda r: [r.normal(size=(3, 4))]),
    (square_svd, lambda r: [r.normal(size=(3, 3))]),
    (qr_parts, lambda r: [r.normal(size=(4, 3))]),
    (qr_parts, lambda r: [r.normal(size=(3, 4))]),
    (least_squares, lambda r: [r.normal(size=(5, 3)), r.normal(size=(5,))]),
    (least_squares, lambda r: [r.normal(size=(5, 3)), r.normal(size=(5, 2))]),
]


def filters(x, k):
    c = np.convolve(x, k, mode="same")
    d = np.correlate(x, k)
    return np.sum(c ** 2) + np.sum(d ** 3) + np.sum(np.gradient(x, 0.5) * x)


def gradient_axes(F):
    """Several axes: np.gradient returns a tuple of arrays of F's shape."""
    gy, gx = np.gradient(F, 0.5, 2.0)
    both = np.gradient(F, axis=(0, 1), edge_order=2)
    return np.sum(gy * gx) + np.sum(both[1] ** 2) + np.sum(np.fft.fftshift(F) * F)


def reorders(x):
    p = np.partition(x, 2)
    r = np.rollaxis(np.reshape(x, (2, 3)), 1)
    return p[0] * 3.0 + np.sum(p[3:] ** 2) + np.sum(r * r[:, :1]) + np.sum(np.i0(x)) \
        + np.sum(np.real_if_close(x) ** 3) + np.sum(np.fft.ifftshift(x) * x)


ROWS += [
    (filters, lambda r: [r.normal(size=(6,)), r.normal(size=(3,))]),
    (gradient_axes, lambda r: [r.normal(size=(4, 5))]),
    (reorders, lambda r: [r.normal(size=(6,))]),
]
