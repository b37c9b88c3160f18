"""Batched against per-column Hessians: `hessian` runs the tangent code of the gradient
once with every unit direction along a leading axis (forward/batch.py); where it cannot,
it runs it once per column. This times both on the same workloads, side by side
(interleaved samples, the median of the paired ratios), for the workloads whose gradient
code has a tape or shapes the compiler does not know (loops, helpers, ReLU masks), which
session 8 made batched.

    PYTHONPATH=. python3 benchmarks/batched_hessians.py [--smoke] [--budget 20]
"""
from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

# one BLAS thread (set it otherwise to compare threaded BLAS): on a shared machine a
# threaded matrix product of the batched code waits for the others' cores
for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import timing  # noqa: E402
from benchmarks.workloads import logreg, mlp_relu, rnn, rnn_batched  # noqa: E402
from sgcompiler import PerColumnWarning, derivatives, hessian  # noqa: E402

# (workload, the parameter, sizes: smaller than the gradient benchmark's, since one
# per-column Hessian runs the tangent code once per element)
CASES = [
    (logreg.WORKLOAD, "w", {"examples": 2000, "features": 30}),
    (rnn.WORKLOAD, "W", {"hidden": 8, "inputs": 8, "steps": 20}),
    (rnn.WORKLOAD, "b", {"hidden": 16, "inputs": 8, "steps": 20}),
    (rnn_batched.WORKLOAD, "b", {"hidden": 16, "inputs": 8, "steps": 20, "batch": 8}),
    (mlp_relu.WORKLOAD, "b1", {"batch": 64, "inputs": 16, "hidden": 32, "outputs": 4}),
]


def per_column(f, name, args):
    """hessian(f) with the batched path switched off: one jvp per column."""
    saved = derivatives._batched_jacobian
    derivatives._batched_jacobian = lambda *a: None
    try:
        return hessian(f, wrt=name)(*args)
    finally:
        derivatives._batched_jacobian = saved


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="the workloads' smoke sizes")
    parser.add_argument("--budget", type=float, default=20.0, help="seconds per case")
    options = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    print("| workload | parameter (size) | batched / per column | batched | per column |")
    print("|---|---|---|---|---|")
    for workload, name, sizes in CASES:
        args = workload.make(workload.sizes["smoke"] if options.smoke else sizes, rng)
        batched = hessian(workload.fn, wrt=name)
        with warnings.catch_warnings():
            warnings.simplefilter("error", PerColumnWarning)     # (it must be batched)
            H = batched(*args)
        np.testing.assert_allclose(H, per_column(workload.fn, name, args), rtol=1e-10,
                                   atol=1e-12)
        samples = timing.interleaved(
            {"batched": lambda: batched(*args),
             "per column": lambda: per_column(workload.fn, name, args)},
            options.budget, min_reps=5 if not options.smoke else 2, max_reps=30)
        medians = timing.medians(samples)
        ratio = timing.paired_ratio(samples["batched"], samples["per column"])
        size = int(np.size(args[list(workload.fn.__code__.co_varnames).index(name)]))
        print(f"| {workload.name} | {name} ({size}) | {ratio:.3f}x | "
              f"{medians['batched'] * 1e3:.2f} ms | {medians['per column'] * 1e3:.2f} ms |")


if __name__ == "__main__":
    main()
