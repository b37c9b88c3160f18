"""Calls of user functions, and gradients with respect to parameter trees."""
import numpy as np
import pytest

from gradcheck import assert_grad_matches, assert_tree_grad_matches, numeric_grad
from sgcompiler import SGCompilerError, grad
import specimens_calls as S


@pytest.mark.parametrize("f, make", S.ROWS, ids=[r[0].__name__ for r in S.ROWS])
def test_calls_match_finite_differences(f, make):
    args = make(np.random.default_rng(4))
    assert_grad_matches(f, args, wrt=[i for i, a in enumerate(args)])


@pytest.mark.parametrize("f, make", S.TREE_ROWS, ids=[r[0].__name__ for r in S.TREE_ROWS])
def test_tree_gradients(f, make):
    assert_tree_grad_matches(f, make(np.random.default_rng(5)), 0)


def test_tree_gradient_keeps_structure_and_types():
    r = np.random.default_rng(0)
    layers = [(r.normal(size=(3, 3)), r.normal(size=3)) for _ in range(2)]
    g = grad(S.list_of_layers)(layers, r.normal(size=3))
    assert isinstance(g, list) and all(isinstance(t, tuple) for t in g)
    # a NamedTuple read by field name (it was refused: no rule for the attribute .W)
    p = S.Params(W=r.normal(size=(2, 3)), b=r.normal(size=2))
    x = r.normal(size=3)
    g = grad(S.named_tuple)(p, x)
    assert type(g) is S.Params
    for name in ("W", "b"):
        def f_leaf(value, name=name):
            return S.named_tuple(p._replace(**{name: value}), x)
        np.testing.assert_allclose(getattr(g, name), numeric_grad(f_leaf, [getattr(p, name)], 0),
                                   rtol=1e-6, atol=1e-8)


def test_unused_tree_leaf_gets_zeros():
    def f(p, x):
        return np.sum(p["a"] * x)
    r = np.random.default_rng(0)
    g = grad(f)({"a": r.normal(size=3), "unused": r.normal(size=(2, 2))}, r.normal(size=3))
    assert g["unused"].shape == (2, 2) and not np.any(g["unused"])


def test_helper_pieces_are_shown_and_cached():
    from sgcompiler import pipeline
    g = grad(S.helper_in_loop)
    source = g.source
    assert "def layer_for_W_h_forward(W, h, b)" in source and "def layer_for_W_h_backward" in source
    n = len(pipeline._PIECES)
    r = np.random.default_rng(0)
    g(r.normal(size=(3, 3)), r.normal(size=3), r.normal(size=3))
    grad(S.helper_in_loop, wrt=(0, 2))(r.normal(size=(3, 3)), r.normal(size=3),
                                      r.normal(size=3))
    assert len(pipeline._PIECES) >= n
    before = len(pipeline._PIECES)
    g(r.normal(size=(3, 3)), r.normal(size=3), r.normal(size=3))
    assert len(pipeline._PIECES) == before


def test_tree_gradient_leaves_do_not_alias_arguments_or_each_other():
    def f(p, x):
        return np.sum(p["a"] * x) + np.sum(p["b"] * x) + np.sum(p["c"])
    r = np.random.default_rng(0)
    x = r.normal(size=3)
    p = {"a": r.normal(size=3), "b": r.normal(size=3), "c": r.normal(size=3)}
    g = grad(f)(p, x)
    assert np.allclose(g["a"], x) and np.allclose(g["b"], x)
    assert not np.shares_memory(g["a"], x) and not np.shares_memory(g["a"], g["b"])
    g["a"][:] = 0.0
    assert np.all(g["b"] != 0) and np.all(x != 0)


_GLOBAL = np.arange(4.0)


def test_tree_gradient_that_owns_memory_an_argument_views_is_copied():
    # d/da is the global array itself; the argument y is a view of it
    def f(p, y):
        return np.sum(p["a"] * _GLOBAL) + np.sum(p["b"] * y)
    p = {"a": np.ones(4), "b": np.ones(3)}
    y = _GLOBAL[1:]
    g = grad(f)(p, y)
    assert np.allclose(g["a"], _GLOBAL) and np.allclose(g["b"], y)
    assert not np.shares_memory(g["a"], y) and not np.shares_memory(g["b"], y)
    assert not np.shares_memory(g["a"], _GLOBAL)


def test_closure_over_outer_variables():
    f = S.make_scaled_loss(2.5)
    x = np.array([0.1, 0.7])
    np.testing.assert_allclose(grad(f)(x), 2.5 * np.cos(x))
    g = S.make_scaled_loss(-1.0)
    np.testing.assert_allclose(grad(g)(x), -np.cos(x))


def test_calling_a_module_level_lambda():
    # it was refused with a message naming neither file nor line; now it is a piece
    x = np.array([0.3, -0.8])
    np.testing.assert_allclose(grad(S.calls_a_lambda)(x), 2 * x)


def test_object_attributes_are_read_as_constants():
    model = S.Model(np.array([0.5, -1.0]))
    x = np.array([0.3, 0.2])
    np.testing.assert_allclose(grad(S.reads_object_attributes)(x, model), model.w + 3.0)
    with pytest.raises(TypeError, match="of type Model"):
        grad(S.reads_object_attributes, wrt="model")(x, model)


def test_method_as_the_differentiated_function():
    model = S.Model(np.array([0.5, -1.0]))
    x = np.array([0.3, 0.2])
    g = grad(S.Model.loss, wrt="x")(model, x)
    np.testing.assert_allclose(g, 3.0 * model.w * (1 - np.tanh(model.w * x) ** 2))


def _tree_loss(params, x):
    return np.sum(params["w"] * x) + np.sum(params["b"] ** 2) + params["s"] * np.sum(x)


def test_tree_checks_once_per_kind_and_results_stay_unaliased(monkeypatch):
    """A parameter tree of dicts of NumPy arrays and floats is checked on the first call
    of its kind (structure, shapes, dtypes) only: the kind decides the check. Other kinds
    are checked again (an int array is refused), and results never share memory with the
    arguments (a leaf passed as another argument too) or with each other."""
    import sgcompiler.api as api
    calls = []
    real = api._check_tree
    monkeypatch.setattr(api, "_check_tree", lambda *a, **k: (calls.append(a), real(*a, **k)))
    g = grad(_tree_loss)
    x = np.arange(3.0)
    params = {"w": np.ones(3), "b": np.full(3, 2.0), "s": 0.5}
    first = g(params, x)
    assert len(calls) == 1
    second = g({"w": np.ones(3), "b": np.full(3, 3.0), "s": 1.5}, x)
    assert len(calls) == 1          # the same kind: not checked again
    np.testing.assert_allclose(first["w"], x)
    np.testing.assert_allclose(second["b"], np.full(3, 6.0))
    assert second["s"] == pytest.approx(3.0)
    with pytest.raises(TypeError, match="dtype int"):
        g({"w": np.ones(3, dtype=int), "b": np.full(3, 2.0), "s": 0.5}, x)
    # the gradient of w is x: a new array, not the argument (nor another result)
    shared = g({"w": x, "b": x, "s": 0.5}, x)
    assert not np.may_share_memory(shared["w"], x)
    assert not np.may_share_memory(shared["w"], shared["b"])
    again = g({"w": x, "b": x, "s": 0.5}, x)
    assert not np.may_share_memory(again["w"], x)
    np.testing.assert_allclose(again["w"], x)
    np.testing.assert_allclose(again["b"], 2 * x)
    # a subclass of dict is not decided by its kind: checked on every call
    class Params(dict):
        pass
    count = len(calls)
    g(Params(params), x)
    g(Params(params), x)
    assert len(calls) == count + 2
