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
