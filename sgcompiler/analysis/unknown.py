"""Which values of a specialised gradient have shapes the compiler does not know, and why.

Code specialised for its arguments' shapes falls back to run-time helpers (`unbroadcast`,
`dot_grad_left`) wherever a value's shape is not known, which costs speed: the header of
the generated code says so, from the facts of the shapes pass (sizes.py), so a user sees
where specialisation was lost:

    # specialised for x (5,) float64, k (3,) float64; shapes not known (run-time helpers
    # work them out): c (line 7: np.kron is not followed), s (line 8: from c)

Only active values are listed (the gradient code of the others does not depend on their
shapes); containers (lists, tuples, dicts) have no shape to know.
"""
from __future__ import annotations

from dataclasses import dataclass

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
    does not know, roots (what the shapes pass does not follow) first."""
    by_name = {}
    for stmt in assignments(norm.body):
        by_name.setdefault(target_of(stmt), []).append(stmt)
    roots, derived = [], []
    for name, stmts in by_name.items():
        if name not in active or facts.shape(name) is not None or \
                facts.kind(name) != ARRAY or name in facts.ints:
            continue
        why = _why(name, stmts, resolution, norm.fn, facts, by_name)
        found = Unknown(name, getattr(stmts[0], "lineno", None), why)
        (derived if why.startswith("from ") else roots).append(found)
    # a value computed from unknown ones names the root it comes from
    whys = {u.name: u.why for u in roots + derived}
    for i, u in enumerate(derived):
        source, seen = u.why[len("from "):], {u.name}
        while whys.get(source, "").startswith("from ") and source not in seen:
            seen.add(source)
            source = whys[source][len("from "):]
        derived[i] = Unknown(u.name, u.line, f"from {source}")
    return tuple(roots + derived)


def _why(name, stmts, resolution, fn, facts, by_name) -> str:
    for stmt in stmts:
        op = describe_stmt(stmt, resolution, fn)
        unknown = [r for r in op.reads if r != name and r in by_name and
                   facts.shape(r) is None and facts.kind(r) == ARRAY and
                   r not in facts.ints]
        if unknown:
            return f"from {unknown[0]}"
    if len(stmts) > 1:
        lines = sorted({getattr(s, "lineno", 0) for s in stmts})
        return f"assigned arrays of different shapes (lines {', '.join(map(str, lines))})"
    op = describe_stmt(stmts[0], resolution, fn)
    if op.kind == CALL:
        return f"what {op.what} returns is not known"
    if op.kind == INDEX:
        return "an index whose result's shape is not followed"
    if op.kind in (RULE, NONDIFFERENTIABLE) and op.what:
        return f"{op.what} is not followed"
    return "its operation is not followed"


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
