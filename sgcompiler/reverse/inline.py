"""Inline a derivative rule's expression into generated code, and tidy the result.

    rule  mul(g, ans, x, y): unbroadcast(g * y, x)   for  `_mul = s * w`, g = d_mul
    ->    unbroadcast(d_mul * w, s)
    ->    d_mul * w                        when s and _mul provably have the same shape

The rule's own global names (np, unbroadcast, ...) are given names in the generated
function's namespace by a `Linker`, which keeps the rule's spelling unless the user's
function already uses that name for something else.
"""
from __future__ import annotations

import copy

import gast
import numpy as np

from .. import runtime
from ..analysis.shapes import SCALAR, Shapes, class_shape, concrete_class
from ..analysis.shape_algebra import NOT_CONSTANT, axes_of, constant
from ..frontend.depends import unrecorded
from ..ir.builders import const, factors_of, load, number, product_of
from ..ir.blocks import walk
from ..ir.visitors import Transformer


class Linker:
    """Names for the objects that inlined rules refer to, as the generated code spells them."""

    def __init__(self, fn, namer):
        self.fn = fn
        self.namer = namer
        self.names: dict[str, object] = {}     # name in generated code -> object
        self._by_id: dict[int, str] = {}
        self.pieces: list = []                 # user functions' pieces this code calls

    def name_for(self, preferred: str, obj) -> str:
        if id(obj) in self._by_id:
            return self._by_id[id(obj)]
        with unrecorded():      # not a dependency: the code takes obj from its closure
            found, existing = self.fn.lookup(preferred)
        if (found and existing is obj) or (not found and preferred not in self.names):
            name = preferred
            self.namer.reserve([name])
        else:
            name = self.namer.fresh("_" + preferred.lstrip("_"))
        self._by_id[id(obj)] = name
        self.names[name] = obj
        return name


def inline(rule, param, args, g, ans: str, linker: Linker):
    """The rule's gradient for `param`, with its parameters replaced by `args` (atoms)."""
    values = {"g": g, "ans": load(ans)}
    for p in rule.params:
        if p in args:
            values[p] = args[p]
        else:
            values[p] = _literal(rule.defaults[p], rule, p)
    return substituted(rule.output_for(param), values, rule.namespace, linker)


def _literal(value, rule, param):
    if value is None or isinstance(value, (bool, int, float, str)):
        return const(value)
    if isinstance(value, tuple):
        return gast.Tuple(elts=[_literal(v, rule, param) for v in value], ctx=gast.Load())
    raise AssertionError(f"rule {rule.name}: default of {param} is not a literal")


def substituted(template, values, namespace, linker):
    """A copy of `template` with each name replaced: a parameter by a copy of its value, a
    global of the rule by its name in the generated code.

    One walk that copies and substitutes at once (rather than copy.deepcopy, then a
    NodeTransformer): inlining is most of what compiling a gradient costs. Names are met
    in field order, depth first, as a NodeTransformer meets them, so the Linker hands out
    the same names in the same order.
    """
    def name(node):
        if node.id in values:
            return _clone(values[node.id], None)
        if node.id in namespace:
            return load(linker.name_for(node.id, namespace[node.id]))
        raise AssertionError(f"rule refers to unknown name {node.id}")
    return _clone(template, name)


_ATOMS = (str, int, float, bool, bytes, type(None), type(Ellipsis), complex)
_ATOM_TYPES = frozenset(_ATOMS)


def clone(node):
    """A deep copy of a gast tree (or a list of them), about 4 times as fast as
    copy.deepcopy (nodes the tree shares are copied once per place)."""
    return _clone(node, None)


def with_names(node, name):
    """A deep copy of a gast tree with every Name node replaced by name(node)."""
    return _clone(node, name)


def _clone(node, name):
    """Deep copy of a gast tree; with `name`, every Name node is replaced by name(node)."""
    kind = type(node)
    if kind is list:
        return [_clone(item, name) for item in node]
    if kind in _ATOM_TYPES:
        return node
    if not isinstance(node, gast.AST):
        return node if isinstance(node, _ATOMS) else copy.deepcopy(node)
    if name is not None and kind is gast.Name:
        return name(node)
    new = kind.__new__(kind)
    fields, old, made = node._fields, node.__dict__, new.__dict__
    # (the fields first, then the positions, as the node had them: a type lookup turns
    # the strings and numbers away before a call)
    atoms = _ATOM_TYPES
    for field in fields:
        if field in old:
            value = old[field]
            made[field] = value if type(value) in atoms else _clone(value, name)
    for key, value in old.items():
        if key not in fields:
            made[key] = value if isinstance(value, _ATOMS) else copy.deepcopy(value)
    return new


# --- simplification ----------------------------------------------------------------------------


def simplify(expr, ans: str, shapes: Shapes, linker: Linker, adjoint_of=None,
             exact=False):
    """Fold constants (`1.0 * g`, `x ** (2 - 1)`) and drop provably idle `unbroadcast`s.

    `adjoint_of` maps adjoint names to their variables (an adjoint has its variable's
    shape). With `exact`, an `unbroadcast` is dropped only when the shape of its argument
    is known, never assumed to be the result's (for a `g` that is a broadcast scalar)."""
    return _Simplify(ans, shapes, linker, adjoint_of or {}, exact).visit(expr)


_ELEMENTWISE_OPS = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow)


class _Simplify(Transformer):
    def __init__(self, ans, shapes, linker, adjoint_of, exact):
        self.ans, self.shapes, self.linker = ans, shapes, linker
        self.adjoint_of, self.exact = adjoint_of, exact

    def visit_BinOp(self, node):
        self.generic_visit(node)
        left, right = number(node.left), number(node.right)
        op = type(node.op)
        if left is not None and right is not None and op in _FOLD:
            try:
                return const(_FOLD[op](left, right))
            except (ArithmeticError, ValueError):
                return node
        # (x * 1 stays when x may be a bool mask: the product is what makes it a number)
        if op is gast.Mult and left == 1 and not _may_be_bool(node.right):
            return node.right
        if op in (gast.Mult, gast.Div, gast.Pow) and right == 1 and not _may_be_bool(node.left):
            return node.left
        if op in (gast.Add, gast.Sub) and right == 0 and right is not None:
            return node.left
        if op is gast.Add and left == 0 and left is not None:
            return node.right
        if op is gast.Mult and isinstance(node.left, gast.UnaryOp) \
                and isinstance(node.left.op, gast.USub) and number(node.left.operand) == 1:
            return gast.UnaryOp(op=gast.USub(), operand=node.right)
        return node

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        value = number(node.operand)
        if isinstance(node.op, gast.USub) and value is not None:
            return const(-value)
        if isinstance(node.op, gast.USub) and isinstance(node.operand, gast.UnaryOp) \
                and isinstance(node.operand.op, gast.USub):
            return node.operand.operand
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        helper = self.linker.names.get(func.id) if isinstance(func, gast.Name) else None
        if helper is None or not runtime.is_helper(helper):
            return node
        name = helper.__name__
        if name == "unbroadcast":
            return self._unbroadcast(node)
        if name == "reduced_size":
            return self._reduced_size(node)
        if name in _PRODUCT_GRADS:
            return self._product_grad(node, name)
        if name in _EINSUM_REPLACING:
            return self._einsum_replaced(node, name)
        if name == "logsumexp_grad_a":
            return self._logsumexp_grad(node)
        return node

    def _logsumexp_grad(self, node):
        """logsumexp_grad_a(g, ans, a, axis) (scipy.special.logsumexp's gradient, no b,
        no keepdims) of known shapes, as one would write it: g * np.exp(a - ans), ans and
        g given back the reduced axis (`-np.exp(logp - _lse[:, None])` for g = -1)."""
        if node.keywords or not 3 <= len(node.args) <= 7:
            return node
        g, ans, a = node.args[:3]
        # (axis, then b, keepdims and return_sign as the rule passes them: None, False)
        rest = [c.value if isinstance(c, gast.Constant) else NOT_CONSTANT
                for c in node.args[3:]]
        axis = rest[0] if rest else None
        if any(v is not None for v in rest[1:2]) or any(v is not False for v in rest[2:]):
            return node
        if not (isinstance(ans, gast.Name) and isinstance(a, gast.Name)):
            return node
        shape, reduced = self._known_shape(a), self._known_shape(ans)
        if shape is None or reduced is None or type(axis) not in (int, type(None)) or \
                axis is not None and not -len(shape) <= axis < len(shape):
            return node
        kept = () if axis is None else shape[:axis % len(shape)] + shape[axis % len(shape) + 1:]
        if reduced != kept:
            return node
        seed = self._seed_number(g, ans)
        if seed is None and self._known_shape(g) != kept:
            return node

        def expanded(value):        # the reduced axis given back, as a length-1 axis
            if axis is None or axis % len(shape) == len(shape) - 1 and not kept:
                return value
            parts = [gast.Slice(lower=None, upper=None, step=None)] * (axis % len(shape)) + \
                [const(None)]
            return gast.Subscript(value=value, slice=gast.Tuple(elts=parts, ctx=gast.Load())
                                  if len(parts) > 1 else parts[0], ctx=gast.Load())
        weights = self._np("exp", [gast.BinOp(left=copy.deepcopy(a), op=gast.Sub(),
                                               right=expanded(copy.deepcopy(ans)))])
        if seed == 1:
            return weights
        if seed == -1:
            return gast.UnaryOp(op=gast.USub(), operand=weights)
        factor = const(seed) if seed is not None else expanded(copy.deepcopy(g))
        return gast.BinOp(left=factor, op=gast.Mult(), right=weights)

    def _seed_number(self, g, ans):
        """The number g is, or broadcasts (`unreduce(-1.0, ans)`), else None."""
        value = number(g)
        if value is not None:
            return value
        if isinstance(g, gast.Call) and isinstance(g.func, gast.Name) and \
                len(g.args) >= 2:       # (a number unreduced along any axis: the number)
            helper = self.linker.names.get(g.func.id)
            if getattr(helper, "__name__", "") == "unreduce" and runtime.is_helper(helper) \
                    and isinstance(g.args[1], gast.Name) and g.args[1].id == ans.id:
                return number(g.args[0])
        return None

    def _known_shape(self, node):
        """The concrete shape of an atom, or None."""
        if isinstance(node, gast.Name):
            return class_shape(self.shape_class(node))
        return () if number(node) is not None else None

    def _reduced_size(self, node):
        """reduced_size(x, axis) of an x of known shape: the number itself."""
        if node.keywords or not 1 <= len(node.args) <= 2:
            return node
        shape = self._known_shape(node.args[0])
        axis = node.args[1] if len(node.args) == 2 else const(None)
        axes = _constant_axes(axis, shape)
        if shape is None or axes is None:
            return node
        n = 1
        for a in axes:
            n *= shape[a]
        return const(max(n, 1))     # (as the helper: a mean of nothing has no gradient)

    def _product_grad(self, node, name):
        """matmul_grad_left(g, x, y) and friends, for 1-d and 2-d operands of known shape,
        as the expression one would write: g @ y.T, x.T @ g, np.outer(g, y), ..."""
        if node.keywords or len(node.args) != 3 or \
                not all(isinstance(a, gast.Name) for a in node.args[1:]):
            return node
        g, x, y = node.args
        xs, ys = self._known_shape(x), self._known_shape(y)
        if xs is None or ys is None or not (1 <= len(xs) <= 2 and 1 <= len(ys) <= 2) \
                or xs[-1] != ys[0]:
            return node
        result = xs[:-1] + ys[1:]
        if self._known_shape(g) != result:
            return node         # g may be a broadcast scalar or a plain zero
        left = name.endswith("left")
        if len(xs) == 1 and len(ys) == 1:               # a dot product: g is a scalar
            return gast.BinOp(left=g, op=gast.Mult(), right=y if left else x)
        if left:
            if len(xs) == 2 and len(ys) == 2:
                return _matmul(g, _transposed(y))
            if len(xs) == 2:
                return self._np("outer", [g, y])
            return _matmul(y, g)
        if len(xs) == 2:
            return _matmul(_transposed(x), g)
        return self._np("outer", [x, g])

    def _einsum_replaced(self, node, name):
        """The einsums of np.einsum's higher derivatives with the operands put in their
        places: einsum_with(1, t, 'ij,jk->ik', a, b) is np.einsum('ij,jk->ik', a, t),
        einsum_grad_with(g, 0, 1, t, 'ij,jk->ik', a, b) is einsum_grad(g, 0, 'ij,jk->ik',
        a, t), and 0.0 when the positions are the same (the gradient's own operand is read
        only for its shape). The code then calls np.einsum and einsum_grad alone, whose
        rules give these again: every order closes. Positions not written as numbers, or
        subscripts not written as a string, stay for the helpers at run time (whose rules
        are rules/third_order.py's)."""
        gradient, pairs = _EINSUM_REPLACING[name]
        args = node.args
        first = 2 * len(pairs) + (2 if gradient else 0)    # the subscripts' position
        if node.keywords or len(args) < first + 2 or \
                any(isinstance(a, gast.Starred) for a in args):
            return node
        subscripts = args[first]
        slots = [_int_literal(args[k]) for k in ([1] if gradient else []) + pairs]
        if any(k is None for k in slots) or not (isinstance(subscripts, gast.Constant) and
                                                isinstance(subscripts.value, str)):
            return node
        operands = list(args[first + 1:])
        while operands and isinstance(operands[-1], gast.Constant) and \
                operands[-1].value is None:
            operands.pop()
        if any(k >= len(operands) for k in slots):
            return node
        if len(set(slots)) < len(slots):
            return const(0.0)
        for k in pairs:
            operands[_int_literal(args[k])] = args[k + 1]
        if not gradient:
            return self._np("einsum", [subscripts] + operands)
        helper = load(self.linker.name_for("einsum_grad", runtime.einsum_grad))
        return gast.Call(func=helper, args=[args[0], args[1], subscripts] + operands,
                         keywords=[])

    def _np(self, attr, args, keywords=()):
        np_name = load(self.linker.name_for("np", np))
        return gast.Call(func=gast.Attribute(value=np_name, attr=attr, ctx=gast.Load()),
                         args=list(args), keywords=list(keywords))

    def shape_class(self, node):
        """The shape class of an expression, or None when it is not known."""
        if number(node) is not None:
            return SCALAR
        if isinstance(node, gast.Name):
            return self.shapes.of(self.adjoint_of.get(node.id, node.id))
        if isinstance(node, gast.UnaryOp):
            return self.shape_class(node.operand)
        if isinstance(node, gast.BinOp) and isinstance(node.op, _ELEMENTWISE_OPS):
            return _broadcast_classes([self.shape_class(node.left),
                                       self.shape_class(node.right)], self.shapes)
        if isinstance(node, gast.Call) and not node.keywords:
            obj = self.linker.names.get(getattr(node.func, "id", None))
            if obj is None and isinstance(node.func, gast.Attribute):
                obj = getattr(self.linker.names.get(getattr(node.func.value, "id", None)),
                              node.func.attr, None)
            if isinstance(obj, np.ufunc) or getattr(obj, "__name__", "") in (
                    "where", "balanced_eq"):
                return _broadcast_classes([self.shape_class(a) for a in node.args],
                                          self.shapes)
            if getattr(obj, "__name__", "") == "reduced_size":
                return SCALAR
        return None

    def _unbroadcast(self, node):
        grad, operand = node.args
        if not isinstance(operand, gast.Name):
            return grad if number(operand) is not None else node
        cls = self.shape_class(grad)
        if cls is None and not self.exact and not _reduces(grad):
            cls = self.shapes.of(self.ans)      # a full adjoint has its result's shape
            # (not a sum of it along axes: unreduce's rule, unbroadcast(np.sum(g, axis), g_))
        target = self.shapes.of(operand.id)
        if cls is not None and cls == target:
            return grad
        summed = self._static_sum(grad, class_shape(cls), class_shape(target))
        if summed is not None:
            return summed
        if target == SCALAR:
            return grad if cls == SCALAR else self._sum(grad)
        if isinstance(grad, gast.UnaryOp) and isinstance(grad.op, gast.USub) and (
                not self.exact or self.shape_class(grad.operand) not in (None, SCALAR)):
            # -unbroadcast(g, x): sum first, then negate the (smaller) sum; unbroadcast(-g, x)
            # negates all of g into a new array only to sum it
            node.args = [grad.operand, operand]
            return gast.UnaryOp(op=gast.USub(), operand=node)
        return node

    def _static_sum(self, grad, gshape, shape):
        """unbroadcast(g, x) for shapes known here, as the sum it is: np.sum(g, axis=0)
        (leading axes) or np.sum(g, axis=1, keepdims=True) (axes of length 1), or None."""
        if gshape is None or shape is None or not shape or len(gshape) < len(shape):
            return None
        try:
            if np.broadcast_shapes(gshape, shape) != gshape:
                return None
        except ValueError:
            return None
        extra = len(gshape) - len(shape)
        ones = tuple(i for i, n in enumerate(shape) if n == 1 and gshape[extra + i] != 1)
        if extra and ones:
            return None     # both kinds at once: leave it to the run-time helper
        negated = isinstance(grad, gast.UnaryOp) and isinstance(grad.op, gast.USub)
        inner = grad.operand if negated else grad
        if extra:
            axes = tuple(range(extra))
            keywords = [gast.keyword(arg="axis", value=_axis_node(axes))]
        else:
            keywords = [gast.keyword(arg="axis", value=_axis_node(ones)),
                        gast.keyword(arg="keepdims", value=const(True))]
        out = self._np("sum", [inner], keywords)
        return gast.UnaryOp(op=gast.USub(), operand=out) if negated else out

    def _sum(self, grad):
        """np.sum(g), with scalar factors moved out: np.sum(-g * e / t ** 2) becomes
        -np.sum(g * e) / t ** 2, one pass over the array instead of three."""
        factors = factors_of(grad, False)
        arrays = [(f, inv) for f, inv in factors if self.shape_class(f) != SCALAR]
        scalars = [(f, inv) for f, inv in factors if self.shape_class(f) == SCALAR]
        if not arrays or not scalars:
            return self._np("sum", [grad])
        out = self._np("sum", [product_of(arrays)])
        signs = [f for f, inv in scalars if number(f) == -1 and not inv]
        if len(signs) % 2:
            out = gast.UnaryOp(op=gast.USub(), operand=out)
        for factor, inverted in scalars:
            if number(factor) == -1 and not inverted:
                continue
            out = gast.BinOp(left=out, op=gast.Div() if inverted else gast.Mult(),
                             right=factor)
        return out


def _int_literal(node):
    """The non-negative int a node writes, or None."""
    if isinstance(node, gast.Constant) and type(node.value) is int and node.value >= 0:
        return node.value
    return None


def _reduces(node) -> bool:
    """Whether an expression calls a function along axes (np.sum(g, axis=axis))."""
    return any(isinstance(n, gast.Call) and any(k.arg == "axis" for k in n.keywords)
               for n in walk(node))


def _may_be_bool(node) -> bool:
    """Whether an expression may be a bool (or bool array): comparisons and logic."""
    if isinstance(node, (gast.Compare, gast.BoolOp)):
        return True
    if isinstance(node, gast.BinOp) and isinstance(node.op, (gast.BitAnd, gast.BitOr,
                                                             gast.BitXor)):
        return True
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.Not, gast.Invert)):
        return True
    return isinstance(node, gast.Constant) and isinstance(node.value, bool)


def _broadcast_classes(classes, shapes):
    if any(c is None for c in classes):
        return None
    arrays = {c for c in classes if c != SCALAR}
    if not arrays:
        return SCALAR
    if len(arrays) == 1:
        return arrays.pop()
    sizes = [class_shape(c) for c in arrays]
    if any(s is None for s in sizes):
        return shapes.broadcast(arrays) if all(s is None for s in sizes) else None
    try:
        return concrete_class(np.broadcast_shapes(*sizes))
    except ValueError:
        return None


# runtime helpers for the gradients of matrix products
# the einsums with operands replaced (runtime/tangents.py): (whether the first two arguments
# are a gradient's g and operand, the argument positions of each replaced operand's position)
_EINSUM_REPLACING = {"einsum_with": (False, [0]), "einsum_grad_with": (True, [2])}
_PRODUCT_GRADS = ("matmul_grad_left", "matmul_grad_right", "dot_grad_left", "dot_grad_right")


def _constant_axes(node, shape):
    """The sorted axes a constant `axis` argument names, for an array of `shape`."""
    return None if shape is None else axes_of(constant(node, NOT_CONSTANT), len(shape))


def _axis_node(axes):
    if len(axes) == 1:
        return const(axes[0])
    return gast.Tuple(elts=[const(a) for a in axes], ctx=gast.Load())


def _matmul(a, b):
    return gast.BinOp(left=a, op=gast.MatMult(), right=b)


def _transposed(node):
    return gast.Attribute(value=node, attr="T", ctx=gast.Load())


_FOLD = {gast.Add: lambda a, b: a + b, gast.Sub: lambda a, b: a - b,
         gast.Mult: lambda a, b: a * b, gast.Pow: lambda a, b: a ** b}
