"""Normal forms of iteration: `for` over sequences, enumerate, zip, reversed, dict
items, and list comprehensions.

Sequences are iterated by index, so that the adjoint knows where each element came from:

    for i, v in enumerate(xs):          for i in range(len(xs)):
        ...                      ->         v = xs[i]
                                            ...
    ys = [f(v) for v in xs]      ->     _list = []
                                        for _iv in range(len(xs)):
                                            v2 = xs[_iv]
                                            _list.append(f(v2))
"""
from __future__ import annotations

import copy

import gast

from ..errors import error_at
from ..runtime import by_position
from ..ir.blocks import walk


class IterationForms:
    """The iteration half of normalize (mixed into its _Normalizer)."""

    def stmt_For(self, stmt):
        lineno = self.lineno
        # the target too: `for v in v` rebinds the name of the sequence it indexes
        self.rebound_in_loop = {n.id for s in [stmt.target] + stmt.body for n in walk(s)
                                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        iterable, elements = self.iteration(stmt.iter)
        index = self.namer.temp(_index_hint(stmt.target)) if elements else None
        target = stmt.target
        saved, self.out = self.out, []
        if elements:
            items = [_item(sequence, index) for sequence in elements]
            if len(items) > 1 and isinstance(target, gast.Name):
                # `for pair in zip(a, b)`: the name holds the tuple of the elements
                self.bind(target, gast.Tuple(elts=items, ctx=gast.Load()))
            else:
                for part, item in zip(_split_target(target, len(items)), items):
                    self.bind(part, item)
        loop_var = index or (target.id if isinstance(target, gast.Name) else None)
        if loop_var is None:
            loop_var = self.namer.temp("item")
            self.bind(target, _load(loop_var))
        prologue, self.out = self.out, saved
        body = prologue + self.block(stmt.body)
        self.lineno = lineno
        self.emit(gast.For(target=_store(loop_var), iter=iterable, body=body or [gast.Pass()],
                           orelse=[], type_comment=None))

    def iteration(self, node):
        """(iterable atom, element sources): what `for` iterates over.

        Sequences are iterated by index, so the adjoint knows where each element came
        from: `for x in xs` runs over range(len(xs)) and reads x = xs[i]. The element
        sources list one entry per target part: a sequence to index, or None for the index.
        """
        method = _dict_method(node)
        if method is not None:
            # for k, v in d.items(): the keys are the index
            mapping = self.atom(node.func.value, "dict")
            keys = gast.Call(func=gast.Attribute(value=mapping, attr="keys", ctx=gast.Load()),
                             args=[], keywords=[])
            # (a list of them: grad of grad reads `for k in _keys` again by position,
            # which a dict view, not indexable, would refuse when it runs)
            keys = gast.Call(func=_load("list"), args=[keys], keywords=[])
            parts = {"items": [None, mapping], "keys": [None], "values": [mapping]}[method]
            return self.atom(keys, "keys"), parts
        callee = self.builtin_callee(node)
        if callee is range and not node.keywords:
            return gast.Call(func=node.func, args=[self.atom(a, "bound") for a in node.args],
                             keywords=[]), None
        if callee is enumerate and len(node.args) == 1 and not node.keywords:
            inner, elements = self.iteration(node.args[0])
            if elements is None or None in elements:
                raise error_at(node, self.fn, "enumerate() of this iterable is not "
                                              "supported; enumerate a list, an array or "
                                              "zip of them")
            # enumerate(zip(a, b)): the index, then the pair of elements
            return inner, [None, elements[0] if len(elements) == 1 else tuple(elements)]
        if callee is zip and node.args and not node.keywords:
            sequences = [self.sequence(a) for a in node.args]
            lengths = [gast.Call(func=_load("len"), args=[q], keywords=[]) for q in sequences]
            count = lengths[0] if len(lengths) == 1 else gast.Call(
                func=_load("min"), args=lengths, keywords=[])
            return self.range_of(count), sequences
        if callee is reversed and len(node.args) == 1:
            sequence = self.sequence(node.args[0])
            length = self.atom(gast.Call(func=_load("len"), args=[sequence], keywords=[]),
                               "len")
            last = self.atom(gast.BinOp(left=length, op=gast.Sub(),
                                        right=gast.Constant(value=1, kind=None)), "last")
            rng = gast.Call(func=_load("range"), args=[last, gast.Constant(value=-1, kind=None),
                                                       gast.Constant(value=-1, kind=None)],
                            keywords=[])
            return rng, [sequence]
        sequence = self.sequence(node)
        return self.range_of(gast.Call(func=_load("len"), args=[sequence], keywords=[])), \
            [sequence]

    def sequence(self, node):
        """The sequence a loop indexes: a name the body rebinds is read once, before the
        loop (Python iterates over the object it named when the loop started).
        by_position(xs, ...) of forms/sugar.py is a check made before the loop."""
        if self.is_by_position(node):
            checked = self.atom(node.args[0], "seq")
            self.emit(gast.Expr(value=gast.Call(func=node.func, args=[checked] + node.args[1:],
                                                keywords=[])))
            node = checked
        seq = self.atom(node, "seq")
        if isinstance(seq, gast.Name) and seq.id in self.rebound_in_loop:
            seq = self.atom(node, "seq", fresh=True)
        return seq

    def is_by_position(self, node) -> bool:
        if not isinstance(node, gast.Call) or not isinstance(node.func, gast.Name):
            return False
        found, obj = self.fn.lookup(node.func.id)
        return found and obj is by_position

    def range_of(self, count):
        return gast.Call(func=_load("range"), args=[count], keywords=[])

    def builtin_callee(self, node):
        if not isinstance(node, gast.Call) or not isinstance(node.func, gast.Name):
            return None
        found, obj = self.fn.lookup(node.func.id)
        return obj if found and node.func.id in self.resolution.global_roots else None

    def expr_ListComp(self, node):
        """[e for x in xs if c] -> a loop appending to a fresh list (x renamed, as Python
        gives a comprehension its own scope; the first iterable is read in the enclosing
        one, so `[v for v in v + x]` reads the outer v)."""
        name = self.namer.temp("list")
        self.assign(name, gast.List(elts=[], ctx=gast.Load()))
        renames = {}
        for gen in node.generators:
            for n in walk(gen.target):
                if isinstance(n, gast.Name):
                    renames[n.id] = self.namer.fresh(n.id)
        outer_iter = node.generators[0].iter        # evaluated in the enclosing scope
        node = _rename(copy.deepcopy(node), renames)
        node.generators[0].iter = copy.deepcopy(outer_iter)
        append = gast.Expr(value=gast.Call(
            func=gast.Attribute(value=_load(name), attr="append", ctx=gast.Load()),
            args=[node.elt], keywords=[]))
        inner = [append]
        for gen in reversed(node.generators):
            for cond in reversed(gen.ifs):
                inner = [gast.If(test=cond, body=inner, orelse=[])]
            inner = [gast.For(target=gen.target, iter=gen.iter, body=inner, orelse=[],
                              type_comment=None)]
        for stmt in inner:
            gast.copy_location(stmt, node)
            for n in walk(stmt):
                if isinstance(n, gast.stmt) and not hasattr(n, "lineno"):
                    n.lineno = self.lineno
        lineno = self.lineno
        for stmt in inner:
            self.stmt_For(stmt)
        self.lineno = lineno
        return _load(name)


def _item(sequence, index):
    """The element a loop's target part reads at `index`: the index itself (None), an
    item of a sequence, or a tuple of items (a tuple of sequences: enumerate(zip(...)))."""
    if sequence is None:
        return _load(index)
    if isinstance(sequence, tuple):
        return gast.Tuple(elts=[_item(q, index) for q in sequence], ctx=gast.Load())
    return gast.Subscript(value=sequence, slice=_load(index), ctx=gast.Load())


def _index_hint(target) -> str:
    """The index of `for v in vs` is named after v: `_i_v`... kept short: `_iv`."""
    first = target.elts[-1] if isinstance(target, (gast.Tuple, gast.List)) else target
    return f"i{first.id.strip('_')}" if isinstance(first, gast.Name) else "i"


def _dict_method(node):
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
            and node.func.attr in ("items", "keys", "values") and not node.args:
        return node.func.attr
    return None


def _rename(node, renames):
    for n in walk(node):
        if isinstance(n, gast.Name) and n.id in renames:
            n.id = renames[n.id]
    return node


def _split_target(target, count):
    if count == 1:
        return [target]
    if isinstance(target, (gast.Tuple, gast.List)) and len(target.elts) == count:
        return target.elts
    raise AssertionError("target does not match the iteration")


def _load(name: str):
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


def _store(name: str):
    return gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None)
