"""NamedTuples, namedtuples, dataclasses (frozen or not) and registered containers as
parameter trees: the gradient has the argument's type (issue 15), checked leaf by leaf
against finite differences."""
import numpy as np
import pytest

from sgcompiler import SGCompilerError, grad, jvp
from gradcheck import numeric_grad
import specimens_records as S

X = np.array([0.3, -0.2])
W = np.array([1.0, -2.0])
B = np.array([0.5, 0.1])


def _check(f, tree, leaves, *rest):
    """grad(f)(tree, *rest) against finite differences, leaf by leaf: `leaves` maps a
    field path to (get, set) on the tree."""
    g = grad(f)(tree, *rest)
    assert type(g) is type(tree)
    for get, put in leaves:
        def f_leaf(value, get=get, put=put):
            return f(put(tree, value), *rest)
        np.testing.assert_allclose(get(g), numeric_grad(f_leaf, [get(tree)], 0),
                                   rtol=1e-6, atol=1e-8)
    return g


def _fields(make):
    return [(lambda t: t.w, lambda t, v: make(v, t.b)), (lambda t: t.b, lambda t, v: make(t.w, v))]


@pytest.mark.parametrize("make", [S.Layer, S.Pair, S.Dense, S.Frozen,
                                  lambda w, b: S.Custom(w, b)],
                         ids=["NamedTuple", "namedtuple", "dataclass", "frozen", "registered"])
def test_read_by_field(make):
    g = _check(S.by_field, make(W, B), _fields(make), X)
    if isinstance(g, S.Custom):
        assert g.note == "made by hand"


@pytest.mark.parametrize("make", [S.Layer, S.Pair], ids=["NamedTuple", "namedtuple"])
def test_named_tuples_read_by_position(make):
    _check(S.by_position, make(W, B), _fields(make), X)


def test_nested_in_dicts_and_lists_through_helpers_and_loops():
    params = {"first": S.Dense(W, B), "rest": [S.Layer(0.5 * W, B), S.Frozen(W, 2.0 * B)]}
    g = grad(S.network)(params, X)
    assert type(g["first"]) is S.Dense and type(g["rest"][0]) is S.Layer
    assert type(g["rest"][1]) is S.Frozen
    for path in (("first",), ("rest", 0), ("rest", 1)):
        for name in ("w", "b"):
            def f_leaf(value, path=path, name=name):
                new = {"first": params["first"], "rest": list(params["rest"])}
                holder = new
                for key in path[:-1]:
                    holder = holder[key]
                old = holder[path[-1]]
                holder[path[-1]] = type(old)(**{**{"w": old.w, "b": old.b}, name: value})
                return S.network(new, X)
            node = params
            gnode = g
            for key in path:
                node, gnode = node[key], gnode[key]
            np.testing.assert_allclose(getattr(gnode, name),
                                       numeric_grad(f_leaf, [getattr(node, name)], 0),
                                       rtol=1e-6, atol=1e-8)


def test_stop_gradient_on_a_field():
    g = grad(S.with_stop)(S.Dense(W, B), X)
    np.testing.assert_allclose(g.w, numeric_grad(S.with_stop_reference, [W, B, B, X], 0))
    np.testing.assert_allclose(g.b, numeric_grad(S.with_stop_reference, [W, B, B, X], 1))


def test_read_both_ways_is_refused():
    with pytest.raises(SGCompilerError, match="both by position"):
        grad(S.mixed)(S.Layer(W, B), X)


def test_forward_mode_through_records_and_helpers():
    from sgcompiler import jvp
    params = {"first": S.Dense(W, B), "rest": [S.Layer(0.5 * W, B)]}
    tangent = {"first": S.Dense(np.ones(2), np.zeros(2)), "rest": [S.Layer(np.zeros(2), np.ones(2))]}
    _, out_dot = jvp(S.network, (params, X), (tangent, None))
    g = grad(S.network)(params, X)
    expected = np.sum(g["first"].w) + np.sum(g["rest"][0].b)
    np.testing.assert_allclose(out_dot, expected, rtol=1e-10)


@pytest.mark.parametrize("make", [S.Layer, S.Pair, S.Dense, S.Frozen,
                                  lambda w, b: S.Custom(w, b)],
                         ids=["NamedTuple", "namedtuple", "dataclass", "frozen", "registered"])
@pytest.mark.parametrize("f", [S.gradient_norm, S.gradient_of_one_field],
                         ids=["both fields", "one field"])
def test_gradient_of_a_record_read_inside_differentiated_code(make, f):
    # grad(loss)(p, x).w inside f: the inner gradient's code returns the record's adjoint
    # as a dict of its fields, which f's code reads by field (an AttributeError before),
    # and its tangent code is the one made for a tree (dicts added with +, before)
    p = make(W, B)
    g = _check(f, p, _fields(make), X)
    v = make(np.array([0.2, 0.7]), np.array([-0.4, 0.3]))
    _, tangent = jvp(f, (p, X), (v, np.zeros(2)))
    np.testing.assert_allclose(tangent, np.sum(g.w * v.w) + np.sum(g.b * v.b), rtol=1e-10)
    step = 1e-6
    moved = [f(make(W + s * step * v.w, B + s * step * v.b), X) for s in (1, -1)]
    np.testing.assert_allclose(tangent, (moved[0] - moved[1]) / (2 * step), rtol=1e-6)
