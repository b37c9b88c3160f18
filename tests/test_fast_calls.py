"""The fast path of NumPy code (sgcompiler/fast_calls.py): a call with arguments of the
kind of the call before it checks them, runs the code, and shapes and unaliases its
gradients in straight lines. It must answer what the full path answers, on every call:
each case calls several times (the first call takes the full path, the others the fast
one), with the arguments that make the full path copy, fill zeros or refuse.
"""
import numpy as np
import pytest

from sgcompiler import grad, value_and_grad


def _calls(g, *args, n=3):
    """The results of n calls of g(*args); the fast path was made."""
    out = [g(*args) for _ in range(n)]
    assert g._fast is not None
    return out


def tree_loss(p, x):
    return np.sum(p["a"] * x) + np.sum(p["b"] ** 2) + p["s"] * np.sum(x)


def test_a_tree_on_every_call():
    rng = np.random.default_rng(0)
    x = rng.normal(size=3)
    p = {"a": rng.normal(size=3), "b": rng.normal(size=3), "s": 0.5}
    for got in _calls(grad(tree_loss), p, x):
        assert list(got) == ["a", "b", "s"]
        np.testing.assert_allclose(got["a"], x)
        np.testing.assert_allclose(got["b"], 2 * p["b"])
        assert type(got["s"]) is float and got["s"] == pytest.approx(np.sum(x))
    first, second, _ = _calls(grad(tree_loss), p, x)
    assert not np.shares_memory(first["b"], second["b"])


def test_a_gradient_that_is_an_argument_is_copied_on_every_call():
    # d/da is x itself
    rng = np.random.default_rng(1)
    x = rng.normal(size=3)
    p = {"a": rng.normal(size=3), "b": rng.normal(size=3), "s": 1.0}
    for got in _calls(grad(tree_loss), p, x):
        assert not np.shares_memory(got["a"], x)
        np.testing.assert_allclose(got["a"], x)
    # the same array as two leaves and as x
    shared = {"a": x, "b": x, "s": 1.0}
    for got in _calls(grad(tree_loss), shared, x):
        assert not np.may_share_memory(got["a"], x)
        assert not np.may_share_memory(got["a"], got["b"])
        np.testing.assert_allclose(got["b"], 2 * x)


_GLOBAL = np.arange(4.0)


def through_views(p, y):
    return np.sum(p["a"] * _GLOBAL) + np.sum(p["b"] * y)


def test_views_on_every_call():
    # d/da is the global array, which the argument y views; d/db is y, a view
    p = {"a": np.ones(4), "b": np.ones(3)}
    y = _GLOBAL[1:]
    for got in _calls(grad(through_views), p, y):
        assert not np.shares_memory(got["a"], y) and not np.shares_memory(got["b"], y)
        assert not np.shares_memory(got["a"], _GLOBAL)
        np.testing.assert_allclose(got["a"], _GLOBAL)


def strided(p, x):
    return np.sum(p["a"] * x[::2]) + np.sum(p["b"])


def test_a_gradient_that_is_a_view_of_an_argument():
    rng = np.random.default_rng(2)
    x = rng.normal(size=6)
    p = {"a": rng.normal(size=3), "b": rng.normal(size=2)}
    for got in _calls(grad(strided), p, x):
        assert not np.shares_memory(got["a"], x)
        np.testing.assert_allclose(got["a"], x[::2])
        np.testing.assert_allclose(got["b"], np.ones(2))


def part_unused(p, x):
    return np.sum(p["a"] * x)


def test_zero_gradients_of_leaves_and_trees():
    rng = np.random.default_rng(3)
    x = rng.normal(size=3)
    p = {"a": rng.normal(size=3), "b": rng.normal(size=(2, 2)), "c": 2.0}
    for got in _calls(grad(part_unused), p, x):
        assert got["b"].shape == (2, 2) and np.all(got["b"] == 0) and got["c"] == 0.0
        got["b"][0, 0] = 1.0        # (a new array on every call)
    g = grad(part_unused, wrt=(0, 1))
    for dp, dx in _calls(g, {"w": np.ones(3), "a": x}, x):
        np.testing.assert_allclose(dx, x)
        np.testing.assert_allclose(dp["a"], x)
        assert np.all(dp["w"] == 0)


def test_value_and_gradient_of_a_tree():
    rng = np.random.default_rng(4)
    x = rng.normal(size=3)
    p = {"a": rng.normal(size=3), "b": rng.normal(size=3), "s": 0.5}
    for value, got in _calls(value_and_grad(tree_loss), p, x):
        assert value == pytest.approx(tree_loss(p, x))
        np.testing.assert_allclose(got["b"], 2 * p["b"])


def test_kinds_that_alternate():
    rng = np.random.default_rng(5)
    x = rng.normal(size=3)
    p64 = {"a": rng.normal(size=3), "b": rng.normal(size=3), "s": 0.5}
    p32 = {k: v.astype(np.float32) if isinstance(v, np.ndarray) else v
           for k, v in p64.items()}
    bigger = {"a": rng.normal(size=3), "b": rng.normal(size=5), "s": 0.5}
    reordered = {"b": p64["b"], "a": p64["a"], "s": 0.5}
    g = grad(tree_loss)
    for _ in range(3):
        for p in (p64, p32, bigger, reordered):
            got = g(p, x)
            assert list(got) == list(p)
            for k in p:
                assert np.shape(got[k]) == np.shape(p[k])
                assert np.result_type(got[k]) == np.result_type(p[k])
            np.testing.assert_allclose(got["b"], 2 * p["b"], rtol=1e-6)


def arrays(W, b, x):
    return np.sum(np.tanh(x @ W + b))


def test_arrays_and_their_kinds():
    rng = np.random.default_rng(6)
    W, b, x = rng.normal(size=(3, 2)), rng.normal(size=2), rng.normal(size=(4, 3))
    g = grad(arrays, wrt=(0, 1))
    want = None
    for dW, db in _calls(g, W, b, x):
        want = (dW, db) if want is None else want
        np.testing.assert_allclose(dW, want[0])
        np.testing.assert_allclose(db, want[1])
    # a subclass of ndarray is refused, as on the first call
    with pytest.raises(TypeError):
        g(W.view(np.matrix), b, x)
    # other shapes, a read-only result, a float where an array was
    dW, db = g(rng.normal(size=(3, 5)), rng.normal(size=5), x)
    assert dW.shape == (3, 5)
    dW, db = g(W, b, x)
    np.testing.assert_allclose(dW, want[0])


def inverse(A, x):
    return np.sum(np.linalg.inv(A) @ x)


def test_an_error_on_a_fast_call_is_the_full_paths():
    rng = np.random.default_rng(7)
    A, x = rng.normal(size=(3, 3)) + 3 * np.eye(3), rng.normal(size=3)
    g = grad(inverse)
    _calls(g, A, x)
    with pytest.raises(np.linalg.LinAlgError):
        g(np.zeros((3, 3)), x)
    g(A, x)


def _helper(t):
    return np.sin(t)


def via_helper(x, s):
    return np.sum(_helper(x) * s)


def _other(t):
    return np.cos(t)


def test_a_helper_redefined_between_calls(monkeypatch):
    import sys
    x = np.linspace(0.1, 0.9, 4)
    g = grad(via_helper)
    for got in _calls(g, x, 2.0):
        np.testing.assert_allclose(got, 2.0 * np.cos(x))
    monkeypatch.setattr(sys.modules[__name__], "_helper", _other)
    for got in _calls(g, x, 2.0):       # (the code read _helper: compiled again)
        np.testing.assert_allclose(got, -2.0 * np.sin(x))


def keyed(p, x):
    return np.sum(p[("w", 0)] * x) + np.sum(p[1] ** 2)


def test_keys_that_are_not_strings_or_ints_take_the_full_path():
    rng = np.random.default_rng(8)
    x = rng.normal(size=3)
    p = {("w", 0): rng.normal(size=3), 1: rng.normal(size=3)}
    g = grad(keyed)
    for _ in range(3):
        got = g(p, x)
        np.testing.assert_allclose(got[("w", 0)], x)
        np.testing.assert_allclose(got[1], 2 * p[1])
    assert g._fast is None
