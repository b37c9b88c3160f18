"""The statement lists of a function, found without walking its expressions."""
from __future__ import annotations

from collections import deque

import gast

COMPOUND = (gast.If, gast.For, gast.While)


def blocks(tree: gast.FunctionDef):
    """tree.body, then the body and else-block of every if/for/while inside it, outer ones
    first (the order in which gast.walk meets them)."""
    return statement_lists(tree.body)


def statement_lists(body):
    """`body`, then the body and else-block of every if/for/while inside it, outer ones
    first."""
    yield body
    todo = deque(body)
    while todo:
        stmt = todo.popleft()
        if isinstance(stmt, COMPOUND):
            yield stmt.body
            yield stmt.orelse
            todo.extend(stmt.body)
            todo.extend(stmt.orelse)


def arithmetic(node) -> bool:
    """Whether `node` is built of names, numbers and arithmetic only (no calls: no
    effects, and the same value each time it is evaluated)."""
    return all(isinstance(n, (gast.Name, gast.Constant, gast.BinOp, gast.UnaryOp,
                              gast.operator, gast.unaryop, gast.expr_context))
               for n in nodes(node))


def nodes(node):
    """Every node under `node` (itself included), in no particular order: gast.walk's
    set of nodes, faster, for passes that only collect."""
    todo = [node]
    pop, push = todo.pop, todo.append
    while todo:
        node = pop()
        yield node
        for value in node.__dict__.values():
            if type(value) is list:
                for item in value:
                    if isinstance(item, gast.AST):
                        push(item)
            elif isinstance(value, gast.AST):
                push(value)


def local_names(tree) -> set:
    """Parameters and every name the function assigns."""
    names = {a.id for a in tree.args.args + tree.args.kwonlyargs
             + tree.args.posonlyargs}
    for node in nodes(tree):
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Param)):
            names.add(node.id)
    return names
