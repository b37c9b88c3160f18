"""A product with a loop-invariant matrix and its tangent made with one product less: the
matrix and its tangent are stacked once, before the loop (tangent code specialised for
known shapes).

    for t in range(_item_0):                 _W_W_dot = np.concatenate((W, W_dot))
        _matmul = W @ h                      for t in range(_item_0):
        _matmul_dot = W_dot @ h + W @ h_dot      _matmul_both = _W_W_dot @ h
                                          ->     _matmul = _matmul_both[:32]
                                                 _matmul_dot = _matmul_both[32:] + W @ h_dot

The tangent of an RNN step's `W @ h` costs two products more than the step itself
(`W_dot @ h + W @ h_dot`); both `W @ h` and `W_dot @ h` multiply the same state, so one
product with the matrices stacked gives both, and a step costs two products instead of
three. With the state as rows (`h @ W`, h of one or two axes) the matrices are stacked
side by side (`np.concatenate((W, W_dot), axis=1)`) and the result is split along its
last axis. `np.dot(W, h)` and `W.dot(h)` are read as `W @ h` (the same for a 2-d matrix and
a state of one or two axes, the only ones rewritten).

When the pair is then added to invariant arrays and their tangents, or to their rows
(`_matmul2s[t]` and `_matmul2_dots[t]`, the input rows optimize/loops/hoisting.py made before the
loop; a bias `b` and `b_dot`), those are stacked before the loop as well and the sum is made
on the stacked product, one sum a step instead of two (see _Loop._absorb):

    _m2 = np.concatenate((_matmul2s, _matmul2_dots), axis=1)      (before the loop)
    _add2_both = _matmul_both + _m2[t]
    _add2 = _add2_both[:32]
    _add2_dot = _add2_both[32:] + W @ h_dot

Only where nothing broadcasts (the arrays or rows have the shape of the pair's value, so
the halves line up) and the halves and rows it replaces are read nowhere else.

(The block matrix [[W, 0], [W_dot, W]] times [h; h_dot] would give both in one product,
but a tangent that is infinite or NaN would then make the value NaN through the zeros:
here the value comes only from W and h, as in the loop.)

Done only where it is certain to give the same values: the product and its tangent are
consecutive statements in a loop at the top of the function, the two matrices are names
of the same known 2-d shape, small (SMALL), that the loop neither assigns nor changes in
place (nor anything that may share their arrays), W is float64 (so the stacking has W's
dtype whatever real dtype the tangent has; jvp refuses a complex tangent of a real
argument), and for `W @ h` the state's number of axes is known (one or two). The split values are views of the stacked product, which nothing else reads.
Like hoisting.py it runs on tangent code only, where the value may differ from
the function's in the last bits (another BLAS call computes it).
"""
from __future__ import annotations

import copy
from collections import Counter
from typing import NamedTuple

import gast
import numpy

from ...ir.blocks import assignment, nodes
from ...ir.builders import const, load, store
from ...ir.naming import unused_name
from .batching import _aliases, _assigned, _before_top_statements, _mutated

# The most elements a matrix may have to be stacked: a product saved is a call saved,
# which pays where the call costs more than its arithmetic (measured on an RNN step:
# 5-15% of the tangent's time at 32 x 32 to 128 x 128; nothing or a loss at 256 x 256).
SMALL = 128 * 128


def stack_tangent_products(tree: gast.FunctionDef, shapes, np_name: str, facts) -> None:
    """Rewrite the loops at the top level of `tree` in place. `shapes` is a fresh
    CodeShapes of `tree`; `facts` the shapes pass's (shape, dtype) of the primal's names."""
    uses = Counter(n.id for n in nodes(tree) if isinstance(n, gast.Name))
    taken = set(uses)
    aliases = _aliases(tree.body)

    def stacked(stmt):
        if not isinstance(stmt, (gast.For, gast.While)) or stmt.orelse:
            return []
        return _Loop(stmt, shapes, np_name, facts, taken, aliases, uses).stack()
    _before_top_statements(tree, shapes, stacked)


class _Loop:
    """One loop at the top of the function and its products that can share a stacking."""

    def __init__(self, loop, shapes, np_name, facts, taken, aliases, uses):
        self.loop, self.shapes, self.np, self.facts, self.taken = \
            loop, shapes, np_name, facts, taken
        self.uses = uses        # name -> how often the function names it
        self.written = set().union(*(_assigned(s) for s in loop.body)) | _assigned(
            loop.target if isinstance(loop, gast.For) else gast.Pass())
        mutated = _mutated(loop.body)
        self.changed = {n for n, group in aliases.items() if group & mutated} | mutated
        self.stacked = {}       # (W, V, matrix first) -> the name of their stacking

    def stack(self) -> list:
        """Rewrite the loop's body; the statements that stack the matrices, for before it."""
        before, body, i = [], self.loop.body, 0
        while i + 1 < len(body):
            found = self._pair(body[i], body[i + 1])
            pair = None if found is None else self._rewrite(body, i, before, *found)
            if pair is None:
                i += 1
                continue
            while True:         # the sums of the pair with invariant rows, one at a time
                absorbed = self._absorb(body, i, pair, before)
                if absorbed is None:
                    break
                i, pair = absorbed
            i += 3
        return before

    def _matrix(self, node):
        """(shape, dtype) of an invariant 2-d matrix (dtype None: not known), else None."""
        if not isinstance(node, gast.Name) or node.id in self.written or \
                node.id in self.changed:
            return None
        found = self.shapes.shape_of(node)
        return found if found is not None and len(found[0]) == 2 else None

    def _rank(self, node):
        """The number of axes of a state (a name), when it is known, else None."""
        if not isinstance(node, gast.Name):
            return None
        found = self.shapes.shape_of(node) if node.id not in self.written else None
        found = found or self.facts.get(node.id)
        return len(found[0]) if found is not None and found[0] is not None else None

    def _pair(self, first, second):
        """(a, W, h, b, V, g, matrix first) for `a = W @ h; b = V @ h + W @ g` (terms in
        either order; or `a = h @ W; b = h @ V + g @ W`), else None."""
        a, product = _assigned_product(first, self.np)
        b, total = assignment(second)
        if a is None or b is None or not isinstance(total, gast.BinOp) or \
                not isinstance(total.op, gast.Add):
            return None
        terms = (_operands(total.left, self.np), _operands(total.right, self.np))
        if None in terms:
            return None
        for matrix_first in (True, False):
            W, h = product if matrix_first else product[::-1]
            for one, other in (terms, terms[::-1]):
                V, h2 = one if matrix_first else one[::-1]
                W2, g = other if matrix_first else other[::-1]
                names = (W, h, V, h2, W2, g)
                if all(isinstance(n, gast.Name) for n in names) and h2.id == h.id and \
                        W2.id == W.id and V.id != W.id and \
                        self._fits(a, b, W.id, h.id, V.id, g.id):
                    return a, W, h, b, V, g, matrix_first
        return None

    def _fits(self, a, b, W, h, V, g) -> bool:
        if a in (h, g, W, V) or b in (W, V, h) or a == b:
            return False
        mw, mv = self._matrix(load(W)), self._matrix(load(V))
        # the stacking has W's dtype, so the value keeps its own: float64, with a tangent
        # of any real dtype (a tangent's is not known here; jvp refuses a complex one)
        return mw is not None and mv is not None and mw[0] == mv[0] and \
            mw[0][0] * mw[0][1] <= SMALL and mw[1] == numpy.float64 and \
            (mv[1] is None or mv[1].kind in "fiub")

    def _stacking(self, W, V, axis, before) -> str:
        """The name of np.concatenate((W, V), axis=axis), made before the loop when new."""
        key = (W, V, axis)
        if key not in self.stacked:
            self.stacked[key] = unused_name(f"_{W}_{V}" if not W.startswith("_") else
                                       f"{W}_both", self.taken)
            pair = gast.Tuple(elts=[load(W), load(V)], ctx=gast.Load())
            side = [gast.keyword(arg="axis", value=const(axis))] if axis else []
            call = gast.Call(func=gast.Attribute(value=load(self.np), attr="concatenate",
                                                 ctx=gast.Load()), args=[pair], keywords=side)
            before.append(gast.Assign(targets=[store(self.stacked[key])], value=call,
                                      type_comment=None))
        return self.stacked[key]

    def _rewrite(self, body, i, before, a, W, h, b, V, g, matrix_first):
        """Replace the pair at body[i], body[i + 1] by three statements (adding the
        stacking's assignment to `before` when it is new); the _Stacked they make, or
        None where it cannot."""
        rank = self._rank(h)
        if matrix_first and rank not in (1, 2):
            return None
        (rows, cols), _ = self._matrix(W)
        stacked = load(self._stacking(W.id, V.id, 0 if matrix_first else 1, before))
        both = unused_name(f"{a}_both", self.taken)
        product = gast.BinOp(left=stacked, op=gast.MatMult(), right=load(h.id)) \
            if matrix_first else gast.BinOp(left=load(h.id), op=gast.MatMult(), right=stacked)
        size = rows if matrix_first else cols
        axis = 0 if matrix_first else (rank - 1 if rank in (1, 2) else None)
        rest = gast.BinOp(left=load(W.id), op=gast.MatMult(), right=load(g.id)) \
            if matrix_first else gast.BinOp(left=load(g.id), op=gast.MatMult(),
                                             right=load(W.id))
        new = [_assign(both, product, body[i]),
               _assign(a, _half(both, axis, None, size), body[i]),
               _assign(b, gast.BinOp(left=_half(both, axis, size, None), op=gast.Add(),
                                     right=rest), body[i + 1])]
        body[i:i + 2] = new
        return _Stacked(both, a, b, axis, size, rest, matrix_first)

    def _absorb(self, body, i, pair, before):
        """Where the value and tangent of `pair` (its three statements at body[i]) are
        next added to invariant arrays X and X_dot, or to their rows X[k] and X_dot[k]
        read just before or after the three, stack X and X_dot too, before the loop,
        and add the pair's stacked product to them:

            _matmul2 = _matmul2s[t]                  (moved out: nothing else reads them)
            _matmul2_dot = _matmul2_dots[t]
            _add2 = _matmul + _matmul2           ->  _add2_both = _matmul_both + _m2s[t]
            _add2_dot = _matmul_dot + _matmul2_dot   _add2 = _add2_both[:32]
                                                     _add2_dot = _add2_both[32:] + W @ h_dot

        The value is the same sum of the same numbers; the tangent adds its terms in
        another order. (start, _Stacked) of the new three statements, else None."""
        end = i + 3
        rows, at, sums = None, i, end           # no rows: X and X_dot themselves
        for place in (end, i - 2):              # the rows after the three, or before
            if place >= 0 and place + 1 < len(body):
                rows = self._rows(body[place], body[place + 1])
                if rows is not None:
                    at, sums = place, (end + 2 if place == end else end)
                    break
        if sums + 1 >= len(body):
            return None
        s, total = assignment(body[sums])
        s_dot, total_dot = assignment(body[sums + 1])
        if s is None or s_dot is None:
            return None
        value = self._added(total, pair.value)
        tangent = self._added(total_dot, pair.tangent)
        if value is None or tangent is None:
            return None
        if rows is not None:
            c, c_dot, X, X_dot, index = rows
            if (value.id, tangent.id) != (c, c_dot):
                return None
        else:
            X, X_dot, index = value.id, tangent.id, None
        if not self._fits_sum(pair, s, s_dot, X, X_dot, index, rows):
            return None
        # the axis of X along which the halves lie: the pair's, after the row's index
        axis = pair.axis if pair.matrix_first else -1
        axis = axis + 1 if index is not None and axis is not None and axis >= 0 else axis
        stacked = load(self._stacking(X, X_dot, -1 if axis is None else axis, before))
        part = stacked if index is None else gast.Subscript(
            value=stacked, slice=copy.deepcopy(index), ctx=gast.Load())
        both = unused_name(f"{s}_both", self.taken)
        new = [_assign(both, gast.BinOp(left=load(pair.both), op=gast.Add(), right=part),
                       body[sums]),
               _assign(s, _half(both, pair.axis, None, pair.size), body[sums]),
               _assign(s_dot, gast.BinOp(left=_half(both, pair.axis, pair.size, None),
                                         op=gast.Add(), right=pair.rest), body[sums + 1])]
        start = min(i, at)
        # keep the stacked product's statement; drop the halves, the rows and the sums
        body[start:sums + 2] = [body[i]] + new
        return start + 1, _Stacked(both, s, s_dot, pair.axis, pair.size, pair.rest,
                                   pair.matrix_first)

    def _rows(self, first, second):
        """(c, c_dot, X, X_dot, k) for `c = X[k]; c_dot = X_dot[k]`, else None."""
        c, row = assignment(first)
        c_dot, row_dot = assignment(second)
        if c is None or c_dot is None or not all(
                isinstance(r, gast.Subscript) and isinstance(r.value, gast.Name)
                for r in (row, row_dot)) or not _plain_index(row.slice) or \
                gast.dump(row.slice) != gast.dump(row_dot.slice):
            return None
        return c, c_dot, row.value.id, row_dot.value.id, row.slice

    def _added(self, total, name):
        """The other operand of `name + other` or `other + name` (a name), else None."""
        if not isinstance(total, gast.BinOp) or not isinstance(total.op, gast.Add):
            return None
        for one, other in ((total.left, total.right), (total.right, total.left)):
            if isinstance(one, gast.Name) and one.id == name and \
                    isinstance(other, gast.Name) and other.id != name:
                return other
        return None

    def _fits_sum(self, pair, s, s_dot, X, X_dot, index, rows) -> bool:
        """Whether X and X_dot (or their rows at `index`) can be stacked into the pair's
        sum: invariant real arrays of one known shape, the shape of the pair's value
        (no broadcasting), and the names removed read nowhere else."""
        found, found_dot = self._invariant(X), self._invariant(X_dot)
        value = self.facts.get(pair.value)
        if found is None or found_dot is None or value is None or value[0] is None or \
                None in value[0] or found[0] != found_dot[0] or \
                found[1] is None or found[1].kind not in "fiub" or \
                (found_dot[1] is not None and found_dot[1].kind not in "fiub"):
            return False
        shape = found[0] if index is None else found[0][1:]
        if tuple(shape) != tuple(value[0]) or X == X_dot:
            return False
        removed = {pair.value, pair.tangent} | ({rows[0], rows[1]} if rows else set())
        uses = self.uses
        if any(uses[n] != 2 for n in removed) or len(removed) != (4 if rows else 2):
            return False
        clash = removed | {pair.both, s, s_dot}
        if s == s_dot or {X, X_dot} & clash:
            return False
        return index is None or not ({n.id for n in nodes(index) if
                                      isinstance(n, gast.Name)} & clash)

    def _invariant(self, name):
        """(shape, dtype) of an array the loop neither assigns nor changes, else None."""
        if name in self.written or name in self.changed:
            return None
        found = self.shapes.shape_of(load(name))
        return found if found is not None and found[0] is not None else None


class _Stacked(NamedTuple):
    """A value and its tangent computed as halves of one stacked array: `both` (the
    statement that assigns it first), value = both[:size] and tangent = both[size:] +
    rest, split along `axis` (None: the last)."""
    both: str
    value: str
    tangent: str
    axis: object
    size: int
    rest: gast.AST
    matrix_first: bool


def _plain_index(index) -> bool:
    """An index of one axis made of names and integers (`t`, `t - 1`): it picks one row."""
    if isinstance(index, gast.Name):
        return True
    if isinstance(index, gast.Constant):
        return type(index.value) is int
    if isinstance(index, gast.BinOp) and isinstance(index.op, (gast.Add, gast.Sub)):
        return _plain_index(index.left) and _plain_index(index.right)
    return False




def _half(name, axis, start, stop):
    """name[start:stop] along `axis` (None: the last, after an Ellipsis)."""
    part = gast.Slice(lower=const(start) if start is not None else None,
                      upper=const(stop) if stop is not None else None, step=None)
    if axis == 0:
        index = part
    elif axis is None:
        index = gast.Tuple(elts=[gast.Constant(value=Ellipsis, kind=None), part],
                           ctx=gast.Load())
    else:
        whole = gast.Slice(lower=None, upper=None, step=None)
        index = gast.Tuple(elts=[whole] * axis + [part], ctx=gast.Load())
    return gast.Subscript(value=load(name), slice=index, ctx=gast.Load())


def _assign(name, value, like):
    return gast.copy_location(gast.Assign(targets=[store(name)], value=value,
                                          type_comment=None), like)


def _assigned_product(stmt, np_name):
    """(target, (left, right)) of `name = left @ right` (or dot), else (None, None)."""
    target, value = assignment(stmt)
    operands = _operands(value, np_name) if target is not None else None
    return (target, operands) if operands is not None else (None, None)


def _operands(value, np_name):
    """(left, right) of `a @ b`, np.dot(a, b), np.matmul(a, b) or a.dot(b), else None."""
    if isinstance(value, gast.BinOp) and isinstance(value.op, gast.MatMult):
        return value.left, value.right
    if not (isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and
            isinstance(value.func.value, gast.Name) and not value.keywords):
        return None
    if value.func.value.id == np_name and value.func.attr in ("dot", "matmul") and \
            len(value.args) == 2:
        return tuple(value.args)
    if value.func.attr == "dot" and len(value.args) == 1 and value.func.value.id != np_name:
        return value.func.value, value.args[0]
    return None
