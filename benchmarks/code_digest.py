"""Digests of the code the compiler generates, to prove a change to the compiler left it as it was.

    python benchmarks/code_digest.py > /tmp/after.json           this checkout
    python benchmarks/code_digest.py --against /tmp/parent       compare with another checkout
    python benchmarks/code_digest.py --against /tmp/parent --without-comments
                                          the same, comment lines left out (a change of headers)

A change made for compile time alone must leave every generated line as it was. The corpus:
the compile-time families (compile_time.py) at a few sizes, every benchmark workload
(specialised for its smoke sizes, and for any shape), and random programs of
tests/program_grammar.py (extended, with every extra), each compiled for any shape and
specialised for its point. An item is the generated source, or the refusal's message: a
refusal must stay the same refusal. `--against DIR` runs the same corpus with the compiler
of the checkout DIR in a second process and lists the items that differ.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _digest(text: str, comments=True) -> str:
    if not comments:
        text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def _outcome(compile_it) -> str:
    from sgcompiler import SGCompilerError
    try:
        return compile_it()
    except SGCompilerError as e:
        return f"refused: {e}"
    except Exception as e:      # (a crash is an outcome too: it must stay the same)
        return f"raised {type(e).__name__}: {e}"


def _families(sizes):
    import importlib.util
    import tempfile

    import numpy as np

    import compile_time
    from sgcompiler import grad
    folder = tempfile.mkdtemp()
    for family in compile_time.FAMILIES:
        for n in sizes:
            path, args, _ = compile_time._write(family, n, folder)
            spec = importlib.util.spec_from_file_location(f"prog_{family}_{n}", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            values = eval(args, {"np": np})

            def run(f=module.f, values=values):
                g = grad(f)
                g(*values)
                return g.source
            yield f"{family}:{n}", _outcome(run)


def _workloads():
    import numpy as np

    from sgcompiler import grad
    from workloads import all_workloads
    for w in all_workloads():
        args = w.make(w.sizes["smoke"], np.random.default_rng(0))

        def specialised(w=w, args=args):
            g = grad(w.fn, wrt=w.wrt)
            g(*args)
            return g.source
        yield f"workload {w.name}", _outcome(specialised)


def _programs(count, start):
    sys.path.insert(0, str(ROOT / "tests"))
    import numpy as np

    from program_check import load, point
    from program_grammar import EXTRAS, Choices, write_program
    from sgcompiler import grad, stop_gradient
    for seed in range(start, start + count):
        source, y_float = write_program(Choices(random.Random(seed).randrange), (), True,
                                        sorted(EXTRAS))
        x, y = point(0, y_float)

        def any_shape(source=source):
            return grad(load(source, stop_gradient, "digest")).source

        def specialised(source=source, x=x, y=y):
            g = grad(load(source, stop_gradient, "digest"))
            g(np.copy(x), y)
            return g.source
        yield f"program {seed} any shape", _outcome(any_shape)
        yield f"program {seed} specialised", _outcome(specialised)


def corpus(programs: int, start: int, sizes, comments=True) -> dict:
    """item -> digest of its generated code (or of its refusal)."""
    sys.path.insert(0, str(HERE))
    sys.setrecursionlimit(100000)
    warnings.simplefilter("ignore")
    items = {}
    for source in (_families(sizes), _workloads(), _programs(programs, start)):
        for name, text in source:
            items[name] = _digest(text, comments)
    return items


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--programs", type=int, default=300, help="random programs")
    parser.add_argument("--start", type=int, default=0, help="the first program's seed")
    parser.add_argument("--sizes", default="2,30", help="sizes of the compile-time families")
    parser.add_argument("--against", help="a checkout of another commit, to compare with")
    parser.add_argument("--without-comments", action="store_true",
                        help="leave comment lines (headers, source lines) out of the digests")
    parser.add_argument("--this", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    if not args.against:
        print(json.dumps(corpus(args.programs, args.start, sizes, not args.without_comments),
                         indent=0))
        return 0
    runs = []
    for checkout in (ROOT, Path(args.against).resolve()):
        env = dict(os.environ, PYTHONPATH=str(checkout))
        done = subprocess.run([sys.executable, str(Path(__file__).resolve()),
                               "--programs", str(args.programs), "--start", str(args.start),
                               "--sizes", args.sizes] + ["--without-comments"] *
                              args.without_comments, capture_output=True, text=True,
                              env=env, cwd="/")
        if done.returncode:
            sys.exit(f"code_digest.py failed for {checkout}:\n{done.stderr[-2000:]}")
        runs.append(json.loads(done.stdout))
    this, other = runs
    differ = sorted(k for k in this.keys() | other.keys() if this.get(k) != other.get(k))
    for name in differ:
        print(f"differs: {name}")
    print(f"{len(this)} items, {len(differ)} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
