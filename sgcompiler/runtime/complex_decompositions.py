"""Helpers of complex mode for the Hermitian and unitary decompositions: np.linalg.svd, qr,
cholesky, eigh and eigvalsh of complex matrices (rules/complex_decompositions.py).

The convention is complex mode's (runtime/complex_numbers.py): an adjoint g of w pairs
with a change dw as Re(sum(g * dw)). The formulas are derived with G = conj(g), for which
the pairing is Re(tr(G^H dw)); each adjoint is the conjugate of what they give. A real
matrix keeps the real helper (a complex adjoint of a real value is then right too: the
real rule is linear in g, and real_like keeps its real part).

Gauges: the singular vectors and eigenvectors of a complex matrix are unique only up to a
phase per column (U -> U D, V -> V D for svd, D diagonal unitary), which LAPACK fixes by
its own algorithm. The tangents below take a fixed choice (V^H dV has a zero imaginary
diagonal for eigh and svd's V), and the adjoints are right for losses that do not depend
on the phases: np.abs of the vectors, U diag(s) V^H, v v^H, ... (a loss that depends on them
has no gradient). Q and R of qr have no such freedom: LAPACK's R has a real diagonal.
Functions of a Hermitian matrix read one triangle, and the imaginary part of its diagonal
not at all (`fold_hermitian`).
"""
from __future__ import annotations

import numpy as np

from .core import mT
from .numpy.decompositions import (_gaps_inverse, _given, _nan_beyond, _qr_parts,
                                   _qr_tangent, _svd_parts, qr_grad, qr_tangent_of, svd_grad,
                                   svd_tangent_of)
from .numpy.linalg import cholesky_grad, eigh_grad, eigvalsh_grad
from .tangents import cholesky_tangent_of, eigh_tangent_of


def mH(x):
    """The conjugate transpose of `x` (its last two axes)."""
    return np.conj(np.swapaxes(x, -1, -2))


def fold_hermitian(s, lower=True):
    """The gradient with respect to the matrix of which a function reads one triangle (the
    Hermitian matrix H it spans, the imaginary part of the diagonal ignored), from `s`
    with Re(sum(s * dH)) the change of the loss for Hermitian changes dH."""
    both = s + np.swapaxes(s, -1, -2).conj()
    tri = np.tril(both, -1) if lower else np.triu(both, 1)
    return tri + np.real(s) * np.eye(np.shape(s)[-1])


def hermitian_from(t, lower=True):
    """The Hermitian matrix that the triangle of `t` a function reads spans."""
    tri = np.tril(t, -1) if lower else np.triu(t, 1)
    diagonal = np.real(np.diagonal(t, axis1=-2, axis2=-1))
    return tri + mH(tri) + np.expand_dims(diagonal, -1) * np.eye(np.shape(t)[-1])


def _real_adjoint(g):
    """The adjoint of a real result (0.0 when it got none): its real part."""
    return np.real(g) if _given(g) else g


def _complex(a) -> bool:
    return np.iscomplexobj(a)


# --- cholesky -------------------------------------------------------------------------------


def complex_cholesky_grad(g, ans, a, upper=False):
    """Gradient of L = cholesky(a), A = L L^H: dL = L phi(L^-1 dA L^-H) (phi: the lower
    triangle, half the diagonal), so S = L^-T phi(L^T tril(g)) conj(L^-1), folded onto the
    triangle NumPy reads. With upper=True the factor is L^H, whose adjoint is conj(g^T)."""
    if not _complex(a):
        return cholesky_grad(g, ans, upper)
    low, gl = (mH(ans), mH(g)) if upper else (ans, g)
    p = mT(low) @ np.tril(gl)
    p = np.tril(p) - 0.5 * p * np.eye(np.shape(p)[-1])
    linv = np.linalg.inv(low)
    return fold_hermitian(mT(linv) @ p @ np.conj(linv), lower=not upper)


def complex_cholesky_tangent_of(t, ans, a, upper=False):
    """Tangent of the Cholesky factor: L phi(L^-1 dH L^-H), dH the Hermitian matrix of the
    triangle of t NumPy reads."""
    if not _complex(a) and not _complex(t):
        return cholesky_tangent_of(t, ans, upper)
    low = mH(ans) if upper else ans
    dh = hermitian_from(t, lower=not upper)
    inner = np.linalg.solve(low, mH(np.linalg.solve(low, mH(dh))))
    out = low @ (np.tril(inner) - 0.5 * inner * np.eye(np.shape(t)[-1]))
    return mH(out) if upper else out


# --- eigh, eigvalsh -------------------------------------------------------------------------


def _eigh_gaps(w):
    """F[i, j] = 1 / (w[j] - w[i]) off the diagonal, 0 on it."""
    n = np.shape(w)[-1]
    off = ~np.eye(n, dtype=bool)
    gaps = np.expand_dims(w, -2) - np.expand_dims(w, -1)
    return np.where(off, 1.0 / np.where(off, gaps, 1.0), 0.0)


def complex_eigh_grad(g, ans, a, UPLO="L"):
    """Gradient of (w, V) = eigh(a), a Hermitian with distinct eigenvalues: dw = Re diag(P)
    and dV = V (F o P) with P = V^H dH V, so S = conj(V) (diag(gw) + F o (V^T gV)) V^T,
    folded onto the triangle NumPy reads (for a loss that does not depend on the phases
    of the eigenvectors)."""
    if not _complex(a):
        return eigh_grad(g, ans, UPLO)
    (gw, gv), (w, v) = g, ans
    inner = np.zeros(np.shape(v), dtype=v.dtype)
    if _given(gw):
        inner = inner + np.expand_dims(np.real(gw), -2) * np.eye(np.shape(w)[-1])
    if _given(gv):
        inner = inner + _eigh_gaps(w) * (mT(v) @ gv)
    return fold_hermitian(np.conj(v) @ inner @ mT(v), lower=UPLO.upper() == "L")


def complex_eigvalsh_grad(g, a, UPLO="L"):
    """Gradient of the eigenvalues of a Hermitian a: conj(V) diag(g) V^T, folded."""
    if not _complex(a):
        return eigvalsh_grad(g, a, UPLO)
    _, v = np.linalg.eigh(a, UPLO=UPLO)
    return fold_hermitian((np.conj(v) * np.expand_dims(np.real(g), -2)) @ mT(v),
                          lower=UPLO.upper() == "L")


def complex_eigh_tangent_of(t, ans, a, UPLO="L"):
    """Tangents of (w, V) = eigh(a): P = V^H dH V, dw = Re diag(P), dV = V (F o P) (the
    phase of each column kept: V^H dV has a zero diagonal)."""
    lower = UPLO.upper() == "L"
    if not _complex(a) and not _complex(t):
        return eigh_tangent_of(t, ans, UPLO)
    w, v = ans
    p = mH(v) @ hermitian_from(t, lower) @ v
    return np.real(np.diagonal(p, axis1=-2, axis2=-1)), v @ (_eigh_gaps(w) * p)


# --- svd ------------------------------------------------------------------------------------


def _complex_svd_core(gu, gs, gvt, u, s, vt):
    """conj(the adjoint) of a = U diag(s) V^H (thin), with GU = conj(gU), GV = gVt^T:
    U [diag(gs) + (F o (J - J^H)) S + S (F o (K - K^H)) + i diag(Im J / s)] V^H
    + (GU - U J) S^-1 V^H + U S^-1 (GV - V K)^H, J = U^H GU, K = V^H GV."""
    k = np.shape(s)[-1]
    inner = np.zeros(np.shape(s) + (k,), dtype=u.dtype)
    if _given(gs):
        inner = inner + np.expand_dims(np.real(gs), -2) * np.eye(k)
    f = _gaps_inverse(s)
    out = 0.0
    if _given(gu):
        big_gu = np.conj(gu)
        j = mH(u) @ big_gu
        inner = inner + (f * (j - mH(j))) * np.expand_dims(s, -2)
        inner = inner + 1j * np.imag(np.diagonal(j, axis1=-2, axis2=-1))[..., None] \
            * np.eye(k) / np.expand_dims(s, -1)
        if np.shape(u)[-2] > k:
            out = out + (big_gu - u @ j) / np.expand_dims(s, -2) @ vt
    if _given(gvt):
        v, big_gv = mH(vt), mT(gvt)
        kk = vt @ big_gv
        inner = inner + np.expand_dims(s, -1) * (f * (kk - mH(kk)))
        if np.shape(v)[-2] > k:
            out = out + (u / np.expand_dims(s, -2)) @ mH(big_gv - v @ kk)
    return u @ inner @ vt + out


def complex_svd_grad(g, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    """Gradient of np.linalg.svd(a) for complex a: of (U, s, Vh), or of s alone (conj(U)
    diag(g) Vh^*); with hermitian=True NumPy reads the lower triangle."""
    if not _complex(a):
        return svd_grad(g, ans, a, full_matrices, compute_uv, hermitian)
    if not compute_uv:
        u, _, vt = np.linalg.svd(a, full_matrices=False, hermitian=hermitian)
        grad = np.conj((u * np.expand_dims(np.real(g), -2)) @ vt)
    else:
        grad = np.conj(_complex_svd_core(*_svd_parts(g, ans)))
    return fold_hermitian(grad) if hermitian else grad


def complex_svd_tangent_of(t, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    """Tangent of np.linalg.svd(a) along t: P = U^H t V, ds = Re diag(P),
    dU = U (F o (P S + S P^H) + i diag(Im P / s)) + (t V - U P) S^-1,
    dV = V (F o (S P + P^H S)) + (t^H U - V P^H) S^-1 (distinct nonzero singular values);
    nan for the columns beyond min(m, n) of full_matrices=True."""
    if not _complex(a) and not _complex(t):
        return svd_tangent_of(t, ans, a, full_matrices, compute_uv, hermitian)
    t = hermitian_from(t) if hermitian else t
    if not compute_uv:
        u, _, vt = np.linalg.svd(a, full_matrices=False, hermitian=hermitian)
        return np.real(np.diagonal(mH(u) @ t @ mH(vt), axis1=-2, axis2=-1))
    u_full, s, vt_full = ans
    k = np.shape(s)[-1]
    u, v = u_full[..., :k], mH(vt_full[..., :k, :])
    p = mH(u) @ t @ v
    f = _gaps_inverse(s)
    sr, sc = np.expand_dims(s, -2), np.expand_dims(s, -1)
    phase = 1j * np.imag(np.diagonal(p, axis1=-2, axis2=-1))[..., None] * np.eye(k) / sc
    du = u @ (f * (p * sr + sc * mH(p)) + phase) + (t @ v - u @ p) / sr
    dv = v @ (f * (sc * p + mH(p) * sr)) + (mH(t) @ u - v @ mH(p)) / sr
    return _nan_beyond(du, u_full), np.real(np.diagonal(p, axis1=-2, axis2=-1)), \
        mH(_nan_beyond(dv, mH(vt_full)))


# --- qr -------------------------------------------------------------------------------------


def _complex_qr_tall_grad(gq, gr, q, r):
    """conj(the adjoint) of a = Q R, m >= n, R with a real diagonal, from GQ, GR (the
    conjugates of the adjoints): [Q GR R^H + GQ - Q M + Q N] R^-H with M = Q^H GQ,
    N = tril(M' - M'^H, -1) + i Im diag(M'), M' = M - GR R^H."""
    m = mH(q) @ gq
    m2 = m - gr @ mH(r)
    n = np.tril(m2 - mH(m2), -1) + 1j * np.imag(np.diagonal(m2, axis1=-2, axis2=-1))[
        ..., None] * np.eye(np.shape(r)[-1])
    b = q @ (gr @ mH(r)) + gq - q @ m + q @ n
    return mH(np.linalg.solve(r, mH(b)))


def complex_qr_grad(g, ans, a, mode="reduced"):
    """Gradient of np.linalg.qr(a) for complex a: of (Q, R), or of R alone with mode='r'.
    A wide a (m < n) splits as [X | Y], R = [R_X | R_Y] with R_Y = Q^H Y: X as above, with
    GQ + Y GR_Y^H, and GY = Q GR_Y."""
    if not _complex(a):
        return qr_grad(g, ans, a, mode)
    gq, gr, q, r = _qr_parts(g, ans, a, mode)
    m, n = np.shape(a)[-2], np.shape(a)[-1]
    k = min(m, n)
    gq = np.conj(gq) if _given(gq) else np.zeros(np.shape(q), dtype=q.dtype)
    gr = np.conj(gr) if _given(gr) else np.zeros(np.shape(r), dtype=r.dtype)
    if m >= n:
        return np.conj(_complex_qr_tall_grad(gq, gr, q, r))
    y, gry = a[..., k:], gr[..., k:]
    gx = _complex_qr_tall_grad(gq + y @ mH(gry), gr[..., :k], q, r[..., :k])
    return np.conj(np.concatenate([gx, q @ gry], axis=-1))


def complex_qr_tangent_of(t, ans, a, mode="reduced"):
    """Tangent of np.linalg.qr(a) along t: C = Q^H t R^-1, W = tril(C, -1) - tril(C, -1)^H
    + i Im diag(C) (R's diagonal stays real), dQ = Q W + t R^-1 - Q C, dR = Q^H t - W R; a
    wide a splits as [X | Y], with dR_Y = dQ^H Y + Q^H tY."""
    if not _complex(a) and not _complex(t):
        return qr_tangent_of(t, ans, a, mode)
    return _qr_tangent(t, ans, a, mode, mH, real_diagonal=True)
