"""Call forms that once crashed inside the compiler, each against finite differences.

- np.r_[a, b] and np.c_[a, b] raised IndexError in the shapes pass; normalize now writes
  them as np.concatenate of the items made at least 1-d (r_) or 2-d with a 1-d item as a
  column (c_), which is what NumPy does.
- np.einsum in sublist form, np.einsum(A, (0, 1), B, (1, 2), (0, 2)), was refused for the
  first operand and raised NotImplementedError at run time for the others; the index lists
  are now written as the subscripts string NumPy makes of them.
- math.log(x, base) was refused (the rule took one argument); it is log(x) / log(base).
- A function returning a tuple (`return 2 * a, a`) raised TypeError "'float' object is not
  subscriptable" from the generated code; it now gets the documented TypeError for a
  result that is not a scalar.
"""
import inspect
import math
from math import log

import numpy as np
import pytest

from gradcheck import assert_grad_matches
from sgcompiler import SGCompilerError, grad, value_and_grad

V = np.array([0.3, -0.5, 0.8])
A = np.arange(6.0).reshape(2, 3) * 0.1 - 0.2
B = np.arange(12.0).reshape(3, 4) * 0.1 - 0.3


def r_twice(x):
    return np.sum(np.r_[x, x] * np.arange(6.0))


def r_with_numbers(x):
    return np.sum(np.r_[x, 1.0, x[:1]] ** 2 * np.arange(5.0))


def r_one_item(x):
    return np.sum(np.r_[x] ** 2)


def r_of_matrices(m):
    return np.sum(np.r_[m, m * 2] * np.arange(12.0).reshape(4, 3))


def c_columns(x):
    return np.sum(np.c_[x, x * 2] * np.arange(6.0).reshape(3, 2))


def c_of_matrices(m):
    return np.sum(np.c_[m, m[:, :1]] * np.arange(8.0).reshape(2, 4))


def c_of_3d(t):
    return np.sum(np.c_[t, t] * np.arange(16.0).reshape(2, 2, 4))


def c_of_numbers(x):
    return np.sum(np.c_[x[0], 2.0] ** 2 * np.array([[3.0, 5.0]]))


def einsum_matmul(a, b):
    return np.sum(np.einsum(a, (0, 1), b, (1, 2), (0, 2)) ** 2)


def einsum_implicit_output(a, b):
    return np.sum(np.einsum(a, [0, 1], b, [1, 2]) ** 2)


def einsum_same_operand(a):
    return np.sum(np.einsum(a, [0, 1], a, [0, 1]))


def einsum_ellipsis(a, b):
    return np.sum(np.einsum(a, (Ellipsis, 1), b, (1, 2), (Ellipsis, 2)) ** 2)


def einsum_high_labels(a, b):
    # implicit output: the labels in order (27 before 30), as NumPy orders them
    return np.sum(np.einsum(a, (30, 1), b, (1, 27)) ** 2 * np.arange(8.0).reshape(4, 2))


def log_with_base(x, base):
    return math.log(x * x, base) + log(x, 10)


ROWS = [
    (r_twice, [V]), (r_with_numbers, [V]), (r_one_item, [V]), (r_of_matrices, [A]),
    (c_columns, [V]), (c_of_matrices, [A]), (c_of_3d, [np.arange(8.0).reshape(2, 2, 2) * 0.1]),
    (c_of_numbers, [V]),
    (einsum_matmul, [A, B]), (einsum_implicit_output, [A, B]), (einsum_same_operand, [A]),
    (einsum_ellipsis, [A, B]), (einsum_high_labels, [A, B]),
    (log_with_base, [0.7, 3.0]),
]


@pytest.mark.parametrize("f, args", ROWS, ids=[f.__name__ for f, _ in ROWS])
def test_matches_finite_differences(f, args):
    assert_grad_matches(f, args)


def test_einsum_sublists_as_numpy_computes_them():
    value, _ = value_and_grad(einsum_high_labels, wrt=(0, 1))(A, B)
    assert value == pytest.approx(einsum_high_labels(A, B))


def pair(a):
    return 2 * a, a


def vector_and_number(a):
    return np.ones(3) * a, a


def a_list(a):
    return [a, a * 2]


@pytest.mark.parametrize("f, what", [(pair, "a tuple of 2 values"),
                                     (vector_and_number, "a tuple of 2 values of shapes "
                                                         "((3,), ())"),
                                     (a_list, "a list of 2 values")])
@pytest.mark.parametrize("make", [grad, value_and_grad], ids=["grad", "value_and_grad"])
def test_tuple_result_is_the_non_scalar_error(f, what, make):
    with pytest.raises(TypeError) as info:
        make(f)(0.5)
    message = str(info.value)
    assert f"{f.__name__} must return a scalar to be differentiated" in message, message
    assert what in message, message


def r_with_range(x):
    return np.sum(np.r_[0:3, x])


@pytest.mark.parametrize("f, text, what", [(r_with_range, "np.r_[0:3", "no ranges")])
def test_unsupported_forms_are_refused_with_the_line(f, text, what):
    lines, first = inspect.getsourcelines(f)
    line = first + next(i for i, s in enumerate(lines) if text in s)
    args = [V] if f is r_with_range else [A, B]
    with pytest.raises(SGCompilerError) as info:
        grad(f)(*args)
    assert f"test_call_forms.py:{line}" in str(info.value)
    assert what in str(info.value)


# Issue 13: index lists held in variables cannot be written as a string when compiled; the
# einsum rule reads them when it runs (it raised NotImplementedError, and a first operand
# that needs a gradient was refused as "no gradient for its parameter 'subscripts'").
SPEC_A, SPEC_B = [0, 1], [1, 2]


def einsum_global_sublists(a, b):
    return np.sum(np.einsum(a, SPEC_A, b, SPEC_B, [0, 2]) ** 2)


def einsum_computed_sublist(a, b):
    spec = (0, 1)
    return np.sum(np.einsum(a, spec, b, (1, 2)) ** 2)


def einsum_sublist_arguments(a, b, s, t):
    return np.sum(np.einsum(a, s, b, t) ** 2)


def einsum_variable_ellipsis(a, b):
    s = [Ellipsis, 1]
    return np.sum(np.einsum(a, s, b, [1, 2]) ** 2 * np.arange(8.0).reshape(2, 4))


def einsum_named_index(a, b):
    k = 1
    return np.sum(np.einsum(a * 2.0, (0, k), b, (k, 2)) ** 2)


def einsum_variable_trace(a, b):
    s = [0, 0]
    return np.einsum(a, s) * np.sum(b * b)


@pytest.mark.parametrize("f, extra", [
    (einsum_global_sublists, ()), (einsum_computed_sublist, ()),
    (einsum_sublist_arguments, ([0, 1], [1, 2])), (einsum_sublist_arguments, ((0, 1), (1, 2))),
    (einsum_variable_ellipsis, ()), (einsum_variable_trace, ()), (einsum_named_index, ())],
    ids=lambda v: getattr(v, "__name__", None))
def test_einsum_index_lists_in_variables(f, extra):
    from sgcompiler import jvp
    rng = np.random.default_rng(3)
    a = rng.normal(size=(3, 3)) if f is einsum_variable_trace else A
    assert_grad_matches(f, [a, B, *extra], wrt=(0, 1))
    va, vb = rng.normal(size=a.shape), rng.normal(size=B.shape)
    eps = 1e-6
    numeric = (f(a + eps * va, B + eps * vb, *extra) - f(a - eps * va, B - eps * vb, *extra)) \
        / (2 * eps)
    assert jvp(f, (a, B, *extra), (va, vb, *[None] * len(extra)))[1] == \
        pytest.approx(numeric, rel=1e-5)
