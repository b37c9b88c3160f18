"""Tapes numba types well: one list per saved name, and no `None` where a number goes.

The NumPy code keeps one tape for every saved value (`_tape.append(x)`, `x = _tape.pop()`).
numba types a list by what it holds, so one tape of floats, ints and arrays does not
compile, and a tape that starts with the `None` of a name not bound yet (`_sin = None`
before the loop that pushes it) is a list of optional floats, which numba checks and boxes
on every push and pop (twice the time of the whole recurrence loop). For numba:

    _tape = []                          _tape_x = []
    _sin = None                         _tape_sin = []
                                        _sin = 0.0        (every value of _sin is a float)
    _tape.append(_sin)          ->      _tape_sin.append(_sin)
    _tape.append(x)                     _tape_x.append(x)
    ...                                 ...
    x = _tape.pop()                     x = _tape_x.pop()
    _sin = _tape.pop()                  _sin = _tape_sin.pop()

A pop restores the value its push saved, and pushes and pops nest as brackets do; the
pushes and pops of one name are a subset of those brackets, so they nest too: one list per
name pops exactly what the shared one did. A value saved for an item (`x[i] = v` saves
`x[i].copy()` and restores into `x[i]`) gets a list of its own apart from `x`'s. A tape
used in any other way (returned, passed to a call), or whose pushes and pops do not name
the same values, is left as it is.

The `None` a name starts as is read only by the first push and written back by the last
pop, so any value of the name's type serves; 0.0 is used where every value assigned to
the name is a float for certain (a call of a `math` function that returns one, or a float
literal, or the shapes pass found a float64 number), 0 for a name that only ever holds
Python ints (a range index). Other names keep `None` (an optional value to numba, slower
but right).
"""
from __future__ import annotations

import math

import gast
import numpy as np

from ..analysis.shape_algebra import WEAK
from ..ir.blocks import nodes, statement_lists
from ..ir.builders import const, load, store

# math functions whose result is a float whatever numbers they are given
FLOAT_MATH = frozenset({
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh",
    "asinh", "acosh", "atanh", "exp", "expm1", "exp2", "log", "log1p", "log2", "log10",
    "sqrt", "cbrt", "pow", "hypot", "erf", "erfc", "gamma", "lgamma", "fabs", "fmod",
    "copysign", "degrees", "radians", "ldexp"})


def split_tapes(tree, refers_to, facts=None, ints=frozenset()):
    """Rewrite `tree` (a generated function) in place as the docstring shows;
    `refers_to(name)` is what a free name of the code refers to, `facts` the shapes
    the shapes pass found (name -> (shape, dtype)), `ints` the names that only ever hold
    Python ints (analysis/shapes.py)."""
    for tape in _local_tapes(tree):
        _split(tree, tape)
    tapes = frozenset(_local_tapes(tree))
    _numbers_saved(tree, tapes, facts or {})
    _typed_starts(tree, refers_to, tapes, facts or {}, ints)
    return tree


def _local_tapes(tree) -> list:
    """Names bound to `[]` in the function's top block and used only by
    `_tape.append(e)` and `v = _tape.pop()` statements."""
    made = [s.targets[0].id for s in tree.body if _empty_list(s)]
    uses = {}
    for node in nodes(tree):
        if isinstance(node, gast.Name) and node.id in made:
            uses[node.id] = uses.get(node.id, 0) + 1
    ours = {}
    for body in statement_lists(tree.body):
        for stmt in body:
            name = _push_tape(stmt) or _pop_tape(stmt)
            if name in made:
                ours[name] = ours.get(name, 0) + 1
    return [t for t in made if uses.get(t, 0) == ours.get(t, 0) + 1]


def _empty_list(stmt) -> bool:
    return isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
        isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.List) and \
        not stmt.value.elts


def _push_tape(stmt):
    """`t` of a statement `t.append(e)`, else None."""
    call = stmt.value if isinstance(stmt, gast.Expr) else None
    if isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and \
            call.func.attr == "append" and isinstance(call.func.value, gast.Name) and \
            len(call.args) == 1 and not call.keywords:
        return call.func.value.id
    return None


def _pop_tape(stmt):
    """`t` of a statement `target = t.pop()`, else None."""
    call = stmt.value if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 else None
    if isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and \
            call.func.attr == "pop" and isinstance(call.func.value, gast.Name) and \
            not call.args and not call.keywords:
        return call.func.value.id
    return None


def _key(node, pushed: bool):
    """What a push of `node` or a pop into `node` saves: (name, whole value or an item),
    or None where it is neither."""
    whole = isinstance(node, gast.Name)
    while isinstance(node, (gast.Subscript, gast.Attribute, gast.Call)):
        node = node.func if isinstance(node, gast.Call) else node.value
        if pushed and isinstance(node, gast.Attribute):     # x[i].copy()
            node = node.value
    if not isinstance(node, gast.Name):
        return None
    return node.id, whole


def _split(tree, tape):
    sites = []              # (statement, key)
    for body in statement_lists(tree.body):
        for stmt in body:
            if _push_tape(stmt) == tape:
                sites.append((stmt, _key(stmt.value.args[0], True)))
            elif _pop_tape(stmt) == tape:
                sites.append((stmt, _key(stmt.targets[0], False)))
    pushed = {k for stmt, k in sites if _push_tape(stmt) == tape}
    popped = {k for stmt, k in sites if _pop_tape(stmt) == tape}
    # each pop must have its push's key (a value pushed under another name, or pushed and
    # never popped, leaves the tape as it is)
    if None in pushed or pushed != popped:
        return
    keys = sorted(pushed)
    names = _tape_names(tree, tape, keys)
    for stmt, key in sites:
        receiver = stmt.value.func
        receiver.value = load(names[key])
    at = next(i for i, s in enumerate(tree.body) if _empty_list(s) and
              s.targets[0].id == tape)
    tree.body[at:at + 1] = [_new_list(names[k]) for k in keys]


def _numbers_saved(tree, tapes, facts):
    """`t.append(y[k].copy())` -> `t.append(y[k])` where y[k] is one number (y's shape
    has as many axes as there are indexes, each a number): numba's numbers have no
    `copy`, and need none."""
    for body in statement_lists(tree.body):
        for stmt in body:
            if _push_tape(stmt) not in tapes:
                continue
            saved = stmt.value.args[0]
            if isinstance(saved, gast.Call) and isinstance(saved.func, gast.Attribute) and \
                    saved.func.attr == "copy" and not saved.args and \
                    _one_number(saved.func.value, facts):
                stmt.value.args = [saved.func.value]


def _one_number(node, facts) -> bool:
    if not (isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name)):
        return False
    shape = facts.get(node.value.id, (None,))[0]
    index = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
    return isinstance(shape, tuple) and len(shape) == len(index) and all(
        isinstance(i, gast.Constant) and type(i.value) is int or
        isinstance(i, gast.Name) and _an_int(facts.get(i.id)) for i in index)


def _an_int(fact) -> bool:
    """Whether a name with this fact holds one int (a weak number: a range index; an
    index that is a Python float fails in the NumPy code as well)."""
    return fact is not None and fact[0] == () and (
        fact[1] is WEAK or getattr(fact[1], "kind", "") in "iu")


def _tape_names(tree, tape, keys) -> dict:
    taken = {n.id for n in nodes(tree) if isinstance(n, gast.Name)} | \
        {a.id for a in tree.args.args}
    names = {}
    for name, whole in keys:
        base = f"{tape}_{name.lstrip('_')}" + ("" if whole else "_items")
        chosen, n = base, 1
        while chosen in taken:
            n += 1
            chosen = f"{base}_{n}"
        taken.add(chosen)
        names[(name, whole)] = chosen
    return names


def _new_list(name):
    return gast.Assign(targets=[store(name)], value=gast.List(elts=[], ctx=gast.Load()),
                       type_comment=None)


def _typed_starts(tree, refers_to, tapes, facts, ints):
    """`v = None` at the top -> `v = 0` where v only ever holds ints, `v = 0.0` where
    every other value of v is a float64 (a pop gives back a value pushed, which v had)."""
    values = {}
    for node in nodes(tree):
        if isinstance(node, gast.Assign) and _pop_tape(node) in tapes:
            continue
        if isinstance(node, gast.Assign):
            for target in node.targets:
                for name in _bound(target):
                    values.setdefault(name, []).append(node.value if isinstance(
                        target, gast.Name) else None)
        elif isinstance(node, (gast.AugAssign, gast.For)):
            for name in _bound(node.target):
                values.setdefault(name, []).append(None)
    for stmt in tree.body:
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], gast.Name) and _is_none(stmt.value):
            name = stmt.targets[0].id
            others = [v for v in values.get(name, []) if v is not stmt.value]
            if name in ints:
                stmt.value = const(0)
            elif facts.get(name) == ((), np.dtype(np.float64)) or \
                    others and all(_float(v, refers_to) for v in others):
                stmt.value = const(0.0)


def _bound(target):
    return [n.id for n in nodes(target) if isinstance(n, gast.Name) and
            isinstance(n.ctx, gast.Store)]


def _is_none(node) -> bool:
    return isinstance(node, gast.Constant) and node.value is None


def _float(value, refers_to) -> bool:
    if isinstance(value, gast.Constant):
        return type(value.value) is float
    return isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and \
        isinstance(value.func.value, gast.Name) and value.func.attr in FLOAT_MATH and \
        refers_to(value.func.value.id) is math
