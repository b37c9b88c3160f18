"""Generated code for the compiler to read again (grad of grad, a gradient inside a loss).

The last step of the recipe when a gradient is made to be differentiated in turn. The first-
order code keeps to the language the front end accepts once these four things are undone:

    del z                           (dropped: freeing memory is no value)
    dx += t                   ->    dx = dx + t
    np.exp(z, out=z)          ->    np.exp(z)
    h = _tape.pop()           ->    _tape_n = _tape_n - 1
                                    h = _tape[_tape_n]

A tape is then a list that the primal sweep appends to and the adjoint sweep reads from the
end (its length is taken once, before the first read), which the front end differentiates
like any list. The arithmetic is the same, statement for statement.
"""
from __future__ import annotations

import gast

from .. import runtime
from ..ir.blocks import blocks, nodes
from ..ir.builders import load, store


def for_rereading(tree: gast.FunctionDef, namer) -> gast.FunctionDef:
    """Rewrite `tree` in place into code the front end reads (see the module docstring);
    `namer` gives the tapes' read positions fresh names. Returns `tree`."""
    for block in blocks(tree):
        block[:] = [new for stmt in block for new in _plain(stmt)]
    for node in nodes(tree):
        if isinstance(node, gast.Call):
            node.keywords = [k for k in node.keywords if k.arg != "out"]
    _index_tapes(tree, namer)
    return tree


def _plain(stmt):
    if isinstance(stmt, gast.Delete):
        return []
    if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
        node = gast.Assign(targets=[store(stmt.target.id)],
                           value=gast.BinOp(left=load(stmt.target.id), op=stmt.op,
                                            right=stmt.value), type_comment=None)
        return [gast.copy_location(node, stmt)]
    return [stmt]


def _pop_of(stmt):
    """The tape `stmt` pops from (`h = _tape.pop()`), or None."""
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
            isinstance(stmt.value, gast.Call) and not stmt.value.args and \
            isinstance(stmt.value.func, gast.Attribute) and stmt.value.func.attr == "pop" \
            and isinstance(stmt.value.func.value, gast.Name):
        return stmt.value.func.value.id
    return None


def _index_tapes(tree, namer):
    """`h = T.pop()` -> `T_n = T_n - 1; h = T[T_n]`, with `T_n = len(T)` before the
    top-level statement holding T's first pop (every push comes before every pop)."""
    positions = {}
    for k, top in enumerate(list(tree.body)):
        found = [s for s in nodes(top) if _pop_of(s) is not None]
        for tape in dict.fromkeys(_pop_of(s) for s in found):
            if tape not in positions:
                positions[tape] = namer.fresh(f"{tape}_n")
                start = gast.Assign(targets=[store(positions[tape])], value=gast.Call(
                    func=load("len"), args=[load(tape)], keywords=[]), type_comment=None)
                tree.body.insert(tree.body.index(top), start)
    if not positions:
        return
    for block in blocks(tree):
        block[:] = [new for stmt in block for new in _indexed(stmt, positions)]


def _indexed(stmt, positions):
    tape = _pop_of(stmt)
    if tape is None:
        return [stmt]
    n = positions[tape]
    step = gast.Assign(targets=[store(n)], value=gast.BinOp(
        left=load(n), op=gast.Sub(), right=gast.Constant(value=1, kind=None)),
        type_comment=None)
    read = gast.Assign(targets=stmt.targets, value=gast.Subscript(
        value=load(tape), slice=load(n), ctx=gast.Load()), type_comment=None)
    return [gast.copy_location(step, stmt), gast.copy_location(read, stmt)]


def gradient_only(tree: gast.FunctionDef, linker) -> None:
    """`return (result, dx)` -> `scalar_result(result); return dx`: the gradient alone,
    for code that returns the value only so that its caller can check it is a scalar."""
    ret = tree.body[-1]
    assert isinstance(ret, gast.Return) and isinstance(ret.value, gast.Tuple) and \
        len(ret.value.elts) == 2, "a gradient returns (value, gradient)"
    value, gradient = ret.value.elts
    check = gast.Expr(value=gast.Call(
        func=load(linker.name_for("scalar_result", runtime.scalar_result)), args=[value],
        keywords=[]))
    tree.body[-1:] = [check, gast.Return(value=gradient)]
