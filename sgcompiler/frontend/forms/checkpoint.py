"""Checkpointed loops (`grad(f, checkpoint="sqrt")`): a long loop's trips run in segments.

Runs after the other forms, before `check`, and only when a checkpoint is asked for. Each
outermost `for` loop over `range(...)` or over a sequence becomes a loop over segments of
about sqrt(n) trips; a segment is a function of its own (frontend/lifted.py), called with the loop's
state and returning it:

    h = x                             h = x
    for t in range(n):          ->    _every = checkpoint_every(n, 'sqrt')
        h = np.tanh(W @ h)            for _first in range(0, n, _every):
    return np.sum(h)                      _last = min(_first + _every, n)
                                          _h_end = loss_segment4(W, h, _first, _last)
                                          h = _h_end
                                      return np.sum(h)
    def loss_segment4(W, h, _first, _last):
        for t in range(_first, _last):
            h = np.tanh(W @ h)
        return h

(several results come back as a tuple, `h, c = loss_segment4(...)`; `for x in xs` runs
`for x in xs[_first:_last]`; `checkpoint=k` makes `_every = k`).

The reverse pass calls a segment's plain function in the primal sweep (no tape), so what
it saves is the state at the start of each segment; the adjoint sweep runs the segment's
forward again from it, taping those trips only, then the segment's backward
(reverse/calls.py, `is_segment`). Tape memory is then about sqrt(n) states plus one
segment's tape, for about one more forward run.

A `while` loop becomes a `while` loop over segments that each run while the condition
holds, at most `_every` trips: 1, 2, 3, ... for "sqrt" (its trip count is not known before
it), k for `checkpoint=k` (`_Segmenter.while_loop`).

What a segment cannot reproduce is refused with its line (replayable.py: `break` or
`return` in the loop, `else:`, random draws, writes into what it is given), and so is a
variable the loop reads that may be unbound before it.

A loop marked `with sgcompiler.checkpoint(every):` (forms/contexts.py keeps its line in
`FunctionSource.checkpointed`) runs in segments even without checkpoint=, with its own
`every`, when the recipe asks for marks (reverse mode's NumPy code).
"""
from __future__ import annotations

import copy
import weakref
from dataclasses import replace

import gast

from ...errors import describe, errors_at
from ... import runtime
from ..lifted import lifted_function
from .replayable import Refused as _Refused, check_replayable, check_writes
from ...ir.blocks import walk

POLICIES = ("sqrt",)
_SEGMENTS: "weakref.WeakSet" = weakref.WeakSet()     # the segment functions made here
# methods of numpy.random.Generator and RandomState that draw numbers
def check_policy(checkpoint):
    """`checkpoint` itself when it is a policy this module knows: None, "sqrt" or a
    positive int (trips per segment).

    Raises:
        ValueError: for anything else.
    """
    if checkpoint is None or checkpoint in POLICIES:
        return checkpoint
    if isinstance(checkpoint, int) and not isinstance(checkpoint, bool) and checkpoint > 0:
        return checkpoint
    raise ValueError(f"checkpoint must be None, 'sqrt' or a positive int (trips per "
                     f"segment), not {checkpoint!r}")


def is_segment(fn) -> bool:
    """Whether `fn` is a loop segment made by `checkpoint_loops`."""
    try:
        return fn in _SEGMENTS
    except TypeError:
        return False


def checkpoint_loops(fn, policy, marks: bool = False):
    """`fn` with each outermost `for` loop run in segments (or `fn` itself when `policy`
    is None), and, when `marks`, each loop marked `with sgcompiler.checkpoint(every):`
    (`fn.checkpointed`) with its own `every`.

    Raises:
        SGCompilerError: for a loop that cannot be checkpointed, with its line.
    """
    marked = dict(fn.checkpointed) if marks else {}
    if policy is None and not marked:
        return fn
    fn = replace(fn, tree=copy.deepcopy(fn.tree))
    maker = _Segmenter(fn, policy, marked)
    try:
        maker.block(fn.tree.body, _bound_params(fn.tree))
        if maker.marked:            # a marked loop inside another loop, say
            line = min(maker.marked)
            node = next((n for n in gast.walk(fn.tree) if isinstance(n, (gast.For, gast.While))
                         and n.lineno == line), None)
            raise _Refused(node, "`with sgcompiler.checkpoint():` runs an outermost loop in "
                                 "segments; this loop is inside another loop: put the block "
                                 "around the outer one")
    except _Refused as exc:
        node, message = exc.args
        raise errors_at([describe(fn, node, message)]) from None
    return replace(fn, introduced={**fn.introduced, **maker.introduced})


def _bound_params(tree) -> set:
    args = tree.args
    return {a.id for a in args.posonlyargs + args.args + args.kwonlyargs} | {
        a.id for a in (args.vararg, args.kwarg) if a is not None}


def _names(node, ctx) -> set:
    return {n.id for n in walk(node) if isinstance(n, gast.Name)
            and isinstance(n.ctx, ctx)}


class _Segmenter:
    """One pass over a function: each outermost loop becomes a loop over segments."""

    def __init__(self, fn, policy, marked):
        self.fn = fn
        self.policy = policy
        self.marked = dict(marked)   # line of a marked loop -> its policy (until it is met)
        self.locals = _names(fn.tree, (gast.Store, gast.Param))
        self.introduced = {}

    def block(self, body, bound):
        """Rewrite the loops of `body` (not inside another loop); `bound` holds the names
        surely bound before it, and is updated to after it."""
        out = []
        for stmt in body:
            every = self.marked.pop(stmt.lineno, self.policy) \
                if isinstance(stmt, (gast.For, gast.While)) else self.policy
            if isinstance(stmt, gast.For) and every is not None:
                out.extend(self.loop(stmt, bound, every))
                continue
            if isinstance(stmt, gast.While) and every is not None:
                out.extend(self.while_loop(stmt, bound, every))
                continue
            if isinstance(stmt, gast.If):
                then, other = set(bound), set(bound)
                self.block(stmt.body, then)
                self.block(stmt.orelse, other)
                bound |= then & other
            else:
                bound |= _surely_bound([stmt], set())
            out.append(stmt)
        body[:] = out

    def loop(self, stmt, bound, every_policy):
        """The statements that run `stmt` in segments of `every_policy` trips."""
        check_replayable(self.fn, self.locals, stmt)
        checks = []
        if self._checked(stmt.iter):    # by_position(xs, ...): checked once, before it
            checks = [gast.Expr(value=stmt.iter)]
            stmt = copy.copy(stmt)
            stmt.iter = stmt.iter.args[0]
        first, last, every = (self._fresh(n) for n in ("_first", "_last", "_every"))
        before, trips, outer, stop, inner = self._ranges(stmt, first, last, every)
        before = checks + before
        target = _names(stmt.target, gast.Store)
        exposed = _exposed(stmt.body, set(target)) & self.locals
        stores = _names(stmt, gast.Store) & self.locals
        outside = {n.id for n in _loads_except(self.fn.tree, stmt)}
        surely = _surely_bound(stmt.body, set(target))
        results = sorted(stores & (outside | exposed))
        sequence = _names(stmt.iter, gast.Load) if isinstance(stmt.iter, gast.Name) else set()
        params = sorted((exposed | (set(results) - surely) | sequence) & self.locals)
        made = {n for s in before for n in _names(s, gast.Store)}
        check_writes(stmt, set(params))
        for name in params:
            if name not in bound and name not in made:
                raise _Refused(stmt, f"'{name}' may be unbound before this loop, which "
                                     "checkpoint= runs in segments that take it as an "
                                     "argument; assign it before the loop")
        reads = set().union(*(_names(s, gast.Load) for s in stmt.body), _names(inner, gast.Load))
        loose = (reads - _names(stmt, gast.Store)) & self.locals - set(params) - {first, last}
        if loose:       # a segment must be given every local it reads, or it reads globals
            raise _Refused(stmt, f"checkpoint= cannot tell how this loop reads "
                                 f"{', '.join(sorted(loose))}; compile it without checkpoint=")
        segment = self._segment(stmt, params + [first, last], inner, results)
        call = _call(self._introduce(segment), [_load(p) for p in params + [first, last]])
        assign = [gast.Assign(targets=[_store(last)], value=stop, type_comment=None)] + \
            self._results(results, call)
        per = gast.Constant(value=every_policy, kind=None) if isinstance(every_policy, int) \
            else _call(self._introduce(runtime.checkpoint_every),
                       [trips, gast.Constant(value=every_policy, kind=None)])
        out = before + [gast.Assign(targets=[_store(every)], value=per, type_comment=None),
                        gast.For(target=_store(first), iter=outer, body=assign, orelse=[],
                                 type_comment=None)]
        bound |= set(results) | {every}     # (a segment runs at least one trip)
        return [_located(s, stmt) for s in out]

    def while_loop(self, stmt, bound, every_policy):
        """The statements that run the `while` loop `stmt` in segments: of
        `every_policy` trips (an int), or, for "sqrt", of 1, 2, 3, ... trips (its trip
        count is not known before it: after m segments of n = m(m + 1)/2 trips in all,
        m, about sqrt(2n), states are kept and a segment tapes at most m trips). A
        segment runs while the condition holds, at most that many trips:

            while abs(term) > eps:              _every = 1
                term = term * x / n     ->      while abs(term) > eps:
                n = n + 1.0                         term, n = f_segment9(n, term, x, _every)
                                                    _every = _every + 1
            def f_segment9(n, term, x, _every):
                _count = 0
                while _count < _every and abs(term) > eps:
                    _count = _count + 1
                    term = term * x / n
                    n = n + 1.0
                return (n, term)
        """
        check_replayable(self.fn, self.locals, stmt)
        every, count = self._fresh("_every"), self._fresh("_count")
        exposed = (_exposed(stmt.body, set()) | _names(stmt.test, gast.Load)) & self.locals
        stores = _names(stmt, gast.Store) & self.locals
        outside = {n.id for n in _loads_except(self.fn.tree, stmt)}
        results = sorted(stores & (outside | exposed))
        params = sorted((exposed | set(results)) & self.locals)
        check_writes(stmt, set(params))
        for name in params:
            if name not in bound:
                raise _Refused(stmt, f"'{name}' may be unbound before this loop, which "
                                     "checkpoint= runs in segments that take it as an "
                                     "argument; assign it before the loop")
        if not results:
            raise _Refused(stmt, "this loop changes nothing read after it; checkpoint= "
                                 "has nothing to keep; remove the loop or the checkpoint")
        test = gast.BoolOp(op=gast.And(), values=[
            gast.Compare(left=_load(count), ops=[gast.Lt()], comparators=[_load(every)]),
            copy.deepcopy(stmt.test)])
        step = gast.Assign(targets=[_store(count)], value=_add(
            count, gast.Constant(value=1, kind=None)), type_comment=None)
        loop = gast.While(test=test, body=[step] + copy.deepcopy(stmt.body), orelse=[])
        start = gast.Assign(targets=[_store(count)], value=gast.Constant(value=0, kind=None),
                            type_comment=None)
        segment = self._segment_function(stmt, params + [every], [start, loop], results)
        call = _call(self._introduce(segment), [_load(p) for p in params + [every]])
        body = self._results(results, call)
        if not isinstance(every_policy, int):
            body.append(gast.Assign(targets=[_store(every)], value=_add(
                every, gast.Constant(value=1, kind=None)), type_comment=None))
        first = every_policy if isinstance(every_policy, int) else 1
        out = [gast.Assign(targets=[_store(every)], value=gast.Constant(value=first, kind=None),
                           type_comment=None),
               gast.While(test=copy.deepcopy(stmt.test), body=body, orelse=[])]
        bound |= {every}
        return [_located(s, stmt) for s in out]

    def _results(self, results, call) -> list:
        """`h, c = segment(...)`; one result is `_h_end = segment(...)`, `h = _h_end` (a
        segment's result is never one of its arguments: its adjoint reads them)."""
        if len(results) != 1:
            return [gast.Assign(targets=[gast.Tuple(elts=[_store(r) for r in results],
                                                    ctx=gast.Store())], value=call,
                                type_comment=None)]
        end = self._fresh(f"_{results[0].lstrip('_')}_end")
        return [gast.Assign(targets=[_store(end)], value=call, type_comment=None),
                gast.Assign(targets=[_store(results[0])], value=_load(end),
                            type_comment=None)]

    def _ranges(self, stmt, first, last, every):
        """(statements before the loop, its trip count, the segments' starts, a segment's
        end, a segment's iterable) for `for t in range(...)` or `for x in xs`."""
        it = stmt.iter
        written = _names(stmt, gast.Store)
        if isinstance(it, gast.Name) and it.id in self.locals:
            if it.id in written:
                raise _Refused(stmt, f"this loop rebinds '{it.id}', the sequence it runs "
                                     "over; checkpoint= needs it unchanged")
            trips = _call("len", [_load(it.id)])
            end = _call("min", [_add(first, _load(every)), copy.deepcopy(trips)])
            outer = _call("range", [gast.Constant(value=0, kind=None), trips, _load(every)])
            inner = gast.Subscript(value=_load(it.id), slice=gast.Slice(
                lower=_load(first), upper=_load(last), step=None), ctx=gast.Load())
            return [], copy.deepcopy(trips), outer, end, inner
        return self._over_range(stmt, first, last, every)

    def _checked(self, it) -> bool:
        """Whether `it` is the front end's run-time check of a loop's sequence (forms/sugar.py:
        a dict is refused there), `by_position(xs, where, text)`."""
        return isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and \
            self.fn.introduced.get(it.func.id) is runtime.by_position and len(it.args) >= 1

    def _over_range(self, stmt, first, last, every):
        """_ranges of `for t in range(start, stop, step)`."""
        it, written = stmt.iter, _names(stmt, gast.Store)
        if not (isinstance(it, gast.Call) and isinstance(it.func, gast.Name)
                and it.func.id == "range" and self.fn.lookup("range")[1] is range
                and 1 <= len(it.args) <= 3 and not it.keywords):
            raise _Refused(stmt, "checkpoint= covers `for` loops over range(...) or over "
                                 "a sequence held in a variable (`for x in xs`); write "
                                 "this one as `for i in range(len(xs)): x = xs[i]`")
        before, args = [], []
        for arg, base in zip(it.args if len(it.args) > 1 else [None] + it.args,
                             ("_start", "_stop", "_step")):
            if arg is None or isinstance(arg, gast.Constant) or \
                    isinstance(arg, gast.Name) and arg.id not in written:
                args.append(arg)
                continue
            name = self._fresh(base)
            before.append(gast.Assign(targets=[_store(name)], value=arg, type_comment=None))
            args.append(_load(name))
        start, stop, step = (args + [None])[:3]
        if step is not None and not (isinstance(step, gast.Constant) and
                                     isinstance(step.value, int) and step.value > 0):
            raise _Refused(stmt, "checkpoint= covers range(...) with a positive constant "
                                 "step; this loop's step is not one")
        stride = _load(every) if step is None else gast.BinOp(
            left=_load(every), op=gast.Mult(), right=copy.deepcopy(step))
        start = start or gast.Constant(value=0, kind=None)
        if step is None and isinstance(start, gast.Constant) and start.value == 0:
            trips = copy.deepcopy(stop)
        else:
            trips = _call("len", [_call("range", [copy.deepcopy(a) for a in
                                                  (start, stop, step) if a is not None])])
        outer = _call("range", [copy.deepcopy(start), copy.deepcopy(stop), stride])
        end = _call("min", [_add(first, copy.deepcopy(stride)), copy.deepcopy(stop)])
        inner = _call("range", [_load(first), _load(last)] +
                      ([copy.deepcopy(step)] if step is not None else []))
        return before, trips, outer, end, inner

    def _segment(self, stmt, params, inner, results):
        """The segment function: the loop over trips first..last, returning its state."""
        loop = gast.For(target=copy.deepcopy(stmt.target), iter=inner,
                        body=copy.deepcopy(stmt.body), orelse=[], type_comment=None)
        return self._segment_function(stmt, params, [loop], results)

    def _segment_function(self, stmt, params, body, results):
        """A segment function of `params` running `body` (the loop `stmt`'s trips) and
        returning `results`."""
        ret = gast.Return(value=_load(results[0]) if len(results) == 1 else gast.Tuple(
            elts=[_load(r) for r in results], ctx=gast.Load()))
        args = gast.arguments(args=[gast.Name(id=p, ctx=gast.Param(), annotation=None,
                                              type_comment=None) for p in params],
                              posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                              kwarg=None, defaults=[])
        name = f"{self.fn.name}_segment{stmt.lineno}"
        tree = gast.FunctionDef(name=name, args=args, body=[_located(b, stmt) for b in body] +
                                [_located(ret, stmt)],
                                decorator_list=[], returns=None, type_comment=None,
                                type_params=[])
        _located(tree, stmt)
        gast.fix_missing_locations(tree)
        key = ("segment", self.fn.function.__code__, stmt.lineno, stmt.col_offset,
               tuple((k, id(v)) for k, v in sorted(self.fn.introduced.items())))
        made = lifted_function(tree, self.fn.globals, key, self.fn.filename,
                               dict(self.fn.introduced), cells=dict(self.fn.closure))
        _SEGMENTS.add(made)
        return made

    def _fresh(self, base):
        name = base
        while name in self.locals or name in self.fn.globals or name in self.introduced \
                or name in self.fn.introduced:
            name += "_"
        self.locals.add(name)
        return name

    def _introduce(self, obj):
        name = getattr(obj, "__name__", "segment")
        while (self.introduced.get(name, obj) is not obj or name in self.locals or
               name in self.fn.globals and self.fn.globals[name] is not obj):
            name = "_" + name
        self.introduced[name] = obj
        return name


def _surely_bound(body, bound) -> set:
    """`bound` and the names every path through `body` assigns (a loop may not run)."""
    bound = set(bound)
    for stmt in body:
        if isinstance(stmt, gast.If):
            bound |= _surely_bound(stmt.body, bound) & _surely_bound(stmt.orelse, bound)
        elif isinstance(stmt, (gast.Assign, gast.AugAssign, gast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, gast.Assign) else [stmt.target]
            bound |= {n.id for t in targets for n in walk(t)
                      if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    return bound


def _exposed(body, bound) -> set:
    """The names `body` may read before assigning them (on some path), given `bound`."""
    out = set()
    bound = set(bound)
    for stmt in body:
        if isinstance(stmt, gast.If):
            out |= _names(stmt.test, gast.Load) - bound
            out |= _exposed(stmt.body, bound) | _exposed(stmt.orelse, bound)
        elif isinstance(stmt, (gast.For, gast.While)):
            head = stmt.iter if isinstance(stmt, gast.For) else stmt.test
            out |= _names(head, gast.Load) - bound
            inner = bound | (_names(stmt.target, gast.Store)
                             if isinstance(stmt, gast.For) else set())
            out |= _exposed(stmt.body, inner)
        else:
            out |= _names(stmt, gast.Load) - bound
            if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
                out |= {stmt.target.id} - bound
        bound = _surely_bound([stmt], bound)
    return out


def _loads_except(node, skip):
    """The Name loads under `node`, except those under `skip`."""
    if node is skip:
        return
    if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
        yield node
    for child in gast.iter_child_nodes(node):
        yield from _loads_except(child, skip)


def _load(name):
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


def _store(name):
    return gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None)


def _call(func, args):
    return gast.Call(func=_load(func), args=args, keywords=[])


def _add(name, value):
    return gast.BinOp(left=_load(name), op=gast.Add(), right=value)


def _located(node, like):
    """`node`, its parts without a place given `like`'s (the loop's line)."""
    for n in walk(node):
        if isinstance(n, (gast.stmt, gast.expr)) and getattr(n, "lineno", None) is None:
            gast.copy_location(n, like)
    return node
