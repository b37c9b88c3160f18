"""A batched tanh RNN written with np.dot, its state made inside the loss (50 steps, batch
16, 32 inputs, 64 hidden): the style of most RNN code outside this project."""
import numpy as np

from . import Workload


def rnn_batched(W, U, b, xs, target):
    h = np.zeros((xs.shape[1], W.shape[1]))
    for t in range(xs.shape[0]):
        h = np.tanh(np.dot(xs[t], U) + np.dot(h, W) + b)
    d = h - target
    return np.sum(d * d) / xs.shape[1]


def rnn_batched_hand(W, U, b, xs, target):
    steps, batch = xs.shape[0], xs.shape[1]
    hidden = W.shape[1]
    hs = np.empty((steps + 1, batch, hidden))
    hs[0] = 0.0
    h = hs[0]
    for t in range(steps):
        h = np.tanh(np.dot(xs[t], U) + np.dot(h, W) + b)
        hs[t + 1] = h
    dh = (2.0 / batch) * (h - target)
    das = np.empty((steps, batch, hidden))
    for t in range(steps - 1, -1, -1):
        h = hs[t + 1]
        da = dh * (1.0 - h * h)
        das[t] = da
        dh = da @ W.T
    # the per-step products, summed by one matrix product each
    flat = das.reshape(-1, hidden)
    dW = hs[:-1].reshape(-1, hidden).T @ flat
    dU = xs.reshape(-1, xs.shape[2]).T @ flat
    return dW, dU, np.sum(flat, axis=0)


def make(sizes, rng):
    hid, inp, steps, batch = sizes["hidden"], sizes["inputs"], sizes["steps"], sizes["batch"]
    W = rng.normal(scale=0.9 / np.sqrt(hid), size=(hid, hid))
    U = rng.normal(scale=1.0 / np.sqrt(inp), size=(inp, hid))
    b = rng.normal(scale=0.1, size=hid)
    xs = rng.normal(size=(steps, batch, inp))
    target = rng.uniform(-0.5, 0.5, size=(batch, hid))
    return W, U, b, xs, target


def for_torch(torch):
    def rnn_batched_torch(W, U, b, xs, target):
        h = torch.zeros((xs.shape[1], W.shape[1]), dtype=W.dtype)
        for t in range(xs.shape[0]):
            h = torch.tanh(xs[t] @ U + h @ W + b)
        d = h - target
        return torch.sum(d * d) / xs.shape[1]
    return rnn_batched_torch


WORKLOAD = Workload(
    name="rnn_batched", title="batched tanh RNN with np.dot, state made inside (50 x 16)",
    fn=rnn_batched, wrt=("W", "U", "b"), hand=rnn_batched_hand, make=make,
    sizes={"full": {"hidden": 64, "inputs": 32, "steps": 50, "batch": 16},
           "smoke": {"hidden": 3, "inputs": 2, "steps": 4, "batch": 2}},
    kind="scalar-loop", torch=for_torch)
