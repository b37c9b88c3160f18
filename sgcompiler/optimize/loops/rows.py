"""Two forms of batch-outer-products' sums (batching.py), for a loop at the top level.

Rows one after the other: where every sum over the steps is of matrix products
`dW += a.T @ b` or of column sums `db += np.sum(b, axis=0)`, the steps' rows are stacked
one after the other, and each sum is one product or one column sum, as one writes it by
hand (np.tensordot of stacks with a new first axis transposed, and copied, the first one):

    _hs = np.array(_hs)                            _hs = np.concatenate(_hs)
    _xs_ts = xs[:_trips]                   ->      _xs_ts = xs[:_trips].reshape(-1, 32)
    db += np.sum(_bs, axis=(0, 1))                 db += np.sum(_bs, axis=0)
    dW += np.tensordot(_hs, _bs, axes=...)         dW += _hs.T @ _bs

The sum over the steps t of a_t.T @ b_t is [a_1; ...; a_n].T @ [b_1; ...; b_n] for every
a_t, b_t of one or two axes that have a product (a 1-d a_t is a column of its rows).

First writes: the accumulator of such a sum, made `dW = np.zeros_like(W)` before the loop
and returned as it is after it, is the sum itself, or zeros when the loop made no step:

    dW = np.zeros_like(W)                          if _hs:
    if _hs:                                ->          dW = _hs.T @ _bs
        dW += _hs.T @ _bs                          else:
                                                       dW = np.zeros_like(W)

(the wrapper gives a returned gradient its argument's dtype and shape, as the addition
into zeros did).
"""
from __future__ import annotations

import gast

from ...ir.blocks import nodes
from ...ir.builders import const, load, store


def stack_rows(products, sums, rereads, shapes):
    """value -> the stack of its rows, for the values read again from an argument
    (`rereads`: value -> `x[:_trips]`), where every one of batching's `products` is a
    matrix product and every one of its `sums` a column sum; else None (and the stacks
    get a new first axis). `shapes`: a shape oracle at the loop, or None."""
    if shapes is None or not all(matrix for *_, matrix in products) or \
            not all(isinstance(axis, gast.Tuple) for *_, axis in sums):
        return None
    joined = {}
    for value, whole in rereads.items():
        found = shapes.shape_of(load(whole.value.id))
        if found is None or len(found[0]) not in (2, 3) or \
                not all(type(n) is int for n in found[0]):
            return None
        # x[:_trips] of steps x[t] with one axis: its elements; with two: its rows
        columns = [const(-1)] + [const(n) for n in found[0][2:]]
        joined[value] = gast.Call(func=gast.Attribute(value=whole, attr="reshape",
                                                      ctx=gast.Load()),
                                  args=columns, keywords=[])
    return joined


def first_writes(block, at, branch, later, np_name) -> int:
    """Make the sums of `branch` (the `if` batching put after the loop `block[at]`) the
    first writes of their accumulators where that is certain (see the docstring); the
    number of statements taken out of `block` before the loop."""
    if not later or not isinstance(later[-1], gast.Return):
        return 0
    returned = _returned_names(later[-1].value)
    removed = 0
    for k, update in enumerate(branch.body):
        if not (isinstance(update, gast.AugAssign) and isinstance(update.op, gast.Add)):
            continue
        target = update.target.id
        if target not in returned or _mentions(later[:-1], target) or \
                _mentions(branch.body[:k] + branch.body[k + 1:], target) or \
                _loads(later[-1], target) != 1:
            continue
        init = _init(block, at, target, np_name)
        if init is None:
            continue
        block.remove(init)
        at -= 1
        removed += 1
        branch.body[k] = gast.Assign(targets=[store(target)], value=update.value,
                                     type_comment=None)
        branch.orelse.append(init)
    return removed


def _init(block, at, target, np_name):
    """The statement `target = np.zeros_like(W)` before the loop `block[at]`, the last
    one before it that names `target`, with W rebound nowhere after it up to the loop's
    end; else None."""
    for j in range(at - 1, -1, -1):
        stmt = block[j]
        if not _mentions([stmt], target):
            continue
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and
                isinstance(stmt.targets[0], gast.Name) and _zeros_like(stmt.value, np_name)):
            return None
        like = stmt.value.args[0].id
        if any(isinstance(n, gast.Name) and n.id == like and
               not isinstance(n.ctx, gast.Load) for s in block[j + 1:at + 1]
               for n in nodes(s)):
            return None
        return stmt
    return None


def _zeros_like(value, np_name) -> bool:
    """Whether `value` is `np.zeros_like(W)`, W a name."""
    return isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and \
        value.func.attr == "zeros_like" and isinstance(value.func.value, gast.Name) and \
        value.func.value.id == np_name and len(value.args) == 1 and \
        not value.keywords and isinstance(value.args[0], gast.Name)


def _returned_names(value) -> set:
    """The names a return's value holds as they are (in tuples, lists and dicts)."""
    if isinstance(value, gast.Name):
        return {value.id}
    if isinstance(value, (gast.Tuple, gast.List)):
        return set().union(*(_returned_names(e) for e in value.elts))
    if isinstance(value, gast.Dict):
        return set().union(*(_returned_names(e) for e in value.values))
    return set()


def _mentions(stmts, name) -> bool:
    return any(isinstance(n, gast.Name) and n.id == name for s in stmts for n in nodes(s))


def _loads(tree, name) -> int:
    return sum(1 for n in nodes(tree) if isinstance(n, gast.Name) and n.id == name)
