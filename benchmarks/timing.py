"""Measuring: interleaved median timings, peak memory, and the cost of a cached call.

The machine is shared and noisy, so contenders are timed side by side: each repetition
calls every contender once (in a rotating order), and only ratios of medians taken in the
same run are compared. Fast calls are repeated within one sample (like timeit's autorange)
so the clock's resolution does not matter.
"""
from __future__ import annotations

import gc
import os
import statistics
import time
import tracemalloc

SAMPLE_S = 0.002          # a sample lasts at least this long (fast calls are looped)
SLOW_S = 0.3              # contenders slower than this get only MIN_SLOW samples
MIN_SLOW = 3
VERY_SLOW_S = 2.0         # ... and those slower than this a single sample
# SGC_BENCH_CLOCK=cpu (run.py --cpu-clock): the CPU time of this thread instead of the
# wall clock, so that time spent waiting for a core on a crowded machine is not counted
# (with one BLAS thread, all of a call's work is this thread's)
_clock = time.thread_time if os.environ.get("SGC_BENCH_CLOCK") == "cpu" else time.perf_counter


def limit_threads(n: int) -> str:
    """Limit the BLAS and OpenMP pools of this process to n threads (threadpoolctl, when
    installed), so a contender's time is its own work and not a race for the cores; a
    note for the report says what was done."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return "threads not limited (threadpoolctl is not installed)"
    threadpool_limits(n)
    return f"{n} BLAS thread{'s' if n > 1 else ''} (threadpoolctl)"


def _seconds(fn) -> float:
    start = _clock()
    fn()
    return _clock() - start


def interleaved(contenders: dict, budget_s: float, min_reps: int = 7,
                max_reps: int = 60) -> dict:
    """Seconds per call of each contender, one sample per repetition (name -> list).

    Sample i of every contender comes from repetition i, so `paired_ratio` can compare
    calls made moments apart, which cancels the slow swings in load of a shared machine.

    The first call of each contender is a warm-up (allocator, caches, autograd's first
    trace), the second an estimate that sets how often it is looped per sample. A contender
    slower than SLOW_S gets MIN_SLOW samples, one slower than VERY_SLOW_S only its estimate.

    Args:
        contenders: name -> zero-argument callable.
        budget_s: about how long all repetitions together may take.
    Returns:
        name -> list of seconds per call (see `medians`, `paired_ratio`).
    """
    est = {name: _seconds(fn) for name, fn in contenders.items()}
    samples = {n: [] for n in contenders}
    for name, fn in contenders.items():
        if est[name] < VERY_SLOW_S:
            est[name] = _seconds(fn)
        if est[name] > SLOW_S:
            samples[name].append(est[name])
    loops = {name: max(1, int(SAMPLE_S / max(t, 1e-9))) for name, t in est.items()}
    per_rep = sum(est[n] * loops[n] for n in contenders if est[n] <= SLOW_S)
    reps = int(min(max_reps, max(min_reps, budget_s / max(per_rep, 1e-9))))
    want = {n: reps if est[n] <= SLOW_S else (1 if est[n] > VERY_SLOW_S else MIN_SLOW)
            for n in contenders}
    names = list(contenders)
    enabled = gc.isenabled()
    gc.disable()
    try:
        for r in range(reps):
            for name in names[r % len(names):] + names[:r % len(names)]:
                if len(samples[name]) >= want[name]:
                    continue
                fn, n = contenders[name], loops[name]
                start = _clock()
                for _ in range(n):
                    fn()
                samples[name].append((_clock() - start) / n)
            gc.collect()
    finally:
        if enabled:
            gc.enable()
    return samples


def medians(samples: dict) -> dict:
    return {n: statistics.median(s) for n, s in samples.items()}


def paired_ratio(a: list, b: list) -> float:
    """The median over repetitions of a_i / b_i (samples taken side by side)."""
    n = min(len(a), len(b))
    return statistics.median(a[i] / b[i] for i in range(n))


def peak_bytes(fn) -> int:
    """Peak memory (bytes) that one call of `fn` allocates above what was live before it.

    NumPy reports its data buffers to tracemalloc, so this counts arrays and Python objects.
    """
    gc.collect()
    started = tracemalloc.is_tracing()
    if not started:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result = fn()
        peak = tracemalloc.get_traced_memory()[1] - before
        del result
    finally:
        if not started:
            tracemalloc.stop()
    return peak


def call_overhead(wrapped, direct, args, calls: int = 5000, reps: int = 15) -> tuple:
    """Median seconds per call of `wrapped(*args)` and of `direct(*args)`, interleaved."""
    a, b = [], []
    pairs = [(wrapped, a), (direct, b)]
    enabled = gc.isenabled()
    gc.disable()
    try:
        for r in range(reps):
            for fn, out in (pairs if r % 2 else pairs[::-1]):
                start = time.perf_counter()
                for _ in range(calls):
                    fn(*args)
                out.append((time.perf_counter() - start) / calls)
    finally:
        if enabled:
            gc.enable()
    return statistics.median(a), statistics.median(b)
