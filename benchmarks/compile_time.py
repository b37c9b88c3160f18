"""How compile time and memory grow with the length of the function compiled.

    python benchmarks/compile_time.py                     the table: 100, 1,000, 10,000 statements
    python benchmarks/compile_time.py --sizes 100,200     other sizes
    python benchmarks/compile_time.py --only chain        some program families
    python benchmarks/compile_time.py --profile chain:1000   cProfile of one compilation
    python benchmarks/compile_time.py --against ../old-checkout   the same table, before

Each program is written to a file of its own (the compiler reads source from files) and
compiled in a fresh process, once for time (CPU time of the process: on a machine shared
with other work, wall time says more about the neighbours) and once more under
tracemalloc for the peak of memory the compilation allocated. The table gives time and
memory per statement, and the ratio of time from one size to the next divided by the ratio
of sizes: 1.0 is linear growth; 2.0 at a tenfold step would be n log n at best.
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
SOURCE = ROOT       # the checkout whose compiler is measured (--against: another one)
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
import importlib.util, json, sys, time, tracemalloc
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
start = time.process_time()
g = grad(mod.f)
g(*args)
seconds = time.process_time() - start
peak = tracemalloc.get_traced_memory()[1] if memory else 0
print(json.dumps({"seconds": seconds, "peak": peak, "lines": len(g.source.splitlines())}))
"""


def measure(path, args, small, what="time") -> dict:
    env = dict(os.environ, PYTHONPATH=f"{SOURCE}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    # (run in the programs' folder: `python -c` puts the working directory first on
    # sys.path, where a checkout would shadow the one measured)
    done = subprocess.run([sys.executable, "-c", _CHILD, str(path), args, what, str(small)],
                          capture_output=True, text=True, env=env, timeout=3600,
                          cwd=path.parent)
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


def row(family, size, folder, memory=True):
    path, args, n = _write(family, size, folder)
    small = _write(family, 2, folder)[0]
    timed = measure(path, args, small)
    if "error" in timed:
        return {"family": family, "size": size, "statements": n, "error": timed["error"]}
    peak = measure(path, args, small, "memory")["peak"] if memory else 0
    return {"family": family, "size": size, "statements": n, "seconds": timed["seconds"],
            "ms_per_statement": 1e3 * timed["seconds"] / n,
            "kb_per_statement": peak / 1024 / n, "generated_lines": timed["lines"]}


def table(rows) -> str:
    out = ["| program | statements | compile CPU s | ms/statement | KB/statement | "
           "growth (time ratio / size ratio) |", "|---|---:|---:|---:|---:|---:|"]
    previous = {}
    for r in rows:
        if "error" in r:
            out.append(f"| {r['family']} | {r['statements']} | failed: {r['error']} | | | |")
            continue
        last = previous.get(r["family"])
        growth = (f"{(r['seconds'] / last['seconds']) / (r['statements'] / last['statements']):.2f}"
                  if last else "")
        previous[r["family"]] = r
        label = r["family"].replace("nested", "loops nested ") + (" deep" if "nested" in r["family"] else "")
        out.append(f"| {label} | {r['statements']} | {r['seconds']:.2f} | "
                   f"{r['ms_per_statement']:.2f} | {r['kb_per_statement']:.1f} | {growth} |")
    return "\n".join(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--only", default=",".join(FAMILIES))
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument("--profile", help="FAMILY:SIZE, print a cProfile of it")
    parser.add_argument("--against", help="measure the compiler of another checkout "
                                          "(an older commit, for before/after)")
    opts = parser.parse_args(argv)
    global SOURCE
    SOURCE = Path(opts.against).resolve() if opts.against else ROOT
    with tempfile.TemporaryDirectory() as folder:
        if opts.profile:
            return profile(opts.profile, folder)
        rows = []
        for family in opts.only.split(","):
            for size in map(int, opts.sizes.split(",")):
                rows.append(row(family, size, folder, not opts.no_memory))
                print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    print(table(rows))
    worst = [r for r in rows if "error" not in r and (r["ms_per_statement"] > TARGET_MS
                                                       or r["kb_per_statement"] > TARGET_KB)]
    missed = ", ".join(f"{r['family']}:{r['size']}" for r in worst)
    print(f"\ntarget: <= {TARGET_MS} ms and <= {TARGET_KB} KB per statement; "
          f"{'missed by ' + missed if worst else 'met'}")


if __name__ == "__main__":
    main()
