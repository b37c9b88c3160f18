"""Two exact rewrites that let an array be computed in place (when shapes are known).

A negation of an argument, kept for the backward sweep, is folded into its products:

    _neg = -y                                  (y: a float argument)
    _mul = _neg * z                   ->       _mul = -(y * z)
    ...                                        ...
    dz = d_mul * _neg                          dz = -(d_mul * y)

`(-a) * b == -(a * b)` holds to the bit for floats (rounding is symmetric), so nothing
changes but the array `-y` that no longer lives from the forward to the backward sweep.

The derivative of `log1p(exp(u))` (softplus, the logistic loss) is `e / (1 + e)` with
`e = exp(u)`; the rules give it as two steps, which need `e` and `1 + e` alive at once:

    d_exp = g / (1.0 + _exp)          ->       d_mul = g / (1.0 + np.reciprocal(_exp))
    d_mul = d_exp * _exp

The right-hand form is the same number for every `e` but `-1` (where both are infinite),
and the buffers pass computes it inside the array of `e`. It is also right where `e`
overflowed to inf (the left gives nan). `1 / e` is inf where `e` is 0 (the result is then
0, as it should be): the statement that computes it is run under `np.errstate`, so the
gradient warns no more than the function did (see `quiet_reciprocals`).
"""
from __future__ import annotations

import operator
from collections import Counter

import gast
import numpy as np

from ...ir.blocks import arithmetic, assignment, nodes
from ...ir.builders import load, number
from ...analysis.shape_algebra import WEAK
from ...ir.builders import COMMENT

_PRODUCTS = (gast.Mult, gast.Div)


def fold_algebra(body, shapes, np_name) -> set:
    """Rewrite the top-level statements `body` in place. `shapes` tracks (shape, dtype)
    statement by statement, as for `factor_sums`. Returns the names `e` whose
    `np.reciprocal(e)` a rewrite introduced."""
    if not any(_candidate(stmt) for stmt in body):
        return set()
    stored, reads = Counter(), Counter()
    for stmt in body:
        for node in nodes(stmt):
            if isinstance(node, gast.Name):
                if isinstance(node.ctx, gast.Store):
                    stored[node.id] += 1
                elif isinstance(node.ctx, gast.Load):
                    reads[node.id] += 1
            elif isinstance(node, (gast.Subscript, gast.Attribute)) and \
                    not isinstance(node.ctx, gast.Load) and isinstance(node.value, gast.Name):
                stored[node.value.id] += 1          # x[i] = v, x.a = v change x
    reciprocals = set()
    i = 0
    while i < len(body):
        stmt = body[i]
        if _sigmoid(body, i, shapes, np_name, stored, reads, reciprocals):
            continue            # body[i] went: look at the statement now there
        if _negation(body, i, shapes, np_name, stored, reads):
            continue
        shapes.track(stmt)
        i += 1
    return reciprocals


def _candidate(stmt) -> bool:
    """Whether `stmt` may start a rewrite: `_n = -y` or `a = g / (1.0 + e)`."""
    _, value = assignment(stmt)
    if isinstance(value, gast.UnaryOp):
        return isinstance(value.op, gast.USub) and isinstance(value.operand, gast.Name)
    return isinstance(value, gast.BinOp) and isinstance(value.op, gast.Div) and \
        _one_plus(value.right) is not None


def _float_array(found) -> bool:
    return found is not None and found[0] != () and isinstance(found[1], np.dtype) and \
        found[1].kind in "fc"


def _calls_other_than(call, np_name) -> bool:
    func = call.func
    return not (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and
                func.value.id == np_name)


def _negation(body, i, shapes, np_name, stored, reads) -> bool:
    """`n = -y` read only as a factor of top-level products: fold it into them. Returns
    whether body[i] was removed."""
    name, value = assignment(body[i])
    if name is None or not name.startswith("_") or stored[name] != 1 or \
            not isinstance(value, gast.UnaryOp) or not isinstance(value.op, gast.USub) or \
            not isinstance(value.operand, gast.Name) or stored[value.operand.id] or \
            not _float_array(shapes.shape_of(value.operand)):
        return False
    y = value.operand.id
    uses = []
    for stmt in body[i + 1:]:
        for node in nodes(stmt):
            if isinstance(node, gast.BinOp) and isinstance(node.op, _PRODUCTS):
                for side in ("left", "right"):
                    operand = getattr(node, side)
                    if isinstance(operand, gast.Name) and operand.id == name:
                        uses.append((node, side))
    if not uses or len(uses) != reads[name]:
        return False    # read other than as a factor (or in a nested statement's product)
    for stmt in body[i + 1:]:
        for node in nodes(stmt):
            if isinstance(node, gast.Call) and _calls_other_than(node, np_name) and any(
                    isinstance(n, gast.Name) and n.id == y for n in nodes(node)):
                return False    # a function that is given y might change it in place
    sides = Counter()
    for node, side in uses:
        setattr(node, side, load(y))
        sides[id(node)] += 1
    # (-y) * (-y) is y * y: a product with both factors negated stays as it is
    negated = {n for n, count in sides.items() if count == 1}
    for stmt in body[i + 1:]:
        _Negate(negated).visit(stmt)
    reads[y] += len(uses)
    reads[name] = 0
    del body[i]
    return True


class _Negate(gast.NodeTransformer):
    """Each product whose id is in `negated` becomes -(product)."""

    def __init__(self, negated):
        self.negated = negated

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if id(node) in self.negated:
            return gast.UnaryOp(op=gast.USub(), operand=node)
        return node


def _sigmoid(body, i, shapes, np_name, stored, reads, reciprocals) -> bool:
    """`a = g / (1.0 + e)` then `b = a * e`, a read only there: `b = g / (1.0 +
    np.reciprocal(e))`. Returns whether body[i] was removed."""
    a, value = assignment(body[i])
    if a is None or stored[a] != 1 or reads[a] != 1 or not isinstance(value, gast.BinOp) \
            or not isinstance(value.op, gast.Div):
        return False
    e = _one_plus(value.right)
    if e is None or stored[e] != 1 or not _float_array(shapes.shape_of(load(e))):
        return False
    read_here = {n.id for n in nodes(value) if isinstance(n, gast.Name)}
    for j in range(i + 1, len(body)):
        stmt = body[j]
        product = _product_with(stmt, a, e)
        if product is not None:
            product.left = value.left
            product.op = gast.Div()
            call = gast.Call(func=gast.Attribute(value=load(np_name), attr="reciprocal",
                                                 ctx=gast.Load()),
                             args=[load(e)], keywords=[])
            product.right = gast.BinOp(left=gast.Constant(value=1.0, kind=None),
                                       op=gast.Add(), right=call)
            reciprocals.add(e)
            del body[i]
            return True
        if any(isinstance(n, gast.Name) and n.id in read_here | {a}
               for n in nodes(stmt)):
            return False        # a, or what it reads, is touched before the product
    return False


def _one_plus(node):
    """e for `1.0 + e` or `e + 1.0` (e a name), else None."""
    if isinstance(node, gast.BinOp) and isinstance(node.op, gast.Add):
        for one, other in ((node.left, node.right), (node.right, node.left)):
            if number(one) == 1 and isinstance(other, gast.Name):
                return other.id
    return None


def _product_with(stmt, a, e):
    """The top-level product `a * e` or `e * a` that is the value of assignment `stmt`."""
    _, value = assignment(stmt)
    if isinstance(value, gast.BinOp) and isinstance(value.op, gast.Mult) and \
            {getattr(value.left, "id", None), getattr(value.right, "id", None)} == {a, e}:
        return value
    return None


def quiet_reciprocals(body, reciprocals, np_name):
    """Run each top-level statement with an `np.reciprocal(e, ...)` made by `fold_algebra` under
    `np.errstate(divide="ignore", over="ignore")`, with a comment that says why."""
    i = 0
    while i < len(body):
        if reciprocals and not isinstance(body[i], gast.With) and any(
                isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and
                n.func.attr == "reciprocal" and n.args and
                getattr(n.args[0], "id", None) in reciprocals for n in nodes(body[i])):
            quiet = gast.Call(func=gast.Attribute(value=load(np_name), attr="errstate",
                                                  ctx=gast.Load()),
                              args=[], keywords=[
                                  gast.keyword(arg="divide", value=gast.Constant("ignore", None)),
                                  gast.keyword(arg="over", value=gast.Constant("ignore", None))])
            comment = gast.Expr(value=gast.Constant(
                value=COMMENT + "e / (1 + e) as 1 / (1 + 1/e), in place (1/e is inf where e "
                "is 0: the result is then 0)", kind=None))
            body[i] = gast.With(items=[gast.withitem(context_expr=quiet, optional_vars=None)],
                                body=[body[i]], type_comment=None)
            body.insert(i, comment)
            i += 1
        i += 1


def fill_numbers(tree, helpers, np_name, facts):
    """`unbroadcast(1.0 / 500, x)` (a mean's adjoint, reaching an operand of a known
    shape and float dtype) as the array it makes, `np.full((500,), 1.0 / 500)`: then x
    need not be computed (or kept) for its shape alone. `facts`: name -> (shape, dtype) of
    the primal's variables; only names assigned once are trusted."""
    unbroadcast = {n for n, f in helpers.items() if getattr(f, "__name__", "") == "unbroadcast"}
    if not unbroadcast or not facts:
        return
    calls, stored, added = [], Counter(), []
    for node in nodes(tree):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            stored[node.id] += 1
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
                node.func.id in unbroadcast:
            calls.append(node)
        elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Subscript) \
                and isinstance(node.op, gast.Add):
            added.append(node)
    for call in calls:
        _fill(call, np_name, facts, stored)
    for stmt in added:
        _add_number(stmt)


def _add_number(stmt):
    """`dz[i, y] += np.full((500,), -0.002)` as `dz[i, y] -= 0.002`: adding into part of
    an array cannot change that part's shape, so a number broadcast to it adds the same."""
    value = stmt.value
    if not (isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and
            value.func.attr == "full" and len(value.args) == 2 and not value.keywords):
        return
    number = value.args[1]
    if isinstance(number, gast.UnaryOp) and isinstance(number.op, gast.USub):
        stmt.op, number = gast.Sub(), number.operand
    elif isinstance(number, gast.Constant) and type(number.value) is float and \
            number.value < 0:
        stmt.op, number = gast.Sub(), gast.Constant(value=-number.value, kind=None)
    stmt.value = number


def _fill(node, np_name, facts, stored):
    """Make the call `node`, unbroadcast(number, x), np.full(shape, number) in place."""
    if len(node.args) != 2 or node.keywords or not isinstance(node.args[1], gast.Name):
        return
    grad, operand = node.args
    known = facts.get(operand.id) if stored[operand.id] <= 1 else None
    if known is None or not known[0] or not isinstance(known[1], np.dtype) or \
            known[1].kind != "f":
        return
    float_number = type(_constant_value(grad)) is float
    if not float_number and not _scalar_expression(grad, facts, stored):
        return
    if known[1] != np.float64 or not float_number and not _python_float(grad, facts):
        # (the helper gives x's float dtype for a Python number, an int included)
        node.keywords = [gast.keyword(arg="dtype", value=gast.Attribute(
            value=load(np_name), attr=known[1].name, ctx=gast.Load()))]
    shape = gast.Tuple(elts=[gast.Constant(value=n, kind=None) for n in known[0]],
                       ctx=gast.Load())
    node.func = gast.Attribute(value=load(np_name), attr="full", ctx=gast.Load())
    node.args = [shape, grad]


def _scalar_expression(expr, facts, stored) -> bool:
    """Whether `expr` is arithmetic of numbers and of names that hold numbers (shape ())."""
    if not arithmetic(expr):
        return False
    for n in nodes(expr):
        if isinstance(n, gast.Name):
            known = facts.get(n.id) if stored[n.id] <= 1 else None
            if known is None or known[0] != ():
                return False
        elif isinstance(n, gast.Constant) and number(n) is None:
            return False
    return True


def _python_float(expr, facts) -> bool:
    """Whether arithmetic `expr` of Python numbers certainly gives a Python float: its
    names are Python numbers, and it divides or has a float constant."""
    names = [n for n in nodes(expr) if isinstance(n, gast.Name)]
    return all(facts[n.id][1] is WEAK for n in names) and any(
        isinstance(n, gast.BinOp) and isinstance(n.op, gast.Div) or
        isinstance(n, gast.Constant) and type(n.value) is float for n in nodes(expr))


_ARITHMETIC = {gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
               gast.Div: operator.truediv, gast.USub: operator.neg, gast.UAdd: operator.pos}


def _constant_value(expr):
    """The value of an expression of number constants and + - * /, else None."""
    if isinstance(expr, gast.Constant):
        return number(expr)
    if isinstance(expr, gast.UnaryOp) and type(expr.op) in _ARITHMETIC:
        inner = _constant_value(expr.operand)
        return None if inner is None else _ARITHMETIC[type(expr.op)](inner)
    if isinstance(expr, gast.BinOp) and type(expr.op) in _ARITHMETIC:
        left, right = _constant_value(expr.left), _constant_value(expr.right)
        if left is None or right is None or \
                isinstance(expr.op, gast.Div) and right == 0:
            return None     # (1.0 / 0: left to the helper, which fails as Python does)
        return _ARITHMETIC[type(expr.op)](left, right)
    return None


def fold_constants(tree):
    """`1.0 / 20` (a mean's seed, once the count is known) is the number `0.05`: Python
    computes the very same float when the code runs, so the literal changes nothing but
    an operation. Only + - * / of int and float literals, with a finite result no
    longer to write than the operation."""
    # (only an operation on two number literals folds, and a fold only makes another
    # literal: without one there is nothing to do, and a transformer's walk costs more)
    numbers = (int, float)
    if any(isinstance(n, gast.BinOp) and isinstance(n.left, gast.Constant) and
           isinstance(n.right, gast.Constant) and type(n.left.value) in numbers and
           type(n.right.value) in numbers for n in nodes(tree)):
        _FoldConstants().visit(tree)


class _FoldConstants(gast.NodeTransformer):
    def visit_BinOp(self, node):
        self.generic_visit(node)
        left, right = node.left, node.right
        numbers = (int, float)
        if not (isinstance(left, gast.Constant) and isinstance(right, gast.Constant)
                and type(left.value) in numbers and type(right.value) in numbers):
            return node
        value = _constant_value(node)
        if value is None or not np.isfinite(value) or abs(value) > 2 ** 53 or \
                len(repr(value)) > len(repr(left.value)) + len(repr(right.value)) + 3:
            return node     # (1.0 / 6 says more than 0.16666666666666666)
        return gast.Constant(value=value, kind=None)
