"""The scalar bookkeeping of adjoint seeds folded into its use, and reductions' adjoints
not broadcast where the operation that reads them broadcasts (optimize/algebraic/seeds.py).

Each case checks the gradient against finite differences, on several shapes (with
broadcasting), and what the generated code reads like.
"""
import numpy as np
import pytest

from sgcompiler import grad

from gradcheck import assert_grad_matches


def xent(logits, labels):
    z = logits - np.max(logits, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.sum(labels * (z - lse)) / logits.shape[0]


SHAPES = [((3, 4), (3, 4)), ((5, 2), (2,)), ((1, 6), (1, 6)), ((4, 1), (4, 1))]


@pytest.mark.parametrize("logits_shape, labels_shape", SHAPES)
def test_a_mean_seed_is_one_division(logits_shape, labels_shape):
    rng = np.random.default_rng(0)
    args = [rng.normal(size=logits_shape), rng.random(labels_shape)]
    assert_grad_matches(xent, args, wrt=(0, 1))
    g = grad(xent)
    g(*args)
    # the seed -1 / n reaches the labels as one division, as a person writes it
    assert "d_neg" not in g.source and "/ -_item_0" in g.source, g.source


@pytest.mark.parametrize("logits_shape, labels_shape", SHAPES[:2])
def test_the_row_sums_adjoint_is_broadcast_by_the_product(logits_shape, labels_shape):
    rng = np.random.default_rng(1)
    args = [rng.normal(size=logits_shape), rng.random(labels_shape)]
    assert_grad_matches(xent, args, wrt=(0,))
    g = grad(xent)
    g(*args)
    assert "unreduce(" not in g.source, g.source


def test_bool_labels():
    # x / -n divides a bool array (a negated bool array would be an error)
    rng = np.random.default_rng(2)
    logits, labels = rng.normal(size=(4, 3)), rng.random((4, 3)) > 0.5
    got = grad(xent)(logits, labels)
    expected = grad(xent)(logits, labels.astype(float))
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def without_kept_axes(x, w):
    s = np.sum(np.exp(x), axis=1)
    return np.sum(s * w)


@pytest.mark.parametrize("shape", [(3, 4), (1, 5), (6, 1)])
def test_a_broadcast_without_kept_axes_stays(shape):
    rng = np.random.default_rng(3)
    args = [rng.normal(size=shape), rng.normal(size=shape[0])]
    assert_grad_matches(without_kept_axes, args)


def mixed_dtypes(x, y):
    s = np.sum(x, axis=1, keepdims=True)
    return np.sum(np.sin(s) * y)


def test_the_broadcast_stays_when_the_other_operand_differs_in_dtype():
    # d_s (float32, (n, 1)) reaches x (float64): the broadcast gives x's dtype
    rng = np.random.default_rng(4)
    x, y = rng.normal(size=(3, 4)), rng.normal(size=(3, 1)).astype(np.float32)
    g = grad(mixed_dtypes)(x, y)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, grad(mixed_dtypes)(x, y.astype(float)), rtol=1e-6)
    assert_grad_matches(mixed_dtypes, [x, y.astype(float)], wrt=(0,))


def scaled_mean(x, c):
    n = x.shape[0]
    return np.sum(np.tanh(x) * c) / (2.0 * n)


@pytest.mark.parametrize("shape", [(5,), (3, 2)])
def test_a_seed_of_several_numbers(shape):
    rng = np.random.default_rng(5)
    args = [rng.normal(size=shape), 1.5]
    assert_grad_matches(scaled_mean, args, wrt=(0,))
