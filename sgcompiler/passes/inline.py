"""Inline a derivative rule's expression into generated code, and tidy the result.

    rule  mul(g, ans, x, y): unbroadcast(g * y, x)   for  `_mul = s * w`, g = d_mul
    ->    unbroadcast(d_mul * w, s)
    ->    d_mul * w                        when s and _mul provably have the same shape

The rule's own global names (np, unbroadcast, ...) are given names in the generated
function's namespace by a `Linker`, which keeps the rule's spelling unless the user's
function already uses that name for something else.
"""
from __future__ import annotations

import copy

import gast

from .shapes import SCALAR, Shapes


class Linker:
    """Names for the objects that inlined rules refer to, as the generated code spells them."""

    def __init__(self, fn, namer):
        self.fn = fn
        self.namer = namer
        self.names: dict[str, object] = {}     # name in generated code -> object
        self._by_id: dict[int, str] = {}
        self.pieces: list = []                 # user functions' pieces this code calls

    def name_for(self, preferred: str, obj) -> str:
        if id(obj) in self._by_id:
            return self._by_id[id(obj)]
        found, existing = self.fn.lookup(preferred)
        if (found and existing is obj) or (not found and preferred not in self.names):
            name = preferred
            self.namer.reserve([name])
        else:
            name = self.namer.fresh("_" + preferred.lstrip("_"))
        self._by_id[id(obj)] = name
        self.names[name] = obj
        return name


def load(name: str):
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


def const(value):
    return gast.Constant(value=value, kind=None)


def inline(rule, param, args, g, ans: str, linker: Linker):
    """The rule's gradient for `param`, with its parameters replaced by `args` (atoms)."""
    template = copy.deepcopy(rule.output_for(param))
    values = {"g": g, "ans": load(ans)}
    for p in rule.params:
        if p in args:
            values[p] = args[p]
        else:
            values[p] = _literal(rule.defaults[p], rule, p)
    return _Substitute(values, rule.namespace, linker).visit(template)


def _literal(value, rule, param):
    if value is None or isinstance(value, (bool, int, float, str)):
        return const(value)
    raise AssertionError(f"rule {rule.name}: default of {param} is not a literal")


class _Substitute(gast.NodeTransformer):
    def __init__(self, values, namespace, linker):
        self.values, self.namespace, self.linker = values, namespace, linker

    def visit_Name(self, node):
        if node.id in self.values:
            return copy.deepcopy(self.values[node.id])
        if node.id in self.namespace:
            return load(self.linker.name_for(node.id, self.namespace[node.id]))
        raise AssertionError(f"rule refers to unknown name {node.id}")


# --- simplification ----------------------------------------------------------------------------


def simplify(expr, ans: str, shapes: Shapes, linker: Linker):
    """Fold constants (`1.0 * g`, `x ** (2 - 1)`) and drop provably idle `unbroadcast`s."""
    return _Simplify(ans, shapes, linker).visit(expr)


def _number(node):
    if isinstance(node, gast.Constant) and isinstance(node.value, (int, float)) \
            and not isinstance(node.value, bool):
        return node.value
    return None


class _Simplify(gast.NodeTransformer):
    def __init__(self, ans, shapes, linker):
        self.ans, self.shapes, self.linker = ans, shapes, linker

    def visit_BinOp(self, node):
        self.generic_visit(node)
        left, right = _number(node.left), _number(node.right)
        op = type(node.op)
        if left is not None and right is not None and op in _FOLD:
            try:
                return const(_FOLD[op](left, right))
            except (ArithmeticError, ValueError):
                return node
        if op is gast.Mult and left == 1:
            return node.right
        if op in (gast.Mult, gast.Div, gast.Pow) and right == 1:
            return node.left
        if op in (gast.Add, gast.Sub) and right == 0 and right is not None:
            return node.left
        if op is gast.Add and left == 0 and left is not None:
            return node.right
        if op is gast.Mult and isinstance(node.left, gast.UnaryOp) \
                and isinstance(node.left.op, gast.USub) and _number(node.left.operand) == 1:
            return gast.UnaryOp(op=gast.USub(), operand=node.right)
        return node

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        value = _number(node.operand)
        if isinstance(node.op, gast.USub) and value is not None:
            return const(-value)
        if isinstance(node.op, gast.USub) and isinstance(node.operand, gast.UnaryOp) \
                and isinstance(node.operand.op, gast.USub):
            return node.operand.operand
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        if isinstance(func, gast.Name) and self.linker.names.get(func.id) is _unbroadcast():
            return self._unbroadcast(node)
        return node

    def _unbroadcast(self, node):
        grad, operand = node.args
        if not isinstance(operand, gast.Name):
            return grad if _number(operand) is not None else node
        if self.shapes.same(self.ans, operand.id):
            return grad
        if self.shapes.is_scalar(operand.id) and self.shapes.is_scalar(self.ans):
            return grad
        if self.shapes.is_scalar(operand.id):
            np_name = self.linker.name_for("np", _numpy())
            return gast.Call(func=gast.Attribute(value=load(np_name), attr="sum",
                                                 ctx=gast.Load()), args=[grad], keywords=[])
        return node


def _unbroadcast():
    from ..runtime import unbroadcast
    return unbroadcast


def _numpy():
    import numpy
    return numpy


_FOLD = {gast.Add: lambda a, b: a + b, gast.Sub: lambda a, b: a - b,
         gast.Mult: lambda a, b: a * b, gast.Pow: lambda a, b: a ** b}
