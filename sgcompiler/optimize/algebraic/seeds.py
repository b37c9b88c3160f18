"""Fold the scalar bookkeeping of adjoint seeds into the statement that uses it (part of
the optimize pass, top-level statements only):

    d_neg = 1.0 / _item_0
    d_sum2 = -d_neg                  ->      d_sub = labels / -_item_0
    d_sub = d_sum2 * labels

The adjoint of a mean, or of a sum divided by a count, starts as a chain of numbers, one
per normal-form statement; a person writes the one expression. The adjoint of a
temporary, assigned once from arithmetic of numbers and read once, by a later top-level
simple statement, is put where it is read (adjoints only: the primal's values stay as the
function computes them); there `(1.0 / n) * x` is written `x / n` and `-(1.0 / n) * x`
`x / -n` (within one rounding of the product). The numbers it reads are names assigned at
most once (parameters, shape reads, other numbers), so no statement in between can
change them.
"""
from __future__ import annotations

import gast

from ...ir.blocks import assignment, name_counts, nodes

_SIMPLE = (gast.Assign, gast.AugAssign, gast.Expr, gast.Return)


def fold_seeds(tree: gast.FunctionDef, temporary, small, user_names) -> None:
    """Fold in place. `temporary(name)`: a generated name nobody needs to see;
    `small(name)`: it holds a number; `user_names`: names the user's code binds."""
    writes, reads = name_counts(tree)
    body, numbers, i = tree.body, set(), 0
    changed = set()         # statements that received a folded number

    def is_number(name):
        return writes[name] <= 1 and (name in numbers or small(name))
    while i < len(body):
        stmt = body[i]
        name = assignment(stmt)[0]
        if name is None or writes[name] != 1 or not _numbers_only(stmt.value, is_number):
            i += 1
            continue
        numbers.add(name)
        # (an adjoint: what reads it is adjoint code, never the primal value returned)
        use = _single_top_level_use(body, i, name) if reads[name] == 1 and \
            name.startswith("d") and temporary(name) and name not in user_names else None
        if use is None:
            i += 1
            continue
        _replace(body[use], name, stmt.value)
        changed.add(id(body[use]))
        del body[i]
    for stmt in body:
        if id(stmt) in changed:
            _Simplify(is_number).visit(stmt)


def _numbers_only(expr, is_number) -> bool:
    """Arithmetic of number constants and names that hold numbers."""
    if isinstance(expr, gast.Constant):
        return type(expr.value) in (int, float)
    if isinstance(expr, gast.Name):
        return is_number(expr.id)
    if isinstance(expr, gast.BinOp) and isinstance(expr.op, (gast.Add, gast.Sub, gast.Mult,
                                                             gast.Div)):
        return _numbers_only(expr.left, is_number) and _numbers_only(expr.right, is_number)
    if isinstance(expr, gast.UnaryOp) and isinstance(expr.op, (gast.USub, gast.UAdd)):
        return _numbers_only(expr.operand, is_number)
    return False


def _single_top_level_use(body, i, name):
    """The index of the later top-level simple statement that reads `name` (read once in
    all), or None when the read is inside a loop or branch."""
    for j in range(i + 1, len(body)):
        reads = any(isinstance(n, gast.Name) and n.id == name for n in nodes(body[j]))
        if reads:
            return j if isinstance(body[j], _SIMPLE) else None
    return None


def _replace(stmt, name, value) -> None:
    """Put a copy of `value` where `stmt` reads `name`."""
    class _Put(gast.NodeTransformer):
        def visit_Name(self, node):
            if node.id == name and isinstance(node.ctx, gast.Load):
                return _clone(value)
            return node
    _Put().visit(stmt)


def _clone(node):
    """A deep copy of an expression of names, constants and arithmetic."""
    if isinstance(node, gast.Name):
        return gast.Name(id=node.id, ctx=gast.Load(), annotation=None, type_comment=None)
    if isinstance(node, gast.Constant):
        return gast.Constant(value=node.value, kind=None)
    if isinstance(node, gast.BinOp):
        return gast.BinOp(left=_clone(node.left), op=type(node.op)(),
                          right=_clone(node.right))
    return gast.UnaryOp(op=type(node.op)(), operand=_clone(node.operand))


class _Simplify(gast.NodeTransformer):
    """`(1.0 / n) * x` -> `x / n` and `-(1.0 / n) * x` -> `x / -n`, for a number n."""

    def __init__(self, is_number):
        self.is_number = is_number

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if not isinstance(node.op, gast.Mult):
            return node
        for number, other in ((node.left, node.right), (node.right, node.left)):
            negated = isinstance(number, gast.UnaryOp) and isinstance(number.op, gast.USub)
            divisor = _reciprocal_of(number.operand if negated else number)
            if divisor is not None and _numbers_only(divisor, self.is_number):
                if negated:
                    divisor = gast.UnaryOp(op=gast.USub(), operand=divisor)
                return gast.BinOp(left=other, op=gast.Div(), right=divisor)
        return node


def _reciprocal_of(node):
    """n for `1.0 / n`, else None."""
    if isinstance(node, gast.BinOp) and isinstance(node.op, gast.Div) and \
            isinstance(node.left, gast.Constant) and type(node.left.value) is float and \
            node.left.value == 1.0:
        return node.right
    return None

