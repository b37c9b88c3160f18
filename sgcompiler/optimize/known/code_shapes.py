"""Shapes and dtypes of the generated code's values, followed statement by statement
(for code specialised for its arguments' shapes). The rewrites that need to know whether
an expression is a float array of a given shape ask a CodeShapes: algebraic/ (algebra.py,
factoring.py, signs.py), loops/ (hoisting.py, stacking.py) and memory/ (broadcasts.py, and
buffers.py, which extends it to know which arrays the code owns).

It reads what the shapes pass found for the primal's variables (analysis/sizes.py) and
follows what the generated code adds: adjoints, runtime helpers (`unbroadcast` has its
second argument's shape), `np.full` of a shape, in-place ufuncs.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import gast
import numpy as np

from ...analysis.shape_algebra import WEAK, broadcast, constant, matmul_shape, reduce_shape, \
    same_dtype
from ...ir.blocks import nodes

_BINARY = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow)
# ufuncs of floats to floats of the same dtype, whose result has the broadcast shape
_FLOAT_UFUNCS = frozenset(
    "add subtract multiply divide true_divide power negative positive absolute fabs sqrt "
    "cbrt square reciprocal exp exp2 expm1 log log2 log10 log1p sin cos tan arcsin arccos "
    "arctan arctan2 sinh cosh tanh arcsinh arccosh arctanh hypot maximum minimum fmax fmin "
    "logaddexp logaddexp2 deg2rad rad2deg degrees radians sign copysign".split())
_REDUCTIONS = frozenset("sum mean max min prod".split())
# gradient helpers whose result is shaped like one argument (its position): they return
# unbroadcast(..., that argument)
_LIKE_ARGUMENT = {"logsumexp_grad_a": 2, "solve_grad_a": 2}
_SHAPE = ("shape",)
_BOOL = np.dtype(bool)      # a mask's (ties.py): no float dtype, so no arithmetic's
_COMPARISONS = (gast.Eq, gast.Gt, gast.Lt)


@dataclass(frozen=True)
class CodeShapesMaker:
    """What a fresh CodeShapes of one function starts from (see code_shapes)."""

    body: list
    arrays: dict
    np_name: str
    helpers: dict
    once: dict

    def __call__(self) -> CodeShapes:
        return CodeShapes(self.body, self.arrays, self.np_name, self.helpers, self.once)


def code_shapes(tree: gast.FunctionDef, arrays: dict, np_name: str, helpers: dict,
                facts=None) -> CodeShapesMaker:
    """A maker of shape oracles for the generated code of `tree`: each call gives a fresh
    one that follows shapes and dtypes through the statements of `tree.body` as they are
    then.

    Args:
        arrays: parameter -> (shape, dtype) the code is specialised for.
        np_name: the name of the numpy module in the code.
        helpers: names of runtime helpers in the code -> the helpers.
        facts: name -> (shape, dtype) the shapes pass found for variables of the
            primal (used for a variable assigned once, where the expression that
            computes it is not followed here: `d = x.shape[1] * math.pi`).
    """
    writes = Counter(n.id for n in nodes(tree) if isinstance(n, gast.Name)
                     and isinstance(n.ctx, gast.Store))
    once = {n: v for n, v in (facts or {}).items() if writes[n] == 1}
    # names never assigned here with known shapes: the Python-number arguments
    arrays = {**{n: v for n, v in (facts or {}).items() if writes[n] == 0}, **arrays}
    return CodeShapesMaker(tree.body, arrays, np_name, helpers, once)


class CodeShapes:
    def __init__(self, body, arrays, np_name, helpers, facts):
        self.body, self.np, self.helpers, self.facts = body, np_name, helpers, facts
        self.env = dict(arrays)     # name -> (shape, dtype) of its current value
        self._memo = {}             # id(expression) -> (expression, shape_of it)

    def _unpacked(self, stmt):
        """`a, b = _saved` (a backward function's saved values): names assigned only here
        have the shapes the primal's facts give them (not owned: others hold them too)."""
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], gast.Tuple):
            for element in stmt.targets[0].elts:
                if isinstance(element, gast.Name) and element.id in self.facts:
                    self.env[element.id] = self.facts[element.id]

    def track(self, stmt):
        """Follow the shapes of what `stmt` assigns (and nothing else)."""
        self.forget()
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], gast.Name):
            target = stmt.targets[0].id
            result = self.shape_of(stmt.value) or self.facts.get(target)
            if isinstance(stmt.value, gast.Attribute) and stmt.value.attr == "shape":
                result = _SHAPE
            if isinstance(stmt.value, gast.Compare):    # `_ties = x == 0` (ties.py)
                result = self._mask_shape(stmt.value)
                result = result and (result[0], _BOOL)
            if result is None:
                self.env.pop(target, None)
            else:
                self.env[target] = result
        elif isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
            before, value = self.env.get(stmt.target.id), self.shape_of(stmt.value)
            total = broadcast([before, value]) if before is not None and value is not None \
                else None
            if total is None or total[0] != before[0]:
                self.env.pop(stmt.target.id, None)
        elif not isinstance(stmt, gast.Delete):
            for node in nodes(stmt):
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                    self.env.pop(node.id, None)
            self._unpacked(stmt)

    def _numpy_function(self, node):
        """`name` for a call np.name(...), else None."""
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
                isinstance(node.func.value, gast.Name) and node.func.value.id == self.np:
            return node.func.attr
        return None

    def shape_of(self, node):
        """(shape, dtype) of a generated expression, or None (remembered while the
        statement is worked on: `forget` when names change)."""
        memo = self._memo.get(id(node))
        if memo is not None and memo[0] is node:
            return memo[1]
        found = self._shape_of(node)
        self._memo[id(node)] = (node, found)
        return found

    def forget(self):
        self._memo = {}

    def _shape_of(self, node):
        if isinstance(node, gast.Name):
            found = self.env.get(node.id)
            return None if found is _SHAPE else found
        if isinstance(node, gast.Constant):
            number = isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
            return ((), WEAK) if number else None
        if isinstance(node, gast.UnaryOp) and type(node.op) in (gast.USub, gast.UAdd):
            return self.shape_of(node.operand)
        if isinstance(node, gast.BinOp) and isinstance(node.op, gast.Mult) and \
                any(self._mask_shape(side) for side in (node.left, node.right)):
            return self._masked_shape(node)
        if isinstance(node, gast.BinOp) and type(node.op) in _BINARY:
            return broadcast([self.shape_of(node.left), self.shape_of(node.right)])
        if isinstance(node, gast.BinOp) and isinstance(node.op, gast.MatMult):
            left, right = self.shape_of(node.left), self.shape_of(node.right)
            return matmul_shape(left, right) or _stacked_matmul(left, right)
        if isinstance(node, gast.Attribute) and node.attr == "T":
            found = self.shape_of(node.value)
            return None if found is None or found is _SHAPE else (found[0][::-1], found[1])
        if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) and \
                self.env.get(node.value.id) is _SHAPE and isinstance(node.slice, gast.Constant):
            return (), WEAK     # x.shape[k]: a Python int
        if isinstance(node, gast.Subscript) and isinstance(node.slice, gast.Tuple):
            return self._new_axes_shape(node)
        if isinstance(node, gast.Call):
            return self._call_shape(node)
        return None

    def _new_axes_shape(self, node):
        """`g[:, :, None]`: g's axes, each `:` one, each None a new one of length 1 (as
        memory/broadcasts.py writes it)."""
        found = self.shape_of(node.value)
        if found is None:
            return None
        shape, axes = [], iter(found[0])
        for item in node.slice.elts:
            if isinstance(item, gast.Constant) and item.value is None:
                shape.append(1)
            elif isinstance(item, gast.Slice) and item.lower is None and \
                    item.upper is None and item.step is None:
                shape.append(next(axes, None))
            else:
                return None
        if None in shape or next(axes, None) is not None:
            return None
        return tuple(shape), found[1]

    def _call_shape(self, node):
        helper = self.helpers.get(getattr(node.func, "id", None))
        if getattr(helper, "__name__", None) in ("unreduce", "unbroadcast") and \
                len(node.args) >= 2:
            g, x = self.shape_of(node.args[0]), self.shape_of(node.args[1])
            if x is None or g is None:
                return None
            # x's shape; g's dtype, or x's precision for a Python number (as_float)
            dtype = g[1] if g[1] is not WEAK else x[1]
            return x[0], (dtype if isinstance(dtype, np.dtype) and dtype.kind == "f"
                          else None)
        if getattr(helper, "__name__", None) == "balanced_eq" and len(node.args) == 3 \
                and not node.keywords:
            return self._balanced_shape(node.args)
        like = _LIKE_ARGUMENT.get(getattr(helper, "__name__", None))
        if like is not None and len(node.args) > like:
            return self._like_argument(node.args[0], node.args[like])
        name = self._numpy_function(node)
        if name in _FLOAT_UFUNCS and len(node.args) == getattr(np, name).nin and \
                all(k.arg == "out" for k in node.keywords):
            return broadcast([self.shape_of(a) for a in node.args])
        if name in _REDUCTIONS and len(node.args) == 1:
            keywords = {k.arg: k.value for k in node.keywords}
            if set(keywords) - {"axis", "keepdims"}:
                return None
            return reduce_shape(self.shape_of(node.args[0]),
                                constant(keywords.get("axis"), None),
                                constant(keywords.get("keepdims"), False))
        if name == "full" and len(node.args) == 2 and isinstance(node.args[0], gast.Tuple) \
                and all(isinstance(n, gast.Constant) and type(n.value) is int
                        for n in node.args[0].elts):
            return self._full_shape(node)
        if name == "outer" and len(node.args) == 2 and not node.keywords:
            found = [self.shape_of(a) for a in node.args]
            if any(f is None or len(f[0]) != 1 for f in found):
                return None
            return found[0][0] + found[1][0], broadcast([((), f[1]) for f in found])[1]
        return None

    def _masked_shape(self, node):
        """`g * (x == z)`, `g * ((z > 0) | _ties)` (memory/ties.py): g's dtype (a bool
        takes the other operand's type) and the broadcast shape, for g a float array and
        the other side a mask (`_mask_shape`)."""
        masks = [self._mask_shape(side) for side in (node.left, node.right)]
        if all(masks) or not any(masks):
            return None
        g = node.right if masks[0] else node.left
        mask = masks[0] or masks[1]
        return broadcast([self.shape_of(g), (mask[0], WEAK)])  # (no dtype of its own)

    def _mask_shape(self, node):
        """(shape, bool) of a mask made of arrays of known shapes: one comparison of two
        operands, a name assigned one, or `|` of masks; else None."""
        if isinstance(node, gast.Compare):
            if len(node.ops) != 1 or not isinstance(node.ops[0], _COMPARISONS):
                return None
            found = broadcast([self.shape_of(node.left), self.shape_of(node.comparators[0])])
            return found and (found[0], _BOOL)
        if isinstance(node, gast.BinOp) and isinstance(node.op, gast.BitOr):
            left, right = self._mask_shape(node.left), self._mask_shape(node.right)
            if left is None or right is None:
                return None
            found = broadcast([(left[0], WEAK), (right[0], WEAK)])
            return found and (found[0], _BOOL)
        if isinstance(node, gast.Name):
            found = self.env.get(node.id)
            return found if found is not None and found is not _SHAPE and \
                found[1] is _BOOL else None
        return None

    def _balanced_shape(self, args):
        """balanced_eq(x, z, y), max's and min's mask: the three broadcast, in x's float
        dtype (float_dtype(x, y)) when y is a number or of that dtype."""
        x, z, y = (self.shape_of(a) for a in args)
        total = broadcast([x, z, y]) if None not in (x, z, y) else None
        if total is None or not (isinstance(x[1], np.dtype) and x[1].kind == "f") or \
                not (y[1] is WEAK or y[1] == x[1]):
            return None
        return total[0], x[1]

    def _like_argument(self, g, x):
        """x's shape and float dtype, when the adjoint g has that dtype too (or is a
        number)."""
        g, x = self.shape_of(g), self.shape_of(x)
        if g is None or x is None or not (isinstance(x[1], np.dtype) and x[1].kind == "f"):
            return None
        return (x[0], x[1]) if g[1] is WEAK or g[1] == x[1] else None

    def _full_shape(self, node):
        """np.full((500,), 1.0 / 500[, dtype=np.float32]), as fill_numbers writes it."""
        keywords = {k.arg: k.value for k in node.keywords}
        fill = self.shape_of(node.args[1])
        dtype = keywords.get("dtype")
        if set(keywords) - {"dtype"} or fill is None or fill[0] != ():
            return None
        if dtype is None:
            dtype = np.dtype(np.float64) if fill[1] is WEAK else fill[1]
        elif isinstance(dtype, gast.Attribute) and isinstance(dtype.value, gast.Name) \
                and dtype.value.id == self.np:
            dtype = np.dtype(dtype.attr)
        else:
            return None
        return tuple(n.value for n in node.args[0].elts), dtype


def _stacked_matmul(left, right):
    """(shape, dtype) of `a @ b` where an operand has more than two axes (a stack of
    matrices, as NumPy's matmul broadcasts them), else None."""
    if not (isinstance(left, tuple) and isinstance(right, tuple)):
        return None
    (a, da), (b, db) = left, right
    if not a or not b or (len(a) <= 2 and len(b) <= 2) or \
            not all(isinstance(n, int) for n in a + b):
        return None
    if len(a) == 1:
        shape = b[:-2] + b[-1:] if a[0] == b[-2] else None
    elif len(b) == 1:
        shape = a[:-1] if a[-1] == b[0] else None
    else:
        try:
            stack = np.broadcast_shapes(a[:-2], b[:-2]) if a[-1] == b[-2] else None
        except ValueError:
            stack = None
        shape = None if stack is None else stack + (a[-2], b[-1])
    if shape is None:
        return None
    dtype = da if same_dtype(da, db) and isinstance(da, np.dtype) and da.kind == "f" else None
    return tuple(shape), dtype
