"""The statement lists of a function, found without walking its expressions."""
from __future__ import annotations

from collections import Counter, deque

import gast

COMPOUND = (gast.If, gast.For, gast.While)
# the types of a node's fields that are never nodes (positions, names, constants' values)
_SCALARS = frozenset({int, str, type(None), float, bool, complex, bytes})
# what `nodes` passes over: those, and the nodes that only mark a context or an operator
_LEAVES = _SCALARS | frozenset(
    kind for base in (gast.expr_context, gast.operator, gast.unaryop, gast.cmpop,
                      gast.boolop)
    for kind in base.__subclasses__() if kind.__module__.startswith("gast"))


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


# what holds statements: the statements themselves, and the handlers and cases of try
# and match
HOLDERS = (gast.stmt, gast.excepthandler) + \
    ((gast.match_case,) if hasattr(gast, "match_case") else ())


def statements(node):
    """The statements under `node` (itself first; the handlers and cases between them
    too), in the order walk meets them (breadth first, fields in order), found through
    the statement lists alone: no expression, where no statement can be, is walked."""
    todo = deque((node,))
    while todo:
        node = todo.popleft()
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                todo.extend([item for item in value if isinstance(item, HOLDERS)])
        yield node


def arithmetic(node) -> bool:
    """Whether `node` is built of names, numbers and arithmetic only (no calls: no
    effects, and the same value each time it is evaluated)."""
    return all(isinstance(n, (gast.Name, gast.Constant, gast.BinOp, gast.UnaryOp,
                              gast.operator, gast.unaryop, gast.expr_context))
               for n in nodes(node))


def nodes(node) -> list:
    """Every node under `node` (itself included) but the expression contexts (Load,
    Store, Del, Param) and the operators (of BinOp, UnaryOp, BoolOp, Compare), in no
    particular order: for passes that only collect names, calls and statements (a list,
    made in one go: a generator's resumption per node cost more than the walk itself).
    A context or an operator is read through its node (`name.ctx`, `binop.op`); the
    two were two fifths of a generated function's nodes."""
    found = [node]
    push, ast, leaves, name, constant = found.append, gast.AST, _LEAVES, gast.Name, \
        gast.Constant
    for node in found:          # (the list grows as it is read)
        kind = type(node)
        if kind is name:
            # (a name's fields are strings and its context, but for a parameter's
            # annotation)
            if node.annotation is not None:
                push(node.annotation)
            continue
        if kind is constant:
            continue
        for value in node.__dict__.values():
            # (most fields hold numbers and strings: a set lookup of the type turns
            # them away sooner than isinstance)
            kind = type(value)
            if kind in leaves:
                continue
            if kind is list:
                for item in value:
                    if type(item) not in leaves and isinstance(item, ast):
                        push(item)
            elif isinstance(value, ast):
                push(value)
    return found


def walk(node):
    """Every node under `node` (itself included) in gast.walk's order (breadth first,
    fields in order), about 1.7 times as fast: most passes walk the whole function, some
    several times, and gast.walk was a fifth of the compile time of a long function."""
    todo = deque((node,))
    pop, push, extend, ast = todo.popleft, todo.append, todo.extend, gast.AST
    while todo:
        node = pop()
        # (the children are found before `node` is handed out, as gast.walk does: a
        # caller may change `node`'s fields)
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, ast):
                push(value)
            elif isinstance(value, list):
                extend([item for item in value if isinstance(item, ast)])
        yield node


def walk_list(node) -> list:
    """Every node under `node` (itself included) in `walk`'s order, as a list made in one
    go: for a pass that only reads the tree and wants walk's order (a generator's
    resumption per node cost more than the walk itself)."""
    found = [node]
    push, extend, ast = found.append, found.extend, gast.AST
    for node in found:          # (the list grows as it is read: breadth first)
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, ast):
                push(value)
            elif isinstance(value, list):
                extend([item for item in value if isinstance(item, ast)])
    return found


def local_names(tree) -> set:
    """Parameters and every name the function assigns."""
    names = {a.id for a in tree.args.args + tree.args.kwonlyargs
             + tree.args.posonlyargs}
    for node in nodes(tree):
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Param)):
            names.add(node.id)
    return names


def local_names_in(tree, everything) -> set:
    """local_names(tree), from `everything`, the nodes of `tree` (walk_list's, nodes')
    that a pass has already found."""
    args = tree.args
    names = {a.id for a in args.args + args.kwonlyargs + args.posonlyargs}
    for node in everything:
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Param)):
            names.add(node.id)
    return names


def name_counts(tree) -> tuple[Counter, Counter]:
    """(writes, reads): how many times each name is bound or deleted, and read, in `tree`
    (`x += e` reads x too)."""
    return tally_names(tree, (gast.Store, gast.Del))


def tally_names(tree, bound) -> tuple[Counter, Counter]:
    """(bound, other): how many times each name appears in `tree` with a context of the
    types `bound`, and with another (`x += e` counts as one more of the other), each in
    the order the names are first met. (The names are listed, then counted: a Counter
    made from a list counts in C.)"""
    binds, others = [], []
    name, augmented, contexts = gast.Name, gast.AugAssign, frozenset(bound)
    for node in nodes(tree):
        kind = type(node)
        if kind is name:
            (binds if type(node.ctx) in contexts else others).append(node.id)
        elif kind is augmented and type(node.target) is name:
            others.append(node.target.id)
    return Counter(binds), Counter(others)


def assignment(stmt):
    """(name, value) of `name = value`, else (None, None)."""
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
            isinstance(stmt.targets[0], gast.Name):
        return stmt.targets[0].id, stmt.value
    return None, None

