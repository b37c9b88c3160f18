"""grad(f, backend="numba"): the generated code compiled by numba, checked against finite
differences and the NumPy backend; the NumPy code where numba cannot compile it, with one
JitFallbackWarning. Few functions: each costs a numba compilation (about a second)."""
import math
import warnings

import gast
import numpy as np
import pytest

from gradcheck import numeric_grad
from sgcompiler import JitFallbackWarning, grad, jvp, value_and_grad
from sgcompiler.analysis.shape_algebra import WEAK
from sgcompiler.backend import jit
from sgcompiler.backend.codegen import to_source
from sgcompiler.derivatives import _tangent_function


def pendulum(k, c, theta, omega, dt, steps):
    for _ in range(steps):
        alpha = -k * math.sin(theta) - c * omega
        theta = theta + dt * omega
        omega = omega + dt * alpha
    return theta * theta + omega * omega


def recurrence(w, x, steps):
    h = x
    for _ in range(steps):
        h = np.tanh(w * h + x)
    return np.sum(h * h)


def exp_series(x):
    term = 1.0
    total = 1.0
    n = 1.0
    while abs(term) > 1e-16 * abs(total):
        term = term * x / n
        total = total + term
        n = n + 1.0
    return total


def on_dict(p):
    return np.sum(p["w"] ** 2)


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="'numpy', 'numba'"):
        grad(pendulum, backend="cuda")


def test_code_for_numba_has_no_del_and_positional_out():
    tree = gast.parse("def f(a, b):\n    c = np.multiply(a, b, out=a)\n    del a\n"
                      "    for i in range(3):\n        del b\n    return c\n").body[0]
    text = to_source(jit.for_numba(tree), "h")
    assert "del" not in text and "np.multiply(a, b, a)" in text
    assert "for i in range(3):\n        pass\n    return c" in text      # no `else: pass`


def test_without_numba_the_numpy_code_runs_and_says_why(monkeypatch):
    monkeypatch.setattr(jit, "numba", None)
    g = grad(exp_series, backend="numba")
    with pytest.warns(JitFallbackWarning, match="numba is not installed"):
        assert g(2.0) == pytest.approx(math.exp(2.0))


def _silent(call):
    """call(), failing on a JitFallbackWarning: the code did run as numba code."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", JitFallbackWarning)
        return call()


def test_scalar_loop_compiles_and_matches_finite_differences():
    pytest.importorskip("numba")
    args = (1.5, 0.1, 0.7, 0.0, 0.01, 300)
    g = grad(pendulum, wrt=(0, 1, 2), backend="numba")
    got = _silent(lambda: g(*args))
    want = grad(pendulum, wrt=(0, 1, 2))(*args)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    for i in range(3):
        np.testing.assert_allclose(got[i], numeric_grad(pendulum, args, i), rtol=1e-6)
    assert "del " not in g.source


@pytest.mark.parametrize("shapes, compiled", [(((3,), (3,)), True),
                                              # its code calls the runtime helper
                                              # unbroadcast, which numba cannot call
                                              (((1,), (2, 3)), False)],
                         ids=["same", "broadcast"])
def test_array_loop_matches_finite_differences(shapes, compiled):
    pytest.importorskip("numba")
    rng = np.random.default_rng(0)
    w, x = (rng.uniform(-0.5, 0.5, s) for s in shapes)
    g = value_and_grad(recurrence, wrt=(0, 1), backend="numba")
    if compiled:
        value, (dw, dx) = _silent(lambda: g(w, x, 5))
    else:
        with pytest.warns(JitFallbackWarning, match="unbroadcast"):
            value, (dw, dx) = g(w, x, 5)
    assert value == pytest.approx(recurrence(w, x, 5))
    np.testing.assert_allclose(dw, numeric_grad(recurrence, (w, x, 5), 0), rtol=1e-6)
    np.testing.assert_allclose(dx, numeric_grad(recurrence, (w, x, 5), 1), rtol=1e-6)
    assert dw.shape == w.shape and dx.shape == x.shape


def test_what_numba_cannot_compile_falls_back_once_with_the_reason():
    pytest.importorskip("numba")
    g = grad(on_dict, backend="numba")
    p = {"w": np.arange(3.0)}
    with pytest.warns(JitFallbackWarning, match="gradient of on_dict.*numba cannot"):
        first = g(p)
    np.testing.assert_allclose(first["w"], 2 * p["w"])
    second = _silent(lambda: g({"w": np.ones(3)}))      # no second warning
    np.testing.assert_allclose(second["w"], 2.0)


def test_jvp_of_a_scalar_loop_is_compiled_once_and_matches():
    pytest.importorskip("numba")
    args = (1.5, 0.1, 0.7, 0.0, 0.01, 200)
    direction = (1.0, -0.5, None, None, None, None)
    out, out_dot = _silent(lambda: jvp(pendulum, args, direction, backend="numba"))
    want, want_dot = jvp(pendulum, args, direction)
    assert out == pytest.approx(want, rel=1e-12) and out_dot == pytest.approx(want_dot, rel=1e-12)
    d = numeric_grad(pendulum, args, 0) - 0.5 * numeric_grad(pendulum, args, 1)
    assert out_dot == pytest.approx(d, rel=1e-6)
    first, _ = _tangent_function(pendulum, args, direction, "numba")
    again, _ = _tangent_function(pendulum, args, direction, "numba")
    assert first is again           # one numba compilation, not one per call


def rows(w, xs, m):
    s = 0.0
    for i in range(xs.shape[0]):
        for j in range(m):
            s = math.sin(w * s + xs[i])
    return s * s


@pytest.mark.parametrize("n, m", [(3, 2), (5, 1)])
def test_ints_and_floats_saved_in_one_loop_compile(n, m):
    # the trip count of the inner loop and the row number (ints) and s (a float) once
    # shared one tape, which numba could not type: the whole gradient fell back
    pytest.importorskip("numba")
    w, xs = 0.7, np.linspace(0.1, 0.6, n)
    g = grad(rows, wrt=(0, 1), backend="numba")
    dw, dxs = _silent(lambda: g(w, xs, m))
    want_w, want_xs = grad(rows, wrt=(0, 1))(w, xs, m)
    assert dw == pytest.approx(want_w, rel=1e-12)
    np.testing.assert_allclose(dxs, want_xs, rtol=1e-12)
    assert dw == pytest.approx(numeric_grad(rows, (w, xs, m), 0), rel=1e-6)
    np.testing.assert_allclose(dxs, numeric_grad(rows, (w, xs, m), 1), rtol=1e-6)
    # the row numbers, saved once a trip of a counted loop, are an array of ints; s,
    # saved in the nested loop, a list
    assert "_tape_i = np.empty(len(range(_item_0)), np.int64)" in g.source
    assert "_tape_s.append(s)" in g.source


def test_a_float_saved_before_it_is_first_bound_starts_as_a_float():
    # `_sin = None` made the tape a list of optional floats (twice the time)
    pytest.importorskip("numba")
    args = (1.5, 0.1, 0.7, 0.0, 0.01, 50)
    g = grad(pendulum, wrt=(0, 1), backend="numba")
    got = _silent(lambda: g(*args))
    np.testing.assert_allclose(got, grad(pendulum, wrt=(0, 1))(*args), rtol=1e-12)
    assert "_sin = 0.0" in g.source and "_sin = None" not in g.source


def _split(text, refers_to=lambda name: math if name == "math" else None):
    tree = gast.parse(text).body[0]
    return to_source(jit.for_numba(tree, refers_to), "h")


def test_tapes_are_split_by_name_and_by_item():
    text = _split("def f(x, y, n):\n    _tape = []\n    s = None\n"
                  "    for i in range(n):\n        _tape.append(s)\n"
                  "        s = math.sin(x)\n        _tape.append(y[i].copy())\n"
                  "        y[i] = s\n        _tape.append(y)\n        y = y * 2\n"
                  "    for i in range(n):\n        y = _tape.pop()\n"
                  "        y[i] = _tape.pop()\n        s = _tape.pop()\n    return s\n")
    assert "_tape = []" not in text
    for line in ("_tape_s = []", "_tape_y = []", "_tape_y_items = []", "s = 0.0",
                 "_tape_y_items.append(y[i].copy())", "y[i] = _tape_y_items.pop()",
                 "y = _tape_y.pop()", "s = _tape_s.pop()"):
        assert line in text


def test_a_tape_used_otherwise_and_a_math_that_is_not_math_stay():
    text = _split("def f(x):\n    _tape = []\n    s = None\n    _tape.append(s)\n"
                  "    s = math.sin(x)\n    return s, _tape\n", refers_to=lambda name: None)
    assert "_tape = []" in text and "_tape.append(s)" in text and "s = None" in text
    # a name also given a value that may not be a float keeps its None
    text = _split("def f(x):\n    _tape = []\n    s = None\n    _tape.append(s)\n"
                  "    s = math.sin(x)\n    _tape.append(s)\n    s = x * 2\n"
                  "    s = _tape.pop()\n    s = _tape.pop()\n    return x\n")
    assert "s = None" in text and "_tape_s = []" in text


def scalar_loops(w, x, n, m):
    s = x
    for i in range(n):
        for j in range(m):
            s = math.sin(w * s) + x * j
    return s * s


def test_a_loop_over_python_numbers_alone_compiles():
    # it called unbroadcast (shapes unknown without arrays): the whole gradient fell back
    pytest.importorskip("numba")
    args = (0.7, 0.3, 3, 4)
    g = grad(scalar_loops, wrt=(0, 1), backend="numba")
    got = _silent(lambda: g(*args))
    np.testing.assert_allclose(got, grad(scalar_loops, wrt=(0, 1))(*args), rtol=1e-12)
    for i in (0, 1):
        assert got[i] == pytest.approx(numeric_grad(scalar_loops, args, i), rel=1e-6)


def items(w, x, n):
    y = np.zeros(3)
    for i in range(n):
        k = i % 3
        y[k] = np.tanh(w * y[k] + x[k])
    return np.sum(y * y)


@pytest.mark.parametrize("n", [0, 2, 7])
def test_numbers_written_into_an_array_in_a_loop_compile(n):
    # y[k].copy() saved a number numba has no `copy` for, and `k = None` made an optional
    # index: the whole gradient fell back
    pytest.importorskip("numba")
    w, x = 0.7, np.array([0.1, -0.2, 0.3])
    g = value_and_grad(items, wrt=(0, 1), backend="numba")
    value, (dw, dx) = _silent(lambda: g(w, x, n))
    assert value == pytest.approx(items(w, x, n), rel=1e-12)
    assert dw == pytest.approx(numeric_grad(items, (w, x, n), 0), rel=1e-6, abs=1e-10)
    np.testing.assert_allclose(dx, numeric_grad(items, (w, x, n), 1), rtol=1e-6, atol=1e-10)
    assert "_tape_y_items.append(y[k])" in g.source and "    k = 0\n" in g.source


def test_a_tape_whose_pops_do_not_name_its_pushes_stays_one():
    # h.copy() pushed, h popped: a key of their own each would split one pair in two
    text = _split("def f(h, n):\n    _tape = []\n    for i in range(n):\n"
                  "        _tape.append(h.copy())\n        h = h * 2\n"
                  "    for i in range(n):\n        h = _tape.pop()\n    return h\n")
    assert "_tape = []" in text and "h = _tape.pop()" in text


def _step(x, a):
    return a * math.sin(x) + 0.1


def _loop(a, x, n):
    for _ in range(n):
        x = _step(x, a)
    return x


def through_helpers(a, x0, n):
    return _loop(a, x0, n) ** 2


def _compiled_for(jitted_function):
    """The argument types numba compiled `jitted_function` (a _Jitted) for."""
    return jitted_function._dispatcher.signatures if jitted_function._dispatcher else []


def _piece(jitted_function, start, half):
    """The function named `start...half` that `jitted_function` calls."""
    found, = [p for n, p in jitted_function.callees().items()
              if n.startswith(start) and n.endswith(half)]
    return found


def _entry(g):
    (function, *_), = g._compiled.values()
    return function


def test_helpers_are_compiled_by_numba_too():
    # a helper's forward and backward were NumPy code that numba code cannot call, so
    # the whole gradient fell back to NumPy
    pytest.importorskip("numba")
    args = (0.9, 0.3, 7)
    g = grad(through_helpers, wrt=(0, 1), backend="numba")
    got = _silent(lambda: g(*args))
    np.testing.assert_allclose(got, grad(through_helpers, wrt=(0, 1))(*args), rtol=1e-12)
    for i in (0, 1):
        assert got[i] == pytest.approx(numeric_grad(through_helpers, args, i), rel=1e-6)
    top = _entry(g)
    assert _compiled_for(top) and not top.fallen_back
    assert len(top.callees()) == 2 and all(_compiled_for(p) for p in top.callees().values())
    assert _compiled_for(_piece(_piece(top, "_loop", "_nb_forward"), "_step", "_forward"))
    assert _compiled_for(_piece(_piece(top, "_loop", "_nb_backward"), "_step", "_backward"))


def on_a_dict(p, n):
    return _loop(p["a"], 0.3, n) ** 2 + p["a"]


def test_a_gradient_numba_cannot_compile_still_calls_its_helpers_compiled():
    pytest.importorskip("numba")
    g = grad(on_a_dict, backend="numba")
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", JitFallbackWarning)
        got = g({"a": 0.9}, 6)
        again = g({"a": 0.8}, 6)
    assert got["a"] == pytest.approx(grad(on_a_dict)({"a": 0.9}, 6)["a"], rel=1e-12)
    assert again["a"] == pytest.approx(grad(on_a_dict)({"a": 0.8}, 6)["a"], rel=1e-12)
    assert got["a"] == pytest.approx(
        numeric_grad(lambda a: on_a_dict({"a": a}, 6), (0.9,), 0), rel=1e-6)
    messages = [str(w.message) for w in said]
    assert len(messages) == len(set(messages))          # each said once
    assert any(m.startswith("the gradient of on_a_dict: ") and "numba cannot compile it"
               in m for m in messages)
    top = _entry(g)
    assert top.fallen_back
    # the helper's forward ran as numba code, called by the NumPy code
    forward = _piece(top, "_loop", "_nb_forward")
    assert _compiled_for(forward) and not forward.fallen_back
    assert _compiled_for(_piece(forward, "_step", "_forward"))


try:
    from scipy.special import expit     # (a SciPy ufunc: numba has no type for it)
except ImportError:
    expit = None


def _unknown_to_numba(x):
    return expit(x) * 2.0


def mixed(a, n):
    s = 0.0
    for _ in range(n):
        s = math.sin(s) * a + _unknown_to_numba(a)
    return _loop(a, s, n) ** 2


def test_a_helper_numba_cannot_compile_runs_as_numpy_alone():
    pytest.importorskip("numba")
    pytest.importorskip("scipy.special")
    g = grad(mixed, backend="numba")
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", JitFallbackWarning)
        da = g(0.9, 5)
        g(0.7, 5)
    assert da == pytest.approx(grad(mixed)(0.9, 5), rel=1e-12)
    assert da == pytest.approx(numeric_grad(mixed, (0.9, 5), 0), rel=1e-6)
    messages = [str(w.message) for w in said]
    assert len(messages) == len(set(messages))
    helper = [m for m in messages if m.startswith("the forward of _unknown_to_numba: ")]
    assert helper and "expit" in helper[0]
    top = [m for m in messages if m.startswith("the gradient of mixed: ")]
    assert top and "numba cannot compile _unknown_to_numba_nb_forward, which it calls" \
        in top[0]
    # (_loop's backward may say that numba cannot take what NumPy code passes it)
    assert not any("_loop" in m.split(":")[0] and "cannot compile" in m for m in messages)
    forward = _piece(_entry(g), "_loop", "_nb_forward")
    assert _compiled_for(forward) and not forward.fallen_back


SCALE = 2.0


def scaled(x, n):
    for _ in range(n):
        x = math.sin(x) * SCALE
    return x


def test_calls_with_python_numbers_take_numbas_compiled_entry(monkeypatch):
    # the full path (the dispatcher's typing, the checks, the gradient's shaping) cost
    # several times a short loop's gradient
    pytest.importorskip("numba")
    g = value_and_grad(scaled, backend="numba")
    first = _silent(lambda: g(0.4, 5))
    monkeypatch.setattr(jit._Jitted, "__call__", lambda *a, **k: pytest.fail("full path"))
    value, dx = _silent(lambda: g(0.3, 5))
    assert value == pytest.approx(scaled(0.3, 5), rel=1e-12)
    assert dx == pytest.approx(numeric_grad(scaled, (0.3, 5), 0), rel=1e-6)
    assert type(dx) is float and first != (value, dx)
    monkeypatch.undo()
    # a name the code read means something else now: the full path compiles it again
    monkeypatch.setitem(globals(), "SCALE", 3.0)
    value, dx = _silent(lambda: g(0.3, 5))
    assert value == pytest.approx(scaled(0.3, 5), rel=1e-12)
    assert dx == pytest.approx(numeric_grad(scaled, (0.3, 5), 0), rel=1e-6)
    # other types than the entry's: the full path
    assert g(np.float64(0.3), 5)[1] == pytest.approx(dx, rel=1e-12)
    with pytest.raises(TypeError):
        g("x", 5)


def _times_scale(v):
    return v * SCALE


def scaled_steps(x, n):
    for _ in range(n):
        x = math.sin(_times_scale(x))
    return x * x


def test_a_global_numba_took_as_a_constant_is_read_again_when_it_changes(monkeypatch):
    # numba keeps the globals (and cells) the code reads as constants of what it
    # compiles: a changed SCALE gave the gradient of the old function, here in the
    # helper's pieces (n= by name: not the fast path)
    pytest.importorskip("numba")
    g = grad(scaled_steps, backend="numba")
    for scale in (2.0, 3.0, 2.0):
        monkeypatch.setitem(globals(), "SCALE", scale)
        got = _silent(lambda: g(0.3, n=4))
        assert got == pytest.approx(grad(scaled_steps)(0.3, 4), rel=1e-12)
        assert got == pytest.approx(numeric_grad(scaled_steps, (0.3, 4), 0), rel=1e-6)


def _add_helper(s, a):
    return s + math.tanh(a)


def helper_results(a, n):
    s = 0.0
    for _ in range(n):
        s = _add_helper(s, a) * 0.5
    return s * s


def test_a_loop_over_helper_results_compiles():
    # a helper's result has no known shape, so the code sums adjoints with unbroadcast
    # and add_trees, which numba could not call: the whole gradient fell back
    pytest.importorskip("numba")
    g = grad(helper_results, backend="numba")
    got = _silent(lambda: g(0.4, 6))
    assert "unbroadcast(" in g.source
    assert got == pytest.approx(grad(helper_results)(0.4, 6), rel=1e-12)
    assert got == pytest.approx(numeric_grad(helper_results, (0.4, 6), 0), rel=1e-6)
    assert _compiled_for(_entry(g))


_NUMBERS = [(2.5, 0.5), (0.0, 2.0), (3.0, 0.0), (-0.0, 0.0)]


@pytest.mark.parametrize("helper, g, x", [
    *(("unbroadcast", g, x) for g, x in _NUMBERS + [(np.array([1.0, 2.0]), 0.5)]),
    *(("unreduce", g, x) for g, x in _NUMBERS + [(1.5, np.zeros((2, 3))),
                                                 (1.5, np.zeros(3, dtype=np.float32))]),
    *(("add_trees", g, x) for g, x in _NUMBERS)], ids=str)
def test_numbas_runtime_helpers_for_numbers_agree_with_the_runtimes(helper, g, x):
    numba = pytest.importorskip("numba")
    from sgcompiler.runtime import core
    function = getattr(core, helper)

    def call(g, x):
        return function(g, x)
    got, want = numba.njit(call)(g, x), call(g, x)
    assert np.shape(got) == np.shape(want) and np.result_type(got) == np.result_type(want)
    np.testing.assert_array_equal(got, want)
    assert math.copysign(1.0, np.sum(got)) == math.copysign(1.0, np.sum(want))


def small_rnn(W, h, n):
    for _ in range(n):
        h = np.tanh(W @ h)
    return np.sum(h * h)


def test_outer_products_compile_as_numpy_defines_them():
    # numba's np.outer took 10 s of the RNN's 40 s of compilation
    pytest.importorskip("numba")
    text = _split("def f(a, b):\n    return np.outer(a, b)\n",
                  refers_to=lambda name: np if name == "np" else None)
    assert "np.multiply(np.ravel(a)[:, None], np.ravel(b))" in text
    rng = np.random.default_rng(1)
    for shape in ((3, 3), (2, 2)):
        W, h = rng.uniform(-0.8, 0.8, shape), rng.uniform(-1, 1, shape[1])
        g = grad(small_rnn, wrt=(0, 1), backend="numba")
        dW, dh = _silent(lambda: g(W, h, 4))
        assert "np.multiply(np.ravel(" in g.source and "np.outer" not in g.source
        want_W, want_h = grad(small_rnn, wrt=(0, 1))(W, h, 4)
        np.testing.assert_allclose(dW, want_W, rtol=1e-12)
        np.testing.assert_allclose(dh, want_h, rtol=1e-12)
        np.testing.assert_allclose(dW, numeric_grad(small_rnn, (W, h, 4), 0), rtol=1e-6)
        np.testing.assert_allclose(dh, numeric_grad(small_rnn, (W, h, 4), 1), rtol=1e-6)


def swings(a, x, n):
    # pushes in both branches of an `if`: at most one of them a trip
    for _ in range(n):
        if x > 0.5:
            x = a * math.sin(x)
        else:
            x = math.cos(a * x) + x
    return x * x


def stops(a, x, n):
    for _ in range(n):
        if x > 0.8:
            break
        x = a * math.sin(x) + 0.3
    return x * x


def _against_numpy_and_differences(f, args, wrt):
    g = grad(f, wrt=wrt, backend="numba")
    got = _silent(lambda: g(*args))
    want = grad(f, wrt=wrt)(*args)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300)
    for k, i in enumerate(wrt):
        assert got[k] == pytest.approx(numeric_grad(f, args, i), rel=1e-6, abs=1e-9)
    return g.source


@pytest.mark.parametrize("steps", [0, 1, 2, 57])
def test_a_counted_loops_tapes_of_numbers_are_arrays(steps):
    # lists that grow by appending cost Euler's 1000 steps a quarter of their time
    pytest.importorskip("numba")
    source = _against_numpy_and_differences(pendulum, (1.5, 0.1, 0.7, 0.0, 0.01, steps),
                                            (0, 1, 2, 3))
    # (theta's tape holds its cosine: tests/test_numba_factors.py)
    for line in ("_tape_omega = np.empty(len(range(steps)))", "_n_omega = 0",
                 "_tape_omega[_n_omega] = omega", "_n_omega += 1", "_n_omega -= 1",
                 "omega = _tape_omega[_n_omega]", "_sin = _tape_sin[_n_sin]"):
        assert line in source
    assert ".append(" not in source and ".pop()" not in source
    # Python ints given where floats were: the NumPy code's numbers still
    g = grad(pendulum, wrt=(0, 1), backend="numba")
    got = _silent(lambda: g(2.0, 0.5, 1, 0, 0.01, 30))
    np.testing.assert_allclose(got, grad(pendulum, wrt=(0, 1))(2.0, 0.5, 1, 0, 0.01, 30),
                               rtol=1e-12)


@pytest.mark.parametrize("args", [(0.9, 0.3, 7), (1.2, 0.7, 6), (0.9, 0.3, 0)])
def test_a_tape_pushed_in_both_branches_holds_a_push_of_each(args):
    pytest.importorskip("numba")
    source = _against_numpy_and_differences(swings, args, (0, 1))
    assert "_tape_x = np.empty(2 * len(range(n)))" in source
    # a name that starts as None (numba's optional) stays a list
    assert "_mul = None" in source and "_tape_mul.append(_mul)" in source


@pytest.mark.parametrize("args", [(1.1, 0.2, 10), (1.1, 0.2, 2)])
def test_a_loop_left_early_and_a_while_keep_their_lists(args):
    # a `break` (range(10**9) left after ten trips must not allocate for 10**9) and a
    # `while` (no trip count before the loop)
    pytest.importorskip("numba")
    source = _against_numpy_and_differences(stops, args, (0, 1))
    assert "np.empty" not in source and "_tape_x.append(x)" in source
    g = grad(exp_series, backend="numba")
    assert _silent(lambda: g(2.0)) == pytest.approx(math.exp(2.0), rel=1e-12)
    assert "np.empty" not in g.source and "_tape_term.append(term)" in g.source


_BUILTINS = {"math": math, "range": range, "len": len, "np": np}


def _arrays(text, refers_to=_BUILTINS.get):
    # x is a Python number (the shapes pass's weak number)
    tree = gast.parse(text).body[0]
    return to_source(jit.for_numba(tree, refers_to, {"x": ((), WEAK)}, frozenset(),
                                   lambda: "np"), "h")


def test_only_tapes_a_counted_loop_alone_pushes_become_arrays():
    def tree_of(head, body):
        return (f"def f(x, n, m):\n    _tape = []\n{head}"
                f"    for i in range(n):\n{body}"
                f"    for i in range(n):\n        x = _tape.pop()\n    return x\n")
    forms = {
        "counted": ("", "        _tape.append(x)\n        x = math.sin(x)\n"),
        "nested in a loop": ("", "        for j in range(m):\n            _tape.append(x)\n"
                                 "            x = math.sin(x)\n"),
        "pushed before it too": ("    _tape.append(x)\n    x = math.sin(x)\n"
                                 "    x = _tape.pop()\n",
                                 "        _tape.append(x)\n        x = math.sin(x)\n"),
    }
    texts = {k: _arrays(tree_of(*v)) for k, v in forms.items()}
    assert "_tape_x = np.empty(len(range(n)))" in texts["counted"]
    assert "_tape_x[_n_x] = x" in texts["counted"] and "x = _tape_x[_n_x]" in texts["counted"]
    for form in ("nested in a loop", "pushed before it too"):
        assert "np.empty" not in texts[form] and "_tape_x.append(x)" in texts[form], form
    # a range of a call (read twice, it might differ), a `range` or `len` that is not the
    # builtin, a loop inside another statement: lists
    loop = "    for i in range({}):\n        _tape.append(x)\n        x = math.sin(x)\n"
    pops = "    for i in range(n):\n        x = _tape.pop()\n    return x\n"
    text = _arrays(f"def f(x, n):\n    _tape = []\n{loop.format('g(n)')}{pops}")
    assert "np.empty" not in text
    for shadowed in ("range", "len"):
        text = _arrays(f"def f(x, n):\n    _tape = []\n{loop.format('n')}{pops}",
                       refers_to={**_BUILTINS, shadowed: None}.get)
        assert "np.empty" not in text, shadowed
    inner = loop.format("n").replace("\n    ", "\n        ")
    text = _arrays(f"def f(x, n):\n    _tape = []\n    if n:\n    {inner}{pops}")
    assert "np.empty" not in text


def test_the_fast_path_gives_floats_or_takes_the_full_path():
    # (its gradients are read one by one now, not by a list comprehension: 0.2 us)
    from sgcompiler import api, rules

    class Code:
        current = staticmethod(lambda: True)

    def fast(entry, with_value=False):
        found = (Code(), with_value, True, lambda: True)
        return api._fast_call(found, (float, float, int), entry, (1.0, 2.0), False,
                              with_value, rules.version())
    path = fast(lambda a, b, n: (np.array(a * n), np.float64(b)))
    got = path((1.5, 2.0, 2))
    assert got == (3.0, 2.0) and all(type(v) is float for v in got)
    assert path((1.5, 2.0, 2.0)) is api._MISS and path((1.5, 2.0)) is api._MISS
    for wrong in ((np.array([1.0]), 2.0), (1.0, "x"), (1.0,), [1.0, 2.0]):
        assert fast(lambda a, b, n, w=wrong: w)((1.5, 2.0, 2)) is api._MISS, wrong
    path = fast(lambda a, b, n: (a + b, (np.array(a), b * n)), with_value=True)
    got = path((1.5, 2.0, 3))
    assert got == (3.5, (1.5, 6.0)) and type(got[1][0]) is float


def test_the_fast_path_holds_the_checks_written_into_it(monkeypatch):
    # the rules' version, the names the code was compiled from and numba's constants
    # are tested in the fast path's own text (three calls were a third of its 1 us): a
    # change of any of them takes the full path
    import types

    from sgcompiler import api, rules
    from sgcompiler.rules import registry
    names, frozen, empty = {"a": 1}, {"b": 2}, types.CellType()

    class Code:
        current = staticmethod(jit._checker([(frozen, "b", 2)]))

    found = (Code(), False, True, jit._checker([(names, "a", 1)]))
    path = api._fast_call(found, (float, float), lambda a, b: (a * b, b), (1.0, 2.0),
                          False, False, rules.version())
    assert not {"check", "current", "version"} & set(path.__code__.co_names)
    assert path((2.0, 3.0)) == (6.0, 3.0)
    monkeypatch.setitem(names, "a", 5)
    assert path((2.0, 3.0)) is api._MISS
    monkeypatch.undo()
    monkeypatch.setitem(frozen, "b", 5)
    assert path((2.0, 3.0)) is api._MISS
    monkeypatch.undo()
    registry._VERSION[0] += 1        # (what registering a rule does; undone at once)
    try:
        assert path((2.0, 3.0)) is api._MISS
    finally:
        registry._VERSION[0] -= 1
    assert path((2.0, 3.0)) == (6.0, 3.0)
    # an empty cell: its check's ValueError is the full path too
    Code.current = staticmethod(jit._checker([(empty, None, 1)]))
    path = api._fast_call(found, (float, float), lambda a, b: (a * b, b), (1.0, 2.0),
                          False, False, rules.version())
    assert path((2.0, 3.0)) is api._MISS


def test_the_codes_own_tape_is_not_a_name_it_depends_on():
    # looking for np.outer, numba's rewrite looked up the receiver of every method call,
    # the code's `_tape` of `_tape.append(x)`, which made two tests more on every call
    pytest.importorskip("numba")
    g = grad(exp_series, backend="numba")
    _silent(lambda: g(2.0))
    found = next(iter(g._compiled.values()))
    body, _ = found[3].parts("")
    assert "_tape" not in body and "math" not in body


def into_items(a, x, n):
    xs = np.zeros(4)
    for i in range(n):
        x = math.sin(x * a)
        xs[i % 4] = xs[i % 4] + x
    return np.sum(xs * xs)


def test_numbas_own_error_while_compiling_falls_back_and_a_runtime_error_is_raised():
    # numba 0.68 raised an IndexError out of its lowering (np.zeros_like of a float), which
    # reached the caller instead of the NumPy code
    pytest.importorskip("numba")
    g = grad(into_items, wrt=(0, 1), backend="numba")
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", JitFallbackWarning)
        got = g(0.8, 0.4, 11)
    assert len(said) <= 1
    np.testing.assert_allclose(got, grad(into_items, wrt=(0, 1))(0.8, 0.4, 11), rtol=1e-12)
    for i in (0, 1):
        assert got[i] == pytest.approx(numeric_grad(into_items, (0.8, 0.4, 11), i), rel=1e-6)
    # an error of the compiled code itself is the user's, not a reason to fall back
    h = jit.jitted(_raises_when_positive, "h")
    with pytest.raises(ValueError, match="positive"):
        _silent(lambda: h(1.0))
    assert not h.fallen_back and _silent(lambda: h(-1.0)) == -1.0


def _raises_when_positive(x):
    if x > 0:
        raise ValueError("positive")
    return x


def test_a_name_given_none_in_a_loop_keeps_its_list():
    text = _arrays("def f(x, n):\n    _tape = []\n    for i in range(n):\n"
                   "        _tape.append(x)\n        x = math.sin(x)\n        if x > 2.0:\n"
                   "            x = None\n    for i in range(n):\n        x = _tape.pop()\n"
                   "    return x\n")
    assert "np.empty" not in text and "_tape_x.append(x)" in text
