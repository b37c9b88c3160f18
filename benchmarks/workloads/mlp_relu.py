"""A 2-layer ReLU MLP written with np.maximum(0, x), squared error (batch 256, 256-512-16)."""
import numpy as np

from . import Workload


def mlp_relu(W1, b1, W2, b2, X, Y):
    h = np.maximum(0, X @ W1 + b1)
    out = h @ W2 + b2
    return 0.5 * np.sum((out - Y) ** 2) / X.shape[0]


def mlp_relu_hand(W1, b1, W2, b2, X, Y):
    # (at a tie, a == 0, np.maximum's gradient is split in half, as grad's is: the same
    # result at every point, not only where the ReLU has a derivative)
    n = X.shape[0]
    a = X @ W1
    a += b1
    ties = a == 0.0
    h = np.maximum(a, 0.0, out=a)
    dout = h @ W2
    dout += b2
    dout -= Y
    dout *= 1.0 / n
    dW2 = h.T @ dout
    db2 = np.sum(dout, axis=0)
    dh = dout @ W2.T
    dh *= (h > 0) | ties
    dh[ties] *= 0.5
    dW1 = X.T @ dh
    db1 = np.sum(dh, axis=0)
    return dW1, db1, dW2, db2


def make(sizes, rng):
    n, i, hid, o = sizes["batch"], sizes["inputs"], sizes["hidden"], sizes["outputs"]
    W1 = rng.normal(scale=1.0 / np.sqrt(i), size=(i, hid))
    b1 = rng.normal(scale=0.1, size=hid)
    W2 = rng.normal(scale=1.0 / np.sqrt(hid), size=(hid, o))
    b2 = rng.normal(scale=0.1, size=o)
    X = rng.normal(size=(n, i))
    Y = rng.normal(size=(n, o))
    return W1, b1, W2, b2, X, Y


def for_torch(torch):
    def mlp_relu_torch(W1, b1, W2, b2, X, Y):
        h = torch.clamp(X @ W1 + b1, min=0)
        out = h @ W2 + b2
        return 0.5 * torch.sum((out - Y) ** 2) / X.shape[0]
    return mlp_relu_torch


WORKLOAD = Workload(
    name="mlp_relu", title="2-layer ReLU MLP with np.maximum(0, x) (256 x 256-512-16)",
    fn=mlp_relu, wrt=("W1", "b1", "W2", "b2"), hand=mlp_relu_hand, make=make,
    sizes={"full": {"batch": 256, "inputs": 256, "hidden": 512, "outputs": 16},
           "smoke": {"batch": 5, "inputs": 4, "hidden": 6, "outputs": 2}},
    torch=for_torch)
