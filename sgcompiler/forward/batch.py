"""Batched tangents: every tangent carries a leading axis, one row per direction, so the
tangent code runs once for all the basis directions of `hessian` and `jacobian`.

    _mul = x * w          ->   _mul_dot = x_dot * w           (B, n) * (n,): as it is
    _sum = np.sum(e)      ->   _sum_dot = np.sum(e_dot, axis=(1,))
    _mm = X @ w           ->   _mm_dot = w_dot @ X.T          (w 1-D: the batch as rows)
                               _mm_dot = X.T                  (w_dot is still np.eye(n))
    s = a * b  (a (n,), b (m, n))  ->  s_dot = a_dot[:, None, ...] * b
    y[i, 1:] = v                   ->   y_dot[:, i, 1:] = v_dot
    y = h(x)                       ->   y, y_dot = h_jvp(x, x_dot=x_dot)   (h batched too)

Elementwise rules broadcast over the leading axis once a tangent of an operand with fewer
axes than the result gets ones after the batch axis; sums, means, matmul and the linear
runtime helpers of gradient code have batched forms; any other function that is linear in
its tangent arguments maps over the directions (`batch_map`). A write into an array
writes the directions' slot (with ones after the batch axis where the value has fewer
axes), for indexes that are numbers, slices, None, Ellipsis or one array index alone. A
called user function gets a batched tangent function of its own, for any directions
(pipeline.forward_mode.jvp_piece(batch=)). Everything else (appends, explicit rules that
are not elementwise, values whose shape is not known, a called function's own refusals)
raises NotBatchable, and the caller runs one tangent per direction.
"""
from __future__ import annotations

import copy
import operator
import types

import gast
import numpy

from ..analysis.shapes import ARRAY
from ..ir.builders import const, load
from ..reverse.inline import simplify
from .. import runtime
from ..ir.blocks import walk

_MATMUL = (numpy.matmul, operator.matmul)
_SUMS = (numpy.sum, numpy.mean)
_FAST = {runtime.unbroadcast: "batch_unbroadcast", runtime.unreduce: "batch_unreduce"}
_MATMUL_GRADS = {runtime.matmul_grad_left: "batch_matmul_grad_left",
                 runtime.matmul_grad_right: "batch_matmul_grad_right"}


class NotBatchable(Exception):
    """The tangent code cannot carry all directions at once (the caller runs one each)."""


class BatchedRules:
    """The batched tangent of one primitive's result, for the tangent pass `fwd`."""

    def __init__(self, fwd, rules):
        self.fwd, self.rules = fwd, rules

    def rank(self, atom) -> int:
        if isinstance(atom, gast.Constant):
            return 0
        shape = self.fwd.shapes.shape(atom.id) if isinstance(atom, gast.Name) else None
        if shape is None:
            raise NotBatchable(f"the shape of {getattr(atom, 'id', atom)} is not known")
        return len(shape)

    def tangent(self, stmt, op, target, rule, active):
        if rule.kind in ("linear", "multilinear"):
            return self.linear(stmt, op, target, rule, active)
        if rule.full_shape or rule.multiple_results:
            raise NotBatchable(f"{rule.name} has an explicit tangent rule")
        return self.elementwise(op, target, rule, active)

    def elementwise(self, op, target, rule, active):
        """t * D per operand, each t with the result's number of axes after the batch."""
        fwd, values = self.fwd, self.rules.values(rule, op, target)
        rank, terms = self.rank(load(target)), []
        for param, name in active:
            tname = rule.tangent_of(param)
            if tname is None:
                raise NotBatchable(f"no tangent for {param}")
            values[tname] = aligned(load(fwd.tname(name)), self.rank(load(name)), rank)
            index = [t for _, t in rule.tangents].index(tname)
            template = factored(rule.outputs[index], tname)
            terms.append(self.rules.inline(template, values, rule))
        total = _sum(terms)
        total = simplify(total, target, fwd.shapes, fwd.linker, {})
        shape = fwd.shapes.shape(target)
        if any(fwd.shapes.shape(name) != shape for _, name in active):
            total = fwd.helper_call("broadcast_batch", [total, load(target)])
        return total

    def linear(self, stmt, op, target, rule, active):
        primitive = rule.primitive
        if primitive in _MATMUL:
            return _sum([self.matmul(op, rule, p) for p, _ in active])
        if primitive in _SUMS:
            return self.reduction(op, rule, active)
        if primitive is numpy.transpose and set(op.args) == {"a"}:
            rank = self.rank(op.args["a"])
            order = (0,) + tuple(range(rank, 0, -1))     # x.T: every axis but the batch's
            return self.fwd.np_call("transpose", [self.tangent_or_zero(op.args["a"]),
                                                  const(order)])
        if primitive in _FAST and rule.params[0] == active[0][0] and len(active) == 1:
            return self.fast(stmt, _FAST[primitive], op)
        if primitive in _MATMUL_GRADS:
            return _sum([self.fast(stmt, _MATMUL_GRADS[primitive], op)
                         if p == rule.params[0] and self.small(op) else
                         self.mapped(stmt, op, rule, only=p) for p, _ in active])
        if rule.kind == "multilinear":
            return _sum([self.mapped(stmt, op, rule, only=p) for p, _ in active])
        return self.mapped(stmt, op, rule)

    def tangent_or_zero(self, node):
        return self.fwd.tangent(node) or self.fwd.zero(node)

    def matmul(self, op, rule, param):
        """a_dot @ b (any a, b of at most 2 axes); a @ b_dot, b 1-D: b_dot @ a.T."""
        first, second = (op.args[p] for p in rule.params[:2])
        if max(self.rank(first), self.rank(second)) > 2 or \
                min(self.rank(first), self.rank(second)) == 0:
            raise NotBatchable("matmul of stacks or numbers")
        if param == rule.params[0]:
            if self.is_seed(first):             # eye(n) @ b
                return copy.deepcopy(second)
            return _matmul(self.tangent_or_zero(first), copy.deepcopy(second))
        t = self.tangent_or_zero(second)
        if self.is_seed(second):                # (a @ eye(n)) with the batch first
            return copy.deepcopy(first) if self.rank(first) == 1 else \
                gast.Attribute(value=copy.deepcopy(first), attr="T", ctx=gast.Load())
        if self.rank(second) == 2:
            return _matmul(copy.deepcopy(first), t)
        if self.rank(first) == 2:
            return _matmul(t, gast.Attribute(value=copy.deepcopy(first), attr="T",
                                             ctx=gast.Load()))
        return _matmul(t, copy.deepcopy(first))

    def is_seed(self, atom) -> bool:
        """Whether `atom` is a 1-D parameter whose tangent is still the unit directions
        the caller passes (np.eye(n)): then a product with it is the other factor."""
        return isinstance(atom, gast.Name) and atom.id in self.fwd.seeds

    def reduction(self, op, rule, active):
        """np.sum(t, axis) with the axes moved past the batch axis."""
        if set(op.args) - {"a", "axis", "keepdims"} or len(active) != 1:
            raise NotBatchable("a sum with other arguments")
        rank = self.rank(op.args["a"])
        axis = op.args.get("axis", const(None))
        axes = _literal(axis)
        if axes is _NOT_LITERAL:
            raise NotBatchable("an axis that is not a literal")
        if axes is None:
            axes = tuple(range(rank))
        axes = axes if isinstance(axes, tuple) else (axes,)
        moved = tuple(a + 1 if a >= 0 else a for a in axes)
        keywords = [gast.keyword(arg="axis", value=const(moved))]
        if "keepdims" in op.args:
            keywords.append(gast.keyword(arg="keepdims",
                                         value=copy.deepcopy(op.args["keepdims"])))
        name = "sum" if rule.primitive is numpy.sum else "mean"
        call = self.fwd.np_call(name, [self.tangent_or_zero(op.args["a"])])
        call.keywords = keywords
        return call

    def small(self, op):
        return all(self.rank(a) <= 2 for p, a in op.args.items() if p != "g")

    def fast(self, stmt, helper, op):
        """helper(g_dot, <the other arguments as they are>): a batched runtime helper."""
        call = self.plain_call(stmt)
        args = [self.tangent_or_zero(call.args[0])] + copy.deepcopy(call.args[1:])
        return gast.Call(func=load(self.fwd.linker.name_for(helper, getattr(runtime, helper))),
                         args=args, keywords=copy.deepcopy(call.keywords))

    def mapped(self, stmt, op, rule, only=None):
        """batch_map(f, (i, ...), *args): f once per direction, for f linear in the
        arguments at positions i (their tangents; the others as they are)."""
        call = self.plain_call(stmt)
        swapped = {}
        for param, _ in rule.tangents:
            node = op.args.get(param)
            if node is None or only is not None and param != only:
                continue
            if not any(a is node for a in call.args):
                raise NotBatchable(f"a tangent passed by keyword to {rule.name}")
            swapped[id(node)] = self.tangent_or_zero(node)
        positions = tuple(i for i, a in enumerate(call.args) if id(a) in swapped)
        if not positions:
            raise NotBatchable(f"no tangent argument of {rule.name}")
        args = [swapped.get(id(a)) or copy.deepcopy(a) for a in call.args]
        helper = load(self.fwd.linker.name_for("batch_map", runtime.batch_map))
        return gast.Call(func=helper, args=[copy.deepcopy(call.func), const(positions)] + args,
                         keywords=copy.deepcopy(call.keywords))

    def plain_call(self, stmt):
        """The statement's call, when it calls a function (not a method of a value)."""
        call = stmt.value
        if not isinstance(call, gast.Call) or \
                any(isinstance(a, gast.Starred) for a in call.args) or \
                any(k.arg is None for k in call.keywords):
            raise NotBatchable("not a plain call")
        func = call.func
        while isinstance(func, gast.Attribute):
            func = func.value
        if not isinstance(func, gast.Name) or func is not call.func and not isinstance(
                self.fwd.fn.globals.get(func.id), types.ModuleType):
            raise NotBatchable("a method call")
        return call

    def index(self, stmt, base):
        """x[i] -> x_dot[:, i] for an array x (a list's or tuple's tangent is indexed as
        it is: its items are batched)."""
        value, where = stmt.value.value, stmt.value.slice
        shapes = self.fwd.shapes
        if isinstance(value, gast.Name) and shapes.shape(value.id) is None and \
                shapes.kind(value.id) != ARRAY:
            return gast.Subscript(value=base, slice=copy.deepcopy(where), ctx=gast.Load())
        self.rank(value)
        if isinstance(where, gast.Name) and shapes.shape(where.id) is None:
            raise NotBatchable("an index whose kind is not known")
        items = list(where.elts) if isinstance(where, gast.Tuple) else [where]
        full = gast.Slice(lower=None, upper=None, step=None)
        return gast.Subscript(value=base, slice=gast.Tuple(
            elts=[full] + [copy.deepcopy(i) for i in items], ctx=gast.Load()), ctx=gast.Load())

    def setitem(self, stmt, value):
        """x[i] = v -> x_dot[:, i] = v_dot, v_dot with ones after the batch axis where v
        has fewer axes than x[i] (`value`: v's tangent, or 0.0)."""
        target = stmt.targets[0]
        items = list(target.slice.elts) if isinstance(target.slice, gast.Tuple) else \
            [target.slice]
        rank = self.slot_rank(self.rank(target.value), items)
        if not isinstance(value, gast.Constant):
            value = aligned(value, self.rank(stmt.value), rank)
        full = gast.Slice(lower=None, upper=None, step=None)
        where = gast.Subscript(value=load(self.fwd.tname(target.value.id)), slice=gast.Tuple(
            elts=[full] + [copy.deepcopy(i) for i in items], ctx=gast.Load()),
            ctx=gast.Store())
        return gast.copy_location(gast.Assign(targets=[where], value=value,
                                              type_comment=None), stmt)

    def slot_rank(self, rank, items) -> int:
        """The number of axes of x[items], x of `rank` axes: for numbers, slices, None,
        Ellipsis and one array index alone (with numbers beside it NumPy would move the
        indexed axes in front of the batch axis)."""
        shapes, kept, arrays, numbers = self.fwd.shapes, rank, 0, 0
        for item in items:
            if isinstance(item, gast.Slice):
                continue
            if isinstance(item, gast.Constant) and item.value is Ellipsis:
                continue
            if isinstance(item, gast.Constant) and item.value is None:
                kept += 1
            elif isinstance(item, gast.Constant) and type(item.value) is int or \
                    isinstance(item, gast.Name) and shapes.shape(item.id) == ():
                kept, numbers = kept - 1, numbers + 1
            elif isinstance(item, gast.Name) and shapes.shape(item.id) is not None and \
                    isinstance(shapes.dtype(item.id), numpy.dtype) and \
                    shapes.dtype(item.id).kind in "biu":
                shape, arrays = shapes.shape(item.id), arrays + 1
                boolean = shapes.dtype(item.id).kind == "b"
                kept += 1 - len(shape) if boolean else len(shape) - 1
            else:
                raise NotBatchable("an index whose kind is not known")
        if arrays > 1 or arrays and numbers:
            raise NotBatchable("an array index beside other indexes")
        return kept

    def zero(self, atom):
        """Zeros of shape (batch,) + the atom's shape."""
        shape = () if not isinstance(atom, gast.Name) else self.fwd.shapes.shape(atom.id)
        if shape is None:
            raise NotBatchable("the shape of a zero tangent is not known")
        return self.fwd.np_call("zeros", [const((self.fwd.batch,) + tuple(shape))])


def aligned(t, rank, result_rank):
    """t with ones after the batch axis, so that it has `result_rank` axes after it."""
    if rank >= result_rank:
        return t
    full = gast.Slice(lower=None, upper=None, step=None)
    index = [full] + [const(None)] * (result_rank - rank) + [const(Ellipsis)]
    return gast.Subscript(value=t, slice=gast.Tuple(elts=index, ctx=gast.Load()),
                          ctx=gast.Load())


def factored(expr, name):
    """-t * x / y ** 2 -> t * (-x / y ** 2): the batched tangent is multiplied once, by a
    factor of the primal's size (an expression not of that form is left as it is)."""
    found = _factors(expr, name)
    if found is None:
        return expr
    negative, above, below = found
    factor = None
    for f in above:
        factor = f if factor is None else gast.BinOp(left=factor, op=gast.Mult(), right=f)
    for f in below:
        factor = gast.BinOp(left=const(1.0) if factor is None else factor, op=gast.Div(),
                            right=f)
    tangent = gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)
    if factor is None:
        return gast.UnaryOp(op=gast.USub(), operand=tangent) if negative else tangent
    if negative:
        factor = gast.UnaryOp(op=gast.USub(), operand=factor)
    return gast.BinOp(left=tangent, op=gast.Mult(), right=factor)


def _factors(expr, name):
    """(negated, factors, divisors) with expr == +-name * prod(factors) / prod(divisors),
    or None."""
    if isinstance(expr, gast.Name):
        return (False, [], []) if expr.id == name else None
    if isinstance(expr, gast.UnaryOp) and isinstance(expr.op, gast.USub):
        inner = _factors(expr.operand, name)
        return None if inner is None else (not inner[0], inner[1], inner[2])
    if isinstance(expr, gast.BinOp) and isinstance(expr.op, (gast.Mult, gast.Div)):
        left = _mentions(expr.left, name)
        if left == _mentions(expr.right, name) or not left and isinstance(expr.op, gast.Div):
            return None
        inner = _factors(expr.left if left else expr.right, name)
        other = expr.right if left else expr.left
        if inner is None:
            return None
        if isinstance(expr.op, gast.Div):
            return inner[0], inner[1], inner[2] + [other]
        return inner[0], inner[1] + [other], inner[2]
    return None


def _mentions(expr, name) -> bool:
    return any(isinstance(n, gast.Name) and n.id == name for n in walk(expr))


_NOT_LITERAL = object()


def _literal(node):
    if isinstance(node, gast.Constant) and (node.value is None or type(node.value) is int):
        return node.value
    if isinstance(node, gast.Tuple) and all(isinstance(e, gast.Constant) and
                                            type(e.value) is int for e in node.elts):
        return tuple(e.value for e in node.elts)
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub) and \
            isinstance(node.operand, gast.Constant) and type(node.operand.value) is int:
        return -node.operand.value
    return _NOT_LITERAL


def _matmul(a, b):
    return gast.BinOp(left=a, op=gast.MatMult(), right=b)


def _sum(terms):
    total = terms[0]
    for term in terms[1:]:
        total = gast.BinOp(left=total, op=gast.Add(), right=term)
    return total
