"""max's and min's mask multiplied in without a float temporary (code specialised for
shapes; top-level statements only):

    d_add = dh * balanced_eq(_add, h, 0)      ->      d_add = dh * (_add == h)
                                                       d_add[_add == 0] *= 0.5

`balanced_eq(x, z, y)` (the rule of np.maximum, np.minimum, np.fmax, np.fmin and of
Python's max and min) is 1 where x is the one chosen (x == z, for z = max(x, y)), 0.5 on
a tie (x == y) and 0 elsewhere, made as a new array of floats the size of the result:
for a ReLU, `np.maximum(0, x)`, that array and the pass that fills it cost more than the
rest of the mask's work. Here the adjoint is multiplied by the comparison itself (a
bool array, an eighth of the size), which reuse-buffers then writes into the adjoint's
dying buffer, and the ties (rare: x exactly equal to the other side) are halved in place.

The values are the same to the bit: at a tie x == z holds too (z is x or y, which are
equal), so the element is g * 1 * 0.5 == g * 0.5; elsewhere g * 1 or g * 0, as before
(NaN included: a NaN x is neither chosen nor tied). The product `g * mask` has g's dtype,
so it is made only where g, x and the result share one float dtype (and y is a number
or of that dtype), g has the result's shape, and `x == y` has it too (the mask of the
ties indexes the result element by element). Anything else keeps balanced_eq.

Where the other side is a number and x is read by nothing else afterwards (a ReLU's
pre-activation), the ties are saved in the forward sweep instead and the mask reads the
result, so that x dies there and reuse-buffers writes the result into it:

    _ties = _add == 0
    h = np.maximum(0, _add)                   ->      (reuse-buffers: out=_add)
    ...
    d_add = dh * ((h > 0) | _ties)
    d_add[_ties] *= 0.5
"""
from __future__ import annotations

import gast
import numpy as np

from ...ir.blocks import nodes
from ...ir.builders import load, store
from ...ir.naming import unused_name

_SIMPLE = (gast.Assign, gast.AugAssign, gast.Expr, gast.Return)


def split_ties(body, shapes, helpers, np_name) -> None:
    """Rewrite the top-level statements `body` in place. `shapes`: a CodeShapes, tracked
    here statement by statement; `helpers`: the runtime helpers' names in the code;
    `np_name`: numpy's."""
    balanced = {n for n, f in helpers.items() if getattr(f, "__name__", "") == "balanced_eq"}
    if not balanced:
        return
    taken = {n.id for stmt in body for n in nodes(stmt) if isinstance(n, gast.Name)}
    made = []       # (x == z, x == y, x, z, y) of each product split
    i = 0
    while i < len(body):
        stmt = body[i]
        shapes.forget()
        before, after = [], []
        if isinstance(stmt, _SIMPLE):
            for product, parts in _masked_products(stmt, balanced, shapes):
                whole = isinstance(stmt, gast.Assign) and stmt.value is product and \
                    len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name) and \
                    not any(_reads(a, stmt.targets[0].id) for a in parts[1:])
                # (not when it rebinds x or y: the ties are read after it)
                chosen, ties = _split(parts)
                made.append((chosen.right, ties, *(a for a in parts[1:])))
                if whole:           # d = g * balanced_eq(...): d's own ties after it
                    name, stmt.value = stmt.targets[0].id, chosen
                else:               # a temporary before the statement that reads it
                    name = unused_name("_masked", taken)
                    before.append(gast.Assign(targets=[store(name)], value=chosen,
                                              type_comment=None))
                    _replace(stmt, product, load(name))
                (after if whole else before).append(gast.AugAssign(
                    target=gast.Subscript(value=load(name), slice=ties, ctx=gast.Store()),
                    op=gast.Mult(), value=gast.Constant(0.5, None)))
        for new in before + after:
            gast.copy_location(new, stmt)
        for new in before + [stmt] + after:
            shapes.track(new)
        body[i:i + 1] = before + [stmt] + after
        i += len(before) + 1 + len(after)
    if made:
        _ties_saved(body, made, np_name, taken)


_CHOOSES = {"maximum": gast.Gt, "fmax": gast.Gt, "minimum": gast.Lt, "fmin": gast.Lt}


def _ties_saved(body, made, np_name, taken) -> None:
    """`z = np.maximum(x, c)` (c a number; minimum, fmax, fmin too) whose x is read
    afterwards only by masks split here: the ties are saved in the forward sweep,
    `_ties = x == c`, and the masks read z and them, `(z > c) | _ties` (`<` for the
    minimum) and `d[_ties] *= 0.5`, so that x dies where z is made and reuse-buffers
    writes z into it, as `np.maximum(a, 0.0, out=a)` does by hand. The same values: x
    is chosen where it is greater than c (then z > c) or equal to it; a NaN x is neither
    (z is NaN, or c for fmax). Only names assigned once and never changed in place."""
    stores, loads = {}, {}
    for k, stmt in enumerate(body):
        for node in nodes(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                loads.setdefault(node.id, []).append((k, node))
            elif isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                stores.setdefault(node.id, []).append((k, node))
    changed = {name for stmt in body for node in nodes(stmt) for name in _changed(node)}
    saves = []          # (where, the statement that saves the ties), inserted at the end
    for k, stmt in enumerate(body):
        found = _chooses_a_number(stmt, np_name)
        if found is None:
            continue
        z, x, c, op = found
        mine = [m for m in made if m[2].id == x and m[3].id == z and _number(m[4]) and
                _value(m[4]) == _value(c)]
        theirs = {id(n) for m in mine for n in (*nodes(m[0]), *nodes(m[1]))}
        later = [n for j, n in loads.get(x, ()) if j > k]
        if not mine or len(stores.get(x, ())) != 1 or len(stores.get(z, ())) != 1 or \
                x in changed or z in changed or len(later) != 2 * len(mine) or \
                any(id(n) not in theirs for n in later):
            continue
        ties = unused_name("_ties", taken)
        for chosen, tied, *_ in mine:
            mask = gast.BinOp(left=gast.Compare(left=load(z), ops=[op()],
                                                comparators=[_copy(c)]),
                              op=gast.BitOr(), right=load(ties))
            any(_replace(stmt, chosen, mask) for stmt in body[k + 1:])
            any(_replace(stmt, tied, load(ties)) for stmt in body[k + 1:])
        saved = gast.Assign(targets=[store(ties)], type_comment=None,
                            value=gast.Compare(left=load(x), ops=[gast.Eq()],
                                               comparators=[_copy(c)]))
        saves.append((k, gast.copy_location(saved, stmt)))
    for k, saved in reversed(saves):
        body.insert(k, saved)


def _chooses_a_number(stmt, np_name):
    """(z, x, c, the comparison that says x is chosen) for `z = np.maximum(x, c)` (or
    c first; minimum, fmax, fmin) with x a name and c a number, else None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and
            isinstance(stmt.targets[0], gast.Name)):
        return None
    call = stmt.value
    if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and
            isinstance(call.func.value, gast.Name) and call.func.value.id == np_name and
            call.func.attr in _CHOOSES and len(call.args) == 2 and not call.keywords):
        return None
    a, b = call.args
    if _number(b) and isinstance(a, gast.Name):
        x, c = a, b
    elif _number(a) and isinstance(b, gast.Name):
        x, c = b, a
    else:
        return None
    return stmt.targets[0].id, x.id, c, _CHOOSES[call.func.attr]


def _changed(node):
    """Names `node` changes in place: an augmented assignment's, a subscript's that is
    assigned, an `out=`."""
    if isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
        return [node.target.id]
    if isinstance(node, gast.Subscript) and not isinstance(node.ctx, gast.Load) and \
            isinstance(node.value, gast.Name):
        return [node.value.id]
    if isinstance(node, gast.keyword) and node.arg == "out":
        return [n.id for n in nodes(node.value) if isinstance(n, gast.Name)]
    return []


def _value(node):
    """A number's value (-0.5 for `-0.5`)."""
    if isinstance(node, gast.UnaryOp):
        return -_value(node.operand) if isinstance(node.op, gast.USub) else \
            _value(node.operand)
    return node.value


def _masked_products(stmt, balanced, shapes):
    """(the product node, (g, x, z, y)) for each `g * balanced_eq(x, z, y)` (or the mask
    first) in `stmt` that may be split (see the module's docstring)."""
    found = []
    for node in nodes(stmt):
        if not (isinstance(node, gast.BinOp) and isinstance(node.op, gast.Mult)):
            continue
        for g, mask in ((node.left, node.right), (node.right, node.left)):
            if isinstance(mask, gast.Call) and isinstance(mask.func, gast.Name) and \
                    mask.func.id in balanced and len(mask.args) == 3 and \
                    not mask.keywords and not any(_reads(g, b) for b in balanced) and \
                    _splittable(g, *mask.args, shapes):
                found.append((node, (g, *mask.args)))
                break
    return found


def _splittable(g, x, z, y, shapes) -> bool:
    if not all(isinstance(a, gast.Name) for a in (x, z)) or \
            not (isinstance(y, gast.Name) or _number(y)):
        return False
    found = [shapes.shape_of(a) for a in (g, x, z, y)]
    if any(f is None for f in found):
        return False
    (g_shape, g_dtype), (x_shape, x_dtype), (z_shape, z_dtype), (y_shape, y_dtype) = found
    if not (getattr(g_dtype, "kind", None) == "f" and g_dtype == x_dtype == z_dtype and
            (_number(y) or y_dtype == g_dtype)):
        return False
    try:
        ties_shape = np.broadcast_shapes(x_shape, y_shape)
        total = np.broadcast_shapes(g_shape, x_shape, z_shape)
    except ValueError:
        return False
    return tuple(g_shape) == total == ties_shape != ()


def _number(node) -> bool:
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        node = node.operand
    return isinstance(node, gast.Constant) and type(node.value) in (int, float)


def _split(parts):
    """`g * (x == z)` and the ties' mask `x == y`."""
    g, x, z, y = parts
    chosen = gast.BinOp(left=g, op=gast.Mult(),
                        right=gast.Compare(left=load(x.id), ops=[gast.Eq()],
                                           comparators=[load(z.id)]))
    ties = gast.Compare(left=load(x.id), ops=[gast.Eq()], comparators=[_copy(y)])
    return chosen, ties


def _copy(node):
    """A name or a (signed) number, as a new node."""
    if isinstance(node, gast.Name):
        return load(node.id)
    if isinstance(node, gast.UnaryOp):
        return gast.UnaryOp(op=type(node.op)(), operand=_copy(node.operand))
    return gast.Constant(node.value, None)


def _reads(node, name) -> bool:
    return any(isinstance(n, gast.Name) and n.id == name for n in nodes(node))


def _replace(stmt, old, new) -> bool:
    """Put `new` where the node `old` is in `stmt` (whether it was there)."""
    for node in nodes(stmt):
        for field, value in gast.iter_fields(node):
            if value is old:
                setattr(node, field, new)
                return True
            if isinstance(value, list) and any(item is old for item in value):
                value[[id(item) for item in value].index(id(old))] = new
                return True
    return False

