"""Statements that have a plainer spelling, rewritten to it (part of parsing, before
sugar.py and check):

    a, *rest, z = xs         ->  _unpacked = xs
                                 if len(_unpacked) < 2: raise ValueError(...)
                                 a = _unpacked[0]
                                 rest = [_item for _item in _unpacked[1:-1]]
                                 z = _unpacked[-1]

    try:                     ->  body            (each handler only raises: the gradient
        body                     else-block       code runs the body; where it fails, it
    except E:                    finally-block    raises the body's own exception)
        raise Other(...)
    else: ...
    finally: ...

A `try` whose handler does anything but raise (returns a value, assigns, passes) changes
what the function computes when the body fails, which the generated code would not
repeat: it is refused (check.py), with what to write instead.
"""
from __future__ import annotations

from dataclasses import replace

import gast

from ...ir.builders import const, load, store
from ..source import FunctionSource
from .sugar import fresh
from ...ir.blocks import nodes, walk


def rewrite_statements(fn: FunctionSource) -> FunctionSource:
    """`fn` with starred assignments and raising-only `try` blocks rewritten (another
    `try` is left for check to refuse, with `try_refusal`'s reason)."""
    if not any(isinstance(n, (gast.Try, gast.Starred)) for n in nodes(fn.tree)):
        return fn
    _Statements(fn).visit(fn.tree)
    return replace(fn)


class _Statements(gast.NodeTransformer):
    def __init__(self, fn):
        self.fn = fn
        self.taken = {n.id for n in nodes(fn.tree) if isinstance(n, gast.Name)}

    def visit_Lambda(self, node):
        return node

    def visit_Assign(self, node):
        if len(node.targets) != 1 or not _starred_target(node.targets[0]):
            return node
        target = node.targets[0]
        stars = [i for i, e in enumerate(target.elts) if isinstance(e, gast.Starred)]
        if len(stars) != 1 or any(_starred_target(e) for e in target.elts):
            return node         # refused by check
        star = stars[0]
        after = len(target.elts) - star - 1
        out = []
        if isinstance(node.value, gast.Name):
            source = node.value.id
        else:
            source = fresh("_unpacked", self.taken)
            out.append(gast.Assign(targets=[store(source)], value=node.value,
                                   type_comment=None))
        fixed = len(target.elts) - 1
        if fixed:
            out.append(_length_check(source, fixed))
        for i, part in enumerate(target.elts):
            if i == star:
                value = self._rest(source, star, after)
                part = part.value
            else:
                value = gast.Subscript(value=load(source),
                                       slice=const(i if i < star else i - len(target.elts)),
                                       ctx=gast.Load())
            out.append(gast.Assign(targets=[part], value=value, type_comment=None))
        for stmt in out:
            for n in walk(stmt):
                gast.copy_location(n, node)
        return out

    def _rest(self, source, star, after):
        """[_item for _item in xs[star:-after]]: the starred part, a list as in Python."""
        item = fresh("_item", self.taken)
        rest = gast.Subscript(value=load(source), slice=gast.Slice(
            const(star) if star else None, const(-after) if after else None, None),
            ctx=gast.Load())
        return gast.ListComp(elt=load(item), generators=[gast.comprehension(
            target=store(item), iter=rest, ifs=[], is_async=0)])

    def visit_Try(self, node):
        self.generic_visit(node)
        if try_refusal(node) is not None:
            return node
        return node.body + node.orelse + node.finalbody


def _length_check(source, fixed):
    """if len(xs) < fixed: raise ValueError(...), with Python's message."""
    message = f"not enough values to unpack (expected at least {fixed}, got " "{})"
    length = gast.Call(func=load("len"), args=[load(source)], keywords=[])
    error = gast.Call(func=load("ValueError"), args=[gast.Call(
        func=gast.Attribute(value=const(message), attr="format", ctx=gast.Load()),
        args=[length], keywords=[])], keywords=[])
    test = gast.Compare(left=length, ops=[gast.Lt()], comparators=[const(fixed)])
    return gast.If(test=test, body=[gast.Raise(exc=error, cause=None)], orelse=[])


def _starred_target(target) -> bool:
    return isinstance(target, (gast.Tuple, gast.List)) and \
        any(isinstance(e, gast.Starred) for e in target.elts)


def try_refusal(node):
    """(node, message) when the `try` cannot be read as its body, else None."""
    for handler in node.handlers:
        body = handler.body
        if not body or not isinstance(body[-1], gast.Raise) or not all(
                isinstance(s, (gast.Expr, gast.Pass)) for s in body[:-1]):
            return handler, ("an 'except' block that does not end by raising changes what "
                             "the function computes when the 'try' body fails, which the "
                             "gradient code cannot repeat; check the condition with 'if' "
                             "before the operation, or let the exception propagate")
    for stmt in node.finalbody:
        if not isinstance(stmt, (gast.Expr, gast.Pass)):
            return stmt, ("a 'finally' block may only call functions for their effect "
                          "(print, logging) in differentiated code; move the computation "
                          "after the 'try'")
    return None
