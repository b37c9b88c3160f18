"""What one active statement contributes to the adjoints of its inputs.

Called by the reverse pass with `g`, the adjoint of the statement's result:

    z = x * y          ->  dx += unbroadcast(g * y, x); dy += unbroadcast(g * x, y)
    t = x[1:3]         ->  dx = np.zeros_like(x); dx[1:3] += g
    L = [a, b]         ->  da += g[0]; db += g[1]
    L.append(v)        ->  dv += g[len(L) - 1]; L.pop()

Accumulation goes through `Adjoints.accumulate`, which knows at compile time whether an
adjoint is still zero (first write: `dx = ...`) and whether it owns its array (then `+=`).
"""
from __future__ import annotations

import copy
import operator

import gast
import numpy as np

from .. import rules, runtime

from ..ir.builders import const, load, number
from .inline import clone, inline, simplify
from .shortcuts import shortcut_contributions, usable
from ..analysis.ops import APPEND, COPY, CONTAINER, INDEX, RULE, SETITEM, target_of
from ..analysis.shapes import ARRAY, CONTAINER as CONTAINER_KIND, EITHER
from ..ir.blocks import walk


def _joined_containers(rev, stmt, op, g):
    """a + b of two lists or tuples joins them and [a] * n repeats one: Python's operators,
    not NumPy's, whose rules (unbroadcast) would give a wrong gradient. Where an operand
    may be a list (a parameter passed as a tree may also hold an array), the adjoint is a
    runtime helper's that decides when it runs (runtime/sequences.py); None elsewhere."""
    if op.rule.primitive not in (operator.add, operator.mul) or len(op.inputs) > 2:
        return None
    kinds = [rev.shapes.kind(a.id) if isinstance(a, gast.Name) else CONTAINER_KIND if
             isinstance(a, gast.Constant) and isinstance(a.value, tuple) else ARRAY
             for a in op.args.values()]
    lists = [k == CONTAINER_KIND for k in kinds]
    args = list(op.args.values())
    if op.rule.primitive is operator.add and len(args) == 2 and any(lists) and \
            all(k in (CONTAINER_KIND, EITHER) for k in kinds):
        return [(name, rev.helper_call("joined_part", [copy.deepcopy(g)] + [
                    copy.deepcopy(a) for a in args] + [const(list(op.args).index(param))]))
                for param, name in op.inputs if rev.is_active(name)]
    # (a count: what is not active; repeated_part checks it is an int when it runs)
    counts = [not isinstance(a, gast.Name) or not rev.is_active(a.id) for a in args]
    # (the list is the active operand: an inactive list times an array is NumPy's rule)
    repeated = [i for i in (0, 1) if lists[i] and counts[1 - i] and not counts[i]] \
        if op.rule.primitive is operator.mul and len(args) == 2 else []
    if repeated:
        items, count = args[repeated[0]], args[1 - repeated[0]]
        return [(items.id, rev.helper_call("repeated_part", [
                    copy.deepcopy(g), copy.deepcopy(items), copy.deepcopy(count)]))]
    return None


def contributions(rev, stmt, op, target, g):
    """The adjoint statements of `stmt` (whose result's adjoint is `g`)."""
    if op.kind == COPY:
        name = op.inputs[0][1]
        return rev.accumulate(name, clone(g), stmt) if rev.is_active(name) else []
    if op.kind == RULE and id(stmt) in rev.shortcuts and usable(rev, rev.shortcuts[id(stmt)]):
        return [s for name, expr in shortcut_contributions(rev, rev.shortcuts[id(stmt)], g)
                for s in rev.accumulate(name, expr, stmt)]
    if op.kind == RULE:
        joined = _joined_containers(rev, stmt, op, g)
        if joined is not None:
            return [s for name, expr in joined for s in rev.accumulate(name, expr, stmt)]
        exprs = []
        g, exact = rev.rule_adjoint(op, target, g)
        for param, name in op.inputs:
            if rev.is_active(name):
                inlined = inline(op.rule, param, op.args, clone(g), target,
                                 rev.linker)
                expr = simplify(inlined, target, rev.shapes, rev.linker, rev.namer.adjoints(),
                                exact)
                if number(expr) == 0 and number(inlined) is None:
                    continue    # simplified to a zero (an einsum_grad_with of its own operand)
                if exact and not rev.shapes.is_scalar(name) and \
                        not _mentions_array(expr, rev):
                    # the broadcast scalar's value, still standing for an array
                    expr = rev.helper_call("unreduce", [expr, load(name)])
                exprs.append((name, complex_guard(rev, op, name, target, expr)))
        # x = x + y: x's own adjoint is rewritten last, after the others have read it
        exprs = sorted(_combined(exprs), key=lambda item: item[0] == target)
        if sum(isinstance(e, gast.Name) for _, e in exprs) > 1:
            rev.handoff = None     # g goes to two adjoints: neither may own it
        out = []
        for name, expr in exprs:
            out.extend(rev.accumulate(name, expr, stmt))
        return out
    if op.kind == INDEX:
        return index_adjoint(rev, stmt, g)
    if op.kind == CONTAINER and isinstance(stmt.value, gast.Dict):
        return _dict_display_adjoint(rev, stmt, g)
    if op.kind == CONTAINER:
        out = []
        keys = stmt.value.keys if isinstance(stmt.value, gast.Dict) else None
        for position, name in op.inputs:     # (the constants in between have no input)
            if not rev.is_active(name):
                continue
            key = copy.deepcopy(keys[int(position)]) if keys else const(int(position))
            if not rev.shapes.is_scalar(name) and target in rev.partial_adjoints:
                # an inner list or an array: its adjoint may be a plain 0.0 standing for
                # all of it, which rules that need its shape cannot take
                element = rev.helper_call("item_adjoint", [copy.deepcopy(g), key,
                                                           load(name)])
                rev.reads.add(name)
            elif target in rev.maybe_scalar:    # g itself may be a plain 0.0
                element = rev.helper_call("item_adjoint", [copy.deepcopy(g), key])
            else:
                element = gast.Subscript(value=copy.deepcopy(g), slice=key,
                                         ctx=gast.Load())
            out.extend(rev.accumulate(name, element, stmt))
        return out
    if op.kind == APPEND:
        return append_adjoint(rev, stmt, op, g)
    if op.kind == SETITEM:
        return setitem_adjoint(rev, stmt, op, g)
    return []


def _dict_display_adjoint(rev, stmt, g):
    """d = {"a": x, ...}: x gets the adjoint of d at "a" (a missing key: no gradient)."""
    out = []
    for key, value in zip(stmt.value.keys, stmt.value.values):
        if isinstance(value, gast.Name) and rev.is_active(value.id):
            element = _entry(g, key.value)
            if element is _NO_ENTRY:
                element = rev.helper_call("tree_item", [copy.deepcopy(g), copy.deepcopy(key)])
            if element is not None:
                out.extend(rev.accumulate(value.id, element, stmt))
    return out


_NO_ENTRY = object()


def _entry(g, key):
    """The entry `key` of an adjoint written as a dict literal ({**zeros_tree(d), 'a': da}):
    its value, None when it has none (a zero), or _NO_ENTRY when that is not known."""
    if not isinstance(g, gast.Dict):
        return _NO_ENTRY
    keyed = False
    for k, v in zip(g.keys, g.values):
        keyed = keyed or k is not None
        if k is None and (keyed or not (isinstance(v, gast.Call) and isinstance(
                v.func, gast.Name) and v.func.id.startswith("zeros_tree"))):
            return _NO_ENTRY
    found = [v for k, v in zip(g.keys, g.values) if isinstance(k, gast.Constant)
             and k.value == key]
    return copy.deepcopy(found[-1]) if found else None


def setitem_adjoint(rev, stmt, op, g):
    """x[i] = v: v gets x's adjoint at i (copied: it is zeroed next), and the old x[i]
    gets none, since it was overwritten."""
    var = op.inputs[0][1]
    index = stmt.targets[0].slice
    dvar = rev.dname(var)
    out = writable_adjoint(rev, var, stmt)      # (it may be a plain 0.0 or shared)
    values = [name for param, name in op.inputs if param == "v"]
    part = gast.Subscript(value=load(dvar), slice=copy.deepcopy(index), ctx=gast.Load())
    # (what is taken for a container may be an array, a value code read again copied:
    # written_part takes a container's item at run time)
    fancy = not is_basic_index(index, rev.shapes.ints) and not _is_key(index)
    if fancy:       # may hold duplicates: only the element NumPy kept gets the adjoint
        part = rev.helper_call("written_part", [load(dvar), index_value(index)])
    if values and rev.is_active(values[0]):
        value = values[0]
        if rev.shapes.is_scalar(value):     # a number broadcast into the slice
            grad = rev.np_call("sum", [part])
        else:
            grad = gast.Call(func=load(rev.linker.name_for("unbroadcast", runtime.unbroadcast)),
                             args=[part if fancy else rev.np_call("copy", [part]),
                                   load(value)], keywords=[])
            rev.reads.add(value)
        if {var, value} & rev.maybe_complex:    # a real value written into a complex array
            grad = rev.helper_call("real_like", [grad, load(value)])
            rev.reads.add(value)
        if value == var:
            # x[i] = x: read x's adjoint at i before it is zeroed, add it back after
            part_name = rev.namer.temp(f"{dvar}_part")
            out.append(rev.assign(part_name, grad, stmt))
            return out + [_zeroed(dvar, index, stmt)] + \
                rev.accumulate(value, load(part_name), stmt)
        out.extend(rev.accumulate(value, grad, stmt))
    return out + [_zeroed(dvar, index, stmt)]


def complex_guard(rev, op, name, target, expr):
    """In complex mode (rules/registry.py), `expr`, the adjoint of operand `name`: made
    real when that value is real, and refused at run time when the rule was written for
    real operands only and one of them is complex (runtime/complex_numbers.py). Nothing
    to guard where the result and the operand are real (analysis/complex_kinds.py)."""
    if not rules.complex_mode() or not {name, target} & rev.maybe_complex:
        return expr
    if rules.handles_complex(op.rule):
        if name not in rev.maybe_complex and _real_expression(expr, rev):
            return expr         # (a real value's real adjoint: real_like would change nothing)
        if _complex_dtype(rev, name) and _complex_expression(expr, rev):
            return expr         # (a complex value's complex adjoint: the same)
        rev.reads.add(name)
        return rev.helper_call("real_like", [expr, load(name)])
    operands = list(dict.fromkeys(n.id for a in op.args.values() for n in walk(a)
                                  if isinstance(n, gast.Name)))
    rev.reads.update(operands)
    return rev.helper_call("real_only", [expr, const(op.rule.name), gast.Tuple(
        elts=[load(n) for n in operands], ctx=gast.Load())])


# helpers whose result is real whatever their arguments, and helpers that keep their first
# argument's kind (they sum or broadcast it)
_REAL_RESULTS = (runtime.rfft_grad, runtime.rfftn_grad, runtime.ihfft_grad)
_KEEP_KIND = (runtime.unbroadcast, runtime.unreduce)
_REAL_ARITHMETIC = (gast.Add, gast.Sub, gast.Mult, gast.Div)


def _real_expression(expr, rev) -> bool:
    """Whether an adjoint contribution is real whatever the arguments' dtypes: built from
    real numbers, the adjoints of real values (complex_guard keeps those real) and helpers
    with real results, by arithmetic."""
    if isinstance(expr, gast.Constant):
        return isinstance(expr.value, (int, float))
    if isinstance(expr, gast.Name):
        primal = rev.namer.adjoints().get(expr.id)
        return primal is not None and primal not in rev.maybe_complex
    if isinstance(expr, gast.BinOp) and isinstance(expr.op, _REAL_ARITHMETIC):
        return _real_expression(expr.left, rev) and _real_expression(expr.right, rev)
    if isinstance(expr, gast.UnaryOp) and isinstance(expr.op, (gast.USub, gast.UAdd)):
        return _real_expression(expr.operand, rev)
    if isinstance(expr, gast.Call) and isinstance(expr.func, gast.Name) and not expr.keywords:
        helper = rev.linker.names.get(expr.func.id)
        if any(helper is h for h in _REAL_RESULTS):
            return True
        return any(helper is h for h in _KEEP_KIND) and bool(expr.args) and \
            _real_expression(expr.args[0], rev)
    return False


def _complex_dtype(rev, name) -> bool:
    """Whether the shapes pass knows `name` holds a complex array (sizes.py)."""
    dtype = rev.shapes.dtype(name)
    return isinstance(dtype, np.dtype) and dtype.kind == "c"


def _complex_expression(expr, rev) -> bool:
    """Whether an adjoint contribution's dtype is complex for certain: arithmetic with an
    operand that is (np.conj of) a value known to be a complex array, since NumPy's
    result of complex and any number is complex."""
    if isinstance(expr, gast.Name):
        return _complex_dtype(rev, expr.id)
    if isinstance(expr, gast.BinOp) and isinstance(expr.op, _REAL_ARITHMETIC):
        return _complex_expression(expr.left, rev) or _complex_expression(expr.right, rev)
    if isinstance(expr, gast.UnaryOp) and isinstance(expr.op, (gast.USub, gast.UAdd)):
        return _complex_expression(expr.operand, rev)
    return isinstance(expr, gast.Call) and isinstance(expr.func, gast.Attribute) and \
        isinstance(expr.func.value, gast.Name) and expr.func.value.id == "np" and \
        expr.func.attr in ("conj", "conjugate") and len(expr.args) == 1 and \
        not expr.keywords and _complex_expression(expr.args[0], rev)


def _zeroed(dvar, index, stmt):
    """dx[index] = 0.0: the elements a write overwrote get no adjoint."""
    target = gast.Subscript(value=load(dvar), slice=copy.deepcopy(index), ctx=gast.Store())
    zero = gast.Assign(targets=[target], value=const(0.0), type_comment=None)
    zero.lineno = stmt.lineno
    return zero


def _mentions_array(expr, rev) -> bool:
    """Whether an expression reads a variable (or adjoint) that may be an array; not one
    it reads only the size of (`g / reduced_size(x)` is a number: the mean's adjoint)."""
    adjoints = rev.namer.adjoints()
    todo = [expr]
    while todo:
        n = todo.pop()
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and \
                rev.linker.names.get(n.func.id) is runtime.reduced_size:
            continue
        if isinstance(n, gast.Name) and n.id not in rev.linker.names and \
                not rev.shapes.is_scalar(adjoints.get(n.id, n.id)):
            return True
        todo.extend(gast.iter_child_nodes(n))
    return False


def _combined(exprs):
    """One contribution per variable: x * x gives dx = g * x + g * x, one statement."""
    out = {}
    for name, expr in exprs:
        out[name] = expr if name not in out else gast.BinOp(left=out[name], op=gast.Add(),
                                                            right=expr)
    return list(out.items())


def append_adjoint(rev, stmt, op, g):
    """L.append(v): v's adjoint is the last element of L's adjoint (L is popped after)."""
    values = [name for param, name in op.inputs if param == "x"]
    if not values or not rev.is_active(values[0]):
        return []
    lst = stmt.value.func.value.id
    last = gast.BinOp(left=gast.Call(func=load("len"), args=[load(lst)], keywords=[]),
                      op=gast.Sub(), right=const(1))
    if rev.shapes.is_scalar(values[0]) or lst not in rev.partial_adjoints:
        element = gast.Subscript(value=copy.deepcopy(g), slice=last, ctx=gast.Load())
    else:   # (as in a list literal: a plain 0.0 becomes zeros of the element's shape)
        item = gast.Subscript(value=load(lst), slice=copy.deepcopy(last), ctx=gast.Load())
        element = rev.helper_call("item_adjoint", [copy.deepcopy(g), last, item])
    rev.reads.add(lst)
    return rev.accumulate(values[0], element, stmt)


def index_adjoint(rev, stmt, g):
    """x[index] read: add the adjoint into x's adjoint at `index`."""
    value, index = stmt.value.value, stmt.value.slice
    var = value.id
    if not rev.is_active(var):
        return []
    dvar = rev.dname(var)
    kind = rev.shapes.kind(var)
    out = []
    current = rev.state.get(var)
    if kind == CONTAINER_KIND and _is_key(index) and rev.depth == 0 and \
            (current is None or isinstance(current, gast.Dict)) and \
            target_of(stmt) in rev.stable:
        # params["W1"] read once in straight-line code: keep the adjoint as a dict literal,
        # {'W1': d_params_W1, ...}, rather than zeros plus additions
        return dict_entry(rev, var, current, index, g)
    out.extend(writable_adjoint(rev, var, stmt))
    rev.reads.add(var)
    if kind == ARRAY and (is_basic_index(index, rev.shapes.ints) or
                          distinct_picks(index, rev.shapes)):
        target = gast.Subscript(value=load(dvar), slice=copy.deepcopy(index), ctx=gast.Store())
        node = gast.AugAssign(target=target, op=gast.Add(), value=g)
    elif kind == ARRAY:
        add = gast.Attribute(value=gast.Attribute(value=rev.np_name(), attr="add",
                                                  ctx=gast.Load()), attr="at", ctx=gast.Load())
        node = gast.Expr(value=gast.Call(func=add, args=[load(dvar), index_value(index), g],
                                         keywords=[]))
    elif kind == CONTAINER_KIND and (_is_key(index) or is_basic_index(index, rev.shapes.ints)):
        # never `+=` on a container element: it may be shared (e.g. [g] * n); elements
        # may themselves be containers (nested parameter trees), hence add_trees
        element = gast.Subscript(value=load(dvar), slice=copy.deepcopy(index),
                                 ctx=gast.Load())
        target = gast.Subscript(value=load(dvar), slice=copy.deepcopy(index), ctx=gast.Store())
        node = gast.Assign(targets=[target], value=rev.helper_call("add_trees", [element, g]),
                           type_comment=None)
    else:
        # a container, or an array that may be one (a value taken out of a saved tuple, at
        # second order), indexed by what may pick an element twice (ab[_clip, j]):
        # np.add.at adds each pick, where dx[i] = dx[i] + g would keep only the last
        node = gast.Expr(value=rev.helper_call("add_at", [load(dvar), index_value(index), g]))
    node.lineno = stmt.lineno
    out.append(node)
    return out


def writable_adjoint(rev, var, stmt):
    """Make var's adjoint an array (or container) this code allocated, so that an
    element can be added or written in place: zeros if it is still zero, else a fresh
    sum with zeros when it may be shared, read-only (a broadcast) or a plain 0.0."""
    dvar = rev.dname(var)
    current = rev.state.get(var)
    array = rev.shapes.kind(var) == ARRAY
    zeros = rev.np_call("zeros_like", [load(var)]) if array else \
        rev.helper_call("zeros_tree", [load(var)])
    out = []
    if current is None:
        out.append(rev.assign(dvar, zeros, stmt))
    elif var not in rev.owned or var in rev.maybe_scalar or not isinstance(current, gast.Name):
        value = rev.materialize(var, current)
        total = gast.BinOp(left=value, op=gast.Add(), right=zeros) if array else \
            rev.helper_call("add_trees", [zeros, value])
        out.append(rev.assign(dvar, total, stmt))
    rev.state[var] = load(dvar)
    rev.owned.add(var)
    rev.maybe_scalar.discard(var)
    rev.reads.add(var)
    return out


def _is_key(index) -> bool:
    return isinstance(index, gast.Constant) and isinstance(index.value, str)


def dict_entry(rev, var, current, key, g):
    """Add g under `key` in the compile-time dict that is var's adjoint."""
    keys = list(current.keys) if current is not None else []
    values = list(current.values) if current is not None else []
    for i, k in enumerate(keys):
        if k.value == key.value:
            values[i] = rev.helper_call("add_trees", [values[i], copy.deepcopy(g)])
            break
    else:
        keys.append(copy.deepcopy(key))
        values.append(copy.deepcopy(g))
    rev.state[var] = gast.Dict(keys=keys, values=values)
    rev.reads.add(var)
    return []


def is_basic_index(index, ints=frozenset()) -> bool:
    """An index that selects each element at most once: slices, integer constants, None,
    and names known to hold ints."""
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    for part in parts:
        if isinstance(part, gast.Slice) or (isinstance(part, gast.Name) and part.id in ints):
            continue
        if isinstance(part, gast.Constant) and (part.value is None or part.value is Ellipsis
                                                or type(part.value) is int):
            continue
        return False
    return True


def distinct_picks(index, shapes) -> bool:
    """An index of int arrays that picks each element at most once, since one of them
    holds distinct ints (np.arange: shapes.distinct) and every array has its 1-d shape:
    `z[_arange, y]` (the log-likelihood of labels y), whose adjoint is
    `dz[_arange, y] += g`, not np.add.at."""
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    if not all(isinstance(p, gast.Name) for p in parts):
        return False
    shape = next((shapes.shape(p.id) for p in parts if p.id in shapes.distinct), None)
    if shape is None or len(shape) != 1:
        return False
    for part in parts:
        if part.id in shapes.ints:
            continue
        dtype = shapes.dtype(part.id)
        if shapes.shape(part.id) != shape or not isinstance(dtype, np.dtype) or \
                dtype.kind not in "iu":
            return False
    return True


def index_value(index):
    """The index as a value to pass to np.add.at (slices spelled with slice())."""
    if isinstance(index, gast.Tuple):
        return gast.Tuple(elts=[index_value(e) for e in index.elts], ctx=gast.Load())
    if isinstance(index, gast.Slice):
        parts = [p if p is not None else const(None) for p in (index.lower, index.upper,
                                                               index.step)]
        return gast.Call(func=load("slice"), args=copy.deepcopy(parts), keywords=[])
    return copy.deepcopy(index)
