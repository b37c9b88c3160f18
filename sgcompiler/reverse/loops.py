"""Loops in the reverse pass: the primal loop counts its trips (and saves what its body
overwrites), the adjoint loop runs the reversed body that many times.

    for t in range(n):              _trips = 0
        h = np.tanh(W @ h)    ->    for t in range(n):
                                        _trips += 1
                                        _tape.append(h)
                                        h = np.tanh(W @ h)
                                    ...
                                    for _ in range(_trips):
                                        dh ... ; h = _tape.pop()

Adjoints that live across iterations are made variables at the top of each iteration;
accumulators of values the loop does not rebind get a buffer before the loop.
"""
from __future__ import annotations

import copy

import gast

from ..analysis.activity import assignments
from ..ir.builders import const, load, store
from ..frontend.lower import before_breaks, jumps
from ..analysis.ops import is_setitem, target_of
from ..analysis.shapes import ARRAY
from ..ir.blocks import walk

LOOPS = (gast.For, gast.While)


class LoopSweeps:
    """The loop half of the reverse pass (mixed into its _Reverser)."""

    def loop_names(self, stmt):
        return (self.name_for(("trips", id(stmt)), "_trips"),
                self.name_for(("iteration", id(stmt)), "_"))

    def loop_var(self, stmt):
        if isinstance(stmt, gast.For) and stmt.target.id in self.needed:
            return stmt.target.id
        return None

    def has_reverse(self, stmt):
        """Whether the adjoint sweep replays this loop: it has adjoint code, or it (or a
        loop inside it) overwrites a value the adjoint sweep reads."""
        written = {target_of(s) for s in assignments(stmt.body)} | loop_targets([stmt])
        return self.loop_reverses.get(id(stmt), False) or bool(written & self.needed) or \
            any(self.has_reverse(inner) for inner in _inner_loops(stmt.body))

    def primal_loop(self, stmt, defined, in_loop):
        written = {target_of(s) for s in assignments(stmt.body)}
        if not self.has_reverse(stmt):
            loop = copy.copy(stmt)
            # (a loop whose statements the gradient does not need keeps its trips, for
            # its variable's last value: `for j in range(2): c = stop_gradient(x)`)
            loop.body = self.primal_block(stmt.body, defined | written, in_loop=True) or \
                [gast.Pass()]
            defined |= written
            return [loop]
        trips, _ = self.loop_names(stmt)
        out = []
        # (a name read again is never restored, so it needs no None first)
        reread = {v for found in self.rereads.values() for v in found}
        for name in sorted((written & self.needed) - defined - reread):
            if name not in self.inits:
                self.inits.append(name)
        var = self.loop_var(stmt)
        if var is not None and var in defined:
            self.saved[("loop variable", id(stmt))] = True
            out.append(self.push(var, stmt))
            if var not in self.bound.get(id(stmt), ()) and var not in self.inits:
                self.inits.append(var)        # bound on some paths only: start it as None
        inner_defined = defined | written
        count = gast.AugAssign(target=store(trips), op=gast.Add(), value=const(1))
        if var is not None:
            inner_defined.add(var)
        if self.condition_loop(stmt):
            # while c: only the trips that ran the body are counted and replayed; the
            # condition of each trip is not recorded (it held on all of them)
            *head, test = stmt.body
            body = self.primal_block(head, inner_defined, in_loop=True)
            branch = copy.copy(test)
            branch.body = [count] + self.primal_block(test.body, inner_defined, in_loop=True)
            body.append(branch)
        else:
            body = [count] + self.primal_block(stmt.body, inner_defined, in_loop=True)
        if var is not None:
            # pushed last in each iteration (and before a break), so it is popped first
            body = before_breaks(body, lambda brk: self.push(var, stmt)) + \
                [self.push(var, stmt)]
        loop = copy.copy(stmt)
        loop.body = body
        out += [self.assign(trips, const(0), stmt), loop]
        if in_loop:
            out.append(self.push(trips, stmt))
        defined |= inner_defined
        return out

    def condition_loop(self, stmt) -> bool:
        """`while True: <test statements>; if c: body else: break` (how `while c:` is
        lowered) with no other break out of the body, and test statements that compute
        only the test: then every recorded trip ran the body."""
        if not (isinstance(stmt, gast.While) and stmt.body
                and isinstance(stmt.body[-1], gast.If)):
            return False
        *head, test = stmt.body
        if not (len(test.orelse) == 1 and isinstance(test.orelse[0], gast.Break)) \
                or jumps(test.body, (gast.Break,)):
            return False
        temps = {target_of(s) for s in head if isinstance(s, gast.Assign)}
        if len(temps) != len(head) or any(self.is_active(t) for t in temps):
            return False
        elsewhere = [s for s in self.norm.body if s is not stmt] + test.body
        return not any(isinstance(n, gast.Name) and n.id in temps
                       for s in elsewhere for n in walk(s))

    def loop_body(self, stmt):
        """The statements whose adjoint the adjoint loop runs each trip."""
        return stmt.body[-1].body if self.condition_loop(stmt) else stmt.body

    def adjoint_loop(self, stmt):
        """Run the body's adjoint once per recorded trip, in reverse."""
        trips, iteration = self.loop_names(stmt)
        before = dict(self.state), set(self.owned), set(self.maybe_scalar)
        live = {v for v, value in self.state.items() if value is not None}
        touched = self.loop_adjoint_vars(stmt)
        buffers = self._loop_buffers(stmt, touched)
        # adjoints live across iterations must be variables at the top of every iteration;
        # until the body's adjoint agrees with what its top assumed, try again
        ends_zero = set()     # adjoints an iteration leaves as a plain 0.0 for the next
        while True:
            entry = dict(self.state), set(self.owned), set(self.maybe_scalar)
            self.maybe_scalar |= ends_zero
            materialize = [s for var in sorted(touched & live)
                           for s in self._enter_loop(var, buffers, stmt)]
            scalar_at_top = set(self.maybe_scalar)
            top_state, top_owned = dict(self.state), set(self.owned)
            self.comment_line = None
            self.depth += 1
            body = self.adjoint_block(self.loop_body(stmt))
            self.depth -= 1
            grown = {v for v in touched if self.state.get(v) is not None} - live
            lost = {v for v in top_owned & touched if v not in self.owned or
                    gast.dump(self.state.get(v) or const(0)) != gast.dump(top_state[v])}
            # (None: no adjoint left; in maybe_scalar: a plain 0.0 assigned, dx = 0.0,
            # which the next trip reads, dx[0], where its top assumed an array)
            zeroed = {v for v in touched & live if self.state.get(v) is None and
                      self.shapes.kind(v) == ARRAY} - ends_zero
            zeroed |= {v for v in (self.maybe_scalar & touched & live) - scalar_at_top
                       if not self.shapes.is_scalar(v)}      # (a number's 0.0 is its zero)
            if not grown and not (lost & buffers) and not zeroed:
                break
            live |= grown
            buffers -= lost
            ends_zero |= zeroed
            self.state, self.owned, self.maybe_scalar = entry
        body += self._leave_loop(touched, live, top_state, top_owned, stmt)
        self.loop_reverses[id(stmt)] = bool(body) or self.loop_reverses.get(id(stmt), False)
        if not self.has_reverse(stmt):
            # no adjoint code and nothing to restore: the loop is not replayed, and the
            # adjoints stay as they were before it
            self.state, self.owned, self.maybe_scalar = before
            return []
        return self._replayed(stmt, trips, iteration, body, materialize)

    def _loop_buffers(self, stmt, touched) -> set:
        """Accumulators of values the loop does not rebind (weights, inputs, arrays it
        writes into): they get a buffer of their own before the loop, so the body can add
        into it in place."""
        written = {target_of(s) for s in assignments(self.loop_body(stmt))
                   if not is_setitem(s)} | loop_targets([stmt])
        return {v for v in touched - written if self.shapes.kind(v) == ARRAY
                and not self.shapes.is_scalar(v)}

    def _enter_loop(self, var, buffers, stmt) -> list:
        """Make `var`'s adjoint a variable (`dvar`) at the top of the loop: the statements
        that do so before it, if any."""
        value = self.state.get(var)
        dvar = self.dname(var)
        out = []
        keep = var in buffers and var in self.owned and isinstance(value, gast.Name) \
            and value.id == dvar and var not in self.maybe_scalar
        if var in buffers and not keep and isinstance(value, gast.Name) and value.id == dvar:
            # it may be shared, or a plain 0.0: give the loop an array of its own
            out.append(self.assign(dvar, gast.BinOp(
                left=load(dvar), op=gast.Add(),
                right=self.np_call("zeros_like", [load(var)])), stmt))
            self.reads.add(var)
            self.maybe_scalar.discard(var)
            keep = True
        elif value is None and var in buffers:
            out.append(self.assign(dvar, self.np_call("zeros_like", [load(var)]), stmt))
            self.reads.add(var)
        elif value is None:
            out.append(self.assign(dvar, self.zero(var), stmt))
        elif not (isinstance(value, gast.Name) and value.id == dvar):
            out.append(self.assign(dvar, self.materialize(var, value), stmt))
        self.state[var] = load(dvar)
        if var in buffers and (value is None or keep):
            self.owned.add(var)
        else:
            self.owned.discard(var)
        return out

    def _leave_loop(self, touched, live, top_state, top_owned, stmt) -> list:
        """The statements at the end of the body that put each live adjoint back into its
        variable, as the top of the next trip expects it."""
        out = []
        for var in sorted(touched & live):
            value = self.state.get(var)
            if not (isinstance(value, gast.Name) and
                    gast.dump(value) == gast.dump(top_state[var])):
                out.append(self.assign(self.dname(var), self.zero(var) if value is None
                                       else self.materialize(var, value), stmt))
            self.state[var] = top_state[var]
            if var not in top_owned:
                self.owned.discard(var)
        for var in touched - live:
            self.state.pop(var, None)
        return out

    def _replayed(self, stmt, trips, iteration, body, materialize) -> list:
        """`for _i in range(trips): body`, after what makes the adjoints variables."""
        self.reads.add(trips)
        var = self.loop_var(stmt)
        head = [self.pop(var, stmt)] if var is not None else []
        for v, (x, _) in sorted(self.rereads.get(id(stmt), {}).items()):
            if v in self.reads or v in self.needed:
                # v = x[t] of the trip this one replays: t = _trips - 1 - _
                last = gast.BinOp(left=load(trips), op=gast.Sub(), right=const(1))
                head.append(self.assign(v, gast.Subscript(
                    value=load(x), slice=gast.BinOp(left=last, op=gast.Sub(),
                                                    right=load(iteration)),
                    ctx=gast.Load()), stmt))
                self.reads.add(x)
        loop = gast.For(target=store(iteration), iter=gast.Call(
            func=load("range"), args=[load(trips)], keywords=[]),
            body=head + body or [gast.Pass()], orelse=[], type_comment=None)
        loop.lineno = stmt.lineno
        out = [self.pop(trips, stmt)] if self.in_loop_depth(stmt) else []
        out += materialize + [loop]
        if ("loop variable", id(stmt)) in self.saved:
            out.append(self.pop(var, stmt))
        return out

    def in_loop_depth(self, stmt):
        return id(stmt) in self.nested

    def loop_adjoint_vars(self, stmt):
        """Variables whose adjoints the loop body may read or write."""
        names = set()
        for s in assignments(self.loop_body(stmt)):
            op = self.describe(s)
            for name in [target_of(s)] + [n for _, n in op.inputs]:
                if self.is_active(name):
                    names.add(name)
        return names


def _inner_loops(body):
    """The loops directly inside `body` (through branches, not through other loops)."""
    for s in body:
        if isinstance(s, LOOPS):
            yield s
        elif isinstance(s, gast.If):
            yield from _inner_loops(s.body)
            yield from _inner_loops(s.orelse)


def loop_targets(body):
    out = set()
    for stmt in body:
        if isinstance(stmt, gast.For):
            out.add(stmt.target.id)
        for field in ("body", "orelse"):
            if isinstance(stmt, (gast.If, gast.For, gast.While)):
                out |= loop_targets(getattr(stmt, field))
    return out
