"""The EM objective of a diagonal Gaussian mixture, responsibilities under stop_gradient.

    Q(mu, log_sigma, log_w) = sum_ik r_ik log(pi_k N(x_i | mu_k, sigma_k)),  r = stop_gradient(E-step)

Its gradient is the M-step direction (n=2000 points, k=5 components, d=2).
"""
import math

import numpy as np

from sgcompiler import stop_gradient

from . import Workload


def gmm_em(mu, log_sigma, log_w, X):
    d = X.shape[1]
    diff = X[:, None, :] - mu
    inv_var = np.exp(-2.0 * log_sigma)
    log_norm = (-0.5 * np.sum(diff * diff * inv_var, axis=2) - np.sum(log_sigma, axis=1)
                - 0.5 * d * math.log(2.0 * math.pi))
    m = stop_gradient(np.max(log_w))
    log_pi = log_w - m - np.log(np.sum(np.exp(log_w - m)))
    log_joint = log_norm + log_pi
    p = np.exp(log_joint - stop_gradient(np.max(log_joint, axis=1, keepdims=True)))
    r = stop_gradient(p / np.sum(p, axis=1, keepdims=True))
    return np.sum(r * log_joint)


def gmm_log_likelihood(mu, log_sigma, log_w, X):
    """The log-likelihood; at the E-step's r its derivative equals that of the EM objective
    with r held fixed, so it checks the hand-written gradient by finite differences."""
    d = X.shape[1]
    diff = X[:, None, :] - mu
    log_norm = (-0.5 * np.sum(diff * diff * np.exp(-2.0 * log_sigma), axis=2)
                - np.sum(log_sigma, axis=1) - 0.5 * d * math.log(2.0 * math.pi))
    log_joint = log_norm + log_w - np.log(np.sum(np.exp(log_w)))
    top = np.max(log_joint, axis=1, keepdims=True)
    return np.sum(np.log(np.sum(np.exp(log_joint - top), axis=1)) + top[:, 0])


def gmm_em_hand(mu, log_sigma, log_w, X):
    d = X.shape[1]
    diff = X[:, None, :] - mu                          # (n, k, d)
    inv_var = np.exp(-2.0 * log_sigma)                 # (k, d)
    sq = diff * diff
    log_joint = np.sum(sq * inv_var, axis=2)           # (n, k)
    log_joint *= -0.5
    m = np.max(log_w)
    w = np.exp(log_w - m)
    total = np.sum(w)
    log_joint += (log_w - m - np.log(total)) - np.sum(log_sigma, axis=1) \
        - 0.5 * d * math.log(2.0 * math.pi)
    r = log_joint - np.max(log_joint, axis=1, keepdims=True)
    np.exp(r, out=r)
    r /= np.sum(r, axis=1, keepdims=True)              # the E-step; d Q / d log_joint = r
    rs = np.sum(r, axis=0)
    dlog_w = rs - (w / total) * np.sum(rs)
    rd = r[:, :, None] * diff
    dmu = np.sum(rd, axis=0)
    dmu *= inv_var
    sq *= r[:, :, None]
    dlog_sigma = np.sum(sq, axis=0)
    dlog_sigma *= inv_var
    dlog_sigma -= rs[:, None]
    return dmu, dlog_sigma, dlog_w


def make(sizes, rng):
    n, k, d = sizes["n"], sizes["k"], sizes["d"]
    centers = rng.normal(scale=4.0, size=(k, d))
    X = centers[rng.integers(0, k, size=n)] + rng.normal(size=(n, d))
    mu = centers + rng.normal(scale=0.5, size=(k, d))
    log_sigma = rng.normal(scale=0.1, size=(k, d))
    log_w = rng.normal(scale=0.1, size=k)
    return mu, log_sigma, log_w, X


def for_torch(torch):
    def gmm_em_torch(mu, log_sigma, log_w, X):
        d = X.shape[1]
        diff = X[:, None, :] - mu
        inv_var = torch.exp(-2.0 * log_sigma)
        log_norm = (-0.5 * torch.sum(diff * diff * inv_var, dim=2)
                    - torch.sum(log_sigma, dim=1) - 0.5 * d * math.log(2.0 * math.pi))
        m = torch.max(log_w).detach()
        log_pi = log_w - m - torch.log(torch.sum(torch.exp(log_w - m)))
        log_joint = log_norm + log_pi
        p = torch.exp(log_joint - torch.max(log_joint, dim=1, keepdim=True).values.detach())
        r = (p / torch.sum(p, dim=1, keepdim=True)).detach()
        return torch.sum(r * log_joint)
    return gmm_em_torch


WORKLOAD = Workload(
    name="gmm_em", title="GMM EM objective, r under stop_gradient (n=2000,k=5,d=2)",
    fn=gmm_em, wrt=("mu", "log_sigma", "log_w"), hand=gmm_em_hand, make=make,
    sizes={"full": {"n": 2000, "k": 5, "d": 2}, "smoke": {"n": 9, "k": 3, "d": 2}},
    torch=for_torch, reference=gmm_log_likelihood)
