"""Write into an array that dies, rather than allocate a new one (when shapes are known).

    z = logits - _max                  z = logits - _max
    _exp = np.exp(z)           ->      _exp = np.exp(z, out=z)
    ...                                ...
    dz += d_exp * _exp                 dz += np.multiply(d_exp, _exp, out=_exp)

This is what a hand-written gradient does (`np.exp(e, out=e)`, `e *= s`): a large
temporary is not allocated (and faulted in by the operating system) when an operand of
the same shape and dtype is never read again. It needs three facts, each proven here on
the generated code itself, top-level statements only:

- the shapes and dtypes: followed from the arguments' (the gradient is specialised for
  them) through arithmetic, float ufuncs, reductions and matrix products;
- ownership: the operand holds an array this code allocated (arithmetic, a ufunc, a
  reduction with an axis, a matrix product) that no other name and no container refers to
  (an argument never qualifies, nor a view, nor a value a helper or a loop was given);
- liveness: no later statement reads the operand before rebinding it.
"""
from __future__ import annotations

import math
from bisect import bisect_left

import gast
import numpy as np

from ...ir.blocks import nodes
from ...ir.builders import load, store
from ...analysis.shape_algebra import same
from ...runtime import SHAPE_ARGUMENT
from ..known.code_shapes import _FLOAT_UFUNCS, _REDUCTIONS, CodeShapes, CodeShapesMaker

_BINARY = {gast.Add: "add", gast.Sub: "subtract", gast.Mult: "multiply", gast.Div: "divide",
           gast.Pow: "power"}
_UNARY = {gast.USub: "negative"}
_COMMUTES = (gast.Add, gast.Mult)


def reuse_buffers(shapes: CodeShapesMaker) -> None:
    """Rewrite top-level statements in place to write into dying operands (`shapes`: what
    code_shapes made for the function)."""
    _Buffers(shapes.body, shapes.arrays, shapes.np_name, shapes.helpers, shapes.once).run()


class _Buffers(CodeShapes):
    def __init__(self, body, arrays, np_name, helpers, facts):
        super().__init__(body, arrays, np_name, helpers, facts)
        self.owned = set()          # names whose array nobody else refers to
        self._seen = {}             # id(statement) -> _walked(statement)
        self._stale = []            # expressions whose shape is to be found again (forget)
        self.loops = True           # the bodies of loops at the top level too

    def run(self):
        self._index_body()
        i = 0
        while i < len(self.body):
            stmt = self.body[i]
            i += 1
            CodeShapes.forget(self)
            self._stale = []
            if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                    isinstance(stmt.targets[0], gast.Name):
                first = self._split(stmt, stmt.targets[0].id)
                if first is not None:       # the operation on the temporary comes next
                    self.body.insert(i - 1, first)
                    i -= 1
                    continue
                self._assign(i - 1, stmt, stmt.targets[0].id)
            elif isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
                self._augmented(i - 1, stmt, stmt.target.id)
            elif not isinstance(stmt, gast.Delete):
                if isinstance(stmt, gast.For) and self.loops:
                    _TripBuffers(self, stmt, self.body[i:]).run()
                # anything else (a loop, a branch, an append, a return): what it reads may
                # be kept somewhere, what it writes is unknown from here on
                for node in nodes(stmt):
                    if isinstance(node, gast.Name):
                        self.owned.discard(node.id)
                        if isinstance(node.ctx, gast.Store):
                            self.env.pop(node.id, None)
                self._unpacked(stmt)

    def forget(self):
        """(what track forgets before it follows an assignment) The shapes found for the
        expressions _reuse rewrote something under, or made: the others' stay known, since
        no name changed since run began the statement (and forgot them all)."""
        for node in self._stale:
            self._memo.pop(id(node), None)
        self._stale = []

    def _split(self, stmt, target):
        """`t = 1.0 / (2.0 * c)` as `t = 2.0 * c` then `t = np.divide(1.0, t, out=t)`,
        and `t = (d * x) * 2` as `t = d * x` then `t *= 2`: an elementwise operation on a
        new temporary of the result's shape and dtype writes into it. Returns the first
        statement (and makes `stmt` the second), or None."""
        value = stmt.value
        if isinstance(value, gast.BinOp) and type(value.op) in _BINARY:
            operands = [value.left, value.right]
        elif isinstance(value, gast.UnaryOp) and type(value.op) in _UNARY:
            operands = [value.operand]
        elif self._numpy_function(value) in _FLOAT_UFUNCS and not value.keywords and \
                len(value.args) == getattr(np, value.func.attr).nin:
            operands = value.args
        else:
            return None
        result = self.shape_of(value)
        if result is None or result[0] == () or not isinstance(result[1], np.dtype) or \
                math.prod(result[0]) * result[1].itemsize < _LARGE or \
                any(isinstance(n, gast.Name) and n.id == target for n in nodes(value)):
            return None     # (a small array: `t = c * x * 2` reads better, costs little)
        for k, operand in enumerate(operands):
            temporary = isinstance(operand, (gast.BinOp, gast.UnaryOp)) or \
                self._numpy_function(operand) in _FLOAT_UFUNCS
            if not temporary or not same(self.shape_of(operand), result):
                continue
            first = gast.Assign(targets=[store(target)],
                                value=operand, type_comment=None)
            if isinstance(value, gast.BinOp) and (k == 0 or isinstance(value.op, _COMMUTES)):
                # (`t = c + t` as `t += c`: the same sum, of the same shape and dtype)
                second = gast.AugAssign(target=store(target), op=value.op,
                                        value=value.right if k == 0 else value.left)
            else:
                ufunc = _BINARY[type(value.op)] if isinstance(value, gast.BinOp) \
                    else _UNARY[type(value.op)] if isinstance(value, gast.UnaryOp) \
                    else value.func.attr
                args = list(operands)
                args[k] = load(target)
                second = gast.Call(func=gast.Attribute(value=load(self.np), attr=ufunc,
                                                       ctx=gast.Load()),
                                   args=args, keywords=[gast.keyword(arg="out",
                                                                     value=load(target))])
                second = gast.Assign(targets=stmt.targets, value=second, type_comment=None)
            for node in (first, second):
                gast.copy_location(node, stmt)
            self.body[self.body.index(stmt)] = second
            return first
        return None

    def _assign(self, i, stmt, target):
        reused = self._reuse(i, stmt)
        if reused is not None:
            stmt.value = reused
        # the value is the array an operand gave up for it
        reused = reused is not None and any(k.arg == "out" for k in
                                            getattr(stmt.value, "keywords", ()))
        if isinstance(stmt.value, gast.Name):         # a copy: one array, two names
            source = stmt.value.id
            mine = source in self.owned and not self._read_after(i, source)
            self.owned.discard(source)
        else:
            self._escape(stmt.value)
            result = self.shape_of(stmt.value) or self.facts.get(target)
            mine = reused or (self._fresh(stmt.value) and result is not None
                              and result[0] != ())
        (self.owned.add if mine else self.owned.discard)(target)
        self.track(stmt)

    def _augmented(self, i, stmt, target):
        reused = self._reuse(i, stmt, target)
        if reused is not None:
            stmt.value = reused
        self._escape(stmt.value)
        self.track(stmt)
        if target not in self.env:          # no longer of one known shape
            self.owned.discard(target)

    def _reuse(self, i, stmt, target=None):
        """The value of `stmt` (an assignment to a name, as it was walked) with its
        operations written into operands that die here (each operand read once in the
        statement, never after it), or None if there are none; donors lose their
        ownership (their arrays now hold results)."""
        value, reads = stmt.value, self._walked(stmt)[3]     # (the names under value)
        changed = []
        value = self._visit_reuse(value, (i, reads, target, value, changed))
        return value if changed else None

    def _visit_reuse(self, node, how):
        """`node` with its operations written into dying operands, innermost first (a
        method, not a closure that calls itself: that is a reference cycle per call)."""
        i, reads, target, root, changed = how
        before = len(changed)
        if isinstance(node, gast.BinOp):
            node.left = self._visit_reuse(node.left, how)
            node.right = self._visit_reuse(node.right, how)
        elif isinstance(node, gast.UnaryOp):
            node.operand = self._visit_reuse(node.operand, how)
        elif isinstance(node, gast.Call):
            node.args = [self._visit_reuse(a, how) for a in node.args]
        else:
            return node
        if len(changed) > before:
            self._stale.append(node)
        new = self._write_into_donor(i, node, reads, target, node is root)
        if new is not None:
            changed.append(new)
            self._stale.append(new)
            return new
        return node

    def _write_into_donor(self, i, node, reads, target, root=False):
        if isinstance(node, gast.BinOp) and type(node.op) in _BINARY:
            ufunc, operands = _BINARY[type(node.op)], [node.left, node.right]
            if isinstance(node.op, gast.Pow) and isinstance(node.right, gast.Constant) and \
                    node.right.value == 2:
                ufunc, operands = "square", [node.left]     # what x ** 2 computes
        elif isinstance(node, gast.UnaryOp) and type(node.op) in _UNARY:
            ufunc, operands = _UNARY[type(node.op)], [node.operand]
        elif self._numpy_function(node) in _FLOAT_UFUNCS and not node.keywords and \
                len(node.args) == getattr(np, node.func.attr).nin:
            ufunc, operands = node.func.attr, list(node.args)
        else:
            return None
        result = self.shape_of(node)
        if result is None or result[0] == () or not isinstance(result[1], np.dtype):
            return None
        if math.prod(result[0]) * result[1].itemsize < _LARGE and (not root or not all(
                isinstance(o, (gast.Name, gast.Constant)) for o in operands)):
            return None     # in a nested expression, only where it saves a large array
        for operand in operands:
            if isinstance(operand, gast.Name) and operand.id in self.owned and \
                    reads.get(operand.id) == 1 and operand.id != target and \
                    same(self.env.get(operand.id), result) and \
                    not self._read_after(i, operand.id):
                self.owned.discard(operand.id)
                func = gast.Attribute(value=load(self.np), attr=ufunc, ctx=gast.Load())
                return gast.Call(func=func, args=operands,
                                 keywords=[gast.keyword(arg="out", value=load(operand.id))])
        if root and math.prod(result[0]) * result[1].itemsize >= _LARGE:
            # no operand dies here: a large array of this shape that died earlier will do
            # (a new one would be faulted in page by page; small ones are cheap to make)
            for name in sorted(self.owned):
                if name not in reads and name != target and \
                        same(self.env.get(name), result) and not self._read_after(i, name):
                    self.owned.discard(name)
                    func = gast.Attribute(value=load(self.np), attr=ufunc, ctx=gast.Load())
                    return gast.Call(func=func, args=operands,
                                     keywords=[gast.keyword(arg="out", value=load(name))])
        return None

    def _read_after(self, i, name) -> bool:
        """Whether a statement after body[i] may read `name` before a top-level
        assignment rebinds it."""
        for j in range(i + 1, len(self.body)):
            stmt = self.body[j]
            k = self._order.get(id(stmt))
            if k is not None and self._originals[k] is stmt:
                # from here on the statements are as they were (none is rewritten before
                # run reaches it): the index answers, without a scan of the rest
                return self._read_in_index(k, name)
            reads, binds = self._names(stmt)
            if name in reads:
                return True
            if name in binds:
                return False
        return False

    def _index_body(self):
        """Where each name is read and rebound in the body as it is before run: asked
        for every operand, a scan of the rest of the body made a long function cost the
        square of its length."""
        self._originals = list(self.body)
        self._order = {id(stmt): k for k, stmt in enumerate(self._originals)}
        self._reads_at, self._binds_at = {}, {}
        for k, stmt in enumerate(self._originals):
            reads, binds = self._names(stmt)
            for name in reads:
                self._reads_at.setdefault(name, []).append(k)
            for name in binds:
                self._binds_at.setdefault(name, []).append(k)

    def _read_in_index(self, k, name) -> bool:
        """Whether original statement k or one after it reads `name` before one rebinds it
        (a statement that does both reads first)."""
        reads, binds = self._reads_at.get(name, ()), self._binds_at.get(name, ())
        r, b = bisect_left(reads, k), bisect_left(binds, k)
        return r < len(reads) and (b == len(binds) or reads[r] <= binds[b])

    def _names(self, stmt):
        """(names stmt reads, names a top-level assignment of it rebinds), cached."""
        return self._walked(stmt)[1:3]

    def _walked(self, stmt):
        """(stmt, names it reads, names a top-level assignment of it rebinds, how many
        times each name is under the value of an assignment to a name: None for other
        statements), found in one walk of its nodes and cached."""
        found = self._seen.get(id(stmt))
        if found is None or found[0] is not stmt:
            reads, binds, counts = set(), set(), None
            if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                    isinstance(stmt.targets[0], gast.Name):
                target, counts = stmt.targets[0], {}
            elif isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
                target, counts = stmt.target, {}
            if not isinstance(stmt, gast.Delete):
                for node in nodes(stmt):
                    kind = type(node)
                    if kind is gast.Name:
                        if type(node.ctx) is not gast.Store:
                            reads.add(node.id)
                        if counts is not None and node is not target:
                            counts[node.id] = counts.get(node.id, 0) + 1
                    elif kind is gast.AugAssign and isinstance(node.target, gast.Name):
                        reads.add(node.target.id)
                if isinstance(stmt, gast.Assign):
                    binds = {t.id for t in stmt.targets if isinstance(t, gast.Name)}
            found = self._seen[id(stmt)] = (stmt, reads, binds, counts)
        return found

    def _escape(self, value):
        """Names `value` hands on (to a helper, a container, a view) lose their
        ownership: only operands of arithmetic, ufuncs, reductions and products keep it,
        and arguments a helper reads only the shape of."""
        self._escape_walk(value, False)

    def _escape_walk(self, node, kept):
        # (a method, not a closure that calls itself: that is a reference cycle per call)
        kind = type(node)
        if kind is gast.Name:
            if not kept:
                self.owned.discard(node.id)
        elif kind is gast.Constant:
            pass
        elif kind is gast.BinOp:            # (its operator holds no name)
            self._escape_walk(node.left, True)
            self._escape_walk(node.right, True)
        elif isinstance(node, (gast.BinOp, gast.UnaryOp, gast.Compare)):
            # (a comparison's operands are read, not kept: `_ties = x == 0`, ties.py)
            for child in gast.iter_child_nodes(node):
                self._escape_walk(child, True)
        elif isinstance(node, gast.Attribute) and node.attr == "shape":
            pass
        elif isinstance(node, gast.Attribute) and node.attr == "T" and kept:
            self._escape_walk(node.value, True)  # h.T @ g: the view is read, not kept
        elif isinstance(node, gast.Call):
            helper = self.helpers.get(getattr(node.func, "id", None))
            shape_only = SHAPE_ARGUMENT.get(getattr(helper, "__name__", None))
            numeric = self._numpy_function(node) in _NEW_ARRAYS
            self._escape_walk(node.func, False)  # t0.ravel(), t0.reshape(...): views of t0
            for k, arg in enumerate(node.args):
                self._escape_walk(arg, numeric or k == shape_only)
            for keyword in node.keywords:
                self._escape_walk(keyword.value, numeric and keyword.arg != "out")
        else:
            for child in gast.iter_child_nodes(node):
                self._escape_walk(child, False)

    def _fresh(self, value) -> bool:
        """Whether `value` is a new array: arithmetic, a ufunc, a reduction or a product
        (a name, a subscript or a helper's result may be shared)."""
        return isinstance(value, (gast.BinOp, gast.UnaryOp)) or \
            self._numpy_function(value) in _NEW_ARRAYS or \
            self._numpy_function(value) == "dot" and not value.keywords   # (as `@`)

class _TripBuffers(_Buffers):
    """The same in the body of a loop at the top level, one trip at a time:

        for t in range(n):                      for t in range(n):
            _dot = np.dot(_xs_t, U)                 _dot = np.dot(_xs_t, U)
            _add = _dot + _dot2         ->          _add = np.add(_dot, _dot2, out=_dot)
            _tape.append(h)                         _tape.append(h)
            h = np.tanh(_add)                       h = np.tanh(_add, out=_add)

    Nothing is owned when a trip begins (what an earlier trip made may be on the tape), and
    an operand dies only where no later statement of the trip, no statement of the next
    trip before it is assigned again (a value carried from trip to trip), and no statement
    after the loop reads it. Loops that may leave a trip early (break, continue, return)
    are left alone, and loops in the body are not looked into."""

    def __init__(self, outer, loop, after):
        body = loop.body
        stored = {n.id for n in nodes(loop) if isinstance(n, gast.Name) and
                  isinstance(n.ctx, gast.Store)}
        # (names the body assigns have the shapes it gives them, not the ones before it)
        known = {k: v for k, v in outer.env.items() if k not in stored}
        super().__init__(body, known, outer.np, outer.helpers, outer.facts)
        self.loops = False
        early = any(isinstance(n, (gast.Break, gast.Continue, gast.Return, gast.Yield,
                                   gast.YieldFrom)) for n in nodes(loop))
        self.body = body if not early and not loop.orelse else []
        self.live = {n.id for stmt in after for n in nodes(stmt) if isinstance(n, gast.Name)}
        bound = set()
        for stmt in self.body:      # read before the trip assigns them: from the last trip
            reads, binds = self._names(stmt)
            self.live |= reads - bound
            bound |= binds

    def _read_after(self, i, name) -> bool:
        return name in self.live or super()._read_after(i, name)


_NEW_ARRAYS = _FLOAT_UFUNCS | _REDUCTIONS | {"outer", "full"}
_LARGE = 64 * 1024      # bytes: arrays worth reusing even when not an operand     # what a name holds that was assigned x.shape
