"""Where a function uses sparse data (scipy.sparse) other than in a matrix product.

Run by `grad` on the normal form when a call passes a scipy.sparse matrix or array. A
sparse `X` is differentiated through only where its semantics are NumPy's: `X @ w`,
`w @ X`, `X.T` (sparse again), `X.shape`, `X.ndim`. Anything else is refused, since
NumPy's derivative rules would read it wrongly: `X * w` of a sparse *matrix* is a matrix
product, its sums are `np.matrix` rows, `np.shape(X)` is `()`.

    _matmul = X @ w        fine (a dense result)
    _T = X.T               fine (_T is sparse too)
    _mul = X * w           the first misuse: (statement, 'X')
"""
from __future__ import annotations

import gast
from ..ir.blocks import walk

READABLE = frozenset({"T", "shape", "ndim", "nnz", "dtype"})    # X.T is sparse, the rest not


def sparse_misuse(body, sparse: frozenset):
    """The first statement of the normal-form `body` that uses a value derived from the
    parameters named in `sparse` other than in a matrix product, and that value's name;
    None when there is none."""
    stmts = [node for stmt in body for node in walk(stmt) if isinstance(node, gast.stmt)]
    names = set(sparse)
    grown = True
    while grown:        # (a loop may read a name before, in the text, it is made sparse)
        made = {s.targets[0].id for s in stmts if _makes_sparse(s, names)}
        grown = not made <= names
        names |= made
    for stmt in stmts:
        read = _reads(stmt, names)
        if read is not None and not _allowed(stmt, names):
            return stmt, read
    return None


def _target(stmt):
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
            isinstance(stmt.targets[0], gast.Name):
        return stmt.targets[0].id
    return None


def _is(node, names) -> bool:
    return isinstance(node, gast.Name) and node.id in names


def _makes_sparse(stmt, names) -> bool:
    """`t = X.T`, `t = X`, or `t = X @ Y` of two sparse values."""
    if _target(stmt) is None:
        return False
    value = stmt.value
    return _is(value, names) or \
        isinstance(value, gast.Attribute) and value.attr == "T" and _is(value.value, names) \
        or isinstance(value, gast.BinOp) and isinstance(value.op, gast.MatMult) and \
        _is(value.left, names) and _is(value.right, names)


def _allowed(stmt, names) -> bool:
    """A matrix product with a sparse operand, a copy, or a read of X.T, X.shape, ..."""
    if _target(stmt) is None:
        return False
    value = stmt.value
    if isinstance(value, gast.BinOp) and isinstance(value.op, gast.MatMult):
        return all(isinstance(v, (gast.Name, gast.Constant)) for v in (value.left, value.right))
    if isinstance(value, gast.Attribute):
        return value.attr in READABLE and _is(value.value, names)
    return _is(value, names)


def _reads(stmt, names):
    """The first sparse name `stmt` reads (a compound statement: in its own header)."""
    if isinstance(stmt, (gast.If, gast.While)):
        parts = [stmt.test]
    elif isinstance(stmt, gast.For):
        parts = [stmt.iter]
    else:
        parts = [stmt]
    for part in parts:
        for node in walk(part):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and \
                    node.id in names:
                return node.id
    return None
