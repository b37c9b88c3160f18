"""Move factors that are constant along the summed axes out of a sum (shapes known).

    d_mul2 = d_mul3 * inv_var                       (inv_var: (k, d); the rest (n, k, d))
    ddiff = d_mul2 * diff * 2             ->        dmu = -np.sum(d_mul3 * diff, axis=0) * inv_var * 2
    dmu = -np.sum(ddiff, axis=0)

The gradient of a parameter broadcast over a batch (`X[:, None, :] - mu`) is the sum over
the batch of a product in which some factors (`inv_var`) do not depend on the batch index:
those multiply the small sum, not every element of the large product (this is how one
writes such a gradient by hand; here it also removes two multiplications of two broadcast
operands, which NumPy does slowly). Temporaries used once, by the product, are substituted
first, when nothing they read is written between. The rewritten sum is kept only when its
shape and dtype are those of the original.
"""
from __future__ import annotations

from collections import Counter

import gast

from ...ir.blocks import arithmetic, nodes
from ...ir.builders import const, factors_of, load, number, product_of, store
from ...analysis.shape_algebra import same


def factor_sums(body, shapes, np_name):
    """Rewrite the top-level statements `body` in place. `shapes` tracks the (shape, dtype)
    of names statement by statement: `shapes.shape_of(expr)` before `shapes.track(stmt)`."""
    sums = [stmt for stmt in body if isinstance(stmt, gast.Assign) and
            len(stmt.targets) == 1 and any(isinstance(n, gast.Attribute) and n.attr == "sum"
                                           for n in nodes(stmt.value))]
    if not sums:
        return
    reads = Counter(n.id for stmt in body for n in nodes(stmt)
                    if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Store))
    sums = {id(stmt) for stmt in sums}
    i = 0
    while i < len(body) and sums:
        stmt = body[i]
        if id(stmt) in sums:
            sums.discard(id(stmt))
            _Factor(body, i, shapes, np_name, reads).visit(stmt)
            i = body.index(stmt)        # substituted temporaries before it are gone
        shapes.track(stmt)
        i += 1


class _Factor(gast.NodeTransformer):
    def __init__(self, body, i, shapes, np_name, reads):
        self.body, self.i, self.shapes, self.np, self.reads = body, i, shapes, np_name, reads
        self.stmt = body[i]

    def visit_Call(self, node):
        self.generic_visit(node)
        if not self._sum_with_axes(node):
            return node
        axes, keepdims = self._axes(node)
        factors, used = self._expand(factors_of(node.args[0], False))
        found = [self.shapes.shape_of(f) for f, _ in factors]
        if any(f is None for f in found):
            return node
        ndim = max(len(f[0]) for f in found)
        if any(a >= ndim for a in axes):
            return node
        inner, outer = [], []
        for factor, (shape, _) in zip(factors, found):
            aligned = (1,) * (ndim - len(shape)) + tuple(shape)
            # constant along the summed axes, and (without keepdims) not having them at all
            constant = all(aligned[a] == 1 for a in axes) and \
                (keepdims or all(a < ndim - len(shape) for a in axes))
            (outer if constant else inner).append(factor)
        if not inner or not outer:
            return node
        whole = self.shapes.shape_of(product_of(factors))
        part = self.shapes.shape_of(product_of(inner))
        if whole is None or part is None or part[0] != whole[0]:
            return node         # the factors that stay do not make the full shape alone
        summed = product_of(inner)
        kept = node.args[0].id if isinstance(node.args[0], gast.Name) and \
            node.args[0].id in used and len(inner) > 1 else None
        new = gast.Call(func=node.func, args=[load(kept) if kept else summed],
                        keywords=node.keywords)
        numbers = [(f, inv) for f, inv in outer if number(f) is not None]
        scale = 1
        for factor, inverted in numbers:
            scale = scale / number(factor) if inverted else scale * number(factor)
        outer = [(f, inv) for f, inv in outer if number(f) is None]
        if scale == -1:         # -np.sum(...) / b, not np.sum(...) / b * -1
            new = gast.UnaryOp(op=gast.USub(), operand=new)
        elif scale != 1:
            outer.append((const(scale), False))
        new = product_of([(new, False)] + outer)
        if not same(self.shapes.shape_of(new), self.shapes.shape_of(node)):
            return node
        for name in used:            # the substituted temporaries are not needed any more
            self.body[:] = [s for s in self.body if not _assigns(s, name)]
        if kept:        # (the product a statement of its own: reuse-buffers may give it one)
            self.body.insert(self.body.index(self.stmt), gast.Assign(
                targets=[store(kept)], value=summed, type_comment=None))
        return new

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        operand = node.operand
        if isinstance(node.op, gast.USub) and isinstance(operand, gast.BinOp) and \
                isinstance(operand.op, gast.Mult) and number(operand.right) is not None:
            return gast.BinOp(left=operand.left, op=gast.Mult(),
                              right=const(-number(operand.right)))      # -(a * 2): a * -2
        return node

    def _sum_with_axes(self, node) -> bool:
        func = node.func
        if not (isinstance(func, gast.Attribute) and func.attr == "sum"
                and isinstance(func.value, gast.Name) and func.value.id == self.np
                and len(node.args) == 1):
            return False
        keywords = {k.arg for k in node.keywords}
        return keywords <= {"axis", "keepdims"} and "axis" in keywords and \
            self._axes(node) is not None

    def _axes(self, node):
        keywords = {k.arg: k.value for k in node.keywords}
        axis, keepdims = keywords["axis"], keywords.get("keepdims")
        items = axis.elts if isinstance(axis, gast.Tuple) else [axis]
        if not all(isinstance(a, gast.Constant) and type(a.value) is int and a.value >= 0
                   for a in items):
            return None
        if keepdims is not None and not (isinstance(keepdims, gast.Constant) and
                                         isinstance(keepdims.value, bool)):
            return None
        return tuple(a.value for a in items), bool(keepdims is not None and keepdims.value)

    def _expand(self, factors):
        """Substitute temporaries used once (here) by the products that define them; a
        temporary read with new last axes (`dsq[:, :, None]`, as drop-broadcasts writes
        it) by its factors, each with those axes (`d_div[:, :, None] / sigma2[:, None]`)."""
        used = []
        changed = True
        while changed:
            changed = False
            for k, (factor, inverted) in enumerate(factors):
                name, new = self._new_last_axes(factor)
                if inverted or name is None:
                    continue
                definition = self._single_use_product(name)
                parts = None if definition is None else \
                    self._with_new_axes(factors_of(definition, False), new)
                if parts is not None:
                    factors = factors[:k] + parts + factors[k + 1:]
                    used.append(name)
                    changed = True
                    break
        return factors, used

    def _new_last_axes(self, factor):
        """(name, k) for a name, k = 0, or a name of n axes read as `t[:, ..., :, None,
        ..., None]` (n slices, then k new axes); else (None, 0)."""
        if isinstance(factor, gast.Name):
            return factor.id, 0
        if not (isinstance(factor, gast.Subscript) and isinstance(factor.value, gast.Name)
                and isinstance(factor.slice, gast.Tuple)):
            return None, 0
        items = factor.slice.elts
        slices = 0
        while slices < len(items) and _whole(items[slices]):
            slices += 1
        rest = items[slices:]
        found = self.shapes.shape_of(factor.value)
        if not rest or found is None or len(found[0]) != slices or \
                not all(isinstance(e, gast.Constant) and e.value is None for e in rest):
            return None, 0
        return factor.value.id, len(rest)

    def _with_new_axes(self, factors, new):
        """`factors` each with `new` last axes (numbers and 0-d values as they are), or
        None where a factor's shape is not known or it is not a name."""
        if not new:
            return factors
        out = []
        for factor, inverted in factors:
            found = None if number(factor) is not None else self.shapes.shape_of(factor)
            if number(factor) is not None or found is not None and not found[0]:
                out.append((factor, inverted))
                continue
            if found is None or not isinstance(factor, gast.Name):
                return None
            index = [gast.Slice(lower=None, upper=None, step=None)] * len(found[0]) + \
                [const(None)] * new
            out.append((gast.Subscript(value=factor, slice=gast.Tuple(
                elts=index, ctx=gast.Load()), ctx=gast.Load()), inverted))
        return out

    def _single_use_product(self, name):
        """The product assigned to `name` earlier at the top level, if `name` is read only
        here and nothing the product reads is assigned or changed in between."""
        if self.reads[name] != 1:
            return None
        for j in range(self.i - 1, -1, -1):
            stmt = self.body[j]
            if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                    isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == name:
                value = stmt.value
                if not ((isinstance(value, gast.BinOp) and
                         isinstance(value.op, (gast.Mult, gast.Div)) or
                         isinstance(value, gast.UnaryOp) and
                         isinstance(value.op, gast.USub)) and _arithmetic_with_axes(value)):
                    return None
                operands = {n.id for n in nodes(value) if isinstance(n, gast.Name)}
                if any(_writes(s) & operands for s in self.body[j + 1:self.i]):
                    return None
                return value
            if name in _writes(stmt):
                return None
        return None


def _arithmetic_with_axes(node) -> bool:
    """Whether `node` is arithmetic (blocks.arithmetic) of names, numbers and names read
    with new axes (`t[:, :, None]`)."""
    parts = set()
    for n in nodes(node):
        if isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name) and \
                isinstance(n.slice, gast.Tuple) and \
                all(_whole(e) or isinstance(e, gast.Constant) and e.value is None
                    for e in n.slice.elts):
            parts |= {id(p) for p in nodes(n.slice)} | {id(n.ctx)}
    return all(id(n) in parts or isinstance(n, gast.Subscript) and id(n.slice) in parts or
               arithmetic(n) for n in nodes(node) if not isinstance(n, (gast.BinOp,
                                                                       gast.UnaryOp)))


def _whole(item) -> bool:
    return isinstance(item, gast.Slice) and item.lower is None and item.upper is None and \
        item.step is None


def _writes(stmt) -> set:
    """Names a statement assigns or may change in place."""
    names = set()
    for node in nodes(stmt):
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Del)):
            names.add(node.id)
        elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
            names.add(node.target.id)
        elif isinstance(node, gast.keyword) and node.arg == "out":
            names |= {n.id for n in nodes(node.value) if isinstance(n, gast.Name)}
        elif isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store):
            names |= {n.id for n in nodes(node.value) if isinstance(n, gast.Name)}
    if not isinstance(stmt, (gast.Assign, gast.AugAssign, gast.Delete, gast.Expr)):
        names.add("*")          # a loop or branch: anything may change
    return names


def _assigns(stmt, name) -> bool:
    return isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
        isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == name
