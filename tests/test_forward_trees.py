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


def test_hessian_and_hvp_of_a_dict_are_refused_with_a_clear_error():
    p, x = net_params(), R.normal(size=3)

    def loss(p, x):
        return np.sum(net(p, x))
    with pytest.raises(TypeError, match="with respect to a dict is not supported yet"):
        hessian(loss)(p, x)
    with pytest.raises(TypeError, match="with respect to a dict is not supported yet"):
        hvp(loss, p, p, x)


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
