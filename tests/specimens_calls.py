"""User-function calls and parameter trees."""
from collections import namedtuple

import numpy as np

import specimens_helpers

Params = namedtuple("Params", ["W", "b"])


def square(x, scale=1.0):
    return scale * x * x


def two_results(a, b):
    return a * b, a + b


def layer(W, h, b):
    return np.tanh(W @ h + b)


def power_rec(x, n):
    if n <= 1:
        return x
    return x * power_rec(x, n - 1)


def early_exit(x):
    for i in range(4):
        if np.sum(x) > 2.0:
            return x * 2.0
        x = x + 1.0
    return x


def calls_with_keywords(x, y):
    z = square(x) + square(y, scale=2.0)
    p, q = two_results(z, x)
    return np.sum(p * q)


def helper_in_loop(W, x, b):
    h = x
    for i in range(3):
        h = layer(W, h, b)
    return np.sum(h)


def recursion(x):
    return np.sum(power_rec(x, 4))


def other_module(x):
    return np.sum(specimens_helpers.outer_helper(x) * 2.0)


def early_return_from_helper_in_loop(x):
    total = 0.0
    for i in range(3):
        total = total + np.sum(early_exit(x * (i + 1)))
    return total


def inactive_argument_helper(x, c):
    return np.sum(square(c) * x + square(x, c))


def mlp(params, x, y):
    h = np.tanh(x @ params["W1"] + params["b1"])
    out = h @ params["W2"] + params["b2"]
    return np.mean((out - y) ** 2)


def nested_tree(p, x):
    a = p["enc"]["W"] @ x
    b = p["dec"][0] * a + p["dec"][1]
    return np.sum(b ** 2)


def list_of_layers(layers, x):
    h = x
    for W, b in layers:
        h = np.tanh(W @ h + b)
    return np.sum(h)


def dict_items(p, x):
    s = 0.0
    for k, v in p.items():
        s = s + np.sum(v * x) * len(k)
    return s


def named_tuple(p, x):
    return np.sum(np.tanh(p.W @ x + p.b))


ROWS = [
    (calls_with_keywords, lambda r: [r.normal(size=3), r.normal(size=3)]),
    (helper_in_loop, lambda r: [r.normal(size=(3, 3)), r.normal(size=3), r.normal(size=3)]),
    (recursion, lambda r: [r.normal(size=3)]),
    (other_module, lambda r: [r.normal(size=3)]),
    (early_return_from_helper_in_loop, lambda r: [r.normal(size=3)]),
    (inactive_argument_helper, lambda r: [r.normal(size=3), 0.7]),
]


def _mlp_params(r):
    return {"W1": r.normal(size=(3, 4)), "b1": r.normal(size=4),
            "W2": r.normal(size=(4, 2)), "b2": r.normal(size=2)}


TREE_ROWS = [
    (mlp, lambda r: [_mlp_params(r), r.normal(size=(5, 3)), r.normal(size=(5, 2))]),
    (nested_tree, lambda r: [{"enc": {"W": r.normal(size=(3, 3))},
                              "dec": [r.normal(size=3), r.normal(size=3)]}, r.normal(size=3)]),
    (list_of_layers, lambda r: [[(r.normal(size=(3, 3)), r.normal(size=3)) for _ in range(2)],
                                r.normal(size=3)]),
    (dict_items, lambda r: [{"a": r.normal(size=3), "bb": r.normal(size=3)}, r.normal(size=3)]),
]


def make_scaled_loss(scale):
    def scaled_loss(x):
        return np.sum(np.sin(x) * scale)
    return scaled_loss


square_lambda = lambda x: x * x  # noqa: E731


def calls_a_lambda(x):
    return np.sum(square_lambda(x))


class Model:
    def __init__(self, w):
        self.w = w
        self.config = {"scale": 3.0}

    def loss(self, x):
        return np.sum(np.tanh(self.w * x)) * self.config["scale"]


def reads_object_attributes(x, model):
    return np.sum(model.w * x) + model.config["scale"] * np.sum(x)
