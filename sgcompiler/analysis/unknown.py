"""Which values of a specialised gradient have shapes the compiler does not know, and why.

Code specialised for its arguments' shapes falls back to run-time helpers (`unbroadcast`,
`dot_grad_left`) wherever a value's shape is not known, which costs speed: the header of
the generated code says so, from the facts of the shapes pass (sizes.py), so a user sees
where specialisation was lost:

    # specialised for x (5,) float64, k (3,) float64; shapes not known (run-time helpers
    # work them out): c (line 7: np.kron is not followed), s (line 8: from c)

Active values are listed (the gradient code of the others does not depend on their
shapes), and the constants they come from (`h = np.zeros((n, 4))`, where n is a number
argument: code is specialised for arrays' shapes, not for numbers' values); containers
(lists, tuples, dicts) have no shape to know.
"""
from __future__ import annotations

from dataclasses import dataclass

import gast

from ..frontend.resolve import dotted
from .activity import assignments
from .ops import CALL, INDEX, NONDIFFERENTIABLE, RULE, describe_stmt, target_of
from .shapes import ARRAY

_LISTED = 8     # names listed in the header; the rest are counted


@dataclass(frozen=True)
class Unknown:
    """A value whose shape is not known: its name, first line and why."""

    name: str
    line: int | None
    why: str            # "np.kron is not followed", "from c", ...


def unknown_shapes(norm, resolution, facts, active) -> tuple:
    """An Unknown for each active value of `norm` whose shape `facts` (shapes.Shapes)
    does not know, roots (what the shapes pass does not follow) first. A value computed
    from unknown ones names the root it comes from, and why that root is not known where
    the root itself is not listed (a constant, such as `np.zeros((n, 4))`)."""
    by_name = {}
    for stmt in assignments(norm.body):
        by_name.setdefault(target_of(stmt), []).append(stmt)
    numbers = _number_arguments(norm, facts)
    whys = {}

    def why_of(name):
        if name not in whys:
            whys[name] = _why(name, by_name[name], resolution, norm.fn, facts, by_name,
                              numbers)
        return whys[name]
    roots, derived = [], []
    for name, stmts in by_name.items():
        if name not in active or not _unknown(name, facts):
            continue
        found = Unknown(name, getattr(stmts[0], "lineno", None), why_of(name))
        (derived if found.why.startswith("from ") else roots).append(found)
    listed = {u.name for u in roots}
    for i, u in enumerate(derived):
        source, seen = u.why[len("from "):], {u.name}
        while why_of(source).startswith("from ") and source not in seen:
            seen.add(source)
            source = why_of(source)[len("from "):]
        derived[i] = Unknown(u.name, u.line, f"from {source}")
        if source not in listed and not why_of(source).startswith("from "):
            # a constant the active values come from (np.zeros((n, 4)) before a loop)
            listed.add(source)
            roots.append(Unknown(source, getattr(by_name[source][0], "lineno", None),
                                 why_of(source)))
    return tuple(roots + derived)


def _unknown(name, facts) -> bool:
    return facts.shape(name) is None and facts.kind(name) == ARRAY and name not in facts.ints


def _number_arguments(norm, facts) -> frozenset:
    """The function's parameters that are numbers, or of no known shape: the code is
    specialised for arrays' shapes, not for numbers' values."""
    return frozenset(n for n in norm.params if facts.shape(n) in (None, ()))


def _why(name, stmts, resolution, fn, facts, by_name, numbers=frozenset()) -> str:
    """Why `name`'s shape is not known: "from <name>" where each of its assignments
    reads a value of unknown shape, else the reason of the assignment that does not."""
    derived, own = None, []
    for stmt in stmts:
        op = describe_stmt(stmt, resolution, fn)
        unknown = [r for r in op.reads if r != name and r in by_name and
                   _unknown(r, facts)]
        if unknown:
            derived = derived or unknown[0]
        else:
            own.append((stmt, op))
    if not own:
        return f"from {derived}"
    if len(stmts) > 1 and (len(own) > 1 or derived is None):
        lines = sorted({getattr(s, "lineno", 0) for s in stmts})
        return f"assigned arrays of different shapes (lines {', '.join(map(str, lines))})"
    stmt, op = own[0]
    number = _number_read(op.reads, by_name, numbers, resolution, fn)
    what = op.what or (dotted(stmt.value.func) if isinstance(stmt.value, gast.Call) else None)
    if number is not None and what:
        return (f"{what} of a size from the number {number}: the code is specialised "
                f"for shapes, not for numbers' values")
    if op.kind == CALL:
        return f"what {op.what} returns is not known"
    if op.kind == INDEX:
        return "an index whose result's shape is not followed"
    if op.kind in (RULE, NONDIFFERENTIABLE) and op.what:
        return f"{op.what} is not followed"
    return "its operation is not followed"


def _number_read(reads, by_name, numbers, resolution, fn, depth=3):
    """A number argument that `reads` take, directly or through the tuples and numbers
    made from it (a few steps back), or None."""
    for r in reads:
        if r in numbers:
            return r
    if depth:
        for r in reads:
            for stmt in by_name.get(r, ()):
                found = _number_read(describe_stmt(stmt, resolution, fn).reads, by_name,
                                     numbers, resolution, fn, depth - 1)
                if found is not None:
                    return found
    return None


def _path(path) -> str:
    """`x`, or `params['W1']` for an array of a parameter tree."""
    return path if isinstance(path, str) else path[0] + "".join(f"[{k!r}]" for k in path[1:])


def header_note(arrays, unknown) -> str:
    """The header lines (without '# ') that say what the code is specialised for."""
    if not arrays:
        return "for arguments of any shape (not specialised for shapes)"
    shapes = ", ".join(f"{_path(p)} {shape} {dtype}" for p, (shape, dtype) in arrays.items())
    if not unknown:
        return f"specialised for {shapes}: every active value's shape is known"
    listed = [f"{u.name} (line {u.line}: {u.why})" if u.line else f"{u.name} ({u.why})"
              for u in unknown[:_LISTED]]
    more = f", and {len(unknown) - _LISTED} more" if len(unknown) > _LISTED else ""
    return (f"specialised for {shapes}; shapes not known (run-time helpers work them "
            f"out): {', '.join(listed)}{more}")
