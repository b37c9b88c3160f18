"""Generated code for the compiler to read again (grad of grad, a gradient inside a loss).

The last step of the recipe when a gradient is made to be differentiated in turn. The first-
order code keeps to the language the front end accepts once these four things are undone:

    del z                           (dropped: freeing memory is no value)
    dx += t                   ->    dx = dx + t
    np.exp(z, out=z)          ->    np.exp(z)
    np.copy(dx)               ->    copied(dx)        (an array of another library as it is)
    h = _tape.pop()           ->    _tape_n = _tape_n - 1      (_tape_n: one up per
                                    h = _tape[_tape_n]          append, len(_tape) at first)
    add_at(dt, 1, v)          ->    dt = add_at(dt, 1, v)
    dt[1] = add_trees(dt[1], v)  -> dt = add_at(dt, 1, v)
    dx[i] += v                ->    dx = add_at(dx, i, v)      (and np.add.at(dx, i, v))
    dv = dl[len(l) - 1]       ->    dv = dl[l_n - 1]           (the adjoint of l.append(v))
    l.pop()                         l_n = l_n - 1
    _tape.append(buf)         ->    _tape.append(copied(buf))  (buf is written into later:
    _buf_old = buf            ->    _buf_old = copied(buf)      the front end refuses a
    return (t, (buf, x))      ->    ... (copied(buf), x)        reference to it)
    h_backward(dbuf, s)       ->    h_backward(copied(dbuf), s)
    split_like(dbuf, a)       ->    split_like(copied(dbuf), a)   (pieces of what it is given)
    v = buf[i]                ->    v = copied(buf[i])          (a row of it: a view)

(The last one matters most: a call for its effect carries no gradient, so the adjoint it
adds would be lost the next time round.)

A tape is then a list that the primal sweep appends to and the adjoint sweep reads from the
end, counting, which the front end differentiates like any list. The arithmetic is the same, statement for statement.
"""
from __future__ import annotations

import builtins

import gast
import numpy as np

from .. import runtime
from ..analysis.summaries import SUMMARIES
from ..rules.registry import runtime_helper_read
from ..ir.blocks import blocks, nodes
from ..ir.builders import load, store


def for_rereading(tree: gast.FunctionDef, namer, linker) -> gast.FunctionDef:
    """Rewrite `tree` in place into code the front end reads (see the module docstring);
    `namer` gives the tapes' read positions fresh names, `linker` the names of the
    helpers the code calls. Returns `tree`."""
    written = _written_into(tree)
    for block in blocks(tree):
        block[:] = [new for stmt in block for new in _plain(stmt, linker)]
    for node in nodes(tree):
        if isinstance(node, gast.Call):
            node.keywords = [k for k in node.keywords if k.arg != "out"]
            _copy_by_helper(node, linker)
    counts = _count_lists(tree, namer, linker)
    _copy_saved(tree, linker, written, frozenset(counts.values()), namer)
    return tree


def _copy_by_helper(call, linker):
    """`np.copy(dx)` -> `copied(dx)`: the same copy of a NumPy array, and an array of
    another library (dask, which this code also runs on) as it is, where NumPy would
    compute it into a NumPy array."""
    func = call.func
    if isinstance(func, gast.Attribute) and func.attr == "copy" and \
            isinstance(func.value, gast.Name) and linker.names.get(func.value.id) is np \
            and len(call.args) == 1 and not call.keywords:
        call.func = load(linker.name_for("copied", runtime.copied))


def _written_into(tree) -> set:
    """The names of the arrays the code writes into (x[i] = v, x[i] += v)."""
    return {t.value.id for n in nodes(tree) if isinstance(n, (gast.Assign, gast.AugAssign))
            for t in (n.targets if isinstance(n, gast.Assign) else [n.target])
            if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name)}


def _copy_unpacked(stmt, written, namer, copy_of):
    """(x, buf) = _saved -> (x, buf_saved) = _saved; buf = copied(buf_saved)"""
    if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Tuple)):
        return [stmt]
    out = [stmt]
    for k, n in enumerate(stmt.targets[0].elts):
        if isinstance(n, gast.Name) and n.id in written:
            kept = namer.fresh(f"{n.id}_saved")
            stmt.targets[0].elts[k] = store(kept)
            out.append(gast.copy_location(gast.Assign(
                targets=[store(n.id)], value=copy_of(kept), type_comment=None), stmt))
    return out


def _copy_saved(tree, linker, written, counts, namer):
    """A reference to an array the code writes into, saved (on a tape, in a slot, in a
    forward's saved values) or restored from one, becomes a copy. The generated code
    keeps such a reference only where the array is rebound before any write, which the
    front end cannot see; the copy says so plainly."""
    if not written:
        return

    def copy_of(name):
        return gast.Call(func=load(linker.name_for("copied", runtime.copied)),
                         args=[load(name)], keywords=[])
    for block in blocks(tree):
        block[:] = [new for stmt in block for new in _copy_unpacked(stmt, written, namer,
                                                                    copy_of)]
    for node in nodes(tree):
        if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name) and \
                isinstance(node.value, gast.Name) and \
                (node.value.id in written or node.targets[0].id in written):
            node.value = copy_of(node.value.id)
        elif isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name) and \
                node.targets[0].id in written and isinstance(node.value, gast.Subscript) \
                and isinstance(node.value.slice, gast.Name) and \
                node.value.slice.id in counts:        # restored from a tape: x = t[t_n]
            node.value = gast.Call(func=load(linker.name_for("copied", runtime.copied)),
                                   args=[node.value], keywords=[])
        elif isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name) and \
                isinstance(node.value, gast.Subscript) and \
                isinstance(node.value.value, gast.Name) and node.value.value.id in written:
            # _buf_i = buf[i], a row of an array written into later: a copy of it
            node.value = gast.Call(func=load(linker.name_for("copied", runtime.copied)),
                                   args=[node.value], keywords=[])
        elif isinstance(node, gast.Expr) and isinstance(node.value, gast.Call) and \
                isinstance(node.value.func, gast.Attribute) and \
                node.value.func.attr == "append" and len(node.value.args) == 1 and \
                isinstance(node.value.args[0], gast.Name) and \
                node.value.args[0].id in written:
            node.value.args[0] = copy_of(node.value.args[0].id)
        elif isinstance(node, gast.Return) and node.value is not None:
            _copy_returned(node, written, copy_of)
        elif isinstance(node, gast.Call):
            _copy_passed(node, linker, written, copy_of)


def _copy_passed(call, linker, written, copy_of):
    """`h_backward(dbuf, saved)` -> `h_backward(copied(dbuf), saved)`: a function of the
    user's (or its forward and backward pieces) may return what it is given, as an
    identity does, and the front end refuses such a reference to an array the code
    writes into (the adjoint sweep would put the written elements back through it).
    NumPy's functions and sgcompiler's helpers, which the front end knows, are left as
    they are."""
    func = call.func
    if not isinstance(func, gast.Name) or func.id in _BUILTINS:
        return
    target = linker.names.get(func.id)
    if target is None or \
            getattr(target, "__module__", "").split(".")[0] in ("numpy", "scipy", "math"):
        return
    if runtime.is_helper(target):
        # one read through its source that returns views of what it is given
        # (`split_like(dbuf, _arg)`: pieces of dbuf): those arguments alone
        if not runtime_helper_read(target):
            return
        kept = SUMMARIES.returned_params(target)
        params = target.__code__.co_varnames[:target.__code__.co_argcount]
        for k, arg in enumerate(call.args):
            if k < len(params) and params[k] in kept and isinstance(arg, gast.Name) and \
                    arg.id in written:
                call.args[k] = copy_of(arg.id)
        return
    for k, arg in enumerate(call.args):
        if isinstance(arg, gast.Name) and arg.id in written:
            call.args[k] = copy_of(arg.id)


_BUILTINS = frozenset(dir(builtins))


def _copy_returned(ret, written, copy_of):
    """`return (t, (buf, x))` -> `return (t, (copied(buf), x))`: the saved values a
    forward function returns."""
    todo = [ret.value]
    if isinstance(ret.value, gast.Name) and ret.value.id in written:
        ret.value = copy_of(ret.value.id)
        return
    while todo:
        node = todo.pop()
        if isinstance(node, (gast.Tuple, gast.List)):
            for k, item in enumerate(node.elts):
                if isinstance(item, gast.Name) and item.id in written:
                    node.elts[k] = copy_of(item.id)
                else:
                    todo.append(item)


def _plain(stmt, linker):
    if isinstance(stmt, gast.Delete):
        return []
    if isinstance(stmt, gast.Expr) and _calls(stmt.value, linker, runtime.add_at) and \
            isinstance(stmt.value.args[0], gast.Name):
        node = gast.Assign(targets=[store(stmt.value.args[0].id)], value=stmt.value,
                           type_comment=None)
        return [gast.copy_location(node, stmt)]
    added = _added_at(stmt, linker)
    if added is not None:
        return [gast.copy_location(added, stmt)]
    if isinstance(stmt, gast.AugAssign) and isinstance(stmt.op, gast.Add) and \
            isinstance(stmt.target, gast.Subscript) and \
            isinstance(stmt.target.value, gast.Name):
        return [gast.copy_location(_add_at(linker, stmt.target.value.id, stmt.target.slice,
                                           stmt.value), stmt)]
    if isinstance(stmt, gast.Expr) and _is_ufunc_add_at(stmt.value) and \
            isinstance(stmt.value.args[0], gast.Name):
        dx, index, value = stmt.value.args
        return [gast.copy_location(_add_at(linker, dx.id, index, value), stmt)]
    if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
        node = gast.Assign(targets=[store(stmt.target.id)],
                           value=gast.BinOp(left=load(stmt.target.id), op=stmt.op,
                                            right=stmt.value), type_comment=None)
        return [gast.copy_location(node, stmt)]
    return [stmt]


def _calls(node, linker, helper) -> bool:
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
        linker.names.get(node.func.id) is helper


def _added_at(stmt, linker):
    """`dt = add_at(dt, k, v)` for `dt[k] = add_trees(dt[k], v)`, else None."""
    if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Subscript)
            and isinstance(stmt.targets[0].value, gast.Name)
            and _calls(stmt.value, linker, runtime.add_trees)):
        return None
    target, (old, value) = stmt.targets[0], stmt.value.args
    if not (isinstance(old, gast.Subscript) and isinstance(old.value, gast.Name) and
            old.value.id == target.value.id and
            gast.dump(old.slice) == gast.dump(target.slice)):
        return None
    return _add_at(linker, target.value.id, target.slice, value)


def _add_at(linker, name, index, value):
    """`name = add_at(name, index, value)`"""
    if isinstance(index, gast.Slice) or isinstance(index, gast.Tuple) and any(
            isinstance(e, gast.Slice) for e in index.elts):
        index = _index_value(index)
    return gast.Assign(targets=[store(name)], value=gast.Call(
        func=load(linker.name_for("add_at", runtime.add_at)),
        args=[load(name), index, value], keywords=[]), type_comment=None)


def _index_value(index):
    """An index as a value: `1:3` -> slice(1, 3, None); tuples element by element."""
    if isinstance(index, gast.Tuple):
        return gast.Tuple(elts=[_index_value(e) for e in index.elts], ctx=gast.Load())
    if isinstance(index, gast.Slice):
        parts = [p if p is not None else gast.Constant(value=None, kind=None)
                 for p in (index.lower, index.upper, index.step)]
        return gast.Call(func=load("slice"), args=parts, keywords=[])
    return index


def _is_ufunc_add_at(node) -> bool:
    """`np.add.at(...)` (three arguments)."""
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
        node.func.attr == "at" and isinstance(node.func.value, gast.Attribute) and \
        node.func.value.attr == "add" and len(node.args) == 3


def _pop_of(stmt):
    """The tape `stmt` pops from (`h = _tape.pop()`), or None."""
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
            isinstance(stmt.value, gast.Call) and not stmt.value.args and \
            isinstance(stmt.value.func, gast.Attribute) and stmt.value.func.attr == "pop" \
            and isinstance(stmt.value.func.value, gast.Name):
        return stmt.value.func.value.id
    return None


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


def _popped_list(stmt):
    """The list `stmt` pops for its effect (`l.pop()`), or None."""
    if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call) and \
            not stmt.value.args and isinstance(stmt.value.func, gast.Attribute) and \
            stmt.value.func.attr == "pop" and isinstance(stmt.value.func.value, gast.Name):
        return stmt.value.func.value.id
    return None


def _count_lists(tree, namer, linker):
    """`l.pop()` undoing `l.append(v)` in the adjoint sweep -> a count of its own, `l_n`,
    kept beside the list wherever it changes (set where l is, one up per append, one
    down per pop), which every read `len(l)` uses: the list itself is left whole.
    Returns {list: its count's name}."""
    popped = dict.fromkeys(_popped_list(s) or _pop_of(s) for s in nodes(tree)
                           if _popped_list(s) or _pop_of(s))
    counts = {name: namer.fresh(f"{name}_n") for name in popped}
    if not counts:
        return counts
    for name, count in counts.items():      # (before the counts' own len(l) is written)
        for stmt in tree.body:
            _count_reads(stmt, name, count)
    for block in blocks(tree):
        block[:] = [new for stmt in block for new in _counted(stmt, counts, linker)]
    _count_from_end(tree, counts, linker)
    return counts


def _count_from_end(tree, counts, linker):
    """`dl = add_at(dl, -k, v)` -> `dl = add_at(dl, l_n - k, v)` where `dl` is the adjoint
    of a counted list `l` (`dl = add_trees(zeros_tree(l), dl)`, which cuts `dl` to the
    length `l` has there when `l` is popped): the list kept whole ends later."""
    # (before the list is cut, its count is its length: l_n - k is -k there too)
    assigned = [s for s in nodes(tree) if isinstance(s, gast.Assign) and
                isinstance(s.targets[0], gast.Name)]
    adjoint_of = {s.targets[0].id: counts[s.value.args[0].args[0].id] for s in assigned
                  if _calls(s.value, linker, runtime.add_trees) and len(s.value.args) == 2
                  and _calls(s.value.args[0], linker, runtime.zeros_tree)
                  and isinstance(s.value.args[0].args[0], gast.Name)
                  and s.value.args[0].args[0].id in counts}
    for stmt in assigned:
        value, target = stmt.value, stmt.targets[0].id
        if _calls(value, linker, runtime.add_at) and target in adjoint_of and \
                _negative_int(value.args[1]):
            value.args[1] = gast.BinOp(left=load(adjoint_of[target]), op=gast.Sub(),
                                       right=gast.Constant(value=-_negative_int(value.args[1]),
                                                           kind=None))


def _negative_int(node):
    """-k for an index written as the literal -k (k > 0), else None."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub) and \
            isinstance(node.operand, gast.Constant) and type(node.operand.value) is int \
            and node.operand.value > 0:
        return -node.operand.value
    if isinstance(node, gast.Constant) and type(node.value) is int and node.value < 0:
        return node.value
    return None


def _count_reads(stmt, name, count):
    """`len(name)` -> `count` in `stmt`."""
    def is_len(value):
        return isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and \
            value.func.id == "len" and len(value.args) == 1 and \
            isinstance(value.args[0], gast.Name) and value.args[0].id == name
    for node in nodes(stmt):
        for field, value in list(gast.iter_fields(node)):
            if is_len(value):
                setattr(node, field, load(count))
            elif isinstance(value, list):
                value[:] = [load(count) if is_len(v) else v for v in value]


def _counted(stmt, counts, linker):
    """`stmt`, and what keeps the counts: l_n = len(l) after l = ..., l_n = l_n + 1 after
    l.append(v); l.pop() becomes l_n = l_n - 1."""
    def step(count, op):
        return gast.copy_location(gast.Assign(targets=[store(count)], value=gast.BinOp(
            left=load(count), op=op, right=gast.Constant(value=1, kind=None)),
            type_comment=None), stmt)
    name = _popped_list(stmt)
    if name in counts:
        return [step(counts[name], gast.Sub())]
    name = _pop_of(stmt)
    if name in counts:       # h = l.pop() -> l_n = l_n - 1; h = l[l_n]
        read = gast.copy_location(gast.Assign(targets=stmt.targets, value=gast.Subscript(
            value=load(name), slice=load(counts[name]), ctx=gast.Load()),
            type_comment=None), stmt)
        # (a list restored from the tape gets its own count, as any assignment gives one)
        return [step(counts[name], gast.Sub())] + _counted(read, counts, linker)
    if isinstance(stmt, gast.Assign):      # l = ..., or (l, m) = _saved
        target = stmt.targets[0]
        names = [target] if isinstance(target, gast.Name) else \
            target.elts if isinstance(target, gast.Tuple) else []
        length = linker.name_for("length", runtime.length)   # (0 for a list not yet made)
        return [stmt] + [gast.copy_location(gast.Assign(
            targets=[store(counts[n.id])], value=gast.Call(func=load(length), args=[
                load(n.id)], keywords=[]), type_comment=None), stmt)
            for n in names if isinstance(n, gast.Name) and n.id in counts]
    call = stmt.value if isinstance(stmt, gast.Expr) else None
    if isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and \
            call.func.attr == "append" and isinstance(call.func.value, gast.Name) and \
            call.func.value.id in counts:
        return [stmt, step(counts[call.func.value.id], gast.Add())]
    return [stmt]
