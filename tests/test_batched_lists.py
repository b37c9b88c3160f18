"""Lists (and nested lists) of values passed to NumPy functions that take an array, in the
batched tangent code of `jacobian(mode="fwd")` and `hessian`, and in the gradient.

A list's batched tangent is a list of batched items, not an array with the batch axis
first: np.sum, np.mean, np.prod, np.max or np.linalg.norm of it took the items for the
directions (a silently wrong Jacobian; with as many items as directions no shape error
told), and np.dot of a list crashed the gradient (`g * x` of a list). Found by the
forward-mode generator on the extended grammar, seed 904182 (session 10). Python's own
operators and builtins keep a list's semantics (`[t] * 3` repeats it): reading their
list's tangent as an array multiplied it instead (the first fix's own wrong Jacobian,
found by the same generator, seeds 916027-916136: 5 wrong, 3 crashes).

Each function is checked four ways: the gradient against finite differences, the
forward-mode Jacobian against the gradient, the Hessian against differences of the
gradient, and at two shapes of x (3 elements, as many as the list, and 5).
"""
import warnings

import numpy as np
import pytest

from gradcheck import assert_grad_matches
from sgcompiler import grad, hessian, jacobian


def sum_of_a_comprehension(x):
    return np.sum([v * 3.0 for v in x * x[2]])


def mean_of_a_comprehension(x):
    return np.mean([v * 3.0 for v in x * x[2]])


def prod_of_a_comprehension(x):
    return np.prod([v + 2.0 for v in x * x[2]])


def max_of_a_comprehension(x):
    return np.max([v * x[0] for v in x])


def norm_of_a_comprehension(x):
    return np.linalg.norm([v * x[1] for v in x])


def sum_of_a_nested_list(x):
    return np.sum([[x[0], x[1]], [x[2] * x[0], 1.0]])


def sum_along_an_axis_of_a_list(x):
    return np.sum(np.sum([x * x[0], np.sin(x)], axis=0) * x)


def dot_of_a_list(x):
    return np.dot([x[0] * x[1], x[2]], x[:2])


def dot_with_a_list_on_the_right(x):
    return np.dot(x[:2] * x[2], [x[0] * x[1], np.cos(x[2])])


def array_of_a_comprehension(x):         # (mapped over the directions: right before too)
    return np.sum(np.array([v * v for v in x]) * x)


def items_of_a_repeated_list(x):        # (`[t] * 3` repeats: no array is made of it)
    r = [np.sin(x).mean()] * 3
    return r[0] * r[-1] + r[1] * x[0]


def repeated_in_a_helper(x):
    r = _repeat([np.sin(x).mean(), x[1]], 2)
    return r[0] * r[-1] + r[2] * x[0]


def _repeat(a, n):
    return a * n


def python_sum_of_a_list(x):
    return sum([v * x[1] for v in x]) * x[0]


FUNCTIONS = [items_of_a_repeated_list, repeated_in_a_helper, python_sum_of_a_list,
             sum_of_a_comprehension, mean_of_a_comprehension, prod_of_a_comprehension,
             max_of_a_comprehension, norm_of_a_comprehension, sum_of_a_nested_list,
             sum_along_an_axis_of_a_list, dot_of_a_list, dot_with_a_list_on_the_right,
             array_of_a_comprehension]


@pytest.mark.parametrize("size", [3, 5])
@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_lists_into_array_functions(f, size):
    x = np.random.default_rng(size).uniform(0.2, 1.5, size) * np.array([1, -1] * 3)[:size]
    assert_grad_matches(f, [x])
    g = grad(f)
    eps = 1e-6
    numeric = np.stack([(g(x + eps * e) - g(x - eps * e)) / (2 * eps)
                        for e in np.eye(size)], axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # (per column where a list's tangent is read)
        np.testing.assert_allclose(jacobian(f, mode="fwd")(x), g(x), rtol=1e-10,
                                   atol=1e-12)
        np.testing.assert_allclose(hessian(f)(x), numeric, rtol=1e-5, atol=1e-6)
