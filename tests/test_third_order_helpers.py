"""Third derivatives through the helpers that second-order code calls for containers,
records and np.diff (issue 14: every helper generated code calls has its own rules):
fitted (add_trees' adjoint), joined_whole and repeated_whole (the adjoints of `+` and `*`
of lists), tree_with (a record's field), diff_grad (np.diff's gradient, whose transpose is
diff_padded). check_grads(order=3) compares each order with central differences of the
order below, in both modes, on two shapes each."""
from typing import NamedTuple

import numpy as np
import pytest

from sgcompiler import check_grads

R = np.random.default_rng(1415)


class Params(NamedTuple):
    w: np.ndarray
    b: np.ndarray


def joined(xs):
    # xs a list parameter: `+` joins lists (joined_part and, at second order, joined_whole)
    ys = xs + [np.sin(xs[0]) * xs[1]]
    return np.sum(ys[0] * ys[2]) + np.sum(np.cos(ys[1]) ** 2)


def repeated(xs):
    ys = xs * 2
    return np.sum(np.sin(ys[0]) * ys[3]) + np.sum(ys[1] ** 3 * ys[2])


def appended(xs):
    # a list grown in a loop: adjoints of lists of different lengths (add_trees, fitted)
    out = []
    for x in xs:
        out.append(np.tanh(x) * xs[0])
    return np.sum(out[0] * out[-1]) + np.sum(np.sin(out[1]))


def record(p):
    return np.sum(np.tanh(p.w * p.b) ** 2) + np.sum(np.sin(p.w) * p.b ** 3)


def entries(d):
    return np.sum(np.tanh(d["w"] * d["b"]) ** 2) + np.sum(np.sin(d["w"]) * d["b"] ** 3)


def differenced(x):
    return np.sum(np.sin(np.diff(x ** 2, axis=0)) ** 2) + np.sum(np.diff(np.cos(x), n=2) ** 3)


def differenced_ends(x):
    return np.sum(np.diff(np.sin(x), prepend=0.5, append=np.ones(2)) ** 3)


SHAPES = [(3,), (2, 3)]


def _list(shape, n):
    return [R.normal(size=shape) * 0.7 for _ in range(n)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("f, n", [(joined, 2), (repeated, 2), (appended, 3)])
def test_third_order_through_list_adjoints(f, n, shape):
    check_grads(f, (_list(shape, n),), order=3, modes=("fwd", "rev"), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("shape", SHAPES)
def test_third_order_through_a_dict(shape):
    d = {"w": R.normal(size=shape) * 0.7, "b": R.normal(size=shape) * 0.7}
    check_grads(entries, (d,), order=3, modes=("fwd", "rev"), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("shape", SHAPES)
def test_third_order_through_a_record(shape):
    # (check_grads reads the record's gradient by field, as record reads it)
    p = Params(R.normal(size=shape) * 0.7, R.normal(size=shape) * 0.7)
    check_grads(record, (p,), order=3, modes=("fwd", "rev"), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("f, shape", [(differenced, (4, 3)), (differenced, (3, 5)),
                                      (differenced_ends, (5,)), (differenced_ends, (4,))])
def test_third_order_through_np_diff(f, shape):
    check_grads(f, (R.normal(size=shape) * 0.7,), order=3, modes=("fwd", "rev"), rtol=1e-4,
                atol=1e-6)
