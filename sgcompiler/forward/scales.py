"""Chains of scaled batched tangents folded into one product (batched tangent code only,
forward/batch.py; run by the tangent pass before the optimizations).

    _neg_dot = -_mm_dot                        _div_dot = _mm_dot * (_exp / _add ** 2
    _exp_dot = _neg_dot * _exp           ->                          * (1.0 / _neg2))
    p_dot = _exp_dot * -(1.0 / _add ** 2)
    _sub_dot = -p_dot
    _div_dot = _sub_dot * (1.0 / _neg2)

A batched tangent has a leading axis of directions, so each link of an elementwise chain
(`t * c`, `c * t`, `t / c`, `-t`, where c holds no tangent) costs a pass over batch times
the value's size; the product of the factors is made on the values alone and the tangent
is scaled once. A link is merged into the next when its tangent is read there alone and
assigned once, and nothing between the two statements can write a name its factors or
its root tangent read (those names then hold the same values at the later statement).
Elementwise tangents of the same number of axes broadcast from the right, as the values
do, so (t * a) * b is t * (a * b) with the same shape.
"""
from __future__ import annotations

import gast

from ..ir.builders import load


def fold_scales(tree: gast.FunctionDef, tangents: frozenset, np_name: str) -> None:
    """Merge the scaled-tangent chains of every block of `tree` in place (`tangents`: the
    tangent names; `np_name`: the name numpy has in the code, whose functions are pure)."""
    loads, stores = _counts(tree)
    _Folder(tangents, np_name, loads, stores).block(tree.body)


class _Folder:
    def __init__(self, tangents, np_name, loads, stores):
        self.tangents, self.np_name = tangents, np_name
        self.loads, self.stores = loads, stores

    def block(self, body):
        links = {}      # tangent -> (index in body, root tangent, factors, negated)
        for i, stmt in enumerate(body):
            for field in ("body", "orelse"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                    self.block(inner)
            link = self.link(stmt)
            if link is None:
                continue
            target, source, factor, negated = link
            earlier = links.get(source)
            if earlier is not None and self.single(source) and \
                    not _writes(body[earlier[0] + 1:i], earlier[3] | {earlier[1]},
                                self.np_name):
                j, root, factors, sign = earlier[0], earlier[1], earlier[2], earlier[4]
                body[j] = None
                factors = factors + ([factor] if factor is not None else [])
                negated = negated != sign
                stmt.value = _scaled(root, factors, negated)
                links[target] = (i, root, factors, _names_of(factors), negated)
            else:
                factors = [factor] if factor is not None else []
                links[target] = (i, source, factors, _names_of(factors), negated)
        body[:] = [s for s in body if s is not None]

    def single(self, name) -> bool:
        """Whether the tangent `name` is assigned once and read once in the function."""
        return self.stores.get(name, 0) == 1 and self.loads.get(name, 0) == 1

    def link(self, stmt):
        """(target, source tangent, factor or None, negated) of `t = s * c`, `c * s`,
        `s / c`, `-s`, `s` with s a tangent and c a pure expression of no tangent."""
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], gast.Name)
                and stmt.targets[0].id in self.tangents):
            return None
        target, value = stmt.targets[0].id, stmt.value
        negated = False
        if isinstance(value, gast.UnaryOp) and isinstance(value.op, gast.USub):
            value, negated = value.operand, True
        if self.is_tangent(value):
            return target, value.id, None, negated
        if not isinstance(value, gast.BinOp):
            return None
        if isinstance(value.op, gast.Mult):
            for t, c in ((value.left, value.right), (value.right, value.left)):
                if self.is_tangent(t) and self.pure(c):
                    return target, t.id, c, negated
        if isinstance(value.op, gast.Div) and self.is_tangent(value.left) and \
                self.pure(value.right):
            one = gast.Constant(value=1.0, kind=None)
            return target, value.left.id, gast.BinOp(left=one, op=gast.Div(),
                                                     right=value.right), negated
        return None

    def is_tangent(self, node) -> bool:
        return isinstance(node, gast.Name) and node.id in self.tangents

    def pure(self, node) -> bool:
        """Arithmetic of names that are not tangents, numbers and numpy calls without
        out=."""
        if isinstance(node, gast.Constant):
            return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
        if isinstance(node, gast.Name):
            return node.id not in self.tangents
        if isinstance(node, gast.UnaryOp):
            return isinstance(node.op, (gast.USub, gast.UAdd)) and self.pure(node.operand)
        if isinstance(node, gast.BinOp):
            return isinstance(node.op, (gast.Add, gast.Sub, gast.Mult, gast.Div,
                                        gast.Pow)) and self.pure(node.left) and \
                self.pure(node.right)
        if isinstance(node, gast.Call):
            return _np_call(node, self.np_name) and all(self.pure(a) for a in node.args)
        return False


# numpy's functions that write into an argument passed by position
_WRITING = frozenset({"copyto", "put", "place", "putmask", "fill_diagonal",
                      "put_along_axis"})


def _np_call(node, np_name) -> bool:
    """A call np.f(...) with positional arguments alone (no out=), f writing none."""
    func = node.func
    return isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and \
        func.value.id == np_name and not node.keywords and func.attr not in _WRITING


def _scaled(root, factors, negated):
    """root * (f1 * f2 * ...), negated: root * -(...) (or -root with no factor)."""
    if not factors:
        return gast.UnaryOp(op=gast.USub(), operand=load(root)) if negated else load(root)
    product = factors[0]
    for f in factors[1:]:
        product = gast.BinOp(left=product, op=gast.Mult(), right=f)
    if negated:
        product = gast.UnaryOp(op=gast.USub(), operand=product)
    return gast.BinOp(left=load(root), op=gast.Mult(), right=product)


def _names_of(nodes) -> frozenset:
    return frozenset(n.id for node in nodes for n in gast.walk(node)
                     if isinstance(n, gast.Name))


def _counts(tree):
    """(name -> reads, name -> writes) over the whole function: a write is a store or
    del of the name, or of an element or attribute of it (x[i] = v, x += v)."""
    loads, stores = {}, {}
    for node in gast.walk(tree):
        if isinstance(node, gast.Name):
            table = loads if isinstance(node.ctx, gast.Load) else stores
            table[node.id] = table.get(node.id, 0) + 1
    for name in _subscript_bases(tree):
        stores[name] = stores.get(name, 0) + 1
    return loads, stores


def _subscript_bases(tree) -> set:
    """Names whose elements or attributes some statement writes (x[i] = v, x.a = v)."""
    found = set()
    for node in gast.walk(tree):
        if isinstance(node, (gast.Subscript, gast.Attribute)) and \
                isinstance(node.ctx, (gast.Store, gast.Del)):
            base = node.value
            while isinstance(base, (gast.Subscript, gast.Attribute)):
                base = base.value
            if isinstance(base, gast.Name):
                found.add(base.id)
    return found


def _writes(stmts, names, np_name) -> bool:
    """Whether any of `stmts` may write one of `names`: stores, dels, element writes,
    out= buffers, or any call other than numpy's without out= that is passed it or is
    a method of it (which may write into it)."""
    for stmt in stmts:
        if stmt is None:        # (a link merged into a later one)
            continue
        for node in gast.walk(stmt):
            if isinstance(node, gast.Name) and node.id in names and \
                    not isinstance(node.ctx, gast.Load):
                return True
            if isinstance(node, (gast.Subscript, gast.Attribute)) and \
                    isinstance(node.ctx, (gast.Store, gast.Del)) and \
                    _names_of([node]) & names:
                return True
            if isinstance(node, gast.Call) and not _np_call(node, np_name) and \
                    _names_of([node]) & names:
                return True
            if isinstance(node, gast.Call) and any(k.arg == "out" for k in node.keywords) \
                    and _names_of(node.keywords) & names:
                return True
    return False
