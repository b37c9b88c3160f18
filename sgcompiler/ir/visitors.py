"""A NodeTransformer for the passes that visit every node of a long function.

`Transformer` does what gast.NodeTransformer (the standard library's) does, node for node
and in the same order, with less work per node: the fields are read without
`ast.iter_fields`' generator, and a node with no fields (a context, an operator: a third
of a function's nodes) is kept as it is, without a call of `visit` and `generic_visit`
for it, where the transformer has no `visit_` method for its class (its generic visit
would keep it, having nothing to visit).
"""
from __future__ import annotations

import gast

_AST = gast.AST


class Transformer(gast.NodeTransformer):
    """gast.NodeTransformer, faster on long functions (see the module docstring)."""

    def generic_visit(self, node):
        kept = _kept_leaves(type(self))
        for field in node._fields:
            try:
                old_value = getattr(node, field)
            except AttributeError:
                continue
            if isinstance(old_value, list):
                new_values = []
                for value in old_value:
                    if isinstance(value, _AST) and type(value) not in kept:
                        value = self.visit(value)
                        if value is None:
                            continue
                        if not isinstance(value, _AST):
                            new_values.extend(value)
                            continue
                    new_values.append(value)
                old_value[:] = new_values
            elif isinstance(old_value, _AST) and type(old_value) not in kept:
                new_node = self.visit(old_value)
                if new_node is None:
                    delattr(node, field)
                else:
                    setattr(node, field, new_node)
        return node


_LEAVES = tuple(cls for cls in vars(gast).values() if isinstance(cls, type) and
                issubclass(cls, _AST) and not cls._fields)
_KEPT: dict = {}        # transformer class -> the leaf classes it keeps as they are


def _kept_leaves(cls) -> frozenset:
    found = _KEPT.get(cls)
    if found is None:
        found = _KEPT[cls] = frozenset(
            leaf for leaf in _LEAVES if not hasattr(cls, "visit_" + leaf.__name__) and
            cls.generic_visit is Transformer.generic_visit and
            cls.visit is gast.NodeTransformer.visit)
    return found
