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

Then a tape of numbers that one counted loop alone pushes (`for ... in range(n)`, run once,
never left early) becomes an array as long as the loop can push, with a count of what it
holds (`_array_tapes`): no list to grow on each push nor to shrink on each pop.
"""
from __future__ import annotations

import copy
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


def split_tapes(tree, refers_to, facts=None, ints=frozenset(), numpy_name=None):
    """Rewrite `tree` (a generated function) in place as the docstring shows;
    `refers_to(name)` is what a free name of the code refers to, `facts` the shapes
    the shapes pass found (name -> (shape, dtype)), `ints` the names that only ever hold
    Python ints (analysis/shapes.py); `numpy_name()`, where given, the name the code
    can call NumPy by (the tapes of a counted loop become arrays: `_array_tapes`)."""
    for tape in _local_tapes(tree):
        _split(tree, tape)
    tapes = frozenset(_local_tapes(tree))
    _numbers_saved(tree, tapes, facts or {})
    floats = _typed_starts(tree, refers_to, tapes, facts or {}, ints)
    if numpy_name is not None:
        _array_tapes(tree, refers_to, tapes, _kinds(tree, facts or {}, ints, floats), numpy_name)
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
    every other value of v is a float64 (a pop gives back a value pushed, which v had).
    Returns the names made 0.0."""
    values, floats = {}, set()
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
                floats.add(name)
    return floats


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


def _kinds(tree, facts, ints, floats):
    """name -> the dtype of an array that holds every value of the name as it is,
    "int64" (ints: Python ints alone) or "float64" (a float64 number by the shapes pass,
    a Python number, or a name every value of which is a float for certain), else None
    (an array, or a name given None anywhere: numba's optional). A Python number that is
    an int is held as a float64 (numba unifies a name given ints and floats as float64
    anyway); a complex number does not go into a float64 array (numba refuses to
    compile that, and the NumPy code runs)."""
    unset = {s.targets[0].id for s in nodes(tree) if isinstance(s, gast.Assign) and
             len(s.targets) == 1 and isinstance(s.targets[0], gast.Name) and
             _is_none(s.value)}

    def kind(name):
        if name in ints:
            return "int64"
        if name in floats or name not in unset and facts.get(name) in (
                ((), np.dtype(np.float64)), ((), WEAK)):
            return "float64"
        return None
    return kind


def _array_tapes(tree, refers_to, tapes, kind, numpy_name):
    """The tapes of numbers pushed only by one counted loop become arrays of as many
    numbers as the loop can push, with a count of those pushed:

        _tape_sin = []                          _tape_sin = np.empty(len(range(n)))
        ...                                     _n_sin = 0
        for _ in range(n):                      for _ in range(n):
            _tape_sin.append(_sin)      ->          _tape_sin[_n_sin] = _sin
            ...                                     _n_sin += 1
        for _2 in range(_trips):                ...
            _sin = _tape_sin.pop()              for _2 in range(_trips):
                                                    _n_sin -= 1
                                                    _sin = _tape_sin[_n_sin]

    (a list that grows by appending cost Euler's 1000 steps a quarter of their time).
    Only where the array cannot be too short, nor much too long: the loop is a statement
    of the function's own block (it runs once), over `range(...)` of arguments that
    reading twice cannot change (names, constants, their attributes and items), with no
    `break` or `return` (it runs every trip of the range: a `range(10**9)` left early
    would allocate for all of them), and every push of the tape is in its body outside
    any loop nested in it (each runs at most once a trip: an `if` pushes fewer); the
    array holds pushes * trips numbers. Every value pushed
    is a name all of whose values are float64 numbers (or all Python ints: an int64
    array). Any other tape stays a list."""
    pushed = {}         # tape -> its push statements, anywhere
    for body in statement_lists(tree.body):
        for stmt in body:
            if _push_tape(stmt) in tapes:
                pushed.setdefault(_push_tape(stmt), []).append(stmt)
    taken = {n.id for n in nodes(tree) if isinstance(n, gast.Name)} | \
        {a.id for a in tree.args.args}
    counters = {}       # tape -> its count's name
    at = 0
    while at < len(tree.body):
        loop = tree.body[at]
        at += 1
        if not (isinstance(loop, gast.For) and _counted(loop.iter, refers_to)) or \
                _leaves(loop.body):
            continue
        inside = {}
        for stmt in _once_a_trip(loop.body):
            if _push_tape(stmt) in tapes:
                inside.setdefault(_push_tape(stmt), []).append(stmt)
        made = []
        for tape, stmts in inside.items():
            kinds = {kind(s.value.args[0].id) if isinstance(s.value.args[0], gast.Name)
                     else None for s in stmts}
            if len(stmts) != len(pushed[tape]) or len(kinds) != 1 or None in kinds:
                continue
            count = _fresh("_n_" + tape[len("_tape_"):] if tape.startswith("_tape_")
                           else f"_n{tape}", taken)
            counters[tape] = count
            size = gast.Call(func=load("len"), args=[copy.deepcopy(loop.iter)], keywords=[])
            if len(stmts) > 1:
                size = gast.BinOp(left=const(len(stmts)), op=gast.Mult(), right=size)
            args = [size] + ([] if kinds == {"float64"} else [gast.Attribute(
                value=load(numpy_name()), attr=kinds.pop(), ctx=gast.Load())])
            made += [gast.Assign(targets=[store(tape)], value=gast.Call(
                func=gast.Attribute(value=load(numpy_name()), attr="empty", ctx=gast.Load()),
                args=args, keywords=[]), type_comment=None),
                gast.Assign(targets=[store(count)], value=const(0), type_comment=None)]
        tree.body[at - 1:at - 1] = made
        at += len(made)
    if not counters:
        return
    tree.body[:] = [s for s in tree.body if not (_empty_list(s) and
                                                  s.targets[0].id in counters)]
    for body in statement_lists(tree.body):
        out = []
        for stmt in body:
            tape = _push_tape(stmt) or _pop_tape(stmt)
            if tape not in counters:
                out.append(stmt)
                continue
            count = counters[tape]
            slot = gast.Subscript(value=load(tape), slice=load(count), ctx=gast.Load())
            if _push_tape(stmt):
                slot.ctx = gast.Store()
                out += [gast.Assign(targets=[slot], value=stmt.value.args[0],
                                    type_comment=None),
                        gast.AugAssign(target=store(count), op=gast.Add(), value=const(1))]
            else:
                out += [gast.AugAssign(target=store(count), op=gast.Sub(), value=const(1)),
                        gast.Assign(targets=stmt.targets, value=slot, type_comment=None)]
        body[:] = out


def _leaves(body) -> bool:
    """Whether a `break` or `return` in a loop's `body` can end it early (a `break` of a
    loop nested in it ends that one)."""
    for stmt in body:
        if isinstance(stmt, (gast.Break, gast.Return)):
            return True
        if isinstance(stmt, (gast.For, gast.While)):
            if any(isinstance(n, gast.Return) for n in nodes(stmt)):
                return True
        elif isinstance(stmt, (gast.If, gast.With, gast.Try)):
            blocks = [stmt.body, getattr(stmt, "orelse", []), getattr(stmt, "finalbody", [])]
            blocks += [h.body for h in getattr(stmt, "handlers", [])]
            if any(_leaves(b) for b in blocks):
                return True
    return False


def _once_a_trip(body):
    """The statements of a loop's body that run at most once a trip: those of its
    block and of the `if` statements in it, not those of loops nested in it."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, gast.If):
            yield from _once_a_trip(stmt.body)
            yield from _once_a_trip(stmt.orelse)


def _counted(iterable, refers_to) -> bool:
    """Whether `iterable` is `range(...)` of arguments read again unchanged before the
    loop (names, int constants, attributes and items of these)."""
    return isinstance(iterable, gast.Call) and isinstance(iterable.func, gast.Name) and \
        refers_to(iterable.func.id) is range and refers_to("len") is len and \
        1 <= len(iterable.args) <= 3 and \
        not iterable.keywords and all(_plain(a) for a in iterable.args)


def _plain(node) -> bool:
    if isinstance(node, gast.Name):
        return True
    if isinstance(node, gast.Constant):
        return type(node.value) is int
    if isinstance(node, gast.Attribute):
        return _plain(node.value)
    if isinstance(node, gast.Subscript):
        return _plain(node.value) and _plain(node.slice)
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        return _plain(node.operand)
    return False


def _fresh(base, taken) -> str:
    chosen, n = base, 1
    while chosen in taken:
        n += 1
        chosen = f"{base}_{n}"
    taken.add(chosen)
    return chosen
