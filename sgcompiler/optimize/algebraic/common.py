"""Compute an expression once (common subexpressions; part of the optimize pass):

    _mul = -(y * y)                       _mul4 = y * y
    ...                          ->       _mul = -_mul4
    _mul4 = y * y                         ...

    d_neg = d_mul * y                     d_neg = d_mul * y
    dy += -(d_mul * y)           ->       dy -= d_neg

A rule's adjoint and the primal often spell the same product twice (`y * y` in the
primal of `exp(-y * y)` and of `x * x + y * y`, the two operands of a square). Statement
by statement, in one walk of each block, an expression the block computed before is
replaced by the name that holds it (or, when a later `t = E` computes what an earlier
statement computes inside it, `t = E` moves up and that statement reads `t`: a temporary
or an adjoint assigned once, `da = np.sum(dt, axis=0)` before `db = -(da * 3.0)`, never
one of the user's names).

Only pure expressions are shared (arithmetic, comparisons, subscripts, and calls of NumPy
and runtime helpers: pipeline's `pure`, never random draws or `np.empty`), and only while
nothing rebinds or writes into a name they read: an entry is forgotten when a statement
binds or writes into one of its names, the whole table when a statement writes into an
array another name may share (a view, a copy, an argument), calls anything else, or is a
loop or a branch (whose bodies are walked with tables of their own). A name is put only
where its value is consumed (an operand of arithmetic, a ufunc, a reduction), so sharing
never makes two names refer to one array that is later written in place. Linear in the
statements: one walk, with the table indexed by the names its entries read.
"""
from __future__ import annotations

from collections import Counter

import gast

from ...ir.blocks import nodes
from ...ir.builders import COMMENT, load
from .aliasing import CONSUMING, ArrayFacts, effects, passed, root, top_values, \
    written_into
from ..tidy.cleanup import propagate_copies

_OPERATIONS = CONSUMING + (gast.BoolOp,)
_CANDIDATES = (gast.BinOp, gast.UnaryOp, gast.Call, gast.Compare, gast.Subscript)
# the statements whose value _children looks into -> whether that value is consumed
_ASSIGNMENTS = {gast.Assign: False, gast.AugAssign: True}
_PLAIN = frozenset("len range min max abs float int".split())
# runtime helpers that write into none of their arguments (others may: add_at)
READERS = frozenset({"unbroadcast", "unreduce", "reduce_like"})
# two calls give two different values, or the call writes into its arguments
_UNEQUAL = frozenset("empty empty_like at copyto put place putmask fill_diagonal".split())


def share_subexpressions(tree: gast.FunctionDef, pure, np_name, user_names,
                         helpers) -> None:
    """Rewrite `tree` in place. `pure`: names whose calls only compute a value (runtime
    helpers, array namespaces); `np_name`: NumPy's name in the code; `user_names`: the
    user's names (never moved; a copy into one stays); `helpers`: the runtime helpers
    linked into the code (name -> function)."""
    numpy_names = frozenset({np_name or "np", "np"})
    readers = frozenset(n for n, f in helpers.items()
                        if getattr(f, "__name__", "") in READERS)
    facts = ArrayFacts(tree, pure | numpy_names | {"math"}, numpy_names, readers)
    sharing = _Sharing(facts, user_names)
    sharing.block(tree.body)
    if sharing.copies:
        propagate_copies(tree, user_names)


def _with_moved(statements, before) -> list:
    """`statements` with each moved statement (and what moved before it) in its place."""
    out = []
    for stmt in statements:
        out.extend(_with_moved(before[id(stmt)], before) if id(stmt) in before else ())
        out.append(stmt)
    return out


def _is_comment(stmt) -> bool:
    return isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant) and \
        isinstance(stmt.value.value, str) and stmt.value.value.startswith(COMMENT)


class _Table:
    """The expressions one block computed so far and still holds, by key."""

    def __init__(self):
        self.named = {}         # key -> the name that holds its value
        self.inner = {}         # key -> (statement, parent, field, comments before it)
        self.by_name = {}       # name -> keys that read it or are held by it
        self.canon = {}         # name -> the name it is a copy of
        self.copies = {}        # name -> the names that are copies of it
        # arrays this block made: name -> its array's number (copies share it); the
        # numbers of arrays something else may refer to too (a view, a call's result)
        self.array, self.members, self.kept = {}, {}, set()

    def name(self, name):
        return self.canon.get(name, name)

    def add(self, table, key, value, names):
        table[key] = value
        for name in names:
            self.by_name.setdefault(name, set()).add(key)

    def forget(self, name):
        for key in self.by_name.pop(name, ()):
            self.named.pop(key, None)
            self.inner.pop(key, None)
        source = self.canon.pop(name, None)
        if source is not None:
            self.copies[source].discard(name)
        for copy in self.copies.pop(name, ()):
            del self.canon[copy]

    def written_into(self, name) -> bool:
        """Forget what an array written into held; False: it may be any array's."""
        number = self.array.get(name)
        if number is None or number in self.kept:
            return False
        for other in self.members[number]:
            self.forget(other)
        return True

    def bound(self, name, value, facts):
        """`name = value`: which array name holds now."""
        self.unbound(name)
        number = None
        if facts.fresh(value):
            number = len(self.members)
            self.members[number] = set()
        elif isinstance(value, gast.Name) and value.id in self.array:
            number = self.array[value.id]
        else:
            self.kept.update(self.array[n] for n in facts.escaping(value, False)
                             if n in self.array)
        if number is not None:
            self.array[name] = number
            self.members[number].add(name)

    def unbound(self, name):
        number = self.array.pop(name, None)
        if number is not None:
            self.members[number].discard(name)

    def copy(self, name, source):
        source = self.name(source)
        self.canon[name] = source
        self.copies.setdefault(source, set()).add(name)


class _Sharing:
    def __init__(self, facts: ArrayFacts, user_names):
        self.facts, self.user_names = facts, user_names
        self.reads_seen = Counter()     # loads met so far, in the order of the text
        self.copies = False

    def block(self, body):
        table, comments, out = _Table(), 0, []
        before = {}     # id(statement) -> the statements moved up to go before it
        for stmt in body:
            if _is_comment(stmt):
                comments += 1
            if isinstance(stmt, (gast.Assign, gast.AugAssign, gast.Return)):
                moved_before = self._statement(table, stmt, comments)
                if moved_before is not None:
                    before.setdefault(id(moved_before), []).append(stmt)
                else:
                    out.append(stmt)
                continue        # (_statement counted its reads)
            elif isinstance(stmt, gast.Delete):
                out.append(stmt)
                for name in (n.id for n in nodes(stmt) if isinstance(n, gast.Name)):
                    table.forget(name)
            else:
                out.append(stmt)
                for value, _ in top_values(stmt):
                    self._count_reads(value)
                for field in ("body", "orelse", "finalbody"):
                    if isinstance(getattr(stmt, field, None), list):
                        self.block(getattr(stmt, field))
                for handler in getattr(stmt, "handlers", ()):
                    self.block(handler.body)
                if not _is_comment(stmt) and not isinstance(stmt, gast.Pass):
                    table = _Table()
            self._count_reads(stmt)
        body[:] = _with_moved(out, before) if before else out

    def _count_reads(self, stmt):
        if isinstance(stmt, (gast.Assign, gast.AugAssign, gast.Return, gast.Expr,
                             gast.expr)):
            for node in nodes(stmt):
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                    self.reads_seen[node.id] += 1

    def _statement(self, table, stmt, comments):
        """Share what `stmt` recomputes, forget what it overwrites, remember what it
        computes; the statement to put it before, when it moves up."""
        moved = None
        if isinstance(stmt, gast.Assign):
            moved = self._assigned(table, stmt)
        elif stmt.value is not None:
            self._replace_inner(table, stmt, "value",
                                consumed=isinstance(stmt, gast.AugAssign))
            if isinstance(stmt, gast.AugAssign) and _fold_negation(stmt):
                self.rewrote(stmt)
        if moved is not None:
            _statement, parent, field, before = table.inner.pop(moved[0])
            if before != comments:
                table.inner[moved[0]] = (_statement, parent, field, before)
                moved = None
            else:
                _set(parent, field, load(stmt.targets[0].id))
                self.rewrote(_statement)
                moved = _statement
        # (from here on `stmt` stays as it is: one walk of its nodes serves the rest,
        # the one ArrayFacts made where nothing was rewritten since)
        walked = self.facts.walked.get(id(stmt))
        reads, writing = walked[1:] if walked is not None and walked[0] is stmt \
            else effects(stmt)
        self._forget_written(table, stmt, writing)
        self._remember(table, stmt, comments, writing)
        self.reads_seen.update(reads)
        return moved

    def rewrote(self, stmt):
        """`stmt` changed: its nodes are to be walked again."""
        self.facts.walked.pop(id(stmt), None)

    def _assigned(self, table, stmt):
        """Share in `t = E`; (E's key,) when an earlier statement computes E inside it and
        `t` (a temporary or an adjoint, assigned once and not read before) may move up to
        compute it there."""
        target = stmt.targets[0] if len(stmt.targets) == 1 else None
        key = self.key(table, stmt.value)
        if not isinstance(target, gast.Name) or key is None or \
                not isinstance(stmt.value, _CANDIDATES):
            self._replace_inner(table, stmt, "value", consumed=False)
            return None
        held = table.named.get(key)
        name = target.id
        if held is not None and held != name and not {held, name} & self.facts.in_place \
                and all(self.facts.reads_only(c) for c in nodes(stmt.value)
                        if isinstance(c, gast.Call)):
            # (a helper's result may be a container a later call writes into)
            stmt.value = load(held)
            self.rewrote(stmt)
            self.copies = True
            return None
        if held is None and key in table.inner and name not in self.user_names and \
                self.facts.writes[name] == 1 and \
                not self.reads_seen[name]:
            return (key,)
        self._replace_inner(table, stmt, "value", consumed=False)
        return None

    def _replace_inner(self, table, parent, field, consumed):
        """Replace, under `parent.field`, each expression the table holds by its name,
        where its value is consumed (`parent`: a statement)."""
        stmt, todo = parent, [(parent, field, consumed)]
        while todo:
            parent, field, consumed = todo.pop()
            node = _get(parent, field)
            if _leaf(node):
                continue
            if consumed and isinstance(node, _CANDIDATES):
                key = self.key(table, node)
                if key is not None and key in table.named:
                    _set(parent, field, load(table.named[key]))
                    self.rewrote(stmt)
                    continue
            todo.extend(_children(node, consumed, self.facts))

    def _forget_written(self, table, stmt, writing):
        """`writing`: the nodes of `stmt` that may write (aliasing.effects)."""
        for node in writing:
            if type(node) is gast.Call and not self.facts.reads_only(node) and \
                    not all(table.written_into(name) for name in passed(node)):
                table.__init__()        # (it may write into an array another name holds)
                return
        if not isinstance(stmt, gast.Assign):
            table.kept.update(table.array[n] for value, consumed in top_values(stmt)
                              for n in self.facts.escaping(value, consumed)
                              if n in table.array)
        for node in writing:
            if type(node) is gast.Name:
                table.forget(node.id)
                continue
            for name in written_into(node):
                if name is None or not table.written_into(name):
                    table.__init__()
                    return
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], gast.Name):
            table.bound(stmt.targets[0].id, stmt.value, self.facts)
        else:
            for target in getattr(stmt, "targets", ()):
                for name in (n.id for n in nodes(target) if isinstance(n, gast.Name)):
                    table.unbound(name)

    def _remember(self, table, stmt, comments, writing):
        written = {n.id for n in writing if type(n) is gast.Name}
        if isinstance(stmt, gast.AugAssign):
            written.add(root(stmt.target))
        target = stmt.targets[0] if isinstance(stmt, gast.Assign) and \
            len(stmt.targets) == 1 else None
        if isinstance(target, gast.Name) and isinstance(stmt.value, gast.Name) and \
                stmt.value.id != target.id:
            table.copy(target.id, stmt.value.id)
            return
        if isinstance(target, gast.Name) and isinstance(stmt.value, _CANDIDATES):
            names = set()
            key = self.key(table, stmt.value, names)
            if key is not None and not names & written and key not in table.named:
                table.add(table.named, key, target.id, names | {target.id})
        if isinstance(stmt, (gast.Assign, gast.AugAssign)):
            todo = list(_children(stmt, False, self.facts, "value"))
            while todo:
                parent, field, consumed = todo.pop()
                node = _get(parent, field)
                if _leaf(node):
                    continue
                if consumed and isinstance(node, _CANDIDATES):
                    names = set()
                    key = self.key(table, node, names)
                    if key is not None and not names & written and \
                            key not in table.inner:
                        table.add(table.inner, key, (stmt, parent, field, comments), names)
                todo.extend(_children(node, consumed, self.facts))

    def key(self, table, node, names=None):
        """A hashable spelling of a pure expression (names read through their copies),
        or None; `names` collects the names it reads."""
        names = set() if names is None else names
        try:
            return self._key(table, node, names)
        except _Impure:
            return None

    def _key(self, table, node, names):
        kind = type(node)
        if kind is gast.Name:
            name = table.canon.get(node.id, node.id)
            names.add(name)
            return ("name", name)
        if kind is gast.Constant:
            return ("const", type(node.value).__name__, repr(node.value))
        try:
            # (the usual expressions spelt at once, as _spelling spells them: the key is
            # asked of every expression of every statement, some several times)
            if kind is gast.BinOp:
                return ("BinOp", self._key(table, node.left, names),
                        (type(node.op).__name__,), self._key(table, node.right, names))
            if kind is gast.Call:
                self._check_call(node)
                return ("Call", self._key(table, node.func, names),
                        tuple([self._key(table, a, names) for a in node.args]),
                        tuple([self._key(table, k, names) for k in node.keywords]))
            if kind is gast.Attribute:
                return ("Attribute", self._key(table, node.value, names), node.attr,
                        (type(node.ctx).__name__,))
            if kind is gast.UnaryOp:
                return ("UnaryOp", (type(node.op).__name__,),
                        self._key(table, node.operand, names))
            if kind is gast.Subscript:
                return ("Subscript", self._key(table, node.value, names),
                        self._key(table, node.slice, names), (type(node.ctx).__name__,))
            if kind is gast.keyword:
                return ("keyword", node.arg, self._key(table, node.value, names))
        except AttributeError:
            pass            # (a field left out where the node was made)
        return self._spelling(table, node, names)

    def _spelling(self, table, node, names):
        """_key of any other node: its type and fields, in order."""
        if isinstance(node, gast.Call):
            self._check_call(node)
        if not isinstance(node, (gast.BinOp, gast.UnaryOp, gast.Compare, gast.Call,
                                 gast.Subscript, gast.Attribute, gast.Slice, gast.Tuple,
                                 gast.keyword, gast.operator, gast.unaryop, gast.cmpop,
                                 gast.expr_context)):
            raise _Impure
        parts = [type(node).__name__]
        for field in node._fields:          # (gast.iter_fields, without its generator)
            try:
                value = getattr(node, field)
            except AttributeError:
                continue
            if isinstance(value, list):
                parts.append(tuple(self._key(table, v, names) for v in value))
            elif isinstance(value, gast.AST):
                parts.append(self._key(table, value, names))
            else:
                parts.append(value if field in ("attr", "arg") or value is None
                             else repr(value))
        return tuple(parts)

    def _check_call(self, call):
        func = call.func
        while isinstance(func, gast.Attribute):
            func = func.value
        name = getattr(func, "id", None)
        if _mentions_random(call.func) or any(k.arg == "out" for k in call.keywords) or \
                getattr(call.func, "attr", None) in _UNEQUAL or \
                not (name in self.facts.pure or (name in _PLAIN and func is call.func)):
            raise _Impure


def _mentions_random(func) -> bool:
    """Whether gast.dump(func) spells 'random' (np.random.normal, random.gauss): for
    `name` and `name.attr` without printing them."""
    if _plain_name(func):
        return func.id == "random"
    if isinstance(func, gast.Attribute) and _plain_name(func.value):
        return func.attr == "random" or func.value.id == "random"
    return "'random'" in gast.dump(func)


def _plain_name(node) -> bool:
    return isinstance(node, gast.Name) and node.annotation is None and \
        node.type_comment is None


class _Impure(Exception):
    """An expression that is not shared (a call with effects, a draw, a lambda)."""


def _children(node, consumed, facts, only=None):
    """(parent, field, consumed) of `node`'s expression children."""
    kind = type(node) if only is None else None
    if only == "value" and type(node) in _ASSIGNMENTS:       # (see _fields_children)
        value = getattr(node, "value", None)
        return [(node, "value", _ASSIGNMENTS[type(node)])] \
            if isinstance(value, gast.expr) else []
    try:
        # (the usual expressions at once, as _fields_children finds their children:
        # this is asked of every expression of every statement, some several times)
        if kind is gast.Name:
            if node.annotation is None:
                return []
        elif kind is gast.Constant:
            return []
        elif kind is gast.BinOp:
            return [(node, "left", True), (node, "right", True)]
        elif kind is gast.Call:
            inner = facts.fresh_call(node)
            return [(node, "func", True)] + \
                [(node.args, k, inner) for k, v in enumerate(node.args)
                 if isinstance(v, gast.expr)] + \
                [(v, "value", inner) for v in node.keywords if isinstance(v, gast.keyword)]
        elif kind is gast.Attribute:
            return [(node, "value", False)]
        elif kind is gast.UnaryOp:
            return [(node, "operand", True)]
        elif kind is gast.Subscript:
            return [(node, "value", consumed)] + \
                ([(node, "slice", True)] if isinstance(node.slice, gast.expr) else [])
    except AttributeError:
        pass                # (a field left out where the node was made)
    return _fields_children(node, consumed, facts, only)


def _fields_children(node, consumed, facts, only):
    """_children of any node, from its fields."""
    found = []
    # (what the fields' values are to `node`, decided once: it is asked of every
    # expression of every statement, some several times)
    if isinstance(node, _OPERATIONS):
        inner = {}
    elif isinstance(node, gast.Call):
        inner = {"func": True} if facts.fresh_call(node) else {"func": True, None: False}
    elif isinstance(node, gast.Subscript):
        inner = {"value": consumed}
    elif isinstance(node, gast.AugAssign):
        inner = {"value": True, None: False}
    else:
        inner = {None: False}
    default = inner.get(None, True)
    for field in node._fields:
        if only is not None and field != only:
            continue
        try:
            value = getattr(node, field)
        except AttributeError:
            continue
        if isinstance(value, list):
            inner_ = inner.get(field, default)
            found.extend(((value, k, inner_) for k, v in enumerate(value)
                          if isinstance(v, gast.expr)))
            found.extend((v, "value", inner_) for v in value
                         if isinstance(v, gast.keyword))
        elif isinstance(value, gast.expr) and field not in ("target", "targets"):
            found.append((node, field, inner.get(field, default)))
    return found


def _leaf(node) -> bool:
    """A name or a constant: no expression under it to share (what most children are)."""
    kind = type(node)
    return kind is gast.Constant or kind is gast.Name and \
        getattr(node, "annotation", None) is None


def _get(parent, field):
    return parent[field] if type(parent) is list else getattr(parent, field)


def _set(parent, field, value):
    if isinstance(parent, list):
        parent[field] = value
    else:
        setattr(parent, field, value)


def _fold_negation(stmt) -> bool:
    """`x += -e` is `x -= e` (and `x -= -e` is `x += e`): the same rounding. Whether it
    was one."""
    if isinstance(stmt.value, gast.UnaryOp) and isinstance(stmt.value.op, gast.USub) and \
            isinstance(stmt.op, (gast.Add, gast.Sub)):
        stmt.op = gast.Sub() if isinstance(stmt.op, gast.Add) else gast.Add()
        stmt.value = stmt.value.operand
        return True
    return False
