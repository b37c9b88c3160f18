"""Benchmark sgcompiler's gradients against hand-written ones and the other AD systems.

    python benchmarks/run.py                 all workloads, full sizes, a markdown report
    python benchmarks/run.py --smoke         tiny sizes, correctness only (run by the tests)
    python benchmarks/run.py --only mlp,rnn  some workloads
    python benchmarks/run.py --systems none  without autograd / JAX / PyTorch even if installed
    python benchmarks/run.py --slow          also JAX on the Euler loop (minutes)
    python benchmarks/run.py --threads 1     one BLAS/OpenMP thread (steadier on a busy machine)
    python benchmarks/run.py --threads 1 --cpu-clock   CPU time, not wall time (crowded)

Every mode first checks that sgcompiler's gradient equals the hand-written one (rtol 1e-8)
and that the hand-written one agrees with finite differences. Times are medians of
interleaved repetitions; compare the ratios, which were measured side by side, not the
absolute times.

How much a call costs depends on the state of glibc's allocator: freed multi-megabyte
arrays may be returned to the operating system and faulted in again on the next call, and
when that happens depends on everything the process allocated before; and the thread pools
of PyTorch and JAX keep spinning after a call, which slows OpenBLAS's threads. So every
round runs in a fresh process: forward / hand-written / sgcompiler; the same with the
allocator told to keep freed memory (MALLOC_MMAP_THRESHOLD_/MALLOC_TRIM_THRESHOLD_), which
shows the cost without page faults; then one round per other system, side by side with the
hand-written gradient and sgcompiler.

The exit status is non-zero when a gradient is wrong or a workload that is not listed as
pending fails to compile.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import report, systems, timing  # noqa: E402
from benchmarks.workloads import PENDING, all_workloads  # noqa: E402
from sgcompiler import SGCompilerError  # noqa: E402

RTOL_SG = 1e-8        # sgcompiler vs hand-written: the same arithmetic, up to rounding
RTOL_OTHER = 1e-6     # other systems vs hand-written
RTOL_FD = 1e-5        # hand-written vs central finite differences
KEEP_MEMORY = {"MALLOC_MMAP_THRESHOLD_": str(32 * 2**20), "MALLOC_TRIM_THRESHOLD_": str(2**40)}
ROW_MARK = "@@row "


@dataclass
class Row:
    name: str
    kind: str
    status: dict = field(default_factory=dict)     # contender -> "ok" / why not
    seconds: dict = field(default_factory=dict)    # forward, hand, sgc: median s per call
    kept: dict = field(default_factory=dict)       # the same with the allocator keeping memory
    vs_others: dict = field(default_factory=dict)  # system -> {hand, sgc, system: seconds}
    compile_s: list = field(default_factory=list)  # sgcompiler, fresh compiles
    jit_compile_s: float | None = None
    peak: dict = field(default_factory=dict)       # contender -> peak bytes (tracemalloc)
    faults: dict = field(default_factory=dict)     # contender -> minor page faults per call
    samples: dict = field(default_factory=dict)    # round -> contender -> seconds per rep

    def ratio(self, round_, a, b):
        """a / b as the median of per-repetition ratios within one round (or None)."""
        s = self.samples.get(round_, {})
        return timing.paired_ratio(s[a], s[b]) if a in s and b in s else None


# --- correctness ---------------------------------------------------------------------------


def max_error(got, want) -> float:
    """Largest |got - want| relative to |want| + the scale of `want` (rounding-safe)."""
    worst = 0.0
    for g, w in zip(got, want):
        if isinstance(w, dict):      # the gradient of a dict of parameters
            if not isinstance(g, dict) or set(g) != set(w):
                return float("inf")
            worst = max(worst, max_error([g[k] for k in w], list(w.values())))
            continue
        kind = complex if np.iscomplexobj(g) or np.iscomplexobj(w) else float
        g, w = np.asarray(g, dtype=kind), np.asarray(w, dtype=kind)
        if g.shape != w.shape:
            return float("inf")
        scale = np.abs(w) + np.max(np.abs(w), initial=1e-300)
        worst = max(worst, float(np.max(np.abs(g - w) / scale, initial=0.0)))
    return worst


def finite_difference_error(workload, args, hand, eps=1e-6) -> float:
    """Relative error of <hand, v> against a central difference along a random v."""
    f = workload.reference or workload.fn
    rng = np.random.default_rng(1)
    plus, minus, analytic = list(args), list(args), 0.0
    for i, g in zip(systems.positions(workload), hand):
        x = args[i]
        if isinstance(x, dict):      # a dict of parameters: a direction for each array
            v = {k: rng.normal(size=np.shape(a)) for k, a in x.items()}
            step = eps * max(1.0, max(float(np.max(np.abs(a))) for a in x.values()))
            plus[i] = {k: a + step * v[k] for k, a in x.items()}
            minus[i] = {k: a - step * v[k] for k, a in x.items()}
            analytic += sum(float(np.sum(np.asarray(g[k]) * v[k])) for k in x) * step
            continue
        v = rng.normal(size=np.shape(x))
        if np.iscomplexobj(x):       # a complex direction; the gradient pairs as Re(g * v)
            v = v + 1j * rng.normal(size=np.shape(x))
        step = eps * max(1.0, float(np.max(np.abs(x))))
        plus[i], minus[i] = x + step * v, x - step * v
        if isinstance(x, float):
            plus[i], minus[i] = float(plus[i]), float(minus[i])
        analytic += float(np.real(np.sum(np.asarray(g) * v))) * step
    numeric = (f(*plus) - f(*minus)) / 2.0
    return abs(numeric - analytic) / max(abs(analytic), abs(numeric), 1e-300)


def check_core(workload, args, row: Row) -> dict:
    """Check hand-written and sgcompiler; return name -> callable for forward, hand, sgc."""
    hand = systems.as_tuple(workload.hand(*args))
    err = finite_difference_error(workload, args, hand)
    row.status["hand"] = "ok" if err < RTOL_FD else f"WRONG (finite differences {err:.1e})"
    core = {"forward": lambda: workload.fn(*args), "hand": lambda: workload.hand(*args)}
    try:
        call, convert = systems.prepare_sgcompiler(workload, args)
    except SGCompilerError as exc:
        if workload.name in PENDING:
            row.status["sgc"] = f"pending: {PENDING[workload.name]}"
        else:
            row.status["sgc"] = f"FAILED to compile: {exc}"
        return core
    err = max_error(convert(call()), hand)
    row.status["sgc"] = "ok" if err <= RTOL_SG else f"WRONG (error {err:.1e})"
    if workload.name in PENDING:
        row.status["sgc"] += " (compiles now: remove it from PENDING)"
    core["sgc"] = call
    return core


def prepare_other(name, workload, args, row, slow=False):
    """The other system's gradient call, checked against the hand-written one (or None)."""
    hand = systems.as_tuple(workload.hand(*args))
    try:
        if name == "torch" and workload.torch is None:
            raise NotImplementedError("no PyTorch version")
        if name == "jax jit" and not workload.jit:
            raise NotImplementedError("data-dependent Python loop")
        if name in workload.slow and not slow:
            raise NotImplementedError(workload.slow[name])
        prepare = {"autograd": systems.prepare_autograd, "jax": systems.prepare_jax_eager,
                   "jax jit": systems.prepare_jax_jit, "torch": systems.prepare_torch}[name]
        prepared = prepare(workload, args)
        call, convert = prepared[:2]
        if name == "jax jit":
            row.jit_compile_s = prepared[2]
        err = max_error(convert(call()), hand)
    except NotImplementedError as exc:
        row.status[name] = f"n/a ({exc})"
        return None
    except Exception as exc:          # an optional system's failure is reported, not fatal
        row.status[name] = f"n/a ({type(exc).__name__}: {str(exc).splitlines()[0][:60]})"
        return None
    row.status[name] = "ok" if err <= RTOL_OTHER else f"WRONG (error {err:.1e})"
    return call


# --- one workload ----------------------------------------------------------------------------


def faults_per_call(fn, calls=5) -> float:
    fn()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(calls):
        fn()
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / calls


def evaluate(workload, smoke=False, others=(), budget_s=5.0, slow=False,
             group="core") -> Row:
    """Check (and unless `smoke`, measure) one workload in this process.

    `group` says what to time: "core" (forward, hand, sgc; compile time, memory), "kept"
    (the same timings only), or the name of another system (timed with hand and sgc).
    """
    args = workload.make(workload.sizes["smoke" if smoke else "full"], np.random.default_rng(0))
    row = Row(workload.name, workload.kind)
    core = check_core(workload, args, row)
    if smoke:
        for name in _contenders_of(others, smoke=True):
            prepare_other(name, workload, args, row, slow=True)   # tiny sizes are quick
        return row
    if group in ("core", "kept"):
        row.samples[group] = timing.interleaved(core, budget_s)
        row.seconds = timing.medians(row.samples[group])
        if group == "core":
            _measure_extras(workload, args, row, core)
        return row
    contenders = {n: core[n] for n in ("hand", "sgc") if n in core}
    for name in _contenders_of([group], smoke=False):
        call = prepare_other(name, workload, args, row, slow)
        if call is not None:
            contenders[name] = call
    if len(contenders) > 2:
        row.samples[group] = timing.interleaved(contenders, budget_s)
        row.vs_others[group] = timing.medians(row.samples[group])
    return row


def _contenders_of(others, smoke):
    return [c for name in others
            for c in ([name, "jax jit"] if name == "jax" and not smoke else [name])]


def _measure_extras(workload, args, row, core):
    if "sgc" in core:
        row.compile_s = systems.compile_seconds(workload, args)
    for name in ("forward", "hand", "sgc"):
        if name in core:
            row.peak[name] = timing.peak_bytes(core[name])
            row.faults[name] = faults_per_call(core[name])


THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def in_subprocess(workload, group, budget_s, slow=False, env_extra=None) -> Row:
    """`evaluate` in a fresh Python process (fresh allocator state, no other library's
    threads), with `env_extra` added to the environment."""
    env = {k: v for k, v in os.environ.items() if k not in KEEP_MEMORY}
    env.update(env_extra or {})
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", workload.name,
           "--group", group, "--budget", str(budget_s)] + (["--slow"] if slow else [])
    done = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True)
    for line in done.stdout.splitlines():
        if line.startswith(ROW_MARK):
            return Row(**json.loads(line[len(ROW_MARK):]))
    row = Row(workload.name, workload.kind)
    row.status["sgc" if group in ("core", "kept") else group] = \
        f"FAILED: the worker process exited with status {done.returncode}"
    return row


def measure_workload(workload, others, budget_s, slow) -> Row:
    """All rounds of one workload, each in its own process, merged into one row."""
    row = in_subprocess(workload, "core", budget_s, slow)
    kept = in_subprocess(workload, "kept", budget_s / 2, slow, KEEP_MEMORY)
    row.kept, row.samples["kept"] = kept.seconds, kept.samples.get("kept", {})
    for name in others:
        part = in_subprocess(workload, name, budget_s / 2, slow)
        row.status.update({k: v for k, v in part.status.items() if k not in row.status})
        row.vs_others.update(part.vs_others)
        row.samples.update(part.samples)
        row.jit_compile_s = part.jit_compile_s or row.jit_compile_s
    return row


# --- the cost of a cached call ------------------------------------------------------------


def _tiny_array(x):
    return np.sum(x * x)


def _tiny_float(x):
    return x * x


def cached_call_overhead() -> list[tuple]:
    """(what, GradientFunction call, direct call of the bound generated function) seconds."""
    from sgcompiler import grad
    from sgcompiler.pipeline import compile_gradient
    out = []
    for fn, arg, scalars in ((_tiny_array, np.arange(4.0), frozenset()),
                             (_tiny_float, 1.5, frozenset({"x"}))):
        wrapped = grad(fn)
        direct = compile_gradient(fn, ("x",), scalars).bind(fn)
        wrapped(arg)
        out.append((f"{fn.__name__}({type(arg).__name__})",
                    *timing.call_overhead(wrapped, direct, (arg,))))
    return out


# --- main ----------------------------------------------------------------------------------


def failures(row: Row) -> bool:
    return any(s.startswith(("WRONG", "FAILED")) or "remove it from PENDING" in s
               for s in row.status.values())


def run(names=None, smoke=False, others=(), budget_s=4.0, out=print, slow=False) -> int:
    """Run the suite; print the report through `out`; return the exit status."""
    workloads = [w for w in all_workloads() if names is None or w.name in names]
    if names is not None and len(workloads) != len(set(names)):
        known = ", ".join(w.name for w in all_workloads())
        raise SystemExit(f"unknown workload in {sorted(names)}; known: {known}")
    started = time.perf_counter()
    rows = []
    for w in workloads:
        rows.append(evaluate(w, smoke=True, others=others, slow=slow) if smoke
                    else measure_workload(w, others, budget_s, slow))
    contenders = ["hand", "sgc"] + _contenders_of(others, smoke)
    mode = "smoke: tiny sizes, correctness only" if smoke else "full sizes"
    out(f"# sgcompiler benchmarks ({mode})\n")
    out("\n".join(report.machine_facts(others)) + "\n")
    out("## Correctness (sgc vs hand rtol 1e-8; hand vs finite differences; others vs hand)\n")
    out("\n".join(report.status_table(rows, contenders)))
    if not smoke:
        overhead = cached_call_overhead()
        out("\n## Median time per gradient call (each workload in a fresh process; "
            "compare the ratios)\n")
        out("\n".join(report.core_table(rows)))
        if others:
            out("\n## Against the other systems (one round and process per system, side by side with sgc)\n")
            out("\n".join(report.others_table(rows, others)))
        out("\n## Compile time, peak memory (tracemalloc) and page faults\n")
        out("\n".join(report.compile_memory_table(rows)))
        out("\n## Targets (issue 6)\n")
        out("\n".join(report.targets(rows, overhead)))
    out(f"\n(total {time.perf_counter() - started:.0f} s)")
    return 1 if any(failures(r) for r in rows) else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, correctness only")
    parser.add_argument("--only", help="comma-separated workload names")
    parser.add_argument("--systems", default="autograd,jax,torch",
                        help="optional systems to include if installed ('none' for none)")
    parser.add_argument("--budget", type=float, default=4.0,
                        help="seconds of timed repetitions of the main round (default 4; "
                             "the other rounds get half)")
    parser.add_argument("--slow", action="store_true",
                        help="also what takes minutes (JAX on the 1000-step Euler loop)")
    parser.add_argument("--threads", type=int,
                        help="set OPENBLAS/OMP/MKL_NUM_THREADS for the timed processes "
                             "(default: leave the environment as it is)")
    parser.add_argument("--cpu-clock", action="store_true",
                        help="time with each thread's CPU time, not the wall clock (for a "
                             "crowded machine; use with --threads 1)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--group", default="core", help=argparse.SUPPRESS)
    opts = parser.parse_args(argv)
    wanted = [] if opts.systems == "none" else opts.systems.split(",")
    others = [s for s in systems.OPTIONAL if s in wanted and systems.installed(s)]
    if opts.worker:
        workload = next(w for w in all_workloads() if w.name == opts.worker)
        row = evaluate(workload, False, (), opts.budget, opts.slow, opts.group)
        print(ROW_MARK + json.dumps(asdict(row)), flush=True)
        return 0
    if opts.cpu_clock:
        os.environ["SGC_BENCH_CLOCK"] = "cpu"     # read by timing.py in the workers
    if opts.threads:
        os.environ.update({v: str(opts.threads) for v in THREAD_VARS})
        if systems.installed("threadpoolctl"):     # this process too, so the report is true
            from threadpoolctl import threadpool_limits
            threadpool_limits(opts.threads)
    names = set(opts.only.split(",")) if opts.only else None
    return run(names, opts.smoke, others, opts.budget, slow=opts.slow)


if __name__ == "__main__":
    sys.exit(main())
