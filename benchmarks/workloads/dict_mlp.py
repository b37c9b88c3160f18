"""A one-hidden-layer logistic classifier whose parameters are a dict (batch 512, 64-128-1),
differentiated with respect to the whole dict."""
import numpy as np

from . import Workload


def dict_mlp(params, X, y):
    h = np.tanh(X @ params["W1"] + params["b1"])
    p = h @ params["w2"] + params["b2"]
    return np.mean(np.logaddexp(0.0, -y * p))


def dict_mlp_hand(params, X, y):
    W1, b1, w2, b2 = params["W1"], params["b1"], params["w2"], params["b2"]
    h = X @ W1
    h += b1
    np.tanh(h, out=h)
    m = h @ w2 + b2
    m *= -y
    # d/dm logaddexp(0, m) = exp(m - logaddexp(0, m)), times d m / d p = -y, over n
    dp = np.exp(m - np.logaddexp(0.0, m))
    dp *= -y / X.shape[0]
    dw2 = h.T @ dp
    db2 = np.sum(dp, keepdims=True)
    dh = np.outer(dp, w2)
    h *= h
    np.subtract(1.0, h, out=h)
    dh *= h
    return {"W1": X.T @ dh, "b1": np.sum(dh, axis=0), "w2": dw2, "b2": db2}


def make(sizes, rng):
    n, i, hid = sizes["batch"], sizes["inputs"], sizes["hidden"]
    params = {"W1": rng.normal(scale=1.0 / np.sqrt(i), size=(i, hid)),
              "b1": rng.normal(scale=0.1, size=hid),
              "w2": rng.normal(scale=1.0 / np.sqrt(hid), size=hid),
              "b2": rng.normal(scale=0.1, size=1)}
    X = rng.normal(size=(n, i))
    y = np.where(rng.random(n) > 0.5, 1.0, -1.0)
    return params, X, y


WORKLOAD = Workload(
    name="dict_mlp", title="logistic MLP on a dict of parameters (512 x 64-128-1)",
    fn=dict_mlp, wrt=("params",), hand=dict_mlp_hand, make=make,
    sizes={"full": {"batch": 512, "inputs": 64, "hidden": 128},
           "smoke": {"batch": 6, "inputs": 3, "hidden": 4}})
