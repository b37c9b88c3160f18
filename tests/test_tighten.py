"""The tighten pass (loop-invariant statements hoisted, `_t = x + y; x = _t` made one
statement): what it rewrites, and gradients of the programs where it matters against
finite differences, including the cases where it must leave a statement alone."""
import ast
import textwrap

import gast
import numpy as np
import pytest

from gradcheck import assert_grad_matches
from sgcompiler import grad, stop_gradient
from sgcompiler.analysis.activity import activity
from sgcompiler.analysis.shapes import shapes
from sgcompiler.reverse.tighten import tighten
from test_passes import normal


def tightened(src, wrt=("k",), scalars=("k", "c", "y")):
    """The tightened normal form of `src`, as text."""
    fn, resolution, norm = normal(textwrap.dedent(src))
    act = activity(norm, resolution, wrt)
    facts = shapes(norm, resolution, frozenset(p for p in norm.params if p in scalars))
    out = tighten(norm, resolution, act, facts)
    return "\n".join(ast.unparse(gast.gast_to_ast(s)) for s in out.body)


def test_invariant_negation_leaves_the_loop():
    text = tightened("""
        def f(k, y, n):
            for i in range(n):
                y = y + -k * y
            return y
        """)
    assert text.index("_neg = -k") < text.index("for i in range(n)")


def test_update_is_one_statement():
    text = tightened("""
        def f(k, y, n):
            for i in range(n):
                y = y + k
            return y
        """, wrt=("k", "y"))
    assert "y = y + k" in text and "_add" not in text


@pytest.mark.parametrize("body", [
    # the operand is rebound later in the loop
    "a = -k\ny = y + a * y\nk = k * 0.5",
    # the value is read before it is computed (the previous trip's value)
    "y = y + a * y\na = -k",
    # not a number (an array could be changed in place)
    "a = -w\ny = y + np.sum(a) * y",
    # division may raise (zero-trip loops must not)
    "a = 1.0 / k\ny = y + a * y",
])
def test_what_stays_in_the_loop(body):
    text = tightened("def f(k, y, w, n):\n    a = 0.0\n    for i in range(n):\n" +
                     textwrap.indent(body, "        ") + "\n    return y + a\n",
                     wrt=("k", "w"))
    loop = text[text.index("for i"):]
    assert "a = " in loop


def test_value_read_after_the_loop_stays():
    text = tightened("""
        def f(k, y, n):
            for i in range(n):
                a = -k
                y = y + a * y
            return y + a
        """)
    assert "a = -k" in text[text.index("for i"):]


def test_multiplication_by_the_old_value_is_not_merged():
    # dc reads the old x: x = x * c must keep the new value apart
    text = tightened("""
        def f(k, c, n):
            x = k
            for i in range(n):
                x = x * c
            return x
        """, wrt=("k", "c"))
    assert "x = _mul" in text


# --- gradients ---------------------------------------------------------------------------------


def pendulum(k, c, theta, omega, steps):
    for _ in range(steps):
        alpha = -k * np.sin(theta) - c * omega
        theta = theta + 0.01 * omega
        omega = omega + 0.01 * alpha
    return theta * theta + omega * omega


def zero_trip(k, y, steps):
    for _ in range(steps):
        a = -k
        y = y + a * y
    return y * k


def nested(k, c, y, n):
    for i in range(n):
        for j in range(3):
            a = k * c
            b = a + 1.0
            y = y + 0.1 * b * np.sin(y)
    return y


def invariant_looking(k, y, n):
    a = 0.5
    for i in range(n):
        y = y + a * y * 0.1
        a = -k
        b = a * 2.0
        y = y - b * 0.01
        k = k * 0.9
    return y + k


def while_invariant(k, c, y):
    n = 0.0
    while n < 5.0:
        a = k * c
        y = y + a * np.cos(y)
        n = n + 1.0
    return y


def while_short(k, y):
    # the loop runs zero times at these arguments
    while y > 100.0:
        a = -k
        y = y + a
    return y * k


def with_break(k, c, y, n):
    for i in range(n):
        s = -c
        if y > 3.0:
            break
        m = k * 2.0
        y = y + m * y + s
    return y


def updates(k, c, y, n):
    x = y
    for i in range(n):
        x = x - k
        x = c - x
        x = -x
        x = x * c
        x = x + x * 0.1
    return x


def updates_in_branch(k, c, y):
    x = y
    if k > 0.0:
        x = x + c
        x = x - k * c
    else:
        x = c - x
    return x * x


def array_updates(k, v, n):
    s = v
    for i in range(n):
        a = -k
        s = s + a * s
        s = -s
    return np.sum(s * s)


ROWS = [
    (pendulum, (1.3, 0.1, 0.7, 0.2, 20)),
    (pendulum, (1.3, 0.1, 0.7, 0.2, 0)),
    (zero_trip, (1.5, 2.0, 0)),
    (zero_trip, (1.5, 2.0, 4)),
    (nested, (0.7, 0.3, 0.5, 3)),
    (nested, (0.7, 0.3, 0.5, 0)),
    (invariant_looking, (0.8, 1.2, 4)),
    (while_invariant, (0.3, 0.4, 0.5)),
    (while_short, (0.3, 0.5)),
    (with_break, (0.4, 0.3, 0.5, 6)),
    (with_break, (0.4, 0.3, 5.0, 6)),
    (updates, (0.4, 0.9, 1.5, 3)),
    (updates_in_branch, (0.4, 0.9, 1.5)),
    (updates_in_branch, (-0.4, 0.9, 1.5)),
]


@pytest.mark.parametrize("f, args", ROWS, ids=[f"{f.__name__}-{i}" for i, (f, _) in
                                              enumerate(ROWS)])
def test_gradient_matches_finite_differences(f, args):
    wrt = [i for i, a in enumerate(args) if isinstance(a, float)]
    assert_grad_matches(f, args, wrt=wrt)


def test_array_updates():
    v = np.random.default_rng(0).normal(size=4)
    for n in (0, 3):
        assert_grad_matches(array_updates, (0.3, v, n), wrt=[0, 1])


def test_pendulum_code_hoists_and_updates():
    g = grad(pendulum, wrt=(0, 1))
    g(1.3, 0.1, 0.7, 0.2, 3)
    source = g.source
    loop = source[source.index("for _ in"):source.index("# backward")]
    assert "_neg = -k" in source and "_neg = -k" not in loop
    assert "theta = theta + 0.01 * omega" in loop
    assert "_add" not in source


def stopped_factor(h, w):
    for t in range(4):
        h = h * stop_gradient(w) + 0.1 * w
    return np.sum(h * h)


def stopped_factor_rebound(h, w):
    for t in range(4):
        h = h * stop_gradient(w)
        w = w * 0.9
    return np.sum(h * h)


def test_a_stopped_invariant_is_not_taped_each_trip():
    """`stop_gradient(w)` of a w the loop never rebinds is the same reference every trip:
    read once before the loop, not pushed on the tape each trip (issue 19)."""
    source = grad(stopped_factor, wrt=(0, 1)).source
    assert "_stop_gradient" not in source and "_tape.append(_stop" not in source
    rebound = grad(stopped_factor_rebound, wrt=(0, 1)).source
    assert "_stop_gradient = w" in rebound[rebound.index("for t in"):]
    rng = np.random.default_rng(1)
    for f in (stopped_factor, stopped_factor_rebound):
        for shapes in (((3,), (3,)), ((2, 3), (3,)), ((), ())):
            h, w = (rng.normal(size=s) for s in shapes)
            g = grad(f, wrt=(0, 1))(h, w)
            assert g[0].shape == np.shape(h) and g[1].shape == np.shape(w)
            assert_grad_matches(f, (h, w), wrt=[0])
