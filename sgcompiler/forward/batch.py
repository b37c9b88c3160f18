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

from ..analysis.shapes import ARRAY, CONTAINER
from ..errors import describe
from ..ir.builders import const, load
from ..reverse.inline import clone, simplify, substituted, with_names
from .. import runtime
from ..rules.registry import batched_helper, is_batchable
from ..ir.blocks import walk

_MATMUL = (numpy.matmul, operator.matmul, numpy.dot)     # (np.dot: of 1 or 2 axes only)
_EINSUM_OPERANDS = tuple(f"x{k}" for k in range(8))
_EINSUM_LETTERS = "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA"
_COPIES = (numpy.copy,)       # a copy of the batched tangent is the batched copy
_SUMS = (numpy.sum, numpy.mean)
_FAST = {runtime.unbroadcast: "batch_unbroadcast", runtime.unreduce: "batch_unreduce",
         runtime.copied: "copied"}      # (a copy of the batched tangent is its copy)
# the batched helpers of matmul's gradient helpers, for the tangent of each argument they
# are linear in (by position: g, x, y); each runs one direction at a time for stacks
# (np.dot's helpers: the same for operands of 1 or 2 axes, and they are passed for others)
_LEFT = {0: "batch_matmul_grad_left", 2: "batch_matmul_grad_left_y"}
_RIGHT = {0: "batch_matmul_grad_right", 1: "batch_matmul_grad_right_x"}
_MATMUL_GRADS = {runtime.matmul_grad_left: _LEFT, runtime.matmul_grad_right: _RIGHT,
                 runtime.dot_grad_left: _LEFT, runtime.dot_grad_right: _RIGHT}
# linear functions whose batched forms below read the tangent as an array with the batch
# axis first (a list's tangent is a list of batched items: they map over the directions)
_ARRAY_READERS = frozenset(_MATMUL + _SUMS + _COPIES + tuple(_MATMUL_GRADS)
                           + (numpy.ravel, numpy.transpose))


class NotBatchable(Exception):
    """The tangent code cannot carry all directions at once (the caller runs one each).
    `located`: the reason with the line it was found at (the user's, in generated code);
    `repeated`: raised again for code refused before (the reason was given then)."""

    def __init__(self, reason, repeated=False):
        super().__init__(reason)
        self.located, self.repeated = None, repeated

    def at(self, node, fn):
        """The exception, located at `node` of `fn` unless it is located already."""
        if self.located is None:
            self.located = describe(fn, node, str(self))
        return self


class PerColumnWarning(UserWarning):
    """hessian or jacobian(mode="fwd") runs one jvp per column (the same values, slower),
    since its tangents cannot all run at once; said once per compiled code."""


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

    def known_rank(self, atom):
        """The number of axes of an atom, or None when its shape is not known."""
        try:
            return self.rank(atom)
        except NotBatchable:
            return None

    def tangent(self, stmt, op, target, rule, active):
        lists = {self.fwd.tname(n) for _, n in active
                 if self.fwd.shapes.kind(n) == CONTAINER}
        if lists and (rule.primitive in _ARRAY_READERS or _takes_arrays(rule) and
                      rule.kind != "linear"):
            # a list's batched tangent is a list of batched items, not an array with the
            # batch axis first (np.sum or np.prod of it took the items for directions):
            # what reads it as an array reads batch_array(t), its items stacked after
            # the batch axis (a function mapped over the directions takes the list)
            return _reading_as_arrays(self._tangent(stmt, op, target, rule, active),
                                      lists, self.fwd.linker)
        return self._tangent(stmt, op, target, rule, active)

    def _tangent(self, stmt, op, target, rule, active):
        if rule.kind in ("linear", "multilinear"):
            return self.linear(stmt, op, target, rule, active)
        if rule.full_shape or rule.multiple_results:
            return self.explicit(op, target, rule, active)
        return self.elementwise(op, target, rule, active)

    def explicit(self, op, target, rule, active):
        """An explicit tangent rule declared batchable (rules/registry.batchable), or a
        reduction's derived one (np.sum(t * D, axis)), with the helpers it calls that
        have batched forms called as them; the result checked at run time to have the
        batch axis (batch_checked: else the caller runs one jvp per column)."""
        derived = rule.kind == "derived" and not rule.multiple_results
        if not (derived or is_batchable(rule.primitive)):
            raise NotBatchable(f"{rule.name} has an explicit tangent rule")
        fwd, namespace = self.fwd, dict(rule.namespace)
        tangents = frozenset(t for _, t in rule.tangents)
        values = self.rules.values(rule, op, target)
        for param, name in active:
            tname = rule.tangent_of(param)
            if tname is None:
                raise NotBatchable(f"no tangent for {param}")
            values[tname] = load(fwd.tname(name))
        if rule.multiple_results:
            outs = [_batched_calls(o, namespace, tangents) for o in rule.outputs]
            template = outs[0] if len(outs) == 1 else gast.Tuple(elts=outs, ctx=gast.Load())
            total = substituted(template, values, namespace, fwd.linker)
        else:
            names = [t for _, t in rule.tangents]
            total = _sum([substituted(_batched_calls(rule.outputs[names.index(
                rule.tangent_of(p))], namespace, tangents), values, namespace, fwd.linker)
                for p, _ in active])
        return fwd.helper_call("batch_checked", [total, load(target), const(fwd.batch)])

    def elementwise(self, op, target, rule, active):
        """t * D per operand, each t with the result's number of axes after the batch
        (where a shape is not known, batch_lifted works them out at run time)."""
        fwd, values = self.fwd, self.rules.values(rule, op, target)
        rank, terms = self.known_rank(load(target)), []
        for param, name in active:
            tname = rule.tangent_of(param)
            if tname is None:
                raise NotBatchable(f"no tangent for {param}")
            own, t = self.known_rank(load(name)), load(fwd.tname(name))
            if rank is not None and own is not None:
                t = aligned(t, own, rank)
            elif not fwd.shapes.same(name, target):
                t = fwd.helper_call("batch_lifted", [t, load(target)])
            values[tname] = t
            index = [t for _, t in rule.tangents].index(tname)
            template = factored(rule.outputs[index], tname)
            terms.append(self.rules.inline(template, values, rule))
        total = _sum(terms)
        total = simplify(total, target, fwd.shapes, fwd.linker, {})
        shape = fwd.shapes.shape(target)
        if any(fwd.shapes.shape(name) != shape if shape is not None else
               not fwd.shapes.same(name, target) for _, name in active):
            total = fwd.helper_call("broadcast_batch", [total, load(target)])
        return total

    def linear(self, stmt, op, target, rule, active):
        primitive = rule.primitive
        if primitive in _MATMUL:
            return _sum([self.matmul(op, rule, p) for p, _ in active])
        if primitive in _SUMS:
            return self.reduction(op, rule, active)
        if primitive in _COPIES and len(active) == 1 and active[0][0] == rule.params[0] \
                and set(op.args) == {rule.params[0]}:
            return self.fwd.np_call("copy", [self.tangent_or_zero(op.args[rule.params[0]])])
        if primitive is numpy.ravel and set(op.args) == {"a"}:
            return self.fwd.np_call("reshape", [self.tangent_or_zero(op.args["a"]),
                                                const((self.fwd.batch, -1))])
        if primitive is numpy.transpose and set(op.args) == {"a"} and \
                self.known_rank(op.args["a"]) is None:
            return self.fwd.helper_call("batch_transposed",
                                        [self.tangent_or_zero(op.args["a"])])
        if primitive is numpy.transpose and set(op.args) == {"a"}:
            rank = self.rank(op.args["a"])
            order = (0,) + tuple(range(rank, 0, -1))     # x.T: every axis but the batch's
            return self.fwd.np_call("transpose", [self.tangent_or_zero(op.args["a"]),
                                                  const(order)])
        if primitive in _FAST and rule.params[0] == active[0][0] and len(active) == 1:
            return self.fast(stmt, _FAST[primitive], op)
        if primitive in _MATMUL_GRADS:
            helpers = _MATMUL_GRADS[primitive]
            return _sum([self.product_grad(stmt, helpers[rule.params.index(p)], op, rule, p)
                         if rule.params.index(p) in helpers else
                         self.mapped(stmt, op, rule, only=p) for p, _ in active])
        if primitive is numpy.einsum:
            terms = [self.einsum(op, p) for p, _ in active]
            if all(t is not None for t in terms):
                return _sum(terms)
        if rule.kind == "multilinear":
            return _sum([self.mapped(stmt, op, rule, only=p) for p, _ in active])
        return self.mapped(stmt, op, rule)

    def einsum(self, op, param):
        """np.einsum('ij,jk->ik', a, b) along a: np.einsum('zij,jk->zik', a_dot, b), the
        directions one more index of that operand and of the output (an implicit output
        written out: '...' first, then the indices used once, sorted); None for
        subscripts that are not a literal string (index lists) or other arguments."""
        spec = op.args.get("subscripts")
        operands = [p for p in _EINSUM_OPERANDS if p in op.args]
        if not (isinstance(spec, gast.Constant) and isinstance(spec.value, str)) or \
                set(op.args) - {"subscripts", "optimize", *operands}:
            return None
        text = spec.value.replace(" ", "")
        inputs, arrow, output = text.partition("->")
        inputs = inputs.split(",")
        if len(inputs) != len(operands) or param not in operands:
            return None
        if not arrow:
            letters = "".join(inputs).replace("...", "")
            output = ("..." if "..." in text else "") + "".join(
                sorted(c for c in set(letters) if letters.count(c) == 1))
        batch = next(c for c in _EINSUM_LETTERS if c not in text)
        k = operands.index(param)
        batched = ",".join(batch + s if i == k else s for i, s in enumerate(inputs)) + \
            "->" + batch + output
        args = [const(batched)] + [self.tangent_or_zero(op.args[p]) if p == param else
                                   copy.deepcopy(op.args[p]) for p in operands]
        call = self.fwd.np_call("einsum", args)
        if "optimize" in op.args:
            call.keywords = [gast.keyword(arg="optimize",
                                          value=copy.deepcopy(op.args["optimize"]))]
        return call

    def tangent_or_zero(self, node):
        return self.fwd.tangent(node) or self.fwd.zero(node)

    def matmul(self, op, rule, param):
        """a_dot @ b (any a, b of at most 2 axes); a @ b_dot, b 1-D: b_dot @ a.T."""
        first, second = (op.args[p] for p in rule.params[:2])
        ranks = (self.known_rank(first), self.known_rank(second))
        if None in ranks:       # (worked out at run time)
            side = "batch_matmul_left" if param == rule.params[0] else "batch_matmul_right"
            operands = [self.tangent_or_zero(first), copy.deepcopy(second)] \
                if param == rule.params[0] else \
                [copy.deepcopy(first), self.tangent_or_zero(second)]
            if rule.primitive is numpy.dot:
                operands.append(gast.Attribute(value=load(self.fwd.linker.name_for(
                    "np", numpy)), attr="dot", ctx=gast.Load()))
            return self.fwd.helper_call(side, operands)
        if max(ranks) > 2 or min(ranks) == 0:
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
        axis = op.args.get("axis", const(None))
        axes = _literal(axis)
        name = "sum" if rule.primitive is numpy.sum else "mean"
        t = self.tangent_or_zero(op.args["a"])
        if axes is _NOT_LITERAL:    # (the axes moved past the batch's at run time)
            keywords = [gast.keyword(arg=k, value=copy.deepcopy(op.args[k]))
                        for k in ("axis", "keepdims") if k in op.args]
            call = self.fwd.helper_call(f"batch_{name}", [t])
            call.keywords = keywords
            return call
        if axes is None and self.known_rank(op.args["a"]) is None:
            # (a shape not known: every axis but the batch's is one axis of a reshape)
            kept = op.args.get("keepdims", const(False))
            if not (isinstance(kept, gast.Constant) and kept.value is False):
                raise NotBatchable("a sum with keepdims of a shape not known")
            flat = self.fwd.np_call("reshape", [t, const((self.fwd.batch, -1))])
            call = self.fwd.np_call(name, [flat])
            call.keywords = [gast.keyword(arg="axis", value=const(1))]
            return call
        if axes is None:
            axes = tuple(range(self.rank(op.args["a"])))
        axes = axes if isinstance(axes, tuple) else (axes,)
        moved = tuple(a + 1 if a >= 0 else a for a in axes)
        keywords = [gast.keyword(arg="axis", value=const(moved))]
        if "keepdims" in op.args:
            keywords.append(gast.keyword(arg="keepdims",
                                         value=copy.deepcopy(op.args["keepdims"])))
        call = self.fwd.np_call(name, [t])
        call.keywords = keywords
        return call

    def product_grad(self, stmt, helper, op, rule, param):
        """helper(<the arguments, param's tangent in its place>): a batched matmul
        gradient helper."""
        call = self.plain_call(stmt)
        if len(call.args) != 3 or call.keywords:
            raise NotBatchable(f"{rule.name} with its arguments by keyword")
        at = rule.params.index(param)
        args = [self.tangent_or_zero(a) if i == at else copy.deepcopy(a)
                for i, a in enumerate(call.args)]
        if rule.primitive in (runtime.dot_grad_left, runtime.dot_grad_right):
            args.append(copy.deepcopy(call.func))    # (for operands of other ranks)
        return gast.Call(func=load(self.fwd.linker.name_for(helper, getattr(runtime, helper))),
                         args=args, keywords=[])

    def fast(self, stmt, helper, op):
        """helper(g_dot, <the other arguments as they are>): a batched runtime helper."""
        call = self.plain_call(stmt)
        args = [self.tangent_or_zero(call.args[0])] + copy.deepcopy(call.args[1:])
        return gast.Call(func=load(self.fwd.linker.name_for(helper, getattr(runtime, helper))),
                         args=args, keywords=copy.deepcopy(call.keywords))

    def mapped(self, stmt, op, rule, only=None):
        """batch_map(f, (i, ...), *args): f once per direction, for f linear in the
        arguments at positions i (their tangents; the others as they are)."""
        call = self.plain_call(stmt, op, rule)
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

    def plain_call(self, stmt, op=None, rule=None):
        """The statement's call, when it calls a function; a method of a value (with
        `op` and `rule`: x.ravel() -> np.ravel(x)) as a call of its primitive."""
        call = stmt.value
        if op is not None and isinstance(call, gast.Call) and \
                isinstance(call.func, gast.Attribute) and not self.is_module(call.func):
            return self.primitive_call(op, rule)
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

    def is_module(self, func) -> bool:
        """Whether `func` (an attribute) is a function of a module (np.linalg.solve)."""
        while isinstance(func, gast.Attribute):
            func = func.value
        return isinstance(func, gast.Name) and isinstance(
            self.fwd.fn.globals.get(func.id), types.ModuleType)

    def primitive_call(self, op, rule):
        """A call of the rule's primitive with the statement's arguments (positional up
        to the first one not given, then by keyword)."""
        args, keywords, positional = [], [], True
        for param in rule.params:
            if param not in op.args:
                positional = False
            elif positional:
                args.append(op.args[param])
            else:
                keywords.append(gast.keyword(arg=param, value=op.args[param]))
        if set(op.args) - set(rule.params):
            raise NotBatchable(f"a method call of {rule.name} with other arguments")
        name = getattr(rule.primitive, "__name__", "primitive")
        func = load(self.fwd.linker.name_for(name, rule.primitive))
        return gast.Call(func=func, args=args, keywords=keywords)

    def index(self, stmt, base):
        """x[i] -> x_dot[:, i] for an array x (a list's or tuple's tangent is indexed as
        it is: its items are batched). Where x may be either (a tape's item) or the index
        may move axes (array indexes beside others, or indexes of kinds not known), the
        batch axis goes last for the index: batch_first(batch_last(x_dot)[i]), or
        batch_item(x_dot, x, i) when x may be a container. A container whose rank is not
        known goes through batch_item too: what the analysis takes for one may be an array
        (a parameter its caller passes as a tree, p[0] of a helper's tuple), and there
        x_dot[i] would pick a direction, not an element."""
        value, where = stmt.value.value, stmt.value.slice
        known = self.known_rank(value) is not None
        items = list(where.elts) if isinstance(where, gast.Tuple) else [where]
        if known and self.in_place(items):
            full = gast.Slice(lower=None, upper=None, step=None)
            return gast.Subscript(value=base, slice=gast.Tuple(
                elts=[full] + [copy.deepcopy(i) for i in items], ctx=gast.Load()),
                ctx=gast.Load())
        if known:
            return self.fwd.helper_call("batch_first", [self.last(base, where)])
        # (the shape not known: an array, or a container by any kind the analysis gives)
        return self.fwd.helper_call("batch_item", [base, copy.deepcopy(value),
                                                   index_value(where, self.fwd.linker)])

    def in_place(self, items) -> bool:
        """Whether x_dot[:, items] picks what x[items] picks, for every direction: for
        numbers, slices, None, Ellipsis and one array index alone (with numbers or
        other arrays beside it NumPy may move the indexed axes in front of the batch)."""
        try:
            self.slot_rank(0, items)
        except NotBatchable:
            return False
        return True

    def last(self, base, where):
        """batch_last(base)[where], where picking what it picks of the value."""
        view = self.fwd.helper_call("batch_last", [base])
        shapes = self.fwd.shapes
        if not isinstance(where, (gast.Tuple, gast.Slice, gast.Constant)) and not (
                isinstance(where, gast.Name) and shapes.kind(where.id) == ARRAY and
                shapes.shape(where.id) is not None):     # (not an int or an array: a tuple?)
            where = self.fwd.helper_call("last_index", [copy.deepcopy(where)])
        else:
            items = list(where.elts) if isinstance(where, gast.Tuple) else [where]
            items = [copy.deepcopy(i) for i in items]
            if any(isinstance(i, gast.Constant) and i.value is Ellipsis for i in items):
                items.append(gast.Slice(lower=None, upper=None, step=None))
            where = gast.Tuple(elts=items, ctx=gast.Load()) if len(items) > 1 else items[0]
        return gast.Subscript(value=view, slice=where, ctx=gast.Load())

    def setitem(self, stmt, value):
        """x[i] = v -> x_dot[:, i] = v_dot, v_dot with ones after the batch axis where v
        has fewer axes than x[i] (`value`: v's tangent, or 0.0)."""
        target = stmt.targets[0]
        items = list(target.slice.elts) if isinstance(target.slice, gast.Tuple) else \
            [target.slice]
        if self.known_rank(target.value) is None:
            # (an array, a list or a dict: batch_set_item tells them apart at run time)
            call = self.fwd.helper_call("batch_set_item", [
                load(self.fwd.tname(target.value.id)), copy.deepcopy(target.value),
                index_value(target.slice, self.fwd.linker), value])
            return gast.copy_location(gast.Expr(value=call), stmt)
        if self.known_rank(stmt.value) is None or not self.in_place(items):
            # batch_last(x_dot)[i] = batch_last(v_dot): v's axes broadcast to the slot's
            # from the right, as in the write of the values, the batch axis last of both
            slot = self.last(load(self.fwd.tname(target.value.id)), target.slice)
            slot.ctx = gast.Store()
            if not isinstance(value, gast.Constant):
                value = self.fwd.helper_call("batch_last", [value])
            return gast.copy_location(gast.Assign(targets=[slot], value=value,
                                                  type_comment=None), stmt)
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
        if shape is None:       # (worked out at run time: a tape's slot may hold None)
            return self.fwd.helper_call("batch_zeros", [copy.deepcopy(atom),
                                                        const(self.fwd.batch)])
        return self.fwd.np_call("zeros", [const((self.fwd.batch,) + tuple(shape))])


def _takes_arrays(rule) -> bool:
    """Whether a rule's function reads a list it is given as an array (NumPy's and
    SciPy's do); Python's operators and builtins keep its list semantics (`[t] * 3`
    repeats the list, `sum(ts)` adds its items), which a list's batched tangent, a list
    of batched items, has too."""
    return rule.name.split(".")[0] in ("np", "numpy", "scipy")


def _reading_as_arrays(expr, names, linker):
    """`expr` with each load of a tangent in `names` read through batch_array."""
    helper = linker.name_for("batch_array", runtime.batch_array)

    def read(node):
        if node.id in names and isinstance(node.ctx, gast.Load):
            return gast.Call(func=load(helper), args=[node], keywords=[])
        return node
    return with_names(expr, read)


def index_value(where, linker):
    """An index as a value: x[1:, i] -> (slice(1, None, None), i)."""
    def value(item):
        if not isinstance(item, gast.Slice):
            return copy.deepcopy(item)
        parts = [copy.deepcopy(p) if p is not None else const(None)
                 for p in (item.lower, item.upper, item.step)]
        return gast.Call(func=load(linker.name_for("slice", slice)), args=parts, keywords=[])
    if isinstance(where, gast.Tuple):
        return gast.Tuple(elts=[value(i) for i in where.elts], ctx=gast.Load())
    return value(where)


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


_MISSING = object()


def _batched_calls(template, namespace, tangents):
    """A copy of a rule's output in which each call given a tangent (`tangents`: the
    rule's names of them) of a helper with a batched form (registry.batchable) calls that
    form, added to `namespace`."""
    template = clone(template)
    for node in gast.walk(template):
        if not isinstance(node, gast.Call) or not any(
                isinstance(n, gast.Name) and n.id in tangents
                for part in node.args + [k.value for k in node.keywords]
                for n in gast.walk(part)):
            continue
        found = _resolved(node.func, namespace)
        form = None if found is _MISSING else batched_helper(found)
        if form is not None:
            namespace[form.__name__] = form
            node.func = load(form.__name__)
    return template


def _resolved(node, namespace):
    """The object a rule's name or attribute chain (np.linalg.solve) refers to."""
    if isinstance(node, gast.Name):
        return namespace.get(node.id, _MISSING)
    if isinstance(node, gast.Attribute):
        base = _resolved(node.value, namespace)
        return _MISSING if base is _MISSING else getattr(base, node.attr, _MISSING)
    return _MISSING

