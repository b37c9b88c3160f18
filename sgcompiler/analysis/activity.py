"""Activity analysis: which variables need an adjoint.

A variable is *varied* if it depends differentiably on a `wrt` argument, and *useful* if the
returned value depends differentiably on it. Only variables that are both (*active*) get
adjoints. `stop_gradient(...)` and non-differentiable operations cut the dependence:

    activity("z = x * 2; m = stop_gradient(z); y = m * x; return y", wrt={"x"})
        varied = {x, z, y}      (m is a constant to the compiler)
        useful = {y, m, x}
        active = {x, y}         -> no adjoint statement for z or the stopped value

The analysis is flow-insensitive over names (a fixed point over every statement, so loops
and branches need nothing special); the normal form's versioned names keep it precise for
straight-line code. It also refuses, with a location, an active value that reaches an
operation with no derivative: an unknown function is an error, never a silent zero.

Its facts are kept as plain data with source lines, for explanations (analysis/why.py,
explain.py) to be printed from what the compiler used: one `Flow` per statement (what it
reads, through which names a gradient flows, what kind of operation it is), and for each
varied or useful name the statement that made it so (`varied_by`, `useful_by`).
"""
from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field

import gast
import numpy as np

from ..errors import describe, errors_at
from ..ir.blocks import nodes, statement_lists, walk
from .facts import Flow, flow_of
from .memory import IfEnd, exclusive, linear_paths, own_reads
from ..frontend.resolve import METHOD, USER, local_names
from ..frontend.normalize import Normalized
from ..rules.registry import runtime_helper_read
from .ops import (APPEND, CALL, CONTAINER, COPY, INDEX, RULE, SETITEM, STOPPED, NO_RULE,
                  assignments, describe_stmt, is_append, is_setitem, target_of)


@dataclass(frozen=True)
class Activity:
    varied: frozenset
    useful: frozenset
    active: frozenset
    flows: tuple = ()       # one Flow per statement, in source order
    wrt: tuple = ()
    returned: str = ""
    # name -> (the name it was reached from, index in flows): why it is varied / useful
    varied_by: dict = field(default_factory=dict, compare=False, hash=False)
    useful_by: dict = field(default_factory=dict, compare=False, hash=False)

    def is_active(self, name: str) -> bool:
        return name in self.active


def described(norm: Normalized, resolution) -> tuple:
    """(statement, its Op) for every assignment (and append) of `norm`, in source order:
    what activity and shapes both read, made once where both run one after the other."""
    return tuple((stmt, describe_stmt(stmt, resolution, norm.fn))
                 for stmt in assignments(norm.body))


def activity(norm: Normalized, resolution, wrt, arrays=None,
             scalars=frozenset(), callees=None, statements=None) -> Activity:
    """Compute the active variables of `norm` for differentiation with respect to `wrt`.
    `arrays` (parameter -> (shape, dtype), when the code is specialised for them) tells
    an element of an array parameter (a number, `x[0]` of a vector) from a view of it;
    `scalars` are parameters known to be Python numbers (which share memory with nothing).
    `callees` (summaries.Callees) tells which arguments a user function may return;
    `statements`, what `described` gives (made here when not given).

    Raises:
        SGCompilerError: when an active value flows into an operation without a derivative.
    """
    fn = norm.fn
    flows = []          # (target, inputs, op, statement)
    for stmt, op in statements if statements is not None else described(norm, resolution):
        flows.append((target_of(stmt), [name for _, name in op.inputs], op, stmt))
    varied_by, useful_by = {}, {}
    varied = reach(set(wrt), [(t, ins) for t, ins, _, _ in flows], varied_by)
    useful = reach({norm.returned}, [(i, [t]) for t, ins, _, _ in flows for i in ins],
                          useful_by, [k for k, (_, ins, _, _) in enumerate(flows) for _ in ins])
    active = frozenset(varied & useful)
    _refuse_in_place_calls(norm, resolution, varied)
    # what the result is computed from, and what its statements read besides their
    # differentiable inputs (an index, an index's index): changing it in place matters
    relevant = _read_by(flows, varied | useful)
    _refuse_late_writes(norm, resolution, flows, varied, relevant, callees)
    _refuse_blocked(fn, flows, varied, useful)
    _refuse_unsupported(fn, flows, varied, useful)
    _refuse_aliased_writes(norm, flows, varied, callees, relevant)
    _refuse_shared_augmented(norm, flows, arrays or {}, scalars, callees)
    facts = tuple(flow_of(stmt, op, resolution) for _, _, op, stmt in flows)
    return Activity(frozenset(varied), frozenset(useful), active, facts, tuple(wrt),
                    norm.returned, varied_by, useful_by)


# results that may share memory with an input (views, the input itself)
_VIEWS = {"np.reshape", "np.transpose", "np.squeeze", "np.expand_dims", "np.asarray",
          "np.ravel", "np.swapaxes", "np.moveaxis", "np.broadcast_to", "np.diagonal",
          # (np.real(x) of a real x is x itself; the splits are lists of views)
          "np.rollaxis", "np.diag", "np.linalg.diagonal", "np.atleast_1d", "np.atleast_2d",
          "np.atleast_3d", "np.flip", "np.fliplr", "np.flipud", "np.rot90", "np.real",
          "np.real_if_close", "np.ascontiguousarray", "np.asfortranarray", "mT",
          "np.matrix_transpose", "np.linalg.matrix_transpose", "np.split", "np.array_split",
          "np.hsplit", "np.vsplit", "np.dsplit"}


def is_view(op, stmt) -> bool:
    """Whether the statement's result may be a view of an input (`x.ravel()`, `x.T`), not
    a copy (`x.flatten()` shares ravel's derivative rule, but always copies)."""
    value = stmt.value
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and \
            value.func.attr == "flatten":
        return False
    if op.kind == RULE and op.rule.name == "np.conjugate":
        # x.conj() of a real x is x itself; np.conjugate(x), a ufunc, makes a new array
        return isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) \
            and isinstance(value.func.value, gast.Name) and value.func.value.id not in \
            ("np", "numpy")
    return op.kind == RULE and op.rule.name in _VIEWS


def _refuse_aliased_writes(norm, flows, varied, callees=None, relevant=frozenset()):
    """x[i] = v is differentiated as a write into x alone; refuse when another variable
    may hold the same memory (an argument, a copy, a view), since its adjoint would
    miss the write. (Varied, not only active, writes: x itself may be unused after the
    write and the view read, as in `t = stop_gradient(x.ravel()); x[0] = w`. And writes
    into constants that share memory with a `relevant` value, one the result is computed
    from or its statements read (an index): in `a = np.sum(x * s); t = s; t[0] = 5.0`,
    the adjoint sweep reads s, for a's adjoint, as t's write left it.) A runtime helper
    that returns none of its arguments
    (`dbuf = prod_grad(g, ans, buf)`, in gradient code read again) returns a new array,
    which nothing else holds."""
    setitems = {t for t, _, op, _ in flows if op.kind == SETITEM}
    written = setitems & varied
    if not setitems:
        return
    # (a constant matters where it is written after the statement: in program order, or
    # in a loop whose next trip writes it after)
    position, loops, writes = {}, set(), {}
    for k, (stmt, in_loop, _) in enumerate(in_order(norm.body)):
        position[id(stmt)] = k
        if in_loop:
            loops.add(id(stmt))
    for t, _, op, stmt in flows:
        if op.kind == SETITEM:
            writes.setdefault(t, []).append(stmt)

    def written_after(name, stmt) -> bool:
        here = position.get(id(stmt), -1)
        return any(position.get(id(w), here + 1) > here or
                   id(w) in loops and id(stmt) in loops for w in writes.get(name, ()))

    readers = {}
    for _, _, op, stmt in flows:
        for n in op.reads:
            readers.setdefault(n, []).append(stmt)

    def used_at_once(target, name, stmt) -> bool:
        """A temporary the normal form made (`_ravel = np.ravel(s)`), read by one
        statement before s is written again, outside loops: the reference is gone
        before the write."""
        found = readers.get(target, ())
        if not _single_use_temporary(target, norm, reads) or len(found) != 1 or \
                id(stmt) in loops:
            return False
        at = position.get(id(found[0]), -1)
        here = position.get(id(stmt), -1)
        return all(not here < position.get(id(w), -1) <= at for w in writes.get(name, ()))
    relevant = relevant | varied
    reads = {}
    for _, _, op, _ in flows:
        for name in op.reads:
            reads[name] = reads.get(name, 0) + 1
    # temporaries that a copy reads: `copied(np.broadcast_to(dbuf, ...))` (what code read
    # again saves) holds no reference to dbuf
    copied = {n for _, _, op, _ in flows if op.kind == RULE and
              op.rule.name in ("copied", "np.copy") for n in op.reads}
    problems = []
    for target, inputs, op, stmt in flows:
        if op.kind == COPY and _single_use_temporary(op.inputs[0][1], norm, reads):
            continue       # `buf = _mul`: the new array of `buf = buf * 2.0`
        if is_view(op, stmt) and target in copied and \
                _single_use_temporary(target, norm, reads):
            continue
        if op.kind == SETITEM:
            if target in norm.params and written:
                problems.append(describe(norm.fn, stmt, f"writing into the argument "
                                         f"'{target}' changes the caller's array; copy it "
                                         f"first ({target} = {target}.copy())"))
            continue
        # (a constant written into matters where what it shares memory with is used)
        binds = target in written or target in setitems and (
            target in relevant or any(n in relevant for n in op.reads)) and \
            written_after(target, stmt)
        if binds and (op.kind in (COPY, STOPPED, INDEX, NO_RULE) or
                      op.kind == CALL and not _returns_new(op, callees) or
                      is_view(op, stmt)):
            problems.append(describe(norm.fn, stmt, f"'{target}' is written in place later "
                                     "but may share memory with another value here; make "
                                     "it a copy (.copy()) before writing into it"))
        shared = [n for n in op.reads if (n in written or n in setitems and (
            n in relevant or target in relevant) and written_after(n, stmt) and
            not used_at_once(target, n, stmt)) and not _read_only_by_helper(op, n)]
        if shared and op.kind in (COPY, STOPPED, CONTAINER, APPEND, CALL) or \
                shared and is_view(op, stmt):
            problems.append(describe(norm.fn, stmt, f"'{shared[0]}' is written in place, "
                                     "and this keeps a reference to it; use "
                                     f"{shared[0]}.copy() here"))
    if problems:
        raise errors_at(list(dict.fromkeys(problems)))


def _returns_new(op, callees) -> bool:
    """Whether a call is to a runtime helper read through its source whose result is
    none of its arguments, nor a view of one (callees' summary: a new array)."""
    return callees is not None and runtime_helper_read(op.rule) and \
        not callees.returned_params(op.rule)


def _read_only_by_helper(op, name) -> bool:
    """Whether a call passes `name` to a runtime helper read through its source (gradient
    code read again) other than as its first argument, `g`: the helper reads that value
    (prod_grad's x) and returns new arrays, no reference to it."""
    if op.kind != CALL or not runtime_helper_read(op.rule):
        return False
    passed = [p for p, node in op.args.items() if isinstance(node, gast.Name) and
              node.id == name]
    first = op.rule.__code__.co_varnames[:1]
    return bool(passed) and not any(p in first for p in passed)


def _single_use_temporary(name, norm, reads) -> bool:
    """A temporary the normal form made (not a user's name), read once: by this copy."""
    return name not in local_names(norm.fn.tree) and reads.get(name) == 1


def _loop_targets(body):
    """(names bound by `for ... in range(...)` loops, names bound by other for loops)."""
    ranges, other = set(), set()
    for stmt in body:
        if isinstance(stmt, gast.For):
            over_range = isinstance(stmt.target, gast.Name) and \
                isinstance(stmt.iter, gast.Call) and isinstance(stmt.iter.func, gast.Name) \
                and stmt.iter.func.id == "range"
            (ranges if over_range else other).update(
                n.id for n in walk(stmt.target) if isinstance(n, gast.Name))
        for inner in (getattr(stmt, "body", None), getattr(stmt, "orelse", None)):
            if isinstance(inner, list):
                more = _loop_targets(inner)
                ranges |= more[0]
                other |= more[1]
    return ranges, other


def _elements(flows, arrays, bound, counters) -> set:
    """Ids of statements `v = x[i, j]` that read one element of array parameter x (never
    `bound` in the function) by as many whole-number indices (constants, `counters`) as x
    has axes: a NumPy number, which shares no memory with x."""
    found = set()
    for _, _, op, stmt in flows:
        value = stmt.value
        if op.kind != INDEX or not isinstance(value, gast.Subscript) or \
                not isinstance(value.value, gast.Name):
            continue
        x = value.value.id
        if x not in arrays or x in bound or arrays[x][1].kind not in "biufc":
            continue        # (an element of an object array may be a list)
        index = value.slice.elts if isinstance(value.slice, gast.Tuple) else [value.slice]
        whole = all(isinstance(i, gast.Constant) and type(i.value) is int or
                    isinstance(i, gast.Name) and i.id in counters for i in index)
        if whole and len(index) == len(arrays[x][0]):
            found.add(id(stmt))
    return found


def _refuse_shared_augmented(norm, flows, arrays, scalars, callees):
    """`x += y` updates an array in place in Python, so another name for the same array
    (b = x, a view x[...] or x.T) sees the change; the normal form makes a new value
    instead. Refuse when such a name is read after the update, rather than differ."""
    if not norm.augmented:
        return
    points = _Points(linear_paths(norm.body))
    edges = _alias_edges(norm, flows, arrays, scalars, callees)
    problems = []
    for stmt_id, name in norm.augmented:
        for at in points.positions.get(stmt_id, ()):
            seen = _shared_reads(points, edges, name, at)
            if seen:
                user = norm.namer.user_name(name)
                problems.append(describe(norm.fn, points.order[at], f"'+=' and the like "
                                         f"change an array in place, and "
                                         f"{_who(norm, seen)} refers to the same array; "
                                         f"write {user} = {user} + ... (a new array) or "
                                         "copy it first (.copy())"))
    if problems:
        raise errors_at(list(dict.fromkeys(problems)))


class _Points:
    """The statements of a function in linear order (both branches of an if, a loop
    body once), with where each name is assigned."""

    def __init__(self, walk):
        self.order = [s for s, _ in walk]
        self.paths = [p for _, p in walk]
        self.positions, self.assigned_at, self.opened = {}, {}, {}
        # jumps[k]: the break, continue and return statements among the first k
        self.jumps = [0]
        for s in self.order:
            self.jumps.append(self.jumps[-1] + isinstance(s, (gast.Break, gast.Continue,
                                                                gast.Return)))
        for i, s in enumerate(self.order):
            self.positions.setdefault(id(s), []).append(i)
            if isinstance(s, IfEnd):          # both branches assigned these
                # where the if began
                self.opened[i] = max(j for j in self.positions[id(s.stmt)] if j < i)
                for name in s.assigns:
                    self.assigned_at.setdefault(name, []).append(i)
            elif isinstance(s, gast.Assign) and not is_setitem(s) or is_append(s):
                # (x[i] = v writes into x: the name still refers to the array a view shares)
                self.assigned_at.setdefault(target_of(s), []).append(i)

    def rebound(self, name, start, stop) -> bool:
        """name is certainly assigned after `start` on the way to `stop` (an assignment in
        a branch that may not run does not count, unless it is in the block of `start`,
        or one around it, with no jump in between: it runs whenever `start` does; and the
        end of an if whose branches both assign it ends only links made before that if,
        not those its branches make)."""
        paths = self.paths
        return any(start < i < stop and (paths[stop][:len(paths[i])] == paths[i] or
                                         self._follows(start, i))
                   and not (i in self.opened and self.opened[i] < start)
                   for i in self.assigned_at.get(name, ()))

    def _follows(self, start, i) -> bool:
        """Whether statement `i` runs whenever statement `start`, before it, does: it is
        in the same block or one around it (the same loop pass), with no jump between."""
        paths = self.paths
        return paths[start][:len(paths[i])] == paths[i] and \
            self.jumps[i] == self.jumps[start + 1]


def _alias_edges(norm, flows, arrays, scalars, callees) -> list:
    """(name, name it may share an array with, statement that links them): copies,
    views, elements of arrays, and arguments a user function may return."""
    # a user function's result may be one of its arguments (helper(u) returns u when its
    # loop runs no trips)
    calls = _call_edges(flows, callees)
    # elements of a tuple or list (a call's results, a literal) are separate objects
    separate = {t for t, _, op, _ in flows if op.kind in (CALL, CONTAINER) or
                (op.kind == RULE and op.rule.multiple_results)} - {t for t, _, _ in calls}
    assigned = {t for t, _, _, _ in flows}
    ranges, other = _loop_targets(norm.body)
    bound = assigned | ranges | other
    elements = _elements(flows, arrays, bound, counters=ranges - other - assigned)
    edges = [(t, op.inputs[0][1] if op.inputs else op.reads[0], stmt)
             for t, _, op, stmt in flows
             if (op.kind in (COPY, STOPPED, INDEX) or
                 is_view(op, stmt)) and (op.inputs or op.reads)
             and not (op.kind == INDEX and op.inputs and op.inputs[0][1] in separate)
             and id(stmt) not in elements]
    numbers = set(scalars) - bound          # Python numbers: nothing can share them
    return [(a, b, stmt) for a, b, stmt in edges if b not in numbers] + calls


def _shared_reads(points, edges, name, at) -> set:
    """Names that refer to `name`'s array when the update at `at` changes it, read by
    the first later statement that reads any (empty: none is)."""
    # links made before the update, with neither name assigned again in between: a name
    # may refer to itself or to what it was made from (a copy, a view, an element, a
    # returned argument). Two names share an array when what they may refer to meets;
    # `t = a if c else y` links t to both, but not a to y.
    made_from = {}
    for a, b, stmt in edges:
        if any(pos < at and not points.rebound(a, pos, at) and
               not points.rebound(b, pos, at) and
               not exclusive(points.paths[pos], points.paths[at])
               for pos in points.positions.get(id(stmt), ())):
            made_from.setdefault(a, set()).add(b)
            made_from.setdefault(b, set())
    mine = _reachable(name, made_from)
    others = {n for n in made_from if n != name and _reachable(n, made_from) & mine}
    for j in range(at + 1, len(points.order)):
        seen = {n for n in own_reads(points.order[j]) & others
                if not points.rebound(n, at, j)}
        if seen:
            return seen
    return set()


def _who(norm, names) -> str:
    """How a message names one of `names`: a variable of the user's if there is one."""
    mine = local_names(norm.fn.tree) | set(norm.params)
    users = sorted({norm.namer.user_name(n) for n in names} & mine)
    if users:
        return f"'{users[0]}'"
    if any(n.startswith("_return_value") for n in names):
        return "the value an earlier 'return' gave"
    return "a value made from it"


def _reachable(name, made_from) -> set:
    """name and every name it may have been made from, directly or through others."""
    seen, todo = set(), [name]
    while todo:
        n = todo.pop()
        if n not in seen:
            seen.add(n)
            todo.extend(made_from.get(n, ()))
    return seen


def _call_edges(flows, callees):
    """(result, argument, statement) for each argument a user function may return."""
    out = []
    for target, _, op, stmt in flows:
        if op.kind == CALL:
            params = callees.returned_params(op.rule) if callees else all_params(op.rule)
            for param in sorted(params):
                atom = op.args.get(param)
                if isinstance(atom, gast.Name):
                    out.append((target, atom.id, stmt))
    return out


def reach(seed: set, edges, by=None, where=None) -> set:
    """Names reachable from `seed` along edges (target, sources): target if any source.
    `by`, when given, gets name -> (the source it was reached from, where[k] for the k-th
    edge, or k): the first way each name was reached.

    "First" is that of sweeping the edges in order, again and again until a sweep adds
    nothing. The sweeps are simulated, not run (a chain written against the edges' order
    took one sweep per link, the square of the function's length): each edge waits on a
    heap under (sweep, position) for the sweep in which it first sees a source reached.
    """
    reached = set(seed)
    users = {}
    for k, (target, sources) in enumerate(edges):
        for source in sources:
            users.setdefault(source, []).append(k)
    waiting = [(0, k) for name in reached for k in users.get(name, ())]
    heapq.heapify(waiting)
    while waiting:
        sweep, k = heapq.heappop(waiting)
        target, sources = edges[k]
        if target in reached:
            continue
        source = next(s for s in sources if s in reached)
        reached.add(target)
        if by is not None:
            by[target] = (source, k if where is None else where[k])
        for later in users.get(target, ()):
            if edges[later][0] not in reached:
                heapq.heappush(waiting, (sweep if later > k else sweep + 1, later))
    return reached


# NumPy functions that write into an argument (and return None)
_IN_PLACE = tuple(getattr(np, n) for n in ("copyto", "put", "place", "putmask",
                                           "fill_diagonal", "put_along_axis") if hasattr(np, n)) \
    + (np.random.shuffle,)
# methods that change their first argument, not the object they are called on
_ARGUMENT_WRITERS = {"shuffle"}         # (np.random.Generator.shuffle(x))
# methods that change the list, dict or array they are called on
_MUTATING_METHODS = {"pop", "extend", "insert", "remove", "reverse", "sort", "clear",
                     "update", "setdefault", "popitem", "fill", "put", "resize", "itemset",
                     "partition", "setfield", "__setitem__", "__iadd__"}
MUTATING_METHODS = frozenset(_MUTATING_METHODS | {"append"})
# the names of _IN_PLACE and of ufunc.at, as a callee's source spells them (np.copyto)
IN_PLACE_NAMES = frozenset(f.__name__ for f in _IN_PLACE) | {"at"} | _ARGUMENT_WRITERS


def _library_writes(call, callee, discarded):
    """How messages name a library call that changes one of its arguments or its
    receiver in place (None when it changes nothing), and the nodes it changes: what it
    writes with out=, the receiver of a method that changes it, the argument of
    Generator.shuffle, a ufunc's output arguments, ufunc.at's and np.copyto's first
    argument. The analysis only follows assignments, so such a change is unseen."""
    name, obj = callee.name or "the call", callee.obj
    nodes = [k.value for k in call.keywords if k.arg == "out"]
    what = f"{name}(..., out=...)" if nodes else None
    if callee.kind == METHOD:
        if callee.name in _MUTATING_METHODS or (discarded and callee.name != "append"):
            what = what or f"the method .{callee.name}()"
            if isinstance(call.func, gast.Attribute):
                nodes.append(call.func.value)
        if callee.name in _ARGUMENT_WRITERS and call.args:
            nodes.append(call.args[0])
    elif isinstance(obj, np.ufunc) and len(call.args) > obj.nin:
        what = what or f"{name} with an output argument"
        nodes += call.args[obj.nin:]
    elif isinstance(getattr(obj, "__self__", None), np.ufunc) and \
            getattr(obj, "__name__", "") == "at" or any(obj is f for f in _IN_PLACE):
        what = what or name
        nodes += call.args[:1]
    return what, nodes


def _refuse_in_place_calls(norm, resolution, varied) -> None:
    """Refuse `np.add.at(y, i, x)`, `y.fill(v)`, `np.sin(x, out=y)`, `L.extend(...)` on
    a varied value (or with one): their gradient would be silently wrong."""
    problems = []
    for body in statement_lists(norm.body):
        for stmt in body:
            if isinstance(stmt, gast.Expr) and is_append(stmt):
                continue
            call = stmt.value if isinstance(stmt, (gast.Expr, gast.Assign)) else None
            if not isinstance(call, gast.Call):
                continue
            what, _ = _library_writes(call, resolution.callee(call.func),
                                      isinstance(stmt, gast.Expr))
            names = [n.id for n in walk(call) if isinstance(n, gast.Name)
                     and n.id in varied]
            if what and names:
                # (name a variable of the user's, not a temporary of the normal form)
                own = [n for n in names if not n.startswith("_")]
                which = f"'{own[0]}'" if own else "a value that"
                problems.append(describe(norm.fn, stmt, (
                    f"{what} changes a value in place, and {which} depends on the "
                    "differentiated argument; sgcompiler follows only assignments, so "
                    "compute a new value instead (y = y + v, y[i] = v, y = np.sort(y), "
                    "L = L + [v])")))
    if problems:
        raise errors_at(list(dict.fromkeys(problems)))


def written_by_call(call, resolution, discarded, callees=None) -> list:
    """The caller's names a call changes in place: what it writes with out=, the receiver
    of a method that changes it, a ufunc's output arguments, np.add.at's and np.copyto's
    first argument, and arguments a user function writes into (callees'
    written_params)."""
    try:
        callee = resolution.callee(call.func)
    except KeyError:
        return []
    _, nodes = _library_writes(call, callee, discarded)
    found = [name for node in nodes for name in _names(node)]
    obj = callee.obj
    if callee.kind == USER and callees is not None and hasattr(obj, "__code__"):
        written = callees.written_params(obj)
        if written:
            code = obj.__code__
            params = code.co_varnames[:code.co_argcount]
            for name, arg in zip(params, call.args):
                if name in written:
                    found += _names(arg)
            for keyword in call.keywords:
                if keyword.arg in written:
                    found += _names(keyword.value)
    return found


def _names(node) -> list:
    """A name, or the names of a tuple of names."""
    if isinstance(node, gast.Name):
        return [node.id]
    if isinstance(node, gast.Tuple):
        return [e.id for e in node.elts if isinstance(e, gast.Name)]
    return []


def in_order(body, in_loop=False, loop=None):
    """(statement, whether it is inside a loop, the innermost loop around it) for every
    statement, in program order (a compound statement before the statements of its
    blocks)."""
    for stmt in body:
        yield stmt, in_loop, loop
        inside = stmt if isinstance(stmt, (gast.For, gast.While)) else loop
        for part in ("body", "orelse"):
            inner = getattr(stmt, part, None)
            if isinstance(inner, list):
                yield from in_order(inner, inside is not None, inside)


def _read_by(flows, names) -> frozenset:
    """`names` and everything the statements computing them read, transitively (an
    index's index: `rows = idx[:2]`, `X[rows]`), in one sweep of a worklist."""
    reads = {}
    for target, _, op, _ in flows:
        reads.setdefault(target, []).extend(op.reads)
    found, todo = set(names), list(names)
    while todo:
        for n in reads.get(todo.pop(), ()):
            if n not in found:
                found.add(n)
                todo.append(n)
    return frozenset(found)


def _generated(fn) -> bool:
    """Whether `fn` is sgcompiler's generated code (a piece of a gradient read again)."""
    code = getattr(fn, "__code__", None)
    return code is not None and code.co_filename.startswith("<sgcompiler ")


def _refuse_late_writes(norm, resolution, flows, varied, relevant, callees) -> None:
    """Refuse a call that changes in place an array the gradient reads: a user function
    that writes into a differentiated argument (`h(s)` with `def h(r): r[0] = 2.0`), or
    any in-place change (`s.fill(v)`, `s.sort()`, out=s, h(s)) of a constant that the
    result is computed from after it was read (or in a loop, where the next trip reads
    it after): the adjoint sweep reads the constant as the change left it, where the
    forward sweep read it before. The analysis follows assignments only. (`relevant`:
    what the result is computed from, and what those statements read.)"""
    problems = []
    ops = {id(stmt): op for _, _, op, stmt in flows}
    # Memory is followed as groups of names that may hold the same array (a copy `t = s`
    # or a view joins s's group; a new array starts one): `read` holds the groups the
    # result was computed from, `fresh` the innermost loop each group was made in.
    group, read, fresh, made = {}, set(), {}, itertools.count()

    def group_of(name):
        if name not in group:
            group[name] = next(made)
            fresh[group[name]] = False
        return group[name]
    for stmt, in_loop, loop in in_order(norm.body):
        call = stmt.value if isinstance(stmt, (gast.Expr, gast.Assign)) else None
        if isinstance(call, gast.Call) and not (isinstance(stmt, gast.Expr) and
                                                is_append(stmt)):
            try:
                callee = resolution.callee(call.func) if isinstance(
                    call.func, (gast.Name, gast.Attribute)) else None
            except KeyError:
                callee = None
            user = callee is not None and callee.kind == USER
            # (generated code's pieces write into the adjoints they are given, which
            # their callers hand over: `dx, = h_backward(dhs, saved)`)
            generated = user and _generated(callee.obj)
            for name in [] if generated else written_by_call(
                    call, resolution, isinstance(stmt, gast.Expr), callees):
                shown = norm.namer.user_name(name)
                own = f"'{shown}'" if not shown.startswith("_") else "a value"
                memory = group_of(name)
                if user and name in varied:
                    problems.append(describe(norm.fn, stmt, (
                        f"{callee.name} changes {own} in place, and it depends on the "
                        "differentiated argument; sgcompiler follows only assignments, "
                        "so make the function return a new array instead")))
                elif name in relevant | {n for n, g in group.items() if g == memory} and \
                        name not in varied and (memory in read or
                                                in_loop and fresh[memory] is not loop):
                    # (in a loop, a name bound again earlier in the same trip holds a
                    # new array: a change to it before it is read is followed)
                    problems.append(describe(norm.fn, stmt, (
                        f"this changes {own} in place after the result was computed from "
                        "it; the gradient would read it as changed, so compute a new "
                        f"value instead, or copy it first ({shown} = {shown}.copy())")))
        if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)):
            continue
        name, op = stmt.targets[0].id, ops.get(id(stmt))
        shares = op is not None and (op.kind in (COPY, INDEX) or is_view(op, stmt))
        maybe = op is not None and op.kind in (STOPPED, CALL, NO_RULE)
        # (what the result is computed from reads: a copy or a view of a name reads no
        # value, it names the same array)
        if not shares and name in relevant:
            read.update(group_of(n.id) for n in nodes(stmt.value)
                        if isinstance(n, gast.Name))
        if shares and op.reads:
            group[name] = group_of(op.reads[0])
        elif maybe and any(group_of(n) in read for n in op.reads):
            group[name] = next(made)            # (may hold what was read: read too)
            read.add(group[name])
            fresh[group[name]] = False
        else:                                   # a new array
            group[name] = next(made)
            fresh[group[name]] = loop
    if problems:
        raise errors_at(list(dict.fromkeys(problems)))


def _refuse_blocked(fn, flows, varied, useful) -> None:
    # Where no gradient can flow (an unknown function, an attribute), follow the values as
    # if it could, so that a chain of such operations is refused, not silently cut.
    passing = [(t, ins + [n for _, n in op.blocked] if op.kind == NO_RULE else ins)
               for t, ins, op, _ in flows]
    varied = reach(set(varied), passing)
    useful = reach(set(useful), [(i, [t]) for t, ins in passing for i in ins])
    problems, reported = [], set()
    for target, _, op, stmt in flows:
        if target not in useful:
            continue
        for param, name in op.blocked:
            if name not in varied:
                continue
            reported.add(target)
            if name in reported:       # the operation that made `name` is reported already
                continue
            if op.kind == NO_RULE:
                what = op.why or f"there is no derivative rule for {op.what}"
            elif op.kind == RULE:
                what = f"the derivative rule of {op.what} gives no gradient for its " \
                       f"parameter '{param}'"
            else:
                what = f"{op.what} is not differentiable"
            problems.append(describe(fn, stmt, f"'{name}' depends on the differentiated "
                                               f"argument, but {what}; wrap it in "
                                               "stop_gradient if no gradient should flow "
                                               "there, or register a rule with "
                                               "sgcompiler.adjoint"))
    if problems:
        raise errors_at(list(dict.fromkeys(problems)))


def _refuse_unsupported(fn, flows, varied, useful) -> None:
    """A gradient through a rule called with an option its rule does not handle
    (np.pad(mode="linear_ramp"), np.average(returned=True)) is refused here, with the
    line, rather than raising in the generated code. (An option given as a variable is
    known only at run time: the runtime helper checks it then.)"""
    local = None        # (found at the first such rule: most functions call none)
    problems = []
    for target, ins, op, stmt in flows:
        if op.kind != RULE or not op.rule.supported or target not in useful \
                or not any(n in varied for n in ins):
            continue
        if local is None:
            local = local_names(fn.tree)
        for param, allowed in op.rule.supported.items():
            known, value = _literal(fn, op.args[param], local) if param in op.args \
                else (True, op.rule.defaults.get(param))
            if not known and allowed == (False,):
                # a flag that makes the call return a tuple (retstep, returned): the
                # code after the call is made for one result, so it must be known now
                problems.append(describe(fn, stmt, f"{op.rule.name}'s {param} decides "
                                                   "whether it returns one result or two, "
                                                   "and only one has a gradient: pass "
                                                   f"{param}=False as a literal"))
                continue
            if not known:
                continue        # a variable (a parameter, say): checked when it runs
            if callable(allowed):
                if allowed(value):
                    continue
                shown = ""
            elif any(value is a or type(value) is type(a) and value == a for a in allowed):
                continue
            else:
                shown = f"; the supported values are {', '.join(map(repr, allowed))}"
            text = repr(value)
            problems.append(describe(fn, stmt, f"the gradient of {op.rule.name} with "
                                               f"{param}={text} is not supported{shown}; "
                                               "wrap the call in stop_gradient if no "
                                               "gradient should flow through it"))
    if problems:
        raise errors_at(list(dict.fromkeys(problems)))


def _literal(fn, node, local):
    """(True, value) for a constant, or a global name or attribute chain (np.complex64);
    (False, None) for a value known only at run time."""
    if isinstance(node, gast.Constant):
        return True, node.value
    parts = []
    while isinstance(node, gast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, gast.Name) or node.id in local:
        return False, None
    found, value = fn.lookup(node.id)
    for attr in reversed(parts):
        value = getattr(value, attr, None)
    return found, value


def all_params(fn) -> frozenset:
    """Every parameter of `fn` (what its result may be, when nothing else is known)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return frozenset()
    return frozenset(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])


__all__ = ["Activity", "Flow", "activity", "reach", "all_params", "assignments", "is_view", "COPY", "INDEX"]
