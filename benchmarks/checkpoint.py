"""Checkpointed loops: grad(f, checkpoint="sqrt") against grad(f), peak memory and time.

    python benchmarks/checkpoint.py                     both workloads
    python benchmarks/checkpoint.py --steps 100000 --rnn-steps 300 --reps 3

Workloads: a scalar recurrence over a (1,) array (1e6 steps by default), the same written
as a `while` loop (segments of 1, 2, 3, ... trips) and the benchmark's tanh RNN (hidden 32, input 32) unrolled 1000 steps. Both gradients are checked
equal first (rtol 1e-9). Peak memory is what one call allocates above what was live before
it (tracemalloc, which sees NumPy's buffers); time is CPU time of this thread per call
(one BLAS thread), the two gradients called in turn, and the ratio is the median over repetitions of
checkpointed / plain (calls made moments apart).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

# one BLAS thread: this thread's CPU time is then all of a call's work
for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import timing  # noqa: E402
from benchmarks.workloads.rnn import rnn  # noqa: E402
from sgcompiler import grad  # noqa: E402


def recurrence(x, a, steps):
    h = x
    for t in range(steps):
        h = a * np.sin(h) + 0.1
    return np.sum(h * h)


def while_recurrence(x, a, steps):
    h = x
    k = 0
    while k < steps:            # (a trip count the loop finds as it runs, for checkpoint=)
        h = a * np.sin(h) + 0.1
        k = k + 1
    return np.sum(h * h)


def _rnn_args(steps, rng):
    hid = inp = 32
    W = rng.normal(scale=0.9 / np.sqrt(hid), size=(hid, hid))
    U = rng.normal(scale=1.0 / np.sqrt(inp), size=(hid, inp))
    b = rng.normal(scale=0.1, size=hid)
    xs = rng.normal(size=(steps, inp))
    return W, U, b, xs, np.zeros(hid), rng.normal(size=hid)


def _seconds(fn) -> float:
    start = time.thread_time()
    fn()
    return time.thread_time() - start


def measure(name, f, args, wrt, reps):
    """One row: peak bytes and seconds of each gradient, and their ratios."""
    plain = grad(f, wrt=wrt)
    checkpointed = grad(f, wrt=wrt, checkpoint="sqrt")
    a, b = plain(*args), checkpointed(*args)        # compiled here, and checked
    for x, y in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
        np.testing.assert_allclose(y, x, rtol=1e-9, atol=1e-12)
    memory = {k: timing.peak_bytes(lambda g=g: g(*args))
              for k, g in (("plain", plain), ("sqrt", checkpointed))}
    times = {"plain": [], "sqrt": []}
    for r in range(reps):
        order = (("plain", plain), ("sqrt", checkpointed))
        for k, g in order if r % 2 == 0 else order[::-1]:
            times[k].append(_seconds(lambda g=g: g(*args)))
    ratio = statistics.median(s / p for s, p in zip(times["sqrt"], times["plain"]))
    return (name, memory["plain"], memory["sqrt"], statistics.median(times["plain"]),
            statistics.median(times["sqrt"]), ratio)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--rnn-steps", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--rnn-reps", type=int, default=31)
    opts = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    rows = [measure(f"scalar recurrence, {opts.steps:g} steps", recurrence,
                    (np.array([0.3]), np.array([0.9]), opts.steps), (0, 1), opts.reps),
            measure(f"the same as a `while` loop, {opts.steps:g} steps", while_recurrence,
                    (np.array([0.3]), np.array([0.9]), opts.steps), (0, 1), opts.reps),
            measure(f"RNN, {opts.rnn_steps} steps, hidden 32", rnn,
                    _rnn_args(opts.rnn_steps, rng), (0, 1, 2), opts.rnn_reps)]
    print("| workload | peak MB plain | peak MB sqrt | memory sqrt/plain | s plain | s sqrt "
          "| time sqrt/plain |")
    print("|---|---|---|---|---|---|---|")
    for name, mp, ms, tp, ts, ratio in rows:
        print(f"| {name} | {mp / 1e6:.1f} | {ms / 1e6:.2f} | {ms / mp:.4f} | {tp:.3f} | "
              f"{ts:.3f} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
