"""Products of loop-invariant matrices with the rows of loop-invariant data, made once
before the loop as one matrix product (for code specialised for known shapes).

    for t in range(_item_0):              _matmul2_dots = xs @ U_dot.T
        ...                               _matmul2_dots = _matmul2_dots + b_dot
        _xs_t = xs[t]                     for t in range(_item_0):
        _matmul2_dot = U_dot @ _xs_t  ->      ...
        _add_dot = _matmul_dot + _matmul2_dot _matmul2_dot = _matmul2_dots[t]
        _add2_dot = _add_dot + b_dot          _add2_dot = _matmul_dot + _matmul2_dot

The tangent of an RNN step `tanh(W @ h + U @ xs[t] + b)` has terms that depend only on
the tangents of the parameters and on data the loop does not change (`U_dot @ xs[t] +
b_dot`): one BLAS call before the loop computes them for every step, as one writes a jvp by
hand, instead of two NumPy calls per step. Then an invariant array added to such a row (a
bias) is added to all the rows at once, where the sum that held the row is read only there
(`(p + m) + b` becomes `p + (m + b)`: the sums are taken in another order, so results may
differ in the last bits).

Done only where it is certain to give the same values: the loop runs over `range(...)`
with its own index, the data and the matrix are not assigned in the loop nor changed in
place there, the row and the product are assigned once in the loop and never changed in
place, and every shape is known (1-d rows, or 2-d rows of a batch). `movable(name)` says
which names may be rewritten (not the user's own variables). It runs on tangent code only
(pipeline.forward_mode.compile_jvp), where the primal's products move too: its value may then differ from
the function's in the last bits, as with any compiler that reorders sums.
"""
from __future__ import annotations

import gast

from ...ir.blocks import nodes
from ...ir.builders import load, store
from ...ir.naming import unused_name
from .batching import _aliases, _assigned, _before_top_statements, _mutated


def hoist_row_products(tree: gast.FunctionDef, shapes, np_name: str, movable) -> None:
    """Rewrite the loops at the top level of `tree` in place. `shapes` is a fresh
    CodeShapes of `tree`."""
    taken = {n.id for n in nodes(tree) if isinstance(n, gast.Name)}

    def hoisted(stmt):
        if not isinstance(stmt, gast.For):
            return []
        return _Loop(stmt, shapes, np_name, movable, taken, tree).hoist()
    _before_top_statements(tree, shapes, hoisted)


class _Loop:
    """One `for t in range(...)` loop and what may be hoisted out of it."""

    def __init__(self, loop, shapes, np_name, movable, taken, tree):
        self.loop, self.shapes, self.np, self.movable = loop, shapes, np_name, movable
        self.taken, self.tree = taken, tree
        body = loop.body
        self.assigned = [_assigned(s) for s in body]
        self.written = set().union(*self.assigned) if body else set()
        # in place in the loop, or through a copy anywhere in the function
        mutated, aliases = _mutated(body), _aliases(tree.body)
        self.changed = {n for n, group in aliases.items() if group & mutated} | mutated
        self.rows = {}      # product name -> (its matrix of rows, hoisted before the loop)

    def hoist(self) -> list:
        loop = self.loop
        if not (isinstance(loop.target, gast.Name) and isinstance(loop.iter, gast.Call)
                and isinstance(loop.iter.func, gast.Name) and loop.iter.func.id == "range"
                and loop.target.id not in self.written and not loop.orelse):
            return []
        before = []
        for position, stmt in enumerate(self.loop.body):
            made = self._product(position, stmt)
            if made is not None:
                name, value = made
                before.append(gast.Assign(targets=[store(name)], value=value,
                                          type_comment=None))
        if before:
            while self._fold_invariant_add(before):
                pass
            self._drop_unread_rows()
        return before

    def _drop_unread_rows(self):
        """`v = X[t]` that no product reads any more."""
        body = self.loop.body
        for i in range(len(body) - 1, -1, -1):
            stmt = body[i]
            if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                    isinstance(stmt.targets[0], gast.Name) and \
                    isinstance(stmt.value, gast.Subscript) and \
                    isinstance(stmt.value.slice, gast.Name) and \
                    stmt.value.slice.id == self.loop.target.id and \
                    self.movable(stmt.targets[0].id) and \
                    self._loads(stmt.targets[0].id) == 0:
                del body[i]
                del self.assigned[i]

    def _invariant(self, node):
        """The (shape, dtype) of a name the loop neither assigns nor changes, else None."""
        if not isinstance(node, gast.Name) or node.id in self.written or \
                node.id in self.changed:
            return None
        return self.shapes.shape_of(node)

    def _once(self, name):
        return sum(1 for a in self.assigned if name in a) == 1

    def _row_of(self, position, node):
        """The data X whose row `node` is (`v = X[t]` earlier in the loop), else None."""
        if not isinstance(node, gast.Name) or not self._once(node.id) or \
                node.id in self.changed:
            return None
        for stmt in self.loop.body[:position]:
            if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                    isinstance(stmt.targets[0], gast.Name) and \
                    stmt.targets[0].id == node.id:
                value = stmt.value
                if isinstance(value, gast.Subscript) and \
                        isinstance(value.slice, gast.Name) and \
                        value.slice.id == self.loop.target.id:
                    return value.value if self._invariant(value.value) else None
        return None

    def _product(self, position, stmt):
        """(name, value) of the matrix of rows that replaces `m = A @ v` (v a row of
        invariant data, A invariant), rewriting the statement to `m = rows[t]`."""
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and
                isinstance(stmt.targets[0], gast.Name)):
            return None
        target = stmt.targets[0].id
        operands = _operands(stmt.value, self.np)
        if operands is None or not self._once(target) or target in self.changed or \
                not self.movable(target):
            return None
        left, right = operands
        hoisted = None
        for matrix, row, matrix_first in ((left, right, True), (right, left, False)):
            data = self._row_of(position, row)
            a, x = self._invariant(matrix), self._invariant(data) if data else None
            if data is not None and a is not None and x is not None:
                hoisted = _batched(matrix, data, a, x, matrix_first)
            if hoisted is not None:
                break
        if hoisted is None:
            return None
        name = unused_name(f"{target}s", self.taken)
        stmt.value = gast.Subscript(value=load(name), slice=load(self.loop.target.id),
                                    ctx=gast.Load())
        self.rows[target] = (name, hoisted[1])
        return name, hoisted[0]

    def _fold_invariant_add(self, before) -> bool:
        """`a = p + m; y = a + b` (m a hoisted row, b invariant, a and m read only there)
        -> `rows = rows + b` before the loop and `y = p + m`. True if one was folded."""
        body = self.loop.body
        for i, stmt in enumerate(body):
            found = _sum_of(stmt)
            if found is None:
                continue
            target, (p, m) = found
            if m not in self.rows:
                p, m = m, p
            if m not in self.rows or not self._once(target) or self._loads(m) != 1 or \
                    self._loads(target) != 1 or not self.movable(target):
                continue
            for j in range(i + 1, len(body)):
                folded = self._fold_into(body, i, j, target, p, m, before)
                if folded is not None:
                    return folded
                if {p, m, target} & self.assigned[j]:
                    break
        return False

    def _fold_into(self, body, i, j, target, p, m, before):
        later = _sum_of(body[j])
        if later is None or target not in later[1]:
            return None
        other = later[1][1] if later[1][0] == target else later[1][0]
        bias = self._invariant(load(other)) if other != target else None
        rows_name, rows_shape = self.rows[m]
        if bias is None or not _keeps(rows_shape[0][1:], bias[0]) or \
                not self.movable(later[0]):
            return False
        # (not +=: the sum's dtype must be what the loop's sums gave)
        before.append(gast.Assign(targets=[store(rows_name)], value=gast.BinOp(
            left=load(rows_name), op=gast.Add(), right=load(other)), type_comment=None))
        body[j].value = gast.BinOp(left=load(p), op=gast.Add(), right=load(m))
        del body[i]
        del self.assigned[i]
        return True

    def _loads(self, name):
        return sum(1 for n in nodes(self.tree) if isinstance(n, gast.Name) and
                   n.id == name and isinstance(n.ctx, gast.Load))


def _operands(value, np_name):
    """(left, right) of `a @ b` or np.dot(a, b), else None."""
    if isinstance(value, gast.BinOp) and isinstance(value.op, gast.MatMult):
        return value.left, value.right
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and \
            isinstance(value.func.value, gast.Name) and value.func.value.id == np_name \
            and value.func.attr in ("dot", "matmul") and len(value.args) == 2 \
            and not value.keywords:
        return tuple(value.args)
    return None


def _batched(matrix, data, a, x, matrix_first):
    """(the expression of every step's product, its (shape, dtype)) for `A @ X[t]`
    (matrix_first) or `X[t] @ A`, with A 2-d and rows of X 1-d or 2-d; None otherwise."""
    (ashape, adtype), (xshape, xdtype) = a, x
    if len(ashape) != 2 or len(xshape) not in (2, 3):
        return None
    adtype = adtype if adtype is not None and adtype == xdtype else None
    rows = xshape[1:]
    if matrix_first and len(rows) == 1 and ashape[1] == rows[0]:     # A @ x: X @ A.T
        expr = gast.BinOp(left=load(data.id), op=gast.MatMult(), right=gast.Attribute(
            value=load(matrix.id), attr="T", ctx=gast.Load()))
        return expr, ((xshape[0], ashape[0]), adtype)
    if matrix_first and len(rows) == 2 and ashape[1] == rows[0]:     # A @ x: A @ X
        expr = gast.BinOp(left=load(matrix.id), op=gast.MatMult(), right=load(data.id))
        return expr, ((xshape[0], ashape[0], rows[1]), adtype)
    if not matrix_first and rows[-1] == ashape[0]:                   # x @ A: X @ A
        expr = gast.BinOp(left=load(data.id), op=gast.MatMult(), right=load(matrix.id))
        return expr, (xshape[:-1] + (ashape[1],), adtype)
    return None


def _sum_of(stmt):
    """(target, (a, b)) of `target = a + b` with names a and b, else None."""
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
            isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.BinOp) \
            and isinstance(stmt.value.op, gast.Add) and \
            isinstance(stmt.value.left, gast.Name) and isinstance(stmt.value.right, gast.Name):
        return stmt.targets[0].id, (stmt.value.left.id, stmt.value.right.id)
    return None


def _keeps(row_shape, bias_shape) -> bool:
    """Adding an array of `bias_shape` to one of `row_shape` keeps row_shape."""
    if len(bias_shape) > len(row_shape):
        return False
    return all(b in (1, r) for b, r in zip(bias_shape[::-1], row_shape[::-1]))
