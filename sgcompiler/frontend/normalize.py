"""Rewrite a function into A-normal form: one primitive operation per assignment.

    z = np.sin(x * y) + 1         _mul = x * y
                           ->     _sin = np.sin(_mul)
                                  z = _sin + 1

The normal form (later passes assume it and fail loudly on anything else):

    stmt  := NAME = expr
           | if ATOM: stmt* else: stmt*
           | return ATOM                        (once, as the function's last statement)
           | ATOM(...)  as an expression statement (a call for its effect, e.g. print)
           | assert / raise                     (kept as they are; no gradient flows)
    expr  := ATOM | ATOM op ATOM | op ATOM | f(ATOM, ..., k=ATOM) | ATOM.attr
           | ATOM[INDEX] | (ATOM, ...) | [ATOM, ...] | {KEY: ATOM, ...} | ATOM cmp ATOM ...
           | a and/or b                         (kept whole: never differentiable)
    ATOM  := NAME | CONSTANT | a read of a module-level name or attribute chain (np.pi)
    INDEX := ATOM | ATOM:ATOM:ATOM | None | ... | a tuple of these
    KEY   := a string or int constant

Temporaries are named after what they hold (`_sin`, `_mul`). A variable that is assigned
more than once in straight-line code gets a new name per assignment (`z`, `z_1`), so each
value keeps its own name; variables assigned inside a branch keep theirs. `return` inside
`if` is lifted so the function has one exit, and a conditional expression becomes an `if`.
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import gast
import numpy as np

from ..errors import error_at
from ..ir.naming import Namer, op_name
from .source import FunctionSource
from .iteration import IterationForms
from .lower import lower
from .resolve import Resolution, index_join, local_names
from ..ir.blocks import nodes, walk

RESULT = "result"


@dataclass(frozen=True)
class Normalized:
    """A function in normal form."""

    fn: FunctionSource
    params: tuple[str, ...]
    body: tuple            # gast statements; the last is `return NAME`
    returned: str          # the name the function returns
    namer: Namer
    # (id of the assignment that completes `x += ...`, the name x had before): Python
    # updates an array in place there, which the normal form writes as a new value
    augmented: tuple = ()


def is_atom(node, global_roots) -> bool:
    return isinstance(node, (gast.Name, gast.Constant)) or is_global_chain(node, global_roots)


def is_global_chain(node, global_roots) -> bool:
    """A read of a module-level attribute chain such as `np.pi` or `config.scale`."""
    if not isinstance(node, gast.Attribute):
        return False
    while isinstance(node, gast.Attribute):
        node = node.value
    return isinstance(node, gast.Name) and node.id in global_roots


def normalize(fn: FunctionSource, resolution: Resolution) -> Normalized:
    """Rewrite `fn` into normal form.

    Raises:
        SGCompilerError: for a construct this form cannot express (e.g. `return` in a loop).
    """
    tree = fn.tree
    params = tuple(a.id for a in tree.args.posonlyargs + tree.args.args
                   + tree.args.kwonlyargs)
    namer = Namer(local_names(tree) | set(resolution.global_roots))
    body = lower([s for s in tree.body if not _is_docstring(s)], namer)
    found = [nodes(s) for s in body]        # (one walk for both questions)
    normalizer = _Normalizer(fn, resolution, namer, _versioned_names(body, found, params))
    normalizer.single_return = sum(isinstance(n, gast.Return) for under in found
                                   for n in under) == 1 and isinstance(body[-1],
                                                                       gast.Return)
    normalizer.current.update((p, p) for p in params if p in normalizer.versionable)
    out = normalizer.block(body)
    returned = normalizer.finish(out)
    return Normalized(fn, params, tuple(out), returned, namer, tuple(normalizer.augmented))


def _is_docstring(stmt) -> bool:
    return isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant) \
        and isinstance(stmt.value.value, str)


def _versioned_names(body, found, params) -> set:
    """Names assigned only by top-level statements: each assignment can get its own name.
    (`found`: the nodes under each statement of `body`.)"""
    nested, top = set(), set()
    for stmt, under in zip(body, found):
        into = top if isinstance(stmt, (gast.Assign, gast.AugAssign, gast.AnnAssign)) \
            else nested
        for node in under:
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                into.add(node.id)
    return top - nested


# --- the rewriting ---------------------------------------------------------------------------


class _Normalizer(IterationForms):
    def __init__(self, fn, resolution, namer, versionable):
        self.fn = fn
        self.resolution = resolution
        self.namer = namer
        self.versionable = versionable
        self.current = {}          # source name -> name of its current version
        self.out = None            # the block being written
        self.lineno = None
        self.returned = None
        self.augmented = []

    # statements

    def block(self, stmts) -> list:
        saved, self.out = self.out, []
        for stmt in stmts:
            self.lineno = getattr(stmt, "lineno", self.lineno)
            handler = getattr(self, "stmt_" + type(stmt).__name__, None)
            if handler is None:
                raise error_at(stmt, self.fn, f"'{type(stmt).__name__}' statements are not "
                                              "supported in differentiated code")
            handler(stmt)
        result, self.out = self.out, saved
        return result

    def emit(self, node):
        node.lineno = self.lineno
        self.out.append(node)
        return node

    def assign(self, name: str, value):
        return self.emit(gast.Assign(targets=[_store(name)], value=value, type_comment=None))

    def stmt_Assign(self, stmt):
        if len(stmt.targets) != 1:
            value = self.atom(stmt.value, "value")
            for target in stmt.targets:
                self.bind(target, value)
            return
        self.bind(stmt.targets[0], stmt.value)

    def stmt_AnnAssign(self, stmt):
        if stmt.value is not None:
            self.bind(stmt.target, stmt.value)

    def stmt_AugAssign(self, stmt):
        target = stmt.target
        if isinstance(target, gast.Subscript):
            # x[i] += v reads the element once, then writes it
            array = self.atom(target.value, "obj")
            index = self.index(target.slice)
            read = gast.Subscript(value=array, slice=index, ctx=gast.Load())
            value = gast.BinOp(left=read, op=stmt.op, right=stmt.value)
            self.write_element(target, array, copy.deepcopy(index), value)
            return
        if not isinstance(target, gast.Name):
            raise error_at(stmt, self.fn, "augmented assignment to an attribute is not "
                                          "supported; use a local variable")
        read = gast.Name(id=target.id, ctx=gast.Load(), annotation=None, type_comment=None)
        before = self.read(read).id
        self.bind(target, gast.BinOp(left=read, op=stmt.op, right=stmt.value))
        self.augmented.append((id(self.out[-1]), before))

    def write_element(self, target, array, index, value):
        """x[index] = value, for an array held in a local variable."""
        if not isinstance(array, gast.Name) or array.id in self.resolution.global_roots:
            raise error_at(target, self.fn, "writing into an element of something other "
                                            "than a local array is not supported; build a "
                                            "local copy first (y = x.copy())")
        atom = self.atom(value, "value")
        self.emit(gast.Assign(targets=[gast.Subscript(value=array, slice=index,
                                                      ctx=gast.Store())],
                              value=atom, type_comment=None))

    def bind(self, target, value):
        """target = value, for a name or a (nested) tuple of names."""
        if isinstance(target, gast.Name):
            rhs = self.op(value, target.id)
            name = self.new_version(target.id)
            if not isinstance(rhs, gast.Name) and any(
                    isinstance(n, gast.Name) and n.id == name for n in nodes(rhs)):
                # `y = y * 2` in a branch or loop: keep the old and new value apart, so
                # the adjoint can see both.
                temp = self.namer.temp(self.hint(value, target.id))
                self.assign(temp, rhs)
                rhs = _load(temp)
            self.assign(name, rhs)
            return
        if isinstance(target, (gast.Tuple, gast.List)):
            if isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(target.elts):
                # `a, b = b, a` must read both before writing either
                stored = {n.id for n in nodes(target) if isinstance(n, gast.Name)}
                swap = any(isinstance(n, gast.Name) and n.id in stored
                           for v in value.elts for n in nodes(v))
                parts = [self.atom(v, "value", fresh=swap) for v in value.elts]
            else:
                whole = self.atom(value, "value")
                parts = [gast.Subscript(value=whole, slice=gast.Constant(value=i, kind=None),
                                        ctx=gast.Load()) for i in range(len(target.elts))]
            for t, v in zip(target.elts, parts):
                self.bind(t, v)
            return
        if isinstance(target, gast.Subscript):
            if not isinstance(target.value, gast.Name):
                raise error_at(target, self.fn, "writing into x[i][j] is not supported; "
                                                "write x[i, j] instead")
            array = self.read(target.value)
            index = self.index(target.slice)
            self.write_element(target, array, index, value)
            return
        raise error_at(target, self.fn, "this assignment target is not supported; assign "
                                        "to a name, a tuple of names, or x[index]")

    def new_version(self, name: str) -> str:
        if name in self.versionable and name in self.current:
            self.current[name] = self.namer.version(name)
        elif name in self.versionable:
            self.current[name] = name
        return self.current.get(name, name)

    def stmt_Return(self, stmt):
        if stmt.value is None:
            raise error_at(stmt, self.fn, "the function returns None; return the scalar "
                                          "value to differentiate")
        if self.single_return and isinstance(stmt.value, gast.Name) \
                and stmt.value.id not in self.resolution.global_roots:
            self.returned = self.read(stmt.value).id
            return
        if self.returned is None:
            self.returned = self.namer.fresh(RESULT)
        self.assign(self.returned, self.op(stmt.value, RESULT))

    def stmt_If(self, stmt):
        test = self.atom(stmt.test, "cond")
        body, orelse = self.block(stmt.body), self.block(stmt.orelse)
        self.lineno = stmt.lineno
        if isinstance(test, gast.Name) and any(
                isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and n.id == test.id
                for s in body + orelse for n in walk(s)):
            # the branch changes the variable it was chosen by: keep the choice aside, so
            # the adjoint sweep replays the branch that ran
            name = self.namer.temp("cond")
            self.assign(name, test)
            test = _load(name)
        self.emit(gast.If(test=test, body=body or [gast.Pass()], orelse=orelse))

    def stmt_Expr(self, stmt):
        if isinstance(stmt.value, gast.Constant):
            return
        self.emit(gast.Expr(value=self.op(stmt.value, "value")))

    def stmt_Break(self, stmt):
        self.emit(gast.Break())

    def stmt_While(self, stmt):
        # lower() made it `while True:` with the test inside the body
        self.emit(gast.While(test=stmt.test, body=self.block(stmt.body), orelse=[]))

    def stmt_Pass(self, stmt):
        pass

    def stmt_Assert(self, stmt):
        self.emit(stmt)

    def stmt_Raise(self, stmt):
        self.emit(stmt)

    def finish(self, out) -> str:
        """Close the function with `return NAME`."""
        if self.returned is None:
            raise error_at(self.fn.tree, self.fn, "the function has no 'return'; return the "
                                                  "scalar value to differentiate")
        ret = gast.Return(value=_load(self.returned))
        ret.lineno = self.lineno
        out.append(ret)
        return self.returned

    # expressions

    def atom(self, node, hint: str, fresh: bool = False):
        """An atom holding the value of `node`, emitting statements as needed."""
        if isinstance(node, gast.Name) and not fresh:
            return self.read(node)
        if isinstance(node, gast.Constant) or self.global_chain(node):
            return node
        value = self.op(node, hint)
        if is_atom(value, self.resolution.global_roots) and not (fresh and isinstance(value, gast.Name)):
            return value
        name = self.namer.temp(self.hint(node, hint))
        self.assign(name, value)
        return _load(name)

    def read(self, node):
        if node.id in self.resolution.global_roots:
            return node
        return _load(self.current.get(node.id, node.id))

    def global_chain(self, node) -> bool:
        return is_global_chain(node, self.resolution.global_roots)

    def hint(self, node, default: str) -> str:
        if isinstance(node, gast.Call):
            func = node.func
            return func.attr if isinstance(func, gast.Attribute) else getattr(func, "id", "call")
        if isinstance(node, (gast.BinOp, gast.UnaryOp)):
            return op_name(node.op)
        if isinstance(node, gast.Subscript):
            return _subscript_hint(node)
        if isinstance(node, gast.Attribute):
            return node.attr
        if isinstance(node, gast.Compare):
            return "cmp"
        return default

    def op(self, node, hint: str):
        """`node` as one operation on atoms (the right-hand side of a normal assignment)."""
        if isinstance(node, gast.Name):
            return self.read(node)
        if isinstance(node, gast.Constant) or self.global_chain(node):
            return node
        handler = getattr(self, "expr_" + type(node).__name__, None)
        if handler is None:
            raise error_at(node, self.fn, f"'{type(node).__name__}' expressions are not "
                                          "supported in differentiated code")
        return handler(node)

    def expr_BinOp(self, node):
        return gast.BinOp(left=self.atom(node.left, "lhs"), op=node.op,
                          right=self.atom(node.right, "rhs"))

    def expr_UnaryOp(self, node):
        if isinstance(node.op, gast.USub) and isinstance(node.operand, gast.Constant) \
                and isinstance(node.operand.value, (int, float)):
            return gast.Constant(value=-node.operand.value, kind=None)
        return gast.UnaryOp(op=node.op, operand=self.atom(node.operand, "operand"))

    def expr_Compare(self, node):
        return gast.Compare(left=self.atom(node.left, "lhs"), ops=node.ops,
                            comparators=[self.atom(c, "rhs") for c in node.comparators])

    def expr_BoolOp(self, node):
        return self.rename_reads(node)

    def expr_JoinedStr(self, node):
        return self.rename_reads(node)

    def rename_reads(self, node):
        node = copy.deepcopy(node)
        for n in walk(node):
            if isinstance(n, gast.Name) and n.id in self.current:
                n.id = self.current[n.id]
        return node

    def expr_Call(self, node):
        func = node.func
        if self._is_einsum_sublists(node):
            node = self._einsum_string(node)
        if self._is_log_with_base(node):
            # math.log(x, base) is log(x) / log(base), computed so by CPython too: each
            # part has its derivative rule
            x, base = node.args
            parts = [gast.Call(func=copy.deepcopy(func), args=[a], keywords=[])
                     for a in (x, base)]
            return self.expr_BinOp(gast.BinOp(left=parts[0], op=gast.Div(), right=parts[1]))
        if isinstance(func, gast.Attribute) and not self.global_chain(func):
            func = gast.Attribute(value=self.atom(func.value, "obj"), attr=func.attr,
                                  ctx=gast.Load())
        args = [self.atom(a, "arg") for a in node.args]
        keywords = [gast.keyword(arg=k.arg, value=self.atom(k.value, k.arg or "kw"))
                    for k in node.keywords]
        return gast.Call(func=func, args=args, keywords=keywords)

    def _joined(self, node, kind, numpy_name):
        """np.r_[a, b] as np.concatenate([np.atleast_1d(a), np.atleast_1d(b)]); np.c_[a, b]
        as np.concatenate([np.transpose(np.atleast_2d(np.transpose(a))), ...], axis=-1)."""
        items = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
        for item in items:
            if isinstance(item, gast.Slice) or isinstance(item, gast.Constant) and \
                    isinstance(item.value, str):
                raise error_at(node, self.fn, "np.r_ and np.c_ are supported with arrays "
                                              "and numbers only (no ranges a:b, no "
                                              "directive strings); write np.concatenate "
                                              "with np.arange instead")

        def call(name, arg):
            func = gast.parse(f"{numpy_name}.{name}").body[0].value
            return gast.Call(func=func, args=[arg], keywords=[])
        if kind is type(np.r_):
            parts, keywords = [call("atleast_1d", item) for item in items], []
        else:
            parts = [call("transpose", call("atleast_2d", call("transpose", item)))
                     for item in items]
            keywords = [gast.keyword(arg="axis", value=gast.Constant(value=-1, kind=None))]
        joined = call("concatenate", gast.List(elts=parts, ctx=gast.Load()))
        joined.keywords = keywords
        return joined

    def _is_einsum_sublists(self, node) -> bool:
        """np.einsum(a, (0, 1), b, (1, 2), (0, 2)): operands and index lists in turn."""
        if not self._calls(node, np.einsum) or len(node.args) < 2:
            return False
        first = node.args[0]
        if isinstance(first, gast.Constant) and isinstance(first.value, str):
            return False        # np.einsum('i,i', [1, 2], x): the subscripts come first
        # (the subscripts may be a variable: then sublists are told by their literals)
        return not isinstance(first, gast.Name) or any(
            isinstance(s, (gast.Tuple, gast.List)) and s.elts and all(
                isinstance(e, gast.Constant) and (type(e.value) is int or e.value is Ellipsis)
                or isinstance(e, gast.Name) and e.id == "Ellipsis" for e in s.elts)
            for s in node.args[1::2])

    def _einsum_string(self, node):
        """The same call with the subscripts as a string ('ij,jk->ik'), which is what NumPy
        makes of the index lists (0-25 are A-Z, 26-51 are a-z), so that the einsum rule
        applies."""
        letters = [chr(ord("A") + k) for k in range(26)] + [chr(ord("a") + k) for k in range(26)]

        def text(sublist):
            items = sublist.elts if isinstance(sublist, (gast.Tuple, gast.List)) else None
            items = [gast.Constant(value=Ellipsis, kind=None) if isinstance(e, gast.Name)
                     and e.id == "Ellipsis" and e.id in self.resolution.global_roots else e
                     for e in items or ()] if items is not None else None
            ok = items is not None and all(
                isinstance(e, gast.Constant) and (e.value is Ellipsis or type(e.value) is int
                                                  and 0 <= e.value < 52) for e in items)
            if not ok:
                return None
            return "".join("..." if e.value is Ellipsis else letters[e.value] for e in items)
        args = list(node.args)
        operands = args[0:len(args) - len(args) % 2:2]
        texts = [text(s) for s in args[1::2] + args[len(args) - len(args) % 2:]]
        if None in texts:
            return node     # lists held in variables: the einsum rule reads them when it runs
        spec = ",".join(texts[:len(args) // 2])
        if len(args) % 2:
            spec += "->" + texts[-1]
        subscripts = gast.Constant(value=spec, kind=None)
        return gast.Call(func=node.func, args=[subscripts] + operands, keywords=node.keywords)

    def _calls(self, node, obj) -> bool:
        """Whether the call `node` calls `obj` (a module-level function)."""
        func = node.func
        if not (self.global_chain(func) or (isinstance(func, gast.Name) and
                                            func.id in self.resolution.global_roots)):
            return False
        try:
            return self.resolution.callee(func).obj is obj
        except KeyError:
            return False

    def _is_log_with_base(self, node) -> bool:
        # (math.log takes no keywords)
        return len(node.args) == 2 and not node.keywords and self._calls(node, math.log)

    def expr_Attribute(self, node):
        return gast.Attribute(value=self.atom(node.value, "obj"), attr=node.attr,
                              ctx=gast.Load())

    def expr_Subscript(self, node):
        found = index_join(self.fn, node, self.resolution.global_roots)
        if found is not None:
            return self.expr_Call(self._joined(node, *found))
        return gast.Subscript(value=self.atom(node.value, "obj"),
                              slice=self.index(node.slice), ctx=gast.Load())

    def index(self, node):
        if isinstance(node, gast.Slice):
            return gast.Slice(*(None if part is None else self.atom(part, "bound")
                                for part in (node.lower, node.upper, node.step)))
        if isinstance(node, gast.Tuple):
            return gast.Tuple(elts=[self.index(e) for e in node.elts], ctx=gast.Load())
        return self.atom(node, "index")

    def expr_Tuple(self, node):
        return gast.Tuple(elts=[self.atom(e, "item") for e in node.elts], ctx=gast.Load())

    def expr_List(self, node):
        return gast.List(elts=[self.atom(e, "item") for e in node.elts], ctx=gast.Load())

    def expr_Dict(self, node):
        # {"a": x, ...}: constant keys, so each value's adjoint is read back by its key
        for key in node.keys:
            if not (isinstance(key, gast.Constant) and type(key.value) in (str, int)):
                raise error_at(node, self.fn, "a dict display needs constant keys (strings "
                                              "or ints) in differentiated code; '**' "
                                              "unpacking and computed keys are not supported")
        return gast.Dict(keys=[copy.deepcopy(k) for k in node.keys],
                         values=[self.atom(v, "item") for v in node.values])

    def expr_IfExp(self, node):
        name = self.namer.temp("ifexp")
        test = self.atom(node.test, "cond")
        lineno = self.lineno
        body = self.branch(name, node.body)
        orelse = self.branch(name, node.orelse)
        self.lineno = lineno
        self.emit(gast.If(test=test, body=body, orelse=orelse))
        return _load(name)

    def branch(self, name, expr):
        saved, self.out = self.out, []
        self.assign(name, self.op(expr, "value"))
        result, self.out = self.out, saved
        return result


def _subscript_hint(node) -> str:
    """x[0] -> 'x_0', params["W1"] -> 'params_W1', x[t] -> 'x_t', x[1:3] -> 'x_slice'."""
    base = node.value.id.strip("_") if isinstance(node.value, gast.Name) else "item"
    index = node.slice
    if isinstance(index, gast.Constant) and isinstance(index.value, int):
        part = str(index.value) if index.value >= 0 else f"last{-index.value}"
    elif isinstance(index, gast.Constant) and isinstance(index.value, str) \
            and index.value.isidentifier():
        part = index.value
    elif isinstance(index, gast.Name):
        part = index.id.strip("_")
    else:
        part = "slice"
    return f"{base}_{part}"


def _load(name: str):
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


def _store(name: str):
    return gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None)
