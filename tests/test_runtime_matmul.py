"""matmul_grad_left/right against the vector-Jacobian product written out by finite sums.

The helpers take fast paths (indexing instead of np.expand_dims, the array's own swapaxes),
so every 1-D / 2-D / stacked combination is checked against an independent definition:
for f(x, y) = sum(g * (x @ y)), d f / dx and d f / dy by central differences (f is linear,
so the differences are exact up to rounding).
"""
import numpy as np
import pytest

from sgcompiler.runtime import matmul_grad_left, matmul_grad_right

SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
          ((5, 2, 3), (3,)), ((3,), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)), ((5, 2, 3), (3, 4)),
          ((2, 3), (5, 3, 4))]


def _vjp_by_differences(g, x, y, which):
    arg = x if which == 0 else y
    out = np.zeros_like(arg)
    for i in np.ndindex(arg.shape):
        step = np.zeros_like(arg)
        step[i] = 1.0
        plus = (x + step, y) if which == 0 else (x, y + step)
        minus = (x - step, y) if which == 0 else (x, y - step)
        out[i] = (np.sum(g * (plus[0] @ plus[1])) - np.sum(g * (minus[0] @ minus[1]))) / 2.0
    return out


@pytest.mark.parametrize("xs, ys", SHAPES, ids=[f"{a}@{b}" for a, b in SHAPES])
def test_matmul_grads_match_their_definition(xs, ys):
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=xs), rng.normal(size=ys)
    g = rng.normal(size=np.shape(x @ y))
    if np.ndim(g) == 0:
        g = np.float64(g)
    left, right = matmul_grad_left(g, x, y), matmul_grad_right(g, x, y)
    assert np.shape(left) == xs and np.shape(right) == ys
    np.testing.assert_allclose(left, _vjp_by_differences(g, x, y, 0), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(right, _vjp_by_differences(g, x, y, 1), rtol=1e-10, atol=1e-12)
