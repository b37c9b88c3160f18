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


# --- vjp, jacobian and hessian of records --------------------------------------------------

KINDS = [S.Layer, S.Pair, S.Dense, S.Frozen, lambda w, b: S.Custom(w, b)]
KIND_IDS = ["NamedTuple", "namedtuple", "dataclass", "frozen", "registered"]
XS = np.array([[0.3, -0.2], [1.1, 0.4], [-0.7, 0.9]])       # (3, 2): layer broadcasts p


def _numeric_jacobian(f, value, eps=1e-6):
    """d f(value) / d value by central differences: f's output shape + value's shape."""
    value = np.asarray(value, dtype=float)
    columns = []
    for k in range(value.size):
        step = np.zeros(value.size)
        step[k] = eps
        step = step.reshape(value.shape)
        columns.append((np.asarray(f(value + step)) - np.asarray(f(value - step))) / (2 * eps))
    out = np.shape(columns[0])
    return np.moveaxis(np.array(columns), 0, -1).reshape(out + value.shape)


@pytest.mark.parametrize("make", KINDS, ids=KIND_IDS)
def test_vjp_of_a_record_has_its_type(make):
    from sgcompiler import vjp
    tree = make(W, B)
    cotangent = np.array([[1.0, -2.0], [0.5, 0.3], [2.0, 1.0]])
    out, f_vjp = vjp(S.layer, tree, XS)
    np.testing.assert_allclose(out, S.layer(tree, XS))
    d_tree, d_x = f_vjp(cotangent)
    assert type(d_tree) is type(tree)
    if isinstance(d_tree, S.Custom):
        assert d_tree.note == "made by hand"
    for get, put in _fields(make):
        def pulled(value, get=get, put=put):
            return np.sum(S.layer(put(tree, value), XS) * cotangent)
        np.testing.assert_allclose(get(d_tree), numeric_grad(pulled, [get(tree)], 0),
                                   rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(d_x, numeric_grad(
        lambda x: np.sum(S.layer(tree, x) * cotangent), [XS], 0), rtol=1e-6, atol=1e-8)


def test_vjp_refuses_a_record_of_ints():
    from sgcompiler import vjp
    with pytest.raises(TypeError, match=r"'p.w' of type ndarray"):
        vjp(S.layer, S.Dense(np.array([1, 2]), B), XS)


@pytest.mark.parametrize("mode", ["fwd", "rev"])
@pytest.mark.parametrize("make", KINDS, ids=KIND_IDS)
def test_jacobian_of_a_record_is_a_record_of_blocks(make, mode):
    from sgcompiler import jacobian
    tree = make(W, B)
    J = jacobian(S.layer, mode=mode)(tree, XS)
    assert type(J) is type(tree)
    for get, put in _fields(make):
        block = get(J)
        assert block.shape == XS.shape + get(tree).shape
        np.testing.assert_allclose(block, _numeric_jacobian(
            lambda v, put=put: S.layer(put(tree, v), XS), get(tree)), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("make", KINDS, ids=KIND_IDS)
def test_hessian_of_a_record_is_a_record_of_records(make):
    from sgcompiler import hessian
    tree = make(W, B)
    H = hessian(S.by_field)(tree, X)
    assert type(H) is type(tree)
    g = grad(S.by_field)
    for get_i, put_i in _fields(make):
        row = get_i(H)
        assert type(row) is type(tree)
        for get_j, _ in _fields(make):
            # d (d f / d field_j) / d field_i, by differences of the gradient
            want = _numeric_jacobian(lambda v, put=put_i, get=get_j: get(g(put(tree, v), X)),
                                     get_i(tree))
            np.testing.assert_allclose(get_j(row), np.moveaxis(want, -1, 0),
                                       rtol=1e-5, atol=1e-7)
