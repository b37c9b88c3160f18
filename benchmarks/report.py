"""The markdown report of a benchmark run: machine facts, tables, and the targets of issue 6."""
from __future__ import annotations

import importlib.metadata
import os
import platform
import statistics

from benchmarks import systems
from benchmarks.workloads import OTHER_STYLES

ENV_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_CORETYPE",
            "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "SGC_BENCH_CLOCK")


def fmt_time(s):
    if s is None:
        return "—"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s / 1e-9:.3g} ns"


def fmt_ratio(a, b):
    return f"{a / b:.2f}" if a is not None and b is not None and b > 0 else "—"


def fmt_x(x):
    return "—" if x is None else f"{x:.2f}"


def fmt_mib(b):
    return "—" if b is None else f"{b / 2**20:.1f} MiB"


def _cell(row, seconds, name):
    if name in seconds:
        return fmt_time(seconds[name])
    status = row.status.get(name)
    return "—" if status is None else status.split(":")[0].split(" (")[0]


def _table(head, rows):
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + \
        ["| " + " | ".join(r) + " |" for r in rows]


def core_table(rows) -> list[str]:
    """forward, hand-written and sgcompiler, with glibc's default allocator and with the
    allocator told to keep freed memory (no page faults on reuse). Times are medians;
    ratios are medians of per-repetition ratios (calls made moments apart)."""
    head = ["workload", "forward", "hand", "sgc", "**sgc/hand**", "**sgc/fwd**",
            "sgc/hand, memory kept", "sgc/fwd, memory kept"]
    body = []
    for r in rows:
        t = r.seconds
        body.append([r.name, _cell(r, t, "forward"), _cell(r, t, "hand"), _cell(r, t, "sgc"),
                     fmt_x(r.ratio("core", "sgc", "hand")),
                     fmt_x(r.ratio("core", "sgc", "forward")),
                     fmt_x(r.ratio("kept", "sgc", "hand")),
                     fmt_x(r.ratio("kept", "sgc", "forward"))])
    return _table(head, body)


def others_table(rows, others) -> list[str]:
    """sgcompiler against the other systems: one round (process) per system, each timed side
    by side with sgc, so each ratio comes from one round."""
    head = ["workload"]
    for system in others:
        head += {"autograd": ["autograd", "**autograd/sgc**"],
                 "jax": ["JAX eager", "JAX eager/sgc", "JAX jit", "JAX jit/sgc",
                         "JAX jit compile"],
                 "torch": ["torch", "torch/sgc"]}[system]
    body = []
    for r in rows:
        cells = [r.name]
        for system in others:
            t = r.vs_others.get(system, {})
            names = [system, "jax jit"] if system == "jax" else [system]
            for name in names:
                cells += [_cell(r, t, name), fmt_x(r.ratio(system, name, "sgc"))]
            if system == "jax":
                cells.append(fmt_time(r.jit_compile_s))
        body.append(cells)
    return _table(head, body)


def compile_memory_table(rows) -> list[str]:
    head = ["workload", "compile (median of 5)", "compile (max)", "peak forward", "peak hand",
            "peak sgc", "**sgc/hand peak**", "page faults/call hand", "page faults/call sgc"]
    body = []
    for r in rows:
        c = r.compile_s
        body.append([r.name, fmt_time(statistics.median(c)) if c else "—",
                     fmt_time(max(c)) if c else "—", fmt_mib(r.peak.get("forward")),
                     fmt_mib(r.peak.get("hand")), fmt_mib(r.peak.get("sgc")),
                     fmt_ratio(r.peak.get("sgc"), r.peak.get("hand")),
                     f"{r.faults['hand']:.0f}" if "hand" in r.faults else "—",
                     f"{r.faults['sgc']:.0f}" if "sgc" in r.faults else "—"])
    return _table(head, body)


def _mark(ok):
    return "met" if ok else "**MISSED**"


def targets(rows, overhead) -> list[str]:
    """Each target of issue 6, measured, with met / missed."""
    timed = [r for r in rows if "sgc" in r.seconds]
    if not timed:
        return ["- no sgcompiler timings"]
    vs_hand = {r.name: r.ratio("core", "sgc", "hand") for r in timed}
    kept = [r.ratio("kept", "sgc", "hand") for r in timed if "sgc" in r.kept]
    vs_fwd = [r.ratio("core", "sgc", "forward") for r in timed]
    worst = max(vs_hand, key=vs_hand.get)
    med = statistics.median(vs_hand.values())
    out = [f"- sgc/hand median {med:.2f} (target <= 1.10): {_mark(med <= 1.10)}"
           + (f" (memory kept: {statistics.median(kept):.2f})" if kept else ""),
           f"- sgc/hand worst {vs_hand[worst]:.2f} ({worst}) (target <= 1.5): "
           f"{_mark(vs_hand[worst] <= 1.5)}",
           f"- sgc/forward median {statistics.median(vs_fwd):.2f} (target <= 3): "
           f"{_mark(statistics.median(vs_fwd) <= 3)}"]
    styles = {n: r for n, r in vs_hand.items() if n in OTHER_STYLES and r is not None}
    if styles:
        worst18 = max(styles, key=styles.get)
        med18 = statistics.median(styles.values())
        out += [f"- workloads in other styles (issue 18): sgc/hand median {med18:.2f} "
                f"(target <= 1.05): {_mark(med18 <= 1.05)}; worst {styles[worst18]:.2f} "
                f"({worst18}) (target <= 1.2): {_mark(styles[worst18] <= 1.2)}"]
    ag = [(r.name, r.kind, r.ratio("autograd", "autograd", "sgc")) for r in timed
          if r.ratio("autograd", "autograd", "sgc") is not None]
    if ag:
        slowest = min(ag, key=lambda a: a[2])
        out.append(f"- faster than autograd on every workload: least speed-up "
                   f"{slowest[2]:.2f}x ({slowest[0]}): {_mark(slowest[2] > 1)}")
        loops = [a for a in ag if a[1] == "scalar-loop"]
        if loops:
            low = min(loops, key=lambda a: a[2])
            out.append(f"- >= 10x faster than autograd on scalar loops: least {low[2]:.1f}x "
                       f"({low[0]}): {_mark(low[2] >= 10)}")
    compiled = [(r.name, statistics.median(r.compile_s), max(r.compile_s)) for r in timed
                if r.compile_s]
    if compiled:
        slow = max(compiled, key=lambda c: c[1])
        out.append(f"- compile <= 50 ms each (median of 5 fresh compiles): slowest "
                   f"{fmt_time(slow[1])} ({slow[0]}; its max {fmt_time(slow[2])}): "
                   f"{_mark(slow[1] <= 0.05)}")
    for what, wrapped, direct in overhead:
        out.append(f"- cached call adds <= 5 µs ({what}): {fmt_time(wrapped - direct)} "
                   f"({fmt_time(wrapped)} vs {fmt_time(direct)} direct): "
                   f"{_mark(wrapped - direct <= 5e-6)}")
    mem = [(r.name, r.peak["sgc"] / r.peak["hand"]) for r in timed
           if r.kind == "array" and r.peak.get("hand") and r.peak.get("sgc")]
    if mem:
        big = max(mem, key=lambda m: m[1])
        out.append(f"- peak memory <= 1.5x hand on array workloads: worst {big[1]:.2f}x "
                   f"({big[0]}): {_mark(big[1] <= 1.5)}")
    pending = [r.name for r in rows if r.status.get("sgc", "").startswith("pending")]
    if pending:
        out.append(f"- not measured yet (pending compiler support): {', '.join(pending)}")
    return out


def machine_facts(others) -> list[str]:
    import numpy
    cfg = numpy.show_config(mode="dicts")
    blas = cfg.get("Build Dependencies", {}).get("blas", {})
    nproc = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "?"
    lines = [f"- machine: {_cpu_model()}, {platform.machine()}, {os.cpu_count()} CPUs "
             f"(nproc {nproc}), {platform.platform()}",
             f"- Python {platform.python_version()}, NumPy {numpy.__version__}, BLAS "
             f"{blas.get('name', '?')} {blas.get('version', '')}",
             "- environment: " + ", ".join(f"{k}={os.environ.get(k, '(unset)')}"
                                           for k in ENV_VARS),
             "- threads: " + ", ".join(f"{k}: {v}" for k, v in
                                       systems.thread_facts(others).items())]
    versions = [f"{n} {importlib.metadata.version(n)}" for n in systems.OPTIONAL
                if n in others]
    lines.append("- other systems: " + (", ".join(versions) if versions else "none"))
    return lines


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def status_table(rows, contenders) -> list[str]:
    return _table(["workload"] + list(contenders),
                  [[r.name] + [r.status.get(c, "—") for c in contenders] for r in rows])
