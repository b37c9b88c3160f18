"""L2-regularised logistic regression, labels +-1 (10000 examples x 100 features)."""
import numpy as np

from . import Workload


def logreg(w, X, y, lam):
    z = X @ w
    return np.mean(np.log1p(np.exp(-y * z))) + lam * np.sum(w * w)


def logreg_hand(w, X, y, lam):
    n = X.shape[0]
    # d/dz mean(log1p(exp(-y z))) = -y / (1 + exp(y z)) / n
    t = X @ w
    t *= y
    np.exp(t, out=t)
    t += 1.0
    np.divide(y, t, out=t)
    t *= -1.0 / n
    g = X.T @ t
    g += (2.0 * lam) * w
    return g


def make(sizes, rng):
    n, d = sizes["examples"], sizes["features"]
    X = rng.normal(size=(n, d))
    w_true = rng.normal(size=d) / np.sqrt(d)
    y = np.where(X @ w_true + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    w = rng.normal(scale=0.1, size=d)
    return w, X, y, 0.01


def for_torch(torch):
    def logreg_torch(w, X, y, lam):
        z = X @ w
        return torch.mean(torch.log1p(torch.exp(-y * z))) + lam * torch.sum(w * w)
    return logreg_torch


WORKLOAD = Workload(
    name="logreg", title="L2 logistic regression (10000x100)",
    fn=logreg, wrt=("w",), hand=logreg_hand, make=make,
    sizes={"full": {"examples": 10000, "features": 100},
           "smoke": {"examples": 20, "features": 5}},
    torch=for_torch)
