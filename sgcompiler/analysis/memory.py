"""Facts about values and memory that the reverse pass needs: which variables keep one
value throughout, and which reads may see a later in-place write."""
from __future__ import annotations

import gast

from .ops import assignments, is_setitem, target_of

LOOPS = (gast.For, gast.While)


def stable_names(norm):
    """Variables assigned once, at the top level of the function (or parameters never
    assigned): their value is the same at every point of the adjoint sweep."""
    counts = {}
    for s in assignments(norm.body):
        counts[target_of(s)] = counts.get(target_of(s), 0) + (2 if is_setitem(s) else 1)
    top = {target_of(s) for s in norm.body if isinstance(s, gast.Assign) and not is_setitem(s)}
    stable = {n for n, c in counts.items() if c == 1 and n in top}
    return stable | {p for p in norm.params if p not in counts}


def linear(body):
    """Statements in execution order, loop bodies twice (to see one iteration's write
    reach the next iteration's read). A branch that leaves its loop (ends in `break`)
    runs after the rest of the loop, never before its later statements."""
    return [stmt for stmt, _ in linear_paths(body) if not isinstance(stmt, IfEnd)]


class IfEnd:
    """Marks, in `linear_paths`, where an `if` ends; `assigns` are the names both of its
    branches certainly assign."""

    def __init__(self, stmt):
        self.stmt = stmt
        self.assigns = _certainly_assigned(stmt.body) & _certainly_assigned(stmt.orelse)


def _certainly_assigned(block) -> set:
    names = set()
    for stmt in block:
        if isinstance(stmt, gast.Assign) and not is_setitem(stmt):
            names.add(target_of(stmt))
        elif isinstance(stmt, gast.If):
            names |= _certainly_assigned(stmt.body) & _certainly_assigned(stmt.orelse)
    return names


def linear_paths(body, path=(), exits=None):
    """`linear`, with each statement's path: the branches ("if", id, 0 or 1) and loop
    passes ("loop", id, 0 or 1) it sits in. See `exclusive`."""
    out = []
    for stmt in body:
        if isinstance(stmt, gast.If):
            out.append((stmt, path))
            for index, branch in enumerate((stmt.body, stmt.orelse)):
                inner = linear_paths(branch, path + (("if", id(stmt), index),), exits)
                if exits is not None and branch and isinstance(branch[-1], gast.Break):
                    exits.extend(inner)
                else:
                    out += inner
            out.append((IfEnd(stmt), path))
        elif isinstance(stmt, LOOPS):
            leaving = []
            for turn in (0, 1):
                out += linear_paths(stmt.body, path + (("loop", id(stmt), turn),),
                                    leaving if turn == 0 else [])
            out += leaving
        else:
            out.append((stmt, path))
    return out


def exclusive(path, other) -> bool:
    """Whether two statements of `linear_paths` are in different branches of one `if`
    in the same loop pass: then one never runs after the other without the if running
    again in between."""
    for a, b in zip(path, other):
        if a != b:
            return a[0] == b[0] == "if" and a[1] == b[1]
    return False


# calls and attributes whose result may be a view of their first operand (np.reshape(r),
# r.reshape(...), r.T): a view of r, read after x is written, sees the write as r would
VIEW_CALLS = frozenset({
    "reshape", "transpose", "squeeze", "expand_dims", "asarray", "ravel", "swapaxes",
    "moveaxis", "rollaxis", "broadcast_to", "diagonal", "diag", "atleast_1d", "atleast_2d",
    "atleast_3d", "flip", "fliplr", "flipud", "rot90", "real", "real_if_close",
    "ascontiguousarray", "asfortranarray", "matrix_transpose", "split", "array_split",
    "hsplit", "vsplit", "dsplit", "view", "conj", "conjugate"})
VIEW_ATTRIBUTES = frozenset({"T", "mT", "real"})


def reads_after_writes(body):
    """ids of `r = x[...]` whose r (or a view of r: np.broadcast_to(r, ...), r.T) is read
    after x is written in place: if r is a view, the write changes it."""
    order = linear(body)
    found = set()
    for i, stmt in enumerate(order):
        if not (isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.Subscript)
                and isinstance(stmt.value.value, gast.Name) and not is_setitem(stmt)):
            continue
        array, aliases = stmt.value.value.id, {target_of(stmt)}
        written = False
        for later in order[i + 1:]:
            if written and aliases & own_reads(later):
                found.add(id(stmt))
                break
            if isinstance(later, gast.Assign) and not is_setitem(later):
                if _view_of(later.value) in aliases:
                    aliases.add(target_of(later))
                else:
                    aliases.discard(target_of(later))
                if not aliases:
                    break
            if is_setitem(later) and target_of(later) == array:
                written = True
    return found


def _view_of(value):
    """The name whose memory `value` may share (a copy, an index, a view), or None."""
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and \
            value.func.attr in VIEW_CALLS:
        value = value.args[0] if value.args and _is_module(value.func.value) \
            else value.func.value
    elif isinstance(value, gast.Attribute) and value.attr in VIEW_ATTRIBUTES or \
            isinstance(value, gast.Subscript):
        value = value.value
    return value.id if isinstance(value, gast.Name) else None


def _is_module(node) -> bool:
    """`np` or `np.linalg` (the function form np.reshape(r, ...)), not r.reshape(...)."""
    while isinstance(node, gast.Attribute):
        node = node.value
    return isinstance(node, gast.Name) and node.id in ("np", "numpy", "onp", "jnp")


def own_reads(stmt) -> set:
    """Names a statement of `linear`'s order reads itself: an `if` only its test (the
    statements of its branches stand on their own in that order)."""
    if isinstance(stmt, IfEnd):
        return set()
    node = stmt.test if isinstance(stmt, (gast.If, gast.While)) else stmt
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Load)}


def bound_before(body, params) -> dict:
    """id(statement) -> names certainly bound when it runs (a name assigned in only one
    branch, or only in a loop, may not be), as a `Bound` (`in` and iteration)."""
    out = {}

    def walk(block, outer) -> dict:
        added = {}          # name -> position in block of the statement that binds it
        for k, stmt in enumerate(block):
            here = out[id(stmt)] = Bound(outer, added, k)
            if isinstance(stmt, gast.If):
                then, other = walk(stmt.body, here), walk(stmt.orelse, here)
                for name in then:
                    if name in other and name not in here:
                        added[name] = k
            elif isinstance(stmt, LOOPS):
                walk(stmt.body, here)
            elif isinstance(stmt, gast.Assign) and not is_setitem(stmt):
                if target_of(stmt) not in here:
                    added[target_of(stmt)] = k
        return added
    walk(body, frozenset(params))
    return out


class Bound:
    """The names bound before statement k of a block: those bound before the block
    (`outer`) and those its statements 0..k-1 bind (`added`, shared by the whole block).
    A set per statement would make memory grow as the square of the function's length."""

    __slots__ = ("outer", "added", "k")

    def __init__(self, outer, added: dict, k: int):
        self.outer, self.added, self.k = outer, added, k

    def __contains__(self, name) -> bool:
        return self.added.get(name, self.k) < self.k or name in self.outer

    def __iter__(self):
        yield from (name for name, k in self.added.items() if k < self.k)
        yield from self.outer


def index_rereads(norm, stable, written_in_place, shapes) -> dict:
    """id(loop) -> {v: (x, id(statement))} for the statements `v = x[t]` of a loop `for t in range(n)`
    that the adjoint sweep can read again (`v = x[_trips - 1 - _]`, trip by trip from
    the last) instead of saving v on the tape each trip: x is a parameter the function
    never rebinds (`stable`), t is rebound nowhere in the body, every trip assigns v (the
    statement is at the top of a body with no break or continue), the function assigns v
    nowhere else and reads it only in the statements of the body after this one (so no
    older value of v is ever read). x[t] then names the memory it named in the primal
    sweep: a view for an array of two axes or more; an element otherwise, which is the
    same only when nothing in the function writes into an array (`written_in_place`)."""
    assigned, reads = {}, None
    for stmt in assignments(norm.body):
        assigned[target_of(stmt)] = assigned.get(target_of(stmt), 0) + 1
    found = {}
    for loop in _loops(norm.body):
        if not _over_range(loop, norm.fn) or _jumps(loop.body):
            continue
        t = loop.target.id
        if any(target_of(s) == t for s in assignments(loop.body)) or \
                t in _loop_names(loop.body):
            continue
        for position, stmt in enumerate(loop.body):
            if not (isinstance(stmt, gast.Assign) and not is_setitem(stmt) and
                    isinstance(stmt.targets[0], gast.Name) and
                    isinstance(stmt.value, gast.Subscript) and
                    isinstance(stmt.value.value, gast.Name) and
                    isinstance(stmt.value.slice, gast.Name) and stmt.value.slice.id == t):
                continue
            v, x = stmt.targets[0].id, stmt.value.value.id
            shape = shapes.shape(x)
            if x not in norm.params or x not in stable or v in norm.params or \
                    assigned.get(v) != 1 or \
                    written_in_place and not (shape is not None and len(shape) >= 2):
                continue
            if reads is None:
                reads = _loads(norm.body)
            # (counted, not compared by node: the normal form may share a node)
            if reads.get(v, 0) == _loads(loop.body[position + 1:]).get(v, 0):
                found.setdefault(id(loop), {})[v] = x, id(stmt)
    return found


def _loads(body) -> dict:
    """name -> how often `body` reads it."""
    counts = {}
    for stmt in body:
        for n in gast.walk(stmt):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
                counts[n.id] = counts.get(n.id, 0) + 1
    return counts


def _loops(body):
    for stmt in body:
        if isinstance(stmt, LOOPS):
            yield stmt
        for field in ("body", "orelse"):
            if isinstance(stmt, (gast.If,) + LOOPS):
                yield from _loops(getattr(stmt, field))


def _over_range(loop, fn) -> bool:
    """`for t in range(n)`, range the builtin: t is 0, 1, ... trip by trip."""
    it = getattr(loop, "iter", None)
    return isinstance(loop, gast.For) and isinstance(loop.target, gast.Name) and \
        not loop.orelse and isinstance(it, gast.Call) and isinstance(it.func, gast.Name) \
        and it.func.id == "range" and len(it.args) == 1 and not it.keywords and \
        not isinstance(it.args[0], gast.Starred) and fn.lookup("range")[1] is range


def _jumps(body) -> bool:
    """A break or continue of this loop (not of a loop inside it), or a return. (Each is a
    statement, found in the statement lists of the statements around it: their
    expressions, which hold none, are not walked, so that loops nested d deep do not cost
    d walks of the innermost body's expressions.)"""
    todo = [(node, True) for node in body]
    while todo:
        node, own = todo.pop()
        if isinstance(node, gast.Return) or own and isinstance(node, (gast.Break,
                                                                      gast.Continue)):
            return True
        own = own and not isinstance(node, LOOPS)
        for field in _STATEMENT_LISTS:
            inner = getattr(node, field, None)
            if inner:
                todo.extend([(child, own) for child in inner])
    return False


# the fields that hold statements (or handlers and cases, which hold them in turn)
_STATEMENT_LISTS = ("body", "orelse", "finalbody", "handlers", "cases")


def _loop_names(body) -> set:
    return {n.id for loop in _loops(body) if isinstance(loop, gast.For)
            for n in gast.walk(loop.target) if isinstance(n, gast.Name)}
