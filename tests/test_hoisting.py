"""Loop-invariant products moved out of loops in tangent code (optimize/loops/hoisting.py).

`U_dot @ xs[t] + b_dot` depends only on the tangents of parameters and data the loop does
not change: it is made for every step before the loop, as one matrix product. Each jvp is
checked against finite differences on several shapes, and the code is read to see what
moved and what did not.
"""
import numpy as np
import pytest

from sgcompiler import jvp
from sgcompiler.derivatives import jvp_source


def _check_jvp(f, args, n_wrt, seed=0):
    """jvp of f along random tangents of its first n_wrt arguments, against central
    differences; the generated source."""
    rng = np.random.default_rng(seed)
    tangents = tuple(rng.normal(size=np.shape(a)) for a in args[:n_wrt]) + \
        (None,) * (len(args) - n_wrt)
    out, out_dot = jvp(f, args, tangents)
    eps = 1e-6
    plus = [a + eps * t if t is not None else a for a, t in zip(args, tangents)]
    minus = [a - eps * t if t is not None else a for a, t in zip(args, tangents)]
    np.testing.assert_allclose(out, f(*args), rtol=1e-12)
    np.testing.assert_allclose(out_dot, (f(*plus) - f(*minus)) / (2 * eps), rtol=1e-6,
                               atol=1e-8)
    return jvp_source(f, args, tangents)


def _loop_of(source):
    start = source.index("    for ")
    return source[start:source.index("\n    del", start)]


def rnn(W, U, b, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t] + b)
    return np.sum(h * h)


@pytest.mark.parametrize("hidden,inputs,steps", [(4, 3, 5), (2, 5, 1), (3, 3, 0)])
def test_rnn_input_terms_move_out_of_the_loop(hidden, inputs, steps):
    rng = np.random.default_rng(hidden)
    args = (rng.normal(size=(hidden, hidden)) * 0.5, rng.normal(size=(hidden, inputs)),
            rng.normal(size=hidden), rng.normal(size=(steps, inputs)), rng.normal(size=hidden))
    source = _check_jvp(rnn, args, 3)
    assert "xs @ U_dot.T" in source and "xs @ U.T" in source
    loop = _loop_of(source)
    assert "U_dot @" not in loop and "U @" not in loop and "b_dot" not in loop


def batched_rnn(W, U, xs):
    h = np.zeros((xs.shape[1], W.shape[1]))
    for t in range(xs.shape[0]):
        h = np.tanh(np.dot(xs[t], U) + np.dot(h, W))
    return np.sum(h ** 2)


@pytest.mark.parametrize("batch", [1, 4])
def test_batched_rows(batch):
    rng = np.random.default_rng(batch)
    args = (rng.normal(size=(5, 5)) * 0.4, rng.normal(size=(3, 5)),
            rng.normal(size=(6, batch, 3)))
    source = _check_jvp(batched_rnn, args, 2)
    assert "xs @ U_dot" in source and "np.dot(_xs_t" not in source


def columns(A, c, X):
    s = np.zeros((A.shape[0], X.shape[2]))
    for t in range(X.shape[0]):
        s = np.sin(s + (A @ X[t] + c))
    return np.sum(s)


def test_matrix_times_2d_rows():
    rng = np.random.default_rng(3)
    args = (rng.normal(size=(4, 3)), rng.normal(size=(4, 1)), rng.normal(size=(5, 3, 2)))
    source = _check_jvp(columns, args, 2)
    assert "A_dot @ X" in source


def changed_matrix(W, U, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t])
        U = U * 0.9                     # the matrix changes every step: nothing moves
    return np.sum(h)


def changed_data(W, U, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t])
        xs = xs * 1.1
    return np.sum(h)


def shifted_row(W, U, xs, h0):
    h = h0
    for t in range(xs.shape[0] - 1):
        h = np.tanh(W @ h + U @ xs[t + 1])
    return np.sum(h)


@pytest.mark.parametrize("f", [changed_matrix, changed_data, shifted_row],
                         ids=lambda f: f.__name__)
def test_what_the_loop_changes_stays_in_it(f):
    rng = np.random.default_rng(4)
    args = (rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(3, 2)), rng.normal(size=(4, 2)),
            rng.normal(size=3))
    source = _check_jvp(f, args, 2)
    assert "U_dot @" in _loop_of(source)


SCALE = 2.0


def scaled(x):
    return np.sum(np.sin(x) * SCALE)


def test_a_repeated_jvp_follows_what_its_names_mean(monkeypatch):
    # the second call takes the fast path (same types, shapes, dtypes); it must still see
    # a global that changed, a tangent of another shape, and a tangent that is None
    x, v = np.linspace(0.0, 1.0, 4), np.ones(4)
    want = np.sum(np.cos(x) * v)
    assert np.isclose(jvp(scaled, (x,), (v,))[1], 2.0 * want)
    assert np.isclose(jvp(scaled, (x,), (v,))[1], 2.0 * want)
    monkeypatch.setitem(globals(), "SCALE", 3.0)
    assert np.isclose(jvp(scaled, (x,), (v,))[1], 3.0 * want)
    x5 = np.linspace(0.0, 1.0, 5)
    assert np.isclose(jvp(scaled, (x5,), (np.ones(5),))[1], 3.0 * np.sum(np.cos(x5)))
    with pytest.raises(TypeError, match="shape"):
        jvp(scaled, (x,), (np.ones(5),))
    assert jvp(scaled, (x,), (None,))[1] == 0.0
