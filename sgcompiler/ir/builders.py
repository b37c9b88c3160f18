"""Small builders of gast nodes that every stage after the front end shares.

A generated comment is an expression statement holding a string that starts with
`COMMENT`; codegen turns it into a `# ...` line (backend/codegen.py).
"""
from __future__ import annotations

import gast

COMMENT = "\x00#"     # an Expr(Constant(COMMENT + text)) becomes a comment line in codegen


def store(name: str):
    return gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None)


def load(name: str):
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


def const(value):
    return gast.Constant(value=value, kind=None)


def number(node):
    """The value of a number constant (not a bool), else None."""
    if isinstance(node, gast.Constant) and isinstance(node.value, (int, float)) \
            and not isinstance(node.value, bool):
        return node.value
    return None


def factors_of(node, inverted):
    """A product/quotient chain as (factor, divides) pairs; unary minus as a -1 factor."""
    if isinstance(node, gast.BinOp) and isinstance(node.op, gast.Mult):
        return factors_of(node.left, inverted) + factors_of(node.right, inverted)
    if isinstance(node, gast.BinOp) and isinstance(node.op, gast.Div):
        return factors_of(node.left, inverted) + factors_of(node.right, not inverted)
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        return [(const(-1), False)] + factors_of(node.operand, inverted)
    return [(node, inverted)]


def product_of(factors):
    out = None
    for factor, inverted in factors:
        if out is None:
            out = gast.BinOp(left=const(1.0), op=gast.Div(), right=factor) if inverted \
                else factor
        else:
            out = gast.BinOp(left=out, op=gast.Div() if inverted else gast.Mult(),
                             right=factor)
    return out




def comment(text: str):
    return gast.Expr(value=const(COMMENT + text))
