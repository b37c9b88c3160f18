"""sgcompiler gradients for scipy.optimize.minimize, against scipy's finite differences.

`value_and_grad(f)` returns a function that gives (f(x), grad f(x)) from one run of the
generated code, which is exactly what `scipy.optimize.minimize(..., jac=True)` expects.
Without a gradient, scipy estimates one by finite differences: n + 1 evaluations of f per
gradient in n dimensions, and an approximate gradient that limits how far the optimiser
can go. This sample minimises the Rosenbrock function and an L2-regularised logistic
regression both ways, with the same method (BFGS), and compares iterations, function
evaluations and the result.

SciPy is optional for sgcompiler; to run this sample:  python3 -m pip install scipy

Run:  python samples/scipy_minimize.py
See the code:  sgcompiler samples/scipy_minimize.py:logistic_loss
Explain it:  sgcompiler explain samples/scipy_minimize.py:logistic_loss
"""
import time

import numpy as np

from sgcompiler import value_and_grad


def rosenbrock(x):
    """The Rosenbrock function in len(x) dimensions; its minimum is 0 at x = (1, ..., 1)."""
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def logistic_loss(w, X, y, lam):
    """Mean logistic loss of a linear classifier with labels y in {0, 1}, plus lam |w|^2 / 2."""
    z = X @ w
    nll = np.mean(np.maximum(z, 0.0) + np.log1p(np.exp(-np.abs(z))) - y * z)
    return nll + 0.5 * lam * np.sum(w ** 2)


def make_classification(rng, n=500, d=20):
    """Labels from a noisy linear rule on Gaussian features (with a constant column)."""
    X = np.concatenate([rng.normal(size=(n, d - 1)), np.ones((n, 1))], axis=1)
    w_true = rng.normal(size=d)
    y = (X @ w_true + rng.normal(size=n) > 0) * 1.0
    return X, y


def newton_minimiser(X, y, lam, steps=30):
    """The exact minimiser of logistic_loss, by Newton's method with hand-written derivatives."""
    w = np.zeros(X.shape[1])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(X @ w)))
        g = X.T @ (p - y) / len(y) + lam * w
        H = (X.T * (p * (1.0 - p))) @ X / len(y) + lam * np.eye(len(w))
        w = w - np.linalg.solve(H, g)
    return w


def compare(f, x0, args=()):
    """minimize f from x0 with BFGS, with sgcompiler's gradient and by finite differences.

    Returns {'sgcompiler' | 'finite differences': (scipy result, seconds)}.
    """
    from scipy.optimize import minimize
    out = {}
    f_and_grad = value_and_grad(f)
    f_and_grad(x0, *args)                     # compile once, outside the timing
    start = time.perf_counter()
    res = minimize(f_and_grad, x0, args=args, jac=True, method="BFGS")
    out["sgcompiler"] = (res, time.perf_counter() - start)
    start = time.perf_counter()
    res = minimize(f, x0, args=args, method="BFGS")          # jac=None: finite differences
    out["finite differences"] = (res, time.perf_counter() - start)
    return out


def print_comparison(title, results, error):
    print(title)
    print("  gradient             iterations   f evaluations   final f          error     time")
    for name, (res, seconds) in results.items():
        print(f"  {name:20s} {res.nit:10d}   {res.nfev:13d}   {res.fun:<14.6e}  "
              f"{error(res.x):8.1e}  {seconds * 1e3:5.0f} ms")


def main():
    try:
        import scipy  # noqa: F401
    except ImportError:
        print("This sample needs SciPy, an optional dependency: python3 -m pip install scipy")
        return
    n = 10
    x0 = np.full(n, -1.0)
    x0[::2] = -1.2
    print_comparison(f"Rosenbrock in {n} dimensions, from (-1.2, -1, -1.2, ...); "
                     "error = max |x - 1|", compare(rosenbrock, x0),
                     lambda x: np.max(np.abs(x - 1.0)))
    print()
    rng = np.random.default_rng(0)
    X, y = make_classification(rng)
    lam = 1e-2
    args = (X, y, lam)
    w_star = newton_minimiser(X, y, lam)
    print_comparison(f"logistic regression, {X.shape[0]} examples, {X.shape[1]} weights, "
                     f"lam = {lam}; error = max |w - w*| (w* by Newton's method)",
                     compare(logistic_loss, np.zeros(X.shape[1]), args),
                     lambda w: np.max(np.abs(w - w_star)))

if __name__ == "__main__":
    main()
