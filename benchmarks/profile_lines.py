"""Where does a gradient spend its time? Line-by-line timing of generated and hand-written code.

    python benchmarks/profile_lines.py softmax_xent            generated gradient, by line
    python benchmarks/profile_lines.py softmax_xent --hand     the hand-written one
    python benchmarks/profile_lines.py elementwise --reps 30

Every simple statement of the function (also inside branches and loops) is wrapped in a
timer; a `return` is timed while its value is computed. The median over repetitions of
each line's time is printed with its share of the total. The timers cost about 0.1 µs per
statement, which matters only for scalar loops. Line times include the page faults of the
arrays that line allocates, which is part of what the line really costs.
"""
from __future__ import annotations

import argparse
import ast
import inspect
import statistics
import sys
import textwrap
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.workloads import all_workloads  # noqa: E402

SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return)


class _Instrument(ast.NodeTransformer):
    """stmt -> `_t0 = _clock(); stmt; _acc[i] += _clock() - _t0`, recording each statement."""

    def __init__(self):
        self.lines = []        # index -> source text of the statement

    def _wrap(self, stmt):
        i = len(self.lines)
        self.lines.append(ast.unparse(stmt).splitlines()[0])
        start = ast.parse("_t0 = _clock()").body[0]
        stop = ast.parse(f"_acc[{i}] += _clock() - _t0").body[0]
        if isinstance(stmt, ast.Return) and stmt.value is not None:
            keep = ast.Assign(targets=[ast.Name("_ret", ast.Store())], value=stmt.value)
            return [start, keep, stop, ast.Return(ast.Name("_ret", ast.Load()))]
        return [start, stmt, stop]

    def _block(self, body):
        out = []
        for stmt in body:
            if isinstance(stmt, SIMPLE):
                out.extend(self._wrap(stmt))
            else:
                out.append(self.visit(stmt))
        return out

    def generic_visit(self, node):
        for name in ("body", "orelse", "finalbody"):
            if isinstance(getattr(node, name, None), list) and not isinstance(node, ast.Module):
                setattr(node, name, self._block(getattr(node, name)))
        return node


def instrumented(source: str, namespace: dict):
    """The function defined by `source`, instrumented; returns (function, lines, counters)."""
    tree = ast.parse(textwrap.dedent(source))
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    fn.decorator_list = []
    tool = _Instrument()
    fn.body = tool._block(fn.body)
    ast.fix_missing_locations(tree)
    acc = [0.0] * len(tool.lines)
    env = dict(namespace)
    env.update(_clock=time.perf_counter, _acc=acc)
    exec(compile(tree, f"<profiled {fn.name}>", "exec"), env)
    return env[fn.name], tool.lines, acc


def generated(workload, args):
    """Source and namespace of the gradient `grad(workload.fn)` runs for `args`: the code the
    public API compiles on its first call with these arguments (specialised for their
    shapes and dtypes, with parameter trees and the arrays in them), and the gradient
    function itself (to time the call through the API's wrapper)."""
    from sgcompiler import grad
    gradient = grad(workload.fn, wrt=workload.wrt)
    gradient(*args)
    compiled = gradient._last_compiled()
    namespace = dict(workload.fn.__globals__)
    namespace.update(compiled.extra)
    return compiled.source, namespace, gradient, compiled.bind(gradient.primal)


def wrapper_cost(gradient, direct, args, reps=200):
    """Median seconds of a call through the API (`gradient(*args)`) and of the generated
    function called directly, alternating: the difference is the wrapper's cost (its
    checks of the arguments, and the parameter trees it takes apart and builds)."""
    through, bare = [], []
    for k in range(reps):
        for fn, out in ((gradient, through), (direct, bare))[::1 if k % 2 else -1]:
            start = time.perf_counter()
            fn(*args)
            out.append(time.perf_counter() - start)
    return statistics.median(through), statistics.median(bare)


def profile(workload, hand=False, reps=20, size="full"):
    """[(statement text, median seconds, share)] and the median total per call."""
    args = workload.make(workload.sizes[size], np.random.default_rng(0))
    if hand:
        source, namespace = inspect.getsource(workload.hand), workload.hand.__globals__
    else:
        source, namespace = generated(workload, args)[:2]
    fn, lines, acc = instrumented(source, namespace)
    fn(*args)
    per_line = [[] for _ in lines]
    for _ in range(reps):
        acc[:] = [0.0] * len(acc)
        fn(*args)
        for i, t in enumerate(acc):
            per_line[i].append(t)
    medians = [statistics.median(t) for t in per_line]
    total = sum(medians)
    return [(text, m, m / total if total else 0.0) for text, m in zip(lines, medians)], total


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload")
    parser.add_argument("--hand", action="store_true", help="profile the hand-written gradient")
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1,
                        help="BLAS threads (1, as paired.py and run.py time them)")
    parser.add_argument("--min-share", type=float, default=0.0,
                        help="hide lines below this share of the total (e.g. 0.01)")
    opts = parser.parse_args(argv)
    from benchmarks.timing import limit_threads
    print(limit_threads(opts.threads))
    workload = next(w for w in all_workloads() if w.name == opts.workload)
    rows, total = profile(workload, opts.hand, opts.reps)
    print(f"{'hand-written' if opts.hand else 'sgcompiler'} gradient of {workload.name}: "
          f"{total * 1e3:.3f} ms per call (sum of line medians)\n")
    print("| ms | share | statement |\n|---:|---:|---|")
    for text, m, share in rows:
        if share >= opts.min_share:
            print(f"| {m * 1e3:.3f} | {share:5.1%} | `{text}` |")
    if not opts.hand:
        args = workload.make(workload.sizes["full"], np.random.default_rng(0))
        _, _, gradient, direct = generated(workload, args)
        through, bare = wrapper_cost(gradient, direct, args)
        print(f"\nper call, not instrumented: {through * 1e3:.3f} ms through grad's wrapper, "
              f"{bare * 1e3:.3f} ms calling the generated function directly (the wrapper: "
              f"{(through - bare) * 1e6:.1f} µs)")


if __name__ == "__main__":
    main()
