"""Reverse mode: the primal sweep, then the adjoint sweep in reverse order.

    e = np.exp(z)              def f_grad(z):
    return np.sum(e)   ->          e = np.exp(z)
                                   result = np.sum(e)
                                   de = unreduce(1.0, e, None, False)
                                   dz = de * e
                                   return result, dz

Adjoints are tracked at compile time: one that was never written is zero and emits
nothing; the first contribution is `dx = ...` and later ones add to it (in place only into
arrays this code allocated). The adjoint sweep reads primal values by name, so whenever a
statement overwrites a variable that the adjoint sweep still needs, the primal sweep saves
the old value (in a slot, or on a tape inside loops) and the adjoint sweep restores it
right after that statement's adjoint. Branches replay the branch taken; loops count their
trips and the adjoint loop runs as many times.
"""
from __future__ import annotations

import copy
import functools
from dataclasses import dataclass

import gast
import numpy as np

from .. import runtime
from ..errors import error_at
from ..ir.naming import grad_function_name
from ..analysis.activity import Activity, assignments
from .adjoints import contributions, index_value
from .calls import CallSweeps
from .inline import Linker
from ..ir.builders import comment, const, load, store
from .loops import LOOPS, LoopSweeps, loop_targets
from ..frontend.normalize import Normalized
from ..analysis.ops import (APPEND, CALL, RULE, SETITEM, is_append, is_setitem,
                            target_of)
from ..analysis.shapes import ARRAY, CONTAINER, Shapes
from .context import SweepState, step_of
from .state import AdjointState
from ..ir.blocks import nodes, walk


@dataclass(frozen=True)
class Gradient:
    """The generated gradient function, before it is turned into text."""

    tree: gast.FunctionDef
    linker: Linker          # objects the generated code refers to by name
    wrt: tuple[str, ...]


@dataclass(frozen=True)
class SweepPlan:
    """What the reverser's first run learns for its second: which primal values the
    adjoint sweep reads (only those are saved where they are overwritten), the loops'
    planned reverses, and the generated names and linked objects both runs share."""

    linker: Linker
    names: dict
    reads: frozenset
    loop_reverses: dict
    keep_stops: bool = False    # the primal sweep keeps stop_gradient (code to read again)
    learned: dict = None        # the first run's facts about the function (SweepState.facts)


def plan_sweeps(norm: Normalized, resolution, act: Activity, shapes: Shapes, pieces,
                piece: bool = False, keep_stops: bool = False) -> SweepPlan:
    """The reverser's first run: the adjoint sweep alone, to learn what it reads. A
    function with no branch or loop and every variable assigned once overwrites
    nothing, so it needs no first run (a piece always has one: it returns what it saves).
    `keep_stops`: the primal sweep keeps `stop_gradient(e)` calls, so that code made to
    be differentiated again still treats `e` as a constant."""
    linker = Linker(norm.fn, norm.namer)
    names = {}       # generated names (loop counters, slots), the same in both runs
    if not piece and _straight_single_assignment(norm):
        return SweepPlan(linker, names, frozenset(), {}, keep_stops)
    first = _Reverser(norm, resolution, act, shapes, linker, frozenset(), names, {},
                      pieces, _seed(norm, piece))
    first.adjoint_block(norm.body)
    return SweepPlan(linker, names, frozenset(_with_restored_indexes(norm, first.reads)),
                     first.loop_reverses, keep_stops, first.facts())


def _with_restored_indexes(norm, reads) -> set:
    """What the adjoint sweep reads, with the indexes it restores at: each `x[i] = v` into
    an x it reads puts the old x[i] back in the second run, which then reads i (found by
    grad of grad, where `_index = [1, -2, 1]` was freed in the forward piece and missing
    in the backward's)."""
    reads = set(reads)
    writes = [s for s in assignments(norm.body) if is_setitem(s)]
    while True:
        more = {n.id for s in writes if target_of(s) in reads
                for n in walk(s.targets[0].slice) if isinstance(n, gast.Name)} - reads
        if not more:
            return reads
        reads |= more


def _sweeps(norm, resolution, act, shapes, pieces, plan, piece=False):
    """The reverser's second run: the primal sweep, saving what `plan` says the adjoint
    sweep reads where it is overwritten, then the adjoint sweep."""
    sweep = _Reverser(norm, resolution, act, shapes, plan.linker, plan.reads, plan.names,
                      plan.loop_reverses, pieces, _seed(norm, piece), plan.keep_stops,
                      plan.learned)
    forward = sweep.primal_block(norm.body, set(norm.params), in_loop=False)
    backward = sweep.adjoint_block(norm.body)
    return sweep, forward, backward


def _reads(body, name) -> bool:
    return any(isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load)
               for stmt in body for n in walk(stmt))


def _seed(norm, piece):
    """The adjoint of the result: 1.0 for a gradient, the backward's argument for a piece."""
    return load(norm.namer.adjoint(norm.returned)) if piece else const(1.0)


def _straight_single_assignment(norm) -> bool:
    """No branches or loops, and every variable assigned once (no parameter, no element
    write): then no statement overwrites a value the adjoint sweep may read."""
    seen = set(norm.params)
    for stmt in norm.body:
        if isinstance(stmt, gast.Return):
            continue
        if not isinstance(stmt, gast.Assign) or is_setitem(stmt) or \
                not isinstance(stmt.targets[0], gast.Name) or stmt.targets[0].id in seen:
            return False
        seen.add(stmt.targets[0].id)
    return True


def reverse(norm: Normalized, resolution, act: Activity, shapes: Shapes,
            wrt: tuple[str, ...], plan: SweepPlan, pieces=None,
            value: bool = True) -> Gradient:
    """Build `f_grad`, which returns `(result, gradient)` (a tuple of gradients if
    `wrt` has several names), or with `value=False` the gradient alone. `plan` is the
    first run's (plan_sweeps); `pieces(fn, active)` gives the forward and backward
    functions of a user function called with active arguments."""
    sweep, forward, backward = _sweeps(norm, resolution, act, shapes, pieces, plan)
    linker = sweep.linker
    grads = [sweep.final_gradient(p) for p in wrt]
    gradient = grads[0] if len(grads) == 1 else gast.Tuple(elts=grads, ctx=gast.Load())
    returned = norm.returned
    if value and sweep.restores(returned):
        # the adjoint sweep puts back older values of it: keep the result aside
        returned = norm.namer.fresh("result")
        forward.append(sweep.assign(returned, load(norm.returned)))
    if shapes.kind(norm.returned) == CONTAINER:
        # a tuple or list has no gradient: the caller sees the result and refuses it with
        # the TypeError of any non-scalar result (arguments._check_scalar)
        backward = [comment(f"{norm.fn.name} returns a tuple or list, not a scalar: no "
                            "gradient")]
        gradient, value = const(None), True
    ret = gast.Return(value=gast.Tuple(elts=[load(returned), gradient], ctx=gast.Load())
                      if value else gradient)
    body = sweep.prologue() + [comment("forward")] + forward
    if backward:
        body += [comment("backward")] + backward
    body.append(ret)
    tree = gast.FunctionDef(name=grad_function_name(norm.fn.name),
                            args=copy.deepcopy(norm.fn.tree.args), body=body,
                            decorator_list=[], returns=None, type_comment=None,
                            type_params=[])
    return Gradient(tree, linker, tuple(wrt))


@dataclass(frozen=True)
class PieceTrees:
    """The forward and backward functions of a user function called from generated code."""

    forward: gast.FunctionDef
    backward: gast.FunctionDef
    linker: Linker


def reverse_piece(norm: Normalized, resolution, act: Activity, shapes: Shapes,
                  active: tuple[str, ...], names: tuple[str, str], plan: SweepPlan,
                  pieces) -> PieceTrees:
    """Build `h_forward(params) -> (result, saved)` and `h_backward(dresult, saved) ->
    (adjoint of each active parameter,)` for a function `h` called from generated code;
    `plan` is the first run's (plan_sweeps with piece=True)."""
    seed = _seed(norm, piece=True)
    sweep, forward, backward = _sweeps(norm, resolution, act, shapes, pieces, plan,
                                       piece=True)
    grads = [sweep.piece_gradient(p) for p in active]
    # a parameter with no gradient gets a zero of its structure, zeros_tree(t): the
    # backward reads t, so the forward saves it (as it came in, if the function rebinds it)
    assigned = {target_of(s) for s in assignments(norm.body)}
    first, also_saved = [], set()
    for k, g in enumerate(grads):
        for n in walk(g):
            if isinstance(n, gast.Name) and n.id in norm.params and n.id not in sweep.needed \
                    and n.id not in also_saved:
                if n.id in assigned:
                    kept = sweep.name_for(("argument", n.id), f"_{n.id}_argument")
                    first.append(sweep.assign(kept, load(n.id)))
                    n.id = kept
                also_saved.add(n.id)
    # primal values, counters, saved call values, and the old values statements overwrite
    # (and the trip counts of the loops the adjoint sweep replays: a loop that only
    # restores values, with no adjoint code, still runs that many times)
    slots = {n for k, n in sweep.names.items() if k[0] == "slot" or
             k[0] == "trips" and _reads(backward, n)}
    saved_names = sorted(set(sweep.needed) | also_saved | slots)
    body = norm.body
    top = set(norm.params) | {target_of(s) for s in body
                              if isinstance(s, gast.Assign)} | {
        sweep.names[(kind, id(s))] for s in body for kind in ("trips", "saved")
        if (kind, id(s)) in sweep.names}
    for name in saved_names:
        if name not in top and name not in sweep.inits:
            sweep.inits.append(name)
    if sweep.uses_tape:
        saved_names.insert(0, sweep.tape)
    saved = sweep.name_for("saved", "_saved")
    pack = gast.Tuple(elts=[load(n) for n in saved_names], ctx=gast.Load())
    fwd_body = first + sweep.prologue() + forward + [gast.Return(value=gast.Tuple(
        elts=[load(norm.returned), pack], ctx=gast.Load()))]
    unpack = gast.Assign(targets=[gast.Tuple(elts=[store(n) for n in saved_names],
                                             ctx=gast.Store())],
                         value=load(saved), type_comment=None)
    bwd_body = ([unpack] if saved_names else []) + backward + [gast.Return(
        value=gast.Tuple(elts=grads, ctx=gast.Load()))]
    fwd = gast.FunctionDef(name=names[0], args=copy.deepcopy(norm.fn.tree.args),
                           body=fwd_body, decorator_list=[], returns=None,
                           type_comment=None, type_params=[])
    args = gast.arguments(args=[_param(seed.id), _param(saved)], posonlyargs=[],
                          vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
    bwd = gast.FunctionDef(name=names[1], args=args, body=bwd_body, decorator_list=[],
                           returns=None, type_comment=None, type_params=[])
    return PieceTrees(fwd, bwd, sweep.linker)


class _Reverser(SweepState, AdjointState, LoopSweeps, CallSweeps):
    """One run of the reverser: the fields of SweepState (context.py), the sweeps below,
    and the helpers of state.py, loops.py and calls.py."""

    @functools.cached_property
    def partial_adjoints(self):
        """Lists whose adjoint may hold a plain 0.0 for an element at run time: those read
        other than whole by a derivative rule (an element read, a copy, a call)."""
        out = {self.norm.returned}
        for stmt in assignments(self.norm.body):
            op = self.describe(stmt)
            if op.kind != RULE:
                out.update(name for _, name in op.inputs)
        return frozenset(out)

    # --- names and small builders

    def name_for(self, key, base):
        if key not in self.names:
            self.names[key] = self.namer.fresh(base)
        return self.names[key]

    @property
    def tape(self):
        self.uses_tape = True
        return self.name_for("tape", "_tape")

    def np_name(self):
        return load(self.linker.name_for("np", np))

    def np_call(self, attr, args):
        return gast.Call(func=gast.Attribute(value=self.np_name(), attr=attr, ctx=gast.Load()),
                         args=args, keywords=[])

    def helper_call(self, name, args):
        return gast.Call(func=load(self.linker.name_for(name, getattr(runtime, name))),
                         args=args, keywords=[])

    def dname(self, var):
        return self.namer.adjoint(var)

    def is_active(self, name):
        return self.act.is_active(name)

    def assign(self, name, value, like=None):
        node = gast.Assign(targets=[store(name)], value=value, type_comment=None)
        node.lineno = getattr(like, "lineno", None)
        return node

    def push(self, name, like):
        node = gast.Expr(value=gast.Call(
            func=gast.Attribute(value=load(self.tape), attr="append", ctx=gast.Load()),
            args=[load(name)], keywords=[]))
        node.lineno = getattr(like, "lineno", None)
        return node

    def pop(self, name, like):
        return self.assign(name, gast.Call(
            func=gast.Attribute(value=load(self.tape), attr="pop", ctx=gast.Load()),
            args=[], keywords=[]), like)

    def prologue(self):
        out = [self.assign(n, const(None)) for n in self.inits]
        if self.uses_tape:
            out.insert(0, self.assign(self.tape, gast.List(elts=[], ctx=gast.Load())))
        return out

    # --- primal sweep

    def primal_block(self, body, defined, in_loop):
        out = []
        for stmt in body:
            if isinstance(stmt, gast.Assign) or is_append(stmt):
                out.extend(self.primal_assign(stmt, defined, in_loop))
                out.extend(self.view_guard(stmt))
            elif isinstance(stmt, gast.If):
                then_defined, else_defined = set(defined), set(defined)
                new = gast.If(test=stmt.test,
                              body=self.primal_block(stmt.body, then_defined, in_loop),
                              orelse=self.primal_block(stmt.orelse, else_defined, in_loop))
                new.lineno = stmt.lineno
                out.append(new)
                defined |= then_defined | else_defined
            elif isinstance(stmt, LOOPS):
                out.extend(self.primal_loop(stmt, defined, in_loop))
            elif not isinstance(stmt, gast.Return):
                out.append(stmt)
        return out

    def primal_assign(self, stmt, defined, in_loop):
        target = target_of(stmt)
        out = []
        if is_setitem(stmt):
            return self.primal_setitem(stmt, target, in_loop)
        if target in self.needed and target in defined and not is_append(stmt) and \
                id(stmt) not in self.reread_at:
            if in_loop and target in self.counters and step_of(stmt, target) is not None:
                # n = n + 1.0 on a whole number is undone exactly: n = n - 1.0
                self.saved[id(stmt)] = _Undo(step_of(stmt, target))
            elif in_loop:
                self.saved[id(stmt)] = None
                out.append(self.push(target, stmt))
            else:
                slot = self.name_for(("slot", id(stmt)), f"_{target.lstrip('_')}_old")
                self.saved[id(stmt)] = slot
                out.append(self.assign(slot, load(target), stmt))
            if target not in self.bound.get(id(stmt), ()) and target not in self.inits:
                self.inits.append(target)     # bound on some paths only: start it as None
        defined.add(target)
        op = self.describe(stmt)
        if op.kind == "stop" and not self.keep_stops:
            value = stmt.value.args[0] if stmt.value.args else const(None)
            out.append(self.assign(target, copy.deepcopy(value), stmt))
        elif op.kind == CALL and self.call_is_active(target, op):
            out.extend(self.primal_call(stmt, op, target, defined, in_loop))
        else:
            out.append(stmt)
        return out

    def restores(self, name) -> bool:
        """Whether the adjoint sweep assigns `name` (restoring an older value of it)."""
        return any(target_of(s) == name and id(s) in self.saved
                   for s in assignments(self.norm.body)) or \
            (name in loop_targets(self.norm.body) and name in self.needed)

    def primal_setitem(self, stmt, target, in_loop):
        """x[i] = v overwrites x[i]: keep the old element if the adjoint sweep reads x."""
        out = []
        if target in self.needed and self.shapes.kind(target) != ARRAY:
            # d[k] = v into a dict may add the key, and an element may be a float
            old = self.helper_call("old_item", [load(target),
                                                index_value(stmt.targets[0].slice)])
        elif target in self.needed:
            old = gast.Call(func=gast.Attribute(value=copy.deepcopy(stmt.targets[0]),
                                                attr="copy", ctx=gast.Load()),
                            args=[], keywords=[])
            old.func.value.ctx = gast.Load()
        if target in self.needed:
            if in_loop:
                self.saved[id(stmt)] = None
                push = self.push(target, stmt)
                push.value.args = [old]
                out.append(push)
            else:
                slot = self.name_for(("slot", id(stmt)), f"_{target.lstrip('_')}_old")
                self.saved[id(stmt)] = slot
                out.append(self.assign(slot, old, stmt))
        return out + [stmt]

    def view_guard(self, stmt):
        """After r = x[...] where x is later written in place: refuse a view, as the write
        would change r behind the adjoint's back. When compiled if the index makes a view
        of an array for sure (a slice, None or ...), else when it runs (`x[i]` is a view
        for an array index i only when i is not an int)."""
        if id(stmt) not in self.read_after_write or not self.is_active(target_of(stmt)):
            return []
        if self.shapes.kind(stmt.value.value.id) == ARRAY and _basic_view(stmt.value.slice):
            raise error_at(stmt, self.fn, _VIEW_WRITTEN)
        check = gast.Expr(value=self.helper_call("not_a_view", [
            load(target_of(stmt)), load(stmt.value.value.id),
            const(f"{self.fn.name} ({self.fn.short_filename}:{stmt.lineno})"),
            const(self.fn.line_text(stmt.lineno))]))
        check.lineno = stmt.lineno
        return [check]


    # --- adjoint sweep

    def adjoint_block(self, body):
        out = []
        for stmt in reversed(body):
            if isinstance(stmt, gast.Assign) or is_append(stmt):
                out.extend(self.adjoint_assign(stmt))
            elif isinstance(stmt, gast.If):
                out.extend(self.adjoint_if(stmt))
            elif isinstance(stmt, LOOPS):
                out.extend(self.adjoint_loop(stmt))
        return out

    def adjoint_assign(self, stmt):
        target = target_of(stmt)
        out = []
        op = self.describe(stmt)
        if op.kind in (APPEND, SETITEM):
            g = self.state.get(target)      # the value lives on: its adjoint is not reset
            self.handoff = None
        else:
            g = self.state.pop(target, None)
            # an adjoint array this code owns can be handed on once: nothing reads it later
            self.handoff = g.id if isinstance(g, gast.Name) and target in self.owned else None
            self.owned.discard(target)
        if isinstance(g, gast.Dict):
            g = self.materialize(target, g)
        if g is not None and self.is_active(target):
            body = (self.call_adjoint(stmt, op, g) if op.kind == CALL
                    else contributions(self, stmt, op, target, g))
            self.reads.update(n.id for s in body for n in nodes(s)
                              if isinstance(n, gast.Name) and n.id in self.primal_names)
            if body:
                out.extend(self.line_comment(stmt))
                out.extend(body)
        out.extend(self.restore(stmt, target, op))
        return out

    def restore(self, stmt, target, op):
        if op.kind == CALL and ("call", id(stmt)) in self.saved:
            saved = self.names[("saved", id(stmt))]
            slot = self.saved.get(id(stmt), False)
            back = [] if slot is False else [self.pop(target, stmt) if slot is None else
                                             self.assign(target, load(slot), stmt)]
            return [self.pop(saved, stmt)] + back
        if op.kind == APPEND:
            if target in self.needed:
                pop = gast.Expr(value=gast.Call(func=gast.Attribute(
                    value=load(target), attr="pop", ctx=gast.Load()), args=[], keywords=[]))
                pop.lineno = stmt.lineno
                return [pop]
            return []
        if id(stmt) not in self.saved:
            return []
        slot = self.saved[id(stmt)]
        if isinstance(slot, _Undo):
            return [self.assign(target, gast.BinOp(left=load(target), op=gast.Sub(),
                                                   right=const(slot.step)), stmt)]
        back = self.pop(target, stmt) if slot is None else self.assign(target, load(slot), stmt)
        if op.kind == SETITEM:
            back.targets = [copy.deepcopy(stmt.targets[0])]
        return [back]

    def line_comment(self, stmt):
        line = getattr(stmt, "lineno", None)
        if line is None or line == self.comment_line:
            return []
        self.comment_line = line
        return [comment(f"line {line}: {self.fn.line_text(line)}")]

    def adjoint_if(self, stmt):
        # the branch taken is replayed if either branch may have adjoint code or restores
        if isinstance(stmt.test, gast.Name) and any(True for _ in assignments([stmt])):
            self.reads.add(stmt.test.id)
        before_state, before_owned = dict(self.state), set(self.owned)
        before_maybe = set(self.maybe_scalar)
        self.depth += 1
        body = self.adjoint_block(stmt.body)
        then_state, then_owned, then_maybe = self.state, self.owned, self.maybe_scalar
        self.state, self.owned = dict(before_state), set(before_owned)
        self.maybe_scalar = set(before_maybe)
        orelse = self.adjoint_block(stmt.orelse)
        self.depth -= 1
        # an adjoint that may be a plain 0.0 on either path may be one after the branch
        self.maybe_scalar |= then_maybe
        self.merge(stmt, (then_state, then_owned, body),
                   (self.state, self.owned, orelse))
        if not body and not orelse:
            return []
        node = gast.If(test=copy.deepcopy(stmt.test), body=body or [gast.Pass()],
                       orelse=orelse)
        node.lineno = stmt.lineno
        return [node]

    # --- the gradient that is returned

    def piece_gradient(self, param):
        value = self.state.get(param)
        if value is None:
            return self.zero(param)
        return _forward_order(value)

    def final_gradient(self, param):
        value = self.state.get(param)
        if value is None:
            if self.shapes.kind(param) != ARRAY:
                return self.helper_call("zeros_tree", [load(param)])
            return self.np_call("zeros_like", [load(param)])
        if isinstance(value, gast.Name) and param not in self.owned \
                and not self.shapes.is_scalar(param):
            # it may be another variable's array (or an argument): return a copy
            if self.shapes.kind(param) == ARRAY:
                return self.np_call("copy", [value])
        return _forward_order(value)


@dataclass(frozen=True)
class _Undo:
    """How the adjoint sweep restores a counter: it subtracts `step` (no tape)."""

    step: float


def _param(name):
    return gast.Name(id=name, ctx=gast.Param(), annotation=None, type_comment=None)


def _forward_order(value):
    """A compile-time dict adjoint lists its keys in the order the source reads them."""
    value = copy.deepcopy(value)
    if isinstance(value, gast.Dict):
        value.keys.reverse()
        value.values.reverse()
    return value


_VIEW_WRITTEN = ("this reads a view of an array that is written in place later, so the "
                 "write would change the value read here; read a copy instead: "
                 "x[...].copy()")


def _basic_view(index) -> bool:
    """Whether indexing with `index` surely gives a view: a slice, None or ... in it."""
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    return any(isinstance(p, gast.Slice) or isinstance(p, gast.Constant) and
               (p.value is None or p.value is Ellipsis) for p in parts)
