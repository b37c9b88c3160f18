"""Count the operations of each workload's generated gradient against its hand-written one
(issue 19's goal: at most 1.1 times the hand-written operations).

    python3 benchmarks/count_ops.py            # a table; exit status 1 if the median misses

The count is static, read from the code: every arithmetic operator, call, comparison,
subscript and in-place update in the gradient function and in the functions it calls that
were generated for it (helpers' forward and backward pieces), or, for the hand-written side,
in the hand-written gradient and the module-level functions of its workload it calls. `del`
statements, comments and names are not operations. The generated code is the code for the
workload's own argument shapes (what grad compiles at the first call), with the tape's
pushes and pops counted separately: the hand-written code has no tape.
"""
from __future__ import annotations

import ast
import inspect
import os
import statistics
import sys
import textwrap

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

from benchmarks.workloads import all_workloads  # noqa: E402
from sgcompiler import grad  # noqa: E402

_OPERATIONS = (ast.BinOp, ast.UnaryOp, ast.Call, ast.Compare, ast.Subscript, ast.AugAssign)
TARGET = 1.1


def operations(tree) -> tuple[int, int]:
    """(operations, tape operations) in `tree`."""
    ops = tape = 0
    for node in ast.walk(tree):
        if not isinstance(node, _OPERATIONS) or isinstance(getattr(node, "ctx", None),
                                                           (ast.Store, ast.Del)):
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                isinstance(node.func.value, ast.Name) and node.func.value.id == "_tape":
            tape += 1
        else:
            ops += 1
    return ops, tape


def hand_tree(workload) -> ast.Module:
    """The hand-written gradient and the functions of its module that it calls."""
    module = sys.modules[workload.hand.__module__]
    seen, todo, body = set(), [workload.hand.__name__], []
    while todo:
        name = todo.pop()
        if name in seen or not inspect.isfunction(getattr(module, name, None)):
            continue
        seen.add(name)
        tree = ast.parse(textwrap.dedent(inspect.getsource(getattr(module, name))))
        body.extend(tree.body)
        todo.extend(n.func.id for n in ast.walk(tree)
                    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name))
    return ast.Module(body=body, type_ignores=[])


def generated_tree(workload) -> ast.Module:
    args = workload.make(workload.sizes["smoke"], np.random.default_rng(0))
    g = grad(workload.fn, wrt=workload.wrt if len(workload.wrt) > 1 else workload.wrt[0])
    g(*args)
    return ast.parse(g.source)


def main() -> int:
    rows, ratios = [], []
    for workload in all_workloads():
        hand, _ = operations(hand_tree(workload))
        ops, tape = operations(generated_tree(workload))
        ratio = ops / hand
        ratios.append(ratio)
        rows.append(f"| {workload.name} | {hand} | {ops} | {tape} | {ratio:.2f} |")
    print("| workload | hand ops | sgc ops | sgc tape ops | **sgc/hand** |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))
    median = statistics.median(ratios)
    print(f"\nmedian sgc/hand {median:.2f}, worst {max(ratios):.2f} (goal: at most {TARGET})")
    return 0 if median <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
