"""The tangent pass: a function in normal form -> its forward-mode (tangent) function.

    def f(x, w):                    def f_jvp(x, w, x_dot, w_dot):
        z = x * w                       z = x * w
        e = np.exp(z)        ->         z_dot = x_dot * w + x * w_dot
        return e                        e = np.exp(z)
                                        e_dot = z_dot * e
                                        return (e, e_dot)

Each primal statement is followed by the tangent of its result, so nothing is saved and
loops and branches keep their shape: a tangent is carried along with its value. A value
has a tangent when the activity analysis finds it active (varied by a `wrt` argument and
reaching the result); `stop_gradient` and non-differentiable operations give none, and
generate no code. The tangent of a statement comes from the primitive's tangent rule
(rules/derive.py: explicit, linear, or derived from the adjoint rule). A name that has a
tangent but gets a value with none on some path (a loop's `s = 0.0`) gets an explicit
zero there, of its shape. A user function called with active arguments gets a tangent
function of its own (`pipeline.forward_mode.jvp_piece`), called as `y, y_dot = h_jvp(x, x_dot=x_dot)`.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import gast
import numpy

from .. import rules, runtime
from ..errors import SourceUnavailable, error_at
from ..ir.builders import const, load, store
from ..ir.naming import jvp_function_name
from ..analysis.activity import Activity
from ..analysis.complex_kinds import maybe_complex
from ..analysis.ops import (APPEND, CALL, CONTAINER, COPY, INDEX, RULE, STOPPED, describe_stmt,
                            is_append, is_setitem, target_of, assignments)
from ..analysis.shapes import ARRAY, Shapes
from ..analysis.sizes import WEAK
from ..reverse.inline import Linker
from .batch import BatchedRules, NotBatchable
from .rules import TangentRules
from .scales import fold_scales
from ..ir.blocks import walk
from ..ir.origins import is_generated

LOOPS = (gast.For, gast.While)


@dataclass(frozen=True)
class TangentCode:
    """A generated tangent function (a gast tree) and what it refers to."""

    tree: gast.FunctionDef
    linker: Linker
    tangent_params: dict       # wrt parameter -> the name of its tangent parameter


def forward(norm, resolution, act: Activity, shapes: Shapes, wrt, pieces,
            name: str | None = None, named: dict | None = None,
            batch: int | None = None, seeded: bool = True) -> TangentCode:
    """The tangent function of `norm` with respect to the parameters `wrt`: its parameters
    are the function's, then one tangent per `wrt` parameter; it returns (value, tangent).
    `pieces(fn, active, arrays, trees)` gives a called user function's tangent piece;
    `named`, if given, gets the tangent parameters' names first (for a recursive call).
    `batch`: every tangent has a leading axis of that many directions (forward/batch.py),
    and the tangents of the `wrt` parameters are the unit directions (np.eye for 1-D)
    unless not `seeded` (a called function's tangent code: any directions).

    Raises:
        SGCompilerError: for an operation with no tangent rule on an active value.
        NotBatchable: with `batch`, for code whose tangents cannot all run at once.
    """
    fwd = _Forward(norm, resolution, act, shapes, pieces, batch)
    if batch is not None and seeded:    # the caller passes the unit directions (np.eye)
        assigned = {target_of(s) for s in assignments(norm.body)}
        fwd.seeds = frozenset(p for p in wrt if p not in assigned and shapes.shape(p) is not
                              None and len(shapes.shape(p)) == 1)
    tangents = {p: fwd.tname(p) for p in wrt}
    if named is not None:
        named.update(tangents)
    body = []
    for p in norm.params:
        if p not in wrt and fwd.active(p):      # re-assigned later from varied values
            body.append(fwd.assign(fwd.tname(p), fwd.zero(load(p)), None))
    body += fwd.block(norm.body)
    body.append(fwd.returned(norm.returned))
    args = copy.deepcopy(norm.fn.tree.args)
    extra = [gast.Name(id=tangents[p], ctx=gast.Param(), annotation=None, type_comment=None)
             for p in wrt]
    args.args = list(args.args) + extra
    if args.defaults:          # after parameters with defaults, the tangents need one too
        args.defaults = list(args.defaults) + [const(None)] * len(extra)
    tree = gast.FunctionDef(name=name or jvp_function_name(norm.fn.name), args=args,
                            body=body, decorator_list=[], returns=None, type_comment=None)
    if batch is not None:       # each link of an elementwise chain: batch passes
        fold_scales(tree, frozenset(fwd.namer.tangents()), fwd.linker.name_for("np", numpy))
    return TangentCode(tree, fwd.linker, tangents)


class _Forward:
    def __init__(self, norm, resolution, act, shapes, pieces, batch=None):
        self.norm, self.fn, self.resolution = norm, norm.fn, resolution
        self.act, self.shapes, self.pieces = act, shapes, pieces
        self.namer = norm.namer
        self.linker = Linker(norm.fn, norm.namer)
        self.rules = TangentRules(self)
        self.batch = batch          # None, or the number of directions each tangent holds
        self.batched = BatchedRules(self, self.rules) if batch is not None else None
        self.seeds = frozenset()    # 1-D wrt parameters whose tangent is np.eye(batch)
        # arrays written in place (x[i] = v): their tangents must never share memory
        self.written = frozenset(target_of(s) for s in assignments(norm.body)
                                 if is_setitem(s))
        # in complex mode, the names that may hold complex values (complex_kinds.py)
        self.maybe_complex = maybe_complex(norm, resolution, shapes.concrete) \
            if rules.complex_mode() else frozenset()

    # --- names and small builders

    def active(self, name) -> bool:
        return self.act.is_active(name)

    def tname(self, name) -> str:
        return self.namer.tangent(name)

    def tangent(self, atom):
        """The tangent of an atom, or None when it is zero at compile time."""
        if isinstance(atom, gast.Name) and self.active(atom.id):
            return load(self.tname(atom.id))
        return None

    def np_call(self, attr, args):
        func = gast.Attribute(value=load(self.linker.name_for("np", numpy)), attr=attr,
                              ctx=gast.Load())
        return gast.Call(func=func, args=args, keywords=[])

    def helper_call(self, name, args):
        return gast.Call(func=load(self.linker.name_for(name, getattr(runtime, name))),
                         args=args, keywords=[])

    def zero(self, atom):
        """An explicit zero tangent for `atom`, of its shape (only where a name that has a
        tangent gets a value without one)."""
        if self.batched is not None:
            return self.batched.zero(atom)
        if not isinstance(atom, gast.Name) or self.shapes.is_scalar(atom.id):
            return const(0.0)
        # (an array only where its shape is known: a helper's result, zeros_tree(p) in
        # gradient code, may be a parameter tree)
        if self.shapes.kind(atom.id) == ARRAY and self.shapes.shape(atom.id) is not None:
            return self.np_call("zeros_like", [load(atom.id)])
        return self.helper_call("zeros_tangent", [load(atom.id)])

    def assign(self, name, value, like):
        node = gast.Assign(targets=[store(name)], value=value, type_comment=None)
        node.lineno = getattr(like, "lineno", None)
        return node

    # --- blocks

    def block(self, body):
        out = []
        for stmt in body:
            try:
                self.block_statement(stmt, out)
            except NotBatchable as exc:
                raise exc.at(stmt, self.fn) from None
        return out

    def block_statement(self, stmt, out):
        """Append the tangent code of one statement of a block to `out`."""
        if isinstance(stmt, gast.Assign) or is_append(stmt):
            out.extend(self.statement(stmt))
        elif isinstance(stmt, gast.If):
            new = gast.If(test=stmt.test, body=self.block(stmt.body),
                          orelse=self.block(stmt.orelse))
            out.append(gast.copy_location(new, stmt))
        elif isinstance(stmt, LOOPS):
            out.append(self.loop(stmt))
        elif not isinstance(stmt, gast.Return):
            out.append(stmt)

    def loop(self, stmt):
        if isinstance(stmt, gast.For):
            targets = [n.id for n in walk(stmt.target) if isinstance(n, gast.Name)
                       and self.active(n.id)]
            if targets and not _is_range(stmt.iter):
                raise error_at(stmt, self.fn, "forward mode needs the loop to run over "
                               "indexes (for i in range(len(xs)): x = xs[i])")
            # an index that has a tangent elsewhere (restored from a tape, in generated
            # gradient code) gets none from range()
            zeros = [self.assign(self.tname(t), const(0.0) if self.batched is None else
                                 self.zero(load(t)), stmt) for t in targets]
            new = gast.For(target=stmt.target, iter=stmt.iter,
                           body=zeros + self.block(stmt.body),
                           orelse=self.block(stmt.orelse), type_comment=None)
        else:
            new = gast.While(test=stmt.test, body=self.block(stmt.body),
                             orelse=self.block(stmt.orelse))
        return gast.copy_location(new, stmt)

    def returned(self, name):
        tangent = self.tangent(load(name)) or self.zero(load(name))
        return gast.Return(value=gast.Tuple(elts=[load(name), tangent], ctx=gast.Load()))

    # --- statements

    def statement(self, stmt):
        """The primal statement, then the tangent of what it computes."""
        target = target_of(stmt)
        op = describe_stmt(stmt, self.resolution, self.fn)
        if op.kind == STOPPED and stmt.value.args:
            # the identity, with a zero tangent (tangent code is not read again, so the call
            # that tells the compiler so need not stay); copies are folded later
            stmt = gast.copy_location(self.assign(target, copy.deepcopy(stmt.value.args[0]),
                                                  stmt), stmt)
            if not self.active(target):
                return [stmt]
            return [stmt, self.assign(self.tname(target), self.zero(load(target)), stmt)]
        if not self.active(target):
            return [stmt]
        if op.kind == CALL and any(self.active(n) for _, n in op.inputs):
            return [self.call(stmt, op, target)]
        if is_append(stmt):
            return [stmt, self.append(stmt, op)]
        if is_setitem(stmt):
            return [stmt, self.setitem(stmt, op)]
        expr = self.tangent_of(stmt, op, target)
        if expr is None:        # (a number's tangent is 0.0, whatever it is added to later)
            expr = const(0.0) if self.batched is None and _number(stmt.value) else \
                self.zero(load(target))
        elif not _fresh(expr) and (target in self.written or _reads_written(expr, self)):
            # x_dot[i] = ... must not write into y_dot; a value that may be a container
            # (a list's tangent is a list of the items' tangents) is copied as one: np.copy
            # would stack its items, and a batched list's items into the batch axis
            expr = self.np_call("copy", [expr]) if self.shapes.kind(target) == ARRAY else \
                self.helper_call("copied", [expr])
        return [stmt, self.assign(self.tname(target), expr, stmt)]

    def tangent_of(self, stmt, op, target):
        """The tangent expression of a normal-form assignment's result, or None (zero)."""
        if op.kind == COPY:
            return self.tangent(load(op.inputs[0][1]))
        if op.kind == RULE:
            return self.rules.tangent(stmt, op, target)
        if op.kind == INDEX:
            base = self.tangent(stmt.value.value)
            if base is None:
                return None
            if self.batched is not None:
                return self.batched.index(stmt, base)
            container = stmt.value.value
            if isinstance(container, gast.Name) and is_generated(self.fn.filename) and \
                    self.shapes.kind(container.id) != ARRAY and \
                    not any(isinstance(n, gast.Slice) for n in walk(stmt.value.slice)):
                # in gradient code read again, a container's tangent may be a plain 0.0
                # (a helper's zero for a list it got no tangent for): its item is 0.0 then
                return self.helper_call("item_adjoint", [base,
                                                         copy.deepcopy(stmt.value.slice)])
            return gast.Subscript(value=base, slice=copy.deepcopy(stmt.value.slice),
                                  ctx=gast.Load())
        if op.kind == CONTAINER and isinstance(stmt.value, gast.Dict):
            values = [self.tangent(v) for v in stmt.value.values]
            if all(v is None for v in values):
                return None
            values = [v if v is not None else self.zero(a)
                      for v, a in zip(values, stmt.value.values)]
            return gast.Dict(keys=copy.deepcopy(stmt.value.keys), values=values)
        if op.kind == CONTAINER:
            elts = [self.tangent(e) for e in stmt.value.elts]
            if all(e is None for e in elts):
                return None
            elts = [e if e is not None else self.zero(a) for e, a in zip(elts, stmt.value.elts)]
            return type(stmt.value)(elts=elts, ctx=gast.Load())
        return None     # constants, stop_gradient, non-differentiable results

    def setitem(self, stmt, op):
        """x[i] = v: x_dot[i] = v_dot (or 0.0: the old element's tangent is overwritten)."""
        target = stmt.targets[0]
        value = self.tangent(stmt.value) or const(0.0)
        if self.batched is not None:
            return self.batched.setitem(stmt, value)
        where = gast.Subscript(value=load(self.tname(target.value.id)),
                               slice=copy.deepcopy(target.slice), ctx=gast.Store())
        node = gast.Assign(targets=[where], value=value, type_comment=None)
        return gast.copy_location(node, stmt)

    def append(self, stmt, op):
        """L.append(v): L_dot.append(v_dot), or v's zero."""
        value = stmt.value.args[0]
        tangent = self.tangent(value) or self.zero(value)
        lst = stmt.value.func.value.id
        call = gast.Call(func=gast.Attribute(value=load(self.tname(lst)), attr="append",
                                             ctx=gast.Load()), args=[tangent], keywords=[])
        return gast.copy_location(gast.Expr(value=call), stmt)

    def call(self, stmt, op, target):
        """y = h(x) -> y, y_dot = h_jvp(x, x_dot=x_dot): h's tangent piece, for the
        parameters its active arguments are bound to."""
        active = tuple(p for p, n in op.inputs if self.active(n))
        arrays = tuple((p, *self.shapes.concrete[a.id]) for p, a in op.args.items()
                       if isinstance(a, gast.Name) and a.id in self.shapes.concrete
                       and self.shapes.shape(a.id) != ()
                       and isinstance(self.shapes.dtype(a.id), numpy.dtype))
        trees = frozenset(p for p, a in op.args.items() if isinstance(a, gast.Name) and
                          self.shapes.kind(a.id) != ARRAY)
        # (batched code needs every rank: the Python numbers it passes, too)
        numbers = frozenset(p for p, a in op.args.items() if _number(a) or isinstance(
            a, gast.Name) and self.shapes.concrete.get(a.id) == ((), WEAK)) \
            if self.batched is not None else frozenset()
        try:
            piece = self.pieces(op.rule, active, arrays, trees, batch=self.batch,
                                numbers=numbers)
        except SourceUnavailable as exc:      # say where it is called, too
            raise error_at(stmt, self.fn, f"calling {op.what}: {exc}") from None
        self.linker.pieces.append(piece)
        call = copy.deepcopy(stmt.value)
        call.func = load(self.linker.name_for(piece.name, piece.cell))
        call.keywords = list(call.keywords) + [
            gast.keyword(arg=piece.tangent_params[p], value=load(self.tname(op.args[p].id)))
            for p in active]
        node = gast.Assign(targets=[gast.Tuple(elts=[store(target), store(self.tname(target))],
                                               ctx=gast.Store())], value=call,
                           type_comment=None)
        return gast.copy_location(node, stmt)


def _is_range(node) -> bool:
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
        node.func.id == "range"


def _number(expr) -> bool:
    return isinstance(expr, gast.Constant) and type(expr.value) in (int, float)


def _fresh(expr) -> bool:
    """Whether an expression makes a new array (an arithmetic result, zeros, a copy; `.copy()`
    of a dict's tangent too, which np.copy would turn into an object array)."""
    return isinstance(expr, (gast.BinOp, gast.UnaryOp, gast.Constant)) or \
        isinstance(expr, gast.Call) and isinstance(expr.func, gast.Attribute) and \
        expr.func.attr == "copy" and not expr.args and not expr.keywords


def _reads_written(expr, fwd) -> bool:
    written = {fwd.tname(w) for w in fwd.written}
    return any(isinstance(n, gast.Name) and n.id in written for n in walk(expr))
