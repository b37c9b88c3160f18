"""Structure control flow so every jump is the last statement on its path.

Run first inside `normalize`. After it:
- the function has `return` only as the last statement of a path (`if c: return a` plus the
  rest becomes `if c: return a else: rest`);
- inside loops, `break` is only the last statement of a block, and `continue` is gone
  (the rest of the body moves into the branch that did not continue);
- `return` inside a loop becomes `result = value; flag = True; break`, checked after
  each enclosing loop;
- `while c: body` becomes `while True: if c: body else: break`, so the condition is
  evaluated where the adjoint sweep can replay it;
- `for/while ... else` becomes a flag set by `break`, tested after the loop.

    for i in range(n):              for i in range(n):
        if x[i] < 0:                    if x[i] < 0:
            continue          ->            pass
        s = s + x[i]                    else:
                                            s = s + x[i]
"""
from __future__ import annotations

import copy

import gast
from ..ir.blocks import walk

LOOPS = (gast.For, gast.While)


def _name(id_, store=False):
    return gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(), annotation=None,
                     type_comment=None)


def _assign(name, value, like):
    node = gast.Assign(targets=[_name(name, store=True)], value=value, type_comment=None)
    return gast.copy_location(node, like)


def _const(value):
    return gast.Constant(value=value, kind=None)


def jumps(block, kinds) -> bool:
    """Whether `block` contains a jump of `kinds` that belongs to the enclosing loop."""
    for stmt in block:
        if isinstance(stmt, kinds):
            return True
        if isinstance(stmt, gast.If) and (jumps(stmt.body, kinds) or
                                          jumps(stmt.orelse, kinds)):
            return True
    return False


def _always_exits(block, kinds) -> bool:
    if not block:
        return False
    last = block[-1]
    if isinstance(last, kinds) or isinstance(last, gast.Raise):
        return True
    if isinstance(last, gast.If):
        return _always_exits(last.body, kinds) and _always_exits(last.orelse, kinds)
    return False


def _contains(block, kind) -> bool:
    return any(isinstance(n, kind) for s in block for n in walk(s))


def lift(block, kinds):
    """Make each jump of `kinds` the last statement on its path through `block`."""
    out = []
    for i, stmt in enumerate(block):
        if isinstance(stmt, kinds):
            return out + [stmt]
        if isinstance(stmt, gast.If) and (jumps([stmt], kinds)):
            rest = block[i + 1:]
            new = copy.copy(stmt)
            new.body = lift(stmt.body + ([] if _always_exits(stmt.body, kinds)
                                         else copy.deepcopy(rest)), kinds)
            new.orelse = lift(stmt.orelse + ([] if _always_exits(stmt.orelse, kinds)
                                             else copy.deepcopy(rest)), kinds)
            return out + [new]
        out.append(stmt)
    return out


class _Lower:
    def __init__(self, namer):
        self.namer = namer
        self.return_flag = None
        self.return_value = None

    def function_body(self, body):
        body = self.block(body, in_loop=False)
        return lift(body, (gast.Return,))

    def block(self, body, in_loop):
        out = []
        for stmt in body:
            if isinstance(stmt, LOOPS):
                out.extend(self.loop(stmt, outermost=not in_loop))
            elif isinstance(stmt, gast.If):
                new = copy.copy(stmt)
                new.body = self.block(stmt.body, in_loop)
                new.orelse = self.block(stmt.orelse, in_loop)
                out.append(new)
            elif isinstance(stmt, gast.Return) and in_loop:
                out.extend(self.return_in_loop(stmt))
            else:
                out.append(stmt)
        return out

    def return_in_loop(self, stmt):
        if self.return_flag is None:
            self.return_flag = self.namer.fresh("_returned")
            self.return_value = self.namer.fresh("_return_value")
        value = stmt.value if stmt.value is not None else _const(None)
        return [_assign(self.return_value, value, stmt),
                _assign(self.return_flag, _const(True), stmt),
                gast.copy_location(gast.Break(), stmt)]

    def loop(self, stmt, outermost):
        returns = _contains(stmt.body, gast.Return)
        if returns and self.return_flag is None:
            self.return_flag = self.namer.fresh("_returned")
            self.return_value = self.namer.fresh("_return_value")
        body = self.block(stmt.body, in_loop=True)
        body = self.exit_inner_loops(body) if returns else body
        body = [s for s in lift(body, (gast.Break, gast.Continue))]
        body = _drop_trailing_continue(body)
        before, after = [], []
        if returns and outermost:
            before.append(_assign(self.return_flag, _const(False), stmt))
        if stmt.orelse:
            orelse = self.block(stmt.orelse, in_loop=not outermost)
            if jumps(body, (gast.Break,)):
                flag = self.namer.fresh("_broke")
                before.append(_assign(flag, _const(False), stmt))
                body = before_breaks(body, lambda brk: _assign(flag, _const(True), brk))
                test = gast.UnaryOp(op=gast.Not(), operand=_name(flag))
                after.append(gast.copy_location(gast.If(test=test, body=orelse, orelse=[]),
                                                stmt))
            else:
                after.extend(orelse)
        if isinstance(stmt, gast.While):
            if not (isinstance(stmt.test, gast.Constant) and stmt.test.value is True):
                brk = gast.copy_location(gast.Break(), stmt)
                body = [gast.copy_location(gast.If(test=stmt.test, body=body or [gast.Pass()],
                                                   orelse=[brk]), stmt)]
            new = gast.While(test=_const(True), body=body, orelse=[])
        else:
            new = gast.For(target=stmt.target, iter=stmt.iter, body=body or [gast.Pass()],
                           orelse=[], type_comment=None)
        new = gast.copy_location(new, stmt)
        if returns and outermost:
            back = gast.copy_location(gast.Return(value=_name(self.return_value)), stmt)
            after.insert(0, gast.copy_location(
                gast.If(test=_name(self.return_flag), body=[back], orelse=[]), stmt))
        return before + [new] + after

    def exit_inner_loops(self, body):
        """After an inner loop that may have returned, leave this loop too."""
        out = []
        for stmt in body:
            if isinstance(stmt, gast.If):
                stmt = copy.copy(stmt)
                stmt.body = self.exit_inner_loops(stmt.body)
                stmt.orelse = self.exit_inner_loops(stmt.orelse)
            out.append(stmt)
            if isinstance(stmt, LOOPS) and _contains([stmt], gast.Assign) and \
                    _assigns(stmt, self.return_flag):
                brk = gast.copy_location(gast.Break(), stmt)
                out.append(gast.copy_location(
                    gast.If(test=_name(self.return_flag), body=[brk], orelse=[]), stmt))
        return out


def _assigns(stmt, name) -> bool:
    return any(isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and n.id == name
               for n in walk(stmt))


def _drop_trailing_continue(block):
    out = []
    for stmt in block:
        if isinstance(stmt, gast.Continue):
            continue
        if isinstance(stmt, gast.If):
            stmt = copy.copy(stmt)
            stmt.body = _drop_trailing_continue(stmt.body)
            stmt.orelse = _drop_trailing_continue(stmt.orelse)
        out.append(stmt)
    return out


def before_breaks(block, make):
    """`block` with `make(brk)` (a statement) before each `break` of this loop."""
    out = []
    for stmt in block:
        if isinstance(stmt, gast.Break):
            out.append(make(stmt))
        elif isinstance(stmt, gast.If):
            stmt = copy.copy(stmt)
            stmt.body = before_breaks(stmt.body, make)
            stmt.orelse = before_breaks(stmt.orelse, make)
        out.append(stmt)
    return out


def lower(body, namer):
    """The function body with structured jumps (see the module docstring)."""
    return _Lower(namer).function_body(body)
