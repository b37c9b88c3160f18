"""Outer products summed over a loop become one matrix product after it.

    for _ in range(_trips):                    _dW_left = []
        ...                                    _dW_right = []
                                               for _ in range(_trips):
        dW += np.outer(d_matmul, h)    ->          ...
        ...                                        _dW_left.append(d_matmul)
                                                   _dW_right.append(h)
                                               if _dW_left:
                                                   dW += np.array(_dW_left).T @ np.array(_dW_right)

The gradient of `W @ h` in a loop (an RNN) adds one outer product per step; a matrix
product of the stacked vectors does the same sum in one BLAS call instead of two NumPy calls
per step (which is how one writes an RNN's backward pass by hand for speed). Done only when
it is certain to give the same sum: `dW` is read nowhere else in the loop, the vectors are
never changed in place afterwards (no `+=`, no element write on them or on a name that may
share them), and the code is specialised for known shapes (so each step's vectors have one
shape). The sum is taken in another order, so the result may differ in the last bits.

Only adjoint code has `dW += np.outer(a, b)`: the matrix-product rules give it for 1-d
operands of known shapes (inline.py), and a user's own `+=` is in normal form `t = ...`.
"""
from __future__ import annotations

import gast


def batch_outer_products(tree: gast.FunctionDef, np_name: str):
    """Rewrite every loop of `tree` in place."""
    taken = {n.id for n in gast.walk(tree) if isinstance(n, gast.Name)}
    for block in _blocks(tree):
        i = 0
        while i < len(block):
            loop = block[i]
            if isinstance(loop, gast.For):
                before, after = _batch(loop, np_name, taken)
                block[i:i + 1] = before + [loop] + after
                i += len(before) + len(after)
            i += 1


def _blocks(tree):
    yield tree.body
    for node in gast.walk(tree):
        if isinstance(node, (gast.If, gast.For, gast.While)) and node is not tree:
            yield node.body
            yield node.orelse


def _batch(loop, np_name, taken):
    before, after = [], []
    mutated = _mutated(loop.body)
    aliases = _aliases(loop.body)
    for stmt in list(loop.body):
        found = _outer_accumulation(stmt, np_name)
        if found is None:
            continue
        target, left, right = found
        uses = [n for n in gast.walk(loop) if isinstance(n, gast.Name) and n.id == target]
        if len(uses) != 1:          # dW is read or written elsewhere in the loop
            continue
        if any(aliases.get(v, {v}) & mutated for v in (left, right)):
            continue
        rows, cols = _fresh(f"_{target}_left", taken), _fresh(f"_{target}_right", taken)
        index = loop.body.index(stmt)
        loop.body[index:index + 1] = [_append(rows, left), _append(cols, right)]
        before += [gast.Assign(targets=[_store(name)], value=_list(), type_comment=None)
                   for name in (rows, cols)]
        product = gast.BinOp(
            left=gast.Attribute(value=_np_array(np_name, rows), attr="T", ctx=gast.Load()),
            op=gast.MatMult(), right=_np_array(np_name, cols))
        after.append(gast.If(test=_load(rows), body=[
            gast.AugAssign(target=_store(target), op=gast.Add(), value=product)], orelse=[]))
    return before, after


def _outer_accumulation(stmt, np_name):
    """(dW, a, b) for `dW += np.outer(a, b)` with names a and b."""
    if not (isinstance(stmt, gast.AugAssign) and isinstance(stmt.op, gast.Add)
            and isinstance(stmt.target, gast.Name)):
        return None
    call = stmt.value
    if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
            and call.func.attr == "outer" and isinstance(call.func.value, gast.Name)
            and call.func.value.id == np_name and len(call.args) == 2 and not call.keywords
            and all(isinstance(a, gast.Name) for a in call.args)):
        return None
    return stmt.target.id, call.args[0].id, call.args[1].id


def _mutated(body):
    """Names whose arrays the loop body changes in place: `x += ...`, `x[i] = ...`,
    `f(..., out=x)`."""
    names = set()
    for node in gast.walk(gast.Module(body=body, type_ignores=[])):
        if isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
            names.add(node.target.id)
        elif isinstance(node, (gast.Assign, gast.AugAssign)):
            targets = node.targets if isinstance(node, gast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, gast.Subscript):
                    root = t.value
                    while isinstance(root, (gast.Subscript, gast.Attribute)):
                        root = root.value
                    if isinstance(root, gast.Name):
                        names.add(root.id)
        elif isinstance(node, gast.keyword) and node.arg == "out":
            names |= {n.id for n in gast.walk(node.value) if isinstance(n, gast.Name)}
    return names


def _aliases(body):
    """name -> the names that may share its array through copies `a = b` in the body."""
    groups = {}
    for node in gast.walk(gast.Module(body=body, type_ignores=[])):
        if isinstance(node, gast.Assign) and isinstance(node.value, gast.Name):
            for t in node.targets:
                if isinstance(t, gast.Name):
                    merged = groups.get(t.id, {t.id}) | groups.get(node.value.id,
                                                                   {node.value.id})
                    for name in merged:
                        groups[name] = merged
    return groups


def _fresh(preferred, taken):
    name, k = preferred, 2
    while name in taken:
        name, k = f"{preferred}{k}", k + 1
    taken.add(name)
    return name


def _append(rows, value):
    call = gast.Call(func=gast.Attribute(value=_load(rows), attr="append", ctx=gast.Load()),
                     args=[_load(value)], keywords=[])
    return gast.Expr(value=call)


def _np_array(np_name, rows):
    return gast.Call(func=gast.Attribute(value=_load(np_name), attr="array", ctx=gast.Load()),
                     args=[_load(rows)], keywords=[])


def _list():
    return gast.List(elts=[], ctx=gast.Load())


def _load(name):
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


def _store(name):
    return gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None)
