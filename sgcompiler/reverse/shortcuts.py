"""Shorter adjoints for the logistic sigmoid and the logs of it (part of the reverse pass).

The textbook sigmoid `p = 1.0 / (1.0 + np.exp(-z))` is four normal-form statements, and
the rules give its adjoint as four steps (`-dp / _add ** 2`, `* _exp`, two negations). Its
derivative is `p * (1 - p)`, and the derivative of `log(p)` in z is `1 - p`, of
`log(1 - p)` it is `-p`. So where the normal form holds such a chain, at the top level of
the function and with every name in it assigned once, the adjoint reaches z directly:

    _neg = -z                               # line 3: the log of 1 - p
    _exp = np.exp(_neg)                     dz = -(d_log2 * p)
    _add = 1.0 + _exp               ->      # line 3: the log of p
    p = 1.0 / _add                          dz = dz + d_log * _sub
    _log = np.log(p)
    _sub = 1.0 - p
    _log2 = np.log(_sub)

and no adjoint is written for p, _add, _exp or _neg when nothing else reads them. Each
shortcut is the exact derivative of one statement of the function composed with the
sigmoid, linear in the adjoint it gets, so it adds up with whatever else flows into z
(other reads of p go through the chain's own shortcut, `dz += dp * (p * (1 - p))`, when
its temporaries are read nowhere else, or else through the rules as before).
"""
from __future__ import annotations

import copy
import operator
from collections import Counter
from dataclasses import dataclass

import gast
import numpy as np

from ..analysis.ops import RULE, assignments, describe_stmt, target_of
from ..ir.blocks import nodes
from ..ir.builders import load, number


@dataclass(frozen=True)
class Shortcut:
    """The adjoint of one statement, sent to `z` (the sigmoid's input) as `g * factor`."""
    z: str
    factor: gast.expr       # a template: copied for each use
    negated: bool = False   # the contribution is -(g * factor)
    reads: tuple = ()       # the primal names the factor reads


def sigmoid_shortcuts(norm, resolution, describe=None) -> dict:
    """id(statement) -> Shortcut, for the top-level statements of `norm.body` whose adjoint
    goes straight to a sigmoid's input (see the module docstring). `describe(stmt)`: its
    Op, where the caller keeps them (describe_stmt otherwise)."""
    body = norm.body
    ops = {}
    for stmt in body:
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
            op = describe(stmt) if describe else describe_stmt(stmt, resolution, norm.fn)
            if op.kind == RULE:
                ops[target_of(stmt)] = (stmt, op)
    stores = Counter(target_of(s) for s in assignments(body))
    reads = Counter(n.id for s in body for n in nodes(s)
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load))
    once = {name for name, (stmt, _) in ops.items() if stores[name] == 1}
    params = set(norm.params)
    found = {}
    for p in sorted(once):
        chain = _chain(p, ops, once)
        if chain is None:
            continue
        z, temporaries = chain
        if z not in once and (z not in params or stores[z]):
            continue
        one_minus = _one_minus(p, ops, once)
        factor_s = load(one_minus) if one_minus else _sub_from_one(p)
        s_reads = (p, one_minus) if one_minus else (p,)
        if all(reads[t] == 1 for t in temporaries) and norm.returned not in temporaries:
            product = gast.BinOp(left=load(p), op=gast.Mult(), right=factor_s)
            found[id(ops[p][0])] = Shortcut(z, product, reads=s_reads)
        for name, (stmt, op) in ops.items():
            if _log_of(op, p):
                found[id(stmt)] = Shortcut(z, factor_s, reads=s_reads[1:] or (p,))
            elif name in once and _log_of(op, None) and _minus_p(ops, op, p, once):
                found[id(stmt)] = Shortcut(z, load(p), negated=True, reads=(p,))
    return found


def shortcut_contributions(rev, shortcut, g):
    """[(z, expr)]: the contribution of a statement with `shortcut` whose result's adjoint is
    `g`; [] when z is not active."""
    if not rev.is_active(shortcut.z):
        return []
    if rev.is_broadcast_scalar(g):
        g = g.args[0]       # the factor has the result's shape: the number is exact
    expr = gast.BinOp(left=g, op=gast.Mult(), right=copy.deepcopy(shortcut.factor))
    if shortcut.negated:
        expr = gast.UnaryOp(op=gast.USub(), operand=expr)
    rev.reads.update(shortcut.reads)
    return [(shortcut.z, expr)]


def _chain(p, ops, once):
    """(z, temporaries) when `p = 1 / (1 + np.exp(-z))` over four statements, else None."""
    stmt, op = ops[p]
    value = stmt.value
    if not isinstance(value, gast.BinOp) or op.rule.primitive is not operator.truediv or \
            number(value.left) != 1 or not isinstance(value.right, gast.Name):
        return None
    add = value.right.id
    exp = _one_plus(ops, add, once)
    if exp is None or exp not in ops or exp not in once:
        return None
    exp_stmt, exp_op = ops[exp]
    if exp_op.rule.primitive is not np.exp or len(exp_op.inputs) != 1 or \
            not isinstance(exp_stmt.value, gast.Call) or exp_stmt.value.keywords or \
            len(exp_stmt.value.args) != 1:
        return None
    neg = exp_op.inputs[0][1]
    if neg not in ops or neg not in once:
        return None
    neg_stmt, neg_op = ops[neg]
    if neg_op.rule.primitive is not operator.neg or \
            not isinstance(neg_stmt.value, gast.UnaryOp) or \
            not isinstance(neg_stmt.value.operand, gast.Name):
        return None
    return neg_stmt.value.operand.id, (add, exp, neg)


def _one_plus(ops, add, once):
    """e when `add = 1 + e` (or `e + 1`), assigned once, else None."""
    if add not in ops or add not in once:
        return None
    stmt, op = ops[add]
    if op.rule.primitive is not operator.add or not isinstance(stmt.value, gast.BinOp):
        return None
    left, right = stmt.value.left, stmt.value.right
    for one, other in ((left, right), (right, left)):
        if number(one) == 1 and isinstance(other, gast.Name):
            return other.id
    return None


def _is_one_minus(stmt, op, p) -> bool:
    value = stmt.value
    return isinstance(value, gast.BinOp) and op.rule.primitive is operator.sub and \
        number(value.left) == 1 and \
        isinstance(value.right, gast.Name) and value.right.id == p


def _one_minus(p, ops, once):
    """The first name assigned once as `1 - p`, else None."""
    for name, (stmt, op) in ops.items():
        if name in once and _is_one_minus(stmt, op, p):
            return name
    return None


def _minus_p(ops, op, p, once) -> bool:
    """Whether the operand of the log `op` is a name assigned once as `1 - p`."""
    operand = op.inputs[0][1] if len(op.inputs) == 1 else None
    return operand in ops and operand in once and _is_one_minus(*ops[operand], p)


def _log_of(op, p) -> bool:
    """Whether `op` is np.log of one operand (of `p`, unless p is None)."""
    return op.rule.primitive is np.log and len(op.inputs) == 1 and \
        len(op.args) == 1 and (p is None or op.inputs[0][1] == p)


def _sub_from_one(p):
    return gast.BinOp(left=gast.Constant(value=1.0, kind=None), op=gast.Sub(), right=load(p))
