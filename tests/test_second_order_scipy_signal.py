"""Second order through scipy.signal.convolve and correlate: their gradient helpers pad g
to the full result (np.pad) and correlate it with the other operand, and are read
through their own source. Checked against finite differences of the checked gradient
(sgcompiler.check_grads), both modes, every mode of the call, 1-d and 2-d."""
import numpy as np
import pytest

from sgcompiler import check_grads

signal = pytest.importorskip("scipy.signal")


def conv_full(a, v):
    return np.sum(np.sin(signal.convolve(a, v, mode="full")) ** 2)


def conv_same(a, v):
    return np.sum(np.sin(signal.convolve(a, v, mode="same")) ** 2)


def conv_valid(a, v):
    return np.sum(np.sin(signal.convolve(a, v, mode="valid")) ** 2)


def corr_full(a, v):
    return np.sum(np.cos(signal.correlate(a, v, mode="full"))) * np.sum(v ** 2)


def corr_same(a, v):
    return np.sum(np.cos(signal.correlate(a, v, mode="same"))) * np.sum(v ** 2)


def corr_valid(a, v):
    return np.sum(np.cos(signal.correlate(a, v, mode="valid"))) * np.sum(v ** 2)


FUNCTIONS = [conv_full, conv_same, conv_valid, corr_full, corr_same, corr_valid]
SHAPES = [((5,), (3,)), ((4, 3), (2, 2)), ((2,), (4,))]


@pytest.mark.parametrize("shapes", SHAPES, ids=["1d", "2d", "second-longer"])
@pytest.mark.parametrize("f", FUNCTIONS, ids=[f.__name__ for f in FUNCTIONS])
def test_second_order_through_scipy_signal(f, shapes):
    if shapes == SHAPES[2] and f.__name__.endswith(("same", "valid")):
        pytest.skip("(SciPy's 'valid' needs one operand at least as large; 'same' is "
                    "covered by the others)")
    rng = np.random.default_rng(len(shapes[0]) * 7 + shapes[1][0])
    args = tuple(rng.normal(size=s) * 0.7 for s in shapes)
    check_grads(f, args, order=2, modes=("fwd", "rev"))


def test_third_order_through_a_convolution():
    rng = np.random.default_rng(11)
    check_grads(conv_same, (rng.normal(size=6) * 0.5, rng.normal(size=3) * 0.5), order=3,
                modes=("fwd", "rev"))


def convolved(a, v, mode):
    return np.sum(np.sin(signal.convolve(a, v, mode=mode)) ** 2)


def through_a_helper_given_the_mode(a, v):
    return convolved(a, v, "same") + convolved(v, a, "full")


def test_second_order_through_a_helper_given_the_mode():
    # the mode, a string the helper passes on, got zeros_tree("same"): a TypeError
    rng = np.random.default_rng(12)
    check_grads(through_a_helper_given_the_mode, (rng.normal(size=5), rng.normal(size=3)),
                order=2, modes=("fwd", "rev"))
