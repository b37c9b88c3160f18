"""A tanh RNN unrolled 50 steps (hidden 32, input 32), loss on the last state."""
import numpy as np

from . import Workload


def rnn(W, U, b, xs, h0, target):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t] + b)
    d = h - target
    return np.sum(d * d)


def rnn_hand(W, U, b, xs, h0, target):
    steps = xs.shape[0]
    hs = [h0]
    h = h0
    for t in range(steps):
        h = np.tanh(W @ h + U @ xs[t] + b)
        hs.append(h)
    dh = 2.0 * (h - target)
    das = []
    for t in range(steps - 1, -1, -1):
        h = hs[t + 1]
        da = dh * (1.0 - h * h)
        das.append(da)
        dh = W.T @ da
    if not das:
        return np.zeros_like(W), np.zeros_like(U), np.zeros_like(b)
    # the per-step outer products, summed by one matrix product each
    da = np.array(das[::-1])                 # (steps, hidden), in time order
    return da.T @ np.array(hs[:-1]), da.T @ xs, np.sum(da, axis=0)


def make(sizes, rng):
    hid, inp, steps = sizes["hidden"], sizes["inputs"], sizes["steps"]
    W = rng.normal(scale=0.9 / np.sqrt(hid), size=(hid, hid))
    U = rng.normal(scale=1.0 / np.sqrt(inp), size=(hid, inp))
    b = rng.normal(scale=0.1, size=hid)
    xs = rng.normal(size=(steps, inp))
    h0 = np.zeros(hid)
    target = rng.uniform(-0.5, 0.5, size=hid)
    return W, U, b, xs, h0, target


def for_torch(torch):
    def rnn_torch(W, U, b, xs, h0, target):
        h = h0
        for t in range(xs.shape[0]):
            h = torch.tanh(W @ h + U @ xs[t] + b)
        d = h - target
        return torch.sum(d * d)
    return rnn_torch


WORKLOAD = Workload(
    name="rnn", title="tanh RNN, 50 steps, hidden 32",
    fn=rnn, wrt=("W", "U", "b"), hand=rnn_hand, make=make,
    sizes={"full": {"hidden": 32, "inputs": 32, "steps": 50},
           "smoke": {"hidden": 3, "inputs": 2, "steps": 4}},
    kind="scalar-loop", torch=for_torch)
