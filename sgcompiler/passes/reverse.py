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
from dataclasses import dataclass

import gast
import numpy as np

from .. import runtime
from ..naming import grad_function_name
from .activity import Activity, assignments
from .adjoints import contributions
from .inline import Linker, const, load
from .normalize import Normalized
from .ops import APPEND, CALL, SETITEM, describe_stmt, is_append, is_setitem, target_of
from .shapes import ARRAY, Shapes

COMMENT = "\x00#"     # an Expr(Constant(COMMENT + text)) becomes a comment line in codegen
LOOPS = (gast.For, gast.While)


@dataclass(frozen=True)
class Gradient:
    """The generated gradient function, before it is turned into text."""

    tree: gast.FunctionDef
    linker: Linker          # objects the generated code refers to by name
    wrt: tuple[str, ...]


def comment(text: str):
    return gast.Expr(value=const(COMMENT + text))


def _sweeps(norm, resolution, act, shapes, pieces, seed):
    """Run the reverser twice: once to learn which primal values the adjoint sweep reads,
    then for real, saving exactly those values where they are overwritten."""
    linker = Linker(norm.fn, norm.namer)
    names = {}       # generated names (loop counters, slots), the same in both passes
    first = _Reverser(norm, resolution, act, shapes, linker, frozenset(), names, {}, pieces,
                      seed)
    first.adjoint_block(norm.body)
    sweep = _Reverser(norm, resolution, act, shapes, linker, frozenset(first.reads), names,
                      first.loop_reverses, pieces, seed)
    forward = sweep.primal_block(norm.body, set(norm.params), in_loop=False)
    backward = sweep.adjoint_block(norm.body)
    return sweep, forward, backward


def reverse(norm: Normalized, resolution, act: Activity, shapes: Shapes,
            wrt: tuple[str, ...], pieces=None) -> Gradient:
    """Build `f_grad`, which returns `(result, gradient)` (a tuple of gradients if
    `wrt` has several names). `pieces(fn, active)` gives the forward and backward
    functions of a user function called with active arguments."""
    sweep, forward, backward = _sweeps(norm, resolution, act, shapes, pieces, const(1.0))
    linker = sweep.linker
    grads = [sweep.final_gradient(p) for p in wrt]
    value = grads[0] if len(grads) == 1 else gast.Tuple(elts=grads, ctx=gast.Load())
    ret = gast.Return(value=gast.Tuple(elts=[load(norm.returned), value], ctx=gast.Load()))
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
                  active: tuple[str, ...], names: tuple[str, str], pieces) -> PieceTrees:
    """Build `h_forward(params) -> (result, saved)` and `h_backward(dresult, saved) ->
    (adjoint of each active parameter,)` for a function `h` called from generated code."""
    seed = load(norm.namer.adjoint(norm.returned))
    sweep, forward, backward = _sweeps(norm, resolution, act, shapes, pieces, seed)
    saved_names = sorted(sweep.needed)     # primal values, counters, saved call values
    top = set(norm.params) | {target_of(s) for s in norm.body
                              if isinstance(s, gast.Assign)} | {
        sweep.names[(kind, id(s))] for s in norm.body for kind in ("trips", "saved")
        if (kind, id(s)) in sweep.names}
    for name in saved_names:
        if name not in top and name not in sweep.inits:
            sweep.inits.append(name)
    if sweep.uses_tape:
        saved_names.insert(0, sweep.tape)
    saved = sweep.name_for("saved", "_saved")
    pack = gast.Tuple(elts=[load(n) for n in saved_names], ctx=gast.Load())
    fwd_body = sweep.prologue() + forward + [gast.Return(value=gast.Tuple(
        elts=[load(norm.returned), pack], ctx=gast.Load()))]
    unpack = gast.Assign(targets=[gast.Tuple(elts=[_store(n) for n in saved_names],
                                             ctx=gast.Store())],
                         value=load(saved), type_comment=None)
    grads = [sweep.piece_gradient(p) for p in active]
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


class _Reverser:
    def __init__(self, norm, resolution, act, shapes, linker, needed, names, loop_reverses,
                 pieces, seed):
        self.norm, self.fn = norm, norm.fn
        self.resolution, self.act, self.shapes = resolution, act, shapes
        self.linker, self.namer = linker, norm.namer
        self.needed = needed          # primal names the adjoint sweep reads
        self.names = names
        self.loop_reverses = loop_reverses   # id(loop) -> whether it has adjoint code
        self.pieces = pieces
        self.state = {norm.returned: seed}   # var -> its adjoint's value, if nonzero
        self.owned = set()        # vars whose adjoint is an array this code allocated
        self.reads = set()        # primal names the adjoint sweep reads
        self.saved = {}           # id(statement) -> slot, or TAPE
        self.inits = []           # names to set to None first (saved before defined)
        self.uses_tape = False
        self.primal_names = set(norm.params) | {target_of(s) for s in assignments(norm.body)} \
            | _loop_targets(norm.body) | {n for k, n in names.items() if k[0] == "saved"}
        self.comment_line = None
        self.handoff = None
        self.read_after_write = _reads_after_writes(norm.body)
        self.written_in_place = {target_of(s) for s in assignments(norm.body) if is_setitem(s)}
        self.stable = _stable_names(norm)
        self.maybe_scalar = set()   # adjoints that may hold a plain 0.0 at run time
        self.depth = 0              # how many branches and loops the adjoint sweep is in

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

    def materialize(self, var, value):
        """A state value as a complete run-time value: a compile-time dict of some keys
        becomes {**zeros_tree(params), 'W1': ...}."""
        if isinstance(value, gast.Dict):
            self.reads.add(var)
            return gast.Dict(keys=[None] + list(value.keys), values=[
                self.helper_call("zeros_tree", [load(var)])] + list(value.values))
        return copy.deepcopy(value)

    def zero(self, var):
        """A runtime zero for var's adjoint: 0.0, or a zero tree for a container."""
        if self.shapes.kind(var) == ARRAY:
            self.maybe_scalar.add(var)
            return const(0.0)
        self.reads.add(var)
        return self.helper_call("zeros_tree", [load(var)])

    def assign(self, name, value, like=None):
        node = gast.Assign(targets=[_store(name)], value=value, type_comment=None)
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
        if target in self.needed and target in defined and not is_append(stmt):
            if in_loop:
                self.saved[id(stmt)] = None
                out.append(self.push(target, stmt))
            else:
                slot = self.name_for(("slot", id(stmt)), f"_{target.lstrip('_')}_old")
                self.saved[id(stmt)] = slot
                out.append(self.assign(slot, load(target), stmt))
        defined.add(target)
        op = describe_stmt(stmt, self.resolution, self.fn)
        if op.kind == "stop":
            value = stmt.value.args[0] if stmt.value.args else const(None)
            out.append(self.assign(target, copy.deepcopy(value), stmt))
        elif op.kind == CALL and self.call_is_active(target, op):
            out.extend(self.primal_call(stmt, op, target, defined, in_loop))
        else:
            out.append(stmt)
        return out

    def primal_setitem(self, stmt, target, in_loop):
        """x[i] = v overwrites x[i]: keep the old element if the adjoint sweep reads x."""
        out = []
        if target in self.needed:
            old = gast.Call(func=gast.Attribute(value=copy.deepcopy(stmt.targets[0]),
                                                attr="copy", ctx=gast.Load()),
                            args=[], keywords=[])
            old.func.value.ctx = gast.Load()
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
        """After r = x[...] where x is later written in place: refuse a view (at run time,
        since only then is it known whether x[...] is a view), as the write would change
        r behind the adjoint's back."""
        if id(stmt) not in self.read_after_write or not self.is_active(target_of(stmt)):
            return []
        check = gast.Expr(value=self.helper_call("not_a_view", [
            load(target_of(stmt)), load(stmt.value.value.id),
            const(f"{self.fn.short_filename}:{stmt.lineno}")]))
        check.lineno = stmt.lineno
        return [check]

    def call_is_active(self, target, op):
        return self.is_active(target) and any(self.is_active(n) for _, n in op.inputs)

    def call_piece(self, stmt, op):
        """(forward name, backward name, saved name, active params) of a call site."""
        active = tuple(p for p, n in op.inputs if self.is_active(n))
        piece = self.pieces(op.rule, active)
        fwd = self.linker.name_for(piece.forward_name, piece.forward_cell)
        bwd = self.linker.name_for(piece.backward_name, piece.backward_cell)
        self.linker.pieces.append(piece)
        saved = self.name_for(("saved", id(stmt)), f"_{op.rule.__name__}_saved")
        self.primal_names.add(saved)
        return fwd, bwd, saved, active

    def primal_call(self, stmt, op, target, defined, in_loop):
        """y = h(x) becomes y, _h_saved = h_forward(x): h's values for its adjoint."""
        fwd, _, saved, _ = self.call_piece(stmt, op)
        out = []
        if in_loop and saved in self.needed:
            if saved not in defined and saved not in self.inits:
                self.inits.append(saved)
            self.saved[("call", id(stmt))] = True
            out.append(self.push(saved, stmt))
        defined.add(saved)
        call = copy.deepcopy(stmt.value)
        call.func = load(fwd)
        node = gast.Assign(targets=[gast.Tuple(elts=[_store(target), _store(saved)],
                                               ctx=gast.Store())], value=call,
                           type_comment=None)
        node.lineno = stmt.lineno
        return out + [node]

    def loop_names(self, stmt):
        return (self.name_for(("trips", id(stmt)), "_trips"),
                self.name_for(("iteration", id(stmt)), "_"))

    def loop_var(self, stmt):
        if isinstance(stmt, gast.For) and stmt.target.id in self.needed:
            return stmt.target.id
        return None

    def has_reverse(self, stmt):
        written = {target_of(s) for s in assignments(stmt.body)}
        if isinstance(stmt, gast.For):
            written.add(stmt.target.id)
        return self.loop_reverses.get(id(stmt), False) or bool(written & self.needed)

    def primal_loop(self, stmt, defined, in_loop):
        written = {target_of(s) for s in assignments(stmt.body)}
        if not self.has_reverse(stmt):
            loop = copy.copy(stmt)
            loop.body = self.primal_block(stmt.body, defined | written, in_loop=True)
            defined |= written
            return [loop]
        trips, _ = self.loop_names(stmt)
        out = []
        for name in sorted((written & self.needed) - defined):
            if name not in self.inits:
                self.inits.append(name)
        var = self.loop_var(stmt)
        if var is not None and var in defined:
            self.saved[("loop variable", id(stmt))] = True
            out.append(self.push(var, stmt))
        inner_defined = defined | written
        count = gast.AugAssign(target=_store(trips), op=gast.Add(), value=const(1))
        if var is not None:
            inner_defined.add(var)
        body = [count] + self.primal_block(stmt.body, inner_defined, in_loop=True)
        if var is not None:
            # pushed last in each iteration (and before a break), so it is popped first
            body = _before_breaks(body, self.push(var, stmt)) + [self.push(var, stmt)]
        loop = copy.copy(stmt)
        loop.body = body
        out += [self.assign(trips, const(0), stmt), loop]
        if in_loop:
            out.append(self.push(trips, stmt))
        defined |= inner_defined
        return out

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
        op = describe_stmt(stmt, self.resolution, self.fn)
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
            self.reads.update(n.id for s in body for n in gast.walk(s)
                              if isinstance(n, gast.Name) and n.id in self.primal_names)
            if body:
                out.extend(self.line_comment(stmt))
                out.extend(body)
        out.extend(self.restore(stmt, target, op))
        return out

    def call_adjoint(self, stmt, op, g):
        """dx_h, = h_backward(dy, _h_saved); dx += dx_h"""
        if not self.call_is_active(target_of(stmt), op):
            return []
        _, bwd, saved, active = self.call_piece(stmt, op)
        self.reads.add(saved)
        outs = [self.name_for(("out", id(stmt), p), f"_d{p}_{op.rule.__name__}")
                for p in active]
        call = gast.Call(func=load(bwd), args=[g, load(saved)], keywords=[])
        node = gast.Assign(targets=[gast.Tuple(elts=[_store(o) for o in outs],
                                               ctx=gast.Store())], value=call,
                           type_comment=None)
        node.lineno = stmt.lineno
        body = [node]
        self.handoff = None
        for param, out in zip(active, outs):
            name = op.args[param].id
            body.extend(self.accumulate(name, load(out), stmt))
        return body

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

    def accumulate(self, var, expr, stmt):
        """dvar += expr, as a first write when dvar is still zero."""
        dvar = self.dname(var)
        current = self.state.get(var)
        self.maybe_scalar.discard(var) if current is None else None
        if current is None and (self.is_broadcast_scalar(expr) or
                                isinstance(expr, gast.Constant)):
            self.state[var] = expr       # kept symbolic: consumers use the value itself
            return []
        if not _is_fresh(expr) and any(isinstance(n, gast.Name) and n.id in
                                       self.written_in_place for n in gast.walk(expr)):
            # it may be (a view of) an array the adjoint sweep restores in place
            expr = self.np_call("copy", [expr])
        self.state[var] = load(dvar)
        array = self.shapes.kind(var) == ARRAY
        if current is None:
            handed = isinstance(expr, gast.Name) and expr.id == self.handoff
            if array and (_is_fresh(expr) or handed):
                self.owned.add(var)
                self.handoff = None if handed else self.handoff
            return [self.assign(dvar, expr, stmt)]
        if not array:
            return [self.assign(dvar, self.helper_call("add_trees", [
                self.materialize(var, current), expr]), stmt)]
        if var in self.owned and isinstance(current, gast.Name):
            node = gast.AugAssign(target=_store(dvar), op=gast.Add(), value=expr)
            node.lineno = stmt.lineno
            return [node]
        self.owned.add(var)
        return [self.assign(dvar, gast.BinOp(left=current, op=gast.Add(), right=expr), stmt)]

    def is_broadcast_scalar(self, expr):
        """`unreduce(c, t)`: a constant scalar c broadcast to the shape of t, where t
        never changes (so the expression means the same wherever it is used)."""
        if not (isinstance(expr, gast.Call) and 2 <= len(expr.args) <= 4 and not expr.keywords
                and self.linker.names.get(getattr(expr.func, "id", None)) is runtime.unreduce
                and all(isinstance(a, gast.Constant) and a.value in (None, False)
                        for a in expr.args[2:])):
            return False
        scalar, shape = expr.args[:2]
        return isinstance(shape, gast.Name) and shape.id in self.stable and \
            all(isinstance(n, gast.Constant) or
                (isinstance(n, gast.Name) and (n.id in self.stable or
                                               self.linker.names.get(n.id) is
                                               runtime.reduced_size))
                for n in gast.walk(scalar) if isinstance(n, (gast.Name, gast.Constant)))

    def rule_adjoint(self, op, target, g):
        """(g as a rule should see it, exact): a broadcast scalar is passed to an
        elementwise rule as the scalar itself (exactly right, as long as no unbroadcast
        is dropped on a shape assumption); a possibly-scalar zero is broadcast for rules
        that need g's full shape."""
        if self.is_broadcast_scalar(g):
            if op.rule.elementwise:
                return g.args[0], True
            return g, False
        if isinstance(g, gast.Name) and not op.rule.elementwise and \
                self.namer.variable_of(g.id) in self.maybe_scalar:
            self.reads.add(target)
            return self.np_call("broadcast_to", [g, self.np_call("shape", [load(target)])]), \
                False
        return g, False

    def adjoint_if(self, stmt):
        # the branch taken is replayed if either branch may have adjoint code or restores
        if isinstance(stmt.test, gast.Name) and any(True for _ in assignments([stmt])):
            self.reads.add(stmt.test.id)
        before_state, before_owned = dict(self.state), set(self.owned)
        self.depth += 1
        body = self.adjoint_block(stmt.body)
        then_state, then_owned = self.state, self.owned
        self.state, self.owned = dict(before_state), set(before_owned)
        orelse = self.adjoint_block(stmt.orelse)
        self.depth -= 1
        self.merge(stmt, (then_state, then_owned, body),
                   (self.state, self.owned, orelse))
        if not body and not orelse:
            return []
        node = gast.If(test=copy.deepcopy(stmt.test), body=body or [gast.Pass()],
                       orelse=orelse)
        node.lineno = stmt.lineno
        return [node]

    def merge(self, stmt, *branches):
        """Make every branch leave each adjoint in the same place (a variable, or zero)."""
        merged, owned = {}, set()
        names = sorted(set().union(*(state for state, _, _ in branches)))
        for var in names:
            values = [state.get(var) for state, _, _ in branches]
            first = values[0]
            if all(v is not None for v in values) and \
                    all(gast.dump(v) == gast.dump(first) for v in values):
                merged[var] = first
                if all(var in own for _, own, _ in branches):
                    owned.add(var)
                continue
            dvar = self.dname(var)
            for value, (_, _, block) in zip(values, branches):
                if value is None:
                    block.append(self.assign(dvar, self.zero(var), stmt))
                elif not (isinstance(value, gast.Name) and value.id == dvar):
                    block.append(self.assign(dvar, self.materialize(var, value), stmt))
            merged[var] = load(dvar)
            if all(v is None or var in own for v, (_, own, _) in zip(values, branches)):
                owned.add(var)
        self.state, self.owned = merged, owned

    def adjoint_loop(self, stmt):
        """Run the body's adjoint once per recorded trip, in reverse."""
        trips, iteration = self.loop_names(stmt)
        live = {v for v, value in self.state.items() if value is not None}
        touched = self.loop_adjoint_vars(stmt)
        written = {target_of(s) for s in assignments(stmt.body) if not is_setitem(s)} \
            | _loop_targets([stmt])
        # Accumulators of values the loop does not rebind (weights, inputs, arrays it
        # writes into) get a buffer of their own before the loop, so the body can add into
        # it in place.
        buffers = {v for v in touched - written if self.shapes.kind(v) == ARRAY
                   and not self.shapes.is_scalar(v)}
        # adjoints live across iterations must be variables at the top of every iteration
        while True:
            entry_state, entry_owned = dict(self.state), set(self.owned)
            materialize = []
            for var in sorted(touched & live):
                value = self.state.get(var)
                dvar = self.dname(var)
                keep = var in buffers and var in self.owned and isinstance(value, gast.Name) \
                    and value.id == dvar
                if value is None and var in buffers:
                    materialize.append(self.assign(dvar, self.np_call("zeros_like",
                                                                      [load(var)]), stmt))
                    self.reads.add(var)
                elif value is None:
                    materialize.append(self.assign(dvar, self.zero(var), stmt))
                elif not (isinstance(value, gast.Name) and value.id == dvar):
                    materialize.append(self.assign(dvar, self.materialize(var, value), stmt))
                self.state[var] = load(dvar)
                if var in buffers and (value is None or keep):
                    self.owned.add(var)
                else:
                    self.owned.discard(var)
            top_state, top_owned = dict(self.state), set(self.owned)
            self.comment_line = None
            self.depth += 1
            body = self.adjoint_block(stmt.body)
            self.depth -= 1
            grown = {v for v in touched if self.state.get(v) is not None} - live
            lost = {v for v in top_owned & touched if v not in self.owned or
                    gast.dump(self.state.get(v) or const(0)) != gast.dump(top_state[v])}
            if not grown and not (lost & buffers):
                break
            live |= grown
            buffers -= lost
            self.state, self.owned = entry_state, entry_owned
        for var in sorted(touched & live):
            value = self.state.get(var)
            if not (isinstance(value, gast.Name) and gast.dump(value) == gast.dump(top_state[var])):
                body.append(self.assign(self.dname(var), self.zero(var) if value is None
                                        else self.materialize(var, value), stmt))
            self.state[var] = top_state[var]
            if var not in top_owned:
                self.owned.discard(var)
        for var in touched - live:
            self.state.pop(var, None)
        self.loop_reverses[id(stmt)] = bool(body) or self.loop_reverses.get(id(stmt), False)
        if not self.has_reverse(stmt):
            return []
        self.reads.add(trips)
        var = self.loop_var(stmt)
        head = [self.pop(var, stmt)] if var is not None else []
        loop = gast.For(target=_store(iteration), iter=gast.Call(
            func=load("range"), args=[load(trips)], keywords=[]),
            body=head + body or [gast.Pass()], orelse=[], type_comment=None)
        loop.lineno = stmt.lineno
        out = [self.pop(trips, stmt)] if self.in_loop_depth(stmt) else []
        out += materialize + [loop]
        if ("loop variable", id(stmt)) in self.saved:
            out.append(self.pop(var, stmt))
        return out

    def in_loop_depth(self, stmt):
        return id(stmt) in self.nested_loops()

    def nested_loops(self):
        if not hasattr(self, "_nested"):
            self._nested = set()

            def walk(body, inside):
                for s in body:
                    if isinstance(s, LOOPS):
                        if inside:
                            self._nested.add(id(s))
                        walk(s.body, True)
                    elif isinstance(s, gast.If):
                        walk(s.body, inside)
                        walk(s.orelse, inside)
            walk(self.norm.body, False)
        return self._nested

    def loop_adjoint_vars(self, stmt):
        """Variables whose adjoints the loop body may read or write."""
        names = set()
        for s in assignments(stmt.body):
            op = describe_stmt(s, self.resolution, self.fn)
            for name in [target_of(s)] + [n for _, n in op.inputs]:
                if self.is_active(name):
                    names.add(name)
        return names

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
        if isinstance(value, gast.Name) and param not in self.owned:
            # it may be another variable's array (or an argument): return a copy
            if self.shapes.kind(param) == ARRAY:
                return self.np_call("copy", [value])
        return _forward_order(value)


def _forward_order(value):
    """A compile-time dict adjoint lists its keys in the order the source reads them."""
    value = copy.deepcopy(value)
    if isinstance(value, gast.Dict):
        value.keys.reverse()
        value.values.reverse()
    return value


def _stable_names(norm):
    """Variables assigned once, at the top level of the function (or parameters never
    assigned): their value is the same at every point of the adjoint sweep."""
    counts = {}
    for s in assignments(norm.body):
        counts[target_of(s)] = counts.get(target_of(s), 0) + (2 if is_setitem(s) else 1)
    top = {target_of(s) for s in norm.body if isinstance(s, gast.Assign) and not is_setitem(s)}
    stable = {n for n, c in counts.items() if c == 1 and n in top}
    return stable | {p for p in norm.params if p not in counts}


def _linear(body):
    """Statements in execution order, loop bodies twice (to see one iteration's write
    reach the next iteration's read)."""
    out = []
    for stmt in body:
        if isinstance(stmt, gast.If):
            out += [stmt] + _linear(stmt.body) + _linear(stmt.orelse)
        elif isinstance(stmt, LOOPS):
            out += _linear(stmt.body) * 2
        else:
            out.append(stmt)
    return out


def _reads_after_writes(body):
    """ids of `r = x[...]` whose r is read after x is written in place: if r is a view,
    the write changes it."""
    order = _linear(body)
    found = set()
    for i, stmt in enumerate(order):
        if not (isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.Subscript)
                and isinstance(stmt.value.value, gast.Name) and not is_setitem(stmt)):
            continue
        array, r = stmt.value.value.id, target_of(stmt)
        written = False
        for later in order[i + 1:]:
            if written and any(isinstance(n, gast.Name) and n.id == r
                               and isinstance(n.ctx, gast.Load) for n in gast.walk(later)):
                found.add(id(stmt))
                break
            if isinstance(later, gast.Assign) and not is_setitem(later) and \
                    target_of(later) == r:
                break
            if is_setitem(later) and target_of(later) == array:
                written = True
    return found


def _before_breaks(body, stmt):
    """`body` with a copy of `stmt` before each `break` of this loop."""
    out = []
    for s in body:
        if isinstance(s, gast.Break):
            out.append(copy.deepcopy(stmt))
        elif isinstance(s, gast.If):
            s = copy.copy(s)
            s.body, s.orelse = _before_breaks(s.body, stmt), _before_breaks(s.orelse, stmt)
        out.append(s)
    return out


def _loop_targets(body):
    out = set()
    for stmt in body:
        if isinstance(stmt, gast.For):
            out.add(stmt.target.id)
        for field in ("body", "orelse"):
            if isinstance(stmt, (gast.If, gast.For, gast.While)):
                out |= _loop_targets(getattr(stmt, field))
    return out


def _param(name):
    return gast.Name(id=name, ctx=gast.Param(), annotation=None, type_comment=None)


def _store(name):
    return gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None)


def _is_fresh(expr) -> bool:
    """Whether `expr` evaluates to a new array (or an immutable number) nobody else holds."""
    return isinstance(expr, (gast.BinOp, gast.UnaryOp))
