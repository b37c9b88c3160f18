"""The benchmark suite's smoke mode: tiny sizes, correctness only (no timings asserted).

Each workload's hand-written gradient must agree with finite differences, and sgcompiler's
gradient must equal the hand-written one. Workloads the compiler cannot compile yet are
listed, with the reason, in `benchmarks.workloads.PENDING`; a listed workload that now
compiles fails `test_pending_workloads_still_fail_to_compile`, so the list stays current.
"""
import pathlib
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import run, systems  # noqa: E402
from benchmarks.workloads import PENDING, all_workloads, kepler  # noqa: E402
from sgcompiler import SGCompilerError, grad  # noqa: E402

# (kepler is benchmarks/jit.py's alone: the `while` fixed point of issue 18's numba targets)
WORKLOADS = all_workloads() + [kepler.WORKLOAD]
IDS = [w.name for w in WORKLOADS]


def smoke_args(w):
    return w.make(w.sizes["smoke"], np.random.default_rng(0))


def test_at_least_eight_workloads_and_pending_names_exist():
    assert len(all_workloads()) >= 8
    assert set(PENDING) <= set(IDS), set(PENDING) - set(IDS)


@pytest.mark.parametrize("w", WORKLOADS, ids=IDS)
def test_hand_written_gradient_matches_finite_differences(w):
    args = smoke_args(w)
    hand = systems.as_tuple(w.hand(*args))
    assert len(hand) == len(w.wrt)
    assert run.finite_difference_error(w, args, hand) < run.RTOL_FD


@pytest.mark.parametrize("w", WORKLOADS, ids=IDS)
def test_sgcompiler_equals_hand_written(w):
    if w.name in PENDING:
        pytest.skip(f"pending: {PENDING[w.name]}")
    args = smoke_args(w)
    got = systems.as_tuple(grad(w.fn, wrt=w.wrt)(*args))
    assert run.max_error(got, systems.as_tuple(w.hand(*args))) <= run.RTOL_SG


@pytest.mark.parametrize("name", sorted(PENDING))
def test_pending_workloads_still_fail_to_compile(name):
    w = next(w for w in WORKLOADS if w.name == name)
    try:
        grad(w.fn, wrt=w.wrt)(*smoke_args(w))
    except SGCompilerError:
        return
    pytest.fail(f"{name} compiles now: remove it from PENDING in benchmarks/workloads/__init__.py")


def test_smoke_mode_end_to_end():
    lines = []
    assert run.run(smoke=True, others=(), out=lines.append) == 0
    text = "\n".join(lines)
    for w in all_workloads():
        assert f"| {w.name} | ok |" in text


def test_count_ops_counts_operations_and_tape_apart():
    import ast
    from benchmarks import count_ops
    ops, tape = count_ops.operations(ast.parse(
        "a = np.exp(x) * y\nb = a[0]\na[1] = 2.0\n_tape.append(a)\nb += -a[0]\ndel a"))
    # np.exp(...), *, a[0], b += ..., -..., a[0]; the store a[1] = and del are not ops
    assert (ops, tape) == (6, 1)
    trees = [count_ops.hand_tree(w) for w in all_workloads()]
    assert all(count_ops.operations(t)[0] > 0 for t in trees)


def test_line_profiler_times_the_code_grad_runs():
    """benchmarks/profile_lines.py profiles the code `grad` runs for the workload's
    arguments: specialised for their shapes, parameter trees included (dict_mlp's dict of
    arrays), and its line times add up to a call of that code."""
    from benchmarks import profile_lines
    w = next(w for w in WORKLOADS if w.name == "dict_mlp")
    args = smoke_args(w)
    source = profile_lines.generated(w, args)[0]
    g = grad(w.fn, wrt=w.wrt)
    g(*args)
    assert source == g.source
    assert "shapes not known" not in source and "params['W1'] (3, 4)" in source
    assert "unbroadcast" not in source
    rows, total = profile_lines.profile(w, reps=2, size="smoke")
    assert total > 0 and [text for text, _, _ in rows][-1].startswith("return {")
