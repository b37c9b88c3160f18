"""optimize/loops/stacking.py: in tangent code, a loop's `W @ h` and its tangent `W_dot @ h +
W @ h_dot` share one product with W and W_dot stacked before the loop. Checked against
finite differences and against the same tangent code without the step, on several shapes
(1-d and 2-d states, `@`, np.dot, .dot, the state as rows and as columns)."""
import re

import numpy as np
import pytest

import sgcompiler.pipeline as pipeline
from sgcompiler import jvp
from sgcompiler import derivatives
from sgcompiler.derivatives import jvp_source
from sgcompiler.pipeline import compiled

EPS = 1e-6


def rnn_at(W, U, b, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t] + b)
    return np.sum(h ** 2)


def rnn_dot(W, U, b, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(np.dot(W, h) + np.dot(U, xs[t]) + b)
    return np.sum(h ** 2)


def rnn_method(W, U, b, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W.dot(h) + U.dot(xs[t]) + b)
    return np.sum(h ** 2)


def rnn_rows(W, U, b, xs, h0):
    # the state as rows, h (batch, hidden) or (hidden,): h @ W
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(h @ W + xs[t] @ U + b)
    return np.sum(np.sin(h))


def rnn_columns(W, U, b, xs, h0):
    # the state as columns, h (hidden, batch): W @ h, the bias a column
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t] + b[:, None])
    return np.sum(h * h)


def two_layers(W1, W2, xs, h0):
    h, g = h0, h0
    for t in range(xs.shape[0]):
        h = np.tanh(W1 @ h + xs[t])
        g = np.sin(W2 @ g + h)
    return np.sum(g) + np.sum(h)


def changing_matrix(W, U, b, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t] + b)
        W = W * 0.9
    return np.sum(h ** 2)


def _rnn_args(rng, hidden, inputs, steps, batch, form):
    W = rng.normal(scale=0.8 / np.sqrt(hidden), size=(hidden, hidden))
    U = rng.normal(size=(hidden, inputs))
    b = rng.normal(size=hidden)
    if form == "rows":
        shape = (batch, hidden) if batch else (hidden,)
        xs = rng.normal(size=(steps, batch, inputs) if batch else (steps, inputs))
        return (W, U.T, b, xs, rng.normal(size=shape))
    if form == "columns":
        return (W, U, b, rng.normal(size=(steps, inputs, batch)),
                rng.normal(size=(hidden, batch)))
    return (W, U, b, rng.normal(size=(steps, inputs)), rng.normal(size=hidden))


def _fd(f, args, tangents):
    plus = [a + EPS * t if t is not None else a for a, t in zip(args, tangents)]
    minus = [a - EPS * t if t is not None else a for a, t in zip(args, tangents)]
    return (f(*plus) - f(*minus)) / (2 * EPS)


def _unstacked(monkeypatch, f, args, tangents):
    """jvp(f, ...) by the tangent code compiled without the stacking step."""
    with monkeypatch.context() as m:
        m.setattr(pipeline, "stack_tangent_products", lambda *a, **k: None)
        compiled._JVP_CACHE.clear()
        derivatives._FAST.clear()
        source = jvp_source(f, args, tangents)
        result = jvp(f, args, tangents)
    compiled._JVP_CACHE.clear()
    derivatives._FAST.clear()
    assert "concatenate" not in source
    return result


CASES = [(rnn_at, "vector", 0), (rnn_dot, "vector", 0), (rnn_method, "vector", 0),
         (rnn_rows, "rows", 0), (rnn_rows, "rows", 1), (rnn_rows, "rows", 4),
         (rnn_columns, "columns", 1), (rnn_columns, "columns", 3)]


@pytest.mark.parametrize("f, form, batch", CASES,
                         ids=[f"{f.__name__}-{batch}" for f, _, batch in CASES])
@pytest.mark.parametrize("hidden, inputs, steps", [(1, 2, 3), (4, 3, 5), (7, 2, 1)])
def test_the_stacked_product_gives_the_tangent(monkeypatch, f, form, batch, hidden,
                                               inputs, steps):
    rng = np.random.default_rng(hidden * 10 + steps + batch)
    args = _rnn_args(rng, hidden, inputs, steps, batch, form)
    tangents = tuple(rng.normal(size=a.shape) for a in args[:3]) + (None, None)
    source = jvp_source(f, args, tangents)
    axis = ", axis=1" if form == "rows" else ""
    assert f"np.concatenate((W, W_dot){axis})" in source
    loop = source[source.index("    for t in"):]
    assert not re.search(r"\bW_dot\b *(@|\.dot)|@ *W_dot\b|np\.dot\(W_dot\b", loop)
    if f is not rnn_method:
        # the input rows (precomputed before the loop) and their tangents stacked too
        last = "-1" if form == "rows" else "1"
        assert re.search(rf"np\.concatenate\(\((\w+)s, \w+_dots\), axis={last}\)", source)
        assert not re.search(r"_dots\[t\]", loop)
    _check_both_ways(monkeypatch, f, args, tangents)


def test_two_loop_matrices_each_get_their_stacking(monkeypatch):
    rng = np.random.default_rng(3)
    n = 4
    args = (rng.normal(size=(n, n)) * 0.4, rng.normal(size=(n, n)) * 0.4,
            rng.normal(size=(5, n)), rng.normal(size=n))
    tangents = (rng.normal(size=(n, n)), rng.normal(size=(n, n)), None, rng.normal(size=n))
    source = jvp_source(two_layers, args, tangents)
    assert "np.concatenate((W1, W1_dot))" in source
    assert "np.concatenate((W2, W2_dot))" in source
    out, out_dot = jvp(two_layers, args, tangents)
    np.testing.assert_allclose(out_dot, _fd(two_layers, args, tangents), rtol=1e-6)
    np.testing.assert_allclose(out_dot, _unstacked(monkeypatch, two_layers, args,
                                                   tangents)[1], rtol=1e-12)


def test_a_matrix_the_loop_changes_is_not_stacked():
    rng = np.random.default_rng(5)
    args = _rnn_args(rng, 3, 2, 4, 0, "vector")
    tangents = tuple(rng.normal(size=a.shape) for a in args[:3]) + (None, None)
    assert "concatenate" not in jvp_source(changing_matrix, args, tangents)
    np.testing.assert_allclose(jvp(changing_matrix, args, tangents)[1],
                               _fd(changing_matrix, args, tangents), rtol=1e-6)


def test_a_float32_matrix_is_not_stacked_and_keeps_its_dtype():
    # stacked with a float64 tangent, the value would be float64
    rng = np.random.default_rng(6)
    args = tuple(a.astype(np.float32) for a in _rnn_args(rng, 3, 2, 4, 0, "vector"))
    tangents = tuple(rng.normal(size=a.shape) for a in args[:3]) + (None, None)
    assert "concatenate" not in jvp_source(rnn_at, args, tangents)
    out, _ = jvp(rnn_at, args, tangents)
    assert out.dtype == np.float32


def test_an_infinite_tangent_leaves_the_value_alone():
    # (with the block matrix [[W, 0], [W_dot, W]], 0 * inf would make the value NaN)
    rng = np.random.default_rng(7)
    args = _rnn_args(rng, 3, 2, 4, 0, "vector")
    W_dot = np.zeros((3, 3))
    W_dot[0, 1] = np.inf
    assert "concatenate" in jvp_source(rnn_at, args, (W_dot, None, None, None, None))
    with np.errstate(invalid="ignore"):
        out, out_dot = jvp(rnn_at, args, (W_dot, None, None, None, None))
    assert out == rnn_at(*args)
    assert not np.isfinite(out_dot)


def test_a_complex_tangent_of_a_real_argument_is_refused():
    # it gave 0.0 (with a ComplexWarning); stacked, it would make the value complex
    rng = np.random.default_rng(8)
    args = _rnn_args(rng, 3, 2, 4, 0, "vector")
    with pytest.raises(TypeError, match="tangent of 'W' is complex but 'W' is real"):
        jvp(rnn_at, args, (1j * args[0], None, None, None, None))


def test_a_large_matrix_is_not_stacked():
    # (where a product's arithmetic costs more than the call, stacking gains nothing)
    from sgcompiler.optimize.loops.stacking import SMALL
    hidden = int(np.sqrt(SMALL)) + 1
    rng = np.random.default_rng(9)
    args = _rnn_args(rng, hidden, 2, 2, 0, "vector")
    tangents = tuple(rng.normal(size=a.shape) for a in args[:3]) + (None, None)
    assert "concatenate" not in jvp_source(rnn_at, args, tangents)
    np.testing.assert_allclose(jvp(rnn_at, args, tangents)[1], _fd(rnn_at, args, tangents),
                               rtol=1e-5)


def stacks_of_states(W, b, h0):
    # W @ h with h of three axes (a stack of column blocks): not rewritten
    h = h0
    for t in range(3):
        h = np.tanh(W @ h + b[:, None])
    return np.sum(h * h)


def test_a_state_of_three_axes_is_left_as_it_is():
    rng = np.random.default_rng(10)
    args = (rng.normal(size=(3, 3)) * 0.5, rng.normal(size=3), rng.normal(size=(2, 3, 4)))
    tangents = (rng.normal(size=(3, 3)), rng.normal(size=3), None)
    assert "concatenate" not in jvp_source(stacks_of_states, args, tangents)
    np.testing.assert_allclose(jvp(stacks_of_states, args, tangents)[1],
                               _fd(stacks_of_states, args, tangents), rtol=1e-6)


def rnn_bias(W, b, h0):
    h = h0
    for t in range(4):
        h = np.tanh(W @ h + b)
    return np.sum(h ** 2)


def inputs_first(W, U, b, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(U @ xs[t] + W @ h + b)
    return np.sum(h ** 2)


def active_rows(W, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.sin(W @ h + xs[t])
    return np.sum(h)


def two_sums(W, xs, ys, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.sin(W @ h + xs[t] + ys[t])
    return np.sum(h * h)


def product_read_again(W, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        z = W @ h
        h = np.tanh(z + xs[t]) * z
    return np.sum(h)


def _check_both_ways(monkeypatch, f, args, tangents):
    """jvp against finite differences and against the code without the stacking step."""
    out, out_dot = jvp(f, args, tangents)
    assert np.isclose(out, f(*args), rtol=1e-12)
    np.testing.assert_allclose(out_dot, _fd(f, args, tangents), rtol=1e-6, atol=1e-8)
    plain, plain_dot = _unstacked(monkeypatch, f, args, tangents)
    np.testing.assert_allclose(out, plain, rtol=1e-13)
    np.testing.assert_allclose(out_dot, plain_dot, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("n", [1, 3, 6])
def test_an_invariant_bias_is_stacked_into_the_product(monkeypatch, n):
    rng = np.random.default_rng(20 + n)
    args = (rng.normal(size=(n, n)) * 0.5, rng.normal(size=n), rng.normal(size=n))
    tangents = (rng.normal(size=(n, n)), rng.normal(size=n), None)
    source = jvp_source(rnn_bias, args, tangents)
    assert "np.concatenate((b, b_dot))" in source
    assert not re.search(r"\bb_dot\b", source[source.index("    for t in"):])
    _check_both_ways(monkeypatch, rnn_bias, args, tangents)


@pytest.mark.parametrize("n, m, steps", [(1, 2, 3), (3, 2, 5), (5, 4, 2)])
def test_rows_read_before_the_product_are_stacked_too(monkeypatch, n, m, steps):
    rng = np.random.default_rng(30 + n)
    args = (rng.normal(size=(n, n)) * 0.5, rng.normal(size=(n, m)), rng.normal(size=n),
            rng.normal(size=(steps, m)), rng.normal(size=n))
    tangents = tuple(rng.normal(size=a.shape) for a in args[:3]) + (None, None)
    source = jvp_source(inputs_first, args, tangents)
    assert re.search(r"np\.concatenate\(\(_\w+s, _\w+_dots\), axis=1\)", source)
    _check_both_ways(monkeypatch, inputs_first, args, tangents)


@pytest.mark.parametrize("n, steps", [(1, 4), (3, 5), (4, 1)])
def test_active_rows_and_a_chain_of_sums_are_stacked(monkeypatch, n, steps):
    rng = np.random.default_rng(40 + n)
    W, h0 = rng.normal(size=(n, n)) * 0.5, rng.normal(size=n)
    xs, ys = rng.normal(size=(steps, n)), rng.normal(size=(steps, n))
    source = jvp_source(active_rows, (W, xs, h0), (W, xs, None))
    assert "np.concatenate((xs, xs_dot), axis=1)" in source
    _check_both_ways(monkeypatch, active_rows, (W, xs, h0), (W, xs, None))
    # the second sum is added to the first's stacking: one product and one sum a step
    source = jvp_source(two_sums, (W, xs, ys, h0), (W, xs, ys, None))
    loop = source[source.index("    for t in"):]
    assert "np.concatenate((ys, ys_dot), axis=1)" in source
    assert not re.search(r"\b(xs|ys)_dot\b", loop)
    _check_both_ways(monkeypatch, two_sums, (W, xs, ys, h0), (W, None, ys, None))
    _check_both_ways(monkeypatch, two_sums, (W, xs, ys, h0), (W, xs, ys, h0))


def test_rows_that_broadcast_are_not_stacked(monkeypatch):
    # xs[t] of one element added to a state of three: stacked, the halves would not line up
    rng = np.random.default_rng(50)
    args = (rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(4, 1)), rng.normal(size=3))
    tangents = (rng.normal(size=(3, 3)), rng.normal(size=(4, 1)), None)
    source = jvp_source(active_rows, args, tangents)
    assert "np.concatenate((W, W_dot))" in source and "xs_dot), axis" not in source
    _check_both_ways(monkeypatch, active_rows, args, tangents)


def test_a_product_read_again_keeps_its_halves(monkeypatch):
    rng = np.random.default_rng(51)
    args = (rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(4, 3)), rng.normal(size=3))
    tangents = (rng.normal(size=(3, 3)), rng.normal(size=(4, 3)), None)
    source = jvp_source(product_read_again, args, tangents)
    assert "xs_dot), axis" not in source and "z = z_both[:3]" in source
    _check_both_ways(monkeypatch, product_read_again, args, tangents)


def test_an_infinite_row_tangent_leaves_the_value_alone():
    rng = np.random.default_rng(52)
    W, xs, h0 = rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(4, 3)), rng.normal(size=3)
    xs_dot = np.zeros((4, 3))
    xs_dot[1, 2] = np.inf
    tangents = (rng.normal(size=(3, 3)), xs_dot, None)
    assert "np.concatenate((xs, xs_dot), axis=1)" in jvp_source(
        active_rows, (W, xs, h0), tangents)
    with np.errstate(invalid="ignore"):
        out, out_dot = jvp(active_rows, (W, xs, h0), tangents)
    assert out == active_rows(W, xs, h0)
    assert not np.isfinite(out_dot)
