"""Forward mode and second order against what they should cost, as ratios in one run.

    python benchmarks/forward.py            full sizes
    python benchmarks/forward.py --smoke    tiny sizes, correctness only (run by the tests)

- jvp of the RNN (benchmarks/workloads/rnn.py) against the forward pass (target <= 2x);
- the Hessian of a 100-parameter logistic regression (hessian(): forward over reverse, one
  jvp of the generated gradient per column) against the hand-written X.T @ (s * X)
  (target <= 1.5x);
- hvp of the MLP loss (benchmarks/workloads/mlp.py) with respect to W1 against one gradient
  with respect to W1 (target <= 4x).

Each result is first checked: the jvp against finite differences, the Hessian against the
closed form, the hvp against finite differences of the gradient.
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
from benchmarks.workloads import mlp as mlp_workload, rnn as rnn_workload  # noqa: E402
from sgcompiler import grad, hessian, hvp, jvp  # noqa: E402

SIZES = {"full": {"rnn": {"hidden": 32, "inputs": 32, "steps": 50},
                  "logreg": (2000, 100),
                  "mlp": {"batch": 128, "inputs": 784, "hidden": 256, "outputs": 10}},
         "smoke": {"rnn": {"hidden": 3, "inputs": 2, "steps": 4}, "logreg": (20, 4),
                   "mlp": {"batch": 4, "inputs": 5, "hidden": 3, "outputs": 2}}}


def logistic(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.sum(y * np.log(p) + (1.0 - y) * np.log(1.0 - p)) / X.shape[0]


def logistic_hessian_hand(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    s = p * (1.0 - p) / X.shape[0]
    return X.T @ (s[:, None] * X)


def _rnn_case(sizes, rng):
    args = rnn_workload.make(sizes, rng)
    tangents = tuple(rng.normal(size=a.shape) for a in args[:3]) + (None, None, None)
    fn = rnn_workload.rnn
    _, out_dot = jvp(fn, args, tangents)
    eps = 1e-6
    plus = [a + eps * t if t is not None else a for a, t in zip(args, tangents)]
    minus = [a - eps * t if t is not None else a for a, t in zip(args, tangents)]
    assert np.isclose(out_dot, (fn(*plus) - fn(*minus)) / (2 * eps), rtol=1e-5)
    return {"forward": lambda: fn(*args), "jvp": lambda: jvp(fn, args, tangents)}


def _logreg_case(shape, rng):
    n, d = shape
    X = rng.normal(size=(n, d))
    y = (rng.random(n) > 0.5).astype(float)
    w = rng.normal(size=d) / np.sqrt(d)
    H = hessian(logistic)
    np.testing.assert_allclose(H(w, X, y), logistic_hessian_hand(w, X, y), rtol=1e-9,
                               atol=1e-12)
    return {"hand X.T @ (s * X)": lambda: logistic_hessian_hand(w, X, y),
            "hessian": lambda: H(w, X, y)}


def _mlp_case(sizes, rng):
    W1, b1, W2, b2, X, Y = mlp_workload.make(sizes, rng)
    rest = (b1, W2, b2, X, Y)
    v = rng.normal(size=W1.shape)
    g = grad(mlp_workload.mlp)
    eps = 1e-6
    fd = (g(W1 + eps * v, *rest) - g(W1 - eps * v, *rest)) / (2 * eps)
    np.testing.assert_allclose(hvp(mlp_workload.mlp, W1, v, *rest), fd, rtol=1e-4,
                               atol=1e-7)
    return {"gradient": lambda: g(W1, *rest),
            "hvp": lambda: hvp(mlp_workload.mlp, W1, v, *rest)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--budget", type=float, default=3.0, help="seconds per workload")
    args = parser.parse_args(argv)
    sizes = SIZES["smoke" if args.smoke else "full"]
    rng = np.random.default_rng(0)
    cases = [("jvp of the RNN / forward pass", _rnn_case(sizes["rnn"], rng), 2.0),
             ("Hessian of logistic regression / hand-written", _logreg_case(
                 sizes["logreg"], rng), 1.5),
             ("hvp of the MLP loss / one gradient", _mlp_case(sizes["mlp"], rng), 4.0)]
    if args.smoke:
        print("forward-mode benchmarks: results checked")
        return 0
    print("| workload | ratio | target | times |\n|---|---|---|---|")
    for title, contenders, target in cases:
        samples = timing.interleaved(contenders, args.budget)
        base, ours = list(contenders)
        ratio = timing.paired_ratio(samples[ours], samples[base])
        times = ", ".join(f"{n} {t * 1e3:.3g} ms" for n, t in timing.medians(samples).items())
        print(f"| {title} | {ratio:.2f}x | <= {target}x | {times} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
