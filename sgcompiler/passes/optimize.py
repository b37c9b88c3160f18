"""Tidy the generated function: fewer names, fewer lines, same arithmetic.

    _max = np.max(x)                     _max = np.max(x)
    _stop_gradient = _max        ->      z = x - _max
    z = x - _stop_gradient

    dx = dx + -d_t               ->      dx = dx - d_t
    unreduce(g, x, None, False)  ->      unreduce(g, x)

Only rewrites that cannot change a value: a copy is folded away only when its source is
a temporary written once, right before, and read nowhere else.
"""
from __future__ import annotations

import inspect
from collections import Counter

import gast

from .. import runtime


def optimize(tree: gast.FunctionDef, helpers: dict, user_names=frozenset()) -> gast.FunctionDef:
    """Apply the tidy-ups to `tree` in place and return it. `helpers` maps the names of
    runtime helpers in the generated code to the helper functions; `user_names` are the
    user's own variable names (only generated names are folded away)."""
    _coalesce_copies(tree, user_names)
    _Tidy(helpers).visit(tree)
    _drop_dead(tree, helpers)
    return tree


def _counts(tree):
    reads, writes = Counter(), Counter()
    for node in gast.walk(tree):
        if isinstance(node, gast.Name):
            (writes if isinstance(node.ctx, gast.Store) else reads)[node.id] += 1
    return reads, writes


def _blocks(tree):
    yield tree.body
    for node in gast.walk(tree):
        if isinstance(node, (gast.If, gast.For, gast.While)) and node is not tree:
            yield node.body
            yield node.orelse


def _coalesce_copies(tree, user_names):
    reads, writes = _counts(tree)
    renames = {}
    for block in _blocks(tree):
        i = 1
        while i < len(block):
            before, stmt = block[i - 1], block[i]
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
        for node in gast.walk(tree):
            if isinstance(node, gast.Name) and node.id in renames:
                node.id = renames[node.id]


def _foldable(before, stmt, reads, writes, user_names) -> bool:
    if not (isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.Name)
            and isinstance(stmt.targets[0], gast.Name)):
        return False
    if not (isinstance(before, gast.Assign) and isinstance(before.targets[0], gast.Name)):
        return False
    source, target = stmt.value.id, stmt.targets[0].id
    return (before.targets[0].id == source and source not in user_names
            and writes[source] == 1 and reads[source] == 1 and writes[target] == 1)


def _drop_dead(tree, helpers):
    """Remove assignments whose value nobody reads (e.g. the loss value, when only the
    gradient is returned), as long as computing it has no effect beyond the value."""
    while True:
        reads, _ = _counts(tree)
        removed = False
        for block in _blocks(tree):
            keep = [s for s in block if not (_pure_assign(s, helpers) and
                                             reads[s.targets[0].id] == 0)]
            if len(keep) != len(block):
                block[:] = keep or [gast.Pass()]
                removed = True
        if not removed:
            return


def _pure_assign(stmt, helpers) -> bool:
    """`name = expression` built only of names, constants, arithmetic, comparisons,
    subscripts, attributes and calls of NumPy, `len`/`range` or runtime helpers."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)):
        return False
    for node in gast.walk(stmt.value):
        if isinstance(node, gast.Call):
            func = node.func
            root = func
            while isinstance(root, gast.Attribute):
                root = root.value
            name = getattr(root, "id", None)
            chain = gast.dump(func)
            if "'random'" in chain:         # draws advance a generator's state
                return False
            if not (name in helpers or name in ("np", "len", "range", "min", "max", "abs",
                                                "float", "int", "math")):
                return False
        elif isinstance(node, (gast.Lambda, gast.Yield, gast.Await, gast.NamedExpr)):
            return False
    return True


class _Tidy(gast.NodeTransformer):
    def __init__(self, helpers):
        self.helpers = helpers

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, gast.Add) and isinstance(node.right, gast.UnaryOp) \
                and isinstance(node.right.op, gast.USub):
            return gast.BinOp(left=node.left, op=gast.Sub(), right=node.right.operand)
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
        params = list(inspect.signature(helper).parameters.values())
        while node.args and len(node.args) <= len(params):
            param, arg = params[len(node.args) - 1], node.args[-1]
            if param.default is inspect.Parameter.empty or not isinstance(arg, gast.Constant) \
                    or arg.value != param.default or type(arg.value) is not type(param.default):
                break
            node.args.pop()
        return node


def runtime_helpers(names: dict) -> dict:
    """The subset of linked names that are runtime helpers (runtime.py, runtime_*.py)."""
    return {n: obj for n, obj in names.items()
            if getattr(obj, "__module__", None) == runtime.__name__
            or str(getattr(obj, "__module__", "")).startswith(runtime.__name__ + "_")}
