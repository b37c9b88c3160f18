"""The numba backend on loops: grad(f, backend="numba") against the hand-written NumPy
gradient, the NumPy backend and (where installed) JAX jit, as ratios measured side by side.

    python benchmarks/jit.py              all workloads
    python benchmarks/jit.py --only euler,recurrence
    python benchmarks/jit.py --cpu-clock --budget 3      (CPU time: a crowded machine)

Workloads: the benchmark's Euler loop (1000 steps) and `while` series, Kepler's equation
solved by a `while` fixed-point iteration, a scalar recurrence
of 1e5 steps, the RNN (50 steps, hidden 32) and the elementwise function (1e6 elements:
no loop, for comparison). JAX jit cannot trace a 1e5-step Python loop nor reverse a
`while`; for the scalar loops it gets the same loop written with `jax.lax.fori_loop`
(what a JAX user writes), for the RNN and the elementwise function the function itself.
Every gradient is checked against the hand-written one first (rtol 1e-8, JAX 1e-6).
Columns: seconds per call of the hand-written gradient, then each contender's time as a
ratio to it (median of ratios of calls made moments apart: below 1 is faster), the first
call of the numba gradient (sgcompiler's compilation plus numba's), and of that numba's
part (less the first call of the NumPy backend, which is sgcompiler's compilation).
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import timing  # noqa: E402
from benchmarks.workloads import elementwise, euler, kepler, rnn, while_series  # noqa: E402
from sgcompiler import JitFallbackWarning, grad  # noqa: E402


def recurrence(a, b, x0, steps):
    x = x0
    for _ in range(steps):
        x = a * math.sin(x) + b
    return x * x


def recurrence_hand(a, b, x0, steps):
    xs = [0.0] * steps
    x = x0
    for i in range(steps):
        xs[i] = x
        x = a * math.sin(x) + b
    dx, da, db = 2.0 * x, 0.0, 0.0
    for i in range(steps - 1, -1, -1):
        s = math.sin(xs[i])
        da += dx * s
        db += dx
        dx = dx * a * math.cos(xs[i])
    return da, db


def _jax_recurrence(jax, jnp):
    def loss(a, b, x0, steps):
        return jax.lax.fori_loop(0, steps, lambda i, x: a * jnp.sin(x) + b, x0) ** 2
    return jax.jit(jax.grad(loss, argnums=(0, 1)), static_argnums=3)


def _jax_euler(jax, jnp):
    def loss(k, c, theta0, omega0, dt, steps):
        def step(i, state):
            theta, omega = state
            alpha = -k * jnp.sin(theta) - c * omega
            return theta + dt * omega, omega + dt * alpha
        theta, omega = jax.lax.fori_loop(0, steps, step, (theta0, omega0))
        return theta * theta + omega * omega
    return jax.jit(jax.grad(loss, argnums=(0, 1)), static_argnums=5)


def _jax_as_written(workload):
    def make(jax, jnp):
        from benchmarks.systems import positions, rebind
        fn = rebind(workload.fn, np=jnp, math=jnp, stop_gradient=jax.lax.stop_gradient)
        return jax.jit(jax.grad(fn, argnums=positions(workload)))
    return make


# name -> (function, wrt, hand-written gradient, arguments, JAX jit maker or None)
def workloads(rng):
    return {
        "euler": (euler.pendulum, ("k", "c"), euler.pendulum_hand,
                  euler.make({"steps": 1000}, rng), _jax_euler),
        "while_series": (while_series.exp_series, ("x",), while_series.exp_series_hand,
                         while_series.make({"x": 30.0}, rng), None),
        "kepler": (kepler.kepler, kepler.WORKLOAD.wrt, kepler.kepler_hand,
                   kepler.make(kepler.WORKLOAD.sizes["full"], rng), None),
        "recurrence": (recurrence, ("a", "b"), recurrence_hand, (0.9, 0.1, 0.3, 100_000),
                       _jax_recurrence),
        "rnn": (rnn.rnn, rnn.WORKLOAD.wrt, rnn.rnn_hand,
                rnn.make(rnn.WORKLOAD.sizes["full"], rng), _jax_as_written(rnn.WORKLOAD)),
        "elementwise": (elementwise.elementwise, elementwise.WORKLOAD.wrt,
                        elementwise.elementwise_hand,
                        elementwise.make({"n": 1_000_000}, rng),
                        _jax_as_written(elementwise.WORKLOAD)),
    }


def _tuple(result):
    return tuple(np.asarray(r, dtype=float) for r in
                 (result if isinstance(result, tuple) else (result,)))


def _check(name, got, want, rtol):
    for g, w in zip(_tuple(got), _tuple(want)):
        if not np.allclose(g, w, rtol=rtol, atol=1e-12):
            raise SystemExit(f"{name}: gradient differs from the hand-written one")


def _jax(maker, args):
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None, None
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
    g = maker(jax, jnp)
    jargs = tuple(jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args)
    start = _now()
    jax.block_until_ready(g(*jargs))
    compile_s = _now() - start
    return (lambda: jax.block_until_ready(g(*jargs))), compile_s


def _now():
    """The benchmark's clock (--cpu-clock: the process's CPU time, all its threads: JAX
    compiles and runs on threads of its own)."""
    return timing._clock()


def run_one(name, fn, wrt, hand, args, jax_maker, budget_s):
    numpy_grad, numba_grad = grad(fn, wrt=wrt), grad(fn, wrt=wrt, backend="numba")
    want = hand(*args)
    start = _now()
    got = numpy_grad(*args)
    compile_s = _now() - start         # sgcompiler's compilation
    _check(f"{name} (numpy backend)", got, want, 1e-8)
    with warnings.catch_warnings(record=True) as fell_back:
        warnings.simplefilter("always", JitFallbackWarning)
        start = _now()
        got = numba_grad(*args)
        first_s = _now() - start
    _check(f"{name} (numba backend)", got, want, 1e-8)
    contenders = {"hand": lambda: hand(*args), "sg-numpy": lambda: numpy_grad(*args),
                  "sg-numba": lambda: numba_grad(*args)}
    jax_compile = None
    if jax_maker is not None:
        call, jax_compile = _jax(jax_maker, args)
        if call is not None:
            _check(f"{name} (JAX)", call(), want, 1e-6)
            contenders["jax-jit"] = call
    samples = timing.interleaved(contenders, budget_s)
    ratios = {k: timing.paired_ratio(samples[k], samples["hand"]) for k in contenders}
    return {"name": name, "hand_s": timing.medians(samples)["hand"], "ratios": ratios,
            "first_s": first_s, "numba_s": first_s - compile_s, "jax_compile_s": jax_compile,
            "fallback": [str(w.message) for w in fell_back]}


def table(rows) -> str:
    out = ["| workload | hand-written s | sg numpy / hand | sg numba / hand | JAX jit / hand "
           "| numba / JAX | numba first call s | of which numba s | JAX compile s |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        q = r["ratios"]
        jax = f"{q['jax-jit']:.3f}" if "jax-jit" in q else "n/a"
        versus = f"{q['sg-numba'] / q['jax-jit']:.2f}" if "jax-jit" in q else "n/a"
        jc = f"{r['jax_compile_s']:.2f}" if r["jax_compile_s"] is not None else "n/a"
        out.append(f"| {r['name']} | {r['hand_s']:.2e} | {q['sg-numpy']:.3f} | "
                   f"{q['sg-numba']:.4f} | {jax} | {versus} | {r['first_s']:.2f} | "
                   f"{r['numba_s']:.2f} | {jc} |")
    notes = [f"- {r['name']}: {m}" for r in rows for m in r["fallback"]]
    return "\n".join(out + (["", "Fell back to NumPy:"] + notes if notes else []))


def _warm_up():
    """Pay once what the first compilation of a process pays (sgcompiler's rule tables,
    SciPy's rules, numba's own start, and its first code on arrays: allocation, the
    array expressions' machinery), so the columns are per function. Returns the
    seconds of the two numba compilations (numbers, arrays)."""
    def tiny(x):
        return math.sin(x) * x

    def tiny_array(a):
        return np.sum(np.tanh(a) * a)
    grad(tiny)(0.5)
    grad(tiny_array)(np.ones(2))
    took = []
    for f, x in ((tiny, 0.5), (tiny_array, np.ones(2))):
        start = _now()
        grad(f, backend="numba")(x)
        took.append(_now() - start)
    return took


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="")
    parser.add_argument("--budget", type=float, default=4.0, help="seconds per workload")
    parser.add_argument("--cpu-clock", action="store_true",
                        help="time with the CPU time of the process (all its threads: "
                             "JAX runs on its own), first calls included, not the wall "
                             "clock")
    opts = parser.parse_args(argv)
    if opts.cpu_clock:
        timing._clock = time.process_time
    chosen = workloads(np.random.default_rng(0))
    names = opts.only.split(",") if opts.only else list(chosen)
    load = os.getloadavg()[0]
    numbers_s, arrays_s = _warm_up()
    rows = [run_one(n, *chosen[n], opts.budget) for n in names]
    print(table(rows))
    clock = {time.process_time: "CPU time of the process",
             time.thread_time: "CPU time of this thread (JAX's threads not counted)"}.get(
        timing._clock, "wall clock")
    print(f"\n({clock}; load average {load:.1f} before, {os.getloadavg()[0]:.1f} after. "
          f"Before these, the first numba compilations of the process, of one-line "
          f"functions, took {numbers_s:.2f} s (numbers) and {arrays_s:.2f} s (arrays))")


if __name__ == "__main__":
    main()
