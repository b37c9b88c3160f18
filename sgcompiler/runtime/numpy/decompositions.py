"""Helpers that generated code calls for matrix decompositions (rules/numpy/decompositions.py):
np.linalg.svd, qr and lstsq, their adjoints and their tangents.

Each works on stacks of matrices (the last two axes). A result that got no adjoint comes as
0.0 (`_given`). The singular vectors and the columns of Q are unique only up to sign (and
rotation, for repeated singular values): a loss that depends on that choice has no
gradient, and these formulas assume distinct nonzero singular values (a nonsingular R).
"""
from __future__ import annotations

import numpy as np

from ...errors import RuntimeRefusal
from ..core import as_float, float_dtype, mT
from .linalg import fold_lower, pinv_grad


def _given(g):
    return not (type(g) is float and g == 0.0)


def _gaps_inverse(s):
    """F[i, j] = 1 / (s[j]^2 - s[i]^2) off the diagonal, 0 on it."""
    n = np.shape(s)[-1]
    gaps = np.expand_dims(s ** 2, -2) - np.expand_dims(s ** 2, -1)
    off = ~np.eye(n, dtype=bool)
    return np.where(off, 1.0 / np.where(off, gaps, 1.0), 0.0)


def _extra_columns(name, g, k, axis):
    """The adjoint of the columns (axis -1) or rows (axis -2) beyond the first k: they are
    an arbitrary orthonormal completion, so a loss may not depend on them."""
    if not _given(g):
        return g
    extra = g[..., k:] if axis == -1 else g[..., k:, :]
    if np.any(extra != 0):
        raise RuntimeRefusal(f"{name}: the loss reads the columns of a full orthogonal factor "
                             "beyond min(m, n), which are not unique and have no gradient; "
                             "pass full_matrices=False (svd) or mode='reduced' (qr)")
    return g[..., :k] if axis == -1 else g[..., :k, :]


# --- svd ------------------------------------------------------------------------------------


def _svd_core(gu, gs, gvt, u, s, vt, a):
    """The adjoint of a = U diag(s) V^T (thin: U m x k, V n x k), Townsend 2016:
    U [diag(gs) + (F o (U^T gU - gU^T U)) S + S (F o (V^T gV - gV^T V))] V^T
    + (I - U U^T) gU S^-1 V^T + U S^-1 gV^T (I - V V^T)."""
    v = mT(vt)
    k = np.shape(s)[-1]
    inner = np.zeros(np.shape(s) + (k,), dtype=float_dtype(a))
    if _given(gs):
        inner = inner + np.expand_dims(as_float(gs, a), -2) * np.eye(k, dtype=inner.dtype)
    f = _gaps_inverse(s)
    out = 0.0
    if _given(gu):
        utg = mT(u) @ gu
        inner = inner + (f * (utg - mT(utg))) * np.expand_dims(s, -2)
        if np.shape(u)[-2] > k:
            out = out + (gu - u @ utg) / np.expand_dims(s, -2) @ vt
    if _given(gvt):
        gv = mT(gvt)
        vtg = vt @ gv
        inner = inner + np.expand_dims(s, -1) * (f * (vtg - mT(vtg)))
        if np.shape(v)[-2] > k:
            out = out + (u / np.expand_dims(s, -2)) @ mT(gv - v @ vtg)
    return u @ inner @ vt + out


def svd_grad(g, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    """Gradient of np.linalg.svd(a): of (U, s, Vt), or of s alone with compute_uv=False
    (U diag(g) V^T). With hermitian=True NumPy reads the lower triangle only."""
    if not compute_uv:
        u, _, vt = np.linalg.svd(a, full_matrices=False, hermitian=hermitian)
        grad = (u * np.expand_dims(as_float(g, a), -2)) @ vt
    else:
        gu, gs, gvt, u, s, vt = _svd_parts(g, ans)
        grad = _svd_core(gu, gs, gvt, u, s, vt, a)
    return fold_lower(grad) if hermitian else grad


def _svd_parts(g, ans):
    """(gU, gs, gVt, U, s, Vt) of the first k = min(m, n) columns of U and rows of Vt,
    from the adjoint g of np.linalg.svd(a)'s (U, s, Vt), real or complex."""
    (gu, gs, gvt), (u, s, vt) = g, ans
    k = np.shape(s)[-1]
    gu = _extra_columns("np.linalg.svd", gu, k, -1)
    gvt = _extra_columns("np.linalg.svd", gvt, k, -2)
    return gu, gs, gvt, u[..., :k], s, vt[..., :k, :]


def _symmetric_lower(t):
    tri = np.tril(t)
    return tri + mT(tri) - tri * np.eye(np.shape(t)[-1], dtype=bool)


def svd_tangent_of(t, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    """Tangent of np.linalg.svd(a) along t: P = U^T t V, ds = diag(P),
    dU = U (F o (P S + S P^T)) + (I - U U^T) t V S^-1,
    dV = V (F o (S P + P^T S)) + (I - V V^T) t^T U S^-1 (distinct singular values). The
    columns of U (rows of Vt) beyond min(m, n) of full_matrices=True are an arbitrary
    completion: their tangent is nan."""
    t = _symmetric_lower(t) if hermitian else t
    if not compute_uv:
        u, _, vt = np.linalg.svd(a, full_matrices=False, hermitian=hermitian)
        return np.diagonal(mT(u) @ t @ mT(vt), axis1=-2, axis2=-1)
    u_full, s, vt_full = ans
    k = np.shape(s)[-1]
    u, v = u_full[..., :k], mT(vt_full[..., :k, :])
    p = mT(u) @ t @ v
    f = _gaps_inverse(s)
    sr, sc = np.expand_dims(s, -2), np.expand_dims(s, -1)      # P S and S P
    du = u @ (f * (p * sr + sc * mT(p))) + (t @ v - u @ p) / sr
    dv = v @ (f * (sc * p + mT(p) * sr)) + (mT(t) @ u - v @ mT(p)) / sr
    return _nan_beyond(du, u_full), np.diagonal(p, axis1=-2, axis2=-1), \
        mT(_nan_beyond(dv, mT(vt_full)))


def _nan_beyond(d, full):
    """d (the tangent of the first k columns) padded with nan to the columns of `full`."""
    extra = np.shape(full)[-1] - np.shape(d)[-1]
    if not extra:
        return d
    return np.concatenate([d, np.full(np.shape(d)[:-1] + (extra,), np.nan)], axis=-1)


# --- qr -------------------------------------------------------------------------------------


def _copyltu(m):
    """The lower triangle of m mirrored onto the upper one."""
    return np.tril(m) + mT(np.tril(m, -1))


def _qr_square_grad(gq, gr, q, r):
    """Adjoint of a = Q R for m >= n (Q m x n, R n x n upper triangular, nonsingular):
    (gQ + Q copyltu(M)) R^-T with M = R gR^T - gQ^T Q."""
    m = r @ mT(gr) - mT(gq) @ q
    b = gq + q @ _copyltu(m)
    return mT(np.linalg.solve(r, mT(b)))


def _qr_parts(g, ans, a, mode):
    """The adjoints and factors the gradient of np.linalg.qr(a) reads, real or complex:
    (gQ, gR, Q, R) of Q's first k = min(m, n) columns and R's first k rows (gQ 0.0 with
    mode='r', where Q is made again; a gradient not given stays as it came)."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeRefusal(f"np.linalg.qr: no gradient for mode={mode!r}; use 'reduced', "
                             "'complete' or 'r'")
    k = min(np.shape(a)[-2], np.shape(a)[-1])
    if mode == "r":
        q, r = np.linalg.qr(a)
        return 0.0, g, q, r
    (gq, gr), (q, r) = g, ans
    gq = _extra_columns("np.linalg.qr", gq, k, -1)
    gr = gr[..., :k, :] if _given(gr) else gr      # R's rows beyond k are zeros
    return gq, gr, q[..., :k], r[..., :k, :]


def qr_grad(g, ans, a, mode="reduced"):
    """Gradient of np.linalg.qr(a): of (Q, R), or of R alone with mode='r'. A wide a
    (m < n) splits as [X | Y], R = [U | V]: X = Q U as above (with gQ + Y gV^T), gY = Q gV."""
    gq, gr, q, r = _qr_parts(g, ans, a, mode)
    m, n = np.shape(a)[-2], np.shape(a)[-1]
    k = min(m, n)
    gq = np.zeros(np.shape(q), dtype=float_dtype(a)) if not _given(gq) else gq
    gr = np.zeros(np.shape(r), dtype=float_dtype(a)) if not _given(gr) else as_float(gr, a)
    if m >= n:
        return _qr_square_grad(gq, gr, q, r)
    y, gv = a[..., k:], gr[..., k:]
    gx = _qr_square_grad(gq + y @ mT(gv), gr[..., :k], q, r[..., :k])
    return np.concatenate([gx, q @ gv], axis=-1)


def qr_tangent_of(t, ans, a, mode="reduced"):
    """Tangent of np.linalg.qr(a) along t, m >= n: X = Q^T t R^-1,
    W = tril(X, -1) - tril(X, -1)^T, dQ = Q W + (I - Q Q^T) t R^-1, dR = Q^T t - W R; a
    wide a splits as [X | Y], with dV = dQ^T Y + Q^T tY."""
    return _qr_tangent(t, ans, a, mode, mT)


def _qr_tangent(t, ans, a, mode, ct, real_diagonal=False):
    """The tangent of np.linalg.qr(a) along t, with ct the transpose (mT) or, for complex
    a, the conjugate transpose (mH, with real_diagonal: i Im diag(X) is added to W, so that
    R's diagonal stays real)."""
    if mode not in ("reduced", "r") and not (mode == "complete" and
                                            np.shape(a)[-2] <= np.shape(a)[-1]):
        raise RuntimeRefusal(f"np.linalg.qr: no tangent for mode={mode!r} of this shape; use "
                             "'reduced' or 'r'")
    q, r = np.linalg.qr(a) if mode == "r" else ans
    k = np.shape(r)[-2]
    tx, rx = t[..., :k], r[..., :k]
    rinv_t = ct(np.linalg.solve(ct(rx), ct(tx)))            # tX R^-1
    x = ct(q) @ rinv_t
    w = np.tril(x, -1) - ct(np.tril(x, -1))
    if real_diagonal:
        w = w + 1j * np.imag(np.diagonal(x, axis1=-2, axis2=-1))[..., None] * np.eye(k)
    dq = q @ w + rinv_t - q @ x
    dr = ct(q) @ t - w @ r
    if np.shape(a)[-1] > k:                                # the columns of Y: Q^T Y
        dr = np.concatenate([dr[..., :k], ct(dq) @ a[..., k:] + ct(q) @ t[..., k:]], -1)
    return dr if mode == "r" else (dq, dr)


# --- lstsq ----------------------------------------------------------------------------------


def _as_matrix(b):
    return b[..., None] if np.ndim(b) == 1 else b


def lstsq_grad_a(g, ans, a, b):
    """Gradient of (x, residuals, rank, s) = np.linalg.lstsq(a, b) for a, of constant
    rank: x = pinv(a) b (pinv_grad); residuals[j] = |b_j - a x_j|^2 gives -2 r_j x_j^T
    (a^T r = 0); s gives U diag(gs) V^T."""
    gx, gres, _, gs = g
    x, res = ans[0], ans[1]
    ga = np.zeros(np.shape(a), dtype=float_dtype(a))
    if _given(gx):
        gx = _as_matrix(as_float(gx, a))
        ga = ga + pinv_grad(gx @ mT(_as_matrix(b)), np.linalg.pinv(a), a)
    if _given(gres) and np.size(res):
        r = _as_matrix(b) - a @ _as_matrix(x)
        ga = ga - (2.0 * r * as_float(gres, a)) @ mT(_as_matrix(x))
    if _given(gs):
        u, _, vt = np.linalg.svd(a, full_matrices=False)
        ga = ga + (u * as_float(gs, a)) @ vt
    return ga


def lstsq_grad_b(g, ans, a, b):
    """Gradient of np.linalg.lstsq(a, b) for b: pinv(a)^T gx + 2 r gres."""
    gx, gres = g[0], g[1]
    x, res = ans[0], ans[1]
    gb = np.zeros(np.shape(_as_matrix(b)), dtype=float_dtype(b))
    if _given(gx):
        gb = gb + mT(np.linalg.pinv(a)) @ _as_matrix(as_float(gx, b))
    if _given(gres) and np.size(res):
        gb = gb + 2.0 * (_as_matrix(b) - a @ _as_matrix(x)) * as_float(gres, b)
    return np.reshape(gb, np.shape(b))


def lstsq_tangent_of(a_dot, b_dot, ans, a, b):
    """Tangent of (x, residuals, rank, s) = np.linalg.lstsq(a, b): dx = dP b + P db with
    dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P (constant rank);
    dres_j = 2 r_j^T (db_j - dA x_j); ds = diag(U^T dA V); the rank is constant."""
    x, res, rank, _ = ans
    p = np.linalg.pinv(a)
    bm, xm = _as_matrix(b), _as_matrix(x)
    a_dot = np.zeros(np.shape(a)) if np.ndim(a_dot) == 0 else a_dot
    b_dot = np.zeros(np.shape(bm)) if np.ndim(b_dot) == 0 else _as_matrix(b_dot)
    eye_m, eye_n = np.eye(np.shape(a)[0]), np.eye(np.shape(a)[1])
    dp = -p @ a_dot @ p + p @ p.T @ a_dot.T @ (eye_m - a @ p) + \
        (eye_n - p @ a) @ a_dot.T @ p.T @ p
    dx = dp @ bm + p @ b_dot
    r = bm - a @ xm
    dres = 2.0 * np.sum(r * (b_dot - a_dot @ xm), axis=0) if np.size(res) else \
        np.zeros(np.shape(res))
    u, _, vt = np.linalg.svd(a, full_matrices=False)
    ds = np.diagonal(u.T @ a_dot @ vt.T)
    return np.reshape(dx, np.shape(x)), dres, np.zeros(np.shape(rank)), ds


# --- eig (real spectra) ---------------------------------------------------------------------


def _real_spectrum(w, name):
    if np.iscomplexobj(w) and not np.any(np.imag(w) != 0):
        # (NumPy gives real eigenvalues a real dtype; the standard's eigvals is complex)
        raise RuntimeRefusal(f"{name}: the eigenvalues came back in a complex dtype, as "
                             "an array-API library's eig and eigvals give them; "
                             "sgcompiler differentiates them only as NumPy gives them "
                             "(real): compute this gradient with NumPy arrays")
    if np.iscomplexobj(w):
        raise RuntimeRefusal(f"{name}: the matrix has complex eigenvalues; sgcompiler "
                             "differentiates it only where every eigenvalue is real")


def _eig_gaps_inverse(w):
    """F[i, j] = 1 / (w[j] - w[i]) off the diagonal, 0 on it."""
    n = np.shape(w)[-1]
    gaps = np.expand_dims(w, -2) - np.expand_dims(w, -1)
    off = ~np.eye(n, dtype=bool)
    return np.where(off, 1.0 / np.where(off, gaps, 1.0), 0.0)


def eig_grad(g, ans, a):
    """Gradient of (w, V) = np.linalg.eig(a), real distinct eigenvalues, unit columns of V:
    V^-T M V^T with M = diag(gw) + F o (G - V^T V diag(G)), G = V^T gV."""
    (gw, gv), (w, v) = g, ans
    _real_spectrum(w, "np.linalg.eig")
    n = np.shape(w)[-1]
    m = np.zeros(np.shape(v), dtype=float_dtype(a))
    if _given(gw):
        m = m + np.expand_dims(as_float(gw, a), -2) * np.eye(n, dtype=m.dtype)
    if _given(gv):
        big_g = mT(v) @ gv
        diag = np.expand_dims(np.diagonal(big_g, axis1=-2, axis2=-1), -2)
        m = m + _eig_gaps_inverse(w) * (big_g - (mT(v) @ v) * diag)
    return np.linalg.solve(mT(v), m @ mT(v))


def eigvals_grad(g, a):
    """Gradient of the eigenvalues of a (real, distinct): V^-T diag(g) V^T."""
    w, v = np.linalg.eig(a)
    _real_spectrum(w, "np.linalg.eigvals")
    return np.linalg.solve(mT(v), np.expand_dims(as_float(g, a), -1) * mT(v))


def eig_tangent_of(t, ans, a):
    """Tangents of (w, V) = np.linalg.eig(a): P = V^-1 t V, dw = diag(P),
    dV = V (C - I o (V^T V C)) with C = F o P (the columns of V keep unit length)."""
    w, v = ans
    _real_spectrum(w, "np.linalg.eig")
    p = np.linalg.solve(v, t @ v)
    c = _eig_gaps_inverse(w) * p
    fix = np.diagonal(mT(v) @ v @ c, axis1=-2, axis2=-1)
    return np.diagonal(p, axis1=-2, axis2=-1), v @ (c - np.expand_dims(fix, -2) *
                                                     np.eye(np.shape(w)[-1]))


def eigvals_tangent_of(t, a):
    """Tangent of the eigenvalues of a: diag(V^-1 t V)."""
    w, v = np.linalg.eig(a)
    _real_spectrum(w, "np.linalg.eigvals")
    return np.diagonal(np.linalg.solve(v, t @ v), axis1=-2, axis2=-1)
