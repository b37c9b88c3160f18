"""Which arrays generated code may share between names, and what each statement writes
into, for the common-subexpressions step (common.py): an expression is shared
only while the arrays it reads cannot have been written into through another name.
"""
from __future__ import annotations

from collections import Counter

import gast
import numpy

from ...ir.blocks import HOLDERS, nodes, statements

CONSUMING = (gast.BinOp, gast.UnaryOp, gast.Compare)
_REDUCTIONS = frozenset("sum mean max min prod dot matmul".split())
_BUILTINS = frozenset("len range min max abs float int".split())
# NumPy functions that write into an argument they are given
_WRITERS = frozenset("at copyto put place putmask fill_diagonal shuffle".split())
# the nodes that may write into an array (see written_into)
_WRITING = frozenset({gast.Call, gast.AugAssign, gast.Subscript, gast.Attribute})
# the statements sharing looks into, which hold no statement
_SIMPLE = frozenset({gast.Assign, gast.AugAssign, gast.Return})


class ArrayFacts:
    """What the whole function says about its names, found in one walk before sharing."""

    def __init__(self, tree, pure, numpy_names, readers):
        self.pure, self.numpy_names, self.readers = pure, numpy_names, readers
        self.writes = Counter()     # name -> bindings (an augmented assignment counts)
        self.in_place = set()       # names written into (x += .., x[i] = .., out=x, or
        #                             passed to a call that may write into it)
        # id(statement) -> (statement, effects(statement)) of each assignment and return:
        # sharing asks them of each statement it leaves as it was
        self.walked = {}
        assignments = []
        for stmt in statements(tree):
            if type(stmt) in _SIMPLE:
                found = self.walked[id(stmt)] = (stmt,) + effects(stmt)
                if type(stmt) is gast.Assign:
                    assignments.append(stmt)
            else:   # (the statements in it are met on their own)
                found = (stmt,) + effects(stmt, within=HOLDERS)
            for node in found[2]:
                kind = type(node)
                if kind is gast.Name:
                    self.writes[node.id] += 1
                elif kind is gast.Call:
                    self.in_place.update(written_into(node))
                    if not self.reads_only(node):
                        self.in_place.update(passed(node))
                else:
                    self.in_place.update(written_into(node))
        self._through_aliases(assignments)

    def _through_aliases(self, assignments):
        """A write into `t` after `t = d` (or `t = unbroadcast(d, x)`, a view of d, ...)
        is a write into d's array too: every name that may hold the array of a name
        written into is written into (`dt = d_sub; dt += d_sub2` changes d_sub, so
        d_sub2 = d_sub may not be shared). `assignments`: the function's."""
        held = {}       # name -> the names that may hold the same array
        for node in assignments:
            if len(node.targets) == 1 and isinstance(node.targets[0], gast.Name):
                target = node.targets[0].id
                for name in self.escaping(node.value, False):
                    held.setdefault(name, set()).add(target)
                    held.setdefault(target, set()).add(name)
        todo = [n for n in self.in_place if n in held]
        while todo:
            for name in held[todo.pop()]:
                if name not in self.in_place:
                    self.in_place.add(name)
                    todo.append(name)

    def reads_only(self, call) -> bool:
        return reads_only(call, self.numpy_names, self.readers)

    def fresh(self, value) -> bool:
        """Whether `value` is certainly a new array (or a number), shared with nothing."""
        return isinstance(value, (gast.Constant,) + CONSUMING) or \
            isinstance(value, gast.Call) and self.fresh_call(value)

    def fresh_call(self, call) -> bool:
        func = call.func
        if any(k.arg == "out" for k in call.keywords) or not (
                isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)
                and func.value.id in self.numpy_names):
            return False
        return func.attr in _REDUCTIONS or isinstance(getattr(numpy, func.attr, None),
                                                        numpy.ufunc)

    def escaping(self, node, consumed) -> set:
        """The names under `node` whose array may be what it evaluates to (or be kept by
        a call), `consumed`: whether its value is only read."""
        found = set()
        todo = [(node, consumed)]
        while todo:
            node, consumed = todo.pop()
            kind = type(node)
            if kind is gast.Name:
                if not consumed:
                    found.add(node.id)
            elif kind is gast.Constant:
                pass
            elif kind is gast.BinOp:        # (its operator holds no name)
                todo.append((node.left, True))
                todo.append((node.right, True))
            elif isinstance(node, CONSUMING + (gast.BoolOp,)):
                todo.extend((child, True) for child in gast.iter_child_nodes(node))
            elif isinstance(node, gast.Call):
                inner = self.fresh_call(node)
                todo.extend((a, inner) for a in node.args)
                todo.extend((k.value, inner) for k in node.keywords)
                todo.append((node.func, True))
            elif isinstance(node, (gast.Subscript, gast.Attribute)):
                todo.append((node.value, consumed))
                if isinstance(node, gast.Subscript):
                    todo.append((node.slice, True))
            elif isinstance(node, gast.IfExp):
                todo.extend(((node.test, True), (node.body, consumed),
                             (node.orelse, consumed)))
            else:
                todo.extend((child, False) for child in gast.iter_child_nodes(node))
        return found


def effects(node, within=None):
    """(the names read under `node`, in no particular order; the nodes under it that may
    write: names bound or deleted, calls, augmented assignments, subscripts and
    attributes), from one walk of its nodes. `within`: the types of the nodes under it
    not to look into (nor count), but for `node` itself."""
    if within is None:
        found = nodes(node)
    else:
        found = [node]
        for value in node.__dict__.values():
            for item in value if type(value) is list else (value,):
                if isinstance(item, gast.AST) and not isinstance(item, within):
                    found.extend(nodes(item))
    reads, writing = [], []
    for node in found:
        # (by the node's type, not isinstance chains: most nodes write into nothing)
        kind = type(node)
        if kind is gast.Name:
            context = type(node.ctx)
            if context is gast.Load:
                reads.append(node.id)
            elif context is gast.Store or context is gast.Del:
                writing.append(node)
        elif kind in _WRITING:
            writing.append(node)
    return reads, writing


def top_values(stmt):
    """(expression, whether its value is only read) of a statement's own expressions."""
    if isinstance(stmt, gast.Assign):
        return [(stmt.value, False)]
    if isinstance(stmt, gast.AugAssign):
        return [(stmt.value, True)]
    if isinstance(stmt, (gast.Expr, gast.Return)) and stmt.value is not None:
        return [(stmt.value, False)]
    if isinstance(stmt, (gast.If, gast.While)):
        return [(stmt.test, True)]
    if isinstance(stmt, gast.For):
        return [(stmt.iter, False)]
    return []


def written_into(node) -> tuple:
    """The names whose array `node` itself writes into (a tuple, not a generator: it is
    asked of every node of the function, and most write into nothing)."""
    if isinstance(node, gast.AugAssign):
        return (root(node.target),)
    if isinstance(node, (gast.Subscript, gast.Attribute)):
        return (root(node.value),) if isinstance(node.ctx, (gast.Store, gast.Del)) else ()
    if isinstance(node, gast.Call):
        return tuple(n.id for k in node.keywords if k.arg == "out"
                     for n in nodes(k.value) if isinstance(n, gast.Name))
    return ()


def root(node):
    while isinstance(node, (gast.Subscript, gast.Attribute)):
        node = node.value
    return getattr(node, "id", None)


def passed(call):
    """The names a call is given (as arguments, or inside them)."""
    for arg in list(call.args) + [k.value for k in call.keywords]:
        yield from (n.id for n in nodes(arg) if isinstance(n, gast.Name))


def reads_only(call, numpy_names, readers) -> bool:
    """Whether `call` certainly writes into none of its arguments: NumPy (but
    `np.add.at`, `np.copyto` and the like, and `out=`), math, builtins that compute a
    number, and the runtime helpers named in `readers` (unbroadcast, unreduce)."""
    func, root = call.func, call.func
    while isinstance(root, gast.Attribute):
        root = root.value
    name = getattr(root, "id", None)
    if any(k.arg == "out" for k in call.keywords):
        return False
    if func is root:
        return name in _BUILTINS or name in readers
    return (name in numpy_names or name == "math") and \
        getattr(func, "attr", None) not in _WRITERS
