"""The adjoint of each variable, as the reverse pass knows it at compile time.

`state[v]` is absent (the adjoint is zero: no code), a variable `dv`, a constant (the
seed 1.0), a constant broadcast to a shape (`unreduce(1.0, t)`, kept symbolic so that
elementwise rules can use the scalar), or a dict literal for a parameter dict. Adding to
an adjoint writes `dv = e` the first time and `dv += e` later, in place only into arrays
the generated code allocated itself (`owned`).
"""
from __future__ import annotations

import copy

import gast
import numpy as np

from .. import runtime
from ..runtime import SHAPE_ARGUMENT
from ..ir.builders import const, load, store
from ..analysis.shapes import ARRAY
from ..ir.blocks import nodes, walk


class AdjointState:
    """Compile-time adjoint bookkeeping (mixed into the reverse pass's _Reverser)."""

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

    def may_be_plain_zero(self, expr, var) -> bool:
        """Whether `expr` may evaluate to a plain 0.0 rather than an array shaped like var:
        it reads an adjoint that may be one, and nothing that gives it var's shape."""
        adjoints = self.namer.adjoints()
        names = [n.id for n in nodes(expr) if isinstance(n, gast.Name)]
        if not any(adjoints.get(n) in self.maybe_scalar for n in names):
            return False
        target = self.shapes.of(var)
        return not any(adjoints.get(n) not in self.maybe_scalar and
                       self.shapes.of(adjoints.get(n, n)) == target for n in names
                       if n not in self.linker.names)

    def stand_in(self, expr):
        """Where only an array's shape is read (unbroadcast(g, t), unreduce(g, t),
        reduced_size(t)), read a variable of the same shape that is alive anyway, so that
        t itself can be freed, or not computed at all."""
        # (nodes, not walk: an argument replaced is a name, whose node has no children)
        for node in nodes(expr):
            if not isinstance(node, gast.Call):
                continue
            helper = self.linker.names.get(getattr(node.func, "id", None))
            position = SHAPE_ARGUMENT.get(getattr(helper, "__name__", None))
            if position is None or not runtime.is_helper(helper) \
                    or len(node.args) <= position:
                continue
            arg = node.args[position]
            if isinstance(arg, gast.Name):
                rep = self.shapes.of(arg.id)
                if rep != arg.id and rep in self.stable and not rep.startswith("<"):
                    node.args[position] = load(rep)
        return expr

    def accumulate(self, var, expr, stmt):
        """dvar += expr, as a first write when dvar is still zero."""
        expr = self.stand_in(expr)
        dvar = self.dname(var)
        current = self.state.get(var)
        if current is None and isinstance(expr, gast.Name) and expr.id == dvar:
            # x = x + y: the new x's adjoint is the old x's as it stands (the adjoints of
            # the other operands were added first)
            self.state[var] = load(dvar)
            if self.handoff == dvar:
                self.owned.add(var)
                self.handoff = None
            return []
        self.maybe_scalar.discard(var) if current is None else None
        if current is None and isinstance(expr, gast.Constant) and \
                not self.shapes.is_scalar(var):
            # a constant standing for an array of var's shape: say so
            expr = self.helper_call("unreduce", [expr, load(var)])
        if current is None and (self.is_broadcast_scalar(expr) or
                                isinstance(expr, gast.Constant)):
            self.state[var] = expr       # kept symbolic: consumers use the value itself
            return []
        if current is None and self.may_be_plain_zero(expr, var):
            self.maybe_scalar.add(var)   # computed from an adjoint that may be a plain 0.0
        if not self.is_fresh(expr) and any(isinstance(n, gast.Name) and n.id in
                                       self.written_in_place for n in nodes(expr)):
            # it may be (a view of) an array the adjoint sweep restores in place, or a
            # container whose items it writes
            expr = self.np_call("copy", [expr]) if self.shapes.kind(var) == ARRAY \
                else self.helper_call("copied", [expr])
        self.state[var] = load(dvar)
        array = self.shapes.kind(var) == ARRAY
        if current is None:
            handed = isinstance(expr, gast.Name) and expr.id == self.handoff
            if array and (self.is_fresh(expr) or handed):
                self.owned.add(var)
                self.handoff = None if handed else self.handoff
            return [self.assign(dvar, expr, stmt)]
        if not array:
            return [self.assign(dvar, self.helper_call("add_trees", [
                self.materialize(var, current), expr]), stmt)]
        if var in self.owned and isinstance(current, gast.Name):
            node = gast.AugAssign(target=store(dvar), op=gast.Add(), value=expr)
            node.lineno = stmt.lineno
            return [node]
        self.owned.add(var)
        return [self.assign(dvar, gast.BinOp(left=current, op=gast.Add(), right=expr), stmt)]

    def is_fresh(self, expr) -> bool:
        """Whether `expr` evaluates to a new array (or an immutable number) nobody else
        holds: arithmetic, a NumPy ufunc, or a helper that computes a new array."""
        if isinstance(expr, (gast.BinOp, gast.UnaryOp)):
            return True
        if not isinstance(expr, gast.Call):
            return False
        func = expr.func
        if isinstance(func, gast.Name):
            obj = self.linker.names.get(func.id)
            if obj is runtime.unbroadcast:     # returns its argument, or a new sum of it
                return self.is_fresh(expr.args[0])
            return getattr(obj, "__name__", None) in _FRESH_HELPERS and \
                runtime.is_helper(obj)
        if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name):
            module = self.linker.names.get(func.value.id)
            obj = getattr(module, func.attr, None) if module is np else None
            return isinstance(obj, np.ufunc) or obj in _FRESH_NUMPY
        return False

    def is_broadcast_scalar(self, expr):
        """`unreduce(c, t)`: a constant scalar c broadcast to the shape of t, where t
        never changes (so the expression means the same wherever it is used)."""
        helper = self.linker.names.get(getattr(expr.func, "id", None)) \
            if isinstance(expr, gast.Call) else None
        if helper is runtime.unbroadcast and len(expr.args) == 2 and \
                self.is_number_expression(expr.args[0]):
            pass                # a number summed to x's shape: broadcast to it
        elif not (isinstance(expr, gast.Call) and 2 <= len(expr.args) <= 4 and not expr.keywords
                  and helper is runtime.unreduce
                  # (axis=None, keepdims=False; `is`, as 0 == False: axis=0 is no scalar)
                  and all(isinstance(a, gast.Constant) and (a.value is None or
                                                           a.value is False)
                          for a in expr.args[2:])):
            return False
        scalar, shape = expr.args[:2]
        return isinstance(shape, gast.Name) and shape.id in self.stable and \
            all(isinstance(n, gast.Constant) or
                (isinstance(n, gast.Name) and (n.id in self.stable or
                                               self.final_adjoint(n.id) or
                                               self.linker.names.get(n.id) is
                                               runtime.reduced_size))
                for n in nodes(scalar) if isinstance(n, (gast.Name, gast.Constant)))

    def is_number_expression(self, expr) -> bool:
        """A constant, or arithmetic of constants and reduced_size(t): a Python number."""
        if isinstance(expr, gast.Constant):
            return isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool)
        if isinstance(expr, gast.UnaryOp) and isinstance(expr.op, (gast.USub, gast.UAdd)):
            return self.is_number_expression(expr.operand)
        if isinstance(expr, gast.BinOp) and isinstance(expr.op, (gast.Add, gast.Sub,
                                                                  gast.Mult, gast.Div)):
            return self.is_number_expression(expr.left) and \
                self.is_number_expression(expr.right)
        return isinstance(expr, gast.Call) and isinstance(expr.func, gast.Name) and \
            self.linker.names.get(expr.func.id) is runtime.reduced_size and \
            all(isinstance(a, (gast.Name, gast.Constant)) for a in expr.args) and \
            not expr.keywords

    def final_adjoint(self, name) -> bool:
        """Whether `name` is the adjoint of a variable assigned once, at the top level,
        whose assignment the adjoint sweep has passed: nothing writes it again."""
        var = self.namer.variable_of(name)
        return self.depth == 0 and var in self.stable and var not in self.state

    def rule_adjoint(self, op, target, g):
        """(g as a rule should see it, exact): a broadcast scalar is passed to an
        elementwise rule as the scalar itself (exactly right, as long as no unbroadcast
        is dropped on a shape assumption); a possibly-scalar zero is broadcast for rules
        that need g's full shape."""
        if self.is_broadcast_scalar(g):
            if op.rule.elementwise and self.scalar_is_exact(op, target):
                return g.args[0], True
            return g, False
        if isinstance(g, gast.Name) and not op.rule.elementwise and \
                self.namer.variable_of(g.id) in self.maybe_scalar:
            self.reads.add(target)
            return self.np_call("broadcast_to", [g, self.np_call("shape", [load(target)])]), \
                False
        return g, False

    def scalar_is_exact(self, op, target):
        """Whether an elementwise rule may get a broadcast scalar's value for g. The value
        stands for an array shaped like the result, so each active input that may be
        smaller than the result needs a gradient expression that brings the result's
        shape back: one that reads `ans` or every other array operand (x2 in g * x2).
        Otherwise (x + y: the adjoint of a broadcast y is unbroadcast(g, y), a sum over
        its copies) the scalar would lose the count of copies."""
        for param, name in op.inputs:
            if not self.is_active(name) or self.shapes.same(name, target):
                continue
            reads = {n.id for n in walk(op.rule.output_for(param))
                     if isinstance(n, gast.Name)}
            others = [p for p, atom in op.args.items() if p != param
                      and isinstance(atom, gast.Name) and not self.shapes.is_scalar(atom.id)]
            if "ans" not in reads and not all(p in reads for p in others):
                return False
        return True

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


# NumPy functions whose result is always a new array (or a number)
_FRESH_NUMPY = (np.where, np.copy, np.zeros_like, np.sum, np.outer)

# runtime helpers whose result is always a new array
_FRESH_HELPERS = ("matmul_grad_left", "matmul_grad_right", "dot_grad_left", "dot_grad_right",
                  "choose_grad", "prod_grad", "written_part")
