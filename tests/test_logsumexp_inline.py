"""scipy.special.logsumexp's gradient in code specialised for known shapes: written out as
`g * np.exp(a - ans[:, None])` (reverse/inline._logsumexp_grad) rather than a call of
logsumexp_grad_a, and a negation whose array is negated again by one reader and summed
by the others is cancelled there (optimize/algebraic/signs._cancel_in_readers): the
Gaussian-mixture workload's `-np.sum(logsumexp(logp, axis=1))`. Values against finite
differences and against the code for any shape, on several shapes and axes."""
import numpy as np
import pytest

pytest.importorskip("scipy")
from scipy.special import logsumexp  # noqa: E402

from gradcheck import assert_grad_matches  # noqa: E402
from sgcompiler import grad, hessian  # noqa: E402

R = np.random.default_rng(31)


def mixture(mu, log_sigma, logit_pi, X):
    sq = np.sum((X[:, None, :] - mu[None, :, :]) ** 2, axis=2)
    log_pi = logit_pi - logsumexp(logit_pi)
    logp = log_pi - 0.5 * sq / np.exp(2.0 * log_sigma) - X.shape[1] * log_sigma
    return -np.sum(logsumexp(logp, axis=1))


def along_0(a, w):
    return np.sum(logsumexp(a * w, axis=0) ** 2)


def along_1(a, w):
    return np.sum(logsumexp(a * w, axis=1) ** 2)


def along_last(a, w):
    return np.sum(logsumexp(a * w, axis=-1) ** 2)


def along_all(a, w):
    return logsumexp(a * w) ** 2


def kept_dims(a):
    return np.sum(np.sin(logsumexp(a, axis=1, keepdims=True)) * a)


def weighted(a, b):
    return np.sum(logsumexp(a, axis=0, b=b))


def mixture_args(n, k, d):
    return (R.normal(size=(k, d)), R.normal(scale=0.2, size=k), R.normal(size=k),
            R.normal(size=(n, d)))


@pytest.mark.parametrize("n, k, d", [(7, 3, 2), (5, 4, 1), (1, 2, 3)])
def test_mixture_gradient(n, k, d):
    args = mixture_args(n, k, d)
    assert_grad_matches(mixture, args, wrt=(0, 1, 2))
    g = grad(mixture, wrt=(0, 1, 2))
    plain = g.as_function()
    for got, expected in zip(g(*args), plain(*args)):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
    assert "logsumexp_grad_a" not in g.source, g.source


@pytest.mark.parametrize("sizes", [{"points": 6, "components": 3, "dims": 2},
                                   {"points": 40, "components": 8, "dims": 4}])
def test_the_mixture_workloads_negated_adjoint_is_cancelled(sizes):
    """benchmarks/workloads/gmm_lse.py: logp's last term is a constant, so the adjoint
    that logsumexp's gradient gives (-exp) is a temporary's, negated again for 0.5 sq /
    sigma2 and summed for log_pi: neither negation is computed now."""
    from benchmarks.workloads import gmm_lse
    args = gmm_lse.make(sizes, np.random.default_rng(3))
    g = grad(gmm_lse.gmm_lse, wrt=(0, 1, 2))
    got = g(*args)
    assert "np.negative(" not in g.source and "-np.exp(" not in g.source, g.source
    for a, b in zip(got, gmm_lse.gmm_lse_hand(*args)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    if sizes["points"] < 10:
        assert_grad_matches(gmm_lse.gmm_lse, args, wrt=(0, 1, 2))


@pytest.mark.parametrize("f, shape", [(along_0, (4, 3)), (along_1, (4, 3)),
                                      (along_last, (2, 3, 4)), (along_1, (2, 3, 4)),
                                      (along_0, (2, 3, 4)), (along_all, (3, 2))])
def test_logsumexp_along_each_axis(f, shape):
    a, w = R.normal(size=shape), R.normal(size=shape[-1:])
    assert_grad_matches(f, (a, w))
    g = grad(f)
    g(a, w)
    assert "logsumexp_grad_a" not in g.source, g.source


def test_keepdims_and_weights_keep_the_helper_and_are_right():
    a, b = R.normal(size=(3, 4)), R.uniform(0.5, 2.0, size=(3, 4))
    assert_grad_matches(kept_dims, (a,))
    assert_grad_matches(weighted, (a, b))


def test_second_order_through_the_written_out_gradient():
    a, w = R.normal(size=(3, 4)), R.normal(size=4)
    f = along_1
    eps = 1e-5
    g = grad(f)
    expected = np.stack([(g(a + eps * e, w) - g(a - eps * e, w)) / (2 * eps)
                         for e in np.eye(a.size).reshape((a.size,) + a.shape)], axis=-1)
    np.testing.assert_allclose(hessian(f)(a, w), expected.reshape(a.shape * 2), rtol=1e-5,
                               atol=1e-7)
