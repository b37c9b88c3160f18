"""Lists, tuples and np.array([...]) built from a mix of constants and active values.

Each element's adjoint must be read at the element's own position: a constant before an
active element once shifted every later adjoint by one (`np.array([1.0, a])` gave a the
adjoint of the constant). And a list of Python numbers as a reduction's operand once
reached np.result_type, which reads a list as a dtype spec (TypeError "Field elements
must be 2- or 3-tuples").
"""
import numpy as np
import pytest

from gradcheck import assert_grad_matches

W3 = np.array([1.0, 10.0, 100.0])
W4 = np.arange(1.0, 5.0)
W22 = np.array([[1.0, 2.0], [3.0, 4.0]])


def constant_first(a):
    v = np.array([1.0, a])
    return np.sum(v * v)


def list_read_before(a):
    x = [1.0, a, 3.0]
    return x[0] * x[1]


def array_between_constants(x):
    return np.sum(np.array([0.5, x, 0.7]) * W3)


def ints_around_active(a):
    b = [1, a * a, 2]
    return np.sum(b)


def comprehension_sum(a):
    return np.sum([i * 3 for i in a])


def nested_mixed(a, b):
    return np.sum(np.array([[a, 1.0], [2.0, b]]) ** 2 * W22)


def nested_constant_row(a):
    v = np.array([[1.0, 2.0], [a, 3.0]])
    return np.sum(v * W22)


def tuple_mixed(a):
    t = (1.0, a, 2.0)
    return t[1] * t[2] + t[0]


def stack_of_numbers(a):
    return np.sum(np.stack([1.0, a, 2.0]) * W3)


def stack_mixed_rows(x):
    return np.sum(np.stack([np.ones(3), x, x * 2]) * np.arange(9.0).reshape(3, 3))


def concatenate_mixed(x):
    return np.sum(np.concatenate([np.ones(2), x, [3.0]]) * np.arange(6.0))


def concatenate_singletons(a):
    return np.sum(np.concatenate([[1.0], [a], [2.0]]) * W3)


def two_actives_two_constants(a):
    v = np.array([1.0, a, a * a, 2.0])
    return np.sum(v * W4)


def elements_of_an_array(x):
    v = np.array([x[0], 1.0, x[1]])
    return np.sum(v * W3)


def list_then_array(a):
    x = [1.0, 2.0, a]
    return x[2] * x[1] + np.sum(np.array(x) * W3)


def same_value_twice(a):
    v = [2.0, a, 3.0, a]
    return np.sum(np.array(v) * W4)


def vstack_mixed(a):
    return np.sum(np.vstack([[1.0, 2.0], [a, 3.0]]) * W22)


def stack_of_arrays_and_list(x):
    return np.sum(np.stack([np.zeros(2), x, [1.0, x[0]]]) * np.arange(6.0).reshape(3, 2))


def hstack_numbers(a, b):
    return np.sum(np.hstack([0.5, a, 2.0, b]) ** 2 * W4)


def tuple_unpacked(a):
    p, q, r = 1.0, a, 2.0
    return p * q * r + q


def array_of_tuple(a):
    return np.sum(np.array((1.0, a, a ** 2)) * W3)


def list_of_lists_indexed(a):
    m = [[1.0, a], [a * 2, 4.0]]
    return m[0][1] * m[1][0] + m[1][1] * m[0][1]


# found by the wide fuzzer: an inner list that gets no adjoint was a plain 0.0 in its
# parent's adjoint, and reading its element raised "'float' object is not subscriptable"
def nested_list_read_once(a, b):
    t1 = [[a], [b]][1][0]
    return t1 * 2.0


def nested_list_constants(a, b):
    t0 = [[b, 0, 3, a], [a, 0, 1.0, 0]][0][3]
    return np.sin(t0) + [[a, b * a], [0.5, 0]][1][0]


def python_sum_of_list(a):
    return sum([1.0, a, 2.0 * a])


ROWS = [
    (constant_first, lambda r: [0.7]),
    (list_read_before, lambda r: [0.7]),
    (array_between_constants, lambda r: [0.3]),
    (ints_around_active, lambda r: [0.7]),
    (comprehension_sum, lambda r: [r.normal(size=3)]),
    (nested_mixed, lambda r: [0.3, 0.4]),
    (nested_constant_row, lambda r: [0.3]),
    (tuple_mixed, lambda r: [0.7]),
    (stack_of_numbers, lambda r: [0.3]),
    (stack_mixed_rows, lambda r: [r.normal(size=3)]),
    (concatenate_mixed, lambda r: [r.normal(size=3)]),
    (concatenate_singletons, lambda r: [0.3]),
    (two_actives_two_constants, lambda r: [0.3]),
    (elements_of_an_array, lambda r: [r.normal(size=2)]),
    (list_then_array, lambda r: [0.3]),
    (same_value_twice, lambda r: [0.3]),
    (vstack_mixed, lambda r: [0.3]),
    (stack_of_arrays_and_list, lambda r: [r.normal(size=2)]),
    (hstack_numbers, lambda r: [0.3, -0.6]),
    (tuple_unpacked, lambda r: [0.3]),
    (array_of_tuple, lambda r: [0.3]),
    (list_of_lists_indexed, lambda r: [0.3]),
    (python_sum_of_list, lambda r: [0.3]),
    (nested_list_read_once, lambda r: [0.3, 0.4]),
    (nested_list_constants, lambda r: [0.3, 0.4]),
]


@pytest.mark.parametrize("f, make", ROWS, ids=[r[0].__name__ for r in ROWS])
def test_matches_finite_differences(f, make):
    args = make(np.random.default_rng(1))
    assert_grad_matches(f, args)


# Found by the random-program fuzzer: an element of a list that gets no adjoint is a plain
# 0.0 in the list's adjoint, and the rules that need the element's shape failed on it
# (hstack_grad: "object of type 'float' has no len()"; reshape: "cannot reshape array of
# size 1"; matmul: "does not have enough dimensions").
M23 = np.arange(6.0).reshape(2, 3)


def appended_hstack(x):
    values = []
    for i in range(3):
        values.append(np.hstack([x[0], 0.5, x[1]]))
    return np.sum(values[-1] ** 2)


def literal_hstack(x):
    values = [np.hstack([x[0], 0.5, x[1]]), np.hstack([(x * 2.0)[0], 0.5, (x * 2.0)[1]]), 1.0]
    return np.sum(values[1] * 3.0)


def appended_concatenate(x):
    values = []
    for i in range(3):
        values.append(np.concatenate([x, x[:1]]))
    return np.sum(values[-1] ** 2)


def literal_concatenate(x):
    values = [np.concatenate([x, x[:1]]), np.concatenate([(x * 2.0), (x * 2.0)[:1]]), 1.0]
    return np.sum(values[1] * 3.0)


def appended_stack(x):
    values = []
    for i in range(3):
        values.append(np.stack([x, x * 2]))
    return np.sum(values[-1] ** 2)


def literal_stack(x):
    values = [np.stack([x, x * 2]), np.stack([(x * 2.0), (x * 2.0) * 2]), 1.0]
    return np.sum(values[1] * 3.0)


def appended_reshape(x):
    values = []
    for i in range(3):
        values.append(np.reshape(x, (3, 1)))
    return np.sum(values[-1] ** 2)


def literal_reshape(x):
    values = [np.reshape(x, (3, 1)), np.reshape((x * 2.0), (3, 1)), 1.0]
    return np.sum(values[1] * 3.0)


def appended_matmul(x):
    values = []
    for i in range(3):
        values.append(M23 @ x)
    return np.sum(values[-1] ** 2)


def literal_matmul(x):
    values = [M23 @ x, M23 @ (x * 2.0), 1.0]
    return np.sum(values[1] * 3.0)


def appended_outer(x):
    values = []
    for i in range(3):
        values.append(np.outer(x, x))
    return np.sum(values[-1] ** 2)


def literal_outer(x):
    values = [np.outer(x, x), np.outer((x * 2.0), (x * 2.0)), 1.0]
    return np.sum(values[1] * 3.0)


def appended_cumsum(x):
    values = []
    for i in range(3):
        values.append(np.cumsum(x))
    return np.sum(values[-1] ** 2)


def literal_cumsum(x):
    values = [np.cumsum(x), np.cumsum((x * 2.0)), 1.0]
    return np.sum(values[1] * 3.0)


def appended_einsum(x):
    values = []
    for i in range(3):
        values.append(np.einsum("ij->j", np.outer(x, x)))
    return np.sum(values[-1] ** 2)


def literal_einsum(x):
    values = [np.einsum("ij->j", np.outer(x, x)), np.einsum("ij->j", np.outer((x * 2.0), (x * 2.0))), 1.0]
    return np.sum(values[1] * 3.0)


def appended_swapaxes(x):
    values = []
    for i in range(3):
        values.append(np.swapaxes(np.outer(x, x), 0, 1))
    return np.sum(values[-1] ** 2)


def literal_swapaxes(x):
    values = [np.swapaxes(np.outer(x, x), 0, 1), np.swapaxes(np.outer((x * 2.0), (x * 2.0)), 0, 1), 1.0]
    return np.sum(values[1] * 3.0)


def appended_linspace(x):
    values = []
    for i in range(3):
        values.append(np.linspace(x[0], x[1], 3))
    return np.sum(values[-1] ** 2)


def literal_linspace(x):
    values = [np.linspace(x[0], x[1], 3), np.linspace((x * 2.0)[0], (x * 2.0)[1], 3), 1.0]
    return np.sum(values[1] * 3.0)


UNUSED_ELEMENT = [appended_hstack, literal_hstack, appended_concatenate, literal_concatenate, appended_stack, literal_stack, appended_reshape, literal_reshape, appended_matmul, literal_matmul, appended_outer, literal_outer, appended_cumsum, literal_cumsum, appended_einsum, literal_einsum, appended_swapaxes, literal_swapaxes, appended_linspace, literal_linspace]


@pytest.mark.parametrize("f", UNUSED_ELEMENT, ids=[f.__name__ for f in UNUSED_ELEMENT])
def test_element_without_adjoint(f):
    assert_grad_matches(f, [np.array([0.3, -0.5, 0.8])])


# Found by the random-program fuzzer: a loop that rebinds an array resets its adjoint to a
# plain 0.0 for the trip before, and the next trip's adjoint read an element of it
# (np.array of a list: "'float' object is not subscriptable") or split it (np.stack:
# "axis 0 is out of bounds for array of dimension 0").
def array_of_list_in_while(x, y):
    buf = x * 1.0
    n = 0
    while n < 2:
        n += 1
        buf = np.array([y[-1], 1.0, y[0]])
    return np.sum(np.sin(buf))


def array_of_list_in_for(x, y):
    buf = x * 1.0
    for i in range(2):
        buf = np.array([y[-1], 1.0, y[0] * x[i]])
    return np.sum(np.sin(buf))


def stack_in_for(x, y):
    buf = x * 1.0
    for i in range(3):
        buf = np.stack([y, x * i])
    return np.sum(np.sin(buf))


def list_in_for(x, y):
    total = 0.0
    for i in range(3):
        pair = [y[0] * i, 2.0, x[1]]
        total = total + pair[0] * pair[2]
    return total


LOOPS = [array_of_list_in_while, array_of_list_in_for, stack_in_for, list_in_for]


@pytest.mark.parametrize("f", LOOPS, ids=[f.__name__ for f in LOOPS])
def test_list_rebuilt_in_a_loop(f):
    rng = np.random.default_rng(3)
    assert_grad_matches(f, [rng.normal(size=3), rng.normal(size=3)])
