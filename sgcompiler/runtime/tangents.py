"""Helpers that generated forward-mode (tangent) code calls; see rules/derive.py and the
`@jvp` rules next to each adjoint rule in rules/."""
from __future__ import annotations

import numpy as np

from ..errors import RuntimeRefusal
from .core import float_dtype
from .numpy.linalg import einsum_grad


def zeros_tangent(x):
    """The zero tangent of a value: zeros of an array's shape, 0.0 for a number, the same
    structure for a list, tuple or dict (a parameter tree)."""
    if isinstance(x, dict):
        return {k: zeros_tangent(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(zeros_tangent(v) for v in x) if not hasattr(x, "_fields") else \
            type(x)(*(zeros_tangent(v) for v in x))
    if isinstance(x, np.ndarray):
        return np.zeros_like(x, dtype=np.result_type(x, float))
    if isinstance(x, np.generic):
        return np.result_type(x, float).type(0.0)
    return 0.0


def broadcast_like(t, ans):
    """A tangent with the shape of the result `ans` (a contribution may have an operand's
    smaller shape: the tangent of x + c is x's, broadcast)."""
    shape = np.shape(ans)
    if np.shape(t) == shape:
        return t
    return np.array(np.broadcast_to(t, shape))


def added_tangent(a_dot, b_dot, a, b, ans):
    """The tangent of ans = a + b where one side's may be None (zero at compile time): a
    join's (two lists or tuples: each side's tangent at its items' places, zeros for the
    side without one), else NumPy's sum broadcast to the result's shape."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return _items_tangent(a_dot, a) + _items_tangent(b_dot, b)
    t = a_dot if b_dot is None else b_dot if a_dot is None else a_dot + b_dot
    return broadcast_like(t, ans)


def _items_tangent(t, x):
    """The tangent of a list or tuple `x` as one of its type (zeros for None or 0.0)."""
    if isinstance(t, (list, tuple)):
        return type(x)(t)
    return zeros_tangent(x)


def cast_tangent(t, dtype):
    """The tangent of x.astype(dtype): cast like the value; zero for an integer cast."""
    if np.dtype(dtype).kind not in "fc":
        return np.zeros(np.shape(t), dtype=dtype)
    return np.asarray(t).astype(dtype)


def choose_tangent(t, ans, a, axis=None, keepdims=False):
    """Tangent of max/min: the tangent at the chosen element (the mean of the tangents at
    ties, as the adjoint splits ties evenly)."""
    kept = ans if keepdims or axis is None else np.expand_dims(ans, axis)
    chosen = a == kept
    total = np.sum(np.where(chosen, t, 0.0), axis=axis, keepdims=keepdims)
    return total / np.sum(chosen, axis=axis, keepdims=keepdims)


def zero_ends(t, prepend, append, axis):
    """np.diff's prepend and append for a tangent: zeros where the values were given."""
    def zero(v):
        return None if v is None else np.zeros_like(np.asarray(v, dtype=np.result_type(t)))
    if prepend is None and append is None:
        return ()
    return (np._NoValue if prepend is None else zero(prepend),
            np._NoValue if append is None else zero(append))


def diff_padded(t, n=1, axis=-1, prepend=None, append=None):
    """np.diff(t, n, axis, prepend, append) with zeros where values were prepended and
    appended: the tangent of np.diff, and the transpose of diff_grad (rules/runtime.py)."""
    return np.diff(t, n, axis, *zero_ends(t, prepend, append, axis))


def cumprod_tangent_of(t, a, axis=None):
    """Tangent of np.cumprod(a, axis), exact with zeros: d_k = d_{k-1} a_k + p_{k-1} t_k."""
    a = np.asarray(a)
    t = np.broadcast_to(t, a.shape)
    if axis is None:
        a, t, axis = a.ravel(), t.ravel(), 0
    return np.moveaxis(cumprod_recurrence(np.moveaxis(a, axis, 0), np.moveaxis(t, axis, 0)),
                       0, axis)


def cumprod_recurrence(a, t):
    """d_k = d_{k-1} a_k + p_{k-1} t_k along axis 0, with p_k = a_0 ... a_k. t's items may
    have more leading axes than a's (a batch of directions): they broadcast."""
    out = np.empty(t.shape, dtype=np.result_type(a, t, float))
    d = np.zeros(t.shape[1:], dtype=out.dtype)
    p = np.ones(a.shape[1:], dtype=out.dtype)
    for k in range(a.shape[0]):
        d = d * a[k] + p * t[k]
        p = p * a[k]
        out[k] = d
    return out


def _mT(x):
    return np.swapaxes(x, -1, -2)


def solve_tangent_a(t, ans, a, b):
    """Tangent of np.linalg.solve(a, b) for a: -solve(a, t @ x), x the solution (a
    vector b stays a vector: NumPy 2's rule for a 1-D b)."""
    if np.ndim(b) == 1 and np.ndim(a) > 2:
        return -np.linalg.solve(a, t @ ans[..., None])[..., 0]
    return -np.linalg.solve(a, t @ ans)


def _symmetric_from(t, lower=True):
    """The symmetric matrix a routine that reads one triangle of t sees."""
    tri = np.tril(t) if lower else np.triu(t)
    return tri + _mT(tri) - tri * np.eye(t.shape[-1], dtype=bool)


def cholesky_tangent_of(t, ans, upper=False):
    """Tangent of the Cholesky factor L (A = L L^T): L phi(L^-1 S L^-T), S the symmetric
    matrix of the triangle NumPy reads, phi the lower triangle with half the diagonal."""
    L = _mT(ans) if upper else ans
    s = _symmetric_from(t, lower=not upper)
    inner = np.linalg.solve(L, _mT(np.linalg.solve(L, _mT(s))))
    phi = np.tril(inner) - 0.5 * inner * np.eye(t.shape[-1])
    out = L @ phi
    return _mT(out) if upper else out


def eigh_tangent_of(t, ans, UPLO="L"):
    """Tangents of (w, V) = np.linalg.eigh(a): w_dot = diag(V^T S V), V_dot = V (F * V^T S V)
    with F[i, j] = 1 / (w[j] - w[i]) off the diagonal (distinct eigenvalues)."""
    w, v = ans
    s = _symmetric_from(t, lower=UPLO == "L")
    inner = _mT(v) @ s @ v
    w_dot = np.diagonal(inner, axis1=-2, axis2=-1)
    gaps = w[..., None, :] - w[..., :, None]
    n = w.shape[-1]
    f = np.where(np.eye(n, dtype=bool), 0.0, 1.0 / np.where(np.eye(n, dtype=bool), 1.0, gaps))
    return w_dot, v @ (f * inner)


def cumulative_prod_tangent_of(t, x, axis=None, include_initial=False):
    """Tangent of np.cumulative_prod: cumprod's, with a zero first if include_initial."""
    out = cumprod_tangent_of(t, x, axis)
    if include_initial:
        first = np.zeros_like(np.take(out, [0], axis=axis if axis is not None else 0))
        out = np.concatenate([first, out], axis=axis if axis is not None else 0)
    return out


def matrix_power_tangent_of(t, a, n):
    """Tangent of a^n: the sum over k of a^k t a^(n-1-k); for n < 0, that of inv(a)^-n
    with inv(a)'s tangent -inv(a) t inv(a); zero for n = 0."""
    if n == 0:
        return np.zeros(np.shape(a), dtype=np.result_type(a, t, float))
    if n < 0:
        inv = np.linalg.inv(a)
        return matrix_power_tangent_of(-(inv @ t @ inv), inv, -n)
    eye = np.eye(np.shape(a)[-1], dtype=np.result_type(a, float))
    powers = [np.broadcast_to(eye, np.shape(a))]
    for _ in range(n - 1):
        powers.append(powers[-1] @ a)
    return sum(powers[k] @ t @ powers[n - 1 - k] for k in range(n))


def svdvals_tangent_of(t, a):
    """Tangent of the singular values s of a: s_dot[i] = u_i^T t v_i (distinct nonzero
    singular values)."""
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    return np.sum((_mT(u) @ t) * vh, axis=-1)


def pinv_tangent_of(t, ans, a, hermitian=False):
    """Tangent of P = pinv(a), for a of constant rank (Golub and Pereyra 1973):
    -P t P + P P^T t^T (I - A P) + (I - P A) t^T P^T P. With hermitian=True NumPy reads
    the lower triangle of a (and of its tangent) only."""
    if hermitian:
        a, t = _symmetric_from(a), _symmetric_from(t)
    p, pt = ans, _mT(ans)
    m, n = np.shape(a)[-2], np.shape(a)[-1]
    dtype = np.result_type(a, t, float)
    left = np.eye(m, dtype=dtype) - a @ p        # (I - A P), m x m
    right = np.eye(n, dtype=dtype) - p @ a       # (I - P A), n x n
    return -(p @ t @ p) + p @ pt @ _mT(t) @ left + right @ _mT(t) @ pt @ p


def multi_dot_tangent_of(t, arrays):
    """Tangent of np.linalg.multi_dot(arrays): the sum over the arrays of the product with
    that one array replaced by its tangent (a 0.0 in the list of tangents: none)."""
    total = 0.0
    for i, ti in enumerate(t):
        if np.ndim(ti) == 0:          # every operand of multi_dot is at least 1-D
            continue
        total = total + np.linalg.multi_dot(list(arrays[:i]) + [ti] + list(arrays[i + 1:]))
    return total


# --- einsum_grad (grad of grad and forward over reverse through np.einsum) -------------------


def _string_operands(subscripts, operands):
    """The operands (up to the last one given) of an einsum written with a subscript string."""
    if not isinstance(subscripts, str):
        raise RuntimeRefusal("second derivatives of np.einsum with index lists are not "
                             "supported; write its subscripts as one string ('ij,jk->ik')")
    operands = list(operands)
    while operands and operands[-1] is None:
        operands.pop()
    return operands


def einsum_with(i, t, subscripts, x0, x1=None, x2=None, x3=None, x4=None, x5=None, x6=None,
                x7=None):
    """np.einsum(subscripts, x0, x1, ...) with operand i replaced by t: the tangent of an
    einsum along one operand, and the transpose of einsum_grad(g, i, ...) in g."""
    operands = _string_operands(subscripts, (x0, x1, x2, x3, x4, x5, x6, x7))
    operands[i] = t
    return np.einsum(subscripts, *operands)


def einsum_grad_with(g, i, k, t, subscripts, x0, x1=None, x2=None, x3=None, x4=None,
                     x5=None, x6=None, x7=None):
    """einsum_grad(g, i, subscripts, ...) with operand k replaced by t: it is linear in
    every operand but i, which it reads only for its shape (zeros when k is i, and None
    when there is no operand k)."""
    operands = _string_operands(subscripts, (x0, x1, x2, x3, x4, x5, x6, x7))
    if k >= len(operands):
        return None
    if k == i:
        return np.zeros(np.shape(operands[k]), dtype=float_dtype(g, operands[k]))
    operands[k] = t
    return einsum_grad(g, i, subscripts, *operands)


# --- np.einsum's derivatives with operands replaced, at every order ---------------------------
#
# einsum_replacing(subscripts, where, x0..x7, t0..t7) is np.einsum(subscripts, x0, ...) with
# operand where[j] replaced by t_j (the first of two entries for one operand wins), and
# einsum_grad_replacing(g, m, ...) the gradient for operand m of that einsum (which reads
# operand m for its shape only). Their adjoints and tangents are the same two with one more
# entry put first in `where` and its value first in t0.., so they close at every order
# (rules/third_order.py); unless_in(v, k, where) is v, or zeros where k is in `where` (an
# operand replaced, or the gradient's own, which the einsum does not read).


def _replaced(subscripts, where, operands, replacements):
    operands = _string_operands(subscripts, operands)
    where = tuple(where)
    if len(where) > len(replacements):
        extra = [w for j, w in enumerate(where) if j >= len(replacements)
                 and w not in where[:j] and w < len(operands)]
        if extra:
            raise RuntimeRefusal(f"np.einsum({subscripts!r}): a derivative of order above "
                                 f"{len(replacements)} through this einsum is not supported")
    for j in reversed(range(min(len(where), len(replacements)))):
        if where[j] < len(operands):
            operands[where[j]] = replacements[j]
    return operands


def einsum_replacing(subscripts, where, x0, x1=None, x2=None, x3=None, x4=None, x5=None,
                     x6=None, x7=None, t0=None, t1=None, t2=None, t3=None, t4=None, t5=None,
                     t6=None, t7=None):
    """np.einsum(subscripts, x0, x1, ...) with operand where[j] replaced by t_j (the first
    entry for an operand wins)."""
    operands = _replaced(subscripts, where, (x0, x1, x2, x3, x4, x5, x6, x7),
                         (t0, t1, t2, t3, t4, t5, t6, t7))
    return np.einsum(subscripts, *operands)


def einsum_grad_replacing(g, m, subscripts, where, x0, x1=None, x2=None, x3=None, x4=None,
                          x5=None, x6=None, x7=None, t0=None, t1=None, t2=None, t3=None,
                          t4=None, t5=None, t6=None, t7=None):
    """einsum_grad(g, m, subscripts, ...) of the einsum with operand where[j] replaced by
    t_j (None when there is no operand m)."""
    operands = _replaced(subscripts, where, (x0, x1, x2, x3, x4, x5, x6, x7),
                         (t0, t1, t2, t3, t4, t5, t6, t7))
    if m >= len(operands):
        return None
    return einsum_grad(g, m, subscripts, *operands)


def entry(where, j):
    """where[j], or 8 (no operand: the rules' gradient for a t_j not given is None)."""
    return where[j] if j < len(where) else 8


def unless_in(v, k, where):
    """v, or zeros of its shape where k is one of `where`."""
    if v is None or k not in tuple(where):
        return v
    return np.zeros(np.shape(v), dtype=float_dtype(v))
