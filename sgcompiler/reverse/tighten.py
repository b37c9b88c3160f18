"""Tighten loop bodies in normal form before the reverse pass, so that the primal sweep
recomputes and tapes less and the adjoint sweep copies less.

    for i in range(n):                  _neg = -k
        _neg = -k                  ->   for i in range(n):
        _mul = _neg * x                     _mul = _neg * x
        _add = s + _mul                     s = s + _mul
        s = _add

- hoist: a statement whose value is the same on every trip runs once, before the loop, so
  it is neither recomputed nor saved on the tape each trip. Only an operation that cannot
  raise (-a, +a, a + b, a - b, a * b on numbers, and `stop_gradient(name)` of any value,
  the identity when it runs), on names the loop never rebinds and that are bound before
  it, whose result is assigned nowhere else and read only inside the loop, later in the
  same trip: then every read sees the same value as before, and a loop that runs zero
  times computes a value nobody reads.
- update: `_t = x + y; x = _t` (normalize keeps a new value apart from the old one) becomes
  `x = x + y` when no adjoint of the operation reads the old x: the adjoint sweep reads the
  operands before it restores x's old value, so it would see the new one.
"""
from __future__ import annotations

import dataclasses
from collections import Counter

import gast

from .. import runtime
from ..ir.blocks import nodes, statement_lists, statements, walk
from ..analysis.memory import bound_before
from ..analysis.ops import RULE, describe_op
from ..frontend.resolve import STOP, local_names
from .inline import clone

LOOPS = (gast.For, gast.While)
_PURE_BINARY = (gast.Add, gast.Sub, gast.Mult)
_PURE_UNARY = (gast.USub, gast.UAdd)


def tighten(norm, resolution, act, shapes):
    """`norm` with loop-invariant statements hoisted and `_t = x op y; x = _t` pairs made
    one statement where that is safe (a new Normalized; `norm` is not changed).

    Args:
        norm: the function in normal form.
        resolution, act, shapes: its resolution, activity and shape facts.
    Returns:
        the tightened Normalized.
    """
    if not any(isinstance(s, LOOPS) for stmt in norm.body for s in statements(stmt)):
        return norm         # nothing to tighten
    body = clone(list(norm.body))
    context = _Context(norm, resolution, act, shapes, body)
    _hoist_block(body, context)
    _fuse_updates(body, context)
    return dataclasses.replace(norm, body=tuple(body))


class _Context:
    def __init__(self, norm, resolution, act, shapes, body):
        self.norm, self.resolution, self.act, self.shapes = norm, resolution, act, shapes
        self.params = set(norm.params)
        self.user_names = local_names(norm.fn.tree)
        self.bound = bound_before(body, norm.params)
        self.writes, self.reads = _counts(body)

    def is_number(self, atom) -> bool:
        """A number the loop body cannot change without rebinding it."""
        if isinstance(atom, gast.Constant):
            return type(atom.value) in (int, float, bool)
        return isinstance(atom, gast.Name) and atom.id not in self.resolution.global_roots \
            and self.shapes.is_scalar(atom.id)


# --- hoisting loop invariants ----------------------------------------------------------------


def _hoist_block(block, context):
    """Hoist out of every loop in `block` (innermost loops first)."""
    i = 0
    while i < len(block):
        stmt = block[i]
        if isinstance(stmt, gast.If):
            _hoist_block(stmt.body, context)
            _hoist_block(stmt.orelse, context)
        elif isinstance(stmt, LOOPS):
            _hoist_block(stmt.body, context)
            hoisted = _hoist_loop(stmt, context)
            block[i:i] = hoisted
            i += len(hoisted)
        i += 1


def _spine(loop):
    """The statements every trip runs in order until a break: the body, and for a
    lowered `while c:` (its last statement `if c: ... else: break`) that branch's body.
    Returns (statement, the block holding it, what it reads itself) triples."""
    out = []
    last = loop.body[-1] if loop.body else None
    condition = isinstance(loop, gast.While) and isinstance(last, gast.If) and \
        len(last.orelse) == 1 and isinstance(last.orelse[0], gast.Break)
    for stmt in loop.body:
        if condition and stmt is last:
            out.append((stmt, loop.body, stmt.test))
            for inner in stmt.body:
                out.append((inner, stmt.body, inner))
                if isinstance(inner, gast.Break):
                    return out
            return out
        out.append((stmt, loop.body, stmt))
        if isinstance(stmt, gast.Break):
            return out
    return out


def _hoist_loop(loop, context):
    """Take the invariant statements out of `loop`; return them in their order."""
    if loop.orelse:
        return []
    hoisted = []
    bound = set(context.bound.get(id(loop), ()))
    changed = True
    while changed:
        changed = False
        written = _stores(loop)
        spine = _spine(loop)
        for k, (stmt, block, _) in enumerate(spine):
            if _invariant(stmt, k, spine, loop, written, bound, context):
                block.remove(stmt)
                hoisted.append(stmt)
                bound.add(stmt.targets[0].id)
                changed = True
                break
    return hoisted


def _invariant(stmt, k, spine, loop, written, bound, context) -> bool:
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)):
        return False
    value, target = stmt.value, stmt.targets[0].id
    if _stop_of_a_name(value, context):
        operands = value.args           # the identity: a reference, of any type, is the same
    elif isinstance(value, gast.UnaryOp) and isinstance(value.op, _PURE_UNARY):
        operands = [value.operand]
    elif isinstance(value, gast.BinOp) and isinstance(value.op, _PURE_BINARY):
        operands = [value.left, value.right]
    else:
        return False
    if not _stop_of_a_name(value, context) and not all(context.is_number(a)
                                                       for a in operands):
        return False
    if any(isinstance(a, gast.Name) and (a.id in written or a.id not in bound)
           for a in operands):
        return False
    if target in context.params or context.writes[target] != 1 or \
            target in context.resolution.global_roots:
        return False
    # every read of the target is in this loop, after the statement in the same trip
    later = sum(_names(node, gast.Load)[target] for _, _, node in spine[k + 1:])
    return later == context.reads[target]


def _stop_of_a_name(value, context) -> bool:
    """`stop_gradient(name)`: the identity when it runs, so it cannot raise."""
    if not (isinstance(value, gast.Call) and len(value.args) == 1 and not value.keywords
            and isinstance(value.args[0], gast.Name)):
        return False
    try:
        return context.resolution.callee(value.func).kind == STOP
    except KeyError:
        return False


def _stores(node) -> set:
    """Names a statement (and everything in it) binds."""
    return {n.id for n in nodes(node) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Store)}


def _names(node, ctx) -> Counter:
    return Counter(n.id for n in nodes(node) if isinstance(n, gast.Name)
                   and isinstance(n.ctx, ctx))


def _counts(body):
    """(writes, reads): how often each name is bound and read in `body`, in one walk
    of each statement."""
    writes, reads = Counter(), Counter()
    for stmt in body:
        for n in nodes(stmt):
            if isinstance(n, gast.Name):
                if isinstance(n.ctx, gast.Store):
                    writes[n.id] += 1
                elif isinstance(n.ctx, gast.Load):
                    reads[n.id] += 1
    return writes, reads


# --- x = x op y in one statement -------------------------------------------------------------


def _fuse_updates(body, context):
    for block in statement_lists(body):
        i = 0
        while i + 1 < len(block):
            first, second = block[i], block[i + 1]
            if _fusable(first, second, context):
                second.value = first.value
                del block[i]
                continue
            i += 1


def _fusable(first, second, context) -> bool:
    """`_t = <op of x>; x = _t`, with _t a temporary read only there, and no adjoint of
    the operation reading the old x."""
    if not (isinstance(first, gast.Assign) and isinstance(second, gast.Assign)
            and isinstance(first.targets[0], gast.Name)
            and isinstance(second.targets[0], gast.Name)
            and isinstance(second.value, gast.Name)
            and second.value.id == first.targets[0].id):
        return False
    temp, target = first.targets[0].id, second.targets[0].id
    if temp in context.user_names or temp in context.params or \
            context.writes[temp] != 1 or context.reads[temp] != 1:
        return False
    if not isinstance(first.value, (gast.BinOp, gast.UnaryOp)):
        return False
    operands = [first.value.operand] if isinstance(first.value, gast.UnaryOp) else \
        [first.value.left, first.value.right]
    if not any(isinstance(a, gast.Name) and a.id == target for a in operands):
        return False
    op = describe_op(first.value, context.resolution, context.norm.fn, first)
    if op.kind != RULE:
        return False
    old = {p for p, atom in op.args.items() if isinstance(atom, gast.Name) and atom.id == target}
    reading = [p for p, name in op.inputs if context.act.is_active(name)
               and _reads(op.rule.output_for(p), old)]
    if not reading:
        return True
    # unbroadcast(g, x) reads only x's shape, and simplify drops it when x is a number
    return all(_reads_only_shape(op.rule, p, old) for p in reading) and \
        context.shapes.is_scalar(target) and context.shapes.is_scalar(temp)


def _reads_only_shape(rule, param, names) -> bool:
    """Whether the rule's gradient for `param` reads the parameters `names` only as the
    shape argument of unbroadcast."""
    template = rule.output_for(param)
    shape_reads = set()
    for node in walk(template):
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
                rule.namespace.get(node.func.id) is runtime.unbroadcast and \
                len(node.args) == 2 and isinstance(node.args[1], gast.Name):
            shape_reads.add(id(node.args[1]))
    return not any(isinstance(n, gast.Name) and n.id in names and id(n) not in shape_reads
                   for n in walk(template))


def _reads(template, names) -> bool:
    return any(isinstance(n, gast.Name) and n.id in names for n in walk(template))
