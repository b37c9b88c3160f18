"""Derivative factors saved instead of the values they are computed from (numba code only).

A loop's adjoint often reads a saved value only through one function of it, the
derivative of the primitive that used it: `math.cos(theta)` for `math.sin(theta)`. For
numba the forward then computes that factor where it pushes the value, and the tape holds
the factor (after backend/numba_tapes.py has given every saved name its tape):

    for _ in range(steps):                       for _ in range(steps):
        _sin = math.sin(theta)                       _sin = math.sin(theta)
        ...                                          ...
        _tape_theta[_n_theta] = theta      ->        _tape_cos_theta[_n_cos_theta] = math.cos(theta)
        _n_theta += 1                                _n_cos_theta += 1
        theta = theta + dt * omega                   theta = theta + dt * omega
    for _2 in range(_trips):                     for _2 in range(_trips):
        _n_theta -= 1                                _n_cos_theta -= 1
        theta = _tape_theta[_n_theta]                _cos_theta = _tape_cos_theta[_n_cos_theta]
        d = d + g * math.cos(theta)                  d = d + g * _cos_theta

LLVM computes `sin` and `cos` of the same number in one `sincos` call, and the adjoint
loop, which waited for a `cos` a trip, does arithmetic alone (Euler's 1000 steps: 18.5 to
14.6 us). The NumPy code is left as it is: there a `cos` costs the same in either sweep.

The numbers are the same: the factor is the same expression of the same value, evaluated
once for each value pushed, as the adjoint did once for each value popped. So only where

- the tape has one push and one pop, each a statement of a loop that is a statement of
  the function's own block, the push of a plain name, once a trip of the forward loop,
  the pop once a trip of the adjoint loop, which runs as many trips (`range(_trips)`,
  the forward's count): each value pushed is popped once;
- in that loop, the popped name is read only after the pop, only in statements of the
  loop's own block (not in a nested block, a conditional expression or `and`/`or`: the
  factor is computed for every value, as it was), never written again, and every read is
  inside one and the same expression of it alone: numbers, arithmetic and calls of
  `math` functions (at least one call: a factor worth computing early);
- the name is not read after that loop (the pop no longer gives it its old value back).
"""
from __future__ import annotations

import copy
import math

import gast

from ..ir.blocks import nodes
from ..ir.builders import load, store
from .numba_tapes import FLOAT_MATH, _fresh

_COMPOUND = (gast.If, gast.For, gast.While, gast.With, gast.Try, gast.FunctionDef)
_BRANCHING = (gast.IfExp, gast.BoolOp, gast.Lambda, gast.ListComp, gast.SetComp,
              gast.DictComp, gast.GeneratorExp, gast.NamedExpr)


def save_factors(tree, refers_to) -> None:
    """Rewrite `tree` (numba's generated function, tapes split) in place as the
    docstring shows; `refers_to(name)` is what a free name of the code refers to."""
    taken = {n.id for n in nodes(tree) if isinstance(n, gast.Name)} | \
        {a.id for a in tree.args.args}
    for at, loop in enumerate(tree.body):
        if not isinstance(loop, (gast.For, gast.While)) or loop.orelse:
            continue
        for i, stmt in enumerate(loop.body):
            tape, name = _popped(stmt)
            if tape is None:
                continue
            push = _only_push(tree, tape)
            factor = push is not None and _float_tape(tree, tape) and \
                _balanced(tree, push, loop) and _factor(loop, i, name)
            # (`math` and `range` looked up last: a lookup is a read the cached code
            # depends on)
            if factor and not _read(tree.body[at + 1:], name) and \
                    refers_to("math") is math and refers_to("range") is range:
                _save(tree, tape, push, loop, i, factor, name, taken)


def _popped(stmt):
    """(tape, name) of a pop `name = tape.pop()` or `name = tape[count]`, else (None, None)."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and
            isinstance(stmt.targets[0], gast.Name)):
        return None, None
    value = stmt.value
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and \
            value.func.attr == "pop" and not value.args and not value.keywords:
        value = value.func.value
    elif isinstance(value, gast.Subscript) and isinstance(value.slice, gast.Name):
        value = value.value
    else:
        return None, None
    if isinstance(value, gast.Name) and value.id.startswith("_tape"):
        return value.id, stmt.targets[0].id
    return None, None


def _only_push(tree, tape):
    """The one statement that pushes a plain name onto `tape` (`tape.append(x)`,
    `tape[count] = x`), where `tape` is read nowhere but there, in its pop and where it
    is made; else None."""
    pushes, uses = [], 0
    for node in nodes(tree):
        if isinstance(node, gast.Name) and node.id == tape:
            uses += 1
        pushed = _pushed(node, tape)
        if pushed is not None:
            pushes.append(node)
    return pushes[0] if len(pushes) == 1 and uses == 3 else None


def _balanced(tree, push, loop) -> bool:
    """Whether each trip of `loop` pops one value of those the pushing loop pushed, and
    all of them: both loops are statements of the function's block, left by no `break`,
    `continue` or `return`; `push` is a statement of its loop's block; `loop` runs over
    `range(T)`, T set to 0 in the function's block and added 1 to on each trip of the
    pushing loop, in its block, and written nowhere else."""
    forward = next((s for s in tree.body if isinstance(s, (gast.For, gast.While)) and
                    any(stmt is push for stmt in s.body)), None)
    if forward is None or forward is loop or not isinstance(loop, gast.For) or \
            _leaves(forward) or _leaves(loop):
        return False
    it = loop.iter
    if not (isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and
            it.func.id == "range" and len(it.args) == 1 and not it.keywords and
            isinstance(it.args[0], gast.Name)):
        return False
    count = it.args[0].id
    stores = [n for n in nodes(tree) if isinstance(n, gast.Name) and n.id == count and
              isinstance(n.ctx, gast.Store)]
    start = [s for s in tree.body if isinstance(s, gast.Assign) and
             [t.id for t in s.targets if isinstance(t, gast.Name)] == [count] and
             isinstance(s.value, gast.Constant) and s.value.value == 0 and
             type(s.value.value) is int]
    step = [s for s in forward.body if isinstance(s, gast.AugAssign) and
            isinstance(s.target, gast.Name) and s.target.id == count and
            isinstance(s.op, gast.Add) and isinstance(s.value, gast.Constant) and
            s.value.value == 1 and type(s.value.value) is int]
    return len(stores) == 2 and len(start) == 1 and len(step) == 1 and \
        tree.body.index(start[0]) < tree.body.index(forward) < tree.body.index(loop)


def _leaves(loop) -> bool:
    return any(isinstance(n, (gast.Break, gast.Continue, gast.Return)) for n in nodes(loop))


def _float_tape(tree, tape) -> bool:
    """Whether `tape` is made in the function's block as a list or a float64 array
    (`np.empty(n)`: an int64 array of a range index would cut the factor to an int)."""
    for stmt in tree.body:
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == tape:
            value = stmt.value
            return isinstance(value, gast.List) and not value.elts or \
                isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and \
                value.func.attr == "empty" and len(value.args) == 1 and not value.keywords
    return False


def _pushed(node, tape):
    """The plain name that statement `node` pushes onto `tape`, else None."""
    if isinstance(node, gast.Expr) and isinstance(node.value, gast.Call):
        call = node.value
        if isinstance(call.func, gast.Attribute) and call.func.attr == "append" and \
                isinstance(call.func.value, gast.Name) and call.func.value.id == tape and \
                len(call.args) == 1 and not call.keywords and \
                isinstance(call.args[0], gast.Name):
            return call.args[0].id
    if isinstance(node, gast.Assign) and len(node.targets) == 1 and \
            isinstance(node.targets[0], gast.Subscript) and \
            isinstance(node.targets[0].value, gast.Name) and \
            node.targets[0].value.id == tape and isinstance(node.value, gast.Name):
        return node.value.id
    return None


def _factor(loop, at, name):
    """The one expression of `name` alone that every read of `name` in `loop` is inside
    (all of them after its pop, statement `at`, as the docstring says), else None."""
    heads = [loop.test] if isinstance(loop, gast.While) else [loop.iter, loop.target]
    if any(isinstance(n, gast.Name) and n.id == name for h in heads for n in nodes(h)):
        return None
    found = []
    for i, stmt in enumerate(loop.body):
        if i == at:
            continue
        if any(isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Store)
               for n in nodes(stmt)):
            return None
        if not _read([stmt], name):
            continue
        if i < at or isinstance(stmt, _COMPOUND) or \
                any(isinstance(n, _BRANCHING) for n in nodes(stmt)):
            return None
        if not _factors_in(stmt, name, found):
            return None
    dumps = {gast.dump(e) for e in found}
    if len(dumps) != 1 or not any(isinstance(n, gast.Call) for n in nodes(found[0])):
        return None
    return found[0]


def _factors_in(node, name, found) -> bool:
    """Collect into `found` the largest expressions of `name` alone in `node`; False
    where `name` is read outside one."""
    if isinstance(node, gast.expr) and _of_alone(node, name):
        if any(isinstance(n, gast.Name) and n.id == name for n in nodes(node)):
            found.append(node)
        return True
    if isinstance(node, gast.Name):
        return node.id != name
    return all(_factors_in(child, name, found) for child in gast.iter_child_nodes(node))


def _of_alone(node, name) -> bool:
    """Whether `node` is numbers, `name`, arithmetic and calls of math functions."""
    if isinstance(node, gast.Name):
        return node.id == name
    if isinstance(node, gast.Constant):
        return type(node.value) in (int, float)
    if isinstance(node, gast.BinOp):
        return _of_alone(node.left, name) and _of_alone(node.right, name)
    if isinstance(node, gast.UnaryOp):
        return _of_alone(node.operand, name)
    if isinstance(node, gast.Call):
        func = node.func
        return isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and \
            func.value.id == "math" and func.attr in FLOAT_MATH and not node.keywords and \
            all(_of_alone(a, name) for a in node.args)
    return False


def _read(stmts, name) -> bool:
    return any(isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load)
               for stmt in stmts for n in nodes(stmt))


def _save(tree, tape, push, loop, at, factor, name, taken):
    """Push `factor` of the pushed name, pop it into a name of its own, read that."""
    kept = _factor_name(factor, name, taken)
    renames = {tape: _fresh("_tape" + kept, taken)}
    pop = loop.body[at]
    if isinstance(pop.value, gast.Subscript):       # an array tape: its count too
        count = pop.value.slice.id
        renames[count] = _fresh("_n" + kept, taken)
    pushed = _pushed(push, tape)
    early = _renamed(copy.deepcopy(factor), {name: pushed})
    if isinstance(push, gast.Expr):
        push.value.args[0] = early
    else:
        push.value = early
    pop.targets[0] = store(kept)
    loop.body[at + 1:] = [_replaced(stmt, factor, kept) for stmt in loop.body[at + 1:]]
    _renamed(tree, renames)


def _factor_name(factor, name, taken) -> str:
    """`_cos_theta` for `math.cos(theta)`, `_factor_theta` for anything else."""
    what = factor.func.attr if isinstance(factor, gast.Call) else "factor"
    return _fresh(f"_{what}_{name.lstrip('_')}", taken)


def _replaced(node, factor, kept):
    """`node` with each copy of expression `factor` read from the name `kept`."""
    wanted = gast.dump(factor)

    class _Swap(gast.NodeTransformer):
        def visit(self, node):
            if isinstance(node, gast.expr) and gast.dump(node) == wanted:
                return load(kept)
            return super().visit(node)
    return _Swap().visit(node)


def _renamed(node, renames):
    for n in nodes(node):
        if isinstance(n, gast.Name) and n.id in renames:
            n.id = renames[n.id]
    return node
