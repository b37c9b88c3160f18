"""a + b of two lists or tuples is Python's concatenation, [a] * n its repetition, not
NumPy's arithmetic: reverse mode refuses them (their arithmetic rules gave a wrong
gradient, silently: the adjoint of [sin(x)] + [2 x] was summed onto both lists). Forward
mode joins the tangents the same way, which is exact. NumPy arithmetic with a list operand
still differentiates."""
import inspect

import numpy as np
import pytest

from sgcompiler import SGCompilerError, grad, jvp
from test_forward import fd_jvp

R = np.random.default_rng(1407)


def joined_lists(x):
    a = [2 * x]
    b = [np.sin(x)] + a
    return np.sum(b[0] * b[1])


def joined_tuples(x):
    t = (x, 2 * x)
    u = (np.sin(x),) + t
    return np.sum(u[0] * u[2])


def repeated_list(x):
    a = [2 * x] * 2
    return np.sum(a[0] * a[1])


def list_plus_array(x):
    a = [1.0, 2.0, 3.0] + x          # NumPy's add: x is an array
    return np.sum(a * x)


@pytest.mark.parametrize("f, text", [(joined_lists, "b = [np.sin(x)] + a"),
                                     (joined_tuples, "u = (np.sin(x),) + t"),
                                     (repeated_list, "a = [2 * x] * 2")])
def test_joining_lists_is_refused_with_its_line(f, text):
    lines, first = inspect.getsourcelines(f)
    line = first + next(i for i, s in enumerate(lines) if text in s)
    with pytest.raises(SGCompilerError, match=rf"test_joined_containers.py:{line}\): "
                                              r"joining lists or tuples with \+"):
        grad(f)(R.normal(size=3))


@pytest.mark.parametrize("f", [joined_lists, joined_tuples, repeated_list])
def test_forward_mode_joins_the_tangents(f):
    x, t = R.normal(size=3), R.normal(size=3)
    np.testing.assert_allclose(jvp(f, (x,), (t,))[1], fd_jvp(f, (x,), (t,)), rtol=1e-6)


def test_numpy_arithmetic_with_a_list_still_differentiates():
    x = R.normal(size=3)
    np.testing.assert_allclose(grad(list_plus_array)(x), 2 * x + np.array([1.0, 2.0, 3.0]),
                               rtol=1e-12)
