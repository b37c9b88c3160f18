"""What would optimizer passes buy? The generated gradient, transformed by hand, step by step.

    python benchmarks/optimizer_variants.py            softmax_xent, elementwise, mlp
    python benchmarks/optimizer_variants.py --only mlp

For three array workloads, the code sgcompiler generated when this file was written
(before main's broadcast-scalar seed and in-place `dz +=`; v0 is whatever it generates now)
is rewritten by hand the way a pass would rewrite it, one kind of rewrite after the
other, and every variant is timed side by side with the generated code and the hand-written
gradient (each workload in a fresh process, glibc's default allocator):

    v0  the generated function, called directly (no API overhead)
    v1  + ownership: adjoints that are fresh arrays are accumulated in place and returned
          without np.copy; a scalar seed stays a scalar (no unreduce(1.0, ...) broadcast,
          no multiplication by a broadcast 1.0); unbroadcast(-g, x) sums before negating
    v2  + gradient only: statements that only compute the loss value are dropped
    v3  + liveness: `del` each array after its last use (lower peak memory; glibc trims the
          freed top of the heap at once, so this alone saves few page faults)
    v4  + buffer reuse: an operation whose operand dies there writes into it (`out=`,
          `*=`), so no new multi-megabyte array is faulted in (softmax, elementwise)

Each variant is checked against the hand-written gradient before it is timed. The variants
are an experiment record, not code the compiler uses.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import report, systems, timing  # noqa: E402
from benchmarks.run import faults_per_call  # noqa: E402
from benchmarks.workloads import all_workloads  # noqa: E402

# --- softmax cross-entropy -----------------------------------------------------------------


def softmax_v1(logits, labels):
    _max = np.max(logits, axis=1, keepdims=True)
    z = logits - _max
    _exp = np.exp(z)
    _sum = np.sum(_exp, axis=1, keepdims=True)
    lse = np.log(_sum)
    _sub = z - lse
    _mul = labels * _sub
    _sum2 = np.sum(_mul)
    n = logits.shape[0]
    result = -_sum2 / n
    d_sub = (-1.0 / n) * labels
    dz = d_sub
    dlse = -np.sum(d_sub, axis=1, keepdims=True)
    d_sum = dlse / _sum
    dz += d_sum * _exp
    return result, dz


def softmax_v2(logits, labels):
    _max = np.max(logits, axis=1, keepdims=True)
    z = logits - _max
    _exp = np.exp(z)
    _sum = np.sum(_exp, axis=1, keepdims=True)
    n = logits.shape[0]
    d_sub = (-1.0 / n) * labels
    dz = d_sub
    dlse = -np.sum(d_sub, axis=1, keepdims=True)
    d_sum = dlse / _sum
    dz += d_sum * _exp
    return None, dz


def softmax_v3(logits, labels):
    _max = np.max(logits, axis=1, keepdims=True)
    z = logits - _max
    del _max
    _exp = np.exp(z)
    del z
    _sum = np.sum(_exp, axis=1, keepdims=True)
    n = logits.shape[0]
    d_sub = (-1.0 / n) * labels
    dz = d_sub
    dlse = -np.sum(d_sub, axis=1, keepdims=True)
    d_sum = dlse / _sum
    del dlse, _sum
    dz += d_sum * _exp
    return None, dz


def softmax_v4(logits, labels):
    _max = np.max(logits, axis=1, keepdims=True)
    z = logits - _max
    _exp = np.exp(z, out=z)
    _sum = np.sum(_exp, axis=1, keepdims=True)
    n = logits.shape[0]
    d_sub = (-1.0 / n) * labels
    dz = d_sub
    dlse = -np.sum(d_sub, axis=1, keepdims=True)
    d_sum = dlse / _sum
    _exp *= d_sum
    dz += _exp
    return None, dz


# --- elementwise -------------------------------------------------------------------------


def elementwise_v1(x, y):
    _sin = np.sin(x)
    _neg = -y
    _mul = _neg * y
    _exp = np.exp(_mul)
    a = _sin * _exp
    _mul2 = x * y
    b = np.tanh(_mul2)
    _mul3 = x * x
    _mul4 = y * y
    _add = _mul3 + _mul4
    _add2 = _add + 1.0
    c = np.sqrt(_add2)
    _mul5 = a * b
    _add3 = _mul5 + c
    result = np.sum(_add3)
    da = b                      # d_add3 = 1.0: 1.0 * b is b
    db = a
    d_add2 = 1.0 / (2.0 * c)
    dy = d_add2 * y
    dy += d_add2 * y
    dx = d_add2 * x
    dx += d_add2 * x
    d_mul2 = db * (1.0 - b ** 2)
    dx += d_mul2 * y
    dy += d_mul2 * x
    d_sin = da * _exp
    d_exp = da * _sin
    d_mul = d_exp * _exp
    d_neg = d_mul * y
    dy += d_mul * _neg
    dy += -d_neg
    dx += d_sin * np.cos(x)
    return result, (dx, dy)


def elementwise_v2(x, y):
    _sin = np.sin(x)
    _neg = -y
    _mul = _neg * y
    _exp = np.exp(_mul)
    a = _sin * _exp
    _mul2 = x * y
    b = np.tanh(_mul2)
    _mul3 = x * x
    _mul4 = y * y
    _add = _mul3 + _mul4
    _add2 = _add + 1.0
    c = np.sqrt(_add2)
    da = b
    db = a
    d_add2 = 1.0 / (2.0 * c)
    dy = d_add2 * y
    dy += d_add2 * y
    dx = d_add2 * x
    dx += d_add2 * x
    d_mul2 = db * (1.0 - b ** 2)
    dx += d_mul2 * y
    dy += d_mul2 * x
    d_sin = da * _exp
    d_exp = da * _sin
    d_mul = d_exp * _exp
    d_neg = d_mul * y
    dy += d_mul * _neg
    dy += -d_neg
    dx += d_sin * np.cos(x)
    return None, (dx, dy)


def elementwise_v3(x, y):
    _sin = np.sin(x)
    _neg = -y
    _mul = _neg * y
    _exp = np.exp(_mul)
    del _mul
    a = _sin * _exp
    _mul2 = x * y
    b = np.tanh(_mul2)
    del _mul2
    _mul3 = x * x
    _mul4 = y * y
    _add = _mul3 + _mul4
    del _mul3, _mul4
    _add2 = _add + 1.0
    del _add
    c = np.sqrt(_add2)
    del _add2
    da = b
    db = a
    d_add2 = 1.0 / (2.0 * c)
    del c
    dy = d_add2 * y
    dy += d_add2 * y
    dx = d_add2 * x
    dx += d_add2 * x
    del d_add2
    d_mul2 = db * (1.0 - b ** 2)
    del db, a
    dx += d_mul2 * y
    dy += d_mul2 * x
    del d_mul2
    d_sin = da * _exp
    d_exp = da * _sin
    del da, b, _sin
    d_mul = d_exp * _exp
    del d_exp, _exp
    d_neg = d_mul * y
    dy += d_mul * _neg
    del d_mul, _neg
    dy += -d_neg
    del d_neg
    dx += d_sin * np.cos(x)
    return None, (dx, dy)


def elementwise_v4(x, y):
    _sin = np.sin(x)
    _neg = -y
    _exp = _neg * y
    np.exp(_exp, out=_exp)
    a = _sin * _exp
    b = x * y
    np.tanh(b, out=b)
    _add = x * x
    _mul4 = y * y
    _add += _mul4
    _add += 1.0
    c = np.sqrt(_add, out=_add)
    da = b
    db = a
    c *= 2.0
    d_add2 = np.divide(1.0, c, out=c)
    dy = d_add2 * y
    np.multiply(d_add2, y, out=_mul4)
    dy += _mul4
    dx = d_add2 * x
    d_add2 *= x
    dx += d_add2
    d_mul2 = np.multiply(b, b, out=d_add2)
    np.subtract(1.0, d_mul2, out=d_mul2)
    d_mul2 *= db
    np.multiply(d_mul2, y, out=_mul4)
    dx += _mul4
    d_mul2 *= x
    dy += d_mul2
    d_sin = np.multiply(da, _exp, out=_mul4)
    d_exp = np.multiply(b, _sin, out=b)
    d_mul = d_exp
    d_mul *= _exp
    d_neg = np.multiply(d_mul, y, out=_exp)
    _neg *= d_mul
    dy += _neg
    dy -= d_neg
    np.cos(x, out=_sin)
    _sin *= d_sin
    dx += _sin
    return None, (dx, dy)


# --- MLP ---------------------------------------------------------------------------------


def mlp_v1(W1, b1, W2, b2, X, Y):
    _matmul = X @ W1
    _add = _matmul + b1
    h = np.tanh(_add)
    _matmul2 = h @ W2
    logits = _matmul2 + b2
    _max = np.max(logits, axis=1, keepdims=True)
    z = logits - _max
    _exp = np.exp(z)
    _sum = np.sum(_exp, axis=1, keepdims=True)
    lse = np.log(_sum)
    _sub = z - lse
    _mul = Y * _sub
    _sum2 = np.sum(_mul)
    n = X.shape[0]
    result = -_sum2 / n
    d_sub = (-1.0 / n) * Y
    dz = d_sub
    dlse = -np.sum(d_sub, axis=1, keepdims=True)
    d_sum = dlse / _sum
    dz += d_sum * _exp
    db2 = np.sum(dz, axis=0)
    dh = dz @ W2.T
    dW2 = h.T @ dz
    d_add = dh * (1.0 - h ** 2)
    db1 = np.sum(d_add, axis=0)
    dW1 = X.T @ d_add
    return result, (dW1, db1, dW2, db2)


def mlp_v2(W1, b1, W2, b2, X, Y):
    _matmul = X @ W1
    _add = _matmul + b1
    h = np.tanh(_add)
    _matmul2 = h @ W2
    logits = _matmul2 + b2
    _max = np.max(logits, axis=1, keepdims=True)
    z = logits - _max
    _exp = np.exp(z)
    _sum = np.sum(_exp, axis=1, keepdims=True)
    n = X.shape[0]
    d_sub = (-1.0 / n) * Y
    dz = d_sub
    dlse = -np.sum(d_sub, axis=1, keepdims=True)
    d_sum = dlse / _sum
    dz += d_sum * _exp
    db2 = np.sum(dz, axis=0)
    dh = dz @ W2.T
    dW2 = h.T @ dz
    d_add = dh * (1.0 - h ** 2)
    db1 = np.sum(d_add, axis=0)
    dW1 = X.T @ d_add
    return None, (dW1, db1, dW2, db2)


def mlp_v3(W1, b1, W2, b2, X, Y):
    _matmul = X @ W1
    _add = _matmul + b1
    del _matmul
    h = np.tanh(_add)
    del _add
    _matmul2 = h @ W2
    logits = _matmul2 + b2
    del _matmul2
    _max = np.max(logits, axis=1, keepdims=True)
    z = logits - _max
    del logits, _max
    _exp = np.exp(z)
    del z
    _sum = np.sum(_exp, axis=1, keepdims=True)
    n = X.shape[0]
    d_sub = (-1.0 / n) * Y
    dz = d_sub
    dlse = -np.sum(d_sub, axis=1, keepdims=True)
    d_sum = dlse / _sum
    del dlse, _sum
    dz += d_sum * _exp
    del d_sum, _exp
    db2 = np.sum(dz, axis=0)
    dh = dz @ W2.T
    dW2 = h.T @ dz
    del dz
    d_add = dh * (1.0 - h ** 2)
    del dh, h
    db1 = np.sum(d_add, axis=0)
    dW1 = X.T @ d_add
    return None, (dW1, db1, dW2, db2)


VARIANTS = {"softmax_xent": (softmax_v1, softmax_v2, softmax_v3, softmax_v4),
            "elementwise": (elementwise_v1, elementwise_v2, elementwise_v3, elementwise_v4),
            "mlp": (mlp_v1, mlp_v2, mlp_v3)}


def measure(name, budget_s):
    from sgcompiler.pipeline import compile_gradient
    w = next(w for w in all_workloads() if w.name == name)
    args = w.make(w.sizes["full"], np.random.default_rng(0))
    hand = systems.as_tuple(w.hand(*args))
    v0 = compile_gradient(w.fn, tuple(w.wrt)).bind(w.fn)
    contenders = {"hand": lambda: w.hand(*args), "v0": lambda: v0(*args)}
    for i, variant in enumerate(VARIANTS[name], 1):
        got = systems.as_tuple(variant(*args)[1])
        assert all(np.allclose(g, h, rtol=1e-8, atol=1e-12) for g, h in zip(got, hand)), \
            f"{name} v{i} differs from the hand-written gradient"
        contenders[f"v{i}"] = (lambda v: lambda: v(*args))(variant)
    seconds = timing.interleaved(contenders, budget_s)
    peaks = {k: timing.peak_bytes(fn) for k, fn in contenders.items()}
    faults = {k: faults_per_call(fn) for k, fn in contenders.items()}
    return {"seconds": seconds, "peak": peaks, "faults": faults}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated: " + ", ".join(VARIANTS))
    parser.add_argument("--budget", type=float, default=6.0)
    parser.add_argument("--runs", type=int, default=1,
                        help="fresh processes per workload; the table shows the median")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    opts = parser.parse_args(argv)
    if opts.worker:
        print("@@ " + json.dumps(measure(opts.worker, opts.budget)))
        return
    names = opts.only.split(",") if opts.only else list(VARIANTS)
    print("| workload | v0/hand | v1/hand | v2/hand | v3/hand | v4/hand | peak v0/hand | "
          "peak v3/hand | peak v4/hand | faults v0 | faults v4 | faults hand |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in names:
        runs = []
        for _ in range(opts.runs):
            out = subprocess.run([sys.executable, __file__, "--worker", name, "--budget",
                                  str(opts.budget)], stdout=subprocess.PIPE, text=True).stdout
            runs.append(json.loads(next(line for line in out.splitlines()
                                        if line.startswith("@@ "))[3:]))
        cells = [_median_over(runs, lambda r: timing.paired_ratio(r["seconds"][f"v{i}"],
                                                                  r["seconds"]["hand"]))
                 if f"v{i}" in runs[0]["seconds"] else "—" for i in range(5)]
        p, f = runs[0]["peak"], runs[0]["faults"]
        cells += [report.fmt_ratio(p.get(f"v{i}"), p["hand"]) for i in (0, 3, 4)]
        cells += [f"{f[k]:.0f}" if k in f else "—" for k in ("v0", "v4", "hand")]
        print(f"| {name} | " + " | ".join(cells) + " |")


def _median_over(runs, ratio):
    import statistics
    values = [ratio(r) for r in runs]
    text = f"{statistics.median(values):.2f}"
    return text + (f" ({min(values):.2f}-{max(values):.2f})" if len(values) > 1 else "")


if __name__ == "__main__":
    main()
