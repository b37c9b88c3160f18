"""A generator kept in a variable, read as the generator written where it is consumed
(part of parsing, after statements.py, before sugar.py, which then reads the consumer):

    g = (v * w for v in xs)      ->  g = xs
    s = s + sum(g)                   s = s + sum(v * w for v in g)

Python evaluates a generator's first iterable when the generator is made, and the rest
only as it is consumed: so the variable keeps the first iterable, and the generator moves
to the one place that consumes it. That must be once: the variable is bound once and read
once, in a later statement of the same block, not in a loop body, a `while` condition, a
comprehension or a function there (a second pass would find it exhausted). Any other
generator kept in a variable is left as it is, for check to refuse with its line.
"""
from __future__ import annotations

import copy
from dataclasses import replace

import gast

from ...ir.builders import load
from ..source import FunctionSource
from ...ir.blocks import nodes, walk

_BLOCKS = ("body", "orelse", "finalbody")
_COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)
_AGAIN = _COMPREHENSIONS + (gast.Lambda, gast.FunctionDef)


def inline_generators(fn: FunctionSource) -> FunctionSource:
    """`fn` with each generator kept in a variable and consumed once moved to where it is
    consumed."""
    if not any(isinstance(n, gast.GeneratorExp) for n in nodes(fn.tree)):
        return fn
    counts = {}
    for node in walk(fn.tree):
        if isinstance(node, gast.Name):
            key = (node.id, isinstance(node.ctx, gast.Load))
            counts[key] = counts.get(key, 0) + 1
    for node in list(walk(fn.tree)):
        for field in _BLOCKS:
            block = getattr(node, field, None)
            if isinstance(block, list):
                _inline_in(block, counts)
    return replace(fn)


def _inline_in(block: list, counts: dict) -> None:
    for i, stmt in enumerate(block):
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and
                isinstance(stmt.targets[0], gast.Name) and
                isinstance(stmt.value, gast.GeneratorExp)):
            continue
        name = stmt.targets[0].id
        if counts.get((name, False)) != 1 or counts.get((name, True)) != 1:
            continue
        use = next((found for later in block[i + 1:]
                    for found in [_read_once(later, name)] if found is not None), None)
        if use is None:
            continue
        made = stmt.value
        stmt.value = made.generators[0].iter
        moved = copy.copy(made)
        moved.generators = [copy.copy(made.generators[0])] + made.generators[1:]
        moved.generators[0].iter = load(name)
        _Put(use, gast.copy_location(moved, use)).visit(_holder(block, use))


def _read_once(stmt, name):
    """The read of `name` in `stmt` if it runs at most once each time `stmt` does, else
    None (also None when `stmt` does not read it)."""
    todo = [(stmt, False)]
    while todo:
        node, again = todo.pop()
        if isinstance(node, gast.Name) and node.id == name and \
                isinstance(node.ctx, gast.Load):
            return None if again else node
        if isinstance(node, _COMPREHENSIONS):     # its first iterable is read once
            todo.append((node.generators[0].iter, again))
        for field, value in gast.iter_fields(node):
            if isinstance(node, gast.comprehension) and field == "iter":
                continue        # (read once, if the first: pushed above; else each time)
            repeated = again or isinstance(node, _AGAIN) or \
                isinstance(node, (gast.For, gast.While)) and field in ("body", "orelse") or \
                isinstance(node, gast.While) and field == "test"
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, gast.AST):
                    todo.append((child, repeated))
    return None


def _holder(block, use):
    """The statement of `block` that holds node `use`."""
    return next(stmt for stmt in block if any(n is use for n in walk(stmt)))


class _Put(gast.NodeTransformer):
    """Replaces one node (by identity) with another."""

    def __init__(self, old, new):
        self.old, self.new = old, new

    def visit_Name(self, node):
        return self.new if node is self.old else node
