"""Outer products summed over a loop become one matrix product after it.

    for _ in range(_trips):                    _d_adds = []
        ...                                    _hs = []
        db += d_add                            for _ in range(_trips):
        dW += np.outer(d_add, h)       ->          ...
        ...                                        _d_adds.append(d_add)
                                                   _hs.append(h)
                                               if _d_adds:
                                                   _d_adds = np.array(_d_adds)
                                                   _hs = np.array(_hs)
                                                   db += np.sum(_d_adds, axis=0)
                                                   dW += _d_adds.T @ _hs

The gradient of `W @ h` in a loop (an RNN) adds one outer product per step; a matrix
product of the stacked vectors does the same sum in one BLAS call instead of two NumPy calls
per step (which is how one writes an RNN's backward pass by hand for speed). Done only when
it is certain to give the same sum: `dW` is read nowhere else in the loop, the vectors are
never changed in place afterwards (no `+=`, no element write on them or on a name that may
share them), and the code is specialised for known shapes (so each step's vectors have one
shape). A vector stacked anyway also gives the sums of it (`db += d_add`: each trip's
d_add has the one shape the outer product needs). Loops with `break` or `continue` are
left alone (each trip must reach every append). The sums are taken in another order, so
results may differ in the last bits.

Only adjoint code has `dW += np.outer(a, b)`: the matrix-product rules give it for 1-d
operands of known shapes (inline.py), and a user's own `+=` is in normal form `t = ...`.
"""
from __future__ import annotations

import gast

from ...ir.blocks import blocks, nodes
from ...ir.builders import const, load, store
from ...ir.naming import unused_name
from .rows import first_writes, stack_rows


def batch_outer_products(tree: gast.FunctionDef, np_name: str, shapes=None):
    """Rewrite every loop of `tree` in place. `shapes` (a fresh shape oracle, optional)
    follows the top level: a loop there whose sums are all of matrix products stacks the
    rows of its steps (see rows.py)."""
    taken = None        # (the names, found at the first loop: most functions have none)
    for block in blocks(tree):
        top = block is tree.body
        i = 0
        while i < len(block):
            loop = block[i]
            if isinstance(loop, gast.For):
                if taken is None:
                    taken = {n.id for n in nodes(tree) if isinstance(n, gast.Name)}
                # (what runs after a loop at the top: in a loop, the next trip runs too)
                later = block[i + 1:] if top else None
                before, after = _batch(loop, np_name, taken, later,
                                       shapes if top else None)
                block[i:i + 1] = before + [loop] + after
                if top and after:
                    i -= first_writes(block, i + len(before), after[0], later, np_name)
                if top and shapes is not None:
                    for stmt in block[i:i + len(before) + 1]:
                        shapes.track(stmt)
                    i += len(before) + 1
                    continue        # (the statements after it are tracked as they come)
                i += len(before) + len(after)
            elif top and shapes is not None:
                shapes.track(loop)
            i += 1


def _batch(loop, np_name, taken, later, shapes=None):
    """(statements before the loop, statements after it), the loop body rewritten;
    `shapes`, a shape oracle that has followed the statements before the loop, or None."""
    body = loop.body
    # (a body without an accumulation to batch is not walked: loops nested d deep walked
    # their statements d times)
    if all(_outer_accumulation(stmt, np_name) is None for stmt in body) or \
            any(isinstance(n, (gast.Break, gast.Continue)) for n in _own_nodes(body)):
        return [], []       # every trip must reach every append
    mutated = _mutated(body)
    aliases = _aliases(body)

    def value_at(name, position):
        """(name, how often the body assigned it before `position`): one value per trip."""
        return name, sum(1 for s in body[:position] if name in _assigned(s))

    def once(target):           # dW is read or written nowhere else in the loop
        return sum(1 for n in nodes(loop) if isinstance(n, gast.Name)
                   and n.id == target) == 1

    products, lists = [], {}    # (statement, dW, left, right, matrix?); value -> list name
    for position, stmt in enumerate(body):
        found = _outer_accumulation(stmt, np_name)
        if found is None or not once(found[0]) or \
                any(aliases.get(v, {v}) & mutated for v in found[1:3]):
            continue
        target, left, right, matrix = found
        values = value_at(left, position), value_at(right, position)
        for value in values:
            lists.setdefault(value, (unused_name(f"_{value[0].lstrip('_')}s", taken), stmt))
        products.append((stmt, target) + values + (matrix,))
    if not products:
        return [], []
    # dW += v (or np.sum(v, axis=0)), for a v that is stacked anyway: the sum of the stack
    sums = []
    for position, stmt in enumerate(body):
        summed = _summed(stmt, np_name)
        if summed is not None and once(stmt.target.id) and \
                value_at(summed[0], position) in lists:
            sums.append((stmt, stmt.target.id, value_at(summed[0], position), summed[1]))
    # values read again from an argument are not stacked: their stack is a slice of it
    rereads = _rereads(loop, mutated, aliases, lists)
    if len(rereads) == len(lists):
        rereads = {}
    # the loop appends each stacked value where its first product was
    appends = {}
    for value, (name, stmt) in lists.items():
        if value not in rereads:
            appends.setdefault(id(stmt), []).append(_append(name, value[0]))
    dropped = {id(stmt) for stmt, *_ in products} | {id(stmt) for stmt, *_ in sums}
    for v, _ in rereads:        # and their reading goes where nothing else needs it
        if later is not None and not any(_loads(s, v) for s in later) and \
                _loads(loop, v) == sum(_loads(s, v) for s in body if id(s) in dropped):
            dropped |= {id(s) for s in body if v in _assigned(s)}
    new_body = []
    for stmt in body:
        new_body += appends.get(id(stmt), [])
        if id(stmt) not in dropped:
            new_body.append(stmt)
    loop.body[:] = new_body
    kept = [name for value, (name, _) in lists.items() if value not in rereads]
    before = [gast.Assign(targets=[store(name)], value=_list(), type_comment=None)
              for name in kept]
    first = kept[0]
    # each step's rows one after the other, where every sum allows it (rows.py)
    joined = stack_rows(products, sums, rereads, shapes)
    # (the lists hold the trips from the last: reversed, to match a slice's order)
    stacked = [gast.Assign(targets=[store(name)], value=_np_array(
        np_name, name, bool(rereads), joined is not None), type_comment=None)
        for name in kept]
    stacked += [gast.Assign(targets=[store(lists[value][0])],
                            value=whole if joined is None else joined[value],
                            type_comment=None) for value, whole in rereads.items()]
    updates = [gast.AugAssign(target=store(target), op=gast.Add(), value=gast.Call(
        func=gast.Attribute(value=load(np_name), attr="sum", ctx=gast.Load()),
        args=[load(lists[value][0])], keywords=[gast.keyword(
            arg="axis", value=axis if joined is None else const(0))]))
        for _, target, value, axis in sums]
    updates += [gast.AugAssign(target=store(target), op=gast.Add(),
                               value=_stacked_product(np_name, lists[left][0],
                                                      lists[right][0],
                                                      matrix and joined is None))
                for _, target, left, right, matrix in products]
    return before, [gast.If(test=load(first), body=stacked + updates, orelse=[])]


def _own_nodes(body):
    """The nodes of `body`, not looking into nested loops (their break is their own)."""
    todo = list(body)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (gast.For, gast.While)):
            todo.extend(gast.iter_child_nodes(node))


def _assigned(stmt) -> set:
    return {n.id for n in nodes(stmt) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Store)}


def _stacked_product(np_name, lefts, rights, matrix):
    """The sum over the steps of np.outer(a, b) (`lefts.T @ rights`) or of a.T @ b (for
    a and b of at most 2 axes: the sum over the steps and the rows of a)."""
    if not matrix:
        return gast.BinOp(left=gast.Attribute(value=load(lefts), attr="T", ctx=gast.Load()),
                          op=gast.MatMult(), right=load(rights))
    axes = gast.Tuple(elts=[const(0), const(1)], ctx=gast.Load())
    return gast.Call(func=gast.Attribute(value=load(np_name), attr="tensordot",
                                         ctx=gast.Load()),
                     args=[load(lefts), load(rights)],
                     keywords=[gast.keyword(arg="axes", value=gast.Tuple(
                         elts=[axes, axes], ctx=gast.Load()))])


def _summed(stmt, np_name):
    """(v, the axes of the stack to sum) for `dW += v` and `dW += np.sum(v, axis=0)`."""
    if not (isinstance(stmt, gast.AugAssign) and isinstance(stmt.op, gast.Add) and
            isinstance(stmt.target, gast.Name)):
        return None
    value = stmt.value
    if isinstance(value, gast.Name):
        return value.id, const(0)
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and \
            value.func.attr == "sum" and isinstance(value.func.value, gast.Name) and \
            value.func.value.id == np_name and len(value.args) == 1 and \
            isinstance(value.args[0], gast.Name) and len(value.keywords) == 1 and \
            value.keywords[0].arg == "axis" and \
            isinstance(value.keywords[0].value, gast.Constant) and \
            type(value.keywords[0].value.value) is int and value.keywords[0].value.value == 0:
        return value.args[0].id, gast.Tuple(elts=[const(0), const(1)], ctx=gast.Load())
    return None


def _outer_accumulation(stmt, np_name):
    """(dW, a, b, False) for `dW += np.outer(a, b)` and (dW, a, b, True) for
    `dW += a.T @ b`, with names a and b (the matrix-product rules write the latter only
    for a and b of 1 or 2 axes: reverse/inline.py)."""
    if not (isinstance(stmt, gast.AugAssign) and isinstance(stmt.op, gast.Add)
            and isinstance(stmt.target, gast.Name)):
        return None
    value = stmt.value
    if isinstance(value, gast.BinOp) and isinstance(value.op, gast.MatMult) and \
            isinstance(value.left, gast.Attribute) and value.left.attr == "T" and \
            isinstance(value.left.value, gast.Name) and isinstance(value.right, gast.Name):
        return stmt.target.id, value.left.value.id, value.right.id, True
    call = stmt.value
    if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
            and call.func.attr == "outer" and isinstance(call.func.value, gast.Name)
            and call.func.value.id == np_name and len(call.args) == 2 and not call.keywords
            and all(isinstance(a, gast.Name) for a in call.args)):
        return None
    return stmt.target.id, call.args[0].id, call.args[1].id, False


def _mutated(body):
    """Names whose arrays the loop body changes in place: `x += ...`, `x[i] = ...`,
    `f(..., out=x)`."""
    names = set()
    for node in nodes(gast.Module(body=body, type_ignores=[])):
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
            names |= {n.id for n in nodes(node.value) if isinstance(n, gast.Name)}
    return names


def _aliases(body):
    """name -> the names that may share its array through copies `a = b` in the body."""
    groups = {}
    for node in nodes(gast.Module(body=body, type_ignores=[])):
        if isinstance(node, gast.Assign) and isinstance(node.value, gast.Name):
            for t in node.targets:
                if isinstance(t, gast.Name):
                    merged = groups.get(t.id, {t.id}) | groups.get(node.value.id,
                                                                   {node.value.id})
                    for name in merged:
                        groups[name] = merged
    return groups


def _before_top_statements(tree, shapes, rewrite) -> None:
    """Put `rewrite(stmt)`'s statements before each statement at the top level of `tree`
    (hoisting.py, stacking.py: a loop's, made before it), `shapes` following the top level
    (the statements put there are not followed)."""
    body, i = tree.body, 0
    while i < len(body):
        stmt = body[i]
        before = rewrite(stmt)
        body[i:i] = before
        i += len(before)
        shapes.track(stmt)
        i += 1



def _append(rows, value):
    call = gast.Call(func=gast.Attribute(value=load(rows), attr="append", ctx=gast.Load()),
                     args=[load(value)], keywords=[])
    return gast.Expr(value=call)


def _np_array(np_name, rows, reverse=False, joined=False):
    """`np.array(rows)` (a new first axis, one step each) or, `joined`,
    `np.concatenate(rows)` (the steps' rows one after the other)."""
    rows = load(rows)
    if reverse:
        rows = gast.Subscript(value=rows, slice=gast.Slice(lower=None, upper=None,
                                                           step=const(-1)), ctx=gast.Load())
    return gast.Call(func=gast.Attribute(value=load(np_name),
                                         attr="concatenate" if joined else "array",
                                         ctx=gast.Load()),
                     args=[rows], keywords=[])


def _rereads(loop, mutated, aliases, lists) -> dict:
    """value -> `x[:_trips]` for the stacked values (v, 1) that the loop's body assigns
    once, at its top, by `v = x[_trips - 1 - _]` in `for _ in range(_trips)` (the reverse
    pass reads an argument again so: reverse/loops.py), with x, _trips and _ rebound and
    changed nowhere in the body: trip by trip v is x[_trips - 1], ..., x[0], whose
    stack in the order of the trips the reverse pass replays is x[:_trips]."""
    it = loop.iter
    if not (isinstance(loop.target, gast.Name) and isinstance(it, gast.Call) and
            isinstance(it.func, gast.Name) and it.func.id == "range" and
            len(it.args) == 1 and isinstance(it.args[0], gast.Name) and not it.keywords):
        return {}
    trips, i = it.args[0].id, loop.target.id
    written = set().union(*(_assigned(s) for s in loop.body))
    found = {}
    for value in lists:
        v, count = value
        assigns = [s for s in loop.body if v in _assigned(s)]
        if count != 1 or len(assigns) != 1 or not isinstance(assigns[0], gast.Assign):
            continue
        read = assigns[0].value
        if not (isinstance(read, gast.Subscript) and isinstance(read.value, gast.Name) and
                gast.dump(read.slice) == gast.dump(_last_first(trips, i))):
            continue
        x = read.value.id
        if {x, trips, i} & written or aliases.get(x, {x}) & mutated or x in mutated:
            continue
        found[value] = gast.Subscript(value=load(x), slice=gast.Slice(
            lower=None, upper=load(trips), step=None), ctx=gast.Load())
    return found


def _last_first(trips, i):
    """`trips - 1 - i`."""
    return gast.BinOp(left=gast.BinOp(left=load(trips), op=gast.Sub(), right=const(1)),
                      op=gast.Sub(), right=load(i))


def _loads(tree, name) -> int:
    return sum(1 for n in nodes(tree) if isinstance(n, gast.Name) and n.id == name and
               isinstance(n.ctx, gast.Load))


def _list():
    return gast.List(elts=[], ctx=gast.Load())
