"""The adjoints of the sigmoid `1 / (1 + np.exp(-z))` and of the logs of it go straight to
z (reverse/shortcuts.py): the textbook cross-entropy's gradient is a few products, not
the rules' chain of negations, squares and divisions. Each gradient is checked against
finite differences, on several shapes, with broadcasting."""
import operator

import numpy as np
import pytest

from gradcheck import assert_grad_matches
from sgcompiler import grad, hessian


def cross_entropy(w, X, y):
    z = X @ w
    p = 1.0 / (1.0 + np.exp(-z))
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def sigmoid_times(z, x):
    p = 1 / (1 + np.exp(-z))
    return np.sum(p * x)


def log_sigmoid(z, x):
    p = 1.0 / (1.0 + np.exp(-z))
    return np.sum(x * np.log(p))


def log_one_minus(z):
    p = 1.0 / (np.exp(-z) + 1.0)
    return np.sum(np.log(1.0 - p) * z)


def shared_exp(z):
    e = np.exp(-z)
    p = 1.0 / (1.0 + e)
    return np.sum(np.log(p)) + np.sum(e * z)


def both_and_more(z, y):
    p = 1.0 / (1.0 + np.exp(-z))
    q = 1.0 - p
    return np.sum(y * np.log(p) + (1.0 - y) * np.log(q) + p * q + q ** 3)


def rebound(z):
    p = 1.0 / (1.0 + np.exp(-z))
    z = z * 2.0
    return np.sum(np.log(p) * z)


def in_a_loop(z):
    total = 0.0
    for k in range(2):
        p = 1.0 / (1.0 + np.exp(-z * k))
        total = total + np.sum(np.log(p))
    return total


def called_operators(z, x):
    # the operators called as functions: calls in the normal form, not BinOps
    p = operator.truediv(1.0, operator.add(1.0, np.exp(operator.neg(z))))
    return np.sum(np.log(p) * x) + np.sum(operator.sub(1.0, p))


def _backward(source):
    """The backward sweep's code, without its comments."""
    back = source.split("# backward", 1)[1]
    return "\n".join(line for line in back.splitlines() if not line.strip().startswith("#"))


def test_cross_entropy_adjoint_is_short():
    rng = np.random.default_rng(0)
    X, w = rng.normal(size=(20, 3)), rng.normal(size=3)
    y = (rng.random(20) > 0.5) * 1.0
    g = grad(cross_entropy)
    g(w, X, y)
    back = _backward(g.source)
    # no power, no exp and no division left in the backward sweep
    assert "**" not in back and "_exp" not in back and "/ _" not in back, g.source
    assert back.count("-") <= 3, g.source     # (the mean's -1.0 and one negation)


@pytest.mark.parametrize("rows, features, labels", [
    (7, 3, (7,)), (1, 4, (1,)), (6, 2, (1,)), (5, 1, (5,))])
def test_cross_entropy_gradient(rows, features, labels):
    rng = np.random.default_rng(rows)
    X, w = rng.normal(size=(rows, features)), rng.normal(size=features)
    y = (rng.random(labels) > 0.5) * 1.0      # (1,): broadcast over the rows
    assert_grad_matches(cross_entropy, [w, X, y], wrt=[0, 1])


@pytest.mark.parametrize("f, shapes", [
    (sigmoid_times, [(4,), (4,)]), (sigmoid_times, [(3, 1), (1, 5)]),
    (sigmoid_times, [(), (3,)]), (log_sigmoid, [(2, 3), (3,)]),
    (log_sigmoid, [(3,), (2, 3)]), (log_one_minus, [(5,)]), (log_one_minus, [(2, 2)]),
    (shared_exp, [(4,)]), (both_and_more, [(3, 2), (2,)]), (rebound, [(4,)]),
    (in_a_loop, [(3,)]), (called_operators, [(2, 3), (3,)])])
def test_gradient_matches_differences(f, shapes):
    rng = np.random.default_rng(len(shapes))
    args = [rng.normal(size=s) for s in shapes]
    assert_grad_matches(f, args)


def test_other_reads_of_the_sigmoid_go_through_its_own_shortcut():
    g = grad(sigmoid_times, wrt="z")
    g(np.ones(3), np.ones(3))
    back = _backward(g.source)
    assert "**" not in back and "_exp" not in back, g.source


def test_shared_temporaries_keep_the_rules():
    # e is read twice: its adjoint gets two parts, so the chain is not skipped
    g = grad(shared_exp)
    g(np.ones(3))
    assert "d_exp" in g.source or "de" in g.source, g.source


def test_float32_stays_float32():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(6, 3)).astype(np.float32)
    w, y = rng.normal(size=3).astype(np.float32), np.ones(6, dtype=np.float32)
    assert grad(cross_entropy)(w, X, y).dtype == np.float32


def test_hessian_of_cross_entropy_matches_differences_of_the_gradient():
    rng = np.random.default_rng(2)
    X, w = rng.normal(size=(9, 3)), rng.normal(size=3)
    y = (rng.random(9) > 0.5) * 1.0
    H = hessian(cross_entropy)(w, X, y)
    g, eps = grad(cross_entropy), 1e-6
    numeric = np.stack([(g(w + eps * e, X, y) - g(w - eps * e, X, y)) / (2 * eps)
                        for e in np.eye(3)], axis=1)
    np.testing.assert_allclose(H, numeric, rtol=1e-5, atol=1e-8)
    p = 1 / (1 + np.exp(-X @ w))
    np.testing.assert_allclose(H, X.T @ (X * (p * (1 - p))[:, None]) / 9, rtol=1e-10)
