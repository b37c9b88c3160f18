"""Batched Hessians of parameter trees (dicts, lists, tuples of arrays and floats): one run
of the tangent code of the gradient, each leaf's tangent holding every unit direction of
the whole tree along a leading axis (derivatives._batched_tree_hessian,
tree_blocks.unit_batch). Each must run batched (no PerColumnWarning), agree with one jvp
per column to 1e-9 and with central differences of the gradient, on two shapes each."""
import warnings

import numpy as np
import pytest

from sgcompiler import PerColumnWarning, derivatives, grad, hessian, stop_gradient
from sgcompiler.tree_blocks import leaves, like_tree

R = np.random.default_rng(1415)


def layer(W, b, x):
    return np.tanh(x @ W + b)


def mlp(p, x, y):
    h = layer(p["W"], p["b"], x)        # (a helper given the tree's leaves)
    return np.sum((h @ p["V"] - y) ** 2) + 0.1 * np.sum(p["W"] ** 2)


def listed(ws, x):
    total = 0.0
    for w in ws:            # a loop over the list's leaves
        x = np.sin(x * w) + w
        total = total + np.sum(x ** 2)
    return total + np.sum(ws[0] * ws[-1])


def nested(p, x):
    a, b = p["pair"]        # a tuple in a dict
    return np.sum(np.exp(a * x) * b) + p["scale"] ** 2 * np.sum(p["rows"][1] ** 3) + \
        np.sum(p["rows"][0] * a * stop_gradient(x))


def broadcast_leaves(p, x):
    z = p["W"] * p["b"] + x             # (m, n) * (n,): the leaves broadcast
    return np.sum(np.log1p(z ** 2)) + np.max(p["b"]) * np.sum(p["W"])


def tuple_of_float_and_array(t, x):
    s, v = t
    return s ** 3 * np.sum(np.cos(v * x)) + np.prod(v + 2.0)


def uses_w(q, h):
    return np.tanh(q["W"] @ h)


# (the tree fuzzer's seeds 35, 36, 38 as hessians: a helper given a subtree reads some of
# its keys only, and its gradient's tangent is a dict without the others; hessian raised
# KeyError on the parent, one jvp per column too: tree_blocks.like_tree)
def partly_used(p, x):
    return np.sum(uses_w(p["l1"], x) ** 2) + np.sum(p["c"] ** 3)


def _mlp(m, n, k):
    return lambda: ({"W": R.normal(size=(m, n)), "b": R.normal(size=n),
                     "V": R.normal(size=(n, k))}, R.normal(size=(4, m)), R.normal(size=(4, k)))


CASES = [
    (mlp, _mlp(3, 2, 1)), (mlp, _mlp(2, 4, 3)),
    (listed, lambda: ([R.normal(size=3), R.normal(size=3)], R.normal(size=3))),
    (listed, lambda: ([R.normal(size=(2, 2)) for _ in range(3)], R.normal(size=(2, 2)))),
    (nested, lambda: ({"pair": (R.normal(size=3), R.normal(size=3)), "scale": 0.7,
                       "rows": [R.normal(size=3), R.normal(size=2)]}, R.normal(size=3))),
    (nested, lambda: ({"pair": (R.normal(size=(2, 2)), R.normal(size=(2, 2))), "scale": -1.3,
                       "rows": [R.normal(size=(2, 2)), R.normal(size=4)]}, R.normal(size=2))),
    (broadcast_leaves, lambda: ({"W": R.normal(size=(3, 2)), "b": R.normal(size=2)},
                                R.normal(size=(3, 1)))),
    (broadcast_leaves, lambda: ({"W": R.normal(size=(2, 2, 3)), "b": R.normal(size=3)}, 0.5)),
    (tuple_of_float_and_array, lambda: ((0.8, R.normal(size=3)), R.normal(size=3))),
    (tuple_of_float_and_array, lambda: ((-1.1, R.normal(size=(2, 3))), R.normal(size=3))),
    (partly_used, lambda: ({"l1": {"W": R.normal(size=(3, 3)), "b": R.normal(size=3)},
                            "c": R.normal(size=2)}, R.normal(size=3))),
    (partly_used, lambda: ({"c": R.normal(size=(2, 2)), "l1": {"s": 0.5, "W": R.normal(
        size=(2, 4))}}, R.normal(size=(4, 3)))),
]


def as_matrix(H, x):
    """A tree of trees of blocks as one (n, n) matrix over the tree's elements."""
    rows = []
    for first, a in leaves(x):
        block = _at(H, first)
        rows.append(np.concatenate([np.reshape(_at(block, second), (np.size(a), np.size(b)))
                                    for second, b in leaves(x)], axis=1))
    return np.concatenate(rows)


def _at(tree, path):
    for key in path:
        tree = tree[key]
    return tree


def fd_tree_hessian(f, x, others, eps=1e-5):
    """Central differences of sgcompiler's gradient (a tree) along each element."""
    g = grad(f)
    flat = [(path, leaf) for path, leaf in leaves(x)]
    columns = []
    for i, (path, leaf) in enumerate(flat):
        for k in range(int(np.size(leaf))):
            steps = []
            for sign in (1.0, -1.0):
                moved = _moved(x, path, k, sign * eps)
                steps.append(np.concatenate([np.ravel(v) for _, v in
                                             leaves(like_tree(g(moved, *others), x))]))
            columns.append((steps[0] - steps[1]) / (2 * eps))
    return np.stack(columns, axis=1)


def _moved(tree, path, k, step):
    if not path:
        if isinstance(tree, float):
            return tree + step
        moved = np.array(tree, dtype=float)
        moved.reshape(-1)[k] += step
        return moved
    if isinstance(tree, dict):
        return {key: _moved(v, path[1:], k, step) if key == path[0] else v
                for key, v in tree.items()}
    items = [_moved(v, path[1:], k, step) if i == path[0] else v for i, v in enumerate(tree)]
    return tuple(items) if isinstance(tree, tuple) else items


def _one_per_column(tree):
    raise AssertionError("the Hessian of a tree ran one jvp per column")


@pytest.mark.parametrize("f, make", CASES, ids=[f"{f.__name__}{i}" for i, (f, _) in
                                                 enumerate(CASES)])
def test_batched_hessian_of_a_parameter_tree(monkeypatch, f, make):
    x, *others = make()
    with warnings.catch_warnings(), monkeypatch.context() as m:
        warnings.simplefilter("error", PerColumnWarning)
        m.setattr(derivatives, "unit_trees", _one_per_column)
        H = hessian(f)(x, *others)
    batched = as_matrix(H, x)
    with monkeypatch.context() as m:
        m.setattr(derivatives, "_batched_tree_hessian", lambda *a: None, raising=False)
        columns = as_matrix(hessian(f)(x, *others), x)
    scale = max(1.0, float(np.max(np.abs(columns))))
    np.testing.assert_allclose(batched, columns, rtol=1e-9, atol=1e-9 * scale)
    np.testing.assert_allclose(batched, fd_tree_hessian(f, x, others), rtol=1e-4,
                               atol=1e-5 * scale)
    for first, a in leaves(x):          # the blocks: leaf_i.shape + leaf_j.shape
        for second, b in leaves(x):
            assert np.shape(_at(_at(H, first), second)) == np.shape(a) + np.shape(b)


def tree_through_sort(p, x):
    return np.sum((np.sort(p["c"] * p["c"]) * np.arange(3.0)) ** 2) + np.sum(np.sin(p["w"]) * x)


def test_a_tree_whose_code_cannot_be_batched_runs_per_column_and_says_why_once():
    p, x = {"c": R.normal(size=3), "w": R.normal(size=2)}, R.normal(size=2)
    with pytest.warns(PerColumnWarning) as caught:
        H = hessian(tree_through_sort)(p, x)
    assert len(caught) == 1 and "np.sort" in str(caught[0].message)
    assert caught[0].filename == __file__
    np.testing.assert_allclose(as_matrix(H, p), fd_tree_hessian(tree_through_sort, p, (x,)),
                               rtol=1e-5, atol=1e-6)


# --- jacobian(f, mode="fwd") of a parameter tree: batched the same way ---------------------
# (derivatives._tree_jacobian_fwd; before session 11, one jvp per element of the leaves)

def tree_layer(p, x):
    return np.tanh(x @ p["W"] + p["b"])


def listed_outputs(ws, x):
    for w in ws:            # a loop over the list's leaves
        x = np.sin(x * w) + w
    return x * ws[0]


def scaled_pair(t, x):
    s, (a, b) = t
    return s ** 2 * np.exp(a * x) - b * stop_gradient(x)


JACOBIAN_CASES = [
    (tree_layer, lambda: ({"W": R.normal(size=(3, 4)), "b": R.normal(size=4)},
                          R.normal(size=(5, 3)))),
    (tree_layer, lambda: ({"W": R.normal(size=(2, 1)), "b": R.normal(size=1)},
                          R.normal(size=(3, 2)))),
    (listed_outputs, lambda: ([R.normal(size=3), R.normal(size=3)], R.normal(size=3))),
    (listed_outputs, lambda: ([R.normal(size=(2, 2)) for _ in range(3)], R.normal(size=2))),
    (scaled_pair, lambda: ((0.7, (R.normal(size=3), R.normal(size=3))), R.normal(size=3))),
    (scaled_pair, lambda: ((-1.2, (R.normal(size=(2, 3)), R.normal(size=3))), R.normal(size=3))),
]


def fd_tree_jacobian(f, x, others, eps=1e-6):
    """Central differences of f along each element of the tree's leaves: (out.size, n)."""
    columns = []
    for path, leaf in leaves(x):
        for k in range(int(np.size(leaf))):
            up, down = (np.ravel(f(_moved(x, path, k, s * eps), *others)) for s in (1.0, -1.0))
            columns.append((up - down) / (2 * eps))
    return np.stack(columns, axis=-1)


def jacobian_matrix(J, x, out_size):
    return np.concatenate([np.reshape(_at(J, path), (out_size, np.size(leaf)))
                           for path, leaf in leaves(x)], axis=1)


@pytest.mark.parametrize("f, make", JACOBIAN_CASES,
                         ids=[f"{f.__name__}{i}" for i, (f, _) in enumerate(JACOBIAN_CASES)])
def test_forward_jacobian_of_a_parameter_tree_runs_batched(monkeypatch, f, make):
    from sgcompiler import jacobian
    x, *others = make()
    out = f(x, *others)
    with warnings.catch_warnings(), monkeypatch.context() as m:
        warnings.simplefilter("error", PerColumnWarning)
        m.setattr(derivatives, "tree_jacobian_fwd", _one_per_column)
        J = jacobian(f, mode="fwd")(x, *others)
    for path, leaf in leaves(x):        # the blocks: out.shape + leaf.shape
        assert np.shape(_at(J, path)) == np.shape(out) + np.shape(leaf)
    batched = jacobian_matrix(J, x, np.size(out))
    with monkeypatch.context() as m:
        m.setattr(derivatives, "_batched_code", lambda *a: None)
        columns = jacobian_matrix(jacobian(f, mode="fwd")(x, *others), x, np.size(out))
    reverse = jacobian_matrix(jacobian(f, mode="rev")(x, *others), x, np.size(out))
    scale = max(1.0, float(np.max(np.abs(columns))))
    np.testing.assert_allclose(batched, columns, rtol=1e-9, atol=1e-9 * scale)
    np.testing.assert_allclose(batched, reverse, rtol=1e-9, atol=1e-9 * scale)
    np.testing.assert_allclose(batched, fd_tree_jacobian(f, x, others), rtol=1e-5,
                               atol=1e-6 * scale)


def sorted_of_a_tree(p, x):
    return np.sort(p["c"] * p["c"])[:2] * np.sin(p["w"]) * x


def test_a_forward_tree_jacobian_that_cannot_be_batched_runs_per_column_and_says_why():
    from sgcompiler import jacobian
    p, x = {"c": R.normal(size=3), "w": R.normal(size=2)}, R.normal(size=2)
    with pytest.warns(PerColumnWarning) as caught:
        J = jacobian(sorted_of_a_tree, mode="fwd")(p, x)
    assert len(caught) == 1 and "np.sort" in str(caught[0].message)
    assert caught[0].filename == __file__
    np.testing.assert_allclose(jacobian_matrix(J, p, 2), fd_tree_jacobian(sorted_of_a_tree, p,
                                                                            (x,)),
                               rtol=1e-5, atol=1e-6)
