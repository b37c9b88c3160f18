"""The sums of matrix products over a loop's steps as one product of the steps' rows one
after the other, and that sum as its accumulator's first write (optimize/loops/rows.py).

Each case checks the gradient against finite differences on several shapes, and what the
generated code does; the cases that keep a stack with a new first axis, or the
accumulation into zeros, are checked too.
"""
import numpy as np
import pytest

from sgcompiler import grad

from benchmarks.workloads.rnn_batched import rnn_batched
from gradcheck import checked_source


def _rnn_args(rng, steps, batch, inputs, hidden, dtype=np.float64):
    return tuple(a.astype(dtype) for a in (
        rng.normal(size=(hidden, hidden)) * 0.5, rng.normal(size=(inputs, hidden)),
        rng.normal(size=hidden), rng.normal(size=(steps, batch, inputs)),
        rng.normal(size=(batch, hidden))))


def _backward(source):
    return source[source.index("# backward"):]


@pytest.mark.parametrize("steps,batch,inputs,hidden", [(1, 1, 1, 1), (3, 2, 3, 4),
                                                       (5, 4, 2, 3), (2, 1, 5, 2)])
def test_the_steps_rows_are_one_product(steps, batch, inputs, hidden):
    rng = np.random.default_rng(steps * 10 + batch)
    args = _rnn_args(rng, steps, batch, inputs, hidden)
    source = checked_source(rnn_batched, args, wrt=(0, 1, 2, 3))
    backward = _backward(source)
    assert "np.concatenate(_hs[::-1])" in backward and "tensordot" not in backward
    assert f"_xs_ts = xs[:_trips].reshape(-1, {inputs})" in backward
    # sums that are the first writes of their accumulators, zeros when no step was made
    for line in ("db = np.sum(_d_add2s, axis=0)", "dW = _hs.T @ _d_add2s",
                 "dU = _xs_ts.T @ _d_add2s", "dW = np.zeros_like(W)"):
        assert line in backward, line
    assert "+=" not in backward.split("if _hs:")[1]


def test_no_steps_gives_zeros():
    args = _rnn_args(np.random.default_rng(2), 0, 3, 2, 4)
    g = grad(rnn_batched, wrt=(0, 1, 2))
    got = g(*args)
    assert all(np.all(x == 0) and x.shape == a.shape for x, a in zip(got, args))
    assert "dW = np.zeros_like(W)" in g.source


def test_float32_arguments_keep_their_dtype():
    args = _rnn_args(np.random.default_rng(3), 4, 3, 2, 5, dtype=np.float32)
    g = grad(rnn_batched, wrt=(0, 1, 2))
    got = g(*args)
    want = grad(rnn_batched, wrt=(0, 1, 2))(*(a.astype(np.float64) for a in args))
    assert "dW = _hs.T @ _d_add2s" in g.source
    for x, w, a in zip(got, want, args):
        assert x.dtype == np.float32 and x.shape == a.shape
        np.testing.assert_allclose(x, w, rtol=2e-4, atol=1e-5)


def readout(w, xs):
    # a vector of weights: each step's product is rows (batch, k) against a vector
    s = np.zeros(xs.shape[1])
    for t in range(xs.shape[0]):
        s = np.tanh(xs[t] @ w + s)
    return np.sum(s * s)


@pytest.mark.parametrize("steps,batch,k", [(1, 1, 1), (3, 4, 2), (4, 2, 5)])
def test_products_with_a_vector(steps, batch, k):
    rng = np.random.default_rng(steps + k)
    args = (rng.normal(size=k), rng.normal(size=(steps, batch, k)))
    source = checked_source(readout, args, wrt=(0, 1))
    assert "tensordot" not in source
    assert f"xs[:_trips].reshape(-1, {k})" in source


def scaled_weights(W, U, xs):
    # W is used before the loop too: its adjoint is added to after the loop
    V = W * 2.0
    h = np.zeros((xs.shape[1], W.shape[1]))
    for t in range(xs.shape[0]):
        h = np.tanh(np.dot(xs[t], U) + np.dot(h, V))
    return np.sum(h * h) + np.sum(W * W)


@pytest.mark.parametrize("steps,batch", [(1, 1), (3, 2), (4, 3)])
def test_an_accumulator_read_after_the_loop_is_added_into(steps, batch):
    rng = np.random.default_rng(steps)
    args = (rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(2, 3)),
            rng.normal(size=(steps, batch, 2)))
    source = checked_source(scaled_weights, args, wrt=(0, 1))
    assert "dU = _xs_ts.T @ _d_adds" in source


def outer_and_rows(W, v, xs):
    # a vector state: outer products (np.outer) keep the stacks of whole steps
    h = np.zeros(W.shape[1])
    for t in range(xs.shape[0]):
        h = np.tanh(np.dot(h, W) + xs[t] * v)
    return np.sum(h * h)


@pytest.mark.parametrize("steps", [1, 4])
def test_outer_products_keep_the_steps_stacked(steps):
    rng = np.random.default_rng(steps)
    args = (rng.normal(size=(3, 3)) * 0.5, rng.normal(size=3), rng.normal(size=(steps, 3)))
    source = checked_source(outer_and_rows, args, wrt=(0, 1))
    assert "np.concatenate" not in source and "np.array(" in source


def nested(W, xs):
    h = np.zeros((xs.shape[2], W.shape[1]))
    for i in range(xs.shape[0]):
        for t in range(xs.shape[1]):
            h = np.tanh(xs[i, t] @ W + h)
    return np.sum(h * h)


def test_a_loop_in_a_loop():
    rng = np.random.default_rng(5)
    args = (rng.normal(size=(2, 3)) * 0.5, rng.normal(size=(2, 3, 4, 2)))
    checked_source(nested, args, wrt=(0,))
