"""Softmax cross-entropy with the row max under stop_gradient (batch 256 x 1000 classes)."""
import numpy as np

from sgcompiler import stop_gradient

from . import Workload


def softmax_xent(logits, labels):
    z = logits - stop_gradient(np.max(logits, axis=1, keepdims=True))
    lse = np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.sum(labels * (z - lse)) / logits.shape[0]


def softmax_xent_hand(logits, labels):
    n = logits.shape[0]
    e = logits - np.max(logits, axis=1, keepdims=True)
    np.exp(e, out=e)
    s = np.sum(e, axis=1, keepdims=True)
    # d/dz = (softmax(z) * rowsum(labels) - labels) / n; labels need not be one-hot
    e *= np.sum(labels, axis=1, keepdims=True) / (n * s)
    e -= labels / n
    return e


def make(sizes, rng):
    n, k = sizes["batch"], sizes["classes"]
    logits = rng.normal(scale=3.0, size=(n, k))
    labels = np.zeros((n, k))
    labels[np.arange(n), rng.integers(0, k, size=n)] = 1.0
    return logits, labels


def for_torch(torch):
    def softmax_xent_torch(logits, labels):
        z = logits - torch.max(logits, dim=1, keepdim=True).values.detach()
        lse = torch.log(torch.sum(torch.exp(z), dim=1, keepdim=True))
        return -torch.sum(labels * (z - lse)) / logits.shape[0]
    return softmax_xent_torch


WORKLOAD = Workload(
    name="softmax_xent", title="softmax cross-entropy, max under stop_gradient (256x1000)",
    fn=softmax_xent, wrt=("logits",), hand=softmax_xent_hand, make=make,
    sizes={"full": {"batch": 256, "classes": 1000}, "smoke": {"batch": 4, "classes": 7}},
    torch=for_torch)
