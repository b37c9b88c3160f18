"""Exact rewrites that let the gradient work in place (optimize/algebraic/algebra.py).

`_neg = -y` is folded into the products that read it (`-(y * z)`), and the derivative of
`log1p(exp(u))`, `g / (1 + e) * e`, is computed as `g / (1 + 1/e)` inside the array of `e`.
Each case is checked against finite differences on several shapes, with broadcasting, and
against what the function itself computes where the rewrite must not apply.
"""
import pathlib
import sys
import tracemalloc
import warnings

import numpy as np
import pytest

from sgcompiler import grad, value_and_grad

from gradcheck import checked_source, numeric_grad

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from benchmarks.workloads.logreg import logreg, logreg_hand  # noqa: E402


def _check(f, args, wrt=0):
    return checked_source(f, args, wrt, atol=1e-9)


def softplus(u):
    return np.sum(np.log1p(np.exp(u)))


def weighted_softplus(u, w):
    return np.sum(np.log1p(np.exp(u)) * w)


logistic = logreg          # the benchmark's workload


@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4)])
def test_softplus_is_computed_in_the_array_of_exp(shape, monkeypatch):
    from sgcompiler import pipeline
    from sgcompiler.optimize.memory import buffers
    u = np.random.default_rng(1).normal(scale=3.0, size=shape)
    source = _check(softplus, (u,))         # small: one expression
    assert "np.reciprocal(_exp)" in source and "np.errstate" in source
    monkeypatch.setattr(buffers, "_LARGE", 0)
    monkeypatch.setattr(pipeline, "_CACHE", {})     # compile again       # as for arrays of 64 KiB and more
    source = _check(softplus, (u,))
    assert "np.reciprocal(_exp, out=_exp)" in source
    assert "np.errstate" in source


@pytest.mark.parametrize("u_shape, w_shape", [((3, 4), (4,)), ((3, 4), (3, 1)),
                                              ((3, 4), (3, 4)), ((6,), ())])
def test_softplus_with_a_broadcast_weight(u_shape, w_shape):
    rng = np.random.default_rng(2)
    u, w = rng.normal(scale=2.0, size=u_shape), rng.normal(size=w_shape)
    source = _check(weighted_softplus, (u, w), wrt=(0, 1))
    assert "reciprocal" in source


@pytest.mark.parametrize("n, d", [(7, 3), (40, 5)])
def test_logistic_regression(n, d):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(n, d))
    y = np.where(rng.random(n) > 0.5, 1.0, -1.0)
    w = rng.normal(size=d)
    source = _check(logistic, (w, X, y, 0.1))
    assert "_neg" not in source         # -y is folded into the products
    assert "np.reciprocal" in source


def test_softplus_far_out_in_the_tails():
    # exp(u) is 0 (and 1/e inf) below about -745: the derivative is 0, without a warning
    u = np.array([-800.0, -720.0, -30.0, 0.0, 30.0])
    g = grad(softplus)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = g(u)
    expected = 1.0 / (1.0 + np.exp(-np.array([-700.0, -700.0, -30.0, 0.0, 30.0])))
    expected[:2] = 0.0
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-300)
    assert "reciprocal" in g.source


def test_softplus_where_exp_overflows():
    # the function itself overflows (and says so); its derivative there is 1, not nan
    g = grad(softplus)
    with np.errstate(over="ignore"):
        got = g(np.array([800.0, 0.0]))
    np.testing.assert_allclose(got, [1.0, 0.5])


def test_softplus_with_its_value():
    u = np.linspace(-3.0, 3.0, 7)
    value, gradient = value_and_grad(softplus)(u)
    assert value == pytest.approx(softplus(u))
    np.testing.assert_allclose(gradient, numeric_grad(softplus, (u,), 0), rtol=1e-7)


def ratio_of_exp(u):
    e = np.exp(u)
    return np.sum(e / (1.0 + e))            # not log1p: the pattern is not there


def test_other_uses_of_exp_are_left_alone():
    source = _check(ratio_of_exp, (np.linspace(-2.0, 2.0, 5),))
    assert "reciprocal" not in source


def times_neg(y, z):
    return np.sum(np.sin(-y * z))


def neg_times(y, z):
    return np.sum(np.sin(z * -y))


def over_neg(y, z):
    return np.sum(np.sin(z / -y))


def neg_over(y, z):
    return np.sum(np.sin(-y / z))


def neg_squared(y, z):
    n = -y
    return np.sum(n * n * z)


@pytest.mark.parametrize("f", [times_neg, neg_times, over_neg, neg_over, neg_squared])
@pytest.mark.parametrize("y_shape, z_shape", [((4,), (4,)), ((3, 4), (4,)), ((3, 1), (3, 4))])
def test_a_negation_folded_into_products(f, y_shape, z_shape):
    rng = np.random.default_rng(4)
    y, z = rng.uniform(0.5, 2.0, size=y_shape), rng.uniform(0.5, 2.0, size=z_shape)
    source = _check(f, (y, z), wrt=(0, 1))
    if f in (times_neg, neg_times, neg_over):     # (z / -y reads -y squared too)
        assert "= -y\n" not in source
    value, _ = value_and_grad(f, wrt=(0, 1))(y, z)
    assert value == f(y, z)                 # to the bit


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_the_negation_of_integers_is_not_moved(dtype):
    # -y of unsigned (or int8 -128) wraps around: (-y) * z is not -(y * z) here
    y = np.array([1, 2, 200 if dtype == np.uint8 else -128], dtype=dtype)
    z = np.array([0.5, 1.5, 2.0])
    with np.errstate(over="ignore"):
        value, gradient = value_and_grad(times_neg, wrt=1)(y, z)
        assert value == times_neg(y, z)
        np.testing.assert_allclose(gradient, np.cos(-y * z) * -y)


def test_logistic_peak_memory_is_that_of_the_hand_written_gradient():
    # the hand-written gradient needs one vector of n; the generated one did three
    rng = np.random.default_rng(5)
    n, d = 20000, 4
    X, w = rng.normal(size=(n, d)), rng.normal(size=d)
    y = np.where(rng.random(n) > 0.5, 1.0, -1.0)

    hand = logreg_hand      # the benchmark's hand-written gradient
    def peak(f):
        f(w, X, y, 0.1)
        tracemalloc.start()
        try:
            f(w, X, y, 0.1)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    g = grad(logistic)
    np.testing.assert_allclose(g(w, X, y, 0.1), hand(w, X, y, 0.1), rtol=1e-9)
    assert peak(g) <= 1.2 * peak(hand)


class _Float64Arrays:
    """A shapes oracle for fold_algebra on its own: every name is a float vector of 3."""

    def shape_of(self, node):
        return (3,), np.dtype(np.float64)

    def track(self, stmt):
        pass


@pytest.mark.parametrize("body", [
    "_neg = -y\n_mul = _neg * _neg\nr = _mul * z",       # (-y)(-y) = y y
    "_neg = -y\n_mul = _neg * z\nr = z / _neg + _mul",
    "_neg = -y\n_mul = z * _neg\nr = _mul * (_neg * _neg) / _neg",
])
def test_fold_algebra_keeps_the_value(body):
    import gast
    from sgcompiler.backend.codegen import to_source
    from sgcompiler.optimize.algebraic.algebra import fold_algebra

    tree = gast.parse(body)
    fold_algebra(tree.body, _Float64Arrays(), "np")
    text = to_source(tree, "")
    assert "_neg" not in text
    env = {"y": np.array([0.5, -1.5, 2.0]), "z": np.array([1.25, 3.0, -0.75])}
    expected, got = dict(env), dict(env)
    exec(body, {"np": np}, expected)
    exec(text, {"np": np}, got)
    np.testing.assert_array_equal(got["r"], expected["r"])


def stable_logistic(w, X, y):
    z = X @ w
    return np.mean(np.maximum(z, 0.0) + np.log1p(np.exp(-np.abs(z))) - y * z)


@pytest.mark.parametrize("n, d", [(6, 2), (25, 4)])
def test_a_mean_over_terms_needs_no_terms(n, d):
    # the adjoint of each term of the mean is 1/n everywhere: the number itself, which
    # multiplies what the terms' rules read (no array of n is filled with it), so the terms
    # themselves (log1p, the sum, y * z) are not computed only for their shape
    rng = np.random.default_rng(6)
    X, w = rng.normal(size=(n, d)), rng.normal(size=d)
    y = (rng.random(n) > 0.5).astype(float)
    source = _check(stable_logistic, (w, X, y))
    # (fold-constants writes 1.0 / 25 as 0.04, and leaves 1.0 / 6)
    assert "np.full" not in source
    assert f"1.0 / {n}" in source or repr(1.0 / n) in source and len(repr(1.0 / n)) <= 5
    assert "log1p" not in source.split("# backward")[0]
    value, gradient = value_and_grad(stable_logistic)(w, X, y)
    assert value == pytest.approx(stable_logistic(w, X, y))     # here it is computed


def test_the_mean_number_keeps_the_operands_dtype():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(8, 3)).astype(np.float32)
    w = rng.normal(size=3).astype(np.float32)
    y = (rng.random(8) > 0.5).astype(np.float32)
    g = grad(stable_logistic)
    got = g(w, X, y)
    assert got.dtype == np.float32      # (the number 1/n times float32 operands)
    assert "np.full" not in g.source
    np.testing.assert_allclose(got, grad(stable_logistic)(w.astype(float), X.astype(float),
                                                           y.astype(float)), rtol=1e-5)


def scaled_logistic(w, X, y, lam):
    z = X @ w
    return lam * np.mean(np.maximum(z, 0.0) + np.log1p(np.exp(-np.abs(z))) - y * z)


@pytest.mark.parametrize("lam", [0.5, 3])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_mean_scaled_by_a_number_argument(lam, dtype):
    rng = np.random.default_rng(8)
    X, w = rng.normal(size=(9, 2)).astype(dtype), rng.normal(size=2).astype(dtype)
    y = (rng.random(9) > 0.5).astype(dtype)
    g = grad(scaled_logistic)
    got = g(w, X, y, lam)
    assert got.dtype == dtype
    assert "np.full((9,), lam / 9" in g.source
    assert "log1p" not in g.source.split("# backward")[0]
    if dtype == np.float64:
        np.testing.assert_allclose(got, numeric_grad(scaled_logistic, (w, X, y, lam), 0),
                                   rtol=1e-6, atol=1e-9)
    else:
        np.testing.assert_allclose(got, grad(scaled_logistic)(
            w.astype(float), X.astype(float), y.astype(float), lam), rtol=1e-4)
