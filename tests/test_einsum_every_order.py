"""np.einsum at every order: the rules of its derivatives (einsum_grad, and the
einsums with one operand replaced that their rules give, rules/runtime.py) are written
with the operand put in its place in the generated code (reverse/inline.py), so
second-order code calls np.einsum and einsum_grad alone, and the third, fourth, ...
derivatives read the same two functions again. Each order is compared with central
differences of the order below (check_grads), in both modes; the fourth gradient with
central differences of the third."""
import numpy as np
import pytest

from sgcompiler import check_grads, grad, jvp
from sgcompiler.runtime.tangents import einsum_grad_with, einsum_with

R = np.random.default_rng(1414)


def two_subscripts(a, b):
    # two einsums, one broadcasting over '...' and reading one operand twice
    c = np.einsum("ij,jk->ik", a, b)
    d = np.einsum("...i,...i->...", c, np.sin(c))
    return np.sum(np.cos(d))


def three_operands(x):
    return np.einsum("i,ij,j->", x[0], np.cos(x), x[-1] ** 2) ** 2


def diagonal(x):
    # a repeated index in one operand ('ii'): the gradient is written onto a diagonal
    return np.sum(np.einsum("ii,ij->j", x, np.tanh(x)) ** 2)


def _summed(g, arity):
    if arity == 1:
        def summed(x):
            return np.sum(g(x))
    else:
        def summed(a, b):
            return np.sum(g(a, b))
    return summed


@pytest.mark.parametrize("f, shapes", [
    (two_subscripts, [(2, 3), (3, 2)]),
    (two_subscripts, [(3, 1), (1, 4)]),
    (three_operands, [(3, 3)]),
    (diagonal, [(3, 3)]),
])
def test_third_order_in_both_modes(f, shapes):
    args = tuple(R.normal(size=s) * 0.5 for s in shapes)
    check_grads(f, args, order=3, modes=("fwd", "rev"), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("f, shapes", [
    (two_subscripts, [(2, 3), (3, 2)]),
    (three_operands, [(3, 3)]),
])
def test_fourth_gradient_against_differences_of_the_third(f, shapes):
    args = [R.normal(size=s) * 0.5 for s in shapes]
    n = len(args)
    third = grad(_summed(grad(_summed(grad(f), n)), n))
    fourth = grad(_summed(third, n))
    v = R.normal(size=shapes[0])
    eps = 1e-5
    plus = [args[0] + eps * v] + args[1:]
    minus = [args[0] - eps * v] + args[1:]
    fd = (np.sum(third(*plus)) - np.sum(third(*minus))) / (2 * eps)
    np.testing.assert_allclose(np.sum(fourth(*args) * v), fd, rtol=1e-6, atol=1e-8)


def test_fourth_order_with_check_grads():
    check_grads(three_operands, (R.normal(size=(2, 2)) * 0.5,), order=4, modes=("rev",),
                rtol=1e-3, atol=1e-5, directions=1)


@pytest.mark.parametrize("shapes", [[(2, 3), (3, 2)], [(3, 1), (1, 4)]])
def test_third_order_jvp_against_differences(shapes):
    # forward mode over the second-order gradient code: the tangents of einsum_grad and
    # of the einsums with an operand replaced
    (a, b), (u, w) = ([R.normal(size=s) for s in shapes] for _ in range(2))
    out, tangent = jvp(second, (a, b), (u, w))
    eps = 1e-5
    fd = (second(a + eps * u, b + eps * w) - second(a - eps * u, b - eps * w)) / (2 * eps)
    np.testing.assert_allclose(out, second(a, b), rtol=1e-12)
    np.testing.assert_allclose(tangent, fd, rtol=1e-6, atol=1e-8)


def _first_summed(a, b):
    return np.sum(grad(two_subscripts)(a, b))


def second(a, b):
    return grad(_first_summed)(a, b)


def replaced_at(t, g, a, i, k):
    # the helper called with positions known only at run time: its rules are the general
    # einsum_replacing and einsum_grad_replacing (rules/third_order.py)
    b = np.cos(a.T)
    return np.sum(np.sin(einsum_grad_with(g, i, k, t, "ij,jk->ik", a, b)) ** 2) + \
        np.sum(einsum_with(k, np.sin(t), "ij,jk->ik", a, b) * g ** 2)


@pytest.mark.parametrize("i, k", [(0, 1), (1, 0), (1, 1)])
def test_third_order_of_the_helpers_with_positions_known_at_run_time(i, k):
    a = R.normal(size=(2, 3)) * 0.7
    t, g = R.normal(size=(2, 3) if k == 0 else (3, 2)), R.normal(size=(2, 2))
    check_grads(lambda t, g, a: replaced_at(t, g, a, i, k), (t, g, a), order=3,
                modes=("fwd", "rev"), rtol=1e-4, atol=1e-6, directions=1)


def test_second_order_code_calls_only_einsum_and_its_gradient():
    source = grad(_summed(grad(two_subscripts), 2)).source
    assert "einsum_with" not in source and "einsum_grad_with" not in source
    assert "np.einsum('ij,jk->ik', dda, b)" in source
