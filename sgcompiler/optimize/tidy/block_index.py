"""Where each name is bound and read in one statement list, for optimizations that ask
"the next statement after this one that binds x" once per statement (propagate-copies).

Scanning forward for the answer costs the length of the block each time, so a function of
n statements took n**2 steps; the index answers from sorted positions. It stays right
while statements are deleted (deleted positions are skipped; the order of the others does
not change) and while reads are renamed (`renamed`); it does not follow insertions.
"""
from __future__ import annotations

from bisect import bisect_right, insort

import gast

from ...ir.blocks import nodes


class BlockIndex:
    """The positions, in `block` as it was when indexed, of the statements that bind and
    read each name (a statement inside an if/for/while counts for the compound one)."""

    def __init__(self, block, known=None):
        self.position = {id(stmt): k for k, stmt in enumerate(block)}
        self.statements = list(block)
        self.binds: dict[str, list[int]] = {}
        self.reads: dict[str, list[int]] = {}
        self.deleted: set[int] = set()
        known = {} if known is None else known
        for k, stmt in enumerate(block):
            bound, read = names_of(stmt, known)
            for name in bound:
                self.binds.setdefault(name, []).append(k)
            for name in read:
                self.reads.setdefault(name, []).append(k)

    def of(self, stmt) -> int:
        return self.position[id(stmt)]

    def delete(self, stmt) -> None:
        self.deleted.add(self.of(stmt))

    def next_bind(self, after: int, names) -> int | None:
        """The first position after `after` whose statement binds one of `names`."""
        found = [self._next(self.binds.get(name, ()), after) for name in names]
        found = [k for k in found if k is not None]
        return min(found) if found else None

    def readers(self, name: str, after: int):
        """The positions after `after` whose statements read `name`, in order."""
        where = self.reads.get(name, [])
        i = bisect_right(where, after)
        while i < len(where):       # (not a slice: a copy of the rest at every call)
            if where[i] not in self.deleted:
                yield where[i]
            i += 1

    def renamed(self, position: int, new: str) -> None:
        """The statement at `position` now also reads `new` (its reads were renamed)."""
        where = self.reads.setdefault(new, [])
        i = bisect_right(where, position)
        if not (i and where[i - 1] == position):
            insort(where, position)

    def _next(self, where, after):
        for i in range(bisect_right(where, after), len(where)):
            if where[i] not in self.deleted:
                return where[i]
        return None


def names_of(stmt, known: dict) -> tuple[set, set]:
    """_names(stmt), kept in `known` (id(statement) -> (it, bound, read)), where those of
    the statements of an if/for/while are worked out once and joined: the index of a
    block and those of the blocks inside it share them, so that loops nested d deep cost
    one walk of the innermost body, not d + 1. The caller forgets a statement whose names
    change (`forget`)."""
    held = known.get(id(stmt))
    if held is not None and held[0] is stmt:
        return held[1], held[2]
    if isinstance(stmt, (gast.If, gast.For, gast.While)):
        header = [stmt.test] if isinstance(stmt, (gast.If, gast.While)) else \
            [stmt.target, stmt.iter]
        bound, read = _names(header)
        for inner in (stmt.body, stmt.orelse):
            for child in inner:
                more_bound, more_read = names_of(child, known)
                bound |= more_bound
                read |= more_read
    else:
        bound, read = _names(stmt)
    known[id(stmt)] = (stmt, bound, read)
    return bound, read


def forget(stmt, known: dict) -> None:
    """`known` without what it held for `stmt` and the statements inside it (their reads
    were renamed)."""
    todo = [stmt]
    while todo:
        found = todo.pop()
        known.pop(id(found), None)
        if isinstance(found, (gast.If, gast.For, gast.While)):
            todo.extend(found.body)
            todo.extend(found.orelse)


def _names(stmt) -> tuple[set, set]:
    """(the names `stmt` (a node, or a list of them) binds or deletes, the names it
    reads: `x += y` reads x), anywhere inside it, in one walk."""
    bound, read = set(), set()
    for node in (nodes(stmt) if not isinstance(stmt, list) else
                 [n for part in stmt for n in nodes(part)]):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            read.add(node.id)
        elif isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Del)):
            bound.add(node.id)
        elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
            read.add(node.target.id)
    return bound, read
