"""Python forms that have a plainer spelling, rewritten to it (part of parsing).

Runs after contexts.py, before nested.py and check; what it makes is what the front end
already reads:

    sum(v ** 2 for v in xs)         ->  sum([v ** 2 for v in xs])
    list(map(lambda t: t * w, xs))  ->  [t * w for t in xs]
    dict(a=x, b=y), dict([("a", x)]) -> {"a": x, "b": y}
    dict(zip(("a", "b"), vs))       ->  {"a": vs[0], "b": vs[1]}
    d.get("a", y)                   ->  d["a"] if "a" in d else y
    {k: f(v) for k, v in d.items()} ->  {"a": f(d["a"]), "b": f(d["b"])}   (d's keys known)
    f(*(a, b)), [*xs, y]            ->  f(a, b), [_item for _part in (xs, [y]) for _item in _part]

Statements (starred unpacking, `try`) are in statements.py. What is left (a dict
comprehension whose keys are not known when the function is compiled, `*` of something
else) stays as it was and is refused by check or normalize, with its line.
"""
from __future__ import annotations

import builtins
import copy
from dataclasses import replace

import gast

from .depends import module_level
from .source import FunctionSource

# builtins that consume an iterable once: a list gives what a generator gives
_CONSUMERS = ("sum", "max", "min", "list", "tuple", "sorted", "any", "all", "enumerate",
              "zip", "reversed")


def load(id_):
    return gast.Name(id=id_, ctx=gast.Load(), annotation=None, type_comment=None)


def store(id_):
    return gast.Name(id=id_, ctx=gast.Store(), annotation=None, type_comment=None)


def const(value):
    return gast.Constant(value=value, kind=None)


def local_names(tree) -> set:
    """Every name the function stores or takes as a parameter."""
    return {n.id for n in gast.walk(tree) if isinstance(n, gast.Name)
            and isinstance(n.ctx, (gast.Store, gast.Param))}


def fresh(base: str, taken: set) -> str:
    """`base`, or `base_2`, ... : a name not in `taken` (which it joins)."""
    name, k = base, 2
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    taken.add(name)
    return name


def rewrite_expressions(fn: FunctionSource) -> FunctionSource:
    """`fn` with the expression forms of the module docstring rewritten."""
    if not any(isinstance(n, (gast.Call, gast.DictComp, gast.Starred))
               for n in gast.walk(fn.tree)):
        return fn
    _Sugar(fn).visit(fn.tree)
    return replace(fn)


class _Sugar(gast.NodeTransformer):
    def __init__(self, fn):
        self.fn = fn
        self.local = local_names(fn.tree)
        self.taken = self.local | {n.id for n in gast.walk(fn.tree)
                                   if isinstance(n, gast.Name)}
        self.displays = _displays(fn.tree)

    def builtin(self, node):
        """The name of the builtin `node` refers to (not shadowed), or None."""
        if isinstance(node, gast.Name) and node.id not in self.local:
            obj = module_level(self.fn, node, self.local)
            if obj is not None and getattr(builtins, node.id, None) is obj:
                return node.id
        return None

    def visit_Call(self, node):
        self.generic_visit(node)
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
        if isinstance(node.func, gast.Attribute) and node.func.attr == "get":
            return self.dict_get(node) or node
        return node

    def visit_For(self, node):
        self.generic_visit(node)
        node.iter = self.as_list(node.iter)
        return node

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

    # dicts

    def dict_call(self, node):
        """dict(a=x), dict([("a", x)]), dict(zip(KEYS, values)) as a display."""
        if any(k.arg is None for k in node.keywords) or len(node.args) > 1:
            return None
        pairs = [(const(k.arg), k.value) for k in node.keywords]
        if node.args:
            found = self.pairs(node.args[0])
            if found is None:
                return None
            pairs = found + pairs
        display = gast.Dict(keys=[k for k, _ in pairs], values=[v for _, v in pairs])
        return gast.copy_location(display, node)

    def pairs(self, arg):
        """The (key, value) pairs of a literal list of pairs or of zip(KEYS, values)."""
        if isinstance(arg, (gast.List, gast.Tuple)):
            out = []
            for item in arg.elts:
                if not (isinstance(item, (gast.Tuple, gast.List)) and len(item.elts) == 2
                        and _is_key(item.elts[0])):
                    return None
                out.append(tuple(item.elts))
            return out
        if isinstance(arg, gast.Call) and self.builtin(arg.func) == "zip" and \
                len(arg.args) == 2 and not arg.keywords:
            keys = self.constant_keys(arg.args[0])
            values = arg.args[1]
            if keys is None:
                return None
            return [(const(k), v) for k, v in zip(keys, self.items(values, len(keys)))] \
                if self.items(values, len(keys)) is not None else None
        return None

    def items(self, node, count):
        """`count` expressions for the first elements of `node` (a display or a name)."""
        if isinstance(node, (gast.List, gast.Tuple)) and \
                not any(isinstance(e, gast.Starred) for e in node.elts):
            return node.elts[:count]
        if isinstance(node, gast.Name):
            return [gast.Subscript(value=load(node.id), slice=const(i), ctx=gast.Load())
                    for i in range(count)]
        return None

    def constant_keys(self, node):
        """The keys a display of constants or a module-level tuple of them holds."""
        if isinstance(node, (gast.List, gast.Tuple)):
            return [e.value for e in node.elts] if all(_is_key(e) for e in node.elts) \
                else None
        if isinstance(node, (gast.Name, gast.Attribute)):
            value = module_level(self.fn, node, self.local)
            if isinstance(value, (tuple, list)) and \
                    all(type(v) in (str, int) for v in value):
                return list(value)
        return None

    def dict_get(self, node):
        """d.get(k, default) as `d[k] if k in d else default` (d a local name)."""
        mapping = node.func.value
        if not (isinstance(mapping, gast.Name) and mapping.id in self.local) or \
                node.keywords or not 1 <= len(node.args) <= 2:
            return None
        key = node.args[0]
        if not isinstance(key, (gast.Constant, gast.Name)):
            return None
        default = node.args[1] if len(node.args) == 2 else const(None)
        test = gast.Compare(left=copy.deepcopy(key), ops=[gast.In()],
                            comparators=[load(mapping.id)])
        item = gast.Subscript(value=load(mapping.id), slice=copy.deepcopy(key),
                              ctx=gast.Load())
        return gast.copy_location(gast.IfExp(test=test, body=item, orelse=default), node)

    def visit_DictComp(self, node):
        """{k: e for k in KEYS} and {k: e for k, v in d.items()} (d a dict display) with
        the keys known when the function is compiled: the display they make."""
        self.generic_visit(node)
        if len(node.generators) != 1 or node.generators[0].ifs:
            return node
        gen = node.generators[0]
        unrolled = self.unrolled(gen.target, gen.iter)
        if unrolled is None:
            return node
        keys, values = [], []
        for bindings in unrolled:
            keys.append(_substituted(node.key, bindings))
            values.append(_substituted(node.value, bindings))
        if not all(_is_key(k) for k in keys):
            return node
        return gast.copy_location(gast.Dict(keys=keys, values=values), node)

    def unrolled(self, target, iterable):
        """A list of {name: expression} per iteration, or None when unknown."""
        if isinstance(target, gast.Name):
            keys = self.constant_keys(iterable)
            if keys is None and _dict_method(iterable) == "keys":
                keys = self.displays.get(iterable.func.value.id)
            return None if keys is None else [{target.id: const(k)} for k in keys]
        if not (isinstance(target, gast.Tuple) and len(target.elts) == 2 and
                all(isinstance(e, gast.Name) for e in target.elts)):
            return None
        k, v = (e.id for e in target.elts)
        if _dict_method(iterable) == "items":
            name = iterable.func.value.id
            keys = self.displays.get(name)
            return None if keys is None else [
                {k: const(key), v: gast.Subscript(value=load(name), slice=const(key),
                                                  ctx=gast.Load())} for key in keys]
        found = self.pairs(iterable)
        return None if found is None else [{k: key, v: value} for key, value in found]

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
                    all(_is_key(key) and isinstance(key.value, str) for key in k.value.keys):
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


def _is_key(node) -> bool:
    return isinstance(node, gast.Constant) and type(node.value) in (str, int)


def _dict_method(node):
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
            node.func.attr in ("items", "keys") and not node.args and \
            isinstance(node.func.value, gast.Name):
        return node.func.attr
    return None


def _displays(tree) -> dict:
    """Names bound once, by a top-level assignment, to a display whose elements are known:
    name -> its length (a list or tuple) or its list of keys (a dict with constant keys)."""
    stores = {}
    for node in gast.walk(tree):
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Param)):
            stores[node.id] = stores.get(node.id, 0) + 1
    found = {}
    for stmt in tree.body:
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and
                isinstance(stmt.targets[0], gast.Name)):
            continue
        name, value = stmt.targets[0].id, stmt.value
        if stores.get(name) != 1:
            continue
        if not isinstance(value, gast.Tuple) and not _only_read(tree, name):
            continue        # a list or dict that may change (xs.append(v), h(xs))
        if isinstance(value, (gast.List, gast.Tuple)) and \
                not any(isinstance(e, gast.Starred) for e in value.elts):
            found[name] = len(value.elts)
        elif isinstance(value, gast.Dict) and all(_is_key(k) for k in value.keys):
            found[name] = [k.value for k in value.keys]
    return found


def _only_read(tree, name) -> bool:
    """Whether every use of `name` only reads it: `name[i]`, `*name`, `**name`,
    `len(name)`, `k in name`, `name.items()/keys()/values()`."""
    reads = set()
    for node in gast.walk(tree):
        if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Load):
            reads.add(id(node.value))
        elif isinstance(node, gast.Starred):
            reads.add(id(node.value))
        elif isinstance(node, gast.keyword) and node.arg is None:
            reads.add(id(node.value))
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
                node.func.id == "len" and len(node.args) == 1:
            reads.add(id(node.args[0]))
        elif isinstance(node, gast.Compare) and len(node.ops) == 1 and \
                isinstance(node.ops[0], (gast.In, gast.NotIn)):
            reads.add(id(node.comparators[0]))
        elif _dict_method(node) or isinstance(node, gast.Call) and \
                isinstance(node.func, gast.Attribute) and node.func.attr == "values" \
                and not node.args:
            reads.add(id(node.func.value))
    return all(id(n) in reads for n in gast.walk(tree) if isinstance(n, gast.Name)
               and n.id == name and isinstance(n.ctx, gast.Load))


def _substituted(expr, bindings):
    """A copy of `expr` with each read of a name in `bindings` replaced by its expression."""
    class _Sub(gast.NodeTransformer):
        def visit_Name(self, node):
            if isinstance(node.ctx, gast.Load) and node.id in bindings:
                return copy.deepcopy(bindings[node.id])
            return node
    return _Sub().visit(copy.deepcopy(expr))
