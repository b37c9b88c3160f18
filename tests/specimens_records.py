"""Parameter trees of NamedTuples, namedtuples, dataclasses and registered types
(tests/test_records.py)."""
import collections
import dataclasses
import typing

import numpy as np

from sgcompiler import grad, register_tree, stop_gradient


class Layer(typing.NamedTuple):
    w: np.ndarray
    b: np.ndarray


Pair = collections.namedtuple("Pair", "w b")


@dataclasses.dataclass
class Dense:
    w: np.ndarray
    b: np.ndarray


@dataclasses.dataclass(frozen=True)
class Frozen:
    w: np.ndarray
    b: np.ndarray


class Custom:
    """A container of the user's own, registered below."""

    def __init__(self, w, b, note="made by hand"):
        self.w, self.b, self.note = w, b, note


register_tree(Custom, ("w", "b"), lambda obj, children: Custom(note=obj.note, **children))


def by_field(p, x):
    return np.sum(np.tanh(p.w * x + p.b))


def by_position(p, x):
    w, b = p
    return np.sum(np.tanh(w * x + p[1]))


def layer(p, x):
    return np.tanh(p.w * x + p.b)


def network(params, x):
    h = layer(params["first"], x)
    s = 0.0
    for q in params["rest"]:
        h = layer(q, h)
        s = s + np.sum(h * q.w)
    return np.sum(h) + s


def with_stop(p, x):
    return np.sum(p.w * stop_gradient(p.b) * x + p.b)


def with_stop_reference(w, b, c, x):
    return np.sum(w * c * x + b)


def mixed(p, x):
    return np.sum(p[0] * x + p.w)


def gradient_norm(p, x):
    """The squared norm of by_field's gradient, read by field (grad of grad: the inner
    gradient is a record inside the differentiated code)."""
    g = grad(by_field)(p, x)
    return np.sum(g.w ** 2) + np.sum(g.b * x)


def w_only(p, x):
    return np.sum(np.sin(p.w * x))


def gradient_of_one_field(p, x):
    """The inner gradient has no adjoint for b: g.b is a zero."""
    g = grad(w_only)(p, x)
    return np.sum(g.w * p.w) + np.sum(g.b * p.b)
