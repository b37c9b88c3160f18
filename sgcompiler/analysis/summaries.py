"""What a caller needs to know about a user function it calls, worked out from the
callee's own code, with one cache and one depth limit for all of it:

    returned_params(fn)     parameters whose array the result may be (or view, or hold)
    keyed_params(fn)        parameters used as dicts (so the caller's argument is a tree)
    written_params(fn)      parameters whose array fn changes in place (from the source
                            as written: a procedure without a return too)
    call_result(fn, arrays) (shape, dtype) of the result for arguments of known shapes

Each summary runs the front end on the callee (frontend.read_front_end: one for all the
summaries of a compilation, then handed to the compilation of the callee's piece) and one
analysis on it (the analyses call back here for the callee's own callees). While a
summary is being worked out, a recursive call sees a conservative answer; callees of
callees are followed MAX_DEPTH deep at most, and a callee the front end cannot read gets
the conservative answer too.

The analyses receive a `Callees` as an argument (`SUMMARIES` is the shared one); without
it they assume the least (a result may be any argument, no argument is a dict, a result's
shape is unknown). That keeps the arrows one way: this module imports the analyses, never
the other way round.
"""
from __future__ import annotations

import gast

from .. import rules
from ..errors import SGCompilerError
from ..frontend import read_front_end, source_uses
from ..frontend.depends import LOCK, Depends, recording
from ..ir.blocks import nodes
from .activity import IN_PLACE_NAMES, MUTATING_METHODS, all_params, is_view
from .ops import APPEND, CALL, CONTAINER, COPY, INDEX, STOPPED, assignments, describe_stmt, \
    target_of
from .shapes import shapes
from .sizes import WEAK, Elements

MAX_DEPTH = 8           # callees of callees followed, at most


class Callees:
    """Summaries of user functions, cached by code object, globals, rules and arguments,
    each valid while the names the callee's code reads refer to the same objects."""

    def __init__(self):
        self._cache: dict = {}
        self._depth = 0

    def returned_params(self, fn) -> frozenset:
        """Parameters of `fn` whose array its result may be (or be a view of, or hold in
        a tuple): `s = u; for ...: s = ...; return s` may return u itself."""
        return self._summary("returned", fn, (), self._returned, all_params(fn))

    def written_params(self, fn) -> frozenset:
        """Parameters whose array `fn` may change in place (`r[0] = v`, `r.fill(v)`,
        out=r, or passing r to a function that does) while it still holds the caller's
        array: before `fn` binds the name to another value in the same block or an
        enclosing one (a binding inside a branch may not run)."""
        return self._summary("written", fn, (), self._written, frozenset())

    def keyed_params(self, fn) -> frozenset:
        """Parameters of `fn` that it uses as dicts: indexed with a string, iterated with
        .items()/.keys()/.values(), or passed to a function that does so."""
        return self._summary("keyed", fn, (), self._keyed, frozenset())

    def call_result(self, fn, arrays: tuple):
        """(shape, dtype) of what `fn` returns for arguments of the (parameter, shape,
        dtype) `arrays`, or None when it is not certain."""
        return self._summary("result", fn, arrays, self._result, None)

    def _summary(self, kind, fn, arguments, work, conservative):
        code = getattr(fn, "__code__", None)
        if code is None:
            return conservative
        key = (kind, code, id(getattr(fn, "__globals__", None)), arguments, rules.version())
        with LOCK:
            if key in self._cache:
                found, depends = self._cache[key]
                # a summary holds while what fn's names refer to is the same
                if depends is None or depends.holds_for(fn):
                    if depends is not None:
                        depends.replay(fn)
                    return found
            if self._depth >= MAX_DEPTH:
                return conservative
            self._cache[key] = conservative, None      # what a recursive call sees meanwhile
            self._depth += 1
            try:
                with recording() as seen:
                    found = work(fn, arguments)
            except SGCompilerError:
                found = conservative
            finally:
                self._depth -= 1
            self._cache[key] = found, Depends.of(seen, fn)
            return found

    def _returned(self, fn, _):
        norm, resolution, src = _read(fn)
        links = {}
        for stmt in assignments(norm.body):
            op = describe_stmt(stmt, resolution, src)
            if op.kind in (COPY, STOPPED, INDEX, CONTAINER, APPEND) or is_view(op, stmt):
                sources = [n for _, n in op.inputs] or list(op.reads[:1])
            elif op.kind == CALL:
                sources = [a.id for p, a in op.args.items() if isinstance(a, gast.Name)
                           and p in self.returned_params(op.rule)]
            else:
                continue
            links.setdefault(target_of(stmt), set()).update(sources)
        reached, todo = set(), [norm.returned]
        while todo:
            name = todo.pop()
            if name not in reached:
                reached.add(name)
                todo.extend(links.get(name, ()))
        return all_params(fn) & reached

    def _written(self, fn, _):
        # (read from the source as written: a procedure without a return, called for
        # what it changes, is what this is for, and the front end refuses it)
        src = source_uses(fn)[0]            # (this compilation's parse, shared)
        tree = src.tree
        params = all_params(fn)
        found = set()

        def written(stmt) -> list:
            """Names stmt changes in place (by its form alone)."""
            targets = stmt.targets if isinstance(stmt, gast.Assign) else \
                [stmt.target] if isinstance(stmt, gast.AugAssign) else []
            out = [t.value.id for t in targets if isinstance(t, gast.Subscript) and
                   isinstance(t.value, gast.Name)]
            if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
                out.append(stmt.target.id)      # (r += v changes the caller's array)
            for call in (n for n in nodes(stmt) if isinstance(n, gast.Call)):
                out += [k.value.id for k in call.keywords
                        if k.arg == "out" and isinstance(k.value, gast.Name)]
                func = call.func
                if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) \
                        and func.attr in MUTATING_METHODS:
                    out.append(func.value.id)
                if isinstance(func, gast.Attribute) and func.attr in IN_PLACE_NAMES and \
                        call.args and isinstance(call.args[0], gast.Name):
                    out.append(call.args[0].id)
                found_callee, callee = src.lookup(func.id) if isinstance(func, gast.Name) \
                    else (False, None)
                if found_callee and hasattr(callee, "__code__") and callee is not fn:
                    inner = self.written_params(callee)
                    names = callee.__code__.co_varnames[:callee.__code__.co_argcount]
                    out += [a.id for n, a in zip(names, call.args)
                            if n in inner and isinstance(a, gast.Name)]
            return out

        def visit(body, bound):
            bound = set(bound)
            for stmt in body:
                found.update(n for n in written(stmt) if n in params and n not in bound)
                for field in ("body", "orelse", "finalbody"):
                    inner = getattr(stmt, field, None)
                    if isinstance(inner, list):
                        visit(inner, bound)
                if isinstance(stmt, gast.Assign):
                    bound.update(n.id for t in stmt.targets for n in
                                 ([t] if isinstance(t, gast.Name) else
                                  t.elts if isinstance(t, gast.Tuple) else [])
                                 if isinstance(n, gast.Name))
        visit(tree.body, set())
        return frozenset(found)

    def _keyed(self, fn, _):
        # (the source as written, before the front end's rewrites)
        src, uses = source_uses(fn)
        keyed = set()
        for use in uses:
            if use[0] == "keyed":
                keyed.add(use[1])
            else:
                keyed |= self._keyed_arguments(src, use, fn)
        code = fn.__code__
        return frozenset(keyed & set(code.co_varnames[:code.co_argcount +
                                                      code.co_kwonlyargcount]))

    def _keyed_arguments(self, src, call, fn) -> set:
        """The caller's names passed to a callee's keyed parameters (`call`: a dict_uses
        call)."""
        _, func, args, keywords = call
        found, callee = src.lookup(func)
        if not found or not hasattr(callee, "__code__") or callee is fn:
            return set()
        inner = self.keyed_params(callee)
        names = callee.__code__.co_varnames[:callee.__code__.co_argcount]
        out = {arg for name, arg in zip(names, args) if name in inner and arg is not None}
        out |= {value for kw, value in keywords if kw in inner and value is not None}
        return out

    def _result(self, fn, arrays):
        norm, resolution, _ = _read(fn)
        facts = shapes(norm, resolution, arrays={p: (s, d) for p, s, d in arrays},
                       callees=self)
        found = facts.concrete.get(norm.returned)
        return found if found is not None else _elements(norm, facts)


def _elements(norm, facts):
    """Elements of `return a, b` (a tuple assigned once) whose items' shapes are known."""
    made = [stmt for stmt in assignments(norm.body) if target_of(stmt) == norm.returned]
    if len(made) != 1 or not isinstance(made[0].value, gast.Tuple):
        return None
    items = []
    for item in made[0].value.elts:
        if isinstance(item, gast.Constant) and type(item.value) in (int, float):
            items.append(((), WEAK))
        elif isinstance(item, gast.Name) and item.id in facts.concrete:
            items.append(facts.concrete[item.id])
        else:
            return None
    return Elements(items)


def _read(fn):
    front = read_front_end(fn)      # (kept for the compilation of fn's piece, if one follows)
    return front.norm, front.resolution, front.source


SUMMARIES = Callees()
