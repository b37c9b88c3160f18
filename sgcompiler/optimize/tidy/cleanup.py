"""Tidy the generated function: fewer names, fewer lines, same arithmetic.

    _max = np.max(x)                     _max = np.max(x)
    _stop_gradient = _max        ->      z = x - _max
    z = x - _stop_gradient

    d_add = dy                           d_mul = dy * c
    d_mul = d_add * c            ->      dy = dy * 2
    dy = d_add * 2

    _dw, = f_backward(d, _saved)   ->     dw, = f_backward(d, _saved)
    dw = _dw

    dx = dx + -d_t               ->      dx = dx - d_t
    unreduce(g, x, None, False)  ->      unreduce(g, x)

Only rewrites that cannot change a value: a copy is folded away only when its source is
a temporary written once, right before, and read nowhere else; a generated name that
copies another is replaced by it only where both certainly hold the same value.
"""
from __future__ import annotations

import inspect
import types

import gast
import numpy

from ... import runtime
from ...ir.blocks import arithmetic, blocks, nodes, statements, tally_names
from ...ir.builders import COMMENT
from .block_index import BlockIndex, forget


def tidy(tree, helpers):
    """`dx + -d_t` is `dx - d_t`; a helper's default arguments are left out."""
    rewrite = _Tidy(helpers)
    # (a rewrite makes no node another rewrite applies to that was not one before: where
    # none applies to the tree as it is, the transformer's walk would change nothing)
    if any(rewrite.applies(node) for node in nodes(tree)):
        rewrite.visit(tree)


def while_condition(tree):
    """`while True: if c: body else: break` (how `while c:` is lowered) is `while c: body`:
    the test runs at the top of every trip either way."""
    for node in list(statements(tree)):
        if isinstance(node, gast.While) and isinstance(node.test, gast.Constant) and \
                node.test.value is True and not node.orelse and len(node.body) == 1 and \
                isinstance(node.body[0], gast.If) and len(node.body[0].orelse) == 1 and \
                isinstance(node.body[0].orelse[0], gast.Break):
            branch = node.body[0]
            node.test, node.body = branch.test, branch.body


def _is_comment(stmt) -> bool:
    return isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant) and \
        isinstance(stmt.value.value, str) and stmt.value.value.startswith(COMMENT)


def drop_lonely_comments(tree):
    """A `# line N` comment whose statements were all folded away goes too."""
    for block in blocks(tree):
        keep = []
        for i, stmt in enumerate(block):
            following = block[i + 1] if i + 1 < len(block) else None
            if _is_comment(stmt) and stmt.value.value.startswith(COMMENT + "line") and (
                    following is None or _is_comment(following) or
                    isinstance(following, gast.Return)):
                continue
            keep.append(stmt)
        _replace(block, keep)


def free_after_last_use(tree, small):
    """`del a, b` right after the statement that reads arrays a and b for the last time,
    so their memory goes back to the allocator while the rest runs (peak memory, and no
    page faults for the next large array). Top-level statements only, and only names
    certainly bound there."""
    body = tree.body
    params = {a.id for a in tree.args.args + tree.args.kwonlyargs + tree.args.posonlyargs}
    params |= _numbers(tree)
    # name -> the first statement after which it is certainly bound (a set of the names
    # bound before each statement would cost the square of the function's length)
    last, bound_after = {}, dict.fromkeys(params, -1)
    for i, stmt in enumerate(body):
        for node in nodes(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                last[node.id] = i
            elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
                last[node.target.id] = i       # x += y reads x
        if isinstance(stmt, gast.Assign):
            for t in stmt.targets:
                for name in ([t] if isinstance(t, gast.Name) else
                             t.elts if isinstance(t, gast.Tuple) else []):
                    if isinstance(name, gast.Name):
                        bound_after.setdefault(name.id, i)
    returns_from = len(body)        # body[returns_from:] are all returns
    while returns_from and isinstance(body[returns_from - 1], gast.Return):
        returns_from -= 1
    frees, stores = {}, {}
    for name, i in last.items():
        stmt = body[i]
        if isinstance(stmt, gast.Return) or i + 1 >= returns_from \
                or small(name) \
                or name in params:          # the caller holds its arguments anyway
            continue
        bound = bound_after.get(name, i) < i
        if bound or name in _stored(stmt, i, stores):
            if bound or isinstance(stmt, gast.Assign):
                frees.setdefault(i, []).append(name)
    # (one new list: an insert per `del` made a long function cost the square of its length)
    body[:] = [made for i, stmt in enumerate(body) for made in
               ([stmt, _delete(sorted(frees[i]))] if i in frees else [stmt])]


def _numbers(tree) -> set:
    """Names that hold no array worth freeing, found in one walk: branch conditions
    (bools), shapes (tuples of ints) and counters (`_trips = 0`, `_trips += 1`)."""
    found, numbers, other = set(), set(), set()
    for node in statements(tree):       # (each a statement: no expression is walked)
        if isinstance(node, gast.If):
            if isinstance(node.test, gast.Name):
                found.add(node.test.id)
        elif isinstance(node, (gast.Assign, gast.AugAssign)):
            targets = node.targets if isinstance(node, gast.Assign) else [node.target]
            if isinstance(node, gast.Assign) and isinstance(targets[0], gast.Name) and \
                    isinstance(node.value, gast.Attribute) and \
                    node.value.attr in ("shape", "ndim", "size", "dtype"):
                found.add(targets[0].id)
            names = {t.id for t in targets if isinstance(t, gast.Name)}
            number = isinstance(node.value, gast.Constant) and \
                type(node.value.value) in (int, float)
            (numbers if number else other).update(names)
    return found | (numbers - other)


def _delete(names):
    return gast.Delete(targets=[gast.Name(id=n, ctx=gast.Del(), annotation=None,
                                          type_comment=None) for n in names])


def _stored(stmt, i, stores) -> set:
    """The names `stmt` (statement i) binds, worked out once per statement: a loop that
    is the last reader of many names is walked once, not once per name."""
    if i not in stores:
        stores[i] = {n.id for n in nodes(stmt)
                     if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    return stores[i]


def _counts(tree):
    """(reads, writes): a Load or a Del is a read, a Store a write."""
    writes, reads = tally_names(tree, (gast.Store,))
    return reads, writes


def _replace(block, keep):
    """block[:] = keep, but a block that had statements keeps at least a `pass` (an empty
    `else` stays empty)."""
    block[:] = keep or ([gast.Pass()] if block else [])


def coalesce_copies(tree, user_names):
    reads, writes = _counts(tree)
    renames = {}
    for block in blocks(tree):
        i = 1
        while i < len(block):
            j = i - 1
            while j > 0 and _is_comment(block[j]):      # look past `# line N` comments
                j -= 1
            before, stmt = block[j], block[i]
            if _result_copy(block, i, reads, writes, user_names):
                del block[i]
                continue
            if _foldable(before, stmt, reads, writes, user_names):
                source, target = before.targets[0].id, stmt.targets[0].id
                if target.startswith("_"):
                    renames[target] = source      # keep the name of what it holds
                else:
                    before.targets[0].id = target
                del block[i]
                continue
            i += 1
    if renames:
        for node in nodes(tree):
            if isinstance(node, gast.Name) and node.id in renames:
                node.id = renames[node.id]


def _result_copy(block, i, reads, writes, user_names) -> bool:
    """`_dw, _db = f_backward(...)` then `dw = _dw` (past comments and other such copies):
    name the result `dw` where it is bound, so the copy can go. Returns whether it did."""
    copy_ = _copy_names(block[i])
    if copy_ is None:
        return False
    target, source = copy_
    if source in user_names or writes[source] != 1 or reads[source] != 1:
        return False
    for j in range(i - 1, -1, -1):
        before = block[j]
        if _is_comment(before):
            continue
        names = _copy_names(before)
        if names is not None:
            if {target, source} & set(names):
                return False
            continue                    # another result's copy
        if not (isinstance(before, gast.Assign) and len(before.targets) == 1
                and isinstance(before.targets[0], gast.Tuple)):
            return False
        elements = before.targets[0].elts
        # (the call may read the target: `h, h_dot = layer_jvp(h, h_dot=h_dot)` evaluates
        # the call before it binds h, as the copy after it did)
        if any(isinstance(n, gast.Name) and n.id == target for n in nodes(before.targets[0])):
            return False
        for element in elements:
            if isinstance(element, gast.Name) and element.id == source:
                element.id = target
                return True
        return False
    return False


def _foldable(before, stmt, reads, writes, user_names) -> bool:
    if not (isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.Name)
            and isinstance(stmt.targets[0], gast.Name)):
        return False
    if not (isinstance(before, gast.Assign) and isinstance(before.targets[0], gast.Name)):
        return False
    source, target = stmt.value.id, stmt.targets[0].id
    return (before.targets[0].id == source and source not in user_names
            and writes[source] == 1 and reads[source] == 1 and writes[target] == 1)


def propagate_copies(tree, user_names):
    """`a = b`, with a generated name a assigned only there and read only later in the same
    block, before anything rebinds b: read b instead, and drop the copy. `b = a` after
    `a = b` (nothing rebinding either in between) does nothing and goes too."""
    params = {a.id for a in tree.args.args + tree.args.kwonlyargs + tree.args.posonlyargs}
    reads, writes = _counts(tree)
    known = {}          # what each statement binds and reads (block_index.names_of)
    for block in list(blocks(tree)):
        had_statements = bool(block)
        index = None    # (made at the block's first copy: most blocks of loops have none)
        # the copies dropped are marked in the index and the block rebuilt once at the end
        # (a `del block[i]` each moves the rest of the block: quadratic in its length)
        statements, i = list(block), 0
        while i < len(statements):
            stmt = statements[i]
            names = _copy_names(stmt)
            if names is None or index is not None and i in index.deleted:
                i += 1
                continue
            if index is None:
                index = BlockIndex(block, known)
            a, b = names
            if a == b:
                index.delete(stmt)
                reads[b] -= 1
                writes[b] -= 1
            elif _drop_copy_back(index, i, a, b):
                reads[a] -= 1
                writes[b] -= 1
                continue        # (the copy itself may go now: look at it again)
            elif is_temporary(a) and a not in user_names and a not in params and writes[a] == 1 and \
                    (writes[b] > 0 or b in params) and \
                    _replace_reads(index, stmt, a, b, reads[a], known):
                index.delete(stmt)
                reads[b] += reads[a] - 1
                reads[a], writes[a] = 0, 0
            i += 1
        if index is not None and index.deleted:
            block[:] = [stmt for k, stmt in enumerate(statements) if k not in index.deleted]
        if had_statements and not block:
            block.append(gast.Pass())


def is_temporary(name) -> bool:
    """A normalisation temporary (`_add`) or its adjoint (`d_add`), see naming.py: a name
    the reader loses nothing by not seeing."""
    return name.startswith(("_", "d_"))


def _copy_names(stmt):
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
            isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Name):
        return stmt.targets[0].id, stmt.value.id
    return None


def _drop_copy_back(index, i, a, b) -> bool:
    """Mark deleted a later `b = a` that nothing separates from `a = b` at position i."""
    k = index.next_bind(i, (a, b))
    if k is None or _copy_names(index.statements[k]) != (b, a):
        return False
    index.delete(index.statements[k])
    return True


def _replace_reads(index, copy, a, b, count, known) -> bool:
    """Replace the `count` reads of a after the copy `a = b` by b, if all are in this
    block before anything rebinds b (a plain statement reads before it assigns)."""
    start = index.of(copy)
    found, last = 0, None
    for k in index.readers(a, start):
        found += _load_count(index.statements[k], a)
        if found >= count:
            last = k
            break
    if last is None or found != count or count == 0:
        return False
    rebinds = index.next_bind(start, (b,))
    if rebinds is not None and (rebinds < last or rebinds == last and isinstance(
            index.statements[last], (gast.If, gast.For, gast.While))):
        return False
    for k in list(index.readers(a, start)):
        if k > last:
            break
        for node in nodes(index.statements[k]):
            if isinstance(node, gast.Name) and node.id == a and isinstance(node.ctx, gast.Load):
                node.id = b
        index.renamed(k, b)
        forget(index.statements[k], known)
    return True


def _load_count(stmt, name) -> int:
    count = 0
    for node in nodes(stmt):
        if isinstance(node, gast.Name) and node.id == name and isinstance(node.ctx, gast.Load):
            count += 1
        elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name) and \
                node.target.id == name:
            count += 1
    return count


def drop_dead(tree, helpers):
    """Remove assignments whose value nobody reads (e.g. the loss value, when only the
    gradient is returned), as long as computing it has no effect beyond the value."""
    reads, _ = _counts(tree)
    all_blocks = list(blocks(tree))
    pure = {}
    removed = True
    while removed:          # removing one may leave what it read unread
        removed = False
        # last statement first, inner blocks first: what a removed statement read is
        # usually assigned before it, so a chain of n dead values goes in one sweep, not n
        for block in reversed(all_blocks):
            keep = []
            for stmt in reversed(block):
                known = pure.get(id(stmt))
                if known is None or known[0] is not stmt:     # (ids of freed nodes recur)
                    known = pure[id(stmt)] = (stmt, pure_assign(stmt, helpers))
                if known[1] and reads[stmt.targets[0].id] == 0:
                    for node in nodes(stmt.value):
                        if isinstance(node, gast.Name):
                            reads[node.id] -= 1
                    removed = True
                else:
                    keep.append(stmt)
            if len(keep) != len(block):
                _replace(block, keep[::-1])


def pure_assign(stmt, helpers) -> bool:
    """`name = expression` built only of names, constants, arithmetic, comparisons,
    subscripts, attributes and calls of NumPy, `len`/`range` or runtime helpers."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)):
        return False
    for node in nodes(stmt.value):
        if isinstance(node, gast.Call):
            func = node.func
            root = func
            while isinstance(root, gast.Attribute):
                root = root.value
            name = getattr(root, "id", None)
            if _mentions_random(func):     # draws advance a generator's state
                return False
            if not (name in helpers or name in ("np", "len", "range", "min", "max", "abs",
                                                "float", "int", "math")):
                return False
        elif isinstance(node, (gast.Lambda, gast.Yield, gast.Await, gast.NamedExpr)):
            return False
    return True


def _same_tree(a, b) -> bool:
    """Whether gast.dump(a) == gast.dump(b) (the same fields, leaves of the same repr:
    1 is not 1.0, -0.0 is not 0.0), without printing either."""
    if type(a) is not type(b):
        return False
    if isinstance(a, gast.AST):
        return all(_same_tree(getattr(a, f, None), getattr(b, f, None)) for f in a._fields)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same_tree(x, y) for x, y in zip(a, b))
    return repr(a) == repr(b)


def _mentions_random(func) -> bool:
    """Whether a name, attribute or string in `func` is "random" (np.random.normal, a
    `random` module): what `"'random'" in gast.dump(func)` found, without printing it."""
    return any(type(value) is str and value == "random"
               for node in nodes(func) for value in node.__dict__.values())


class _Tidy(gast.NodeTransformer):
    def __init__(self, helpers):
        self.helpers = helpers
        self._parameters = {}   # id(helper) -> its parameters

    def applies(self, node) -> bool:
        """Whether one of the rewrites below applies to `node` as it is."""
        if isinstance(node, gast.BinOp):
            return isinstance(node.op, gast.Add) and (
                isinstance(node.right, gast.UnaryOp) and isinstance(node.right.op, gast.USub)
                or arithmetic(node.left) and _same_tree(node.left, node.right))
        if isinstance(node, gast.AugAssign):
            return isinstance(node.op, gast.Add) and isinstance(node.value, gast.UnaryOp) \
                and isinstance(node.value.op, gast.USub)
        if isinstance(node, gast.Call):
            helper = self.helpers.get(getattr(node.func, "id", None))
            if helper is None or node.keywords or not node.args:
                return False
            params = self.parameters(helper)
            return len(node.args) <= len(params) and \
                _default(params[len(node.args) - 1], node.args[-1])
        return False

    def parameters(self, helper) -> list:
        found = self._parameters.get(id(helper))
        if found is None:
            found = self._parameters[id(helper)] = \
                list(inspect.signature(helper).parameters.values())
        return found

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, gast.Add) and isinstance(node.right, gast.UnaryOp) \
                and isinstance(node.right.op, gast.USub):
            return gast.BinOp(left=node.left, op=gast.Sub(), right=node.right.operand)
        if isinstance(node.op, gast.Add) and arithmetic(node.left) and \
                _same_tree(node.left, node.right):
            # d * x + d * x (the adjoint of x * x): one product, doubled (exactly equal)
            return gast.BinOp(left=node.left, op=gast.Mult(),
                              right=gast.Constant(value=2, kind=None))
        return node

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        if isinstance(node.op, gast.Add) and isinstance(node.value, gast.UnaryOp) \
                and isinstance(node.value.op, gast.USub):
            node.op, node.value = gast.Sub(), node.value.operand
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        helper = self.helpers.get(getattr(node.func, "id", None))
        if helper is None or node.keywords:
            return node
        params = self.parameters(helper)
        while node.args and len(node.args) <= len(params):
            if not _default(params[len(node.args) - 1], node.args[-1]):
                break
            node.args.pop()
        return node


def _default(param, arg) -> bool:
    """Whether argument `arg` is the literal of parameter `param`'s default."""
    return not (param.default is inspect.Parameter.empty or not isinstance(arg, gast.Constant)
                or arg.value != param.default or type(arg.value) is not type(param.default))


def runtime_helpers(names: dict) -> dict:
    """The subset of linked names that are runtime helpers (sgcompiler/runtime/)."""
    return {n: obj for n, obj in names.items() if runtime.is_helper(obj)}


def pure_names(names: dict, body=(), lookup=None) -> frozenset:
    """The names whose calls compute a value and do nothing else (pure_assign): runtime
    helpers linked into the code, and array namespaces other than `np` that the user's
    code `body` calls through (NumPy under another name, a module-level `import
    array_api_strict as xp`: a module that declares the standard's version; `lookup`
    tells what a name refers to), so drop_dead removes their unread results as NumPy's."""
    found = {n for n, obj in names.items() if runtime.is_helper(obj)}
    roots = set()
    for stmt in body:
        for node in nodes(stmt):
            if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute):
                root = node.func
                while isinstance(root, gast.Attribute):
                    root = root.value
                if isinstance(root, gast.Name) and root.id not in found:
                    roots.add(root.id)
    for name in sorted(roots):
        is_known, obj = lookup(name) if lookup is not None else (False, None)
        if is_known and isinstance(obj, types.ModuleType) and (
                obj is numpy or hasattr(obj, "__array_api_version__")):
            found.add(name)
    return frozenset(found)
