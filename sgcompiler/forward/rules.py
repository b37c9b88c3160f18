"""The tangent of one primitive's result, from its tangent rule (rules/derive.py).

    _mul = x * w        rule: x1_dot * x2, x1 * x2_dot    ->  x_dot * w + x * w_dot
    _sum = np.sum(e)    linear                            ->  np.sum(e_dot)
    _exp = np.exp(z)    derived from g * ans              ->  z_dot * _exp

Only the tangents that are not zero at compile time contribute; a contribution that may
have an operand's shape rather than the result's (x + c: x_dot) is broadcast to it, unless
the shapes analysis proves it already has it.
"""
from __future__ import annotations

import copy

import gast

from .. import rules as rule_table
from ..analysis.shapes import ARRAY
from ..errors import error_at
from ..ir.builders import const, load
from ..rules.derive import tangent_rule
from ..reverse.inline import _literal, simplify, substituted
from ..ir.blocks import walk


class TangentRules:
    """Inlines tangent rules for the tangent pass `fwd` (its names, shapes, linker)."""

    def __init__(self, fwd):
        self.fwd = fwd

    def tangent(self, stmt, op, target):
        fwd = self.fwd
        active = [(p, n) for p, n in op.inputs if fwd.active(n)]
        if not active:
            return None
        added = self.added(stmt, target)
        if added is not None:
            return added
        rule = tangent_rule(op.rule.primitive, op.rule)
        if rule is None:
            raise error_at(stmt, fwd.fn, f"no tangent (forward-mode) rule for "
                           f"{op.rule.name}; register one with @sgcompiler.tangent("
                           f"{op.rule.name}) (def rule(t, ans, <its parameters>): return "
                           "<the tangent of the result>; see the README)")
        if fwd.batched is not None:
            return fwd.batched.tangent(stmt, op, target, rule, active)
        if rule.kind == "linear":
            return self.linear(stmt, op, rule)
        if rule.kind == "multilinear":
            return _sum([self.linear(stmt, op, rule, only=p) for p, _ in active])
        values = self.values(rule, op, target)
        terms = []
        for param, name in active:
            tname = rule.tangent_of(param)
            if tname is None:
                raise error_at(stmt, fwd.fn, f"the tangent rule of {rule.name} gives no "
                               f"tangent for its parameter '{param}'; register a rule "
                               f"with sgcompiler.tangent({rule.name}) that does")
            values[tname] = load(fwd.tname(name))
            if not rule.multiple_results:
                index = [t for _, t in rule.tangents].index(tname)
                terms.append(self.inline(rule.outputs[index], values, rule))
        if rule.multiple_results:       # one tangent per result, from every tangent
            outs = [self.inline(o, values, rule) for o in rule.outputs]
            return self.guarded(outs[0] if len(outs) == 1 else
                                gast.Tuple(elts=outs, ctx=gast.Load()), rule, op, target)
        if rule.trees:      # (a list's tangent and a zero number: not `+`)
            total = terms[0]
            for term in terms[1:]:
                total = fwd.helper_call("add_trees", [total, term])
        else:
            total = _sum(terms)
        total = simplify(total, target, fwd.shapes, fwd.linker, fwd.namer.tangents())
        if not rule.full_shape and not self.full_shape(target, op, total):
            total = fwd.helper_call("broadcast_like", [total, load(target)])
        return self.guarded(total, rule, op, target)

    def added(self, stmt, target):
        """The tangent of `a + b` whose result may be a list or tuple (its kind is not
        known to be an array's): added_tangent at run time (a join puts each side's
        tangent at its items' places; a tangent broadcast to the result was a side's
        alone), None for any other statement."""
        fwd, value = self.fwd, stmt.value
        if not (isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add)) or \
                fwd.shapes.kind(target) == ARRAY:
            return None
        sides = [value.left, value.right]
        args = [fwd.tangent(side) or const(None) for side in sides] + \
            [copy.deepcopy(side) for side in sides] + [load(target)]
        if fwd.batched is not None:
            return fwd.helper_call("batch_added", args + [const(fwd.batch)])
        return fwd.helper_call("added_tangent", args)

    def guarded(self, tangent, rule, op, target):
        """In complex mode, the tangent of a rule written for real operands refuses
        complex ones at run time (runtime/complex_numbers.py); linear rules need no
        guard: a linear function's tangent is the function of the tangent, and neither
        does a statement whose result and operands are real (complex_kinds.py)."""
        if not rule_table.complex_mode() or rule_table.handles_complex(rule):
            return tangent
        operands = list(dict.fromkeys(n.id for a in op.args.values() for n in walk(a)
                                      if isinstance(n, gast.Name)))
        if not {target, *operands} & self.fwd.maybe_complex:
            return tangent
        return self.fwd.helper_call("real_only", [tangent, const(rule.name), gast.Tuple(
            elts=[load(n) for n in operands], ctx=gast.Load())])

    def values(self, rule, op, target):
        values = {"ans": load(target)}
        for p in rule.params:
            values[p] = op.args[p] if p in op.args else _literal(rule.defaults[p], rule, p)
        for _, tname in rule.tangents:         # (a tangent that is zero, if read at all)
            values.setdefault(tname, const(0.0))
        return values

    def inline(self, template, values, rule):
        return substituted(template, values, rule.namespace, self.fwd.linker)

    def full_shape(self, target, op, expr) -> bool:
        """Whether the sum of an elementwise function's contributions provably has the
        result's shape: it reads the result, or every operand that may be an array (or
        its tangent, which has the operand's shape), or the tangent of an operand of the
        result's shape (`_add_dot = _matmul_dot` for `_add = _matmul + b`, shapes known)."""
        shapes, fwd = self.fwd.shapes, self.fwd
        read = {n.id for n in walk(expr) if isinstance(n, gast.Name)}
        if shapes.is_scalar(target) or target in read:
            return True
        operands = {a.id for a in op.args.values() if isinstance(a, gast.Name)}
        tangent_of = {var: name for name, var in fwd.namer.tangents().items()}
        if any(tangent_of.get(n) in read and shapes.same(n, target) for n in operands):
            return True
        return all(n in read or tangent_of.get(n) in read or shapes.is_scalar(n)
                   for n in operands)

    def linear(self, stmt, op, rule, only=None):
        """f(a, b) linear in a and b: f(a_dot, b_dot), a zero for an argument without a
        tangent; with `only`, f with that one argument replaced (a multilinear term)."""
        fwd = self.fwd
        swap = {}
        for param, _ in rule.tangents:
            node = op.args.get(param)
            if node is None or only is not None and param != only:
                continue
            swap[id(node)] = fwd.tangent(node) or fwd.zero(node)
        return _clone_swapping(stmt.value, swap)


def _sum(terms):
    total = terms[0]
    for term in terms[1:]:
        positive = _without_minus(term)
        if positive is not None:        # a + -b * c / d  ->  a - b * c / d
            total = gast.BinOp(left=total, op=gast.Sub(), right=positive)
        else:
            total = gast.BinOp(left=total, op=gast.Add(), right=term)
    return total


def _without_minus(term):
    """-b, or a product or quotient whose first factor is -b (-b * c / d), without that
    minus; None for any other term."""
    if isinstance(term, gast.UnaryOp) and isinstance(term.op, gast.USub):
        return term.operand
    if isinstance(term, gast.BinOp) and isinstance(term.op, (gast.Mult, gast.Div)):
        left = _without_minus(term.left)
        if left is not None:
            return gast.BinOp(left=left, op=term.op, right=term.right)
    return None


def _clone_swapping(node, swap):
    """A deep copy of `node` in which each node whose id is in `swap` is replaced."""
    if id(node) in swap:
        return swap[id(node)]
    if isinstance(node, list):
        return [_clone_swapping(n, swap) for n in node]
    if not isinstance(node, gast.AST):
        return copy.copy(node)
    new = type(node).__new__(type(node))
    for key, value in node.__dict__.items():
        setattr(new, key, _clone_swapping(value, swap) if key in node._fields
                else copy.copy(value))
    return new
