"""The negative log-likelihood of an isotropic Gaussian mixture written with
scipy.special.logsumexp (2000 points, 8 components, 4 dimensions)."""
import numpy as np

from . import Workload

try:
    from scipy.special import logsumexp
except ImportError:     # SciPy is optional: the workload is then left out
    logsumexp = None


def gmm_lse(mu, log_sigma, logit_pi, X):
    d = X.shape[1]
    sq = np.sum((X[:, None, :] - mu[None, :, :]) ** 2, axis=2)
    sigma2 = np.exp(2.0 * log_sigma)
    log_pi = logit_pi - logsumexp(logit_pi)
    logp = log_pi - 0.5 * sq / sigma2 - d * log_sigma - 0.5 * d * np.log(2.0 * np.pi)
    return -np.sum(logsumexp(logp, axis=1))


def gmm_lse_hand(mu, log_sigma, logit_pi, X):
    n, d = X.shape
    diff = X[:, None, :] - mu[None, :, :]
    sq = np.sum(diff ** 2, axis=2)
    sigma2 = np.exp(2.0 * log_sigma)
    lse_pi = logsumexp(logit_pi)
    log_pi = logit_pi - lse_pi
    logp = log_pi - 0.5 * sq / sigma2 - d * log_sigma - 0.5 * d * np.log(2.0 * np.pi)
    # responsibilities: the softmax of logp along the components
    r = np.exp(logp - logsumexp(logp, axis=1, keepdims=True))
    counts = np.sum(r, axis=0)
    dlogit_pi = n * np.exp(logit_pi - lse_pi) - counts
    # d sq / d mu = -2 diff, and 1 / sigma2 does not depend on the point: out of the sum
    dmu = np.sum(r[:, :, None] * diff, axis=0)
    dmu /= -sigma2[:, None]
    dlog_sigma = d * counts - np.sum(r * sq, axis=0) / sigma2
    return dmu, dlog_sigma, dlogit_pi


def make(sizes, rng):
    n, k, d = sizes["points"], sizes["components"], sizes["dims"]
    mu = rng.normal(scale=2.0, size=(k, d))
    log_sigma = rng.normal(scale=0.2, size=k)
    logit_pi = rng.normal(scale=0.5, size=k)
    X = rng.normal(scale=2.0, size=(n, d))
    return mu, log_sigma, logit_pi, X


WORKLOAD = Workload(
    name="gmm_lse", title="Gaussian mixture NLL with scipy.special.logsumexp (2000 x 8 x 4)",
    fn=gmm_lse, wrt=("mu", "log_sigma", "logit_pi"), hand=gmm_lse_hand, make=make,
    sizes={"full": {"points": 2000, "components": 8, "dims": 4},
           "smoke": {"points": 6, "components": 3, "dims": 2}},
    jit=False)
