"""Chains of scaled batched tangents folded into one product (forward/scales.py), and
hessian's kept tangent code (derivatives._batched_jacobian with hessian_of): checked
against finite differences and one jvp per column on chains with hazards (a factor
rebound or written between two links, a tangent read twice, loops, branches,
broadcasting), and on the logistic Hessian's generated code."""
import numpy as np
import pytest

from sgcompiler import derivatives, hessian, jacobian
from test_forward_batched import batched_source, fd_jacobian
from test_forward import _fd_hessian

R = np.random.default_rng(14)


def chain(x, c):
    a = -x
    b = a * np.exp(c)
    d = np.cos(c) * b
    return np.sin(d / (1.0 + c ** 2))


def rebound(x, c):
    a = x * c
    c = c + 1.0          # the factor of the next link is the new c, of the first the old
    b = a * c
    return np.tanh(b)


def written(x, c):
    c = c.copy()
    a = x * c
    c[0] = 5.0           # an element write between two links
    b = a * c
    return np.tanh(b)


def read_twice(x, c):
    a = x * c
    b = a * c
    return np.sin(b) + a


def broadcasting(x, C):
    a = x * C[0]         # (n,) then (m, n)
    b = a * C
    e = b / (1.0 + C ** 2)
    return np.sin(e) * 2.0


def in_loop(x, c):
    s = x
    for k in range(3):
        a = s * c
        c = c * 0.5      # rebound inside the loop, between the two links
        s = np.sin(a * c)
    return s


def in_branch(x, c):
    if np.sum(c) > 0:
        a = x * c
        b = -a
        y = np.exp(b / 3.0)
    else:
        y = x
    return y * c


def scalar(x, s):
    a = x * s
    b = a * s
    return np.sin(b)


def _vec():
    return R.normal(size=4), R.normal(size=4)


CASES = [
    (chain, _vec),
    (rebound, _vec),
    (written, _vec),
    (read_twice, _vec),
    (broadcasting, lambda: (R.normal(size=4), R.normal(size=(3, 4)))),
    (broadcasting, lambda: (R.normal(size=(2, 5)), R.normal(size=(2, 5)))),
    (in_loop, _vec),
    (in_branch, lambda: (R.normal(size=3), np.abs(R.normal(size=3)))),
    (in_branch, lambda: (R.normal(size=3), -np.abs(R.normal(size=3)))),
    (scalar, lambda: (R.normal(size=5), 0.7)),
]


@pytest.mark.parametrize("f, make", CASES, ids=[f"{f.__name__}{i}" for i, (f, _) in
                                                 enumerate(CASES)])
def test_folded_chains_match_finite_differences(monkeypatch, f, make):
    args = make()
    J = jacobian(f, mode="fwd")(*args)
    np.testing.assert_allclose(J, fd_jacobian(f, args, 0), rtol=1e-5, atol=1e-7)
    monkeypatch.setattr(derivatives, "_batched_jacobian", lambda *a: None)
    np.testing.assert_allclose(J, jacobian(f, mode="fwd")(*args), rtol=1e-12, atol=1e-14)


def test_a_chain_scales_its_tangent_once():
    source = batched_source(chain, _vec(), 0)
    assert "b_dot" not in source and "a_dot" not in source, source
    # the batched tangent is multiplied once; the factors are values' products
    assert source.count("x_dot") == 2, source       # the parameter, and the one product


def test_a_factor_rebound_between_links_is_read_by_its_own_name():
    source = batched_source(rebound, _vec(), 0)
    assert "c * c_1" in source, source      # (the normal form renamed the new c)


def test_a_factor_rebound_in_a_loop_between_links_keeps_both_links():
    source = batched_source(in_loop, _vec(), 0)
    assert "a_dot = s_dot * c" in source, source


def test_a_factor_written_between_links_keeps_both_links():
    source = batched_source(written, _vec(), 0)
    assert "a_dot" in source, source


def logistic(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.sum(y * np.log(p) + (1.0 - y) * np.log(1.0 - p)) / X.shape[0]


def _logistic_data(n, d):
    X = R.normal(size=(n, d))
    return R.normal(size=d) / np.sqrt(d), X, (R.random(n) > 0.5).astype(float)


def _logistic_hand(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return X.T @ ((p * (1.0 - p) / X.shape[0])[:, None] * X)


@pytest.mark.parametrize("n, d", [(30, 4), (7, 1), (50, 9)])
def test_logistic_hessian_is_one_scaled_product(n, d):
    args = _logistic_data(n, d)
    H = hessian(logistic)(*args)
    np.testing.assert_allclose(H, _logistic_hand(*args), rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(H, _fd_hessian(logistic, args), rtol=1e-5, atol=1e-7)
    g = derivatives._gradient_function(logistic, "w", args)
    source = batched_source(g, args, 0)
    # one elementwise statement of the batch's size: X.T scaled once, then the product
    products = [line for line in source.splitlines() if "_dot = " in line]
    assert len(products) == 4, source   # X.T, the scaled one, unbroadcast, the product
    assert "_matmul_dot * (" in source, source


def test_hessian_keeps_its_tangent_code(monkeypatch):
    args = _logistic_data(20, 3)
    H = hessian(logistic)
    first = H(*args)
    made = []
    original = derivatives._gradient_function
    monkeypatch.setattr(derivatives, "_gradient_function",
                        lambda *a: made.append(a) or original(*a))
    np.testing.assert_allclose(H(*args), first, rtol=1e-14)
    assert made == []
    other = _logistic_data(25, 3)       # other shapes: compiled (and kept) again
    np.testing.assert_allclose(H(*other), _logistic_hand(*other), rtol=1e-10, atol=1e-13)
    assert len(made) == 1


SCALE = 2.0


def _scale(x):
    return SCALE * x


def with_helper(x):
    return np.sum(np.exp(_scale(x)))


def test_kept_hessian_code_follows_a_rebound_global(monkeypatch):
    x = R.normal(size=3)
    H = hessian(with_helper)
    np.testing.assert_allclose(H(x), np.diag(4.0 * np.exp(2.0 * x)), rtol=1e-10)
    monkeypatch.setitem(globals(), "SCALE", 3.0)
    np.testing.assert_allclose(H(x), np.diag(9.0 * np.exp(3.0 * x)), rtol=1e-10)
    monkeypatch.setitem(globals(), "_scale", _square)
    np.testing.assert_allclose(H(x), np.diag((2.0 + 4.0 * x ** 2) * np.exp(x ** 2)),
                               rtol=1e-10)


def _square(x):
    return x * x
