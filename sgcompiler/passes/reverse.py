"""Reverse mode: the primal sweep, then the adjoint sweep in reverse order.

    e = np.exp(z)              def f_grad(z):
    return np.sum(e)   ->          e = np.exp(z)
                                   result = np.sum(e)
                                   # line 3: return np.sum(e)
                                   de = unreduce(1.0, e, None, False)
                                   # line 2: e = np.exp(z)
                                   dz = de * e
                                   return result, dz

Adjoints are tracked at compile time: an adjoint that was never written is zero and emits
nothing; the first contribution is `dx = ...` and later ones add to it (in place only into
arrays this code allocated). When a variable is overwritten and the adjoint sweep needs its
old value, the primal sweep saves it and the adjoint sweep restores it. Only active
statements (see activity.py) get adjoints. Branches replay the branch taken.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import gast
import numpy as np

from .. import runtime
from ..errors import error_at
from ..naming import grad_function_name
from .activity import Activity, assignments
from .inline import Linker, const, inline, load, simplify
from .normalize import Normalized
from .ops import COPY, INDEX, RULE, describe_op
from .shapes import Shapes

COMMENT = "\x00#"     # an Expr(Constant(COMMENT + text)) becomes a comment line in codegen


@dataclass(frozen=True)
class Gradient:
    """The generated gradient function, before it is turned into text."""

    tree: gast.FunctionDef
    linker: Linker          # objects the generated code refers to by name
    wrt: tuple[str, ...]


def comment(text: str):
    return gast.Expr(value=const(COMMENT + text))


def reverse(norm: Normalized, resolution, act: Activity, shapes: Shapes,
            wrt: tuple[str, ...]) -> Gradient:
    """Build `f_grad`, which returns `(result, gradient)` (a tuple of gradients if
    `wrt` has several names)."""
    linker = Linker(norm.fn, norm.namer)
    first = _Reverser(norm, resolution, act, shapes, linker, needed=frozenset())
    first.adjoint_block(norm.body)
    needed = first.reads
    sweep = _Reverser(norm, resolution, act, shapes, linker, needed=needed)
    forward = sweep.primal_block(norm.body)
    backward = sweep.adjoint_block(norm.body)
    grads = [sweep.final_gradient(p) for p in wrt]
    value = grads[0] if len(grads) == 1 else gast.Tuple(elts=grads, ctx=gast.Load())
    ret = gast.Return(value=gast.Tuple(elts=[load(norm.returned), value], ctx=gast.Load()))
    body = sweep.prologue + [comment("forward")] + forward
    if backward:
        body += [comment("backward")] + backward
    body += sweep.epilogue + [ret]
    tree = gast.FunctionDef(name=grad_function_name(norm.fn.name),
                            args=copy.deepcopy(norm.fn.tree.args), body=body,
                            decorator_list=[], returns=None, type_comment=None,
                            type_params=[])
    return Gradient(tree, linker, tuple(wrt))


class _Reverser:
    def __init__(self, norm, resolution, act, shapes, linker, needed):
        self.norm, self.fn = norm, norm.fn
        self.resolution, self.act, self.shapes = resolution, act, shapes
        self.linker, self.namer = linker, norm.namer
        self.needed = needed
        self.state = {norm.returned: const(1.0)}   # var -> its adjoint's value, if nonzero
        self.owned = set()        # vars whose adjoint is an array this code allocated
        self.reads = set()        # primal names the adjoint sweep reads
        self.saved = {}           # id(statement) -> slot holding the overwritten value
        self.prologue, self.epilogue = [], []
        self.primal_names = set(norm.params) | {
            s.targets[0].id for s in assignments(norm.body)}
        self.comment_line = None
        self.handoff = None

    # --- names

    def np(self):
        return load(self.linker.name_for("np", np))

    def helper(self, name):
        return load(self.linker.name_for(name, getattr(runtime, name)))

    def dname(self, var):
        return self.namer.adjoint(var)

    # --- primal sweep

    def primal_block(self, body, defined=None):
        defined = set(self.norm.params) if defined is None else defined
        out = []
        for stmt in body:
            if isinstance(stmt, gast.Assign):
                out.extend(self.primal_assign(stmt, defined))
            elif isinstance(stmt, gast.If):
                then_defined, else_defined = set(defined), set(defined)
                new = gast.If(test=stmt.test, body=self.primal_block(stmt.body, then_defined),
                              orelse=self.primal_block(stmt.orelse, else_defined))
                new.lineno = stmt.lineno
                out.append(new)
                defined |= then_defined | else_defined
            elif isinstance(stmt, gast.Return):
                continue
            else:
                out.append(stmt)
        return out

    def primal_assign(self, stmt, defined):
        target = stmt.targets[0].id
        out = []
        if target in self.needed and target in defined:
            slot = self.namer.fresh(f"_{target.lstrip('_')}_old")
            self.saved[id(stmt)] = slot
            out.append(_assign(slot, load(target), stmt.lineno))
        defined.add(target)
        op = describe_op(stmt.value, self.resolution, self.fn, stmt)
        if op.kind == "stop":
            value = stmt.value.args[0] if stmt.value.args else const(None)
            out.append(_assign(target, copy.deepcopy(value), stmt.lineno))
        else:
            out.append(stmt)
        return out

    # --- adjoint sweep

    def adjoint_block(self, body):
        out = []
        for stmt in reversed(body):
            if isinstance(stmt, gast.Assign):
                out.extend(self.adjoint_assign(stmt))
            elif isinstance(stmt, gast.If):
                out.extend(self.adjoint_if(stmt))
            elif isinstance(stmt, gast.Return):
                self.reads.add(stmt.value.id)
        return out

    def adjoint_assign(self, stmt):
        target = stmt.targets[0].id
        out = []
        g = self.state.pop(target, None)
        # an adjoint array this code owns can be handed on once: nothing reads it later
        self.handoff = g.id if isinstance(g, gast.Name) and target in self.owned else None
        self.owned.discard(target)
        if g is not None and self.act.is_active(target):
            op = describe_op(stmt.value, self.resolution, self.fn, stmt)
            body = self.contributions(stmt, op, target, g)
            if body:
                out.extend(self.line_comment(stmt))
                out.extend(body)
        slot = self.saved.get(id(stmt))
        if slot is not None:
            out.append(_assign(target, load(slot), stmt.lineno))
        return out

    def line_comment(self, stmt):
        line = getattr(stmt, "lineno", None)
        if line is None or line == self.comment_line:
            return []
        self.comment_line = line
        return [comment(f"line {line}: {self.fn.line_text(line)}")]

    def contributions(self, stmt, op, target, g):
        out = []
        if op.kind == COPY:
            name = op.inputs[0][1]
            if self.act.is_active(name):
                out.extend(self.accumulate(name, copy.deepcopy(g), stmt))
        elif op.kind == RULE:
            for param, name in op.inputs:
                if not self.act.is_active(name):
                    continue
                expr = inline(op.rule, param, op.args, copy.deepcopy(g), target, self.linker)
                expr = simplify(expr, target, self.shapes, self.linker)
                out.extend(self.accumulate(name, expr, stmt))
        elif op.kind == INDEX:
            out.extend(self.index_adjoint(stmt, g))
        self.reads.update(n.id for s in out for n in gast.walk(s)
                          if isinstance(n, gast.Name) and n.id in self.primal_names)
        return out

    def accumulate(self, var, expr, stmt):
        """dvar += expr, as a first write when dvar is still zero."""
        dvar = self.dname(var)
        current = self.state.get(var)
        self.state[var] = load(dvar)
        if current is None:
            if _is_fresh(expr) or (isinstance(expr, gast.Name) and expr.id == self.handoff):
                self.owned.add(var)
                self.handoff = None if isinstance(expr, gast.Name) else self.handoff
            return [_assign(dvar, expr, stmt.lineno)]
        if var in self.owned and isinstance(current, gast.Name):
            node = gast.AugAssign(target=_store(dvar), op=gast.Add(), value=expr)
            node.lineno = stmt.lineno
            return [node]
        self.owned.add(var)
        return [_assign(dvar, gast.BinOp(left=current, op=gast.Add(), right=expr),
                        stmt.lineno)]

    def index_adjoint(self, stmt, g):
        """x[index] read: scatter the adjoint back into a zero array shaped like x."""
        value, index = stmt.value.value, stmt.value.slice
        var = value.id
        if not self.act.is_active(var):
            return []
        dvar = self.dname(var)
        out = []
        if var not in self.state:
            out.append(_assign(dvar, _call(self.np(), "zeros_like", [load(var)]), stmt.lineno))
        elif var not in self.owned or not isinstance(self.state[var], gast.Name):
            zeros = _call(self.np(), "zeros_like", [load(var)])
            out.append(_assign(dvar, gast.BinOp(left=self.state[var], op=gast.Add(),
                                                right=zeros), stmt.lineno))
        self.state[var] = load(dvar)
        self.owned.add(var)
        if _is_basic_index(index):
            target = gast.Subscript(value=load(dvar), slice=copy.deepcopy(index),
                                    ctx=gast.Store())
            node = gast.AugAssign(target=target, op=gast.Add(), value=g)
        else:
            node = gast.Expr(value=gast.Call(
                func=gast.Attribute(value=gast.Attribute(value=self.np(), attr="add",
                                                         ctx=gast.Load()),
                                    attr="at", ctx=gast.Load()),
                args=[load(dvar), _index_value(index), g], keywords=[]))
        node.lineno = stmt.lineno
        out.append(node)
        return out

    def adjoint_if(self, stmt):
        self.reads.add(stmt.test.id) if isinstance(stmt.test, gast.Name) else None
        before_state, before_owned = dict(self.state), set(self.owned)
        body = self.adjoint_block(stmt.body)
        then_state, then_owned = self.state, self.owned
        self.state, self.owned = dict(before_state), set(before_owned)
        orelse = self.adjoint_block(stmt.orelse)
        self.merge(stmt, then_state, then_owned, body, orelse)
        if not body and not orelse:
            return []
        node = gast.If(test=copy.deepcopy(stmt.test), body=body or [gast.Pass()],
                       orelse=orelse)
        node.lineno = stmt.lineno
        return [node]

    def merge(self, stmt, then_state, then_owned, body, orelse):
        """Make both branches leave each adjoint in the same place (a variable, or zero)."""
        else_state, else_owned = self.state, self.owned
        merged, owned = {}, set()
        for var in sorted(set(then_state) | set(else_state)):
            a, b = then_state.get(var), else_state.get(var)
            if a is not None and b is not None and gast.dump(a) == gast.dump(b):
                merged[var] = a
                if var in then_owned and var in else_owned:
                    owned.add(var)
                continue
            dvar = self.dname(var)
            for value, block in ((a, body), (b, orelse)):
                if value is None:
                    block.append(_assign(dvar, const(0.0), stmt.lineno))
                elif not (isinstance(value, gast.Name) and value.id == dvar):
                    block.append(_assign(dvar, copy.deepcopy(value), stmt.lineno))
            merged[var] = load(dvar)
            if (a is None or var in then_owned) and (b is None or var in else_owned):
                owned.add(var)
        self.state, self.owned = merged, owned

    # --- the gradient that is returned

    def final_gradient(self, param):
        value = self.state.get(param)
        if value is None:
            return _call(self.np(), "zeros_like", [load(param)])
        if isinstance(value, gast.Name) and param not in self.owned:
            # it may be another variable's array (or an argument): return a copy
            return _call(self.np(), "copy", [value])
        return copy.deepcopy(value)


def _assign(name, value, lineno=None):
    node = gast.Assign(targets=[_store(name)], value=value, type_comment=None)
    node.lineno = lineno
    return node


def _store(name):
    return gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None)


def _call(obj, attr, args):
    return gast.Call(func=gast.Attribute(value=obj, attr=attr, ctx=gast.Load()), args=args,
                     keywords=[])


def _is_fresh(expr) -> bool:
    """Whether `expr` evaluates to a new array (or an immutable number) nobody else holds."""
    return isinstance(expr, (gast.BinOp, gast.UnaryOp))


def _is_basic_index(index) -> bool:
    """An index that selects each element at most once: slices, integer constants, None."""
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    for part in parts:
        if isinstance(part, gast.Slice):
            continue
        if isinstance(part, gast.Constant) and (part.value is None or part.value is Ellipsis
                                                or type(part.value) is int):
            continue
        return False
    return True


def _index_value(index):
    """The index as a value to pass to np.add.at (slices spelled with slice())."""
    if isinstance(index, gast.Tuple):
        return gast.Tuple(elts=[_index_value(e) for e in index.elts], ctx=gast.Load())
    if isinstance(index, gast.Slice):
        parts = [p if p is not None else const(None) for p in (index.lower, index.upper,
                                                               index.step)]
        return gast.Call(func=load("slice"), args=copy.deepcopy(parts), keywords=[])
    return copy.deepcopy(index)


__all__ = ["Gradient", "reverse", "COMMENT", "error_at"]
