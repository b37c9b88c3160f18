"""Squared magnitudes of complex values as one operation (part of parsing, complex mode
only: rules/complex_mode.py).

    np.abs(z) ** 2, abs(z) ** 2, np.square(np.abs(z))   ->  abs_squared(z)
    z.real ** 2 + z.imag ** 2                            ->  abs_squared(z)

`abs_squared` (runtime/complex_numbers.py) computes z.real ** 2 + z.imag ** 2, and its
adjoint is 2 g conj(z); through np.abs it would be g 2 |z| conj(z / |z|), with a division
and two masks for z == 0. Code compiled for real values keeps what it wrote.
"""
from __future__ import annotations

from dataclasses import replace

import gast
import numpy as np

from ...ir.blocks import local_names
from ...rules import complex_mode
from ...runtime import abs_squared
from ..source import FunctionSource

_ABS = (np.abs, np.absolute, abs)


def squared_magnitudes(fn: FunctionSource) -> FunctionSource:
    """`fn` with each squared magnitude written as `abs_squared(z)` (in complex mode)."""
    if not complex_mode():
        return fn
    local = local_names(fn.tree)
    name = "abs_squared"
    while name in local or name in fn.globals or name in fn.closure:
        name = "_" + name
    rewrite = _Rewrite(fn, local, name)
    rewrite.visit(fn.tree)
    if not rewrite.found:
        return fn
    gast.fix_missing_locations(fn.tree)
    return replace(fn, introduced={**fn.introduced, name: abs_squared})


class _Rewrite(gast.NodeTransformer):
    def __init__(self, fn, local, name):
        self.fn, self.local, self.name, self.found = fn, local, name, False

    def visit_BinOp(self, node):
        self.generic_visit(node)
        operand = None
        if isinstance(node.op, gast.Pow) and _is_two(node.right):
            operand = self._magnitude_of(node.left)
        elif isinstance(node.op, gast.Add):
            operand = self._sum_of_squares(node.left, node.right)
        return node if operand is None else self._call(node, operand)

    def visit_Call(self, node):
        self.generic_visit(node)
        if len(node.args) == 1 and not node.keywords and self._refers_to(node.func,
                                                                         (np.square,)):
            operand = self._magnitude_of(node.args[0])
            if operand is not None:
                return self._call(node, operand)
        return node

    def _call(self, node, operand):
        self.found = True
        call = gast.Call(func=gast.Name(id=self.name, ctx=gast.Load(), annotation=None,
                                        type_comment=None), args=[operand], keywords=[])
        return gast.copy_location(call, node)

    def _magnitude_of(self, node):
        """z, when `node` is np.abs(z) (np.absolute, abs)."""
        if isinstance(node, gast.Call) and len(node.args) == 1 and not node.keywords \
                and self._refers_to(node.func, _ABS):
            return node.args[0]
        return None

    def _sum_of_squares(self, left, right):
        """z, when `left + right` is z.real ** 2 + z.imag ** 2 (either order) of a name z."""
        parts = [self._squared_part(side) for side in (left, right)]
        if None in parts or {p[1] for p in parts} != {"real", "imag"} \
                or parts[0][0] != parts[1][0]:
            return None
        return left.left.value

    @staticmethod
    def _squared_part(node):
        if isinstance(node, gast.BinOp) and isinstance(node.op, gast.Pow) \
                and _is_two(node.right) and isinstance(node.left, gast.Attribute) \
                and node.left.attr in ("real", "imag") \
                and isinstance(node.left.value, gast.Name):
            return node.left.value.id, node.left.attr
        return None

    def _refers_to(self, func, objects) -> bool:
        """Whether `func` (a name or an attribute chain of one) is one of `objects`."""
        chain = []
        while isinstance(func, gast.Attribute):
            chain.append(func.attr)
            func = func.value
        if not isinstance(func, gast.Name) or func.id in self.local:
            return False
        found, value = self.fn.lookup(func.id)
        for attr in reversed(chain):
            value = getattr(value, attr, None) if found else None
        return found and any(value is obj for obj in objects)


def _is_two(node) -> bool:
    return isinstance(node, gast.Constant) and type(node.value) in (int, float) \
        and node.value == 2
