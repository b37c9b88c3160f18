"""Minimal reproducers of what the random-program test (test_random_programs.py) found.

Each function is the smallest program found that shows one problem; the comment above it
says what sgcompiler does and what finite differences (the right answer) say. A test is
marked xfail(strict=True) while the bug is open: when it is fixed, the test passes, strict
makes that an error, and whoever fixes it removes the mark.
"""
import numpy as np
import pytest

from gradcheck import assert_grad_matches

X = np.array([0.4, -0.7, 1.2])       # np.sum(X) > 0
Y = np.array([0.5, -1.0, 2.0])


def twice(u):
    return 2.0 * u


# abs() of a NumPy scalar: the inlined rule loses its `* 1.0` and subtracts two NumPy
# bools: TypeError "numpy boolean subtract, the `-` operator, is not supported".
# Expected [1, 0, 0].
def abs_of_numpy_scalar(x):
    return abs(x[0])


# An early `return` in one branch, after an element was read: the adjoint of x is the
# float 0.0 on the branch taken, and `dx[0] += db` then fails with
# TypeError "'float' object is not subscriptable". Expected [1, 0, 0].
def early_return_after_index(x):
    b = x[0]
    if np.sum(x) > 0.0:
        return b
    return x[2]


# The same with a fancy index: np.add.at(dx, ...) with dx = 0.0 raises
# TypeError "first operand must be array". Expected [2, 1, 0].
def early_return_after_fancy_index(x):
    b = x[[0, 0, 1]]
    if np.sum(x) > 0.0:
        return np.sum(b)
    return x[2]


# The same with a written copy: the written array's adjoint is 0.0 on the branch taken
# and `dbuf[0]` fails with TypeError "'float' object is not subscriptable".
# Expected [1, 1, 1].
def early_return_after_element_write(x):
    buf = x.copy()
    buf[0] = x[0]
    if np.sum(x) > 0.0:
        return np.sum(x)
    return np.sum(buf)


# An element of a user function's result: add_at(da, 1, db) adds in place into da, which
# is a broadcast view (unreduce of a scalar), so every element gets db.
# sgcompiler gives [4, 4, 4]; expected [2, 4, 2].
def index_of_call_result(x):
    a = twice(x)
    b = a[1]
    return np.sum(a) + b


# A name assigned only in a branch that is not taken, then overwritten: the primal sweep
# saves its old value (`_a_old = a`) and raises UnboundLocalError. Expected [2, 0, 0].
def overwrite_name_bound_only_in_untaken_branch(x):
    if np.sum(x) > 10.0:
        a = x
    a = x[0]
    return a * 2.0


# `a += y` on an array works in place in Python, so b (the same array) changes too; the
# compiler treats it as `a = a + y`: value 6.0 instead of 7.5 at (X * 0 + [1, 2, 3], Y),
# and gradient with respect to y 0 instead of 1. (Refusing augmented assignment to an
# array that another name may share would also be right.)
def inplace_add_through_alias(x, y):
    a = x * 1.0
    b = a
    a += y
    return np.sum(b)


@pytest.mark.xfail(strict=True, reason="builtin abs rule on NumPy scalars subtracts bools",
                   raises=TypeError)
def test_abs_of_numpy_scalar():
    assert_grad_matches(abs_of_numpy_scalar, [X])


@pytest.mark.xfail(strict=True, reason="zero adjoint 0.0 from an early-return branch is "
                                       "then indexed", raises=TypeError)
@pytest.mark.parametrize("f", [early_return_after_index, early_return_after_fancy_index,
                               early_return_after_element_write])
def test_early_return_then_element_adjoint(f):
    assert_grad_matches(f, [X])


@pytest.mark.xfail(strict=True, reason="add_at adds in place into a broadcast adjoint",
                   raises=AssertionError)
def test_index_of_call_result():
    assert_grad_matches(index_of_call_result, [X])


@pytest.mark.xfail(strict=True, reason="old value of a possibly unbound name is saved",
                   raises=UnboundLocalError)
def test_overwrite_name_bound_only_in_untaken_branch():
    assert_grad_matches(overwrite_name_bound_only_in_untaken_branch, [X])


@pytest.mark.xfail(strict=True, reason="+= on a shared array is in place in Python",
                   raises=AssertionError)
def test_inplace_add_through_alias():
    from sgcompiler import value_and_grad
    x = np.array([1.0, 2.0, 3.0])
    expected = inplace_add_through_alias(x.copy(), Y.copy())
    value, _ = value_and_grad(inplace_add_through_alias, wrt=(0, 1))(x.copy(), Y.copy())
    assert value == expected
    assert_grad_matches(inplace_add_through_alias, [x, Y])
