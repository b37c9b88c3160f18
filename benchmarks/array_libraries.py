"""NumPy against another array library (CuPy on a GPU) for the MLP and softmax workloads.

    python benchmarks/array_libraries.py                    # CuPy, the workloads' sizes and larger
    python benchmarks/array_libraries.py --library array_api_strict --smoke   # a CPU check

The same `grad(f)` is called with NumPy arrays and with the library's arrays (copied to it
once, before timing); on a GPU every call ends with a device synchronisation, so the time
is the gradient's, not its launch. The two are timed side by side (benchmarks/timing.py)
and the speed-up is the ratio of their medians in the same run. Each gradient is also
compared with NumPy's. Exits 0 with a line saying so when the library is not installed.
"""
from __future__ import annotations

import argparse
import importlib
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from benchmarks.timing import interleaved, medians  # noqa: E402
from benchmarks.workloads import mlp, softmax_xent  # noqa: E402
from sgcompiler import grad  # noqa: E402

# (workload, sizes): the suite's sizes, then sizes where a GPU has work to do
CASES = [
    (softmax_xent.WORKLOAD, softmax_xent.WORKLOAD.sizes["full"]),
    (softmax_xent.WORKLOAD, {"batch": 4096, "classes": 1000}),
    (mlp.WORKLOAD, mlp.WORKLOAD.sizes["full"]),
    (mlp.WORKLOAD, {"batch": 4096, "inputs": 784, "hidden": 1024, "outputs": 10}),
]


def synchroniser(lib):
    """A function that waits for the library's device to finish (CuPy), else nothing."""
    cuda = getattr(lib, "cuda", None)
    if cuda is not None and hasattr(cuda, "Device"):
        return lambda: cuda.Device().synchronize()
    return lambda: None


def to_numpy(lib, a):
    """A host copy of one of the library's arrays (CuPy's .get(), else the buffer)."""
    return a.get() if hasattr(a, "get") else np.asarray(a)


def measure(workload, sizes, lib, budget_s):
    """(NumPy seconds, library seconds, largest relative difference of the gradients)."""
    args = workload.make(sizes, np.random.default_rng(0))
    moved = [lib.asarray(a) for a in args]
    wait = synchroniser(lib)
    g = grad(workload.fn, wrt=workload.wrt if len(workload.wrt) > 1 else workload.wrt[0])
    expected, got = g(*args), g(*moved)
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = got if isinstance(got, tuple) else (got,)
    error = max(float(np.max(np.abs(to_numpy(lib, b) - a)) / (np.max(np.abs(a)) or 1.0))
                for a, b in zip(expected, got))

    def on_library():
        g(*moved)
        wait()
    times = medians(interleaved({"numpy": lambda: g(*args), "library": on_library},
                                budget_s))
    return times["numpy"], times["library"], error


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", default="cupy",
                        help="the array library's module (cupy, array_api_strict, ...)")
    parser.add_argument("--smoke", action="store_true", help="the workloads' smoke sizes")
    parser.add_argument("--budget", type=float, default=3.0, help="seconds per case")
    options = parser.parse_args(argv)
    try:
        lib = importlib.import_module(options.library)
        lib.asarray(np.zeros(1))
    except Exception as exc:        # not installed, or no device
        print(f"{options.library} cannot be used here ({type(exc).__name__}: {exc}); "
              "nothing measured")
        return 0
    cases = [(w, w.sizes["smoke"]) for w in (softmax_xent.WORKLOAD, mlp.WORKLOAD)] \
        if options.smoke else CASES
    print(f"| workload | sizes | NumPy ms | {options.library} ms | speed-up | "
          "gradient difference |")
    print("|---|---|---:|---:|---:|---:|")
    worst = 0.0
    for workload, sizes in cases:
        numpy_s, lib_s, error = measure(workload, sizes, lib,
                                        0.2 if options.smoke else options.budget)
        worst = max(worst, error)
        shown = " ".join(f"{k}={v}" for k, v in sizes.items())
        print(f"| {workload.name} | {shown} | {numpy_s * 1e3:.3f} | {lib_s * 1e3:.3f} | "
              f"{numpy_s / lib_s:.2f}x | {error:.1e} |")
    return 0 if worst < 1e-6 else 1


if __name__ == "__main__":
    sys.exit(main())
