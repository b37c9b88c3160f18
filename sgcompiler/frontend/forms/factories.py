"""Closures made inside a differentiated function by a factory, and called there (part of
parsing, before nested.py).

A factory is a function whose body defines a function and returns it. A call of one bound
to a name is read as the definition it makes, with the factory's parameters bound to the
call's arguments (evaluated there, as Python does); nested.py then lifts the definition:

    def make(s):                         def loss(x, w):
        def inner(t):                        _g_s = 2.0 * w
            return t * s           ->        def g(t):
        return inner                             return t * _g_s
    def loss(x, w):                          return np.sum(g(x))
        g = make(2.0 * w)
        return np.sum(g(x))

`make(s)(x)`, its result called at once, is read as `_make = make(s)` and `_make(x)`.

The factory is a def of the function itself, or a module-level function of the same module
whose inner function reads no variable of the caller's by the same name. Anything else (a
factory with more statements, a closure stored or returned) is left as it is, and refused
where it is used.
"""
from __future__ import annotations

import copy
import types
from dataclasses import replace

import gast

from ...ir.builders import load, store
from ...runtime import stop_gradient
from ..depends import function_reads, module_level, note
from .objects import user_code
from ..source import FunctionSource, parse_function, parsed_tree
from ...ir.blocks import local_names, local_names_in, nodes, walk, walk_list
from .sugar import fresh


def inline_factories(fn: FunctionSource) -> FunctionSource:
    """`fn` with each `g = factory(...)` replaced by the definition the factory makes."""
    everything = walk_list(fn.tree)     # (one walk for both questions)
    if not any(isinstance(n, gast.Return) and isinstance(n.value, gast.Name)
               for n in everything) and not _calls_module_factory(fn, everything):
        return fn
    local = local_names(fn.tree)
    taken = local | {n.id for n in nodes(fn.tree) if isinstance(n, gast.Name)}
    stores = {}
    for node in walk(fn.tree):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            stores[node.id] = stores.get(node.id, 0) + 1
    defs = {n.name: n for n in walk(fn.tree) if isinstance(n, gast.FunctionDef)
            and n is not fn.tree}
    inliner = _Inliner(fn, local, taken, stores, defs)
    _hoist_made_and_called(fn.tree, inliner)
    changed = inliner.visit(fn.tree)
    return replace(fn, tree=changed)


def _calls_module_factory(fn, everything) -> bool:
    """Whether fn (its nodes: `everything`, in walk's order) calls a module-level
    factory."""
    local = local_names_in(fn.tree, everything)
    return any(isinstance(n, gast.Assign) and isinstance(n.value, gast.Call) and
               _factory_of(module_level(fn, n.value.func, local)) is not None or
               isinstance(n, gast.Call) and isinstance(n.func, gast.Call) and
               _factory_of(module_level(fn, n.func.func, local)) is not None
               for n in everything)


_SIMPLE = (gast.Assign, gast.AugAssign, gast.Return, gast.Expr)
_SCOPES = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp, gast.Lambda)


def _hoist_made_and_called(tree, inliner) -> None:
    """`make(s)(x)`, a factory's result called at once, as `_make = make(s)` just before
    its statement and `_make(x)`, which the inliner then reads as the def it makes. Only
    in a simple statement, outside comprehensions and lambdas, and where the factory's
    arguments call nothing but NumPy and stop_gradient: they are then evaluated a little
    earlier than Python would, which nothing can tell (a factory only defines its
    function)."""
    for node in list(walk(tree)):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            for stmt in list(block):
                if not isinstance(stmt, _SIMPLE):
                    continue
                made = [_hoisted(call, inliner) for call in _made_and_called(stmt, inliner)]
                at = block.index(stmt)
                block[at:at] = made


def _made_and_called(stmt, inliner) -> list:
    """The calls `factory(...)(...)` of `stmt` that may be hoisted."""
    inner = {id(n) for scope in walk(stmt) if isinstance(scope, _SCOPES)
             for n in walk(scope)}
    return [n for n in walk(stmt) if isinstance(n, gast.Call) and id(n) not in inner
            and isinstance(n.func, gast.Call) and isinstance(n.func.func, gast.Name)
            and inliner.factory(n.func.func.id) is not None
            and all(_pure(a, inliner) for part in n.func.args +
                    [k.value for k in n.func.keywords] for a in walk(part))]


def _pure(node, inliner) -> bool:
    """Whether `node` (part of a factory's argument) has no effect that its order could
    show: not a call, or one of NumPy (but numpy.random) or stop_gradient."""
    if isinstance(node, gast.NamedExpr):
        return False
    if not isinstance(node, gast.Call):
        return True
    obj = module_level(inliner.fn, node.func, inliner.local)
    where = getattr(obj, "__module__", None) or ""
    return obj is stop_gradient or where.split(".")[0] == "numpy" and \
        not where.startswith("numpy.random")


def _hoisted(call, inliner):
    """`_make = make(s)` for `call` (make(s)(x)), which becomes `_make(x)`."""
    name = fresh(f"_{call.func.func.id}", inliner.taken)
    inliner.stores[name] = 1
    assign = gast.Assign(targets=[store(name)], value=call.func, type_comment=None)
    for n in walk(assign):
        gast.copy_location(n, call)
    call.func = gast.copy_location(load(name), call)
    return assign


def _factory_of(obj):
    """(def tree, inner def) when `obj` is a module-level user function that is a
    factory, else None."""
    if not (isinstance(obj, types.FunctionType) and user_code(obj) and not obj.__closure__):
        return None
    if _made(parsed_tree(obj)) is None:
        return None
    tree = parse_function(obj).tree        # (its own: the caller rewrites it)
    return tree, _made(tree), obj


def _made(tree):
    """The inner def of a factory tree (`def inner...; return inner`), or None."""
    body = [s for s in tree.body if not (isinstance(s, gast.Expr) and
                                         isinstance(s.value, gast.Constant))]
    if len(body) != 2 or not isinstance(body[0], gast.FunctionDef) or \
            not isinstance(body[1], gast.Return) or \
            not isinstance(body[1].value, gast.Name) or body[1].value.id != body[0].name:
        return None
    inner = body[0]
    if inner.decorator_list or any(isinstance(n, (gast.Lambda, gast.FunctionDef))
                                   for s in inner.body for n in walk(s)):
        return None
    args = tree.args
    if args.vararg or args.kwarg or args.posonlyargs or args.kwonlyargs:
        return None
    return inner


class _Inliner(gast.NodeTransformer):
    def __init__(self, fn, local, taken, stores, defs):
        self.fn, self.local, self.taken = fn, local, taken
        self.stores, self.defs = stores, defs

    def visit_FunctionDef(self, node):
        if node is self.fn.tree:
            self.generic_visit(node)
        return node

    def visit_Lambda(self, node):
        return node

    def visit_Assign(self, node):
        if not (len(node.targets) == 1 and isinstance(node.targets[0], gast.Name) and
                isinstance(node.value, gast.Call) and
                isinstance(node.value.func, gast.Name) and
                self.stores.get(node.targets[0].id) == 1):
            return node
        found = self.factory(node.value.func.id)
        if found is None:
            return node
        tree, inner, obj = found
        bound = _bind(tree.args, node.value)
        if bound is None:
            return node
        name = node.targets[0].id
        renames = {p: fresh(f"_{name}_{p}", self.taken) for p in bound}
        own = {a.id for a in inner.args.args + inner.args.kwonlyargs} | \
            {n.id for s in inner.body for n in walk(s)
             if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        made = copy.deepcopy(inner)
        for n in walk(made):
            if isinstance(n, gast.Name) and n.id in renames and n.id not in own and \
                    isinstance(n.ctx, gast.Load):
                n.id = renames[n.id]
            elif obj is not None and isinstance(n, gast.Name) and n.id in self.local \
                    and n.id not in own and n.id not in renames:
                return node     # it would read the caller's variable, not a global
        if obj is not None:
            for read in function_reads(obj):
                note(*read)
        made.name = name
        out = [gast.Assign(targets=[store(renames[p])], value=v, type_comment=None)
               for p, v in bound.items()] + [made]
        for stmt in out[:-1]:
            for n in walk(stmt):
                gast.copy_location(n, node)
        return out

    def factory(self, name):
        if name in self.defs:
            inner = _made(self.defs[name])
            return None if inner is None else (self.defs[name], inner, None)
        if name in self.local:
            return None
        found = _factory_of(module_level(self.fn, load(name), self.local))
        return found if found is not None and found[2].__globals__ is self.fn.globals \
            else None


def _bind(args, call):
    """{parameter: argument expression} of a call of a factory, or None."""
    if any(isinstance(a, gast.Starred) for a in call.args) or \
            any(k.arg is None for k in call.keywords) or len(call.args) > len(args.args):
        return None
    names = [a.id for a in args.args]
    bound = dict(zip(names, call.args))
    for k in call.keywords:
        if k.arg in bound or k.arg not in names:
            return None
        bound[k.arg] = k.value
    defaults = dict(zip(names[len(names) - len(args.defaults):], args.defaults))
    for name in names:
        if name not in bound:
            if not isinstance(defaults.get(name), gast.Constant):
                return None
            bound[name] = copy.deepcopy(defaults[name])
    return {n: bound[n] for n in names}
