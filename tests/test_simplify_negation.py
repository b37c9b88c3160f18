"""unbroadcast(-g, x) is emitted as -unbroadcast(g, x): sum first, negate the smaller sum."""
import numpy as np

from gradcheck import assert_grad_matches
from sgcompiler import grad


def centred(x, m):
    return np.sum(np.sin(x - m) * x)


def test_negation_moves_out_of_unbroadcast():
    source = grad(centred, wrt="m").source
    assert "-unbroadcast(" in source and "unbroadcast(-" not in source, source


def test_gradient_still_right():
    rng = np.random.default_rng(0)
    x, m = rng.normal(size=(4, 3)), rng.normal(size=(4, 1))
    assert_grad_matches(centred, [x, m], wrt=[0, 1])
