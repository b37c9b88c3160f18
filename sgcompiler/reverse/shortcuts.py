"""Shorter adjoints for the logistic sigmoid and the logs of it (part of the reverse pass).

The textbook sigmoid `p = 1.0 / (1.0 + np.exp(-z))` is four normal-form statements, and
the rules give its adjoint as four steps (`-dp / _add ** 2`, `* _exp`, two negations). Its
derivative is `p * (1 - p)`, and the derivative of `log(p)` in z is `1 - p`, of
`log(1 - p)` it is `-p`. So where the normal form holds such a chain, with every name in
it assigned once, at the top level of the function or within one loop body or branch (in
order there: each name written before it is read, z and y not written after), the
adjoint reaches z directly:

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

The textbook cross-entropy `t = y * log(p) + (1 - y) * log(1 - p)` goes further: its
derivative in z is y (1 - p) - (1 - y) p = y - p, so t's adjoint reaches z as
`dt * (y - p)` (summed to z's shape), when y gets no adjoint (else the rules run) and
the products and logs are read only by t.
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
    constant: tuple = ()    # names that must be inactive (their adjoints are not sent)
    result: str = ""        # the statement's result, where it may be larger than z


def sigmoid_shortcuts(norm, resolution, describe=None) -> dict:
    """id(statement) -> Shortcut, for the statements of `norm.body` whose adjoint goes
    straight to a sigmoid's input (see the module docstring): at the top level, and in the
    body of a loop or a branch where the chain is written in order within one run of it.
    `describe(stmt)`: its Op, where the caller keeps them (describe_stmt otherwise)."""
    describe = describe or (lambda stmt: describe_stmt(stmt, resolution, norm.fn))
    body = norm.body
    if not any(_reciprocal(s) for s in assignments(body)):
        return {}       # (each shortcut hangs on a sigmoid's `p = 1 / _add`: see _chain)
    stores = Counter(target_of(s) for s in assignments(body))
    reads = Counter(n.id for s in body for n in nodes(s)
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load))
    found = {}
    for block in _blocks(body):
        found.update(_block_shortcuts(block, block is body, norm, describe, stores, reads))
    return found


def _blocks(body):
    """`body` and every block nested in it (loop bodies, branches)."""
    yield body
    for stmt in body:
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            for inner in (stmt.body, stmt.orelse):
                if inner:
                    yield from _blocks(inner)


def _block_shortcuts(block, top, norm, describe, stores, reads) -> dict:
    """The shortcuts of the statements of one block (see sigmoid_shortcuts). Inside a loop
    or a branch, each name a shortcut reads or sends to must hold, at that statement, the
    value its chain used in the same run of the block: the chain is in order, and z (and
    y) are not assigned in the block, or once before the chain."""
    ops, pos, written = {}, {}, {}
    for i, stmt in enumerate(block):
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
            written[target_of(stmt)] = i
            op = describe(stmt)
            if op.kind == RULE:
                ops[target_of(stmt)] = (stmt, op)
                pos[target_of(stmt)] = i
    here = Counter(target_of(s) for s in assignments(block))
    once = {name for name in ops if stores[name] == 1 and here[name] == 1}
    params = set(norm.params)

    def steady(name, before):
        """Whether `name` holds one value from position `before` of the block on."""
        if top:
            return (stores[name] == 1 and name in written) or \
                (name in params and not stores[name])
        return not here[name] or (here[name] == 1 and written.get(name, before) < before)

    def same_value(a, b, a_at, b_at):
        """Whether name a from position a_at on holds the value b holds from b_at on: one
        name, or the same subscript of names that hold one value (y[k] read twice)."""
        if a == b:
            return steady(a, min(a_at, b_at))
        if not (steady(a, a_at) and steady(b, b_at)) or a not in written or \
                b not in written:
            return False
        left, right = block[written[a]].value, block[written[b]].value
        return isinstance(left, gast.Subscript) and gast.dump(left) == gast.dump(right) and \
            all(steady(n.id, min(written[a], written[b])) for n in gast.walk(left)
                if isinstance(n, gast.Name))

    def ordered(*names):
        return all(pos[a] < pos[b] for a, b in zip(names, names[1:]))

    found = {}
    for p in sorted(once):
        chain = _chain(p, ops, once)
        if chain is None:
            continue
        z, temporaries = chain
        add, exp, neg = temporaries
        if not steady(z, pos[neg]) or not ordered(neg, exp, add, p):
            continue
        one_minus = _one_minus(p, ops, once)

        def one_minus_p(at):
            """1 - p at position `at`: the name that holds it when it is written before."""
            if one_minus and (top or pos[one_minus] < at):
                return load(one_minus), (p, one_minus)
            return _sub_from_one(p), (p,)
        if all(reads[t] == 1 for t in temporaries) and norm.returned not in temporaries:
            factor_s, s_reads = one_minus_p(pos[p])
            product = gast.BinOp(left=load(p), op=gast.Mult(), right=factor_s)
            found[id(ops[p][0])] = Shortcut(z, product, reads=s_reads)
        for name, (stmt, op) in ops.items():
            if _log_of(op, p) and ordered(p, name):
                factor_s, s_reads = one_minus_p(pos[name])
                found[id(stmt)] = Shortcut(z, factor_s, reads=s_reads[1:] or (p,))
            elif name in once and _log_of(op, None) and _minus_p(ops, op, p, once) and \
                    ordered(p, op.inputs[0][1], name):
                found[id(stmt)] = Shortcut(z, load(p), negated=True, reads=(p,))
        for name, (stmt, op) in ops.items():
            terms = _cross_entropy(name, p, ops, once, reads, norm.returned)
            if terms is None:
                continue
            labels, (a, log_p), (b, rest, log_q) = terms
            q, other = ops[log_q][1].inputs[0][1], ops[rest][0].value.right.id
            if ordered(p, log_p, a, name) and ordered(p, q, log_q, b, name) and \
                    ordered(rest, b) and steady(labels, pos[a]) and \
                    same_value(labels, other, pos[a], pos[rest]):
                difference = gast.BinOp(left=load(labels), op=gast.Sub(), right=load(p))
                found[id(stmt)] = Shortcut(z, difference, reads=(labels, p),
                                           constant=(labels, other), result=name)
    return found


def usable(rev, shortcut) -> bool:
    """Whether the shortcut holds here: the names it sends no adjoint to are inactive."""
    return not any(rev.is_active(name) for name in shortcut.constant)


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
    if shortcut.result and rev.shapes.of(shortcut.result) != rev.shapes.of(shortcut.z):
        expr = rev.helper_call("unbroadcast", [expr, load(shortcut.z)])   # (y broadcasts p)
        rev.reads.add(shortcut.z)
    rev.reads.update(shortcut.reads)
    return [(shortcut.z, expr)]


def _cross_entropy(t, p, ops, once, reads, returned):
    """(y, (a, log_p), (b, 1 - y, log_q)) when `t = a + b`, `a = y * log_p`, `log_p = log(p)`,
    `b = (1 - y) * log_q`, `log_q = log(1 - p)` (either order of each sum and product)
    over statements whose results, but t's, are assigned and read once, else None: the
    derivative of t in z (p = sigmoid(z)) is y (1 - p) - (1 - y) p = y - p, for a
    constant y."""
    stmt, op = ops[t]
    value = stmt.value
    if t not in once or op.rule.primitive is not operator.add or \
            not isinstance(value, gast.BinOp) or not isinstance(value.op, gast.Add):
        return None
    terms = [_named(value.left), _named(value.right)]
    if None in terms or len(set(terms)) != 2 or \
            not all(_single(n, ops, once, reads, returned) for n in terms):
        return None
    for first, second in (terms, terms[::-1]):
        for labels, log_p in _factors(first, ops):
            if not _single(log_p, ops, once, reads, returned) or \
                    not _log_of(ops[log_p][1], p):
                continue
            for rest, log_q in _factors(second, ops):
                if _single(log_q, ops, once, reads, returned) and \
                        _log_of(ops[log_q][1], None) and _minus_p(ops, ops[log_q][1], p, once) \
                        and rest in ops and rest in once and _is_one_minus(*ops[rest], None):
                    return labels, (first, log_p), (second, rest, log_q)
    return None


def _named(node):
    return node.id if isinstance(node, gast.Name) else None


def _single(name, ops, once, reads, returned) -> bool:
    """Whether `name` is assigned once by a rule's statement and read once, not returned."""
    return name in ops and name in once and reads[name] == 1 and name != returned


def _factors(name, ops):
    """[(a, b), (b, a)] when `name = a * b` of two different names, else []."""
    stmt, op = ops[name]
    value = stmt.value
    if op.rule.primitive is not operator.mul or not isinstance(value, gast.BinOp) or \
            not isinstance(value.op, gast.Mult):
        return []
    a, b = _named(value.left), _named(value.right)
    if a is None or b is None or a == b:
        return []
    return [(a, b), (b, a)]


def _reciprocal(stmt) -> bool:
    """Whether `stmt` is `p = 1 / name` in form, as a sigmoid's last statement is."""
    value = stmt.value
    return isinstance(value, gast.BinOp) and isinstance(value.op, gast.Div) and \
        number(value.left) == 1 and isinstance(value.right, gast.Name)


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
    """Whether `stmt` is `1 - p` (of any name, when p is None)."""
    value = stmt.value
    return isinstance(value, gast.BinOp) and op.rule.primitive is operator.sub and \
        number(value.left) == 1 and \
        isinstance(value.right, gast.Name) and (p is None or value.right.id == p)


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
