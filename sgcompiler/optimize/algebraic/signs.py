"""Carry the sign of a subtraction's adjoint to where it is added (when shapes are known):

    d_log2 = -np.sum(dlog_pi)
    d_sub3 = d_log2 / _sum3 * _exp    ->   dlog_w = dlog_pi - np.sum(dlog_pi) / _sum3 * _exp
    dlog_w = d_sub3
    dlog_w += dlog_pi

The adjoint of `a - b` is `-g` for b, one operation of its own, carried through the
products and broadcasts that follow it; a person writes the subtraction where the
contribution is added. Every step is exact for floats: `(-a) / b * c == -(a / b * c)`,
`np.sum(-a) == -np.sum(a)`, `unreduce(-a, x) == -unreduce(a, x)` (rounding is symmetric),
`x += -e` is `x -= e`, and `-e + b == b - e`.

A negation moves only out of a temporary assigned once and read once, by a later
top-level statement, and only when the names it reads are bound at most once and never
written into, and no statement in between writes into any array (which one of them may
share): so it has the same value there. `x = -e` then `x += b` (nothing reading x
in between) becomes `x = b - e` only where x, e and b have one known shape and dtype: an
in-place addition keeps x's dtype, a subtraction gives the operands' result type.
"""
from __future__ import annotations

from collections import Counter

import gast

from ...ir.blocks import nodes
from ...ir.builders import load, store
from .aliasing import passed, reads_only, written_into
from ..known.code_shapes import CodeShapesMaker
from .common import READERS, _set
from .negations import _negation

_LINEAR_HELPERS = ("unreduce", "unbroadcast")


def sink_negations(body, shapes: CodeShapesMaker, np_name, helpers) -> None:
    """Rewrite the top-level statements `body` in place (`shapes`: the function's
    CodeShapesMaker; `helpers`: the runtime helpers linked into the code)."""
    if all(_negation(stmt)[0] is None for stmt in body):
        return      # no `t = -e` to sink (the three walks below would find nothing to do)
    linear = {n for n, f in helpers.items()
              if getattr(f, "__name__", "") in _LINEAR_HELPERS}
    readers = frozenset(n for n, f in helpers.items()
                        if getattr(f, "__name__", "") in READERS)

    def known_calls(call):
        return reads_only(call, (np_name,), readers)
    fixed, into = _fixed_names(body, known_calls)
    gone = _into_readers(body, fixed, into, np_name, linear)
    _cancel_in_readers(body, fixed, np_name)
    gone |= _into_additions(body, gone, shapes, fixed, into)
    body[:] = [s for k, s in enumerate(body) if k not in gone]


def _fixed_names(body, known_calls):
    """(fixed, into): fixed(expr, k) says whether the names expr reads are bound at most
    once, before position k of the top-level statements, and never written into (the same
    value wherever read after k); into[k], how many statements before position k may
    write into an array: by an augmented assignment, a store into an item, `out=`, or a
    call of anything but NumPy and the helpers that only read (`known_calls(call)`)."""
    writes, changed, bound_at, into = Counter(), set(), {}, [0]
    for k, stmt in enumerate(body):
        writing = False
        for node in nodes(stmt):
            if isinstance(node, gast.Name) and \
                    isinstance(node.ctx, (gast.Store, gast.Del)):
                writes[node.id] += 1
                bound_at[node.id] = k
            found = list(written_into(node))
            if isinstance(node, gast.Call) and not known_calls(node):
                found.extend(passed(node))
                writing = True
            changed.update(found)
            writing = writing or bool(found)
        into.append(into[-1] + writing)
    return _Fixed(writes, changed, bound_at), into


class _Fixed:
    def __init__(self, writes, changed, bound_at):
        self.writes, self.changed, self.bound_at = writes, changed, bound_at

    def __call__(self, expr, k) -> bool:
        return all(self.writes[n.id] <= 1 and n.id not in self.changed and
                   self.bound_at.get(n.id, -1) < k
                   for n in nodes(expr) if isinstance(n, gast.Name))


def _readers(body):
    """name -> (top-level positions of the statements that read it, loads in all)."""
    where, count = {}, Counter()
    for k, stmt in enumerate(body):
        for node in nodes(stmt):
            name = None
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                name = node.id
            elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
                name = node.target.id
            if name is not None:
                count[name] += 1
                if not where.get(name) or where[name][-1] != k:
                    where.setdefault(name, []).append(k)
    return where, count


def _into_readers(body, fixed, into, np_name, linear) -> set:
    """`t = -e` read once, as the first factor, the copied value or a linear helper's
    first argument: the reader negates its result instead."""
    where, count = _readers(body)
    writes, gone = fixed.writes, set()
    for i, stmt in enumerate(body):
        name, e = _negation(stmt)
        if name is None:
            continue
        readers = where.get(name, [])
        if not name.startswith("d_") or writes[name] != 1 or count[name] != 1 or \
                len(readers) != 1 or readers[0] <= i or not fixed(e, i) or \
                into[readers[0]] != into[i + 1]:
            continue        # (a write into an array between: e may read it)
        reader = body[readers[0]]
        if _negate_reader(reader, name, e, np_name, linear):
            gone.add(i)
            for n in nodes(e):      # the reader reads what e reads now
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
                    where.setdefault(n.id, []).append(readers[0])
    return gone


def _cancel_in_readers(body, fixed, np_name) -> None:
    """`t = -e` read by several top-level statements, one of which negates it again
    (`d_div = -t`) and the others sum it (`dlog_pi = np.sum(t, axis=0)`) or add it in
    (`x += t`): t = e, and each reader takes the sign (`d_div = t`, `-np.sum(t, ...)`,
    `x -= t`). The negation of a whole array is gone; what is negated is a sum."""
    where, count = _readers(body)
    for i, stmt in enumerate(body):
        name, e = _negation(stmt)
        readers = where.get(name, []) if name is not None else []
        if name is None or not name.startswith("d_") or fixed.writes[name] != 1 or \
                name in fixed.changed or len(readers) < 2 or count[name] != len(readers) \
                or readers[0] <= i:
            continue
        flips = [_sign_taker(body[k], name, np_name) for k in readers]
        if None in flips or not any(kind == "negated" for kind, _ in flips):
            continue
        stmt.value = e
        for kind, reader in flips:
            if kind == "negated":
                reader.value = reader.value.operand
            elif kind == "added":
                reader.op = gast.Sub() if isinstance(reader.op, gast.Add) else gast.Add()
            else:
                reader.value = gast.UnaryOp(op=gast.USub(), operand=reader.value)


def _sign_taker(reader, name, np_name):
    """(how, reader) where `reader` can take t's sign for free or on a sum: "negated"
    (`x = -t`), "added" (`x += t`, `x -= t`), "summed" (`x = np.sum(t, ...)`); None
    otherwise."""
    value = reader.value if isinstance(reader, (gast.Assign, gast.AugAssign)) else None
    if isinstance(reader, gast.AugAssign) and isinstance(reader.target, gast.Name) and \
            isinstance(reader.op, (gast.Add, gast.Sub)) and _is(value, name):
        return "added", reader
    if not (isinstance(reader, gast.Assign) and len(reader.targets) == 1 and
            isinstance(reader.targets[0], gast.Name)):
        return None
    if isinstance(value, gast.UnaryOp) and isinstance(value.op, gast.USub) and \
            _is(value.operand, name):
        return "negated", reader
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and \
            value.func.attr == "sum" and isinstance(value.func.value, gast.Name) and \
            value.func.value.id == np_name and value.args and _is(value.args[0], name):
        return "summed", reader
    return None


def _negate_reader(reader, name, e, np_name, linear) -> bool:
    added = isinstance(reader, gast.AugAssign) and \
        isinstance(reader.op, (gast.Add, gast.Sub))
    if not added and not (isinstance(reader, gast.Assign) and len(reader.targets) == 1 and
                          isinstance(reader.targets[0], gast.Name)):
        return False
    value, holder = reader.value, reader       # holder.op flips, if it is an addition
    if not added and isinstance(value, gast.BinOp) and \
            isinstance(value.op, (gast.Add, gast.Sub)) and not _reads(value.left, name):
        value, holder, added = value.right, value, True     # x = y + t * c
    if _is(value, name):
        _set(holder, "value" if holder is reader else "right", e)
    else:
        slot = _first_factor(value, name, np_name, linear)
        if slot is None:
            return False
        _set(*slot, e)
    if added:
        holder.op = gast.Sub() if isinstance(holder.op, gast.Add) else gast.Add()
    else:
        reader.value = gast.UnaryOp(op=gast.USub(), operand=reader.value)
    return True


def _reads(node, name) -> bool:
    return any(_is(n, name) for n in nodes(node))


def _is(node, name) -> bool:
    return isinstance(node, gast.Name) and node.id == name


def _first_factor(value, name, np_name, linear):
    """(parent, field) where `name` is read, if the value is linear in it with factor 1:
    the first factor of a product or quotient, or a linear helper's first argument."""
    node = value
    while True:
        if isinstance(node, gast.BinOp) and isinstance(node.op, (gast.Mult, gast.Div)):
            if _is(node.left, name):
                return node, "left"
            node = node.left
        elif isinstance(node, gast.Call) and node.args and (
                isinstance(node.func, gast.Name) and node.func.id in linear or
                isinstance(node.func, gast.Attribute) and node.func.attr == "sum" and
                isinstance(node.func.value, gast.Name) and node.func.value.id == np_name):
            if _is(node.args[0], name):
                return node.args, 0
            node = node.args[0]
        else:
            return None


def _into_additions(body, gone, shapes, fixed, into) -> set:
    """`x = -e`, then `x += b` (or `x = x + b`) the next statement to read or bind x:
    `x = b - e`. (Statements in `gone` are no longer there.) The shapes are followed only
    as far as the last such pair, if there is one."""
    pairs, pending = {}, {}     # k -> i of a pair; x -> (i, e) of `x = -e`
    for k, stmt in enumerate(body):
        if k in gone:
            continue
        added = _added_to(stmt)
        if added is not None and added[0] in pending:
            i, _ = pending.pop(added[0])
            if into[k] == into[i + 1]:
                pairs[k] = i
        for node in nodes(stmt):
            if isinstance(node, gast.Name):
                pending.pop(node.id, None)
        negated, e = _negation(stmt)
        if negated is not None and fixed(e, k) and \
                not any(_is(n, negated) for n in nodes(e)):
            pending[negated] = (k, e)
    done = set()
    if not pairs:
        return done
    shapes = shapes()
    for k, stmt in enumerate(body[:max(pairs) + 1]):
        if k in gone:
            continue
        shapes.forget()
        if k in pairs:
            target, b = _added_to(stmt)
            e = body[pairs[k]].value.operand
            x = shapes.shape_of(load(target))
            if x is not None and x[0] is not None and \
                    x == shapes.shape_of(b) == shapes.shape_of(e):
                body[k] = gast.Assign(targets=[store(target)],
                                      value=gast.BinOp(left=b, op=gast.Sub(), right=e),
                                      type_comment=None)
                done.add(pairs[k])
        shapes.track(body[k])
    return done


def _added_to(stmt):
    """(x, b) of `x += b` or `x = x + b`."""
    if isinstance(stmt, gast.AugAssign) and isinstance(stmt.op, gast.Add) and \
            isinstance(stmt.target, gast.Name):
        # (not x += x: b - e would read x before it is bound)
        x = stmt.target.id
        return None if any(_is(n, x) for n in nodes(stmt.value)) else (x, stmt.value)
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
            isinstance(stmt.targets[0], gast.Name) and \
            isinstance(stmt.value, gast.BinOp) and isinstance(stmt.value.op, gast.Add):
        x = stmt.targets[0].id
        right = stmt.value.right
        if _is(stmt.value.left, x) and not any(_is(n, x) for n in nodes(right)):
            return x, right
    return None
