"""jacobian and hessian with respect to parameter trees, hvp with `wrt`, jvp given a
tangent for every primal (zero for integer ones): against finite differences."""
import numpy as np
import pytest

from sgcompiler import grad, hessian, hvp, jacobian, jvp
from test_forward import assert_tree_close, fd_jvp

R = np.random.default_rng(21)


def net(p, x):
    return np.tanh(x @ p["W"]) * p["b"] + np.sum(p["c"][0] ** 3)


def net_params():
    return {"W": R.normal(size=(3, 2)), "b": R.normal(size=2), "c": [R.normal(size=2)]}


def _unit_like(tree, path):
    """A tangent tree that is zero except one element of the leaf at `path`."""
    def build(node, where):
        if isinstance(node, dict):
            return {k: build(v, where + (k,)) for k, v in node.items()}
        if isinstance(node, list):
            return [build(v, where + (i,)) for i, v in enumerate(node)]
        return np.zeros_like(node)
    return build(tree, ())


def _leaf(tree, path):
    for key in path:
        tree = tree[key]
    return tree


LEAVES = [("W",), ("b",), ("c", 0)]


@pytest.mark.parametrize("mode", ["fwd", "rev", "auto"])
def test_jacobian_with_respect_to_a_dict_matches_finite_differences(mode):
    p, x = net_params(), R.normal(size=3)
    J = jacobian(net, mode=mode)(p, x)
    assert set(J) == {"W", "b", "c"} and isinstance(J["c"], list)
    for path in LEAVES:
        leaf = _leaf(p, path)
        block = _leaf(J, path)
        assert block.shape == (2,) + leaf.shape
        for k in range(leaf.size):
            t = _unit_like(p, path)
            _leaf(t, path).reshape(-1)[k] = 1.0
            column = fd_jvp(net, (p, x), (t, None))
            np.testing.assert_allclose(block.reshape(2, -1)[:, k], column, rtol=1e-5,
                                       atol=1e-7, err_msg=f"{mode} {path} {k}")


def list_loss(p, x):
    h = np.tanh(x @ p[0] + p[1])
    return np.sum(h ** 2) + np.sum(np.sin(p[2]) * p[1])


def test_hessian_with_respect_to_a_list_matches_finite_differences_of_the_gradient():
    p = [R.normal(size=(3, 2)), R.normal(size=2), R.normal(size=2)]
    x = R.normal(size=3)
    H = hessian(list_loss)(p, x)
    gradient = grad(list_loss)
    eps = 1e-5
    for j, leaf in enumerate(p):
        for k in range(leaf.size):
            plus = [a.copy() for a in p]
            minus = [a.copy() for a in p]
            plus[j].reshape(-1)[k] += eps
            minus[j].reshape(-1)[k] -= eps
            column = [(a - b) / (2 * eps) for a, b in zip(gradient(plus, x), gradient(minus, x))]
            for i, row in enumerate(H):
                assert row[j].shape == p[i].shape + leaf.shape
                np.testing.assert_allclose(row[j].reshape(p[i].size, -1)[:, k],
                                           column[i].reshape(-1), rtol=1e-4, atol=1e-6)


def dict_loss(p, x):
    """Reads the leaves in another order than the dict has them, so its gradient's keys
    come in another order too; a float leaf and a list inside the dict."""
    h = np.tanh(x @ p["W"] + p["c"][0]) * p["s"]
    return np.sum(h ** 2) + np.sum(np.sin(p["b"]) * p["c"][1]) + p["s"] ** 3 * np.sum(p["b"])


def dict_params(n):
    return {"b": R.normal(size=2), "W": R.normal(size=(n, 2)), "s": 0.7,
            "c": [R.normal(size=2), R.normal(size=2)]}


DICT_LEAVES = [("b",), ("W",), ("s",), ("c", 0), ("c", 1)]


def _bumped(tree, path, k, eps):
    """A copy of the tree with element k of the leaf at `path` moved by eps."""
    def build(node, where):
        if isinstance(node, dict):
            return {key: build(v, where + (key,)) for key, v in node.items()}
        if isinstance(node, list):
            return [build(v, where + (i,)) for i, v in enumerate(node)]
        if where != path:
            return node
        if isinstance(node, float):
            return node + eps
        out = node.copy()
        out.reshape(-1)[k] += eps
        return out
    return build(tree, ())


def _fd_gradient_column(p, x, path, k, eps=1e-5):
    """d grad / d (element k of the leaf at path), by central differences of grad."""
    gradient = grad(dict_loss)
    plus, minus = gradient(_bumped(p, path, k, eps), x), gradient(_bumped(p, path, k, -eps), x)
    return {q: (np.asarray(_leaf(plus, q)) - np.asarray(_leaf(minus, q))) / (2 * eps)
            for q in DICT_LEAVES}


@pytest.mark.parametrize("n", [3, 1])
def test_hessian_with_respect_to_a_dict_is_a_tree_of_trees(n):
    p, x = dict_params(n), R.normal(size=n)
    H = hessian(dict_loss)(p, x)
    assert list(H) == list(p) and list(H["W"]) == list(p) and isinstance(H["c"], list)
    for path in DICT_LEAVES:
        leaf = np.asarray(_leaf(p, path))
        for k in range(leaf.size):
            column = _fd_gradient_column(p, x, path, k)
            for q in DICT_LEAVES:
                block = np.asarray(_leaf(_leaf(H, q), path))
                row_leaf = np.asarray(_leaf(p, q))
                assert block.shape == row_leaf.shape + leaf.shape, (q, path)
                np.testing.assert_allclose(block.reshape(row_leaf.size, -1)[:, k],
                                           column[q].reshape(-1), rtol=1e-5, atol=1e-6,
                                           err_msg=f"H[{q}][{path}] column {k}")


@pytest.mark.parametrize("n", [3, 2])
def test_hvp_with_respect_to_a_dict_has_the_dict_structure(n):
    p, x = dict_params(n), R.normal(size=n)
    v = {"b": R.normal(size=2), "W": R.normal(size=(n, 2)), "s": 0.4,
         "c": [R.normal(size=2), R.normal(size=2)]}
    Hv = hvp(dict_loss, p, v, x)
    assert list(Hv) == list(p) and isinstance(Hv["s"], float) and isinstance(Hv["c"], list)
    eps = 1e-6
    gradient = grad(dict_loss)

    def moved(sign):
        return {"b": p["b"] + sign * eps * v["b"], "W": p["W"] + sign * eps * v["W"],
                "s": p["s"] + sign * eps * v["s"],
                "c": [p["c"][i] + sign * eps * v["c"][i] for i in range(2)]}
    plus, minus = gradient(moved(1), x), gradient(moved(-1), x)
    for q in DICT_LEAVES:
        expected = (np.asarray(_leaf(plus, q)) - np.asarray(_leaf(minus, q))) / (2 * eps)
        np.testing.assert_allclose(_leaf(Hv, q), expected, rtol=1e-5, atol=1e-6, err_msg=q)


def tuple_in_dict_loss(p):
    a, b = p["pair"]
    return np.sum(np.exp(a) * b) + np.sum(p["z"] ** 4)


def test_hessian_of_a_dict_holding_a_tuple():
    p = {"z": R.normal(size=2), "pair": (R.normal(size=2), R.normal(size=2))}
    H = hessian(tuple_in_dict_loss)(p)
    a, b = p["pair"]
    assert isinstance(H["pair"], tuple) and isinstance(H["pair"][0]["pair"], tuple)
    np.testing.assert_allclose(H["pair"][0]["pair"][0], np.diag(np.exp(a) * b), atol=1e-12)
    np.testing.assert_allclose(H["pair"][0]["pair"][1], np.diag(np.exp(a)), atol=1e-12)
    np.testing.assert_allclose(H["pair"][1]["pair"][1], np.zeros((2, 2)), atol=1e-12)
    np.testing.assert_allclose(H["z"]["z"], np.diag(12 * p["z"] ** 2), atol=1e-12)
    np.testing.assert_allclose(H["z"]["pair"][0], np.zeros((2, 2)), atol=1e-12)


def middle(X, w, y):
    return np.sum(np.log1p((X @ w - y) ** 2)) + np.sum(np.sin(w) * w)


def test_hvp_with_wrt_is_the_hessian_of_that_argument_times_v():
    X, w, y, v = R.normal(size=(5, 3)), R.normal(size=3), R.normal(size=5), R.normal(size=3)
    gradient = grad(middle, wrt="w")
    eps = 1e-6
    expected = (gradient(X, w + eps * v, y) - gradient(X, w - eps * v, y)) / (2 * eps)
    for wrt in (1, "w"):
        np.testing.assert_allclose(hvp(middle, w, v, X, y, wrt=wrt), expected, rtol=1e-5,
                                   atol=1e-7)
    np.testing.assert_allclose(hvp(middle, w, v, X, y, wrt="w"),
                               hessian(middle, wrt="w")(X, w, y) @ v, rtol=1e-8, atol=1e-10)


def powered(x, n, flag):
    s = np.sum(x)
    for i in range(n):
        s = s * np.cos(x[i]) if flag else s + x[i]
    return s


def test_jvp_takes_a_zero_tangent_for_every_integer_primal():
    x, tx = R.normal(size=4), R.normal(size=4)
    expected = fd_jvp(powered, (x, 3, True), (tx, None, None))
    for zeros in ((0, False), (0.0, 0.0), (np.zeros(()), np.zeros((), dtype=bool))):
        out, out_dot = jvp(powered, (x, 3, True), (tx,) + zeros)
        assert out == powered(x, 3, True)
        np.testing.assert_allclose(out_dot, expected, rtol=1e-6)
    with pytest.raises(TypeError, match="'n' of powered is an integer or bool"):
        jvp(powered, (x, 3, True), (tx, 1, 0))
    out, out_dot = jvp(powered, (x, 3, True), (None, 0, 0))
    assert out_dot == 0.0 and isinstance(out_dot, float)
    assert_tree_close(jvp(powered, (x, 2, False), (tx, 0, 0))[1],
                      fd_jvp(powered, (x, 2, False), (tx, None, None)))
