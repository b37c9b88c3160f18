"""factor-sums through temporaries read with new last axes (optimize/algebraic/factoring.py):
`dsq[:, :, None] * 2 * _sub` summed over the points, where `dsq = d_mul2 * 0.5` and
`d_mul2 = d_div / sigma2`, is `np.sum(d_div[:, :, None] * _sub, axis=0) / sigma2[:, None]`:
the per-component factors multiply the small sum, not the (n, k) adjoint.

Each case is checked against finite differences on several shapes.
"""
import numpy as np
import pytest

from benchmarks.workloads.gmm_lse import gmm_lse, logsumexp
from gradcheck import checked_source


def _gmm_args(rng, n, k, d):
    return (rng.normal(size=(k, d)), rng.normal(scale=0.2, size=k),
            rng.normal(scale=0.5, size=k), rng.normal(size=(n, d)))


@pytest.mark.skipif(logsumexp is None, reason="SciPy is not installed")
@pytest.mark.parametrize("n,k,d", [(5, 3, 2), (40, 8, 4), (300, 2, 1)])
def test_the_mixtures_factors_multiply_the_sum(n, k, d):
    rng = np.random.default_rng(n + k)
    source = checked_source(gmm_lse, _gmm_args(rng, n, k, d), wrt=(0, 1, 2), atol=1e-6)
    backward = source[source.index("# backward"):]
    assert "d_div[:, :, None]" in backward and "/ sigma2[:, None]" in backward, backward
    assert "d_mul2 = " not in backward and "dsq" not in backward


def soft_assign(mu, log_s, X):
    # the same sum written out, with np.exp and np.log
    sq = np.sum((X[:, None, :] - mu[None, :, :]) ** 2, axis=2)
    s = np.exp(log_s)
    return -np.sum(np.log(np.sum(np.exp(-sq / s), axis=1)))


@pytest.mark.parametrize("n,k,d", [(4, 2, 3), (30, 5, 2)])
def test_a_quotient_of_a_temporary(n, k, d):
    rng = np.random.default_rng(n)
    args = (rng.normal(size=(k, d)), rng.normal(scale=0.2, size=k), rng.normal(size=(n, d)))
    source = checked_source(soft_assign, args, wrt=(0, 1), atol=1e-6)
    assert "/ s[:, None]" in source, source


def weighted_points(mu, w, X):
    # w varies along the points: its factor stays inside the sum
    sq = np.sum((X[:, None, :] - mu[None, :, :]) ** 2, axis=2)
    return np.sum(np.sin(sq) * w[:, None])


def read_twice(mu, X):
    sq = np.sum((X[:, None, :] - mu[None, :, :]) ** 2, axis=2)
    return np.sum(np.sin(sq)) + np.sum(sq * sq)


@pytest.mark.parametrize("f", [weighted_points, read_twice], ids=lambda f: f.__name__)
@pytest.mark.parametrize("n,k,d", [(6, 3, 2), (25, 4, 3)])
def test_factors_that_stay(f, n, k, d):
    rng = np.random.default_rng(k)
    if f is weighted_points:
        args = (rng.normal(size=(k, d)), rng.normal(size=n), rng.normal(size=(n, d)))
    else:
        args = (rng.normal(size=(k, d)) * 0.3, rng.normal(size=(n, d)) * 0.3)
    checked_source(f, args, wrt=(0,), atol=1e-6)
