"""The tape cost summary: what the primal sweep of the generated gradient saves per loop
iteration, read from the generated code itself (pipeline.gradient_tree), so it is what
runs: each `_tape.append(v)` inside a loop body is one value saved per iteration. The
forward function of each helper's piece is read the same way
(pipeline.piece_forward_tree).
"""
from __future__ import annotations

from dataclasses import dataclass

import gast


@dataclass(frozen=True)
class Saved:
    """One value the primal sweep saves on each iteration of a loop."""

    name: str               # the variable saved (the user's name where it has one)
    line: int | None        # the source line whose statement makes it needed


@dataclass(frozen=True)
class LoopTape:
    """What one loop of the function saves per iteration."""

    line: int | None        # the loop's line
    saved: tuple            # Saved, in the order the primal sweep pushes them


@dataclass(frozen=True)
class HelperTape:
    """What the forward function of a helper the gradient goes through saves."""

    name: str
    where: str              # file:line of its definition
    wrt: tuple              # its parameters that are differentiated
    loops: tuple            # LoopTape


def tape_summary(tree: gast.FunctionDef, user_name=lambda name: name) -> tuple:
    """One LoopTape per loop (of the primal sweep of `tree`) that saves anything."""
    tape = _tape_name(tree)
    if tape is None:
        return ()
    loops = []
    _walk(_forward(tree), tape, loops, user_name)
    return tuple(loops)


def _tape_name(tree):
    """The tape is the list the gradient starts with (`_tape = []`)."""
    first = tree.body[0] if tree.body else None
    if isinstance(first, gast.Assign) and isinstance(first.value, gast.List) and \
            not first.value.elts and isinstance(first.targets[0], gast.Name):
        return first.targets[0].id
    return None


def _forward(tree):
    """The statements of the primal sweep: those before the first adjoint loop pops."""
    return [s for s in tree.body if not _pops(s)]


def _pops(stmt) -> bool:
    return any(isinstance(n, gast.Attribute) and n.attr == "pop" for n in gast.walk(stmt))


def _walk(body, tape, loops, user_name):
    for stmt in body:
        if isinstance(stmt, (gast.For, gast.While)):
            saved = tuple(Saved(user_name(value), getattr(push, "lineno", None))
                          for push, value in _pushes(stmt.body, tape))
            if saved:
                loops.append(LoopTape(getattr(stmt, "lineno", None), saved))
            _walk(stmt.body, tape, loops, user_name)
        elif isinstance(stmt, gast.If):
            _walk(stmt.body, tape, loops, user_name)
            _walk(stmt.orelse, tape, loops, user_name)


def _pushes(body, tape):
    """(statement, name pushed) for each push on the tape in `body`, not in inner loops."""
    for stmt in body:
        if isinstance(stmt, gast.If):
            yield from _pushes(stmt.body, tape)
            yield from _pushes(stmt.orelse, tape)
        elif isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call):
            func = stmt.value.func
            if isinstance(func, gast.Attribute) and func.attr == "append" and \
                    isinstance(func.value, gast.Name) and func.value.id == tape:
                arg = stmt.value.args[0]
                yield stmt, arg.id if isinstance(arg, gast.Name) else "a value"
