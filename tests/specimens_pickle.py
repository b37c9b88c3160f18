"""Module-level functions whose gradients are pickled (by reference to these functions)."""
import numpy as np

from sgcompiler import grad


def helper(x):
    return np.tanh(x) * 2.0


def loss(x, w):
    return np.sum(helper(x) * w)


def power(x, n):
    if n == 0:
        return 1.0
    return x * power(x, n - 1)


def power_loss(x, n):
    return power(x, n) + x


def cubic(x):
    return x * np.sin(x ** 2) + x ** 2


@grad
def decorated(x):
    return np.sum(np.sin(x) ** 2)


def apply(g, x, w):
    """Called in a worker process."""
    return g(x, w)
