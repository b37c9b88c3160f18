"""Functions given to np.apply_along_axis and np.vectorize (part of parsing, before
nested.py). The library would call them where no gradient can be derived, so the call
becomes a call of a helper written in Python that does what the library does, with a
loop; the compiler differentiates it like any helper of the user's (nested.py then
specialises it for the function, a lambda or a def):

    np.apply_along_axis(lambda r: ..., 0, x)  ->  _apply_along_axis(lambda r: ..., 0, x)
    np.vectorize(lambda t: ...)(x)            ->  _vectorized(lambda t: ..., x)
    g = np.vectorize(f)  ...  g(x)            ->  _vectorized(f, x)

The helpers' code takes the line of the call it stands for, so the generated code's
comments show that line. Other forms (extra arguments to the function, np.vectorize with
keywords or of several arguments) stay library calls, refused where a gradient must flow.
"""
from __future__ import annotations

import builtins
import copy
from collections import Counter
from dataclasses import replace

import gast
import numpy as np

from ...ir.blocks import local_names_in, walk_list
from ..depends import module_level
from ..lifted import lifted_function
from ..source import FunctionSource
from .dicts import fresh
from ...ir.visitors import Transformer

# what the library does, for a function returning a number or an array (NumPy's shapes:
# the result's axes where the axis was)
_APPLY_ALONG_AXIS = '''
def apply_along_axis(func1d, axis, arr):
    moved = np.moveaxis(arr, axis, -1)
    rows = np.reshape(moved, (-1, moved.shape[-1]))
    outs = [func1d(row) for row in rows]
    stacked = np.stack(outs)
    shaped = np.reshape(stacked, moved.shape[:-1] + stacked.shape[1:])
    added = stacked.ndim - 1
    if added == 0:
        return shaped
    start = axis % arr.ndim
    return np.moveaxis(shaped, tuple(range(-added, 0)), tuple(range(start, start + added)))
'''
# one argument, each element on its own (NumPy's result for a function returning numbers)
_VECTORIZED = '''
def vectorized(pyfunc, x):
    outs = [pyfunc(item) for item in np.ravel(x)]
    return np.reshape(np.stack(outs), np.shape(x))
'''
_SOURCES = {"apply_along_axis": _APPLY_ALONG_AXIS, "vectorized": _VECTORIZED}
_GLOBALS = {"np": np, "__builtins__": builtins}     # what the helpers run in


def rewrite_library_calls(fn: FunctionSource) -> FunctionSource:
    """`fn` with the calls of the module docstring rewritten (or `fn` itself)."""
    everything = walk_list(fn.tree)     # (one walk, for every question of the tree)
    if not any(isinstance(n, gast.Call) for n in everything):
        return fn
    rewriter = _Rewriter(fn, everything)
    rewriter.visit(fn.tree)
    if not rewriter.introduced:
        return fn
    return replace(fn, introduced={**fn.introduced, **rewriter.introduced})


class _Rewriter(Transformer):
    def __init__(self, fn, everything):
        self.fn = fn
        self.local = local_names_in(fn.tree, everything)
        self.taken = self.local | set(fn.globals) | set(fn.introduced) | \
            {n.id for n in everything if isinstance(n, gast.Name)}
        self.introduced = {}
        self.vectorized = self.bound_vectorized(everything)

    def library(self, node):
        """The NumPy function a call's callee names (np.vectorize, ...), or None."""
        obj = module_level(self.fn, node, self.local)
        return obj if obj in (np.apply_along_axis, np.vectorize) else None

    def made_vectorized(self, node):
        """The function of `np.vectorize(f)` (nothing else given), or None."""
        if isinstance(node, gast.Call) and self.library(node.func) is np.vectorize and \
                len(node.args) == 1 and not node.keywords and \
                not isinstance(node.args[0], gast.Starred):
            return node.args[0]
        return None

    def bound_vectorized(self, everything) -> dict:
        """Names bound once, in the function's body, to np.vectorize(f) and only called:
        name -> f (`everything`: the nodes of the function, in walk's order)."""
        # (one walk for every candidate: walking the function per assignment was
        # quadratic, most of the compile time of a long function)
        stores, loads, calls = Counter(), {}, set()
        for n in everything:
            if isinstance(n, gast.Name):
                if isinstance(n.ctx, gast.Store):
                    stores[n.id] += 1
                elif isinstance(n.ctx, gast.Load):
                    loads.setdefault(n.id, []).append(n)
            elif isinstance(n, gast.Call):
                calls.add(id(n.func))
        found = {}
        for stmt in self.fn.tree.body:
            if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                    isinstance(stmt.targets[0], gast.Name):
                name, made = stmt.targets[0].id, self.made_vectorized(stmt.value)
                if made is not None and stores[name] == 1 and \
                        all(id(n) in calls for n in loads.get(name, ())):
                    found[name] = made
        return found

    def visit_Assign(self, node):
        self.generic_visit(node)
        if len(node.targets) == 1 and isinstance(node.targets[0], gast.Name) and \
                node.targets[0].id in self.vectorized:
            return gast.copy_location(gast.Pass(), node)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        plain = not node.keywords and not any(isinstance(a, gast.Starred) for a in node.args)
        if self.library(node.func) is np.apply_along_axis and plain and len(node.args) == 3:
            return self.helper_call("apply_along_axis", node, node.args)
        function = self.made_vectorized(node.func)
        if function is None and isinstance(node.func, gast.Name):
            function = self.vectorized.get(node.func.id)
        if function is not None and plain and len(node.args) == 1:
            return self.helper_call("vectorized", node, [copy.deepcopy(function)] + node.args)
        return node

    def helper_call(self, name, node, args):
        helper = _helper(name, self.fn.filename, node)
        local = fresh(f"_{name}", self.taken)
        self.introduced[local] = helper
        return gast.copy_location(gast.Call(func=gast.Name(
            id=local, ctx=gast.Load(), annotation=None, type_comment=None),
            args=args, keywords=[]), node)


def _helper(name, filename, where):
    """The helper `name`, its code at the line of `where` in `filename`."""
    tree = gast.parse(_SOURCES[name]).body[0]
    for n in gast.walk(tree):
        if isinstance(n, (gast.stmt, gast.expr)):
            gast.copy_location(n, where)
    key = ("library call", name, filename, where.lineno)
    return lifted_function(tree, _GLOBALS, key, filename)
