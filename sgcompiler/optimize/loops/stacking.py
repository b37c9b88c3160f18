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

import gast
import numpy

from ...ir.blocks import assignment, nodes
from ...ir.builders import const, load, store
from .batching import _aliases, _assigned, _before_top_statements, _fresh, _mutated

# The most elements a matrix may have to be stacked: a product saved is a call saved,
# which pays where the call costs more than its arithmetic (measured on an RNN step:
# 5-15% of the tangent's time at 32 x 32 to 128 x 128; nothing or a loss at 256 x 256).
SMALL = 128 * 128


def stack_tangent_products(tree: gast.FunctionDef, shapes, np_name: str, facts) -> None:
    """Rewrite the loops at the top level of `tree` in place. `shapes` is a fresh
    CodeShapes of `tree`; `facts` the shapes pass's (shape, dtype) of the primal's names."""
    taken = {n.id for n in nodes(tree) if isinstance(n, gast.Name)}
    aliases = _aliases(tree.body)

    def stacked(stmt):
        if not isinstance(stmt, (gast.For, gast.While)) or stmt.orelse:
            return []
        return _Loop(stmt, shapes, np_name, facts, taken, aliases).stack()
    _before_top_statements(tree, shapes, stacked)


class _Loop:
    """One loop at the top of the function and its products that can share a stacking."""

    def __init__(self, loop, shapes, np_name, facts, taken, aliases):
        self.loop, self.shapes, self.np, self.facts, self.taken = \
            loop, shapes, np_name, facts, taken
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
            if found is None or not self._rewrite(body, i, before, *found):
                i += 1
                continue
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

    def _rewrite(self, body, i, before, a, W, h, b, V, g, matrix_first) -> bool:
        """Replace the pair at body[i], body[i + 1] by three statements (adding the
        stacking's assignment to `before` when it is new); False where it cannot."""
        rank = self._rank(h)
        if matrix_first and rank not in (1, 2):
            return False
        (rows, cols), _ = self._matrix(W)
        key = (W.id, V.id, matrix_first)
        if key not in self.stacked:
            self.stacked[key] = _fresh(f"_{W.id}_{V.id}", self.taken)
            pair = gast.Tuple(elts=[load(W.id), load(V.id)], ctx=gast.Load())
            side = [] if matrix_first else [gast.keyword(arg="axis", value=const(1))]
            call = gast.Call(func=gast.Attribute(value=load(self.np), attr="concatenate",
                                                 ctx=gast.Load()), args=[pair], keywords=side)
            before.append(gast.Assign(targets=[store(self.stacked[key])], value=call,
                                      type_comment=None))
        both = _fresh(f"{a}_both", self.taken)
        stacked = load(self.stacked[key])
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
        return True


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
