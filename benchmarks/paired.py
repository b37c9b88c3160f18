"""Paired ratios of sgcompiler's gradient to the hand-written one, in one process.

    python benchmarks/paired.py                       the five workloads of other styles
    python benchmarks/paired.py --only mlp_relu --reps 500
    python benchmarks/paired.py --cpu-clock           CPU time of this thread, not wall time

On a shared machine the wall time of a call swings with the load; the ratio of two calls
made moments apart swings much less. So each repetition calls the hand-written gradient and
the generated one back to back (in alternating order, see `timing.interleaved`), with one
BLAS thread, and the table gives the median and the quartiles of the per-repetition ratios,
and the peak memory (tracemalloc) of one call of each. run.py does the same in fresh
processes per round, with the other systems; this is the quick look while working on one
workload.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import run, systems, timing  # noqa: E402
from benchmarks.workloads import OTHER_STYLES, all_workloads  # noqa: E402


def paired(workload, reps: int) -> dict:
    """Check one workload, then time hand and sgc side by side `reps` times."""
    args = workload.make(workload.sizes["full"], np.random.default_rng(0))
    row = run.Row(workload.name, workload.kind)
    core = run.check_core(workload, args, row)
    if "sgc" not in core or any(s != "ok" for s in row.status.values()):
        return {"name": workload.name, "status": row.status}
    contenders = {"hand": core["hand"], "sgc": core["sgc"]}
    samples = timing.interleaved(contenders, budget_s=1e9, min_reps=reps, max_reps=reps)
    ratios = sorted(s / h for s, h in zip(samples["sgc"], samples["hand"]))
    q1, med, q3 = statistics.quantiles(ratios, n=4)
    return {"name": workload.name, "status": row.status, "reps": len(ratios),
            "hand_s": statistics.median(samples["hand"]),
            "sgc_s": statistics.median(samples["sgc"]),
            "median": med, "q1": q1, "q3": q3,
            "hand_peak": timing.peak_bytes(core["hand"]),
            "sgc_peak": timing.peak_bytes(core["sgc"])}


def table(results) -> list[str]:
    lines = ["| workload | hand ms | sgc ms | sgc/hand median | quartiles | reps "
             "| peak hand MB | peak sgc MB |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        if "median" not in r:
            lines.append(f"| {r['name']} | {r['status']} |")
            continue
        lines.append(
            f"| {r['name']} | {r['hand_s'] * 1e3:.3f} | {r['sgc_s'] * 1e3:.3f} "
            f"| {r['median']:.3f} | {r['q1']:.3f}-{r['q3']:.3f} | {r['reps']} "
            f"| {r['hand_peak'] / 2**20:.2f} | {r['sgc_peak'] / 2**20:.2f} |")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated workload names "
                                       "(default: the five of other styles)")
    parser.add_argument("--reps", type=int, default=300, help="paired repetitions (300)")
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads (1)")
    parser.add_argument("--sample-ms", type=float, default=10.0,
                        help="a sample loops a call for at least this long (10 ms)")
    parser.add_argument("--cpu-clock", action="store_true",
                        help="time with this thread's CPU time, not the wall clock")
    opts = parser.parse_args(argv)
    if opts.cpu_clock:        # read when timing is imported: set it before timing's clock
        os.environ["SGC_BENCH_CLOCK"] = "cpu"
        timing._clock = timing.time.thread_time
    timing.SAMPLE_S = opts.sample_ms / 1e3
    if systems.installed("threadpoolctl"):
        from threadpoolctl import threadpool_limits
        threadpool_limits(opts.threads)
    names = opts.only.split(",") if opts.only else list(OTHER_STYLES)
    known = {w.name: w for w in all_workloads()}
    missing = [n for n in names if n not in known]
    if missing:
        raise SystemExit(f"unknown workload(s) {missing}; known: {', '.join(known)}")
    results = []
    for name in names:
        results.append(paired(known[name], opts.reps))
        print(table(results[-1:])[-1], flush=True)
    print()
    print("\n".join(table(results)))
    return 1 if any("median" not in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
