"""Benchmarks of the reverse-mode half of issue 14: a gradient inside a loss, a Jacobian.

    python benchmarks/higher_order.py            full sizes, a markdown table
    python benchmarks/higher_order.py --smoke    tiny sizes, correctness only (the tests)

Workloads:
- **input-gradient penalty** (a physics-informed / gradient-penalty loss): a one-hidden-
  layer network u(X) = tanh(X @ W1) @ w2 over a batch, and the loss
  mean((u - y)^2) + lam * mean(|du/dX|^2), whose du/dX is `grad(...)` called inside the
  loss; differentiated with respect to (W1, w2): grad of (a function calling) grad.
- **Jacobian of a 50-output function**: f(x) = tanh(A @ x) * (B @ x ** 2), x of 200,
  `jacobian(f)` in reverse mode (one generated backward call per output).

Each is checked against autograd when it is installed (and, in --smoke, against finite
differences), and timed side by side with the forward pass and autograd
(benchmarks.timing.interleaved: ratios of medians measured in the same run).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import timing  # noqa: E402
from sgcompiler import grad, jacobian  # noqa: E402

try:
    import autograd
    import autograd.numpy as anp
except ImportError:       # optional
    autograd = anp = None


# --- the input-gradient penalty ---------------------------------------------------------

def network_sum(W1, w2, X):
    return np.sum(np.tanh(X @ W1) @ w2)


def penalised_loss(W1, w2, X, y, lam):
    u = np.tanh(X @ W1) @ w2
    dX = grad(network_sum, wrt=2)(W1, w2, X)     # du_i/dX_i, row by row
    return np.mean((u - y) ** 2) + lam * np.mean(np.sum(dX ** 2, axis=1))


def _autograd_penalised_loss():
    def network_sum_ag(W1, w2, X):
        return anp.sum(anp.dot(anp.tanh(anp.dot(X, W1)), w2))

    def loss(W1, w2, X, y, lam):
        u = anp.dot(anp.tanh(anp.dot(X, W1)), w2)
        dX = autograd.grad(network_sum_ag, 2)(W1, w2, X)
        return anp.mean((u - y) ** 2) + lam * anp.mean(anp.sum(dX ** 2, axis=1))
    return loss


def penalty_data(n, d, h, rng):
    return (rng.normal(size=(d, h)) / np.sqrt(d), rng.normal(size=h) / np.sqrt(h),
            rng.normal(size=(n, d)), rng.normal(size=n), 0.1)


# --- the Jacobian of a 50-output function --------------------------------------------------

A_ROWS = 50


def fifty(x, A, B):
    return np.tanh(A @ x) * (B @ x ** 2)


def jacobian_data(d, rng):
    return rng.normal(size=d), rng.normal(size=(A_ROWS, d)) / np.sqrt(d), \
        rng.normal(size=(A_ROWS, d)) / d


def _autograd_fifty(x, A, B):
    return anp.tanh(anp.dot(A, x)) * anp.dot(B, x ** 2)


# --- running -----------------------------------------------------------------------------

def contenders(smoke: bool):
    """(workload title, {contender: call}, {contender: result to compare}) for each."""
    rng = np.random.default_rng(0)
    n, d, h = (8, 3, 4) if smoke else (2000, 20, 64)
    W1, w2, X, y, lam = penalty_data(n, d, h, rng)
    sg_grad = grad(penalised_loss, wrt=(0, 1))
    penalty = {"forward pass": lambda: penalised_loss(W1, w2, X, y, lam),
               "sgcompiler grad": lambda: sg_grad(W1, w2, X, y, lam)}
    if autograd is not None:
        ag_grad = autograd.grad(_autograd_penalised_loss(), (0, 1))
        penalty["autograd grad"] = lambda: ag_grad(W1, w2, X, y, lam)
    x, A, B = jacobian_data(6 if smoke else 200, rng)
    sg_jac = jacobian(fifty)
    jac = {"forward pass": lambda: fifty(x, A, B), "sgcompiler jacobian": lambda: sg_jac(x, A, B)}
    if autograd is not None:
        ag_jac = autograd.jacobian(_autograd_fifty)
        jac["autograd jacobian"] = lambda: ag_jac(x, A, B)
    return [(f"input-gradient penalty loss, grad wrt (W1, w2) ({n}x{d}, {h} hidden)",
             penalty, ("sgcompiler grad", "autograd grad")),
            (f"Jacobian of a {A_ROWS}-output function of {x.size} inputs", jac,
             ("sgcompiler jacobian", "autograd jacobian"))]


def check(calls, pair) -> str:
    """'' when sgcompiler's result equals autograd's (when installed)."""
    ours = calls[pair[0]]()
    if pair[1] not in calls:
        return ""
    theirs = calls[pair[1]]()
    ours, theirs = (ours if isinstance(ours, tuple) else (ours,)), \
        (theirs if isinstance(theirs, tuple) else (theirs,))
    for a, b in zip(ours, theirs):
        if not np.allclose(a, b, rtol=1e-8, atol=1e-10):
            return f"{pair[0]} differs from {pair[1]} by {np.max(np.abs(a - b)):.3g}"
    return ""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--budget", type=float, default=20.0, help="seconds per workload")
    args = parser.parse_args(argv)
    status = 0
    lines = ["| workload | contender | median time | x forward | x sgcompiler |",
             "| --- | --- | --- | --- | --- |"]
    for title, calls, pair in contenders(args.smoke):
        problem = check(calls, pair)
        if problem:
            print(f"WRONG: {title}: {problem}")
            status = 1
        if args.smoke:
            continue
        samples = timing.interleaved(calls, args.budget)
        median = {k: float(np.median(v)) for k, v in samples.items()}
        for name, t in median.items():
            lines.append(f"| {title} | {name} | {t * 1e3:.3f} ms | "
                         f"{t / median['forward pass']:.2f} | {t / median[pair[0]]:.2f} |")
    if not args.smoke:
        print("\n".join(lines))
        if autograd is None:
            print("\n(autograd is not installed: no comparison)")
    return status


if __name__ == "__main__":
    sys.exit(main())
