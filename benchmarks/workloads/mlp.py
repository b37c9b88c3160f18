"""A 2-layer tanh MLP with a softmax cross-entropy loss (batch 128, 784-256-10)."""
import numpy as np

from sgcompiler import stop_gradient

from . import Workload


def mlp(W1, b1, W2, b2, X, Y):
    h = np.tanh(X @ W1 + b1)
    logits = h @ W2 + b2
    z = logits - stop_gradient(np.max(logits, axis=1, keepdims=True))
    lse = np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.sum(Y * (z - lse)) / X.shape[0]


def mlp_hand(W1, b1, W2, b2, X, Y):
    n = X.shape[0]
    h = X @ W1
    h += b1
    np.tanh(h, out=h)
    e = h @ W2
    e += b2
    e -= np.max(e, axis=1, keepdims=True)
    np.exp(e, out=e)
    dlogits = e
    dlogits *= np.sum(Y, axis=1, keepdims=True) / (n * np.sum(e, axis=1, keepdims=True))
    dlogits -= Y / n
    dW2 = h.T @ dlogits
    db2 = np.sum(dlogits, axis=0)
    da = dlogits @ W2.T
    h *= h
    np.subtract(1.0, h, out=h)
    da *= h
    dW1 = X.T @ da
    db1 = np.sum(da, axis=0)
    return dW1, db1, dW2, db2


def make(sizes, rng):
    n, i, hid, o = sizes["batch"], sizes["inputs"], sizes["hidden"], sizes["outputs"]
    W1 = rng.normal(scale=1.0 / np.sqrt(i), size=(i, hid))
    b1 = rng.normal(scale=0.1, size=hid)
    W2 = rng.normal(scale=1.0 / np.sqrt(hid), size=(hid, o))
    b2 = rng.normal(scale=0.1, size=o)
    X = rng.normal(size=(n, i))
    Y = np.zeros((n, o))
    Y[np.arange(n), rng.integers(0, o, size=n)] = 1.0
    return W1, b1, W2, b2, X, Y


def for_torch(torch):
    def mlp_torch(W1, b1, W2, b2, X, Y):
        h = torch.tanh(X @ W1 + b1)
        logits = h @ W2 + b2
        z = logits - torch.max(logits, dim=1, keepdim=True).values.detach()
        lse = torch.log(torch.sum(torch.exp(z), dim=1, keepdim=True))
        return -torch.sum(Y * (z - lse)) / X.shape[0]
    return mlp_torch


WORKLOAD = Workload(
    name="mlp", title="2-layer tanh MLP + softmax xent (128 x 784-256-10)",
    fn=mlp, wrt=("W1", "b1", "W2", "b2"), hand=mlp_hand, make=make,
    sizes={"full": {"batch": 128, "inputs": 784, "hidden": 256, "outputs": 10},
           "smoke": {"batch": 5, "inputs": 6, "hidden": 4, "outputs": 3}},
    torch=for_torch)
