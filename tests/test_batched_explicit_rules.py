"""Batched Hessians through explicit tangent rules that are not elementwise (reductions
max/min/std/var/ptp/median/norm/prod/cumprod/logsumexp/softmax, casts, solve, det,
slogdet, inv, cholesky, eigh, eigvalsh, svd, qr, pinv, lstsq, einsum's gradient):
rules/registry.batchable and runtime/batched_rules.py. Each Hessian must run batched (no
PerColumnWarning), agree with one jvp per column to 1e-9 and with central differences of
the gradient, on several shapes, with broadcasting."""
import warnings

import numpy as np
import pytest
import scipy.linalg
import scipy.special

from sgcompiler import PerColumnWarning, derivatives, hessian, jacobian
from gradcheck import fd_hessian

R = np.random.default_rng(1414)


def maxes(x, c):
    return np.sum(np.max(x * c, axis=0) ** 2) + np.min(np.sin(x)) * np.amax(x ** 2)


def maxes_last(x, c):
    return np.sum(np.tanh(np.max(x * c, axis=-1, keepdims=True)) * x)


def stds(x, c):
    return np.std(x * c) + np.sum(np.var(np.sin(x), axis=0, ddof=1) ** 2)


def stds_axis(x, c):
    return np.sum(np.std(x * c, axis=-1, keepdims=True) * x) + np.nanvar(x)


def spreads(x, c):
    return np.sum(np.ptp(x * c, axis=0) ** 2) + np.median(np.sin(x)) ** 2 + \
        np.nanstd(x * c) * np.sum(x)


def norms(x, c):
    return np.linalg.norm(x * c) ** 3 + np.sum(np.linalg.norm(np.tanh(x), axis=0))


def lse(x, c):
    return np.sum(scipy.special.logsumexp(x * c, axis=0) ** 2) + \
        scipy.special.logsumexp(np.sin(x))


def lse_weighted(x, c):
    return scipy.special.logsumexp(x, b=c ** 2 + 1.0) * np.sum(x ** 2)


def solve_b(b, A):
    return np.sum(np.linalg.solve(A, np.sin(b)) ** 2)


def solve_a(A, b):
    return np.sum(np.linalg.solve(A, b) ** 2)


def dets(A, c):
    return np.linalg.det(A * c) ** 2 + np.linalg.slogdet(A @ A.T + 3.0 * np.eye(len(A)))[1]


def inverses(A, c):
    return np.sum(np.linalg.inv(A + c) ** 2)


def choleskys(A, c):
    S = A @ A.T + len(A) * np.eye(len(A))
    return np.sum(np.linalg.cholesky(S * (1.0 + c ** 2)) ** 3)


def eighs(A, c):
    S = A + A.T
    w, v = np.linalg.eigh(S)
    return np.sum(w ** 3 * c) + np.sum(v[:, 0] ** 2 * c) + np.sum(np.linalg.eigvalsh(S) ** 2)


def svds(A, c):
    u, s, vt = np.linalg.svd(A, full_matrices=False)
    return np.sum(s ** 3) + np.sum((u[:, 0] * vt[0, 0]) ** 2) + \
        np.sum(np.linalg.svd(A * c, compute_uv=False) ** 2)


def products(x, c):
    return np.sum(np.prod(1.0 + 0.3 * x * c, axis=0)) + np.sum(np.cumprod(x, axis=-1) * c)


def cumulative(x, c):
    return np.sum(np.cumprod(np.sin(x) + 1.5) * np.tanh(x).ravel()) + \
        np.sum(np.nancumprod(x * c, axis=0) ** 2)


def qrs(A, c):
    q, r = np.linalg.qr(A * c)
    return np.sum(q[:, 0] ** 3) + np.sum(r ** 2) + np.sum(np.linalg.qr(A, mode="r") ** 3)


def casts(x, c):
    return np.sum((x * c).astype(np.float64) ** 2 + x.astype(float) ** 3)


def softmaxes(x, c):
    return np.sum(scipy.special.softmax(x * c, axis=0) ** 2 * x) + \
        np.sum(scipy.special.log_softmax(np.sin(x)) * c)


def reduce_along(x, c, axis=1, keep=False):
    m = np.mean(np.sin(x) * c, axis=axis, keepdims=keep)
    return np.sum(np.sum(x * m, axis=axis, keepdims=keep) ** 2)


def pinvs(A, c):
    return np.sum(np.linalg.pinv(A * c) ** 2) + np.sum(np.sin(np.linalg.pinv(A))) * np.sum(A)


def pinv_hermitian(A, c):
    S = (A @ A.T) * (1.0 + c ** 2) + len(A) * np.eye(len(A))   # (read: its lower triangle)
    return np.sum(np.linalg.pinv(S, hermitian=True) ** 3)


def lstsq_a(A, b):
    x, res, rank, s = np.linalg.lstsq(A, b, rcond=None)
    return np.sum(x ** 3) + np.sum(res) * 0.5 + np.sum(s ** 3) + rank


def lstsq_b(b, A):
    x, res, _, _ = np.linalg.lstsq(A, np.sin(b), rcond=None)
    return np.sum(x ** 3) + np.sum(res ** 2)


def lstsq_solution(A, b):
    return np.sum(np.tanh(np.linalg.lstsq(A * 1.5, b, rcond=None)[0]))


def products_whole(x, c):
    return np.prod(np.cos(x) + c ** 2) + np.sum(np.prod(x * c, axis=-1, keepdims=True) * x)


def einsums(A, c):
    return np.sum(np.einsum("ij,jk->ik", A, A.T * c[:, None]) ** 2) + \
        np.einsum("ij,ij->", np.sin(A), A) ** 2 + np.sum(np.einsum("ij->j", A ** 3) * c)


def einsum_traces(A, c):
    return np.einsum("ii->", A @ A) ** 2 + np.sum(np.einsum("ii->i", A) ** 3 * c) + \
        np.sum(np.einsum("i,j,ij->i", c, np.diag(A), np.tanh(A)) ** 2)


def einsum_ellipsis(x, c):
    return np.sum(np.einsum("...i,...i->...", x, x * c) ** 2) + \
        np.sum(np.einsum("...ij,j", np.exp(x), c)) * np.sum(np.einsum("...i", x) ** 2)


def _pair(*shape, c_shape=None):
    return lambda: (R.normal(size=shape), R.normal(size=c_shape or shape))


def differences(x, c):
    return np.sum(np.sin(np.diff(x * c, axis=0)) ** 2) + np.sum(np.diff(np.cos(x), n=2) ** 3)


def differences_ends(x, c):
    return np.sum(np.diff(np.sin(x) * c, axis=-1, prepend=0.5, append=np.ones(x.shape[:-1] +
                                                                       (2,))) ** 3)


def differences_first_axis(x, c):
    return np.sum(np.tanh(np.diff(x ** 2, axis=0, prepend=np.zeros((1,) + x.shape[1:]),
                                  append=1.0) * c))


def pads(x, c):
    return np.sum(np.sin(np.pad(x * c, 1)) * np.pad(x, (1, 1), mode="edge")) + \
        np.sum(np.pad(np.cos(x), ((0, 0),) * (x.ndim - 1) + ((2, 1),), mode="reflect") ** 3)


def pads_wrapped(x, c):
    return np.sum(np.tanh(np.pad(x ** 2, [(2, 2)] * x.ndim, mode="wrap") * 0.5) ** 2 +
                  np.pad(x, 2, mode="symmetric") ** 2) + np.sum(x * c)


def polynomials(x, c):
    # x the coefficients: their tangent batched along p's first axis
    return np.sum(np.sin(np.polyval(x * c, np.linspace(-1.0, 1.0, 5))) ** 2)


def polynomials_at(x, c):
    return np.sum(np.polyval(c, np.sin(x)) ** 2) + np.sum(np.polyval(x[..., :1].ravel(), c))


def _well_posed(n, other):
    return lambda: (R.normal(size=(n, n)) + n * np.eye(n), R.normal(size=other))


CASES = [
    (maxes, _pair(3, 4)), (maxes, _pair(4, 2, c_shape=(2,))),
    (maxes_last, _pair(3, 4)), (maxes_last, _pair(2, 3, 2, c_shape=(3, 1))),
    (stds, _pair(3, 4)), (stds, _pair(5, c_shape=(1,))),
    (stds_axis, _pair(3, 4)), (stds_axis, _pair(2, 2, 3, c_shape=(3,))),
    (spreads, _pair(3, 4)), (spreads, _pair(5, c_shape=(1,))),
    (norms, _pair(3, 4)), (norms, _pair(6, c_shape=())),
    (products, _pair(3, 4)), (products, _pair(4, 2, c_shape=(2,))),
    (cumulative, _pair(3, 4)), (cumulative, _pair(2, 3, c_shape=(3,))),
    (qrs, _pair(4, 3, c_shape=(3,))), (qrs, _pair(3, 3, c_shape=(1,))),
    (casts, _pair(3, 4)), (casts, _pair(5, c_shape=(1,))),
    (softmaxes, _pair(3, 4)), (softmaxes, _pair(5, c_shape=(1,))),
    (lse, _pair(3, 4)), (lse, _pair(5, c_shape=(1,))),
    (lse_weighted, _pair(4)), (lse_weighted, _pair(2, 3)),
    (solve_b, lambda: (R.normal(size=4), R.normal(size=(4, 4)) + 4 * np.eye(4))),
    (solve_b, lambda: (R.normal(size=(3, 2)), R.normal(size=(3, 3)) + 3 * np.eye(3))),
    (solve_a, _well_posed(3, 3)), (solve_a, _well_posed(3, (3, 2))),
    (dets, _pair(3, 3, c_shape=(3,))), (dets, _pair(2, 2)),
    (inverses, _well_posed(3, (3,))), (inverses, _well_posed(2, (2, 2))),
    (choleskys, _pair(3, 3)), (choleskys, _pair(2, 2, c_shape=(1,))),
    (eighs, _pair(3, 3, c_shape=(3,))), (eighs, _pair(4, 4, c_shape=(4,))),
    (svds, _pair(4, 3, c_shape=(3,))), (svds, _pair(2, 3, c_shape=(1,))),
    (pinvs, _pair(4, 3, c_shape=(3,))), (pinvs, _pair(2, 3, c_shape=(1,))),
    (pinvs, _pair(2, 3, 2, c_shape=(2,))),
    (pinv_hermitian, _pair(3, 2, c_shape=(3,))), (pinv_hermitian, _pair(2, 3, c_shape=(1,))),
    (lstsq_a, _pair(5, 3, c_shape=(5,))), (lstsq_a, _pair(4, 2, c_shape=(4, 3))),
    (lstsq_a, _pair(2, 3, c_shape=(2,))),
    (lstsq_b, lambda: (R.normal(size=5), R.normal(size=(5, 3)))),
    (lstsq_b, lambda: (R.normal(size=(4, 2)), R.normal(size=(4, 3)))),
    (lstsq_solution, _pair(3, 3, c_shape=(3, 2))), (lstsq_solution, _pair(5, 2, c_shape=(5,))),
    (products_whole, _pair(3, 4)), (products_whole, _pair(2, 3, c_shape=(3,))),
    (products_whole, _pair(5, c_shape=(1,))),
    (einsums, _pair(3, 4, c_shape=(4,))), (einsums, _pair(2, 2, c_shape=(2,))),
    (einsum_traces, _pair(3, 3, c_shape=(3,))), (einsum_traces, _pair(2, 2, c_shape=(2,))),
    (einsum_ellipsis, _pair(2, 3, c_shape=(3,))), (einsum_ellipsis, _pair(2, 2, 3, c_shape=(3,))),
    (differences, _pair(4, 3)), (differences, _pair(3, 2, 4, c_shape=(4,))),
    (differences_ends, _pair(2, 3)), (differences_ends, _pair(5, c_shape=(1,))),
    (differences_first_axis, _pair(3, 2, c_shape=(2,))),
    (differences_first_axis, _pair(4, 2, 2, c_shape=(2, 1))),
    (pads, _pair(3, 4)), (pads, _pair(2, 3, 2, c_shape=(2,))), (pads, _pair(5, c_shape=(1,))),
    (pads_wrapped, _pair(3, 4)), (pads_wrapped, _pair(4, c_shape=(1,))),
    (polynomials, _pair(4)), (polynomials, _pair(3, c_shape=(1,))),
    (polynomials_at, _pair(3, c_shape=(4,))), (polynomials_at, _pair(2, 3, c_shape=(3,))),
]


def _per_column(monkeypatch, f, args):
    with monkeypatch.context() as m:
        m.setattr(derivatives, "_batched_jacobian", lambda *a: None)
        return hessian(f)(*args)


@pytest.mark.parametrize("f, make", CASES, ids=[f"{f.__name__}{i}" for i, (f, _) in
                                                 enumerate(CASES)])
def test_batched_hessian_through_explicit_rules(monkeypatch, f, make):
    args = make()
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerColumnWarning)
        H = hessian(f)(*args)
    scale = max(1.0, float(np.max(np.abs(H))))
    np.testing.assert_allclose(H, _per_column(monkeypatch, f, args), rtol=1e-9,
                               atol=1e-9 * scale)
    np.testing.assert_allclose(H, fd_hessian(f, *args), rtol=1e-4, atol=1e-5 * scale)


@pytest.mark.parametrize("axis, keep, shape", [
    (0, False, (3, 4)), (1, True, (3, 4)), (-1, True, (2, 3, 2)), (None, True, (2, 3)),
    (None, False, (2, 3))])
def test_batched_hessian_of_sums_along_an_axis_held_in_a_variable(monkeypatch, axis, keep,
                                                                  shape):
    x, c = R.normal(size=shape), R.normal(size=shape[-1:])
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerColumnWarning)
        H = hessian(reduce_along)(x, c, axis, keep)
    with monkeypatch.context() as m:
        m.setattr(derivatives, "_batched_jacobian", lambda *a: None)
        np.testing.assert_allclose(H, hessian(reduce_along)(x, c, axis, keep), rtol=1e-9,
                                   atol=1e-12)
    np.testing.assert_allclose(H, fd_hessian(reduce_along, x, c, axis, keep), rtol=1e-4,
                               atol=1e-6)


def test_a_max_with_ties_agrees_with_one_jvp_per_column(monkeypatch):
    x = np.array([[1.0, 2.0, 2.0], [0.5, 0.5, -1.0]])
    c = np.ones(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerColumnWarning)
        H = hessian(maxes_last)(x, c)
    np.testing.assert_allclose(H, _per_column(monkeypatch, maxes_last, (x, c)), rtol=1e-12)


def stacked_solve(x, A):
    return np.linalg.solve(A, np.tanh(x)) * 2.0


def stacked_solve_a(A, x):
    return np.linalg.solve(A * 1.5, x) * 2.0


@pytest.mark.parametrize("f, x_shape, a_shape", [
    (stacked_solve, (3,), (2, 3, 3)), (stacked_solve, (2, 3, 2), (2, 3, 3)),
    (stacked_solve, (3, 2), (2, 3, 3)), (stacked_solve, (2, 3, 2), (3, 3)),
    (stacked_solve, (4, 1, 3, 2), (2, 3, 3)),
    (stacked_solve_a, (3,), (2, 3, 3)), (stacked_solve_a, (2, 3, 2), (2, 3, 3)),
    (stacked_solve_a, (3, 2), (2, 3, 3)), (stacked_solve_a, (2, 3, 2), (3, 3)),
    (stacked_solve_a, (4, 1, 3, 2), (2, 3, 3))])
def test_batched_jacobian_of_a_stacked_solve(monkeypatch, f, x_shape, a_shape):
    """a stack of matrices, or one; a right-hand side of one axis (a vector for each
    matrix), a stack of matrices, one matrix broadcast to the stack, a longer stack;
    the Jacobian with respect to the right-hand side and to the matrices."""
    x = R.normal(size=x_shape)
    A = R.normal(size=a_shape) + 3 * np.eye(3)
    if f is stacked_solve_a:
        x, A = A, x
    _check_batched_jacobian(monkeypatch, f, x, A, atol=1e-8)


def _check_batched_jacobian(monkeypatch, f, x, other, atol):
    """jacobian(f, mode="fwd") in x, batched (a PerColumnWarning fails), against central
    differences and against one jvp per column."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerColumnWarning)
        J = jacobian(f, mode="fwd")(x, other)
    eps = 1e-6
    cols = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = eps
        e = e.reshape(x.shape)
        cols.append((f(x + e, other) - f(x - e, other)) / (2 * eps))
    np.testing.assert_allclose(J, np.stack(cols, axis=-1).reshape(J.shape), rtol=1e-6,
                               atol=atol)
    monkeypatch.setattr(derivatives, "_batched_jacobian", lambda *a: None)
    np.testing.assert_allclose(J, jacobian(f, mode="fwd")(x, other), rtol=1e-10,
                               atol=1e-12)


def test_batch_checked_keeps_batched_tangents_and_refuses_others():
    from sgcompiler.runtime.batched_rules import BatchMismatch, batch_checked
    ans = np.zeros((2, 3))
    t = R.normal(size=(4, 2, 3))
    assert batch_checked(t, ans, 4) is t
    np.testing.assert_array_equal(batch_checked(0.0 * ans, ans, 4), np.zeros((4, 2, 3)))
    np.testing.assert_array_equal(batch_checked(0.0, ans, 4), np.zeros((4, 2, 3)))
    both = batch_checked((t, 0.0), (ans, 1.0), 4)
    assert both[0] is t and both[1].shape == (4,)
    with pytest.raises(BatchMismatch):
        batch_checked(R.normal(size=(2, 3)), ans, 4)     # a tangent without the batch axis
    with pytest.raises(BatchMismatch):
        batch_checked(R.normal(size=(4, 3)), ans, 4)


def pinv_of(A, c):
    return np.linalg.pinv(A * c) * 2.0


def lstsq_of(A, b):
    x, res, _, s = np.linalg.lstsq(A, b, rcond=None)
    return np.concatenate([np.ravel(x), np.ravel(res), s])


def lstsq_of_b(b, A):
    return np.linalg.lstsq(A, np.tanh(b), rcond=None)[0]


@pytest.mark.parametrize("f, x_shape, other_shape", [
    (pinv_of, (4, 3), (3,)), (pinv_of, (2, 3, 2), (1,)), (pinv_of, (2, 3), (2, 3)),
    (lstsq_of, (5, 3), (5,)), (lstsq_of, (4, 2), (4, 3)), (lstsq_of, (2, 3), (2, 2)),
    (lstsq_of_b, (5,), (5, 3)), (lstsq_of_b, (3, 2), (3, 3))])
def test_batched_jacobian_of_pinv_and_lstsq(monkeypatch, f, x_shape, other_shape):
    """pinv of one matrix, of a stack, wide; lstsq of tall (with residuals), wide (none),
    a right-hand side of one axis or two; the Jacobian with respect to the matrix and to
    the right-hand side, batched, against central differences and one jvp per column."""
    x, other = R.normal(size=x_shape), R.normal(size=other_shape)
    _check_batched_jacobian(monkeypatch, f, x, other, atol=1e-7)


@pytest.mark.parametrize("spec, shapes", [
    ("ij,jk->ik", [(3, 4), (4, 2)]), ("ij,ji->", [(3, 3), (3, 3)]), ("bii->", [(2, 3, 3)]),
    ("ii->i", [(3, 3)]), ("...ij,...jk", [(2, 3, 4), (4, 2)]), ("i,i", [(3,), (3,)]),
    ("ij,j,k->ik", [(2, 3), (3,), (4,)]), ("...i,...i->...", [(1, 3), (4, 3)])])
def test_batched_einsum_gradients_are_the_gradients_of_each_direction(spec, shapes):
    """batch_einsum_grad (g batched) and batch_einsum_grad_with (an operand batched), for
    every operand and every other operand: an explicit output or none, traces and
    diagonals, ellipses that broadcast, against einsum_grad of one direction at a time."""
    from sgcompiler.runtime.batched_rules import batch_einsum_grad, batch_einsum_grad_with
    from sgcompiler.runtime.numpy.linalg import einsum_grad
    from sgcompiler.runtime.tangents import einsum_grad_with
    ops = [R.normal(size=s) for s in shapes]
    out, size = np.einsum(spec, *ops), 4
    for i in range(len(ops)):
        t = R.normal(size=(size,) + np.shape(out))
        np.testing.assert_allclose(batch_einsum_grad(t, i, spec, *ops), np.stack(
            [einsum_grad(t[d], i, spec, *ops) for d in range(size)]), rtol=1e-12)
        g = R.normal(size=np.shape(out))
        for k in range(len(ops)):
            u = R.normal(size=(size,) + shapes[k])
            np.testing.assert_allclose(batch_einsum_grad_with(g, i, k, u, spec, *ops), np.stack(
                [einsum_grad_with(g, i, k, u[d], spec, *ops) for d in range(size)]),
                rtol=1e-12, atol=1e-14)


def _einsum_function(spec, both):
    """f(x, y) = np.einsum(spec, ...) with `spec` a literal of its source (the batched
    form rewrites literal subscripts)."""
    from sgcompiler.backend.loader import function_from_text
    body = f"np.einsum({spec!r}, x, x * y, optimize=True)" if both else \
        f"np.einsum({spec!r}, x, y) * 2.0"
    return function_from_text(f"def f(x, y):\n    return {body}\n", "f", {"np": np},
                              "batched einsum")


@pytest.mark.parametrize("both, spec, shapes", [
    (False, "ij,jk->ik", [(3, 4), (4, 2)]), (False, "ij,jk", [(2, 3), (3, 2)]),
    (False, "i j, j", [(2, 3), (3,)]), (False, "...i,...i", [(2, 3), (3,)]),
    (False, "bXy,yB->bB", [(2, 3, 2), (2, 4)]), (False, "zi,iz->", [(2, 3), (3, 2)]),
    (False, "ii,j->ij", [(3, 3), (2,)]), (True, "...ij,...ij->...", [(2, 3), (1, 3)]),
    (True, "ij,ij->ij", [(2, 3), (2, 3)])])
def test_batched_jacobian_of_einsum_is_one_einsum(monkeypatch, both, spec, shapes):
    """np.einsum's tangent along each operand, batched: the einsum with the directions one
    more index ('zij,jk->zik'), for explicit and implicit outputs (upper-case letters sort
    first), spaces, ellipses, a letter z already used, traces, optimize=, both operands."""
    from sgcompiler.pipeline.forward_mode import compile_jvp
    f = _einsum_function(spec, both)
    x, y = (R.normal(size=s) for s in shapes)
    code = compile_jvp(f, ("x",), frozenset(), frozenset(), (("x", x.shape, x.dtype),
                                                               ("y", y.shape, y.dtype)),
                       batch=x.size).source
    assert "batch_map" not in code and code.count("np.einsum(") == 2 + both, code
    _check_batched_jacobian(monkeypatch, f, x, y, atol=1e-8)


def scipy_solves(A, b):
    S = A @ A.T + len(A) * np.eye(len(A))
    x = scipy.linalg.solve(A, np.sin(b))
    y = scipy.linalg.solve(S, b, assume_a="pos")
    z = scipy.linalg.solve(A * 2.0, b, transposed=True)
    w = scipy.linalg.solve(S, b * A[0, 0], assume_a="sym", lower=True)
    return np.sum(x ** 3) + np.sum(y * b) + np.sum(z ** 2) + np.sum(w) + scipy.linalg.det(A) ** 2


def _scipy_case(n, b_shape, first):
    def make():
        A, b = R.normal(size=(n, n)) + n * np.eye(n), R.normal(size=b_shape)
        return (A, b) if first == "A" else (b, A)
    return make


def scipy_solves_b(b, A):
    return scipy_solves(A, b)


@pytest.mark.parametrize("f, make", [
    (scipy_solves, _scipy_case(3, (3,), "A")), (scipy_solves, _scipy_case(3, (3, 2), "A")),
    (scipy_solves_b, _scipy_case(4, (4,), "b")), (scipy_solves_b, _scipy_case(2, (2, 3), "b"))])
def test_batched_hessian_through_scipy_solve_and_det(monkeypatch, f, make):
    """scipy.linalg.solve (general, positive definite, transposed, symmetric reading its
    lower triangle) and det: the directions more columns of one solve."""
    test_batched_hessian_through_explicit_rules(monkeypatch, f, make)


def matrix_norms(A, c):
    return np.sum(np.linalg.matrix_norm(A * c) ** 3) + \
        np.sum(np.linalg.matrix_norm(np.sin(A), keepdims=True) * A) + \
        np.sum(np.linalg.matrix_norm(A, ord="nuc") ** 2)


def singular_values(A, c):
    return np.sum(np.linalg.svdvals(A * c) ** 3) + np.sum(np.tanh(np.linalg.svdvals(A)))


def matrix_powers(A, c):
    return np.sum(np.linalg.matrix_power(A * c, 3) ** 2) + \
        np.sum(np.linalg.matrix_power(A, -2)) + np.sum(np.linalg.matrix_power(A, 0) * A)


@pytest.mark.parametrize("f, make", [
    (matrix_norms, _pair(3, 4, c_shape=(4,))), (matrix_norms, _pair(2, 3, 2, c_shape=(2,))),
    (singular_values, _pair(4, 3, c_shape=(3,))), (singular_values, _pair(2, 2, 3, c_shape=(1,))),
    (matrix_powers, _well_posed(3, (3,))), (matrix_powers, _well_posed(2, (2, 2)))])
def test_batched_hessian_through_matrix_norms_svdvals_and_powers(monkeypatch, f, make):
    """np.linalg.matrix_norm (Frobenius, nuclear, keepdims), svdvals and matrix_power
    (positive, negative and zero powers), of one matrix and of stacks."""
    if not hasattr(np.linalg, "matrix_norm"):
        pytest.skip("NumPy 2's np.linalg.matrix_norm and svdvals")
    test_batched_hessian_through_explicit_rules(monkeypatch, f, make)
