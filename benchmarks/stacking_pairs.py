"""RNN jvp with and without the stacking of input rows (optimize/loops/stacking.py's _absorb),
against the forward pass, interleaved in one run: the paired ratios of several repeats.

    python benchmarks/stacking_pairs.py [--repeats 5] [--budget 3]
"""
from __future__ import annotations

import argparse
import sys
import types
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import timing  # noqa: E402
from benchmarks.workloads import rnn as rnn_workload  # noqa: E402
from sgcompiler import jvp  # noqa: E402
from sgcompiler.optimize import stacking  # noqa: E402
from sgcompiler.pipeline import compiled  # noqa: E402


def _code(f):
    """The tangent function jvp's fast cache holds for f."""
    from sgcompiler.derivatives import _FAST
    return next(entry[1].__code__ for entry in _FAST.values() if entry[0]() is f)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--budget", type=float, default=3.0, help="seconds per repeat")
    opts = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    args = rnn_workload.make({"hidden": 32, "inputs": 32, "steps": 50}, rng)
    tangents = tuple(rng.normal(size=a.shape) for a in args[:3]) + (None, None, None)
    fn = rnn_workload.rnn
    # a second function object with the same code: its own cache entry, compiled without
    # the stacking of rows (the products are still stacked)
    rows_apart = types.FunctionType(fn.__code__, fn.__globals__, "rnn")
    absorb = stacking._Loop._absorb
    stacking._Loop._absorb = lambda *a: None
    try:
        before = jvp(rows_apart, args, tangents)
    finally:
        stacking._Loop._absorb = absorb
    compiled._JVP_CACHE.clear()     # (keyed by the code, which the two share)
    after = jvp(fn, args, tangents)
    assert np.isclose(before[1], after[1], rtol=1e-12)
    assert _code(rows_apart) is not _code(fn)
    contenders = {"forward": lambda: fn(*args),
                  "jvp": lambda: jvp(fn, args, tangents),
                  "jvp, rows apart": lambda: jvp(rows_apart, args, tangents)}
    print("| repeat | jvp / forward | rows apart / forward | jvp / rows apart |\n"
          "|---|---|---|---|")
    for r in range(opts.repeats):
        samples = timing.interleaved(contenders, opts.budget)
        ratio = {n: timing.paired_ratio(samples[n], samples["forward"]) for n in contenders}
        print(f"| {r + 1} | {ratio['jvp']:.2f}x | {ratio['jvp, rows apart']:.2f}x | "
              f"{timing.paired_ratio(samples['jvp'], samples['jvp, rows apart']):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
