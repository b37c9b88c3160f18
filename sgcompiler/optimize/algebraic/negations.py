"""A negated first write, then one addition to it, as one subtraction (part of the optimize
pass, top-level statements only, for code of any shape):

    dz = -(d_log2 * p)                  ->      d_log = unbroadcast(d_mul * y, z)
    d_log = unbroadcast(d_mul * y, z)           dz = d_log * _sub - d_log2 * p
    dz = dz + d_log * _sub

`b + (-a)` and `b - a` are the same number to the bit (IEEE subtraction is addition of
the negation), for arrays of any library and for Python numbers; the negated array is
never made. The negation moves to where the addition is, so nothing in between may
rebind or write into what it reads (only pure assignments of other names may separate
them), and the negated value must be read nowhere else.
"""
from __future__ import annotations

from collections import Counter

import gast

from ...ir.blocks import nodes


def fold_negated_sums(tree: gast.FunctionDef, pure) -> None:
    """Rewrite `tree`'s top-level statements in place. `pure(stmt)`: the statement only
    binds its target to a value computed from others (cleanup.pure_assign)."""
    body = tree.body
    loads = None        # (counted at the first negation: most functions have none)
    i = 0
    while i < len(body):
        name, negated = _negation(body[i])
        if name is not None and loads is None:
            loads = Counter(n.id for n in nodes(tree)
                            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load))
        found = None if name is None else _addition(body, i, name, negated, pure, loads)
        if found is None:
            i += 1
            continue
        j, target, total = found
        stmt = body[j]
        other = total.right if _is_name(total.left, name) else total.left
        body[j] = gast.Assign(targets=[gast.Name(id=target, ctx=gast.Store(),
                                                 annotation=None, type_comment=None)],
                              value=gast.BinOp(left=other, op=gast.Sub(), right=negated),
                              type_comment=None)
        gast.copy_location(body[j], stmt)
        loads[name] -= 1
        del body[i]


def _negation(stmt):
    """(n, a) for `n = -(a)`, else (None, None)."""
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
            isinstance(stmt.targets[0], gast.Name) and \
            isinstance(stmt.value, gast.UnaryOp) and isinstance(stmt.value.op, gast.USub):
        return stmt.targets[0].id, stmt.value.operand
    return None, None


def _is_name(node, name) -> bool:
    return isinstance(node, gast.Name) and node.id == name


def _addition(body, i, name, negated, pure, loads):
    """(j, target, the sum) for body[j], the statement `name = name + b` (or `b + name`,
    `name += b`, or another target) that
    follows body[i] with only pure assignments of other names in between, b not reading
    `name`, and nothing in between changing what `negated` reads; else None."""
    reads = {n.id for n in nodes(negated) if isinstance(n, gast.Name)}
    for j in range(i + 1, len(body)):
        stmt = body[j]
        target, value = _sum_into(stmt, name)
        if target is not None:
            sides = [value.left, value.right]
            if sum(_is_name(s, name) for s in sides) != 1 or any(
                    _is_name(n, name) for s in sides if not _is_name(s, name)
                    for n in nodes(s)):
                return None
            # the new value's readers are the sum's: the negation is read only here
            return (j, target, value) if target == name or loads[name] == 1 else None
        if not pure(stmt) or any(isinstance(n, gast.Name) and n.id == name
                                 for n in nodes(stmt)):
            return None
        if stmt.targets[0].id in reads:
            return None
    return None


def _sum_into(stmt, name):
    """(target, the BinOp of the sum) for `target = ... + ...` reading `name`, or for
    `name += b` (as the BinOp `name + b`); else (None, None)."""
    if isinstance(stmt, gast.AugAssign) and isinstance(stmt.op, gast.Add) and \
            _is_name(stmt.target, name):
        return name, gast.BinOp(left=gast.Name(id=name, ctx=gast.Load(), annotation=None,
                                               type_comment=None),
                                op=gast.Add(), right=stmt.value)
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
            isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.BinOp) \
            and isinstance(stmt.value.op, gast.Add) and \
            any(_is_name(s, name) for s in (stmt.value.left, stmt.value.right)):
        return stmt.targets[0].id, stmt.value
    return None, None
