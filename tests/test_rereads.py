"""`v = x[t]` in `for t in range(n)`, x an argument the function never rebinds: the adjoint
sweep reads x[_trips - 1 - _] again instead of saving v on the tape each trip
(analysis/memory.index_rereads, reverse/loops.py), and where the loop's outer products
are batched the stack of v is the slice x[:_trips] (optimize/loops/batching.py).

Each case checks the gradient against finite differences, on several shapes, and what the
generated code does; the cases where reading again would differ from the tape (an older
value read, an element of an array written later) keep the tape.
"""
import re

import numpy as np
import pytest

from sgcompiler import grad, hessian

from benchmarks.workloads.rnn_batched import rnn_batched
from gradcheck import assert_grad_matches, checked_source, fd_hessian


def _rnn_args(rng, steps, batch, inputs, hidden):
    return (rng.normal(size=(hidden, hidden)) * 0.5, rng.normal(size=(inputs, hidden)),
            rng.normal(size=hidden), rng.normal(size=(steps, batch, inputs)),
            rng.normal(size=(batch, hidden)))


@pytest.mark.parametrize("steps,batch,inputs,hidden", [(1, 2, 3, 4), (4, 3, 2, 3),
                                                       (6, 1, 1, 2)])
def test_a_slice_of_an_argument_is_read_again_not_taped(steps, batch, inputs, hidden):
    rng = np.random.default_rng(steps)
    args = _rnn_args(rng, steps, batch, inputs, hidden)
    source = checked_source(rnn_batched, args, wrt=(0, 1, 2, 3))
    assert "_tape.append(_xs_t)" not in source and "_xs_t = _tape.pop()" not in source
    assert "_xs_ts = xs[:_trips]" in source
    assert "_xs_t = xs[_trips - 1 - _]" in grad(rnn_batched, wrt=(0, 1, 2, 3)).source


@pytest.mark.parametrize("steps", [1, 2, 5])
def test_the_batched_stack_of_a_slice_is_the_slice(steps):
    rng = np.random.default_rng(10 + steps)
    args = _rnn_args(rng, steps, 3, 2, 4)
    source = checked_source(rnn_batched, args, wrt=(0, 1, 2))
    # the steps' rows one after the other (optimize/loops/rows.py)
    assert "_xs_ts = xs[:_trips].reshape(-1, 2)" in source and "_xs_ts.append" not in source
    assert "np.concatenate(_hs[::-1])" in source      # the other stacks in the slice's order
    assert "_xs_t = xs[_trips" not in source    # nothing else reads it


def test_no_steps():
    rng = np.random.default_rng(3)
    args = _rnn_args(rng, 0, 2, 3, 4)
    g = grad(rnn_batched, wrt=(0, 1, 2))(*args)
    assert all(np.all(x == 0) for x in g)


def test_second_order_of_a_loop_that_reads_again():
    # grad of grad reads the generated code again (backend/reread.py)
    rng = np.random.default_rng(4)
    W, U, b, xs, target = _rnn_args(rng, 3, 2, 2, 2)

    def of_b(b):
        return rnn_batched(W, U, b, xs, target)
    np.testing.assert_allclose(hessian(of_b)(b), fd_hessian(of_b, b), rtol=1e-4, atol=1e-6)


def scalar_recurrence(a, xs):
    h = a
    for t in range(xs.shape[0]):
        h = np.sin(h * xs[t]) + xs[t]
    return np.sum(h * h)


@pytest.mark.parametrize("n,shape", [(1, ()), (5, (3,)), (4, (2, 3))])
def test_an_element_is_read_again_when_nothing_is_written(n, shape):
    rng = np.random.default_rng(n)
    a, xs = rng.normal(size=shape), rng.normal(size=n)
    source = checked_source(scalar_recurrence, (a, xs), wrt=(0, 1))
    assert "_xs_t = xs[_trips - 1 - _]" in source


def written_later(a, xs):
    h = a
    for t in range(xs.shape[0]):
        h = np.sin(h * xs[t])
    xs[0] = 5.0             # changes xs[0] after the loop read it (a copy: an element)
    return np.sum(h)        # (through an alias, ys = xs, it is refused since session 11)


def test_an_element_of_an_array_written_later_keeps_the_tape():
    rng = np.random.default_rng(5)
    xs = rng.normal(size=3)
    g = grad(written_later)
    got = g(rng.normal(size=2), xs.copy())
    assert "_xs_t = _tape.pop()" in g.source
    a = np.array([0.3, -0.4])
    got = g(a, xs.copy())
    eps = 1e-6
    for i in range(2):
        e = np.zeros(2)
        e[i] = eps
        want = (written_later(a + e, xs.copy()) - written_later(a - e, xs.copy())) / 2 / eps
        np.testing.assert_allclose(got[i], want, rtol=1e-6)


def carried(a, xs):
    h = a
    x = 0.5
    for t in range(xs.shape[0]):
        h = np.sin(h * x)           # x of the trip before: an older value
        x = xs[t]
    return np.sum(h)


def before_and_after(a, xs):
    h = a
    for t in range(xs.shape[0]):
        x = xs[t]
        h = np.sin(h * x)
    return np.sum(h * x)            # read after the loop


@pytest.mark.parametrize("f", [carried, before_and_after])
def test_values_read_outside_the_trips_after_them_keep_the_tape(f):
    rng = np.random.default_rng(6)
    args = rng.normal(size=3), rng.normal(size=(4, 3))
    source = checked_source(f, args, wrt=(0, 1))
    assert "x = xs[_trips" not in source and "_tape.append(x)" in source


def nested(a, xs):
    h = a
    for s in range(2):
        for t in range(xs.shape[0]):
            h = np.tanh(h * xs[t] + s)
    return np.sum(h * h)


def stepped(a, xs):
    h = a
    for t in range(1, xs.shape[0]):
        h = np.tanh(h * xs[t])
    return np.sum(h * h)


def broken(a, xs):
    h = a
    for t in range(xs.shape[0]):
        if np.sum(h) > 1.5:
            break
        h = np.tanh(h + xs[t])
    return np.sum(h * h)


def rebound_index(a, xs):
    h = a
    for t in range(xs.shape[0] - 1):
        t = t + 1
        h = np.tanh(h * xs[t])
    return np.sum(h * h)


@pytest.mark.parametrize("f,reads_again", [(nested, True), (stepped, False),
                                           (broken, False), (rebound_index, False)])
@pytest.mark.parametrize("shape", [(3,), (2, 3)])
def test_loops_of_other_forms(f, reads_again, shape):
    rng = np.random.default_rng(7)
    a, xs = rng.normal(size=shape[-1:]), rng.normal(size=(4,) + shape) * 0.5
    assert_grad_matches(f, [a, xs])
    g = grad(f, wrt=(0, 1))
    g(a, xs)
    assert bool(re.search(r"= xs\[_trips\d* - 1 - _\d*\]", g.source)) == reads_again


def helper_rnn(h, W, xs):
    for t in range(xs.shape[0]):
        h = np.tanh(np.dot(h, W) + xs[t])
    return h


def calls_a_helper(W, xs, h0):
    return np.sum(helper_rnn(h0, W, xs) ** 2)


def test_a_helper_that_reads_again():
    rng = np.random.default_rng(8)
    args = [rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(4, 2, 3)), rng.normal(size=(2, 3))]
    assert_grad_matches(calls_a_helper, args)
    assert_grad_matches(calls_a_helper, args[:1] + [args[1][:1]] + args[2:])
