"""grad(f, checkpoint="sqrt"): loops run in segments, recomputed in the adjoint sweep.

Each gradient is compared with finite differences and with the gradient made without
checkpointing (equal to round-off), and the code is checked to be checkpointed.
"""
import tracemalloc

import numpy as np
import pytest

import sgcompiler
from sgcompiler import SGCompilerError, grad, stop_gradient, value_and_grad
from sgcompiler.derivatives import jvp_source
from tests.gradcheck import numeric_grad

TRIPS = [0, 1, 2, 3, 4, 7, 9, 13, 16]       # none, one, prime, perfect squares


def check(f, args, wrt=0, checkpoint="sqrt", differences=True):
    """The checkpointed gradient equals the plain one and finite differences."""
    made = grad(f, wrt=wrt, checkpoint=checkpoint)
    g = made(*args)
    plain = grad(f, wrt=wrt)(*args)
    np.testing.assert_allclose(g, plain, rtol=1e-10, atol=1e-12)
    if differences:
        np.testing.assert_allclose(g, numeric_grad(f, args, wrt), rtol=1e-5, atol=1e-7)
    assert "_segment" in made.source and "_forward(" in made.source
    return made


def recurrence(x, n):
    h = x
    for t in range(n):
        h = np.sin(h) * x + 0.1
    return np.sum(h)


@pytest.mark.parametrize("n", TRIPS)
def test_range_trips(n):
    x = np.linspace(0.2, 1.1, 3)
    check(recurrence, (x, n))


@pytest.mark.parametrize("n", [0, 1, 5, 16])
def test_scalar_argument(n):
    check(recurrence, (0.7, n))


def shifted(x, a, b):
    h = x
    for t in range(a, b):
        h = h * np.cos(x * t)
    for t in range(a, b, 3):
        h = h + np.sin(h) * t
    return np.sum(h)


@pytest.mark.parametrize("a,b", [(0, 0), (2, 3), (1, 11), (3, 20)])
def test_range_start_and_step(a, b):
    check(shifted, (np.array([0.3, -0.4]), a, b))


def rows(xs, W, h):
    for row in xs:
        h = np.tanh(W @ h + row)
    return np.sum(h ** 2)


@pytest.mark.parametrize("n", [0, 1, 4, 7])
def test_loop_over_array_rows(n):
    rng = np.random.default_rng(n)
    xs, W, h = rng.normal(size=(n, 3)), rng.normal(size=(3, 3)) * 0.5, rng.normal(size=3)
    for wrt in range(3):
        check(rows, (xs, W, h), wrt)


def nested(x, w, n, m):
    h = x
    for i in range(n):
        for j in range(m):
            h = np.tanh(h * w + j)
        h = h + 0.5 * x
    return np.sum(h)


@pytest.mark.parametrize("n,m", [(1, 1), (5, 2), (9, 3)])
def test_nested_loops(n, m):
    args = (np.array([0.1, 0.5, -0.3]), np.array([0.9, -1.2, 0.4]), n, m)
    check(nested, args, 0)
    check(nested, args, 1)


def branches(x, w, n):
    h = x
    for t in range(n):
        if t % 3 == 0:
            h = np.sin(h) * w
        elif np.sum(h) > 0:
            h = h * w - 0.1
        else:
            h = np.exp(-h * h)
    return np.sum(h)


@pytest.mark.parametrize("n", [1, 6, 13])
def test_branches(n):
    args = (np.array([0.4, -0.2]), np.array([1.1, 0.7]), n)
    check(branches, args, 0)
    check(branches, args, 1)


def step(h, W, b):
    return np.tanh(h @ W + b)


def calls_helper(h, W, b, n):
    for t in range(n):
        h = step(h, W, b)
    return np.sum(h)


@pytest.mark.parametrize("n", [2, 10])
def test_loop_calls_helper_with_broadcasting(n):
    rng = np.random.default_rng(1)
    args = (rng.normal(size=(2, 3)), rng.normal(size=(3, 3)) * 0.6, rng.normal(size=3), n)
    for wrt in range(3):
        check(calls_helper, args, wrt)


def stopped(x, n):
    h = x
    for t in range(n):
        h = h / stop_gradient(np.max(np.abs(h))) + np.sin(x)
    return np.sum(h)


def test_stop_gradient_in_loop():
    """(the max is a constant to the gradient: finite differences see it change)"""
    check(stopped, (np.array([0.5, -1.5, 2.0]), 8), differences=False)


def carried(x, w, n):
    h, c = x, x * 0.5
    s = (x, 2.0 * x)
    total = 0.0
    for t in range(n):
        h, c = np.tanh(h * w + c), c * 0.9 + h
        s = (np.sin(s[0] * w) + s[1], s[1] * 0.5)
        total = total + np.sum(h * h)
    return total + np.sum(c) * t + np.sum(s[0] * s[1])


@pytest.mark.parametrize("n", [1, 2, 9])
def test_carried_tuples_and_loop_variable(n):
    args = (np.array([0.3, -0.7]), np.array([0.8, 1.3]), n)
    check(carried, args, 0)
    check(carried, args, 1)


def dict_rnn(p, xs):
    h = np.zeros(p["W"].shape[0])
    for x in xs:
        h = np.tanh(p["W"] @ h + p["U"] @ x)
    return np.sum(h)


def test_dict_of_parameters():
    rng = np.random.default_rng(3)
    p = {"W": rng.normal(size=(3, 3)), "U": rng.normal(size=(3, 2))}
    xs = rng.normal(size=(6, 2))
    made = grad(dict_rnn, checkpoint="sqrt")
    g, plain = made(p, xs), grad(dict_rnn)(p, xs)
    assert "_segment" in made.source
    for k in p:
        np.testing.assert_allclose(g[k], plain[k], rtol=1e-10, atol=1e-12)
        f = lambda v, k=k: dict_rnn({**p, k: v}, xs)     # noqa: E731
        np.testing.assert_allclose(g[k], numeric_grad(f, (p[k],), 0), rtol=1e-5, atol=1e-7)


def made_inside(W, U, xs):
    h = np.zeros((xs.shape[1], W.shape[1]))
    for t in range(xs.shape[0]):
        h = np.tanh(np.dot(xs[t], U) + np.dot(h, W))
    return np.sum(h ** 2)


@pytest.mark.parametrize("checkpoint", ["sqrt", 1, 3, 50])
def test_rnn_state_made_inside(checkpoint):
    rng = np.random.default_rng(2)
    W, U, xs = rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(2, 3)), rng.normal(size=(7, 4, 2))
    check(made_inside, (W, U, xs), 0, checkpoint)
    check(made_inside, (W, U, xs), 1, checkpoint)


def test_value_and_grad():
    x = np.array([0.3, 0.9])
    value, g = value_and_grad(recurrence, checkpoint="sqrt")(x, 10)
    assert value == pytest.approx(recurrence(x, 10))
    np.testing.assert_allclose(g, grad(recurrence)(x, 10), rtol=1e-10)


def test_tape_memory_is_about_sqrt_n():
    """The checkpointed gradient's peak memory is a small part of the plain one's."""
    x = np.array([0.5])

    def peak(g):
        g(x, 40)        # compiled first
        tracemalloc.start()
        g(x, 4000)
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top

    plain = peak(grad(recurrence))
    checkpointed = peak(grad(recurrence, checkpoint="sqrt"))
    assert checkpointed * 5 < plain, (checkpointed, plain)


def test_default_is_unchanged():
    assert grad(recurrence).source == grad(recurrence, checkpoint=None).source
    assert "_segment" not in grad(recurrence).source


def series(x, c):
    term = c
    total = c
    n = 1.0
    while np.max(np.abs(term)) > 1e-14 * np.max(np.abs(total)):
        term = term * x / n
        total = total + term
        n = n + 1.0
    return np.sum(total)


def marked_series(x, c):
    term = c
    total = c
    n = 1.0
    with sgcompiler.checkpoint():
        while np.max(np.abs(term)) > 1e-14 * np.max(np.abs(total)):
            term = term * x / n
            total = total + term
            n = n + 1.0
    return np.sum(total)


@pytest.mark.parametrize("x, c", [(0.0, 1.0), (0.5, 1.0), (3.0, 2.0),
                                  (np.array([0.3, -1.2, 2.0]), np.array([1.0, 0.5, 2.0])),
                                  (np.array([[1.5], [-0.5]]), np.array([0.7, 1.1, 1.3]))],
                         ids=["no-trip", "few", "many", "arrays", "broadcast"])
def test_while_loops_run_in_segments(x, c):
    # they were refused: their trip count is not known before them
    for made in (grad(marked_series, wrt=(0, 1)), grad(series, wrt=(0, 1), checkpoint=3)):
        got = made(x, c)
        want = grad(series, wrt=(0, 1))(x, c)
        for i in (0, 1):
            np.testing.assert_allclose(got[i], want[i], rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(got[i], numeric_grad(series, (x, c), i), rtol=1e-5,
                                       atol=1e-7)
            assert np.shape(got[i]) == np.shape((x, c)[i])
        assert "_segment" in made.source and "_forward(" in made.source
    assert "_every = _every + 1" in grad(marked_series).source          # 1, 2, 3, ... trips
    assert "_every = 3" in grad(series, checkpoint=3).source
    for wrt in (0, 1):          # checkpoint="sqrt": every outermost loop
        assert "_count < _every" in check(series, (x, c), wrt=wrt).source
    value, _ = value_and_grad(marked_series)(x, c)
    assert value == pytest.approx(series(x, c), rel=1e-12)


def long_product(x, n):
    k = 0
    while k < n:
        x = x * 0.9999 + 1e-4 * np.sin(x)
        k = k + 1
    return np.sum(x)


def test_a_long_while_loop_keeps_about_sqrt_n_states():
    x = np.full(1, 0.5)

    def peak(made):
        made(x, 20)         # compiled first
        tracemalloc.start()
        got = made(x, 4000)
        top = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return top, got
    plain, want = peak(grad(long_product))
    checkpointed, got = peak(grad(long_product, checkpoint="sqrt"))
    np.testing.assert_allclose(got, want, rtol=1e-10)
    assert checkpointed * 5 < plain, (checkpointed, plain)


def breaks(x, n):
    for t in range(n):
        x = x * 2.0
        if np.sum(x) > 10.0:
            break
    return np.sum(x)


def returns(x, n):
    for t in range(n):
        x = x * 2.0
        if np.sum(x) > 10.0:
            return np.sum(x)
    return np.sum(x)


def draws(x, n, rng):
    for t in range(n):
        x = x * rng.normal(size=x.shape)
    return np.sum(x)


def module_draws(x, n):
    for t in range(n):
        x = x + np.random.normal(size=x.shape)
    return np.sum(x)


def pairs(x, ws):
    for i, w in enumerate(ws):
        x = x * w
    return np.sum(x)


def appends(x, n):
    acc = []
    for t in range(n):
        x = x * 2.0
        acc.append(x)
    return np.sum(acc[0])


def writes(x, n):
    out = np.zeros(n)
    for t in range(n):
        x = x * 2.0
        out[t] = np.sum(x)
    return np.sum(out)


def joins(x, n):
    acc = ()
    for t in range(n):
        x = x * 2.0
        acc = acc + (x,)
    return np.sum(acc[0])


def unbound(x, n):
    for t in range(n):
        if t > 0:
            x = x + last
        last = x * 0.5
    return np.sum(x)


@pytest.mark.parametrize("f,args,words", [
    (breaks, (np.ones(2), 3), "break"),
    (returns, (np.ones(2), 3), "return"),
    (draws, (np.ones(2), 3, np.random.default_rng(0)), "random"),
    (module_draws, (np.ones(2), 3), "random"),
    (pairs, (np.ones(2), [np.ones(2)]), "range(len(xs))"),
    (unbound, (np.ones(2), 3), "'last' may be unbound"),
    (appends, (np.ones(2), 3), "writes into 'acc'"),
    (writes, (np.ones(2), 3), "writes into 'out'"),
    (joins, (np.ones(2), 3), "joined with +"),
])
def test_refused_with_line(f, args, words):
    with pytest.raises(SGCompilerError) as err:
        grad(f, checkpoint="sqrt")(*args)
    assert words in str(err.value)
    assert "test_checkpoint.py:" in str(err.value)


def test_refused_options():
    with pytest.raises(ValueError, match="checkpoint must be"):
        grad(recurrence, checkpoint="binomial")
    with pytest.raises(ValueError, match="checkpoint must be"):
        grad(recurrence, checkpoint=0)
    with pytest.raises(SGCompilerError, match="has_aux"):
        grad(recurrence, has_aux=True, checkpoint="sqrt")
    with pytest.raises(SGCompilerError, match="gradient of a gradient"):
        grad(grad(recurrence), checkpoint="sqrt")
    with pytest.raises(SGCompilerError, match="differentiated again"):
        grad(grad(recurrence, checkpoint="sqrt"))(np.ones(2), 3)


@pytest.mark.parametrize("n", [0, 5, 9])
def test_vjp(n):
    rng = np.random.default_rng(4)
    W, U, xs = rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(2, 3)), rng.normal(size=(n, 4, 2))
    out, pull = sgcompiler.vjp(made_inside, W, U, xs, checkpoint="sqrt")
    plain_out, plain_pull = sgcompiler.vjp(made_inside, W, U, xs)
    assert out == plain_out
    assert "_segment" in pull.source
    got = pull(1.0)
    for g, h in zip(got, plain_pull(1.0)):
        np.testing.assert_allclose(g, h, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got[0], numeric_grad(made_inside, (W, U, xs), 0),
                               rtol=1e-5, atol=1e-7)


def sometimes(x, w, n, flag):
    best = x * 0.0
    h = x
    if flag:
        for t in range(n):
            h = np.sin(h * w)
            if t % 4 == 1:
                best = best + h
            if t % 3 == 2:
                continue
            h = h + 0.1 * x
    for t in range(n):
        best = best * 0.5 + h
    return np.sum(best * h)


@pytest.mark.parametrize("n,flag", [(0, True), (5, True), (10, False), (11, True)])
def test_loops_in_branches_with_continue_and_state_set_on_some_trips(n, flag):
    args = (np.array([0.2, 0.9, -0.4]), np.array([1.3, -0.2, 0.6]), n, flag)
    check(sometimes, args, 0)
    check(sometimes, args, 1)


def inner_helper(h, w, m):
    for j in range(m):
        h = np.tanh(h * w) + h * 0.1
    return h


def helper_with_loop(x, w, n):
    h = x
    for t in range(n):
        h = inner_helper(h, w, 3) * x
    return np.sum(h)


def test_loop_calls_helper_with_its_own_loop():
    args = (np.array([0.4, -0.6]), np.array([0.7, 1.1]), 10)
    check(helper_with_loop, args, 0)
    check(helper_with_loop, args, 1)


def test_pickled_gradient_keeps_its_checkpoint():
    import pickle
    made = pickle.loads(pickle.dumps(grad(recurrence, checkpoint=4)))
    x = np.array([0.3, 0.6])
    np.testing.assert_allclose(made(x, 9), grad(recurrence)(x, 9), rtol=1e-10)
    assert "_every = 4" in made.source
def dstate(x, n):
    p = {"a": x, "b": 2.0 * x}
    for t in range(n):
        p = {"a": np.sin(p["a"]) + p["b"], "b": p["b"] * 0.9}
    return np.sum(p["a"] * p["b"])

def lstate(x, n):
    p = [x, 2.0 * x]
    for t in range(n):
        p = [np.sin(p[0]) + p[1], p[1] * 0.9]
    return np.sum(p[0] * p[1])

def scal(a, n):
    x = 0.5
    for t in range(n):
        x = a * np.sin(x) + 0.1
    return x * x


@pytest.mark.parametrize("n", [0, 1, 4, 10])
def test_dict_list_and_float_state(n):
    x = np.array([0.3, -0.7])
    check(dstate, (x, n))
    check(lstate, (x, n))
    check(scal, (0.9, n))


# --- found here: a pull-back of a loop called a second time found its tape used up --------

def vector_loop(x, w):
    h = x
    for t in range(6):
        h = np.sin(h) * w + np.exp(-h * h)
    return h * 2.0


@pytest.mark.parametrize("checkpoint", [None, "sqrt"])
def test_pull_back_called_twice_and_reverse_jacobian(checkpoint):
    x, w = np.array([0.3, -0.7, 0.2]), np.array([0.9, 1.2, -0.5])
    out, pull = sgcompiler.vjp(vector_loop, x, w, checkpoint=checkpoint)
    first, second = pull(np.ones(3)), pull(np.ones(3))
    np.testing.assert_array_equal(first[0], second[0])
    c = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(pull(c)[0], numeric_grad(
        lambda x: np.sum(vector_loop(x, w) * c), (x,), 0), rtol=1e-5, atol=1e-7)
    J = sgcompiler.jacobian(vector_loop, mode="rev")(x, w)
    np.testing.assert_allclose(J, sgcompiler.jacobian(vector_loop, mode="fwd")(x, w),
                               rtol=1e-10, atol=1e-12)


def list_loop(h, xs):
    for x in xs:
        h = np.tanh(h * x) + x
    return np.sum(h)


def test_loop_over_a_list_of_arrays():
    h, xs = np.array([0.3, -0.7]), [np.array([0.5, 1.1]) * k for k in range(1, 6)]
    made = grad(list_loop, wrt=(0, 1), checkpoint="sqrt")
    g, plain = made(h, xs), grad(list_loop, wrt=(0, 1))(h, xs)
    assert "_segment" in made.source and isinstance(g[1], list)
    np.testing.assert_allclose(g[0], plain[0], rtol=1e-10)
    for a, b in zip(g[1], plain[1]):
        np.testing.assert_allclose(a, b, rtol=1e-10)
    np.testing.assert_allclose(g[0], numeric_grad(list_loop, (h, xs), 0), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("n", [0, 3, 16])
@pytest.mark.parametrize("checkpoint", ["sqrt", 4])
def test_jvp_takes_checkpoint_and_saves_nothing_per_trip(n, checkpoint):
    # it gave Python's TypeError (an unexpected keyword argument)
    x = np.array([0.3, -0.4, 0.8])
    t = np.array([1.0, 0.5, -2.0])
    out, out_dot = sgcompiler.jvp(recurrence, (x, n), (t, None), checkpoint=checkpoint)
    plain_out, plain_dot = sgcompiler.jvp(recurrence, (x, n), (t, None))
    assert out == plain_out and out_dot == pytest.approx(plain_dot, rel=1e-12)
    assert out_dot == pytest.approx(np.dot(numeric_grad(recurrence, (x, n), 0), t), rel=1e-6)
    # forward mode keeps no tape: there is nothing for checkpointing to shorten
    assert "append" not in jvp_source(recurrence, (x, n), (t, None))


def test_jvp_checks_its_checkpoint_as_grad_does():
    with pytest.raises(ValueError, match="checkpoint must be"):
        sgcompiler.jvp(recurrence, (np.ones(2), 3), (np.ones(2), None), checkpoint="binomial")


def marked_rnn(W, U, xs, b):
    h = np.zeros((xs.shape[1], W.shape[1]))
    with sgcompiler.checkpoint():
        for t in range(xs.shape[0]):
            h = np.tanh(np.dot(xs[t], U) + np.dot(h, W) + b)
    for t in range(3):
        h = h * 0.9 + b
    return np.sum(h ** 2)


@pytest.mark.parametrize("n, batch, bshape", [(0, 4, (3,)), (1, 1, (1,)), (7, 4, (1, 3)),
                                              (16, 2, (2, 3))])
def test_with_checkpoint_marks_one_loop(n, batch, bshape):
    # the example: the block around one loop; b broadcasts against h
    rng = np.random.default_rng(n)
    args = (rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(2, 3)),
            rng.normal(size=(n, batch, 2)), rng.normal(size=bshape))
    for wrt in (0, 1, 3):
        made = grad(marked_rnn, wrt=wrt)
        g = made(*args)
        np.testing.assert_allclose(g, grad(marked_rnn, wrt=wrt, checkpoint="sqrt")(*args),
                                   rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(g, numeric_grad(marked_rnn, args, wrt), rtol=1e-5,
                                   atol=1e-7)
        assert g.shape == args[wrt].shape
    # the marked loop runs in segments, the other one as written
    segments = [line for line in made.source.splitlines()
                if line.startswith("def ") and "_segment" in line and "_forward(" in line]
    assert len(segments) == 1
    assert "for t in range(3):" in made.source


def marked_every(x, n):
    h = x
    with sgcompiler.checkpoint(3):
        for t in range(n):
            h = np.sin(h) * x + 0.1
    return np.sum(h)


def marked_ten(x):
    h = x
    with sgcompiler.checkpoint(4):
        for t in range(10):
            h = np.sin(h) * x + 0.1
    return np.sum(h)


def test_with_checkpoint_takes_trips_per_segment_value_and_grad_and_vjp():
    x = np.array([0.3, 0.9, -0.2])
    value, g = value_and_grad(marked_every)(x, 10)
    assert value == pytest.approx(marked_every(x, 10))
    np.testing.assert_allclose(g, grad(recurrence)(x, 10), rtol=1e-10)
    np.testing.assert_allclose(g, numeric_grad(marked_every, (x, 10), 0), rtol=1e-5)
    assert "_every = 3" in grad(marked_every).source
    out, pull = sgcompiler.vjp(marked_ten, x)
    assert "_every = 4" in pull.source
    np.testing.assert_allclose(pull(1.0)[0], g, rtol=1e-10)


def test_with_checkpoint_runs_plain_where_segments_are_not_made():
    # grad of grad and jvp read the loop as written (no segments), and are right
    x = np.array([0.3, 0.9])
    h_plain = sgcompiler.hessian(recurrence)(x, 5)
    np.testing.assert_allclose(sgcompiler.hessian(marked_every)(x, 5), h_plain, rtol=1e-10)
    t = np.array([1.0, -1.0])
    np.testing.assert_allclose(sgcompiler.jvp(marked_every, (x, 5), (t, None))[1],
                               sgcompiler.jvp(recurrence, (x, 5), (t, None))[1], rtol=1e-12)


def marked_two(x, n):
    with sgcompiler.checkpoint():
        y = x * 2.0
        for t in range(n):
            y = np.sin(y)
    return np.sum(y)


def marked_inner(x, n):
    for s in range(2):
        with sgcompiler.checkpoint():
            for t in range(n):
                x = np.sin(x)
    return np.sum(x)


def marked_variable(x, n, k):
    with sgcompiler.checkpoint(k):
        for t in range(n):
            x = np.sin(x)
    return np.sum(x)


def marked_bad(x, n):
    with sgcompiler.checkpoint(0):
        for t in range(n):
            x = np.sin(x)
    return np.sum(x)


@pytest.mark.parametrize("f, words", [
    (marked_two, "exactly one `for` loop"),
    (marked_inner, "inside another loop"), (marked_variable, "one literal"),
    (marked_bad, "checkpoint must be"),
])
def test_with_checkpoint_refused_with_line(f, words):
    args = (np.ones(2), 3, 2)[:f.__code__.co_argcount]
    with pytest.raises(SGCompilerError) as err:
        grad(f)(*args)
    assert words in str(err.value) and "test_checkpoint.py:" in str(err.value)
    assert f(*args) is not None      # as Python, the block does nothing


def marked_helper(h, x, n):
    with sgcompiler.checkpoint():
        for t in range(n):
            h = np.sin(h) * x + 0.1
    return h


def calls_marked_helper(x, b, n):
    h = marked_helper(x + b, x, n)
    return np.sum(h * h)


def calls_plain_helper(x, b, n):
    h = x + b
    for t in range(n):
        h = np.sin(h) * x + 0.1
    return np.sum(h * h)


@pytest.mark.parametrize("n, bshape", [(0, (3,)), (9, (1,)), (13, (2, 3))])
def test_with_checkpoint_in_a_called_helper(n, bshape):
    # loops inside called helpers: the helper's own block is read when it is compiled
    rng = np.random.default_rng(n)
    args = (rng.uniform(-1, 1, 3), rng.uniform(-1, 1, bshape), n)
    made = grad(calls_marked_helper, wrt=(0, 1))
    got = made(*args)
    for i, g in enumerate(got):
        np.testing.assert_allclose(g, grad(calls_plain_helper, wrt=(0, 1))(*args)[i],
                                   rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(g, numeric_grad(calls_marked_helper, args, i), rtol=1e-5,
                                   atol=1e-7)
    assert "marked_helper_segment" in made.source


def marked_aux(x, n):
    h = x
    with sgcompiler.checkpoint():
        for t in range(n):
            h = np.sin(h) * x + 0.1
    return np.sum(h), h


def test_with_checkpoint_and_has_aux():
    x = np.array([0.3, 0.8])
    g, aux = grad(marked_aux, has_aux=True)(x, 9)
    np.testing.assert_allclose(g, grad(recurrence)(x, 9), rtol=1e-10)
    np.testing.assert_allclose(aux, marked_aux(x, 9)[1])
