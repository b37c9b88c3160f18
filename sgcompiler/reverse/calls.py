"""Calls of user functions in the reverse pass.

    y = h(x)        ->  y, _h_saved = h_forward(x)          (primal sweep)
                        _dx_h, = h_backward(dy, _h_saved)   (adjoint sweep)
                        dx += _dx_h

Each callee's forward/backward pair is compiled once per set of active parameters (see
pipeline.piece); `_h_saved` holds what the backward function needs.

A segment of a checkpointed loop (frontend/forms/checkpoint.py) saves nothing: the primal
sweep calls its plain function, and the adjoint sweep runs its forward again from the
arguments (the state the segment started from, which the sweeps keep as they keep any
value an adjoint reads) to tape its trips, then its backward:

    _h_end = f_segment4(h, W, _first, _last)    (primal sweep, no tape)
    ...
    _f_segment4_tape = f_segment4_forward(h, W, _first, _last)[1]
    dh, _dW_f_segment4 = f_segment4_backward(dh, _f_segment4_tape)
"""
from __future__ import annotations

import copy

import gast
import numpy as np

from ..analysis.shapes import ARRAY
from ..errors import SourceUnavailable, error_at
from ..frontend.forms.checkpoint import is_segment
from ..frontend.source import function_name
from ..rules.registry import runtime_helper_read
from ..ir.builders import comment, load, store
from ..ir.origins import GENERATED
from ..analysis.ops import target_of
from ..analysis.shapes import CONTAINER, EITHER
from ..ir.blocks import walk


class CallSweeps:
    """The user-function-call half of the reverse pass (mixed into its _Reverser)."""

    def call_is_active(self, target, op):
        return self.is_active(target) and any(self.is_active(n) for _, n in op.inputs)

    def call_piece(self, stmt, op):
        """(forward name, backward name, saved name, active params) of a call site (the
        saved name of a segment is the adjoint sweep's, made again there)."""
        active = tuple(p for p, n in op.inputs if self.is_active(n))
        # the shapes and dtypes of array arguments, where the caller knows them
        arrays = tuple((p, *self.shapes.concrete[a.id]) for p, a in op.args.items()
                       if isinstance(a, gast.Name) and a.id in self.shapes.concrete
                       and self.shapes.shape(a.id) != ()
                       and isinstance(self.shapes.dtype(a.id), np.dtype))
        # and of the arrays in a parameter tree the caller passes on as it was given it
        arrays += tuple(((p,) + path[1:], *found) for p, a in op.args.items()
                        if isinstance(a, gast.Name)
                        for path, found in self.shapes.leaves.items() if path[0] == a.id)
        # parameter trees (dicts, lists, tuples) the caller passes: containers there too;
        # so is what may be one (params["layer"], a loop's layer tuple): code for a tree
        # is right for an array too, the other way round it is not. A call's result is
        # taken for an array, except when a runtime helper (read at second order) is
        # passed it: gradient code hands one helper's tuple to the next (the adjoint of
        # lu_factor's (lu, piv), from lu_solve_grad_factor, to lu_factor_grad), or to a
        # generated function (its backward piece's saved values, which may hold dicts)
        helper = runtime_helper_read(op.rule) or getattr(
            getattr(op.rule, "__code__", None), "co_filename", "").startswith(GENERATED)
        trees = frozenset(p for p, a in op.args.items() if isinstance(a, gast.Name) and (
            self.shapes.kind(a.id) == CONTAINER or self.shapes.kind(a.id) == EITHER
            and (helper or a.id not in self.call_results)))
        try:
            piece = self.pieces(op.rule, active, arrays, trees)
        except SourceUnavailable as exc:      # say where it is called, too
            raise error_at(stmt, self.fn, f"calling {op.what}: {exc}") from None
        fwd = self.linker.name_for(piece.forward_name, piece.forward_cell)
        bwd = self.linker.name_for(piece.backward_name, piece.backward_cell)
        self.linker.pieces.append(piece)
        if is_segment(op.rule):
            return fwd, bwd, self.name_for(("retaped", id(stmt)),
                                           f"_{function_name(op.rule)}_tape"), active
        saved = self.name_for(("saved", id(stmt)), f"_{function_name(op.rule)}_saved")
        self.primal_names.add(saved)
        return fwd, bwd, saved, active

    def primal_call(self, stmt, op, target, defined, in_loop):
        """y = h(x) becomes y, _h_saved = h_forward(x): h's values for its adjoint."""
        if is_segment(op.rule):     # saves nothing: its adjoint runs it again
            call = copy.deepcopy(stmt)
            call.value.func = load(self.linker.name_for(function_name(op.rule), op.rule))
            return [call]
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
        node = gast.Assign(targets=[gast.Tuple(elts=[store(target), store(saved)],
                                               ctx=gast.Store())], value=call,
                           type_comment=None)
        node.lineno = stmt.lineno
        return out + [node]

    def call_adjoint(self, stmt, op, g):
        """dx_h, = h_backward(dy, _h_saved); dx += dx_h"""
        if not self.call_is_active(target_of(stmt), op):
            return []
        fwd, bwd, saved, active = self.call_piece(stmt, op)
        body = []
        if is_segment(op.rule):
            body = self._segment_again(stmt, fwd, saved)
        else:
            self.reads.add(saved)
        outs = [self.name_for(("out", id(stmt), p), f"_d{p}_{function_name(op.rule)}")
                for p in active]
        call = gast.Call(func=load(bwd), args=[g, load(saved)], keywords=[])
        node = gast.Assign(targets=[gast.Tuple(elts=[store(o) for o in outs],
                                               ctx=gast.Store())], value=call,
                           type_comment=None)
        node.lineno = stmt.lineno
        body.append(node)
        self.handoff = None
        # the backward of a helper whose adjoint in is a container (zeros_tree's parts are
        # plain 0.0 until written) or may be a plain 0.0 gives a plain 0.0 for what only
        # such a part reaches: an array's first adjoint may be one (a container's parts
        # are read with item_adjoint, which takes a plain 0.0)
        parts_may_be_zero = self.shapes.kind(target_of(stmt)) != ARRAY or \
            target_of(stmt) in self.maybe_scalar
        for param, out in zip(active, outs):
            name = op.args[param].id
            first = self.state.get(name) is None
            body.extend(self.accumulate(name, load(out), stmt))
            if parts_may_be_zero and first and self.shapes.kind(name) == ARRAY:
                self.maybe_scalar.add(name)
        return body

    def _segment_again(self, stmt, fwd, tape) -> list:
        """`_tape = f_segment_forward(args)[1]`: a checkpointed segment's trips run again
        from the state it started with, taped for its backward."""
        if target_of(stmt) in {n.id for n in walk(stmt.value) if isinstance(n, gast.Name)}:
            raise error_at(stmt, self.fn, "internal: a segment's result is one of its "
                                          "arguments")
        call = copy.deepcopy(stmt.value)
        call.func = load(fwd)
        node = gast.Assign(targets=[store(tape)], value=gast.Subscript(
            value=call, slice=gast.Constant(value=1, kind=None), ctx=gast.Load()),
            type_comment=None)
        node.lineno = stmt.lineno
        return [comment("the trips of this segment again, from its first state"), node]

