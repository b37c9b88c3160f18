"""Put a number computed for one use back into the expression that uses it, inside loops
(part of the optimize pass). In a scalar loop each statement costs interpreter time on
every trip, and the nested form reads like the source line it came from:

    _abs = abs(term)                    if abs(term) > 1e-16 * abs(total):
    _abs2 = abs(total)                      ...
    _mul = 1e-16 * _abs2          ->
    _cmp = _abs > _mul
    if _cmp:
        ...

Only numbers (arrays keep one operation per statement, where the memory passes can see
each allocation), only generated temporaries assigned once and read once, only pure
expressions, and only past statements that cannot change what the expression reads:
plain assignments of other names and list appends.
"""
from __future__ import annotations

import gast

from ...ir.blocks import assignment, blocks, name_counts, statements, walk

_SIMPLE = (gast.Assign, gast.AugAssign, gast.Expr, gast.Return)


def nest_single_uses(tree: gast.FunctionDef, temporary, small, pure) -> None:
    """Nest in place. `temporary(name)`: a generated name nobody needs to see;
    `small(name)`: it holds a number; `pure(stmt)`: `name = expression` without effects."""
    if not _may_nest(tree):
        return
    writes, reads = name_counts(tree)
    params = {a.id for a in tree.args.args + tree.args.kwonlyargs + tree.args.posonlyargs}
    numbers = set()          # temporaries seen to be computed from numbers alone

    def is_number(name):
        return name in numbers or small(name)
    for block in list(_loop_blocks(tree)):
        i = 0
        while i < len(block):
            stmt = block[i]
            name = assignment(stmt)[0]
            if name is not None and writes[name] == 1 and _number_valued(stmt.value,
                                                                         is_number):
                numbers.add(name)
            if name is not None and temporary(name) and name not in params and \
                    writes[name] == 1 and reads[name] == 1 and is_number(name) and \
                    pure(stmt) and _nest_forward(block, i, name, pure):
                del block[i]
                continue
            i += 1
    _nest_shape_reads(tree, temporary, reads, writes, params, pure)


def _may_nest(tree) -> bool:
    """False where nest_single_uses certainly does nothing: every statement is in a block
    (no loop, with, try or def) and none assigns a shape read."""
    for block in blocks(tree):
        for stmt in block:
            if not isinstance(stmt, _SIMPLE) or \
                    isinstance(stmt, gast.Assign) and _shape_read(stmt.value):
                return True
    return False


# statements with no statements inside (and If, whose blocks `blocks` walks)
_SIMPLE = (gast.If, gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Expr, gast.Return,
           gast.Delete, gast.Pass, gast.Break, gast.Continue, gast.Raise, gast.Assert)


def _nest_shape_reads(tree, temporary, reads, writes, params, pure) -> None:
    """`_shape = x.shape` read once, by the next statement: read `x.shape` there, in any
    block (`n = x.shape[0]` as the user wrote it)."""
    for block in blocks(tree):
        i = 0
        while i + 1 < len(block):
            stmt = block[i]
            name = assignment(stmt)[0]
            if name is not None and temporary(name) and name not in params and \
                    writes[name] == 1 and reads[name] == 1 and _shape_read(stmt.value) and \
                    _use_site(block[i + 1], name) is not None and \
                    _nest_forward(block, i, name, pure):
                del block[i]
                continue
            i += 1


def _number_valued(expr, is_number) -> bool:
    """Arithmetic, comparisons, abs() and math functions of numbers give a number."""
    if isinstance(expr, gast.Constant):
        return type(expr.value) in (int, float, bool)
    if isinstance(expr, gast.Name):
        return is_number(expr.id)
    if isinstance(expr, gast.BinOp):
        return _number_valued(expr.left, is_number) and _number_valued(expr.right, is_number)
    if isinstance(expr, gast.UnaryOp):
        return _number_valued(expr.operand, is_number)
    if isinstance(expr, gast.Compare):
        return all(_number_valued(e, is_number) for e in [expr.left] + expr.comparators)
    if isinstance(expr, gast.Call) and not expr.keywords and \
            (isinstance(expr.func, gast.Name) and expr.func.id == "abs" or
             isinstance(expr.func, gast.Attribute) and
             isinstance(expr.func.value, gast.Name) and expr.func.value.id == "math"):
        return all(_number_valued(a, is_number) for a in expr.args)
    return False


def _shape_read(expr) -> bool:
    """`x.shape` (a tuple of numbers): `_shape = x.shape; n = _shape[0]` reads as the
    user wrote it, `n = x.shape[0]`."""
    return isinstance(expr, gast.Attribute) and expr.attr == "shape" and \
        isinstance(expr.value, gast.Name)


def _nest_forward(block, i, name, pure) -> bool:
    """Put block[i]'s value where the following statements read `name`, if that is safe."""
    value = block[i].value
    inputs = {n.id for n in walk(value) if isinstance(n, gast.Name)}
    for j in range(i + 1, len(block)):
        later = block[j]
        use = _use_site(later, name)
        if use is not None:
            if not _evaluates_once_in_order(later, pure):
                return False
            parent, field, index = use
            if index is None:
                setattr(parent, field, value)
            else:
                getattr(parent, field)[index] = value
            return True
        if not _harmless(later, inputs, pure):
            return False
    return False


def _use_site(stmt, name):
    """(parent, field, index) of the read of `name` in stmt's own expressions (not in
    nested blocks), or None."""
    roots = [stmt.test] if isinstance(stmt, gast.If) else \
        [] if isinstance(stmt, (gast.For, gast.While)) else [stmt]
    for root in roots:
        for parent in walk(root):
            if parent is not stmt and isinstance(parent, (gast.stmt,)):
                continue
            for field, child in gast.iter_fields(parent):
                if isinstance(child, gast.Name) and child.id == name and \
                        isinstance(child.ctx, gast.Load):
                    return parent, field, None
                if isinstance(child, list):
                    for k, item in enumerate(child):
                        if isinstance(item, gast.Name) and item.id == name and \
                                isinstance(item.ctx, gast.Load):
                            return parent, field, k
    if isinstance(stmt, gast.If) and isinstance(stmt.test, gast.Name) and stmt.test.id == name:
        return stmt, "test", None
    return None


def _evaluates_once_in_order(stmt, pure) -> bool:
    """A statement whose expression runs once and has no effects before the use: an
    assignment of a pure expression to a name, `x += pure`, `return`, or an `if` test."""
    if isinstance(stmt, gast.If):
        return True
    if isinstance(stmt, gast.Assign):
        return pure(stmt)
    if isinstance(stmt, gast.AugAssign):
        return isinstance(stmt.target, gast.Name) and pure(gast.Assign(
            targets=[stmt.target], value=stmt.value, type_comment=None))
    return isinstance(stmt, gast.Return)


def _harmless(stmt, inputs, pure) -> bool:
    """Whether moving a pure expression reading `inputs` past stmt keeps its value."""
    if isinstance(stmt, gast.Expr):
        call = stmt.value
        if isinstance(call, gast.Constant):
            return True           # a comment
        return isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and \
            call.func.attr == "append" and isinstance(call.func.value, gast.Name) and \
            call.func.value.id not in inputs
    if assignment(stmt)[0] is not None:
        value_ok = pure(stmt) or (_is_pop(stmt.value) and
                                  stmt.value.func.value.id not in inputs)
        return value_ok and stmt.targets[0].id not in inputs
    return False


def _is_pop(value) -> bool:
    """`_tape.pop()`: changes only the list it pops from."""
    return isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and \
        value.func.attr == "pop" and not value.args and isinstance(value.func.value, gast.Name)


def _loop_blocks(tree):
    """The blocks inside loops (where a statement runs once per trip), each once."""
    seen = set()
    for loop in statements(tree):
        # (a loop inside another was seen with everything in it: walking it again made
        # loops nested d deep cost d walks of their statements)
        if not isinstance(loop, (gast.For, gast.While)) or id(loop) in seen:
            continue
        for node in statements(loop):
            if isinstance(node, (gast.If, gast.For, gast.While)) and id(node) not in seen:
                seen.add(id(node))
                yield node.body
                yield node.orelse
