"""Batched against per-column Hessians: `hessian` runs the tangent code of the gradient
once with every unit direction along a leading axis (forward/batch.py); where it cannot,
it runs it once per column. This times both on the same workloads, side by side
(interleaved samples, the median of the paired ratios), for the workloads whose gradient
code has a tape or shapes the compiler does not know (loops, helpers, ReLU masks), which
session 8 made batched.

    PYTHONPATH=. python3 benchmarks/batched_hessians.py [--smoke] [--budget 20]

`--census` times nothing: it takes the Hessian of every specimen (tests/specimens_*.py, the
rows of the gradient tables) with respect to each of its float arguments and parameter
trees, and counts how each ran: batched, one jvp per column (and why: the
PerColumnWarning's reason, or a parameter tree whose Hessian ran per column without one),
refused or failed. `--rules` adds one row for each primitive of the rule table
(tests/rule_cases.py: the Hessian of a sum of the sines of its results, with respect to
its first float argument).
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


def _specimens():
    """(name, f, args, position) for each float argument of each specimen row."""
    import specimens_calls
    import specimens_control
    import specimens_core
    import specimens_numpy
    for module in (specimens_core, specimens_numpy, specimens_control, specimens_calls):
        rows = list(module.ROWS) + list(getattr(module, "TREE_ROWS", []))
        for f, make in rows:
            args = make(np.random.default_rng(0))
            for position, x in enumerate(args):
                if isinstance(x, float) or isinstance(x, np.ndarray) and x.dtype.kind == "f" \
                        or type(x) in (dict, list, tuple):
                    yield f"{module.__name__}.{f.__name__}", f, args, position


def _rule_rows():
    """(name, loss, args, 0) for the first real row of each primitive of the rule table:
    loss(x, *others) = the sum of np.sin of each float result of the primitive."""
    from rule_cases import CASES
    from sgcompiler.backend.loader import function_from_text
    seen = set()
    for case in CASES:
        if case.complex_mode or id(case.prim) in seen:
            continue
        seen.add(id(case.prim))
        args = [make(np.random.default_rng(0)) for make in case.makers]
        position = next((i for i, a in enumerate(args) if isinstance(a, float) or
                         isinstance(a, np.ndarray) and a.dtype.kind == "f"), None)
        if position is None or position in case.fixed:
            continue
        try:
            out = case.prim(*args, **case.kw)
        except Exception:
            continue
        params = [f"a{i}" for i in range(len(args))]
        call = f"_prim({', '.join(params + [f'{k}=_kw[{k!r}]' for k in case.kw])})"
        several = isinstance(out, (tuple, list))
        picks = [f"[{i}]" for i, r in enumerate(out) if i not in case.unused and
                 _floats(r)] if several else [""]
        if not picks or not several and not _floats(out):
            continue
        order = [params[position]] + params[:position] + params[position + 1:]
        total = " + ".join(f"_np.sum(_np.sin(r{p}))" for p in picks)
        text = f"def loss({', '.join(order)}):\n    r = {call}\n    return {total}\n"
        loss = function_from_text(text, "loss", {"_np": np, "_prim": case.prim,
                                                 "_kw": case.kw}, "census")
        yield f"rule {case.id}", loss, [args[position]] + args[:position] + \
            args[position + 1:], 0


def _floats(value) -> bool:
    return isinstance(value, (float, np.ndarray)) and np.asarray(value).dtype.kind == "f"


def census(rules=False):
    """How the Hessian of each specimen (and with `rules`, of each primitive) runs."""
    from collections import Counter
    from sgcompiler import SGCompilerError
    sys.path.insert(0, str(ROOT / "tests"))
    counts, reasons, rows = Counter(), Counter(), []
    found = list(_specimens()) + (list(_rule_rows()) if rules else [])
    # (a tree's Hessian one jvp per column draws its unit trees: it may say nothing)
    unit_trees, per_tree = derivatives.unit_trees, []
    derivatives.unit_trees = lambda tree: per_tree.append(tree) or unit_trees(tree)
    for name, f, args, position in found:
        per_tree.clear()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                hessian(f, wrt=position)(*args)
            except SGCompilerError as exc:
                kind, why = "refused", str(exc).splitlines()[0]
            except Exception as exc:    # (the census goes on; the count says so)
                kind, why = "failed", f"{type(exc).__name__}: {exc}".splitlines()[0]
            else:
                said = [str(c.message) for c in caught if issubclass(c.category,
                                                                     PerColumnWarning)]
                kind, why = ("per column", said[0].split(": ", 1)[-1]) if said else \
                    ("per column", "a parameter tree") if per_tree else ("batched", "")
        counts[kind] += 1
        if kind in ("per column", "refused", "failed"):
            reasons[_reason(why)] += 1
            rows.append((kind, name, position, why))
    derivatives.unit_trees = unit_trees
    print(f"{len(found)} hessians: " + ", ".join(f"{k} {n}" for k, n in counts.most_common()))
    for kind, name, position, why in rows:
        print(f"  {kind}: {name} (argument {position}): {why[:160]}")
    print("reasons:")
    for why, n in reasons.most_common():
        print(f"  {n} x {why}")
    return counts


def _reason(why):
    """The reason of a PerColumnWarning without its location (`f (file:line): ...`)."""
    return why.split("): ", 1)[-1].split(" [in:")[0][:120]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="the workloads' smoke sizes")
    parser.add_argument("--budget", type=float, default=20.0, help="seconds per case")
    parser.add_argument("--census", action="store_true",
                        help="count how the specimens' Hessians run; time nothing")
    parser.add_argument("--rules", action="store_true",
                        help="with --census: a row for each primitive of the rule table too")
    options = parser.parse_args(argv)
    if options.census:
        census(options.rules)
        return
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
