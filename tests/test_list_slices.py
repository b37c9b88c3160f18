"""Loops over a slice of a list (or tuple) of differently shaped layers: the adjoint of the
slice is a list, first order and inside a differentiated function (grad of grad), checked
against finite differences along a random direction of every leaf."""
import numpy as np
import pytest

from sgcompiler import grad, hessian


def last_layer(layers, x):
    h = x
    for M, v in layers[-1:]:
        h = np.tanh(M @ h + v)
    return np.sum(h)


def later_layers(layers, x):
    h = x
    for M, v in layers[1:]:
        h = np.tanh(M @ h + v)
    return np.sum(h)


def first_layer(layers, x):
    h = x
    for M, v in layers[:1]:
        h = np.tanh(M @ h + v)
    return np.sum(h)


def later_dict_layers(layers, x):
    h = x
    for d in layers[1:]:
        h = np.tanh(d["M"] @ h + d["v"])
    return np.sum(h)


def squared_weight_grad(f):
    """sum of the squared gradient of f's last layer's matrix, a function of layers and x"""
    def outer(layers, x):
        g = grad(f, wrt=0)(layers, x)
        return np.sum(g[-1][0] ** 2) + np.sum(g[-1][1])
    return outer


def _leaves(tree):
    if isinstance(tree, dict):
        return [leaf for k in sorted(tree) for leaf in _leaves(tree[k])]
    if isinstance(tree, (list, tuple)):
        return [leaf for item in tree for leaf in _leaves(item)]
    return [np.asarray(tree)]


def _moved(tree, steps):
    if isinstance(tree, dict):
        return {k: _moved(tree[k], steps) for k in sorted(tree)}
    if isinstance(tree, (list, tuple)):
        return type(tree)(_moved(item, steps) for item in tree)
    return tree + next(steps)


def _check(f, args, wrt, g, eps=1e-6):
    rng = np.random.default_rng(1)
    direction = [rng.normal(size=leaf.shape) for leaf in _leaves(args[wrt])]
    plus, minus = list(args), list(args)
    plus[wrt] = _moved(args[wrt], iter([eps * d for d in direction]))
    minus[wrt] = _moved(args[wrt], iter([-eps * d for d in direction]))
    numeric = (f(*plus) - f(*minus)) / (2 * eps)
    leaves = _leaves(g)
    assert [leaf.shape for leaf in leaves] == [d.shape for d in direction]
    analytic = sum(float(np.sum(leaf * d)) for leaf, d in zip(leaves, direction))
    assert analytic == pytest.approx(numeric, rel=1e-5, abs=1e-7)


def _layers(kind, sizes, seed=0):
    rng = np.random.default_rng(seed)
    made = [[rng.normal(size=(m, n)), rng.normal(size=m)] for n, m in zip(sizes, sizes[1:])]
    if kind == "tuple":
        return tuple(tuple(layer) for layer in made)
    if kind == "list of tuples":
        return [tuple(layer) for layer in made]
    if kind == "dict":
        return [{"M": M, "v": v} for M, v in made]
    return made


CASES = [(last_layer, (2, 3, 2)), (last_layer, (3, 3, 3)), (later_layers, (2, 3, 4, 2)),
         (first_layer, (2, 3, 2))]


def _x(f, sizes, seed=2):
    """an input of the size the first layer f reads expects"""
    first = {first_layer: 0, last_layer: len(sizes) - 2, later_layers: 1,
             later_dict_layers: 1}[f]
    return np.random.default_rng(seed).normal(size=sizes[first])


@pytest.mark.parametrize("kind", ["list", "tuple", "list of tuples"])
@pytest.mark.parametrize("f,sizes", CASES, ids=lambda c: getattr(c, "__name__", str(c)))
@pytest.mark.parametrize("wrt", [0, 1])
def test_loop_over_a_slice_of_layers(f, sizes, kind, wrt):
    args = (_layers(kind, sizes), _x(f, sizes))
    _check(f, args, wrt, grad(f, wrt=wrt)(*args))


@pytest.mark.parametrize("wrt", [0, 1])
def test_loop_over_a_slice_of_dict_layers(wrt):
    args = (_layers("dict", (2, 3, 2)), _x(later_dict_layers, (2, 3, 2)))
    _check(later_dict_layers, args, wrt, grad(later_dict_layers, wrt=wrt)(*args))


@pytest.mark.parametrize("kind", ["list", "tuple"])
@pytest.mark.parametrize("f,sizes", CASES, ids=lambda c: getattr(c, "__name__", str(c)))
@pytest.mark.parametrize("wrt", [0, 1])
def test_gradient_of_a_layer_gradient(f, sizes, kind, wrt):
    # the inner gradient's code was made for an array `layers`: np.zeros_like of the
    # slice raised ValueError (inhomogeneous shape) when the caller passed a list
    outer = squared_weight_grad(f)
    args = (_layers(kind, sizes), _x(f, sizes))
    _check(outer, args, wrt, grad(outer, wrt=wrt)(*args))


def hidden(layers, x):
    hs = [x]
    for M, v in layers:
        hs.append(np.tanh(M @ hs[-1] + v))
    return hs


def last_hidden(layers, x):
    hs = hidden(layers[1:], x)
    return np.sum(hs[-1] ** 2)


def last_hidden_inline(layers, x):
    hs = [x]
    for M, v in layers[1:]:
        hs.append(np.tanh(M @ hs[-1] + v))
    return np.sum(hs[-1] ** 2) + np.sum(hs[-2])


def squared_input_grad(f):
    def outer(layers, x):
        return np.sum(grad(f, wrt=1)(layers, x) ** 2)
    return outer


@pytest.mark.parametrize("f", [last_hidden, last_hidden_inline], ids=lambda f: f.__name__)
@pytest.mark.parametrize("sizes", [(2, 2, 2, 2), (3, 3, 2, 4)])
@pytest.mark.parametrize("wrt", [0, 1])
def test_gradient_of_a_gradient_reading_a_list_from_its_end(f, sizes, wrt):
    # code read again keeps the list whole (a count, not pops): dhs[-1] there was the
    # adjoint of the last value, not of the one read then, and the gradient came out 0
    outer = squared_input_grad(f)
    args = (_layers("list", sizes), _x(later_layers, sizes))
    _check(outer, args, wrt, grad(outer, wrt=wrt)(*args))


def test_hessian_of_a_list_read_from_its_end():
    args = (_layers("list", (2, 3, 2, 2)), _x(later_layers, (2, 3, 2, 2)))
    g = grad(last_hidden_inline, wrt=1)
    eps = 1e-6
    numeric = np.array([(g(args[0], args[1] + eps * e) - g(args[0], args[1] - eps * e))
                        / (2 * eps) for e in np.eye(args[1].size)]).T
    assert np.allclose(hessian(last_hidden_inline, wrt=1)(*args), numeric, atol=1e-6)
