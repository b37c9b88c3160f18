"""Move a number that scales a matrix product's adjoint to the product's (small) result
(part of the optimize pass, top-level statements only, for code of any shape):

    dz = unbroadcast(-1.0 / reduced_size(_mul) * (y - p), z)
    dw = matmul_grad_right(dz, X, w)
->
    dz = unbroadcast(y - p, z)
    dw = -1.0 / reduced_size(_mul) * matmul_grad_right(dz, X, w)

The mean's adjoint `-1/N` multiplies every one of the N rows of `y - p`; the gradient
written by hand divides the 10 numbers of `X.T @ (p - y)` instead, so over dask it is one
elementwise operation a row fewer (and, for NumPy, one pass over an N-long array fewer).
The rewrite is exact up to rounding, because a matrix product and `unbroadcast` (a sum)
are linear in the adjoint: `(c * e) @ x == c * (e @ x)`, and the number is a Python number
(constants and `reduced_size`), so the dtype of the result is the product's.

The scaled adjoint must be a temporary assigned once and read once, by a later top-level
statement, as the adjoint argument of a matrix product's gradient (`matmul_grad_left`,
`matmul_grad_right`, `@`); only pure assignments of other names may separate the two, and
the names the number reads are bound once (so it has the same value there).
"""
from __future__ import annotations

from collections import Counter

import gast

from ...ir.blocks import nodes

_PRODUCTS = ("matmul_grad_left", "matmul_grad_right")
_LINEAR = ("unbroadcast",)


def scale_products(tree: gast.FunctionDef, pure, helpers) -> None:
    """Rewrite `tree`'s top-level statements in place. `pure(stmt)`: the statement only
    binds its target to a value computed from others; `helpers`: the runtime helpers
    linked into the code ({name: function})."""
    named = {n: getattr(f, "__name__", "") for n, f in helpers.items()}
    products = {n for n, f in named.items() if f in _PRODUCTS}
    linear = {n for n, f in named.items() if f in _LINEAR}
    numbers = {n for n, f in named.items() if f == "reduced_size"}
    everything = nodes(tree)
    if not products and not any(isinstance(n, gast.BinOp) and isinstance(n.op, gast.MatMult)
                                for n in everything):
        return
    body = tree.body
    loads = Counter(n.id for n in everything
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load))
    binds = Counter(n.id for n in everything
                    if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load))
    for i, stmt in enumerate(body):
        found = _scaled(stmt, linear, numbers)
        if found is None or loads[found[0]] != 1 or binds[found[0]] != 1:
            continue
        name, unscaled, factor = found
        if any(binds[n.id] > 1 for n in nodes(factor) if isinstance(n, gast.Name)):
            continue        # (a name the number reads is bound again: in a loop, say)
        use = _use(body, i, name, factor, pure, products)
        if use is None:
            continue
        put, call = use
        unscaled()                      # the factor leaves the scaled adjoint...
        put(gast.BinOp(left=factor, op=gast.Mult(), right=call))     # ...for the product


def _scaled(stmt, linear, numbers):
    """(name, a function that drops the number, the number) for `name = c * e`,
    `name = e * c` or `name = unbroadcast(c * e, t)` with c a number."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and
            isinstance(stmt.targets[0], gast.Name)):
        return None
    value = stmt.value

    def put(new):
        stmt.value = new
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and \
            value.func.id in linear and value.args and not value.keywords:
        call, value = value, value.args[0]

        def put(new):
            call.args[0] = new
    if not (isinstance(value, gast.BinOp) and isinstance(value.op, gast.Mult)):
        return None
    for factor, other in ((value.left, value.right), (value.right, value.left)):
        if _number(factor, numbers) and not _number(other, numbers):
            return stmt.targets[0].id, (lambda other=other: put(other)), factor
    return None


def _number(expr, numbers) -> bool:
    """A constant, or arithmetic of constants and reduced_size(names): a Python number."""
    if isinstance(expr, gast.Constant):
        return isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool)
    if isinstance(expr, gast.UnaryOp) and isinstance(expr.op, (gast.USub, gast.UAdd)):
        return _number(expr.operand, numbers)
    if isinstance(expr, gast.BinOp) and isinstance(expr.op, (gast.Add, gast.Sub, gast.Mult,
                                                              gast.Div)):
        return _number(expr.left, numbers) and _number(expr.right, numbers)
    return isinstance(expr, gast.Call) and isinstance(expr.func, gast.Name) and \
        expr.func.id in numbers and not expr.keywords and \
        all(isinstance(a, (gast.Name, gast.Constant)) for a in expr.args)


def _use(body, i, name, factor, pure, products):
    """(a function that replaces the product's call, the call) where body[j], j > i, passes `name` as the
    adjoint of a matrix product, when only pure assignments that bind none of the names
    the factor reads come between; else None."""
    reads = {n.id for n in nodes(factor) if isinstance(n, gast.Name)}
    for j in range(i + 1, len(body)):
        stmt = body[j]
        for parent in nodes(stmt):
            for field, child in gast.iter_fields(parent):
                for k, item in enumerate(child if isinstance(child, list) else [child]):
                    if _passes(item, name, products):
                        return _setter(parent, field, k if isinstance(child, list)
                                       else None), item
        comment = isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant)
        if not (pure(stmt) or comment) or any(isinstance(n, gast.Name) and n.id in reads and
                                 not isinstance(n.ctx, gast.Load) for n in nodes(stmt)):
            return None
    return None


def _setter(parent, field, k):
    if k is None:
        return lambda new: setattr(parent, field, new)
    return lambda new: getattr(parent, field).__setitem__(k, new)


def _passes(node, name, products) -> bool:
    """Whether `node` is `product(name, ...)`, `name @ a` or `a @ name`."""
    def is_name(n):
        return isinstance(n, gast.Name) and n.id == name
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
            node.func.id in products and node.args and is_name(node.args[0]):
        return True
    return isinstance(node, gast.BinOp) and isinstance(node.op, gast.MatMult) and \
        (is_name(node.left) or is_name(node.right))
