"""The gradient table: each specimen against central finite differences."""
import numpy as np
import pytest

from gradcheck import assert_grad_matches, numeric_grad
from sgcompiler import grad, value_and_grad
import specimens_core as S


def _id(row):
    return row[0].__name__


@pytest.mark.parametrize("f, make", S.ROWS, ids=[f"{r[0].__name__}-{i}"
                                                 for i, r in enumerate(S.ROWS)])
def test_matches_finite_differences(f, make):
    args = make(np.random.default_rng(0))
    wrt = [i for i, a in enumerate(args) if not isinstance(a, (int, np.integer))]
    assert_grad_matches(f, args, wrt=wrt)


@pytest.mark.parametrize("n", [3, 2, 1, -1])
def test_branches_each_path(n):
    x = np.random.default_rng(n + 5).uniform(0.5, 1.5, size=(3,))
    assert_grad_matches(S.branches, [x, n], wrt=[0])


def test_fancy_index_with_repeats():
    x = np.random.default_rng(0).normal(size=(5,))
    idx = np.array([0, 2, 2, 4])
    g = grad(S.fancy_index)(x, idx)
    np.testing.assert_allclose(g, numeric_grad(S.fancy_index, [x, idx], 0), rtol=1e-6)


def test_keyword_arguments_and_defaults():
    x = np.random.default_rng(0).normal(size=(4,))
    g = grad(S.keyword_default)
    f = lambda x: S.keyword_default(x, 2.0, shift=-1.0)  # noqa: E731
    np.testing.assert_allclose(g(x, 2.0, shift=-1.0), numeric_grad(f, [x], 0), rtol=1e-6)
    np.testing.assert_allclose(grad(S.keyword_default, wrt="scale")(x, scale=2.0),
                               numeric_grad(lambda s: S.keyword_default(x, s), [2.0], 0),
                               rtol=1e-6)


def test_wrt_by_name_position_and_tuple():
    r = np.random.default_rng(0)
    x, y = r.normal(size=(2, 3)), r.normal(size=(3,))
    gx = grad(S.broadcast_mix)(x, y)
    gy = grad(S.broadcast_mix, wrt=1)(x, y)
    assert np.allclose(grad(S.broadcast_mix, wrt="y")(x, y), gy)
    both = grad(S.broadcast_mix, wrt=(0, "y"))(x, y)
    assert isinstance(both, tuple) and len(both) == 2
    assert np.allclose(both[0], gx) and np.allclose(both[1], gy)
    single = grad(S.broadcast_mix, wrt=("x",))(x, y)
    assert isinstance(single, tuple) and np.allclose(single[0], gx)


def test_value_and_grad_computes_both():
    r = np.random.default_rng(0)
    x, w = r.normal(size=6), r.normal(size=6)
    value, g = value_and_grad(S.stable_softmax)(x, w)
    assert np.isclose(value, S.stable_softmax(x, w))
    assert np.allclose(g, grad(S.stable_softmax)(x, w))


def test_gradient_types_follow_arguments():
    assert isinstance(grad(S.math_scalars)(0.7), float)
    x32 = np.ones((2, 3), dtype=np.float32)
    g = grad(S.broadcast_mix)(x32, np.ones(3, dtype=np.float32))
    assert g.dtype == np.float32 and g.shape == (2, 3)
    g0 = grad(S.broadcast_mix)(np.array(1.5), np.ones(3))
    assert isinstance(g0, np.ndarray) and g0.shape == ()


def test_decorator_forms():
    @grad
    def f(x):
        return np.sum(x ** 3)

    @grad(wrt="y")
    def h(x, y):
        return np.sum(x * y)

    x = np.arange(3.0)
    assert np.allclose(f(x), 3 * x ** 2)
    assert np.allclose(h(x, x + 1), x)
    assert f.primal.__name__ == "f" and "def f_grad" in f.source


def test_gradient_does_not_alias_arguments():
    r = np.random.default_rng(0)
    x, w = r.normal(size=3), r.normal(size=3)
    g = grad(lambda_free_product, wrt=0)(x, w)
    assert np.allclose(g, w) and not np.shares_memory(g, w)
    g[:] = 0
    assert np.all(w != 0)


def lambda_free_product(x, w):
    return np.sum(x * w)


def test_non_scalar_output_is_a_type_error():
    def vector(x):
        return x * 2.0
    with pytest.raises(TypeError, match=r"shape \(3,\)"):
        grad(vector)(np.ones(3))


@pytest.mark.parametrize("bad, message", [
    (np.arange(3), "dtype int64"), (3, "int"), ("ab", "str"),
    (True, "bool")])
def test_bad_argument_types(bad, message):
    with pytest.raises(TypeError, match=message):
        grad(S.arith)(bad, 1.0)


def test_compiled_once():
    from sgcompiler import pipeline
    g = grad(S.reassigned)
    x = np.ones((3, 2))
    g(x)
    size = len(pipeline._CACHE)
    for _ in range(3):
        g(x)
    grad(S.reassigned)(x)
    assert len(pipeline._CACHE) == size
