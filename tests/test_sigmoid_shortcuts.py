"""The adjoints of the sigmoid `1 / (1 + np.exp(-z))` and of the logs of it go straight to
z (reverse/shortcuts.py): the textbook cross-entropy's gradient is a few products, not
the rules' chain of negations, squares and divisions. Each gradient is checked against
finite differences, on several shapes, with broadcasting."""
import operator
import re

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


def _compiled_on_labels(f, seed, rows):
    """grad(f) compiled for w, X and 0/1 labels y of `rows` rows, and its backward code."""
    rng = np.random.default_rng(seed)
    X, w = rng.normal(size=(rows, 3)), rng.normal(size=3)
    y = (rng.random(rows) > 0.5) * 1.0
    g = grad(f)
    g(w, X, y)
    return g, _backward(g.source)


def test_cross_entropy_adjoint_is_short():
    g, back = _compiled_on_labels(cross_entropy, 0, 20)
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


# --- the cross-entropy's adjoint in z: y (1 - p) - (1 - y) p = y - p --------------------


def cross_entropy_swapped(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.sum(np.log(1.0 - p) * (1.0 - y) + np.log(p) * y)


def cross_entropy_smoothed(w, X, y):
    y = y * 0.9 + 0.05          # (y rebound before it is read)
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def cross_entropy_then_rebound(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    t = y * np.log(p) + (1.0 - y) * np.log(1.0 - p)
    y = y * 3.0                 # (y rebound after: t's adjoint reads the y it used)
    p = p * 2.0
    return -np.mean(t) + np.sum(p * y)


def cross_entropy_and_more(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    t = y * np.log(p) + (1.0 - y) * np.log(1.0 - p)
    return -np.mean(t) + np.sum(t * t) + np.sum(p ** 2)


def cross_entropy_weighted(w, X, y, c):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.sum(c * (y * np.log(p) + (1.0 - y) * np.log(1.0 - p)))


@pytest.mark.parametrize("f", [cross_entropy, cross_entropy_swapped, cross_entropy_smoothed])
def test_the_cross_entropys_adjoint_in_z_is_y_minus_p(f):
    g, back = _compiled_on_labels(f, 3, 8)
    # y - p, or the same written into a dead buffer: np.subtract(y, p, out=p)
    assert re.search(r"\(y(_1)? - p\)|np\.subtract\(y(_1)?, p, out=", back), g.source
    # what the rules read, or the products they make, are gone: neither 1 - p nor 1 - y
    assert "1.0 -" not in back and "_sub" not in back, g.source


@pytest.mark.parametrize("f, shapes", [
    (cross_entropy, [(3,), (7, 3), (7,)]), (cross_entropy, [(2,), (5, 2), (1,)]),
    (cross_entropy, [(3,), (4, 3), (2, 4)]),       # y broadcasts p up to (2, 4)
    (cross_entropy_swapped, [(3,), (6, 3), (6,)]),
    (cross_entropy_smoothed, [(2,), (5, 2), (5,)]),
    (cross_entropy_then_rebound, [(3,), (6, 3), (6,)]),
    (cross_entropy_and_more, [(3,), (5, 3), (5,)]),
    (cross_entropy_weighted, [(3,), (6, 3), (6,), (6,)])])
def test_cross_entropy_forms_match_differences(f, shapes):
    rng = np.random.default_rng(sum(map(len, shapes)))
    args = [rng.normal(size=s) for s in shapes]
    args[2] = rng.random(shapes[2])         # labels in [0, 1] (any y is differentiable)
    assert_grad_matches(f, args)            # every argument: y is active too


def test_labels_with_a_gradient_keep_the_rules():
    """With y active, t's adjoint in y (log p - log(1 - p)) is needed: no shortcut."""
    rng = np.random.default_rng(4)
    X, w, y = rng.normal(size=(6, 3)), rng.normal(size=3), rng.random(6)
    g = grad(cross_entropy, wrt=(0, 2))
    g(w, X, y)
    assert "(y - p)" not in g.source, g.source
    assert_grad_matches(cross_entropy, [w, X, y], wrt=[0, 2])


def test_cross_entropy_float32_and_loop_of_it():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(6, 3)).astype(np.float32)
    w, y = rng.normal(size=3).astype(np.float32), (rng.random(6) > 0.5).astype(np.float32)
    got = grad(cross_entropy)(w, X, y)
    assert got.dtype == np.float32
    p = 1 / (1 + np.exp(-(X.astype(float) @ w)))
    np.testing.assert_allclose(got, X.astype(float).T @ (p - y) / 6, rtol=1e-5)


# --- inside loops and branches ---------------------------------------------------------


def batches(w, X, y):
    total = 0.0
    for k in range(2):          # X (2, n, d): one cross-entropy a batch
        z = X[k] @ w
        p = 1.0 / (1.0 + np.exp(-z))
        total = total + np.mean(y[k] * np.log(p) + (1.0 - y[k]) * np.log(1.0 - p))
    return -total


def batches_while(w, X, y):
    total, k = 0.0, 0
    while k < 2:
        p = 1.0 / (1.0 + np.exp(-(X[k] @ w)))
        total = total + np.sum(np.log(p) * y[k]) + np.sum(np.log(1.0 - p))
        k = k + 1
    return total


def branch(w, X, y, c):
    if np.sum(c) > 0:
        p = 1.0 / (1.0 + np.exp(-(X[0] @ w)))
        loss = -np.mean(y[0] * np.log(p) + (1.0 - y[0]) * np.log(1.0 - p))
    else:
        loss = np.sum(w * w)
    return loss * 2.0


def carried(w, X, y):
    total = 0.0
    for k in range(3):          # the logs read the sigmoid of the run before
        if k > 0:
            total = total + np.sum(y[0] * np.log(p) + (1.0 - y[0]) * np.log(1.0 - p))
        p = 1.0 / (1.0 + np.exp(-(X[0] @ w) * (k + 1.0)))
    return total + np.sum(p)


def z_rebound_in_the_loop(w, X, y):
    total = 0.0
    z = X[0] @ w
    for k in range(2):
        p = 1.0 / (1.0 + np.exp(-z))
        total = total + np.sum(np.log(p) * y[0]) + np.sum(p * y[1])
        z = z * 1.5             # z after the chain: the adjoint goes to the one before
    return total


def labels_rebound_in_the_loop(w, X, y):
    total = 0.0
    t = y[0]
    for k in range(2):
        p = 1.0 / (1.0 + np.exp(-(X[k] @ w)))
        q = 1.0 - t
        t = t * 0.5 + 0.25      # y between 1 - y and y * log(p)
        total = total + np.sum(t * np.log(p) + q * np.log(1.0 - p))
    return total


LOOPS = [batches, batches_while, branch, carried, z_rebound_in_the_loop,
         labels_rebound_in_the_loop]


@pytest.mark.parametrize("f", LOOPS)
@pytest.mark.parametrize("n, d", [(5, 3), (1, 2)])
def test_loops_and_branches_match_differences(f, n, d):
    rng = np.random.default_rng(n + d)
    X, w, y = rng.normal(size=(2, n, d)), rng.normal(size=d), rng.random((2, n))
    args = [w, X, y] + ([rng.normal(size=2)] if f is branch else [])
    for c in ([1.0, 1.0], [-1.0, -1.0]) if f is branch else [None]:
        if c is not None:
            args[3] = np.array(c)
        assert_grad_matches(f, args, wrt=[0, 1])
        assert_grad_matches(f, args, wrt=[0, 1, 2])         # y active: the rules'


@pytest.mark.parametrize("f", [batches, batches_while, branch])
def test_loops_and_branches_take_the_shortcuts(f):
    rng = np.random.default_rng(8)
    args = [rng.normal(size=3), rng.normal(size=(2, 5, 3)), rng.random((2, 5))] + \
        ([np.ones(2)] if f is branch else [])
    g = grad(f, wrt=0)
    g(*args)
    back = _backward(g.source)
    assert "**" not in back and "_exp" not in back, g.source


def test_loops_and_branches_float32():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(2, 4, 3)).astype(np.float32)
    w, y = rng.normal(size=3).astype(np.float32), rng.random((2, 4)).astype(np.float32)
    got = grad(batches)(w, X, y)
    assert got.dtype == np.float32
    want = grad(batches)(w.astype(float), X.astype(float), y.astype(float))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
