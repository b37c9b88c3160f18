"""numba code saves a loop's derivative factor (`math.cos(theta)`) instead of the value it
is computed from (backend/numba_factors.py): the code it makes, where it must not, and
gradients against the NumPy backend (to 1e-12: the same numbers) and finite differences,
on the hand-picked loops and on seeded random scalar loops. Without numba the same code
runs as Python (the fallback), which checks the rewrite itself."""
import math
import random
import re
import warnings

import gast
import numpy as np
import pytest

from gradcheck import numeric_grad
from sgcompiler import JitFallbackWarning, grad
from sgcompiler.backend import jit
from sgcompiler.backend.codegen import to_source
from sgcompiler.backend.loader import function_from_text


def pendulum(k, c, theta, omega, dt, steps):
    for _ in range(steps):
        alpha = -k * math.sin(theta) - c * omega
        theta = theta + dt * omega
        omega = omega + dt * alpha
    return theta * theta + omega * omega


def recurrence(a, b, x, steps):
    for _ in range(steps):
        x = a * math.sin(x) + b
    return x * x


def kepler(M, e):
    E = M
    step = 1.0
    while abs(step) > 1e-12:
        E_next = M + e * math.sin(E)
        step = E_next - E
        E = E_next
    return E


def read_after(a, x, n):
    # the adjoint of y reads x's first value, which the pops give back after the loop
    y = math.sin(x)
    for _ in range(n):
        x = math.sin(x) * a
    return x + y


def two_factors(a, x, n):
    # the adjoint reads cos(x) and x: x itself is kept
    for _ in range(n):
        x = a * math.sin(x) + 0.1 * x * x
    return x * x


def in_a_branch(a, x, n):
    for _ in range(n):
        if x > 0.5:
            x = a * math.sin(x)
        else:
            x = a * math.cos(x) + 0.3
    return x * x


def _run(g, args):
    """g(*args), on numba's code where numba is installed (a fallback fails the test),
    else on the same code as Python."""
    with warnings.catch_warnings():
        if jit.numba is None:
            warnings.simplefilter("ignore", JitFallbackWarning)
        else:
            warnings.simplefilter("error", JitFallbackWarning)
        return g(*args)


def _checked(f, args, wrt):
    """The numba backend's source of `f`, its gradient checked against the NumPy
    backend's and finite differences."""
    g = grad(f, wrt=wrt, backend="numba")
    got = _run(g, args)
    want = grad(f, wrt=wrt)(*args)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300)
    for k, i in enumerate(wrt):
        assert got[k] == pytest.approx(numeric_grad(f, args, i), rel=1e-6, abs=1e-8)
    return g.source


def _factor_pushes(source):
    return re.findall(r"_tape\w*(?:\[_n\w*\] = |\.append\()math\.\w+\(\w+\)", source)


def _backward(source):
    return source.split("# backward")[1]


@pytest.mark.parametrize("steps", [0, 1, 3, 200])
def test_the_pendulums_tape_holds_the_cosine_of_theta(steps):
    source = _checked(pendulum, (1.5, 0.1, 0.7, 0.2, 0.01, steps), (0, 1, 2, 3))
    for line in ("_tape_cos_theta = np.empty(len(range(steps)))",
                 "_tape_cos_theta[_n_cos_theta] = math.cos(theta)",
                 "_cos_theta = _tape_cos_theta[_n_cos_theta]",
                 "dtheta = dtheta + dalpha * _neg * _cos_theta"):
        assert line in source
    assert "math.cos" not in _backward(source) and "_tape_theta" not in source


def test_a_recurrence_and_a_while_fixed_point_save_their_cosines():
    source = _checked(recurrence, (0.9, 0.1, 0.3, 500), (0, 1, 2))
    assert "_tape_cos_x[_n_cos_x] = math.cos(x)" in source
    assert "math.cos" not in _backward(source)
    source = _checked(kepler, (2.0, 0.8), (0, 1))     # (about 60 trips: a list tape)
    assert "_tape_cos_E.append(math.cos(E))" in source
    assert "_cos_E = _tape_cos_E.pop()" in source and "math.cos" not in _backward(source)


@pytest.mark.parametrize("f, args", [(read_after, (0.9, 0.3, 6)),
                                     (two_factors, (0.7, 0.4, 6)),
                                     (in_a_branch, (0.9, 0.7, 8))],
                         ids=["read_after", "two_factors", "in_a_branch"])
def test_where_the_value_itself_is_read_it_stays_on_the_tape(f, args):
    # (in_a_branch: two pushes, one in each branch)
    source = _checked(f, args, (0, 1))
    assert not _factor_pushes(source) and "math.cos(x)" in _backward(source)


def _rewritten(text):
    tree = gast.parse(text).body[0]
    return to_source(jit.for_numba(tree, {"math": math, "range": range, "len": len}.get,
                                   {}, frozenset(), lambda: "np"), "h")


LOOP = ("def f(a, x, n):\n    _tape = []\n    _trips = 0\n    for _ in range(n):\n"
        "        _trips += 1\n        _tape.append(x)\n        x = math.sin(x) * a\n"
        "    dx = x * 2\n    da = 0.0\n    for _2 in range(_trips):\n{body}"
        "    return (da, dx)\n")


@pytest.mark.parametrize("body, saved", [
    ("        x = _tape.pop()\n        d = dx * math.cos(x)\n        da = da + d\n", True),
    # read before the pop: the value of the trip before
    ("        d = dx * math.cos(x)\n        x = _tape.pop()\n        da = da + d\n", False),
    # read in a conditional expression: not computed for every value
    ("        x = _tape.pop()\n        d = dx * math.cos(x) if a else 0.0\n"
     "        da = da + d\n", False),
    # read in a nested block
    ("        x = _tape.pop()\n        if a > 0:\n            da = da + math.cos(x)\n", False),
    # written again after the pop
    ("        x = _tape.pop()\n        x = x * 2\n        da = da + math.cos(x)\n", False),
    # an expression of x and another name: not a factor of x alone
    ("        x = _tape.pop()\n        da = da + math.cos(x * a)\n", False),
    # x itself, no call: nothing worth computing early
    ("        x = _tape.pop()\n        da = da + dx * x\n", False),
], ids=["after", "before", "ifexp", "nested", "written", "other-name", "no-call"])
def test_only_a_factor_read_after_its_pop_in_the_loops_block_is_saved(body, saved):
    text = _rewritten(LOOP.format(body=body))
    assert ("math.cos(x)" in text.split("dx = x * 2")[0]) is saved, text
    assert ("_tape_x" not in text) is saved, text


@pytest.mark.parametrize("change", [
    # the adjoint loop does not run as many trips as the forward pushed
    ("for _2 in range(_trips):", "for _2 in range(n):"),
    ("_trips += 1", "_trips += 2"),
    # a trip of the forward may leave before its push
    ("        _trips += 1\n", "        _trips += 1\n        if a > 1:\n            break\n"),
    # the count written elsewhere
    ("    dx = x * 2\n", "    _trips = n\n    dx = x * 2\n"),
    # the popped name is the adjoint loop's own index too
    ("for _2 in range(_trips):", "for x in range(_trips):"),
], ids=["other-range", "step-2", "break", "count-written", "loop-index"])
def test_only_a_tape_each_value_of_which_is_popped_once_is_changed(change):
    body = "        x = _tape.pop()\n        da = da + dx * math.cos(x)\n"
    assert "_tape_cos_x" in _rewritten(LOOP.format(body=body))
    text = _rewritten(LOOP.format(body=body).replace(*change))
    assert "_tape_cos_x" not in text and "_tape_x" in text, text


def test_a_name_read_after_the_adjoint_loop_keeps_its_tape():
    text = _rewritten(LOOP.format(body="        x = _tape.pop()\n        da = da + math.cos(x)\n")
                      .replace("    return (da, dx)", "    dx = dx + x\n    return (da, dx)"))
    assert "_tape_x" in text and "_tape_cos" not in text


# seeded random scalar loops: state (x, y), parameters (a, b), a counted or a while loop
_UNARY = ("math.sin", "math.cos", "math.tanh", "math.exp", "math.atan")


def _expression(rng, names, depth=0):
    if depth >= 2 or rng.random() < 0.3:
        return rng.choice(names) if rng.random() < 0.8 else repr(round(rng.uniform(0.1, 0.9), 2))
    kind = rng.random()
    if kind < 0.45:
        return f"{rng.choice(_UNARY)}({_expression(rng, names, depth + 1)})"
    op = rng.choice(["+", "-", "*"])
    return f"({_expression(rng, names, depth + 1)} {op} {_expression(rng, names, depth + 1)})"


def _program(seed):
    rng = random.Random(seed)
    lines = []
    for target in rng.sample(["x", "y", "t"], rng.randint(2, 3)):
        if rng.random() < 0.5:      # the form whose adjoint reads a function of target
            others = [n for n in ("x", "y", "a", "b", "t") if n != target]
            lines.append(f"        {target} = {rng.choice(['a', 'b', '0.6'])} * "
                         f"{rng.choice(_UNARY)}({target}) + 0.3 * "
                         f"{_expression(rng, others)}\n")
        else:
            value = _expression(rng, ["x", "y", "a", "b", "t"])
            lines.append(f"        {target} = 0.5 * {target} + 0.5 * {value}\n")
    if rng.random() < 0.5:
        head, tail = "    for _ in range(n):\n", ""
    else:
        head, tail = "    k = 0\n    while k < n:\n", "        k = k + 1\n"
    return (f"def f(a, b, x, y, n):\n    t = 0.0\n{head}{''.join(lines)}{tail}"
            f"    return x * x + y + t\n")


def test_random_scalar_loops_agree_with_the_numpy_code():
    saved = compiled = checked = 0
    for seed in range(16):
        text = _program(seed)
        f = function_from_text(text, "f", {"math": math}, f"factors {seed}")
        g = grad(f, wrt=(0, 1, 2, 3), backend="numba")
        args = (0.7, 0.4, 0.3, -0.2, 5)
        try:
            if abs(f(*args)) > 1e3:     # (finite differences lose their digits)
                continue
        except (OverflowError, ValueError):     # (math.exp of a large number)
            continue
        checked += 1
        with warnings.catch_warnings(record=True) as fell_back:
            warnings.simplefilter("always", JitFallbackWarning)
            got = g(*args)
        want = grad(f, wrt=(0, 1, 2, 3))(*args)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300, err_msg=text)
        for i in range(4):
            assert got[i] == pytest.approx(numeric_grad(f, args, i), rel=1e-6, abs=1e-8), text
        saved += bool(_factor_pushes(g.source))
        compiled += not fell_back
    # (the loops these seeds make: the rewrite is made in some, numba compiles most)
    assert checked >= 12 and saved >= 4 and (jit.numba is None or compiled >= 8), \
        (checked, saved, compiled)
