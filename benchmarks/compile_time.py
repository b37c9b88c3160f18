"""How compile time and memory grow with the length of the function compiled.

    python benchmarks/compile_time.py                     the table: 100, 1,000, 10,000 statements
    python benchmarks/compile_time.py --sizes 100,200     other sizes
    python benchmarks/compile_time.py --only chain        some program families
    python benchmarks/compile_time.py --profile chain:1000   cProfile of one compilation
    python benchmarks/compile_time.py --stages sums:10000    time per stage of one compilation
    python benchmarks/compile_time.py --against ../old-checkout   before and after, side by side
    python benchmarks/compile_time.py --timeout 120       give up on a compilation after 120 s

Each program is written to a file of its own (the compiler reads source from files) and
compiled in a fresh process, once for time (CPU time of the process: on a machine shared
with other work, wall time says more about the neighbours) and once more under
tracemalloc for the peak of memory the compilation allocated (Python's allocations alone;
slow at 10,000 statements: --no-memory leaves it out). The time run also gives how much the
process's peak resident memory grew during the compilation (the operating system's count,
which is what a user sees, at no cost to the time; the warm-up's freed memory can be reused,
so at 100 statements it reads low). The table gives time and memory per statement, and the ratio of time from one size to the next divided by the ratio
of sizes: 1.0 is linear growth; 2.0 at a tenfold step would be n log n at best. With
--against, each row is measured with both checkouts, one after the other (the order
alternating from row to row), so that the machine's load falls on both alike.
Target (issue 18): at most 2 ms and 100 KB per statement, for every family.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT       # the checkout whose compiler is measured (--against: another one too)
TARGET_MS, TARGET_KB = 2.0, 100.0


def chain(n):
    """The issue's straight-line program: n statements `y = y * 1.0001 + c`."""
    lines = ["def f(x, c):", "    y = x"]
    lines += ["    y = y * 1.0001 + c"] * n
    return lines + ["    return np.sum(y)"], "(np.ones(3), np.ones(3))"


def product(n):
    """One expression: a product of n terms (n statements after normalisation)."""
    terms = " * ".join(f"(x + {k % 7 + 1})" for k in range(n))
    return ["def f(x):", f"    return np.sum({terms})"], "(np.full(3, 0.5),)"


def sums(n):
    """n statements that each read two earlier values: a wider data-flow graph."""
    lines = ["def f(x, w):", "    a = x", "    b = w"]
    for k in range(n // 2):
        lines += [f"    a = np.sin(a) * b + {k % 5}", "    b = b + a * 0.5"]
    return lines + ["    return np.sum(a * b)"], "(np.ones(3), np.ones(3))"


def helpers(n):
    """n // 4 helper functions, each called once in a chain."""
    lines = []
    count = max(1, n // 4)
    for k in range(count):
        lines += [f"def h{k}(y, c):", "    z = y * 1.0001 + c", "    z = np.tanh(z)",
                  "    return z * 0.5"]
    lines += ["def f(x, c):", "    y = x"]
    lines += [f"    y = h{k}(y, c)" for k in range(count)]
    return lines + ["    return np.sum(y)"], "(np.ones(3), np.ones(3))"


def nested(depth, n):
    """Loops nested `depth` deep (two trips each) around a body of the chain's statements:
    what the loops' save and restore code costs to compile."""
    lines = ["def f(x, c):", "    y = x"]
    for level in range(depth):
        lines.append("    " * (level + 1) + f"for i{level} in range(2):")
    pad = "    " * (depth + 1)
    lines += [f"{pad}y = y * 1.0001 + c"] * n
    return lines + ["    return np.sum(y)"], "(np.ones(3), np.ones(3))"


FAMILIES = {"chain": chain, "product": product, "sums": sums, "helpers": helpers}
FAMILIES.update({f"nested{d}": (lambda n, d=d: nested(d, n)) for d in (1, 2, 3, 4)})
SIZES = (100, 1000, 10000)


def statements(lines) -> int:
    return sum(1 for line in lines if line.strip() and not line.lstrip().startswith("def "))


def _write(family, n, folder) -> tuple[Path, str, int]:
    lines, args = FAMILIES[family](n)
    path = Path(folder) / f"prog_{family}_{n}.py"
    path.write_text("import numpy as np\n\n" + "\n".join(lines) + "\n")
    # a product of n terms is one source line that normalises to n statements
    return path, args, n if family == "product" else statements(lines)


_CHILD = r"""
import importlib.util, json, resource, sys, time, tracemalloc
import numpy as np
sys.setrecursionlimit(100000)
from sgcompiler import grad
def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    return mod
args = eval(sys.argv[2], {"np": np})
# the same program at size 2 first: imports made on first use (SciPy's rules, the
# rule tables) are paid once per process, not per statement
grad(load(sys.argv[4], "small").f)(*args)
mod = load(sys.argv[1], "prog")
memory = sys.argv[3] == "memory"
if memory:
    tracemalloc.start()
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss     # KB on Linux
start = time.process_time()
g = grad(mod.f)
g(*args)
seconds = time.process_time() - start
peak = tracemalloc.get_traced_memory()[1] if memory else 0
rss = 1024 * (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss)
print(json.dumps({"seconds": seconds, "peak": peak, "rss": rss, "lines": len(g.source.splitlines())}))
"""


def measure(path, args, small, what="time", source=None, timeout=3600) -> dict:
    source = source or SOURCE
    env = dict(os.environ, PYTHONPATH=f"{source}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    # (run in the programs' folder: `python -c` puts the working directory first on
    # sys.path, where a checkout would shadow the one measured)
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD, str(path), args, what,
                               str(small)], capture_output=True, text=True, env=env,
                              timeout=timeout, cwd=path.parent)
    except subprocess.TimeoutExpired:
        return {"error": f"did not finish in {timeout} s"}
    if done.returncode:
        return {"error": done.stderr.strip().splitlines()[-1][:120]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def profile(target, folder):
    family, n = target.split(":")
    path, args, _ = _write(family, int(n), folder)
    small = _write(family, 2, folder)[0]
    script = (_CHILD.replace("start = time.process_time()", "import cProfile; p = cProfile.Profile(); p.enable(); start = time.process_time()")
              .replace("seconds = time.process_time() - start", "seconds = time.process_time() - start; p.disable(); import pstats; pstats.Stats(p, stream=sys.stderr).sort_stats('cumulative').print_stats(45)"))
    env = dict(os.environ, PYTHONPATH=str(SOURCE))
    subprocess.run([sys.executable, "-c", script, str(path), args, "time", str(small)],
                   env=env, cwd=path.parent)


_STAGES = r"""
import time
from sgcompiler.pipeline import trace
marks = []
_call = trace._Trace.__call__
def _timed(self, stage, made):
    _call(self, stage, made)
    marks.append((stage, time.process_time()))
trace._Trace.__call__ = _timed
"""


def stages(target, folder, source=None):
    """CPU ms per statement spent in each stage of one compilation (from the end of the
    stage before to the end of this one; the last row is Python's compile of the code
    made, and the first call)."""
    family, n = target.split(":")
    path, args, count = _write(family, int(n), folder)
    small = _write(family, 2, folder)[0]
    script = (_CHILD.replace("from sgcompiler import grad", _STAGES + "from sgcompiler import grad")
              .replace("start = time.process_time()", "marks.clear(); start = time.process_time()")
              + "print(json.dumps([(s, t - start) for s, t in marks] + [('end', seconds)]))\n")
    env = dict(os.environ, PYTHONPATH=str(source or SOURCE))
    done = subprocess.run([sys.executable, "-c", script, str(path), args, "time", str(small)],
                          env=env, cwd=path.parent, capture_output=True, text=True)
    if done.returncode:
        sys.exit(done.stderr.strip().splitlines()[-1])
    marks = json.loads(done.stdout.strip().splitlines()[-1])
    last = 0.0
    print(f"| stage | ms/statement ({target}) |\n|---|---:|")
    for stage, t in marks:
        print(f"| {stage if stage != 'end' else 'after the last stage'} | {1e3 * (t - last) / count:.3f} |")
        last = t
    print(f"| total | {1e3 * last / count:.3f} |")


def row(family, size, folder, memory=True, source=None, timeout=3600):
    path, args, n = _write(family, size, folder)
    small = _write(family, 2, folder)[0]
    timed = measure(path, args, small, source=source, timeout=timeout)
    if "error" in timed:
        return {"family": family, "size": size, "statements": n, "error": timed["error"]}
    peak = 0
    if memory:
        # (tracemalloc makes the compilation slower: give it more time)
        held = measure(path, args, small, "memory", source, 3 * timeout)
        if "error" in held:
            return {"family": family, "size": size, "statements": n, "error":
                    f"{timed['seconds']:.1f} s; memory: {held['error']}"}
        peak = held["peak"]
    return {"family": family, "size": size, "statements": n, "seconds": timed["seconds"],
            "ms_per_statement": 1e3 * timed["seconds"] / n,
            "kb_per_statement": peak / 1024 / n, "rss_kb_per_statement": timed["rss"] / 1024 / n,
            "generated_lines": timed["lines"]}


def table(rows) -> str:
    out = ["| program | statements | compile CPU s | ms/statement | KB/statement | "
           "peak RSS KB/statement | growth (time ratio / size ratio) |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    previous = {}
    for r in rows:
        if "error" in r:
            out.append(f"| {r['family']} | {r['statements']} | failed: {r['error']} | | | | |")
            continue
        last = previous.get(r["family"])
        growth = (f"{(r['seconds'] / last['seconds']) / (r['statements'] / last['statements']):.2f}"
                  if last else "")
        previous[r["family"]] = r
        label = r["family"].replace("nested", "loops nested ") + (" deep" if "nested" in r["family"] else "")
        kb = f"{r['kb_per_statement']:.1f}" if r["kb_per_statement"] else "(not run)"
        out.append(f"| {label} | {r['statements']} | {r['seconds']:.2f} | "
                   f"{r['ms_per_statement']:.2f} | {kb} | {r['rss_kb_per_statement']:.1f} | {growth} |")
    return "\n".join(out)


def side_by_side(pairs, before_name="before", after_name="after", memory=True) -> str:
    """Rows measured with two checkouts: per statement, before and after, and the ratio."""
    out = [f"| program | statements | ms/statement {before_name} | {after_name} | ratio | "
           f"KB/statement {before_name} | {after_name} |", "|---|---:|---:|---:|---:|---:|---:|"]
    if not memory:
        out = [out[0].rsplit("| KB", 1)[0] + "|", "|---|---:|---:|---:|---:|"]

    def cell(r, key):
        return r["error"] if "error" in r else f"{r[key]:.2f}"
    for before, after in pairs:
        ratio = (f"{after['ms_per_statement'] / before['ms_per_statement']:.2f}"
                 if "error" not in before and "error" not in after else "")
        label = after["family"].replace("nested", "loops nested ") + \
            (" deep" if "nested" in after["family"] else "")
        line = (f"| {label} | {after['statements']} | {cell(before, 'ms_per_statement')} | "
                f"{cell(after, 'ms_per_statement')} | {ratio} |")
        if memory:
            line += f" {cell(before, 'kb_per_statement')} | {cell(after, 'kb_per_statement')} |"
        out.append(line)
    return "\n".join(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--only", default=",".join(FAMILIES))
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument("--profile", help="FAMILY:SIZE, print a cProfile of it")
    parser.add_argument("--stages", help="FAMILY:SIZE, print the time of each stage of it")
    parser.add_argument("--against", help="also measure the compiler of another checkout "
                                          "(an older commit), side by side")
    parser.add_argument("--timeout", type=float, default=3600,
                        help="seconds one compilation may take (three times that under "
                             "tracemalloc)")
    opts = parser.parse_args(argv)
    other = Path(opts.against).resolve() if opts.against else None
    with tempfile.TemporaryDirectory() as folder:
        if opts.profile:
            return profile(opts.profile, folder)
        if opts.stages:
            return stages(opts.stages, folder)
        rows, pairs = [], []
        for family in opts.only.split(","):
            for size in map(int, opts.sizes.split(",")):
                if other is None:
                    rows.append(row(family, size, folder, not opts.no_memory,
                                    timeout=opts.timeout))
                    print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
                    continue
                order = [other, ROOT] if len(pairs) % 2 == 0 else [ROOT, other]
                made = {source: row(family, size, folder, not opts.no_memory, source,
                                    opts.timeout) for source in order}
                pairs.append((made[other], made[ROOT]))
                rows.append(made[ROOT])
                print(json.dumps({"before": made[other], "after": made[ROOT]}),
                      file=sys.stderr, flush=True)
    if pairs:
        print(side_by_side(pairs, other.name, ROOT.name, not opts.no_memory) + "\n")
    print(table(rows))
    worst = [r for r in rows if "error" not in r and (r["ms_per_statement"] > TARGET_MS
                                                       or r["kb_per_statement"] > TARGET_KB)]
    missed = ", ".join(f"{r['family']}:{r['size']}" for r in worst)
    print(f"\ntarget: <= {TARGET_MS} ms and <= {TARGET_KB} KB per statement; "
          f"{'missed by ' + missed if worst else 'met'}")


if __name__ == "__main__":
    main()
