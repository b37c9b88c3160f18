"""A reduction's adjoint broadcast back to the reduced array with its axes kept
(`unreduce(g, x, axis, True)`), read once, by an elementwise operation whose other operand
has x's shape and dtype, is not made: the operation broadcasts `g` itself (part of the
optimize pass, for code specialised for shapes; top-level statements only):

    d_exp = unreduce(d_sum, _exp, 1, True)      ->      dz += d_sum * _exp
    dz += d_exp * _exp

The same without keepdims, `unreduce(g, x, axis)`, reads g with the reduced axes put
back as new ones (`dsq[:, :, None]`), so that x, often kept only for its shape, dies
sooner; and a number between them is no obstacle (`d_pow * 2 * _sub`: the product's
other operand has x's shape).

The values are the same to the bit: each element of the result reads the same element of
`g`, and the result has the broadcast's shape and dtype.
"""
from __future__ import annotations

from collections import Counter

import gast

from ...analysis.shape_algebra import WEAK
from ...ir.blocks import nodes

_SIMPLE = (gast.Assign, gast.AugAssign, gast.Expr, gast.Return)
_ELEMENTWISE = (gast.Add, gast.Sub, gast.Mult, gast.Div)


def drop_broadcasts(body, shapes, helpers) -> None:
    """Rewrite the top-level statements `body` in place. `shapes`: a CodeShapes, tracked
    here statement by statement; `helpers`: the runtime helpers' names in the code."""
    unreduce = {n for n, f in helpers.items() if getattr(f, "__name__", "") == "unreduce"}
    if not unreduce or not any(
            isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and
            n.func.id in unreduce and len(n.args) + len(n.keywords) in (3, 4)
            for stmt in body if isinstance(stmt, gast.Assign) for n in (stmt.value,)):
        return
    reads = Counter(n.id for stmt in body for n in nodes(stmt) if isinstance(n, gast.Name)
                    and not isinstance(n.ctx, (gast.Store, gast.Del)))
    pending, dropped = {}, []       # adjoint -> (its statement, g or (g, index), x's
    # shape and dtype)
    for stmt in body:
        for name, (source, g, like) in list(pending.items()):
            if _reads(stmt, name):
                del pending[name]
                if isinstance(stmt, _SIMPLE) and _put_back(stmt, name, g, like, shapes):
                    dropped.append(source)
            elif (g if isinstance(g, str) else g[0]) in _changes(stmt):
                del pending[name]
        found = _kept_axes_broadcast(stmt, unreduce, shapes)
        if found is not None and reads[found[0]] == 1:
            pending[found[0]] = (stmt, *found[1:])
        shapes.track(stmt)
    body[:] = [stmt for stmt in body if not any(stmt is d for d in dropped)]


def _kept_axes_broadcast(stmt, unreduce, shapes):
    """(v, what reads g with x's axes, x's shape) for `v = unreduce(g, x, axis, True)`
    with g and x float arrays of the same dtype and number of axes (g itself), or for
    `v = unreduce(g, x, axis)` with g of x's axes but those reduced (g with them put
    back as axes of length 1, `g[:, :, None]`), else None."""
    name = stmt.targets[0].id if isinstance(stmt, gast.Assign) and \
        len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name) else None
    call = stmt.value if name is not None else None
    if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Name) and
            call.func.id in unreduce and name.startswith("d_")):
        return None
    args = list(call.args) + [k.value for k in call.keywords if k.arg in ("axis", "keepdims")]
    if len(args) != len(call.args) + len(call.keywords) or len(args) not in (3, 4) or \
            not all(isinstance(a, gast.Name) for a in args[:2]) or \
            not (len(args) == 3 or isinstance(args[3], gast.Constant) and
                 type(args[3].value) is bool):
        return None
    g, x = shapes.shape_of(args[0]), shapes.shape_of(args[1])
    if g is None or x is None or g[1] != x[1] or getattr(x[1], "kind", None) != "f":
        return None
    if len(args) == 4 and args[3].value:
        return (name, args[0].id, x) if len(g[0]) == len(x[0]) else None
    axes = _axes(args[2], len(x[0]))
    if axes is None or tuple(s for a, s in enumerate(x[0]) if a not in axes) != \
            tuple(g[0]) or not axes:
        return None
    index = gast.Tuple(elts=[gast.Constant(None, None) if a in axes else
                             gast.Slice(lower=None, upper=None, step=None)
                             for a in range(len(x[0]))], ctx=gast.Load())
    return name, (args[0].id, index), x


def _axes(node, ndim):
    """The axes (sorted, non-negative) a constant int or tuple of ints names, else None."""
    items = node.elts if isinstance(node, gast.Tuple) else [node]
    values = []
    for item in items:
        if isinstance(item, gast.UnaryOp) and isinstance(item.op, gast.USub) and \
                isinstance(item.operand, gast.Constant):
            value = -item.operand.value
        elif isinstance(item, gast.Constant):
            value = item.value
        else:
            return None
        if type(value) is not int or not -ndim <= value < ndim:
            return None
        values.append(value % ndim)
    return tuple(sorted(set(values))) if len(set(values)) == len(values) else None


def _put_back(stmt, name, g, like, shapes) -> bool:
    """Read `g` for `name` in `stmt`, where `name` is an operand of an elementwise
    operation whose other operand has the shape and dtype `like`, or is a number and
    that operation's result such an operand (`d_pow * 2 * _sub`)."""
    outer = {}      # id(elementwise operation) -> the other operand of the one it is in
    for node in nodes(stmt):
        if isinstance(node, gast.BinOp) and isinstance(node.op, _ELEMENTWISE):
            outer[id(node.left)], outer[id(node.right)] = node.right, node.left
    for node in nodes(stmt):
        if isinstance(node, gast.BinOp) and isinstance(node.op, _ELEMENTWISE):
            for mine, other in (("left", node.right), ("right", node.left)):
                operand = getattr(node, mine)
                beside = shapes.shape_of(other)
                if beside == ((), WEAK) and id(node) in outer:
                    beside = shapes.shape_of(outer[id(node)])
                if isinstance(operand, gast.Name) and operand.id == name and \
                        beside == like:
                    read = gast.Name(id=g if isinstance(g, str) else g[0], ctx=gast.Load(),
                                     annotation=None, type_comment=None)
                    if not isinstance(g, str):      # g[:, :, None]
                        read = gast.Subscript(value=read, slice=g[1], ctx=gast.Load())
                    setattr(node, mine, read)
                    return True
    return False


def _reads(stmt, name) -> bool:
    return any(isinstance(n, gast.Name) and n.id == name for n in nodes(stmt))


def _changes(stmt) -> set:
    """Names `stmt` binds, deletes or may change in place (every name, for a compound
    statement)."""
    if not isinstance(stmt, (gast.Assign, gast.AugAssign, gast.Expr, gast.Delete)):
        return _Everything()
    names = {n.id for n in nodes(stmt) if isinstance(n, gast.Name) and
             isinstance(n.ctx, (gast.Store, gast.Del))}
    if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
        names.add(stmt.target.id)
    for node in nodes(stmt):
        if isinstance(node, gast.keyword) and node.arg == "out":
            names |= {n.id for n in nodes(node.value) if isinstance(n, gast.Name)}
    return names


class _Everything:
    def __contains__(self, _):
        return True
