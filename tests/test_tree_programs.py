"""A few programs of the parameter-tree fuzzer (tree_fuzz.py) on every test run.

Each program passes a nested dict/list/tuple of arrays and Python floats, and subtrees of
it, through user helpers (loops over layers, helpers calling helpers, tuple results,
stop_gradient of an argument), and is checked against finite differences over every leaf
in six variants: specialised, code for any shape, every array counted as large,
value_and_grad, one gradient called with trees of other shapes, and a tree plus a plain
array in `wrt`. A wrong value or gradient, a changed argument, a gradient of another
structure or an exception from the generated code is a failure.

What is not checked is counted and printed at the end of the run, and fails the test: no
program of this grammar is refused today, and none has a reference that finite
differences cannot settle (gradcheck.settled_reference). The fixed set is seeds 0-24;
beside it, NEW programs are drawn from this run's seed (fuzz_session.py). Run more with
`python3 tests/tree_fuzz.py --count 300 --minutes 10`.
"""
import collections

import pytest

import fuzz_session
from tree_fuzz import check, make_program

FIXED = range(25)
NEW = 4


def _problems(seed, label):
    """What is wrong with program `seed`, or [] when every variant was checked and right."""
    source, args_a, args_b = make_program(seed)
    oracle = collections.Counter()
    results = check(source, args_a, args_b, oracle=oracle)
    for how, n in oracle.items():
        fuzz_session.count("tree", f"{label} references settled by {how}", n)
    problems = []
    for variant, (status, detail) in results.items():
        fuzz_session.count("tree", f"{label} {status}")
        if status == "finding":
            problems.append(f"{variant}: {detail}")
        elif status == "refused":
            problems.append(f"{variant}: refused, though the grammar is meant to be "
                            f"supported: {detail}")
        elif status == "unstable":
            problems.append(f"{variant}: finite differences settle no reference, so "
                            f"nothing was checked")
    return [f"{p}\n{source}" for p in problems]


@pytest.mark.parametrize("seed", FIXED)
def test_tree_program(seed):
    problems = _problems(seed, "fixed:")
    assert not problems, "\n".join(problems)


def test_tree_programs_of_this_run():
    problems = []
    for seed in fuzz_session.program_seeds(NEW):
        found = _problems(seed, "new:")
        if found:
            problems.append(fuzz_session.reproduce(
                seed, f"python3 tests/tree_fuzz.py --seed {seed}",
                "test_tree_programs.py::test_tree_programs_of_this_run") + "\n" +
                "\n".join(found))
    assert not problems, "\n\n".join(problems)
