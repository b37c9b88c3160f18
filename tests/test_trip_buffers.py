"""reuse-buffers in the body of a loop at the top level (optimize/memory/buffers.py,
_TripBuffers): an operation writes into an operand the trip made and never reads again,
where no later trip and nothing after the loop reads it either.

Each case checks the gradient against finite differences on several shapes, and what the
generated code does: the values carried from trip to trip, read after the loop, put on
the tape, and the loops that may leave a trip early keep their own arrays.
"""
import numpy as np
import pytest

from sgcompiler import grad

from benchmarks.workloads.rnn_batched import rnn_batched
from gradcheck import checked_source


def _loop(source):
    return source[source.index("    for "):source.index("# backward")]


@pytest.mark.parametrize("steps,batch,inputs,hidden", [(1, 1, 1, 2), (4, 3, 2, 5)])
def test_a_trips_sums_write_into_its_products(steps, batch, inputs, hidden):
    rng = np.random.default_rng(steps)
    args = (rng.normal(size=(hidden, hidden)) * 0.5, rng.normal(size=(inputs, hidden)),
            rng.normal(size=hidden), rng.normal(size=(steps, batch, inputs)),
            rng.normal(size=(batch, hidden)))
    loop = _loop(checked_source(rnn_batched, args, wrt=(0, 1, 2)))
    assert "_add = np.add(_dot, _dot2, out=_dot)" in loop
    assert "h = np.tanh(_add2, out=_add2)" in loop      # (h goes on the tape next trip)
    assert "_tape.append(h)" in loop


def carried(x, w):
    s = np.zeros(x.shape)
    a = x * 1.5
    for t in range(3):
        s = s + np.tanh(a)          # a: the last trip's
        a = x * w + s
        b = np.sin(a)
        s = s + b * 0.5
    return np.sum(s * s)


def read_after(x, w):
    s = x * 1.0
    for t in range(3):
        a = s * w
        b = np.sin(a)
        s = s + b
    return np.sum(s * a)            # the last trip's a


def taped(x, w):
    s = x * 1.0
    for t in range(3):
        a = np.sin(s * w)
        s = a * s
    return np.sum(s)


def leaves_early(x, w):
    s = x * 1.0
    for t in range(4):
        a = s * w
        if t == 2:
            break
        s = np.sin(a)
    return np.sum(s * s)


@pytest.mark.parametrize("f", [carried, read_after, taped, leaves_early],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("n", [1, 4])
def test_values_other_trips_read(f, n):
    rng = np.random.default_rng(n)
    args = (rng.normal(size=(n, 3)) * 0.5, rng.normal(size=3))
    source = checked_source(f, args, wrt=(0, 1))
    loop = _loop(source)
    if f is carried:        # the trip's b may take a's array only if a is not carried
        assert "out=a)" not in loop
    if f is read_after:
        assert "out=a)" not in loop
    if f is leaves_early:
        assert "out=" not in loop
    g = grad(f, wrt=(0, 1))
    for _ in range(2):      # (and the same on the next call)
        again = g(*args)
        np.testing.assert_allclose(again[0], grad(f, wrt=(0, 1))(*args)[0])
