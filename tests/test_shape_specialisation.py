"""Gradients specialised for their arguments' shapes (analysis/sizes.py and what uses it).

A gradient is compiled for the shapes and dtypes of the arrays of the call, so shape work
that a hand-writer would not do is done at compile time: `unbroadcast` becomes the sum it
is (or nothing), `reduced_size` a number, and the matrix-product helpers `g @ y.T`,
`x.T @ g` or `np.outer`. Each form is checked against finite differences on several
shapes, with the same gradient function called with each shape in turn.
"""
import math

import numpy as np
import pytest

from sgcompiler import api, grad, value_and_grad
from sgcompiler.analysis.shapes import shapes
from sgcompiler.frontend import front_end

from gradcheck import numeric_grad


def _check_each(f, shapes_list, wrt=(0, 1), seed=0):
    """One gradient function of f, called with each list of argument shapes in turn."""
    g = grad(f, wrt=wrt)
    rng = np.random.default_rng(seed)
    for arg_shapes in shapes_list:
        args = [rng.normal(size=s) if s != "float" else 0.7 for s in arg_shapes]
        got = g(*args)
        for i, value in zip(wrt, got):
            np.testing.assert_allclose(value, numeric_grad(f, args, i), rtol=1e-6, atol=1e-8,
                                       err_msg=f"{f.__name__} {arg_shapes} wrt {i}")
            assert np.shape(value) == np.shape(args[i])
    return g


def add_bias(x, b):
    return np.sum(np.tanh(x + b) * x)


def test_broadcast_operands_of_every_shape():
    g = _check_each(add_bias, [((4, 3), (3,)), ((4, 3), (1, 3)), ((4, 3), (4, 1)),
                               ((4, 3), (4, 3)), ((4, 3), ()), ((2, 4, 3), (3,)),
                               ((3,), (4, 3)), ((4, 3), "float")])
    assert len(g._compiled) == 8


def test_a_known_broadcast_is_the_sum_it_is():
    g = grad(add_bias, wrt=1)
    g(np.ones((4, 3)), np.ones(3))
    assert "np.sum(d_add, axis=0)" in g.source and "unbroadcast" not in g.source
    g(np.ones((4, 3)), np.ones((4, 1)))
    assert "np.sum(d_add, axis=1, keepdims=True)" in g.source
    g(np.ones((4, 3)), np.ones((1, 1, 3)))
    # the operand has more axes than the result: only the run time knows what to do
    assert "unbroadcast" in g.source


def test_equal_shapes_need_no_unbroadcast():
    g = grad(add_bias, wrt=(0, 1))
    g(np.ones((4, 3)), np.ones((4, 3)))
    assert "unbroadcast" not in g.source and "np.sum(d_add" not in g.source


def test_code_before_any_call_is_for_any_shape():
    g = grad(add_bias, wrt=1)
    assert "unbroadcast(d_add, b)" in g.source


def mean_loss(w, X):
    return np.mean(np.log1p(np.exp(X @ w))) + np.mean(w * w, axis=0)


def test_reduced_size_is_a_number():
    g = _check_each(mean_loss, [((3,), (5, 3)), ((2,), (7, 2))])
    assert "reduced_size" not in g.source and "/ 7" in g.source


def left_right(x, y):
    return np.sum(np.sin(x @ y))


MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                 ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((5, 2, 3), (3,))]


@pytest.mark.parametrize("xs, ys", MATMUL_SHAPES, ids=[f"{a}@{b}" for a, b in MATMUL_SHAPES])
def test_matrix_products_of_each_shape(xs, ys):
    g = _check_each(left_right, [(xs, ys)])
    if len(xs) <= 2 and len(ys) <= 2:
        assert "matmul_grad" not in g.source
    else:
        assert "matmul_grad_left" in g.source


def test_matrix_product_code_reads_like_backprop():
    g = grad(left_right, wrt=(0, 1))
    g(np.ones((2, 3)), np.ones((3, 4)))
    assert "d_matmul @ y.T" in g.source and "x.T @ d_matmul" in g.source
    g(np.ones((2, 3)), np.ones(3))
    assert "np.outer(d_matmul, y)" in g.source


def dot_loss(x, y):
    return np.dot(x, y) * 2.0


def test_a_dot_product_of_vectors():
    _check_each(dot_loss, [((3,), (3,)), ((4,), (4,))])


def grows(x, b):
    y = x
    for _ in range(2):
        y = y[None] + b
    return np.sum(y * y)


def flips(x, b):
    y = x
    for _ in range(3):
        y = y.T * b
    return np.sum(y)


def test_a_loop_that_changes_a_shape():
    # y's shape differs on each trip: unknown to the compiler, handled at run time
    _check_each(grows, [((3,), (3,)), ((2, 3), (1, 3))])
    _check_each(flips, [((3, 3), (3,)), ((2, 2), (2, 1))])


def test_float32_keeps_its_dtype():
    g = grad(add_bias, wrt=(0, 1))
    x, b = np.ones((4, 3), dtype=np.float32), np.ones(3, dtype=np.float32)
    dx, db = g(x, b)
    assert dx.dtype == np.float32 and db.dtype == np.float32


def test_many_shapes_stop_specialising(monkeypatch):
    monkeypatch.setattr(api, "MAX_SHAPES", 3)
    g = value_and_grad(add_bias, wrt=1)
    rng = np.random.default_rng(1)
    for n in range(1, 7):
        x, b = rng.normal(size=(n, 2)), rng.normal(size=2)
        value, db = g(x, b)
        assert value == pytest.approx(add_bias(x, b))
        np.testing.assert_allclose(db, numeric_grad(add_bias, [x, b], 1), rtol=1e-6,
                                   atol=1e-8)
    assert g._shaped == 3 and len(g._compiled) == 6
    assert "unbroadcast" in g.source        # the code for any shape


# --- the concrete shapes themselves --------------------------------------------------------


def _concrete(fn, arrays, scalars=frozenset()):
    front = front_end(fn)
    norm, resolution = front.norm, front.resolution
    facts = shapes(norm, resolution, scalars, frozenset(),
                   {p: (s, np.dtype(float)) for p, s in arrays.items()})
    return {n: facts.shape(n) for n in facts.concrete}, facts


def reductions(x, y):
    a = np.sum(x, axis=1, keepdims=True)
    b = np.max(x, axis=(0, 1))
    c = x[:, None, 1:] * 2.0
    d = x.T @ y[0]
    e = np.mean(x, axis=-1)
    return np.sum(a) + b + np.sum(c) + np.sum(d) + np.sum(e)


def test_shapes_of_reductions_indexing_and_products():
    found, facts = _concrete(reductions, {"x": (4, 3), "y": (2, 4)})
    assert found["a"] == (4, 1) and found["b"] == () and found["e"] == (4,)
    assert found["c"] == (4, 1, 2)
    assert found["d"] == (3,)
    assert facts.dtype("a") == np.float64


def indexed_in_loop(xs, h):
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] + h)
    return np.sum(h)


def test_a_loop_carried_value_of_one_shape():
    found, _ = _concrete(indexed_in_loop, {"xs": (5, 3), "h": (3,)})
    assert found["h"] == (3,)
    found, _ = _concrete(indexed_in_loop, {"xs": (5, 3), "h": (1,)})
    assert "h" not in found     # (1,) on the first trip, (3,) after: unknown


def unknown_calls(x):
    y = np.kron(x, x)
    z = np.tile(x, 2)
    w = np.concatenate([x, x])      # followed (on stand-ins), but not from a changed list:
    parts = [x, x]
    parts.append(x)
    v = np.concatenate(parts)
    return np.sum(y) + np.sum(z) + np.sum(w) + np.sum(v)


def test_what_is_not_followed_is_unknown():
    found, _ = _concrete(unknown_calls, {"x": (3,)})
    assert "y" not in found and "z" not in found and "v" not in found
    assert found["w"] == (6,)


def test_the_cache_key_has_the_shapes():
    g = grad(add_bias, wrt=1)
    g(np.ones((4, 3)), np.ones(3))
    assert ((4, 3), np.dtype(float)) in next(iter(g._compiled))


# --- parameter trees: the arrays in a dict, list or tuple argument -------------------------


def tree_net(params, x):
    h = np.tanh(x @ params["layer"]["W"] + params["layer"]["b"])
    out = h @ params["head"][0] + params["head"][1]
    return np.sum(out * out)


def _tree(rng, hidden, bias_shape):
    return {"layer": {"W": rng.normal(size=(3, hidden)), "b": rng.normal(size=bias_shape)},
            "head": [rng.normal(size=(hidden, 2)), rng.normal(size=2)]}


def test_arrays_of_a_parameter_tree_have_known_shapes():
    from gradcheck import assert_tree_grad_matches
    rng = np.random.default_rng(3)
    x = rng.normal(size=(5, 3))
    g = grad(tree_net)
    for hidden, bias in [(4, (4,)), (4, (1, 4)), (2, (2,))]:
        params = _tree(rng, hidden, bias)
        assert_tree_grad_matches(tree_net, [params, x], 0)
        g(params, x)
        if bias == (4,):
            assert "np.sum(d_add, axis=0)" in g.source and "matmul_grad" not in g.source
    assert len(g._compiled) == 3        # one per structure and set of shapes


def rebound_tree(params, x):
    params = [params["W"] * 2.0, params["b"][:1]]
    return np.sum(np.tanh(x @ params[0] + params[1]))


def test_a_tree_the_function_rebinds_is_followed_no_further():
    from gradcheck import assert_tree_grad_matches
    rng = np.random.default_rng(4)
    params = {"W": rng.normal(size=(3, 2)), "b": rng.normal(size=2)}
    x = rng.normal(size=(4, 3))
    assert_tree_grad_matches(rebound_tree, [params, x], 0)
    found, _ = _concrete(rebound_tree, {"x": (4, 3), ("params", "W"): (3, 2),
                                        ("params", "b"): (2,)})
    # the list's items are not arrays of the argument
    assert not any(name.startswith("_params_1") for name in found), found


def test_the_shapes_of_tree_arrays():
    found, _ = _concrete(tree_net, {"x": (5, 3), ("params", "layer", "W"): (3, 4),
                                    ("params", "layer", "b"): (4,),
                                    ("params", "head", 0): (4, 2),
                                    ("params", "head", 1): (2,)})
    assert found["h"] == (5, 4) and found["out"] == (5, 2)


# --- user functions: pieces for the shapes of their arguments ------------------------------


def layer(W, b, x):
    return np.tanh(x @ W + b)


def two_layers(W1, b1, W2, b2, x):
    h = layer(W1, b1, x)
    return np.sum(layer(W2, b2, h) ** 2)


def test_a_user_function_gets_code_for_its_arguments_shapes():
    from gradcheck import assert_grad_matches
    rng = np.random.default_rng(5)
    args = [rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=(4, 2)),
            rng.normal(size=2), rng.normal(size=(5, 3))]
    assert_grad_matches(two_layers, args, wrt=(0, 1, 2, 3))
    g = grad(two_layers, wrt=(0, 1, 2, 3))
    g(*args)
    # each piece is named for its shapes (the same name in every process) and says them;
    # the first layer's result shape is known to the caller, so the second's is specialised
    assert "for W, b with W (3, 4), b (4,), x (5, 3)" in g.source
    assert "for W, b, x with W (4, 2), b (2,), x (5, 4)" in g.source
    assert "matmul_grad" not in g.source and "np.sum(" in g.source
    again = grad(two_layers, wrt=(0, 1, 2, 3))
    again(*args)
    assert again.source == g.source


def shrinking(u, n):
    if n <= 0:
        return np.sum(u * u)
    return shrinking(u[1:] * 1.5, n - 1)


def test_a_recursion_whose_shapes_change_on_every_call():
    from gradcheck import assert_grad_matches
    rng = np.random.default_rng(6)
    assert_grad_matches(shrinking, [rng.normal(size=12), 10.0], wrt=(0,))
    g = grad(shrinking)
    assert g(np.ones(5000), 3.0).shape == (5000,)       # compiles in bounded depth


# --- a parameter tree passed on to a user function -----------------------------------------


def tree_layer(params, x):
    h = np.tanh(x @ params["W"] + params["b"])
    return h @ params["w_out"] + params["b_out"]


def tree_loss(params, x, y):
    z = tree_layer(params, x)
    return np.mean(np.maximum(z, 0.0) + np.log1p(np.exp(-np.abs(z))) - y * z)


def _layer_tree(rng, d, hidden, b_out):
    return {"W": rng.normal(size=(d, hidden)), "b": rng.normal(size=hidden),
            "w_out": rng.normal(size=hidden), "b_out": b_out}


@pytest.mark.parametrize("n, d, hidden, b_out", [(6, 2, 3, 0.1), (4, 3, 5, -1.0),
                                                 (5, 2, 4, np.array(0.3))])
def test_a_tree_passed_to_a_function_keeps_its_shapes(n, d, hidden, b_out):
    from gradcheck import assert_tree_grad_matches
    rng = np.random.default_rng(n)
    params, x = _layer_tree(rng, d, hidden, b_out), rng.normal(size=(n, d))
    y = (rng.random(n) > 0.5).astype(float)
    assert_tree_grad_matches(tree_loss, [params, x, y], 0)
    g = grad(tree_loss)
    g(params, x, y)
    # the callee's code is for these shapes (the tree's arrays and its Python number too),
    # and it knows that the layer's result is an array (no add_trees for its adjoint)
    assert f"params['W'] ({d}, {hidden})" in g.source
    if isinstance(b_out, float):        # (a 0-d array leaf is not followed)
        assert "params['b_out'] ()" in g.source
        assert "add_trees" not in g.source


def helper_mean_loss(params, x, y):
    z = tree_layer(params, x)
    return np.mean(np.maximum(z, 0.0) + np.log1p(np.exp(-np.abs(z))) - y * z)


def two_helper_losses(params, x, y):
    return 0.5 * helper_mean_loss(params, x, y) + 0.5 * helper_mean_loss(params, x * 2.0, y)


def test_a_helpers_backward_is_specialised_and_saves_only_what_it_reads():
    from gradcheck import assert_tree_grad_matches
    rng = np.random.default_rng(3)
    params, x = _layer_tree(rng, 2, 3, 0.25), rng.normal(size=(7, 2))
    y = (rng.random(7) > 0.5).astype(float)
    assert_tree_grad_matches(two_helper_losses, [params, x, y], 0)
    g = grad(two_helper_losses)
    g(params, x, y)
    backward = g.source.split("def helper_mean_loss_")[2]     # the first backward
    assert "np.full((7,), dresult / 7" in backward     # the mean's adjoint, made once
    saved = backward.split("= _saved")[0].splitlines()[-1]
    assert "_mul" not in saved and "_add" not in saved   # read only for their shapes


def _three(a, b, c):
    return a * b + c


def _calls_three_ways(x, w):
    args = (x, np.sin(x), w)
    return (np.sum(_three(args[0], args[1], args[2])) + np.sum(_three(x, x, w))
            + np.sum(_three(x, args[1], args[2])))


def test_piece_made_before_the_shape_limit_is_used_by_both_sweeps():
    # a call site's primal and adjoint sweeps ask for its piece separately; when the
    # helper reached its limit of shape-specialised pieces in between, the adjoint got
    # the piece for any shape, with another saved tuple (a ValueError, before)
    from gradcheck import assert_grad_matches
    rng = np.random.default_rng(3)
    assert_grad_matches(_calls_three_ways, [rng.uniform(size=3), rng.uniform(size=3)])
    assert_grad_matches(_calls_three_ways, [rng.uniform(size=(2, 3)), rng.uniform(size=3)])


def scalar_loops(w, x, n, m):
    s = x
    for i in range(n):
        for j in range(m):
            s = math.sin(w * s) + x * j - 0.1 * i
    return s * s


@pytest.mark.parametrize("args", [(0.7, 0.3, 3, 4), (1.2, -0.5, 0, 2), (0.4, 0.9, 5, 1),
                                  (0.7, 2.0, 2, 3)])
def test_python_numbers_alone_have_known_shapes(args):
    # a function of Python numbers only was compiled for any shape: the range indexes
    # made `unbroadcast(ds, _mul2)` run on every trip (and numba could not compile it)
    g = grad(scalar_loops, wrt=(0, 1))
    got = g(*args)
    for i in (0, 1):
        assert got[i] == pytest.approx(numeric_grad(scalar_loops, args, i), rel=1e-6, abs=1e-9)
    assert "unbroadcast" not in g.source and "np.sum" not in g.source
