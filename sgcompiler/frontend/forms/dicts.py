"""The dict forms of sugar.py (part of parsing): a mixin of its rewriter.

    dict(a=x, b=y), dict([("a", x)]) -> {"a": x, "b": y}
    dict(zip(("a", "b"), vs))       ->  {"a": vs[0], "b": vs[1]}
    d.get("a", y)                   ->  d["a"] if "a" in d else y
    {k: f(v) for k, v in d.items()} ->  {"a": f(d["a"]), "b": f(d["b"])}   (d's keys known)
    {k: v for k, v in d.items() if k != "b"}  ->  {"a": d["a"]}   (an `if` on keys alone)

For those the keys must be known when the function is compiled: constants, a module-level
tuple of them, or a dict display of this function that is only read. Any other dict
comprehension assigned to a name or returned is filled key by key in a loop, which the
rest of the front end reads (an `if` on values is a branch like any other):

    e = {k: v * 2 for k, v in d.items() if np.sum(v) > 0}
 ->
    e = {}
    for k, v in d.items():
        if np.sum(v) > 0:
            e[k] = v * 2
"""
from __future__ import annotations

import ast
import copy
from collections import Counter

import gast

from ...ir.builders import const, load, store
from ...runtime import too_few_values
from ..depends import module_level
from ...ir.blocks import nodes
from ...ir.ast_tree import to_ast


def fresh(base: str, taken: set) -> str:
    """`base`, or `base_2`, ... : a name not in `taken` (which it joins)."""
    name, k = base, 2
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    taken.add(name)
    return name


class DictForms:
    """dict(...), d.get and dict comprehensions (mixed into sugar._Sugar, which has
    `fn`, `local`, `displays` and `builtin`)."""

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
        if node.args:
            display = self.checked_length(node.args[0], display, len(pairs) - len(node.keywords))
        return gast.copy_location(display, node)

    def checked_length(self, arg, display, count):
        """`display`, made from zip(KEYS, vs) with `count` keys where the length of `vs` is
        not known when compiling: Python would make a shorter dict for a shorter `vs`,
        whose keys the compiled code cannot follow, so that is refused when it runs
        (runtime.too_few_values) rather than failing on vs[i]."""
        if not (isinstance(arg, gast.Call) and isinstance(arg.args[1], gast.Name)) or \
                isinstance(self.displays.get(arg.args[1].id), int) or not count:
            return display
        values = arg.args[1].id
        helper = fresh("too_few_values", self.taken)
        self.introduced[helper] = too_few_values
        length = gast.Call(func=load("len"), args=[load(values)], keywords=[])
        keys = ast.unparse(to_ast(arg.args[0]))
        refusal = gast.Call(func=load(helper), args=[
            length, const(count), const(f"dict(zip({keys}, {values}))")], keywords=[])
        test = gast.Compare(left=copy.deepcopy(length), ops=[gast.GtE()],
                            comparators=[const(count)])
        return gast.IfExp(test=test, body=display, orelse=refusal)

    def pairs(self, arg):
        """The (key, value) pairs of a literal list of pairs or of zip(KEYS, values)."""
        if isinstance(arg, (gast.List, gast.Tuple)):
            out = []
            for item in arg.elts:
                if not (isinstance(item, (gast.Tuple, gast.List)) and len(item.elts) == 2
                        and is_key(item.elts[0])):
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
        """`count` expressions for the first elements of `node` (a display or a name), or
        fewer where the display is shorter (zip stops at the shorter)."""
        if isinstance(node, (gast.List, gast.Tuple)) and \
                not any(isinstance(e, gast.Starred) for e in node.elts):
            return node.elts[:count]
        if isinstance(node, gast.Name) and isinstance(self.displays.get(node.id), int):
            count = min(count, self.displays[node.id])
        if isinstance(node, gast.Name):
            return [gast.Subscript(value=load(node.id), slice=const(i), ctx=gast.Load())
                    for i in range(count)]
        return None

    def constant_keys(self, node):
        """The keys a display of constants or a module-level tuple of them holds."""
        if isinstance(node, (gast.List, gast.Tuple)):
            return [e.value for e in node.elts] if all(is_key(e) for e in node.elts) \
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
        if len(node.generators) != 1:
            return node
        gen = node.generators[0]
        unrolled = self.unrolled(gen.target, gen.iter)
        if unrolled is None:
            return node
        keys, values = [], []
        for bindings in unrolled:
            kept = [_known(_substituted(test, bindings)) for test in gen.ifs]
            if any(k is None for k in kept):
                return node         # an `if` on values: refused by check
            if not all(kept):
                continue
            keys.append(_substituted(node.key, bindings))
            values.append(_substituted(node.value, bindings))
        if not all(is_key(k) for k in keys):
            return node
        display = gast.Dict(keys=keys, values=values)
        if isinstance(gen.iter, gast.Call) and self.builtin(gen.iter.func) == "zip":
            display = self.checked_length(gen.iter, display, len(keys))
        return gast.copy_location(display, node)

    def unrolled(self, target, iterable):
        """A list of {name: expression} per iteration, or None when unknown."""
        if isinstance(target, gast.Name):
            keys = self.constant_keys(iterable)
            if keys is None and dict_method(iterable) == "keys":
                keys = self.displays.get(iterable.func.value.id)
            return None if keys is None else [{target.id: const(k)} for k in keys]
        if not (isinstance(target, gast.Tuple) and len(target.elts) == 2 and
                all(isinstance(e, gast.Name) for e in target.elts)):
            return None
        k, v = (e.id for e in target.elts)
        if dict_method(iterable) == "items":
            name = iterable.func.value.id
            keys = self.displays.get(name)
            return None if keys is None else [
                {k: const(key), v: gast.Subscript(value=load(name), slice=const(key),
                                                  ctx=gast.Load())} for key in keys]
        found = self.pairs(iterable)
        return None if found is None else [{k: key, v: value} for key, value in found]


def filled_in_loop(name, node, outside, taken, where):
    """The statements that fill the dict `name` as the comprehension `node` would: `name =
    {}`, then a loop per generator, an `if` per condition, and `name[key] = value`, each
    at the line of `where`; None when the comprehension reads `name`. A variable of the
    comprehension that the function also uses elsewhere (in `outside`) is renamed, since
    the loop's variables outlive it."""
    if name in {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}:
        return None
    first_iter = {id(n) for n in gast.walk(node.generators[0].iter)}   # read outside it
    renamed = {}
    for gen in node.generators:
        for target in gast.walk(gen.target):
            if isinstance(target, gast.Name) and target.id in outside:
                renamed.setdefault(target.id, fresh(f"_{target.id}", taken))
    body = [gast.Assign(targets=[gast.Subscript(value=load(name), slice=node.key,
                                                ctx=gast.Store())],
                        value=node.value, type_comment=None)]
    for gen in reversed(node.generators):
        for test in reversed(gen.ifs):
            body = [gast.If(test=test, body=body, orelse=[])]
        body = [gast.For(target=gen.target, iter=gen.iter, body=body, orelse=[],
                         type_comment=None)]
    statements = [gast.Assign(targets=[store(name)], value=gast.Dict(keys=[], values=[]),
                              type_comment=None)] + body
    for statement in statements:
        for n in gast.walk(statement):
            gast.copy_location(n, where)
            if isinstance(n, gast.Name) and n.id in renamed and id(n) not in first_iter:
                n.id = renamed[n.id]
    return statements


def _known(test):
    """The truth of `test` where it is made of constants alone (comparisons, `in` a
    display, and, or, not), else None."""
    if isinstance(test, gast.Constant):
        return test.value
    if isinstance(test, (gast.Tuple, gast.List)):
        return tuple(e.value for e in test.elts) \
            if all(isinstance(e, gast.Constant) for e in test.elts) else None
    if isinstance(test, gast.UnaryOp) and isinstance(test.op, gast.Not):
        value = _known(test.operand)
        return None if value is None else not value
    if isinstance(test, gast.BoolOp):
        values = [_known(v) for v in test.values]
        if any(v is None for v in values):
            return None
        return all(values) if isinstance(test.op, gast.And) else any(values)
    if isinstance(test, gast.Compare) and len(test.ops) == 1:
        left, right = _known(test.left), _known(test.comparators[0])
        compare = _COMPARISONS.get(type(test.ops[0]))
        if left is None or right is None or compare is None:
            return None
        try:
            return bool(compare(left, right))
        except TypeError:
            return None
    return None


_COMPARISONS = {gast.Eq: lambda a, b: a == b, gast.NotEq: lambda a, b: a != b,
                gast.Lt: lambda a, b: a < b, gast.LtE: lambda a, b: a <= b,
                gast.Gt: lambda a, b: a > b, gast.GtE: lambda a, b: a >= b,
                gast.In: lambda a, b: a in b, gast.NotIn: lambda a, b: a not in b}


def is_key(node) -> bool:
    return isinstance(node, gast.Constant) and type(node.value) in (str, int)


def dict_method(node):
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
            node.func.attr in ("items", "keys") and not node.args and \
            isinstance(node.func.value, gast.Name):
        return node.func.attr
    return None


def displays(tree, bound) -> dict:
    """Names bound once, by a top-level assignment, to a display whose elements are known:
    name -> its length (a list or tuple) or its list of keys (a dict with constant keys).
    `bound`: the Name nodes that bind (Store or Param) in `tree`."""
    candidates = [stmt for stmt in tree.body if isinstance(stmt, gast.Assign) and
                  len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name) and
                  isinstance(stmt.value, (gast.List, gast.Tuple, gast.Dict))]
    if not candidates:
        return {}       # (most functions: no walk of the tree)
    stores = Counter(node.id for node in bound)
    found = {}
    for stmt in candidates:
        name, value = stmt.targets[0].id, stmt.value
        if stores.get(name) != 1:
            continue
        if not isinstance(value, gast.Tuple) and not _only_read(tree, name):
            continue        # a list or dict that may change (xs.append(v), h(xs))
        if isinstance(value, (gast.List, gast.Tuple)) and \
                not any(isinstance(e, gast.Starred) for e in value.elts):
            found[name] = len(value.elts)
        elif isinstance(value, gast.Dict) and all(is_key(k) for k in value.keys):
            found[name] = [k.value for k in value.keys]
    return found


def _only_read(tree, name) -> bool:
    """Whether every use of `name` only reads it: `name[i]`, `*name`, `**name`,
    `len(name)`, `zip(..., name)`, `k in name`, `name.items()/keys()/values()`."""
    reads = set()
    for node in nodes(tree):
        if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Load):
            reads.add(id(node.value))
        elif isinstance(node, gast.Starred):
            reads.add(id(node.value))
        elif isinstance(node, gast.keyword) and node.arg is None:
            reads.add(id(node.value))
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
                node.func.id == "len" and len(node.args) == 1:
            reads.add(id(node.args[0]))
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
                node.func.id == "zip" and not node.keywords:
            reads.update(id(arg) for arg in node.args)
        elif isinstance(node, gast.Compare) and len(node.ops) == 1 and \
                isinstance(node.ops[0], (gast.In, gast.NotIn)):
            reads.add(id(node.comparators[0]))
        elif dict_method(node) or isinstance(node, gast.Call) and \
                isinstance(node.func, gast.Attribute) and node.func.attr == "values" \
                and not node.args:
            reads.add(id(node.func.value))
    return all(id(n) in reads for n in nodes(tree) if isinstance(n, gast.Name)
               and n.id == name and isinstance(n.ctx, gast.Load))


def _substituted(expr, bindings):
    """A copy of `expr` with each read of a name in `bindings` replaced by its expression."""
    class _Sub(gast.NodeTransformer):
        def visit_Name(self, node):
            if isinstance(node.ctx, gast.Load) and node.id in bindings:
                return copy.deepcopy(bindings[node.id])
            return node
    return _Sub().visit(copy.deepcopy(expr))


def dict_variables(everything) -> set:
    """Local variables that are only ever assigned dicts (displays, comprehensions), of a
    function whose nodes are `everything`."""
    if not any(isinstance(node, gast.Assign) and isinstance(node.value, (gast.Dict,
                                                                          gast.DictComp))
               for node in everything):
        return set()    # (most functions: none assigns a dict)
    kinds = {}
    for node in everything:
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Param)):
            kinds.setdefault(node.id, set()).add("other")
    for node in everything:
        if isinstance(node, gast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], gast.Name):
            kinds[node.targets[0].id].discard("other")
    for node in everything:
        if isinstance(node, gast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], gast.Name):
            is_dict = isinstance(node.value, (gast.Dict, gast.DictComp))
            kinds[node.targets[0].id].add("dict" if is_dict else "other")
    return {name for name, found in kinds.items() if found == {"dict"}}
