"""A few programs of the parameter-tree fuzzer (tree_fuzz.py) on every test run.

Each program passes a nested dict/list/tuple of arrays and Python floats, and subtrees of
it, through user helpers (loops over layers, helpers calling helpers, tuple results,
stop_gradient of an argument), and is checked against finite differences over every leaf
in six variants: specialised, code for any shape, every array counted as large,
value_and_grad, one gradient called with trees of other shapes, and a tree plus a plain
array in `wrt`. A refusal is allowed; a wrong value or gradient, a changed argument, a
gradient of another structure or an exception from the generated code is not. Run more
with `python3 tests/tree_fuzz.py --count 300 --minutes 10`.
"""
import pytest

from tree_fuzz import check, make_program


@pytest.mark.parametrize("seed", range(25))
def test_tree_program(seed):
    source, args_a, args_b = make_program(seed)
    results = check(source, args_a, args_b)
    findings = {v: detail for v, (status, detail) in results.items() if status == "finding"}
    assert not findings, f"{findings}\n{source}"
