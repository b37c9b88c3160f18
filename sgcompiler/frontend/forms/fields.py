"""Attributes of local values read as fields of a parameter tree (part of parsing).

Runs right after parsing, before `check`. `p.w` where `p` is a local value (a parameter,
or a value read from one) and `w` is not an attribute of NumPy arrays (`.T`, `.shape`,
...) becomes a call of the runtime helper `field`, whose derivative rule gives `p` the
adjoint `{'w': g}` (a record's gradient, sgcompiler/records.py):

    return np.sum(p.w * x)      ->     return np.sum(field(p, 'w') * x)

Attributes of module-level objects (`cfg.scale`, `self.data` of a bound method) are
constants and stay as they are; so do method calls (`p.sum()`).
"""
from __future__ import annotations

from dataclasses import replace

import gast
import numpy as np

from ...runtime import field
from ...ir.blocks import local_names_in, walk_list
from ..source import FunctionSource

_ARRAY_ATTRIBUTES = frozenset(dir(np.ndarray))


def read_fields(fn: FunctionSource) -> FunctionSource:
    """`fn` with each field read of a local value written as `field(value, 'name')`."""
    everything = walk_list(fn.tree)     # (one walk for the names, calls and attributes)
    local = local_names_in(fn.tree, everything)
    calls = {id(n.func) for n in everything if isinstance(n, gast.Call)}
    found = [n for n in everything if isinstance(n, gast.Attribute)
             and isinstance(n.ctx, gast.Load) and id(n) not in calls
             and n.attr not in _ARRAY_ATTRIBUTES and _root(n.value) in local]
    if not found:
        return fn
    name = "field"
    while name in local or name in fn.globals or name in fn.closure:
        name = "_" + name
    _Rewrite({id(n) for n in found}, name).visit(fn.tree)
    return replace(fn, introduced={**fn.introduced, name: field})


def _root(node):
    while isinstance(node, (gast.Attribute, gast.Subscript)):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None


class _Rewrite(gast.NodeTransformer):
    def __init__(self, ids, name):
        self.ids, self.name = ids, name

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if id(node) not in self.ids:
            return node
        call = gast.Call(func=gast.Name(id=self.name, ctx=gast.Load(), annotation=None,
                                        type_comment=None),
                         args=[node.value, gast.Constant(value=node.attr, kind=None)],
                         keywords=[])
        return gast.copy_location(call, node)
