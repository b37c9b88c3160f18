"""stop_gradient, recognised by what it is rather than by its name."""
import numpy as np

import sgcompiler
import sgcompiler as sgc
from sgcompiler import stop_gradient
from sgcompiler import stop_gradient as sg


def own_stop_gradient(x):
    return np.sum(local_names.stop_gradient(x) * x)


class _LocalNames:
    """A namespace whose stop_gradient is the user's own function (not sgcompiler's)."""


local_names = __import__("specimens_stop_shadow")


def alias(x):
    return np.sum(x * sg(x))


def module_attribute(x):
    return np.sum(x * sgc.stop_gradient(np.exp(x)))


def full_module_name(x):
    return np.sum(x * sgcompiler.stop_gradient(x * x))


def reused(x):
    m = stop_gradient(x * x)
    return np.sum(m * x + m * m + x)


def everything(x):
    return stop_gradient(np.sum(x * x))


def chain_only_feeds_stop(x, w):
    a = np.exp(x)
    b = np.tanh(a * 3.0)
    c = stop_gradient(b)
    return np.sum(c * w) + np.sum(x * w)


def in_loop(x):
    y = x
    for i in range(3):
        y = y * stop_gradient(y) + x
    return np.sum(y)


class _Opaque:
    """A callable object sgcompiler knows nothing about (like another AD tool's gradient)."""

    def __call__(self, x):
        return np.cos(x) + 2.0


opaque = _Opaque()


def opaque_under_stop(x):
    return np.sum(x * stop_gradient(opaque(x)))
