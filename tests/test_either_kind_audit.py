"""An array the analysis takes for a container (issue 14's audit of the EITHER kind).

A value taken out of a helper's tuple (`p[0]`) may be an array or a container; the
analysis calls it EITHER, passes it to helpers as a tree, and builds adjoints for it with
the tree helpers (zeros_tree, add_at, add_trees). Code for a tree must then be right for an
array too. Each function here is such a value used as an array, checked against finite
differences at every order and mode that runs: the gradient, grad of grad, jvp, and the
Hessian both batched (forward over reverse, every direction at once) and by reverse over
reverse. The first two were silently wrong Hessians before this audit."""
import warnings

import numpy as np
import pytest

from sgcompiler import check_grads, grad, hessian, jacobian


def two(u, v):
    return np.sin(u) * v, u * u


def pick_by_list(a):
    i = [1, 0, 1]
    return np.sum(np.sin(a[i]) * a[i]) * np.sum(a) + a[0] ** 3


def list_index_in_a_helper(x, y):
    # the batched tangent of a[i] in the helper picked a direction, not an element:
    # the helper's `a` is a tree parameter (its caller's p[0] may be one)
    p = two(x, y)
    a = p[0]
    return pick_by_list(a) + np.sum(p[1] * a)


def write_that_picks_twice_then_tuple_adjoint(x, y):
    # the batched tangent of the tuple's adjoint (a list) went through np.copy, which
    # stacked its items into one array: the list's axis became the batch's
    p = two(x, y)
    a = p[0].copy()
    v = p[1]
    a[[1, 1]] = v[:2]
    return np.sum(a * a) + np.sum(v * a)


def augmented_write_that_picks_twice(x, y):
    p = two(x, y)
    a = p[0].copy()
    a[[1, 1]] += p[1][:2]
    return np.sum(a * np.sin(a))


def element_write_in_a_helper(a, v):
    a = a.copy()
    a[0] += v[0]
    a[0] = a[0] * a[1]
    return np.sum(a ** 2)


def element_writes_of_a_tuple_item(x, y):
    p = two(x, y)
    return element_write_in_a_helper(p[0], p[1]) + np.sum(p[1] * p[0])


def rows_of_a_tuple_item(a):
    s = 0.0
    for row in a:
        s = s + np.sin(row) * row
    return np.sum(s)


def loop_over_a_tuple_item(x, y):
    p = two(x, y)
    return rows_of_a_tuple_item(p[0]) + np.sum(p[1])


def repeat_and_join_an_array(a):
    return np.sum((a * 2) ** 2) + np.sum((a + a) ** 3)


def times_and_plus_of_a_tuple_item(x, y):
    p = two(x, y)
    return repeat_and_join_an_array(p[0]) + np.sum(p[1] * p[0])


def picks_twice_in_a_helper(a):
    return np.sum(a[[0, 0, 1]] ** 3) + np.sum(a[1:] * a[:-1])


def pick_twice_of_a_tuple_item(x, y):
    p = two(x, y)
    return picks_twice_in_a_helper(p[0]) + np.sum(p[1] * p[0])


CASES = [list_index_in_a_helper, write_that_picks_twice_then_tuple_adjoint,
         augmented_write_that_picks_twice, element_writes_of_a_tuple_item,
         loop_over_a_tuple_item, times_and_plus_of_a_tuple_item, pick_twice_of_a_tuple_item]


def _numeric_hessian(f, x, y, eps=1e-5):
    g = grad(f, wrt=0)
    steps = np.eye(x.size) * eps
    return np.stack([(g(x + e, y) - g(x - e, y)) / (2 * eps) for e in steps], axis=1)


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_hessian_of_an_array_taken_for_a_container(f, n):
    rng = np.random.default_rng(n)
    x, y = rng.normal(size=n), rng.normal(size=n)
    expected = _numeric_hessian(f, x, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # (a PerColumnWarning where it is not batched)
        batched = hessian(f, wrt=0)(x, y)
        forward = jacobian(grad(f, wrt=0), wrt=0, mode="fwd")(x, y)
    reverse = jacobian(grad(f, wrt=0), wrt=0, mode="rev")(x, y)
    np.testing.assert_allclose(batched, expected, atol=1e-6)
    np.testing.assert_allclose(forward, expected, atol=1e-6)
    np.testing.assert_allclose(reverse, expected, atol=1e-6)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_second_order_of_an_array_taken_for_a_container(f):
    rng = np.random.default_rng(7)
    check_grads(f, (rng.normal(size=4), rng.normal(size=4)), order=2, modes=("fwd", "rev"))
