"""Tangent rules derived from adjoint rules, where that is exact; and the one lookup.

Three kinds of primitive need no hand-written tangent rule:

- **elementwise** functions: the adjoint is `unbroadcast(g * D, x)` with `D = df/dx` (the
  partial derivative, elementwise), so the tangent is `t * D` (broadcasting does the rest).
  The derivation is checked on the parsed rule: `g` must occur once, as a factor of a
  product or the numerator of a quotient (`g * y`, `-g * x / y ** 2`, `g / x`); otherwise
  nothing is derived and the function needs an explicit rule.
- **reductions** over groups of elements (`max`, `prod`, `var`, `norm`, ...): the adjoint
  of result element j is `g_j * D_i` for each element i of group j, so the tangent is the
  reduction `sum(t * vjp(g=1))` over the same axes.
- **linear** functions (`registry.linear`: reshape, transpose, sum, concatenate, ...): the
  tangent is the function applied to the tangents.

`tangent_rule(primitive, adjoint_rule)` looks them up in order: a user's rule
(`sgcompiler.tangent`), a built-in explicit rule, linear, derived; None when there is none.
"""
from __future__ import annotations

import copy

import gast
import numpy

from ..runtime import unbroadcast
from .registry import TangentRule, explicit_tangent, linearity

_DERIVED: dict = {}     # id(adjoint rule) -> (adjoint rule, TangentRule or None)


def tangent_rule(primitive, rule) -> TangentRule | None:
    """The tangent rule of `primitive`, whose adjoint rule (if any) is `rule`."""
    found = explicit_tangent(primitive)
    if found is not None:
        return found
    if rule is None:
        return None
    cached = _DERIVED.get(id(rule))
    if cached is not None and cached[0] is rule:
        return cached[1]
    kind = linearity(primitive)
    made = _linear(rule, kind) if kind else \
        _elementwise(rule) if rule.elementwise or _scalar_only(rule) else \
        _reduction(rule) if rule.reduction else None
    _DERIVED[id(rule)] = (rule, made)
    return made


def _made(rule, tangents, outputs, kind, full_shape=True, namespace=None):
    return TangentRule(primitive=rule.primitive, name=rule.name, params=rule.params,
                       defaults=rule.defaults, tangents=tuple(tangents),
                       outputs=tuple(outputs), namespace=namespace or rule.namespace,
                       kind=kind,
                       full_shape=full_shape, signature=rule.signature, scope=rule.scope)


def _linear(rule, kind):
    return _made(rule, [(p, f"{p}_dot") for p in rule.differentiable], (), kind)


def _scalar_only(rule) -> bool:
    """Functions of Python numbers (math.sin, builtins.abs) are elementwise too."""
    module = getattr(rule.primitive, "__module__", None) or ""
    return module in ("math", "builtins") and rule.name not in ("sum", "float")


def _elementwise(rule):
    tangents, outputs = [], []
    for param in rule.differentiable:
        expr = _strip_unbroadcast(rule.output_for(param), param, rule.namespace)
        if not _scaled(expr, "g"):
            return None
        tangents.append((param, f"{param}_dot"))
        outputs.append(_renamed(expr, "g", f"{param}_dot"))
    return _made(rule, tangents, outputs, "derived", full_shape=False) if tangents else None


def _reduction(rule):
    """sum(t * vjp(g=ones_like(ans)), axis, keepdims) for a one-input group reduction."""
    params = rule.differentiable
    # (only the reduced array: another differentiable parameter, logsumexp's b or
    # average's weights, may be broadcast, and is not a group reduction of its own)
    if not params or params[0] != rule.params[0] or "axis" not in rule.params or \
            "keepdims" not in rule.params:
        return None
    param = params[0]
    ones = gast.Call(func=_np("ones_like"), args=[_name("ans")], keywords=[])
    weights = _replaced(rule.output_for(param), "g", ones)
    product = gast.BinOp(left=_name(f"{param}_dot"), op=gast.Mult(), right=weights)
    total = gast.Call(func=_np("sum"), args=[product], keywords=[
        gast.keyword(arg="axis", value=_name("axis")),
        gast.keyword(arg="keepdims", value=_name("keepdims"))])
    return _made(rule, [(param, f"{param}_dot")], [total], "derived",
                 namespace=dict(rule.namespace, np=numpy))


def _strip_unbroadcast(expr, param, namespace):
    """unbroadcast(E, param) -> E (the sum back to param's shape is the adjoint's job)."""
    if isinstance(expr, gast.Call) and isinstance(expr.func, gast.Name) and \
            namespace.get(expr.func.id) is unbroadcast and len(expr.args) == 2 and \
            isinstance(expr.args[1], gast.Name) and expr.args[1].id == param:
        return expr.args[0]
    return expr


def _scaled(expr, name) -> bool:
    """_linear_factor, or `E if c else 0.0` of such expressions (math.pow's rule)."""
    if isinstance(expr, gast.IfExp):
        return not _count(expr.test, name) and \
            all(_is_zero(e) or _scaled(e, name) for e in (expr.body, expr.orelse))
    return _linear_factor(expr, name)


def _is_zero(expr) -> bool:
    return isinstance(expr, gast.Constant) and expr.value in (0, 0.0) and \
        not isinstance(expr.value, bool)


def _linear_factor(expr, name) -> bool:
    """Whether `expr` is `name` times (or divided by) factors that do not contain it:
    name, -E, E * A, A * E, E / A with E such an expression and `name` once."""
    if _count(expr, name) != 1:
        return False
    while True:
        if isinstance(expr, gast.Name):
            return expr.id == name
        if isinstance(expr, gast.UnaryOp) and isinstance(expr.op, gast.USub):
            expr = expr.operand
        elif isinstance(expr, gast.BinOp) and isinstance(expr.op, gast.Mult):
            expr = expr.left if _count(expr.left, name) else expr.right
        elif isinstance(expr, gast.BinOp) and isinstance(expr.op, gast.Div) and \
                _count(expr.left, name):
            expr = expr.left
        else:
            return False


def _count(expr, name) -> int:
    return sum(1 for n in gast.walk(expr) if isinstance(n, gast.Name) and n.id == name)


def _renamed(expr, old, new):
    return _replaced(expr, old, _name(new))


def _replaced(expr, old, new):
    expr = copy.deepcopy(expr)

    class _Swap(gast.NodeTransformer):
        def visit_Name(self, node):
            return copy.deepcopy(new) if node.id == old else node
    return _Swap().visit(expr)


def _name(id_):
    return gast.Name(id=id_, ctx=gast.Load(), annotation=None, type_comment=None)


def _np(attr):
    return gast.Attribute(value=_name("np"), attr=attr, ctx=gast.Load())
