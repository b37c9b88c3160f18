"""Python forms that have a plainer spelling, rewritten to it (part of parsing).

Runs after contexts.py, before nested.py and check; what it makes is what the front end
already reads:

    sum(v ** 2 for v in xs)         ->  sum([v ** 2 for v in xs])
    max(v for v in xs), min(xs)     ->  max_of([v for v in xs]), min_of(xs)   (runtime helpers)
    list(map(lambda t: t * w, xs))  ->  [t * w for t in xs]
    p = partial(np.sum, axis=0)     ->  (nothing)
    p(x)                            ->  np.sum(x, axis=0)
    f(*(a, b)), [*xs, y]            ->  f(a, b), [_item for _part in (xs, [y]) for _item in _part]
    for v in p  (p a parameter)     ->  for v in by_position(p, 'f (file:line)', text)

A loop over a parameter, or over a part of one (`p["layers"]`), is read by position, which
a dict or a set is not: by_position (runtime/iteration.py) checks it when it runs, and
normalize writes the check as a statement before the loop.

The dict forms (dict(a=x), d.get, dict comprehensions) are in dicts.py, the statements
(starred unpacking, `try`) in statements.py. What is left (a dict
comprehension whose keys are not known when the function is compiled, `*` of something
else) stays as it was and is refused by check or normalize, with its line.
"""
from __future__ import annotations

import builtins
import copy
import functools
import types
from collections import Counter
from dataclasses import replace

import gast
import numpy as np

from ...ir.blocks import local_names_in, walk, walk_list
from ...ir.builders import const, load, store
from ...runtime import by_position, max_of, min_of
from ..depends import module_level
from .dicts import DictForms, dict_variables, displays, filled_in_loop, fresh, is_key
from ..source import FunctionSource
from ...ir.visitors import Transformer

# builtins that consume an iterable once: a list gives what a generator gives
_CONSUMERS = ("sum", "max", "min", "list", "tuple", "sorted", "any", "all", "enumerate",
              "zip", "reversed")


def rewrite_expressions(fn: FunctionSource) -> FunctionSource:
    """`fn` with the expression forms of the module docstring rewritten."""
    if not any(isinstance(n, (gast.Call, gast.DictComp, gast.Starred, gast.For,
                              gast.comprehension))
               for n in walk(fn.tree)):
        return fn
    sugar = _Sugar(fn)
    sugar.visit(fn.tree)
    return replace(fn, introduced={**fn.introduced, **sugar.introduced})


class _Sugar(DictForms, Transformer):
    def __init__(self, fn):
        self.fn = fn
        # (one walk, in gast.walk's order, for what every part below reads of the tree:
        # six walks of their own were most of this pass's time on a long function)
        everything = walk_list(fn.tree)
        names = [n for n in everything if isinstance(n, gast.Name)]
        bound = [n for n in names if isinstance(n.ctx, (gast.Store, gast.Param))]
        self.local = local_names_in(fn.tree, bound)
        self.taken = self.local | {n.id for n in names}
        self.displays = displays(fn.tree, bound)
        self.partials = self.local_partials(everything)
        self.dicts = dict_variables(everything)
        self.introduced = {}        # names this pass binds -> runtime helpers
        self.check_name = None      # the name bound to by_position, once a loop needs it
        # local names only ever bound to a sequence (their loops need no check)
        self.sequences = {name for name, values in _bindings(everything, bound).items()
                          if all(v is not None and self.surely_sequence(v, False)
                                 for v in values)}

    def local_partials(self, everything) -> dict:
        """Names bound once to functools.partial(F, ...) and only called: name -> the
        partial call (its bound arguments are constants or names that never change);
        also names bound once to a module-level function (`g = np.sin`), as a partial
        that binds nothing. (`everything`: the nodes of the function.)"""
        stores = calls = None       # (counted at the first candidate: most have none)
        params = {a.id for a in self.fn.tree.args.args + self.fn.tree.args.kwonlyargs}
        found = {}
        for stmt in self.fn.tree.body:
            if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and
                    isinstance(stmt.targets[0], gast.Name)):
                continue
            name, call = stmt.targets[0].id, self.aliased(stmt.value)
            if not (isinstance(call, gast.Call) and call.args):
                continue
            if stores is None:
                stores = {}
                for node in everything:
                    if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                        stores[node.id] = stores.get(node.id, 0) + 1
                calls = {id(n.func) for n in everything if isinstance(n, gast.Call)}
            if call is stmt.value and \
                    module_level(self.fn, call.func, self.local) is not functools.partial or \
                    stores[name] != 1 or any(k.arg is None for k in call.keywords):
                continue
            fixed = all(isinstance(a, gast.Constant) or isinstance(a, (gast.Name,
                        gast.Attribute)) and _unchanging(a, stores, params)
                        for a in call.args + [k.value for k in call.keywords])
            uses = [n for n in walk(self.fn.tree) if isinstance(n, gast.Name)
                    and n.id == name and isinstance(n.ctx, gast.Load)]
            if fixed and all(id(n) in calls for n in uses):
                found[name] = call
        return found

    def aliased(self, value):
        """`value`, or for a module-level function (np.sin, a function of the module)
        the call partial(value) that stands for it."""
        if not isinstance(value, (gast.Name, gast.Attribute)):
            return value
        obj = module_level(self.fn, value, self.local)
        if not isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, np.ufunc)):
            return value
        return gast.Call(func=load("partial"), args=[value], keywords=[])

    def visit_Assign(self, node):
        self.generic_visit(node)
        if len(node.targets) == 1 and isinstance(node.targets[0], gast.Name) and \
                node.targets[0].id in self.partials:
            return gast.copy_location(gast.Pass(), node)
        if len(node.targets) == 1 and isinstance(node.targets[0], gast.Name) and \
                isinstance(node.value, gast.DictComp):
            target = node.targets[0].id
            # one that reads its own name is filled under another, then copied (a plain
            # `e = _dict` would alias the dict the next trip of a loop fills)
            return self.dict_loop(target, node.value, node) or \
                self.dict_loop_then(node.value, node, gast.Assign(
                    targets=[store(target)], value=None, type_comment=None), copied=True)
        return node

    def visit_Return(self, node):
        self.generic_visit(node)
        if isinstance(node.value, gast.DictComp):
            return self.dict_loop_then(node.value, node, gast.Return(value=None))
        return node

    def dict_loop_then(self, comprehension, where, statement, copied=False):
        """The dict filled in a loop under a new name, then `statement` of it."""
        name = fresh("_dict", self.taken)
        statement.value = gast.Call(func=gast.Attribute(value=load(name), attr="copy",
                                                        ctx=gast.Load()),
                                    args=[], keywords=[]) if copied else load(name)
        return self.dict_loop(name, comprehension, where) + \
            [gast.copy_location(statement, where)]

    def dict_loop(self, name, comprehension, where):
        """A dict comprehension whose keys are not known when compiling, filled in a loop."""
        inside = Counter(n.id for n in gast.walk(comprehension) if isinstance(n, gast.Name))
        everywhere = Counter(n.id for n in gast.walk(self.fn.tree)
                             if isinstance(n, gast.Name))
        outside = {k for k in everywhere if everywhere[k] > inside[k]} | \
            {a.id for a in gast.walk(self.fn.tree.args) if isinstance(a, gast.Name)}
        return filled_in_loop(name, comprehension, outside, self.taken, where)

    def partial_call(self, node):
        """p(a, k=v) for p = functools.partial(F, b, k=c): F(b, a, k=v)."""
        made = self.partials[node.func.id]
        given = {k.arg for k in node.keywords}
        keywords = [copy.deepcopy(k) for k in made.keywords if k.arg not in given]
        return gast.copy_location(gast.Call(
            func=copy.deepcopy(made.args[0]),
            args=[copy.deepcopy(a) for a in made.args[1:]] + node.args,
            keywords=keywords + node.keywords), node)

    def builtin(self, node):
        """The name of the builtin `node` refers to (not shadowed), or None."""
        if isinstance(node, gast.Name) and node.id not in self.local:
            obj = module_level(self.fn, node, self.local)
            if obj is not None and getattr(builtins, node.id, None) is obj:
                return node.id
        return None

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, gast.Name) and node.func.id in self.partials:
            node = self.partial_call(node)
        node.args = self.spliced(node.args)
        node.keywords = self.spliced_keywords(node.keywords)
        name = self.builtin(node.func)
        if name in _CONSUMERS and node.args:
            node.args[0] = self.as_list(node.args[0])
        if name in ("list", "tuple") and len(node.args) == 1 and not node.keywords:
            arg = node.args[0]
            if isinstance(arg, gast.ListComp) and name == "list":
                return arg
            if isinstance(arg, (gast.List, gast.Tuple)) and \
                    not any(isinstance(e, gast.Starred) for e in arg.elts):
                kind = gast.List if name == "list" else gast.Tuple
                return gast.copy_location(kind(elts=arg.elts, ctx=gast.Load()), node)
        if name == "dict":
            return self.dict_call(node) or node
        if name in ("max", "min") and len(node.args) == 1 and not node.keywords and \
                not isinstance(node.args[0], gast.Starred):
            # of one iterable: a helper with a rule (the rule of max takes max(a, b))
            helper = max_of if name == "max" else min_of
            introduced = fresh(f"{name}_of", self.taken)
            self.introduced[introduced] = helper
            node.func = load(introduced)
            return node
        if isinstance(node.func, gast.Attribute) and node.func.attr == "get":
            return self.dict_get(node) or node
        return node

    def visit_For(self, node):
        self.generic_visit(node)
        node.iter = self.as_list(node.iter)
        if isinstance(node.iter, gast.Name) and node.iter.id in self.dicts:
            # `for k in d` runs over the keys (normalize indexes other iterables)
            node.iter = gast.Call(func=gast.Attribute(value=node.iter, attr="keys",
                                                      ctx=gast.Load()), args=[], keywords=[])
        node.iter = self.by_position(node.iter, node.lineno)
        return node

    def visit_comprehension(self, node):
        # a comprehension consumes what it runs over, as a for loop does
        self.generic_visit(node)
        lineno = getattr(node.iter, "lineno", None)
        node.iter = self.by_position(self.as_list(node.iter), lineno)
        return node

    def by_position(self, node, lineno):
        """The iterable of a loop, checked when it runs unless it is surely a sequence (of
        enumerate, zip and reversed too): by_position(xs, where, text)."""
        if isinstance(node, gast.Call) and self.builtin(node.func) in (
                "enumerate", "zip", "reversed") and not node.keywords:
            node.args = [self.by_position(a, lineno) for a in node.args]
            return node
        if lineno is None or self.surely_sequence(node) or \
                isinstance(node, gast.Name) and node.id in self.sequences:
            return node
        if self.check_name is None:
            self.check_name = fresh("by_position", self.taken)
            self.introduced[self.check_name] = by_position
        where = f"{self.fn.name} ({self.fn.short_filename}:{lineno})"
        return gast.copy_location(gast.Call(
            func=load(self.check_name), args=[node, const(where),
                                              const(self.fn.line_text(lineno))],
            keywords=[]), node)

    def surely_sequence(self, node, looped=True) -> bool:
        """Whether `node` is a list, tuple or array whatever the arguments are: a display,
        arithmetic, a call of NumPy or of a builtin that makes one; where it is `looped`
        over, also `d.keys()` (normalize reads it as the keys), enumerate, zip and a dict
        of this function's own (as its keys)."""
        if isinstance(node, (gast.List, gast.Tuple, gast.ListComp, gast.Constant)) or \
                isinstance(node, gast.BinOp) and not isinstance(node.op, gast.BitOr) or \
                looped and isinstance(node, gast.Name) and node.id in self.dicts:
            return True
        if isinstance(node, (gast.Name, gast.Attribute)):     # a module-level value
            return isinstance(module_level(self.fn, node, self.local),
                              (list, tuple, range, str, np.ndarray))
        if not isinstance(node, gast.Call):
            return False
        if looped and isinstance(node.func, gast.Attribute) and node.func.attr in (
                "items", "keys", "values") and not node.args:
            return True
        if self.builtin(node.func) in ("range", "list", "tuple", "sorted") or looped and \
                self.builtin(node.func) in ("zip", "enumerate", "reversed", "map"):
            return True
        obj = module_level(self.fn, node.func, self.local)
        return (getattr(obj, "__module__", None) or "").split(".")[0] == "numpy"

    def as_list(self, node):
        """A generator expression or a `map(...)` as the list comprehension it lists."""
        if isinstance(node, gast.GeneratorExp):
            return gast.copy_location(gast.ListComp(elt=node.elt, generators=node.generators),
                                      node)
        if isinstance(node, gast.Call) and self.builtin(node.func) == "map" and \
                len(node.args) >= 2 and not node.keywords:
            return self.map_comprehension(node) or node
        return node

    def map_comprehension(self, node):
        """map(f, a, b) as [f(_a, _b) for _a, _b in zip(a, b)] (a lambda's body inline)."""
        func, iterables = node.args[0], node.args[1:]
        if isinstance(func, gast.Lambda):
            args = func.args
            if args.vararg or args.kwarg or args.kwonlyargs or args.defaults or \
                    args.posonlyargs or len(args.args) != len(iterables):
                return None
            names, elt = [a.id for a in args.args], func.body
        elif isinstance(func, (gast.Name, gast.Attribute)):
            names = [fresh("_item", self.taken) for _ in iterables]
            elt = gast.Call(func=func, args=[load(n) for n in names], keywords=[])
        else:
            return None
        if len(names) == 1:
            target, source = store(names[0]), iterables[0]
        else:
            target = gast.Tuple(elts=[store(n) for n in names], ctx=gast.Store())
            source = gast.Call(func=load("zip"), args=iterables, keywords=[])
        comp = gast.comprehension(target=target, iter=source, ifs=[], is_async=0)
        return gast.copy_location(gast.ListComp(elt=elt, generators=[comp]), node)

    # starred arguments and elements

    def spliced(self, args):
        """`*` arguments whose elements are known: a display's, or a name bound once to
        a display (`*args` of a helper specialised for its call, varargs.py)."""
        out = []
        for arg in args:
            if isinstance(arg, gast.Starred):
                items = self.known_items(arg.value)
                if items is not None:
                    out.extend(items)
                    continue
            out.append(arg)
        return out

    def known_items(self, node):
        if isinstance(node, (gast.List, gast.Tuple)) and \
                not any(isinstance(e, gast.Starred) for e in node.elts):
            return list(node.elts)
        if isinstance(node, gast.Name) and isinstance(self.displays.get(node.id), int):
            return [gast.Subscript(value=load(node.id), slice=const(i), ctx=gast.Load())
                    for i in range(self.displays[node.id])]
        if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) and \
                isinstance(self.displays.get(node.value.id), int) and \
                isinstance(node.slice, gast.Slice):
            # *args[1:]: the positions the slice keeps
            bounds = [_int_constant(b) for b in (node.slice.lower, node.slice.upper,
                                                 node.slice.step)]
            if False in bounds:
                return None
            kept = range(self.displays[node.value.id])[slice(*bounds)]
            return [gast.Subscript(value=load(node.value.id), slice=const(i),
                                   ctx=gast.Load()) for i in kept]
        return None

    def spliced_keywords(self, keywords):
        out = []
        for k in keywords:
            keys = self.displays.get(k.value.id) if k.arg is None and \
                isinstance(k.value, gast.Name) else None
            if isinstance(keys, list) and all(isinstance(key, str) for key in keys):
                out.extend(gast.keyword(arg=key, value=gast.Subscript(
                    value=load(k.value.id), slice=const(key), ctx=gast.Load()))
                    for key in keys)
            elif k.arg is None and isinstance(k.value, gast.Dict) and \
                    all(is_key(key) and isinstance(key.value, str) for key in k.value.keys):
                out.extend(gast.keyword(arg=key.value, value=value)
                           for key, value in zip(k.value.keys, k.value.values))
            else:
                out.append(k)
        return out

    def visit_List(self, node):
        return self.starred_display(node)

    def visit_Tuple(self, node):
        return self.starred_display(node)

    def starred_display(self, node):
        """[*a, b, *c]: the elements of each part in turn, as a list comprehension."""
        self.generic_visit(node)
        if not isinstance(node.ctx, gast.Load) or \
                not any(isinstance(e, gast.Starred) for e in node.elts):
            return node
        node.elts = self.spliced(node.elts)
        if not any(isinstance(e, gast.Starred) for e in node.elts):
            return node
        if isinstance(node, gast.Tuple):
            return node         # a tuple of unknown length: refused by check
        parts = [e.value if isinstance(e, gast.Starred) else
                 gast.List(elts=[e], ctx=gast.Load()) for e in node.elts]
        part, item = fresh("_part", self.taken), fresh("_item", self.taken)
        gens = [gast.comprehension(target=store(part), iter=gast.Tuple(elts=parts,
                                                                        ctx=gast.Load()),
                                   ifs=[], is_async=0),
                gast.comprehension(target=store(item), iter=load(part), ifs=[], is_async=0)]
        return gast.copy_location(gast.ListComp(elt=load(item), generators=gens), node)


def _bindings(everything, bound) -> dict:
    """name -> the values assigned to it (None for a parameter, a loop target, an
    unpacking or any other binding), of a function whose nodes are `everything` and
    whose names bound are `bound` (both in gast.walk's order)."""
    found = {}
    single = {id(n.targets[0]): n.value for n in everything if isinstance(
        n, gast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], gast.Name)}
    for node in bound:
        found.setdefault(node.id, []).append(single.get(id(node)))
    return found


def _unchanging(node, stores, params) -> bool:
    """Whether a name (or the root of an attribute chain) always holds one value: a
    parameter never assigned, or a variable assigned once (before it could be read)."""
    while isinstance(node, gast.Attribute):
        node = node.value
    return isinstance(node, gast.Name) and stores.get(node.id, 0) <= (
        0 if node.id in params else 1)


def _int_constant(node):
    """The int a slice bound spells (`1`, `-1`), None for no bound, False otherwise."""
    if node is None:
        return None
    sign = 1
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        sign, node = -1, node.operand
    if isinstance(node, gast.Constant) and type(node.value) is int:
        return sign * node.value
    return False
