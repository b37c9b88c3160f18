"""Gradients over dask arrays larger than memory: sgcompiler against the hand-written
gradient on the same dask arrays, and against NumPy where the data fits.

    python benchmarks/dask_scale.py                      2e7 rows, 1e6-row chunks
    python benchmarks/dask_scale.py --rows 2e8           16 GB of data, never in memory
    python benchmarks/dask_scale.py --smoke              tiny sizes, correctness only

Workloads (10 features; the data is generated lazily by dask, chunk by chunk, from a seed):
- **logistic regression**: mean binary cross-entropy of sigmoid(X @ w) against labels y.
- **softmax regression**: mean cross-entropy of softmax(X @ W) against one-hot labels Y
  (4 classes), with the stable `z - stop_gradient(max(z))`.

Each measurement runs in a fresh process (so its peak resident memory, `ru_maxrss`, is its
own): it builds the lazy data, makes the gradient (lazy) and computes it with dask's
threaded scheduler. Rounds interleave the methods (hand-written, sgcompiler, NumPy); the
report gives the median time and the largest peak resident memory of each, how much of it
the gradient's computation added, and the ratios to the hand-written dask gradient. Every run first checks that the gradients agree (rtol 1e-8).
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sgcompiler import grad, stop_gradient  # noqa: E402

FEATURES = 10
CLASSES = 4
RTOL = 1e-8


def logistic_loss(w, X, y):
    z = X @ w
    p = 1.0 / (1.0 + np.exp(-z))
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def logistic_hand(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return X.T @ (p - y) / X.shape[0]


def softmax_loss(W, X, Y):
    z = X @ W
    z = z - stop_gradient(np.max(z, axis=1, keepdims=True))
    lse = np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.sum(Y * (z - lse)) / X.shape[0]


def softmax_hand(W, X, Y):
    z = X @ W
    e = np.exp(z - np.max(z, axis=1, keepdims=True))
    s = e / np.sum(e, axis=1, keepdims=True)
    return X.T @ (s - Y) / X.shape[0]


WORKLOADS = {"logistic": (logistic_loss, logistic_hand),
             "softmax": (softmax_loss, softmax_hand)}


def lazy_data(workload: str, rows: int, chunk: int, seed: int = 0):
    """The parameters (NumPy) and the data (dask arrays, generated chunk by chunk)."""
    import dask.array as da
    rng = np.random.default_rng(seed)
    X = da.random.RandomState(seed).normal(size=(rows, FEATURES), chunks=(chunk, FEATURES))
    if workload == "logistic":
        truth = rng.normal(size=FEATURES)
        y = (X @ truth > 0).astype(float)
        return rng.normal(size=FEATURES) * 0.1, X, y
    truth = rng.normal(size=(FEATURES, CLASSES))
    labels = da.argmax(X @ truth, axis=1)
    Y = (labels[:, None] == np.arange(CLASSES)).astype(float)
    return rng.normal(size=(FEATURES, CLASSES)) * 0.1, X, Y


def gradient(workload: str, method: str, params, X, y):
    """The gradient by `method`: 'hand' or 'sgcompiler' (lazy on dask data; 'numpy':
    sgcompiler's gradient on NumPy data)."""
    loss, hand = WORKLOADS[workload]
    return hand(params, X, y) if method == "hand" else grad(loss)(params, X, y)


def measure_one(workload: str, method: str, rows: int, chunk: int, threads: int) -> dict:
    """Time and peak memory of one gradient, computed in this process. Every method first
    compiles sgcompiler's gradient on small data of the same kinds (so compile time and
    the compiler's memory are left out, and each process starts from the same state);
    the memory is the resident size sampled every 2 ms while the gradient is made and
    computed, less the size just before."""
    import dask
    loss = WORKLOADS[workload][0]
    params, X, y = lazy_data(workload, rows, chunk)
    small = lazy_data(workload, 2 * 64, 64)
    with dask.config.set(scheduler="sync"):
        grad(loss)(*small).compute()
    with _PeakMemory() as memory, dask.config.set(scheduler="threads", num_workers=threads):
        start = time.perf_counter()
        if method == "numpy":       # the data in memory, then the gradient on it
            X, y = X.compute(), y.compute()
            data = time.perf_counter() - start
            grad(loss)(params, X, y)        # (compiled for these shapes: not timed)
            start = time.perf_counter() - data
        g = gradient(workload, method, params, X, y)
        lazy = hasattr(g, "dask")
        g = np.asarray(g.compute() if lazy else g)
        seconds = time.perf_counter() - start
    return {"seconds": seconds, "peak_mb": memory.peak_mb, "base_mb": memory.base_mb,
            "lazy": lazy, "gradient": g.tolist()}


class _PeakMemory:
    """The largest resident size of this process while the block runs (a thread samples
    /proc/self/statm), and the size when it started, in MB."""

    def __enter__(self):
        import threading
        self.base_mb = self.peak_mb = _resident_mb()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self):
        while not self._done.wait(0.002):
            self.peak_mb = max(self.peak_mb, _resident_mb())

    def __exit__(self, *exc):
        self._done.set()
        self._thread.join()
        self.peak_mb = max(self.peak_mb, _resident_mb())


def _resident_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2 ** 20


def measure(workload, method, rows, chunk, threads) -> dict:
    """measure_one in a fresh Python process."""
    out = subprocess.run([sys.executable, __file__, "--one", workload, method, str(rows),
                          str(chunk), str(threads)], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(rows: int, chunk: int, repeat: int, threads: int, numpy_rows: float,
        workloads=tuple(WORKLOADS)) -> list[dict]:
    """Interleaved rounds of every method on every workload; one row per (workload,
    method): median seconds, largest peak MB, and the gradient of the last run."""
    methods = ["hand", "sgcompiler"] + (["numpy"] if rows <= numpy_rows else [])
    results = []
    for workload in workloads:
        runs = {m: [] for m in methods}
        for _ in range(repeat):
            for m in methods:
                runs[m].append(measure(workload, m, rows, chunk, threads))
        for m in methods:
            results.append({"workload": workload, "method": m,
                            "seconds": statistics.median(r["seconds"] for r in runs[m]),
                            "peak_mb": max(r["peak_mb"] for r in runs[m]),
                            "grown_mb": max(r["peak_mb"] - r["base_mb"] for r in runs[m]),
                            "lazy": runs[m][-1]["lazy"],
                            "gradient": np.array(runs[m][-1]["gradient"])})
    return results


def check(results) -> list[str]:
    """The workloads whose gradients disagree with the hand-written one."""
    wrong = []
    for r in results:
        hand = next(h for h in results if h["workload"] == r["workload"] and
                    h["method"] == "hand")
        if not np.allclose(r["gradient"], hand["gradient"], rtol=RTOL, atol=1e-12):
            wrong.append(f"{r['workload']} ({r['method']})")
    return wrong


def table(results, rows, chunk) -> str:
    lines = [f"{rows:.0e} rows x {FEATURES} features in {chunk:.0e}-row chunks "
             f"({rows * FEATURES * 8 / 1e9:.1f} GB of X)", "",
             "| workload | method | time (s) | peak memory (MB) | of which the gradient (MB) "
             "| time / hand | gradient memory / hand |", "|---|---|---|---|---|---|---|"]
    for r in results:
        hand = next(h for h in results if h["workload"] == r["workload"] and
                    h["method"] == "hand")
        lines.append(f"| {r['workload']} | {r['method']} | {r['seconds']:.2f} | "
                     f"{r['peak_mb']:.0f} | {r['grown_mb']:.0f} | "
                     f"{r['seconds'] / hand['seconds']:.2f} | "
                     f"{r['grown_mb'] / hand['grown_mb']:.2f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=2e7)
    parser.add_argument("--chunk", type=float, default=1e6)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--numpy-rows", type=float, default=2e7,
                        help="also NumPy (the data computed into memory) up to this size")
    parser.add_argument("--only", default=",".join(WORKLOADS))
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--one", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        workload, method, rows, chunk, threads = args.one
        print(json.dumps(measure_one(workload, method, int(rows), int(chunk), int(threads))))
        return 0
    if args.smoke:
        args.rows, args.chunk, args.repeat = 2000, 500, 1
    rows, chunk = int(args.rows), int(args.chunk)
    results = run(rows, chunk, args.repeat, args.threads, args.numpy_rows,
                  tuple(args.only.split(",")))
    print(table(results, rows, chunk))
    wrong = check(results)
    for r in results:
        if r["method"] != "numpy" and not r["lazy"]:
            wrong.append(f"{r['workload']} ({r['method']}): computed eagerly, not lazy")
    for w in wrong:
        print(f"WRONG: {w}", file=sys.stderr)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
