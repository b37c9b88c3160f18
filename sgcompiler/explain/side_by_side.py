"""The side-by-side view: each source line of a function next to the adjoint statements
the compiler generated for it.

    sgcompiler samples/stable_softmax.py:softmax_loss_stable --side-by-side

The generated gradient marks each adjoint block with a `# line N: ...` comment; the
statements after the mark, up to the next one, are line N's. What comes before any mark
(the seeds of the adjoints) is shown beside the `def` line, and the scaffolding of a
reversed loop or branch (`for _ in range(_trips):`, a tape pop) beside the loop or `if`
of the source that it reverses. A line with none says why, from the facts of the activity
analysis that the compiler itself used: `no adjoint: stop_gradient` (the line is under a
stop_gradient, or made inactive by one), `no adjoint: inactive` (nothing on it depends on
a wrt argument or reaches the result), or `no adjoint of its own` (active, but its adjoint
is the identity, or was folded into a neighbouring line's statements), and for a loop
`no adjoint: nothing in the loop is active`. A line where no
statement starts (`else:`, a comment, the rest of a long expression) says nothing.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import gast

from ..analysis.ops import STOPPED
from ..backend.reading import indent as _indent
from ..analysis.why import stop_cuts
from ..pipeline import analyse, compile_gradient
from .report import called

_MARK = re.compile(r"^(\s*)# line (\d+): ")
_COMPOUND = (gast.For, gast.While, gast.If, gast.With, gast.Try)
WIDTH = 56          # the widest source column; longer lines are cut with an ellipsis


@dataclass(frozen=True)
class Row:
    """One source line and what was generated for it."""

    number: int
    text: str               # the source line, as written
    adjoint: tuple          # the generated statements (their text, indented as generated)
    why_none: str = ""      # when `adjoint` is empty: the reason ("" for blank lines)


@dataclass(frozen=True)
class Section:
    """The rows of one function: the one differentiated, or a helper it goes through."""

    title: str              # "" for the function itself
    rows: tuple             # Row


def side_by_side_rows(fn, wrt, scalars=frozenset(), arrays=()) -> tuple:
    """A Row for each line of `fn`'s source, for its gradient with respect to `wrt`."""
    return side_by_side_sections(fn, wrt, scalars, arrays)[0].rows


def side_by_side_sections(fn, wrt, scalars=frozenset(), arrays=()) -> tuple:
    """A Section for `fn`, then one for each user function its gradient goes through
    (each once, in the order the code calls them): its source lines beside the
    statements of its backward function, from the same generated code."""
    found = analyse(fn, tuple(wrt), scalars, arrays)
    code = compile_gradient(fn, tuple(wrt), scalars, value=False, arrays=arrays).source
    lines = code.splitlines()
    start = next((k + 1 for k, t in enumerate(lines) if t.strip() == "# backward"), None)
    sections = [Section("", _rows(found, lines, start))]
    seen = {(fn.__code__, tuple(wrt))}
    pending = list(_helpers(found))
    while pending:
        callee, active = pending.pop(0)
        if (callee.__code__, active) in seen:
            continue
        seen.add((callee.__code__, active))
        inner = analyse(callee, active)
        start = _backward_start(lines, inner.source, active)
        if start is None:
            continue            # (inlined, or its pieces are those of another call)
        src = inner.source
        title = (f"differentiated through: {src.name} ({src.short_filename}:"
                 f"{src.firstlineno}) for {', '.join(active)}, beside its backward "
                 f"function {lines[start - 1].split('(')[0][4:]}")
        sections.append(Section(title, _rows(inner, lines, start)))
        pending.extend(_helpers(inner))
    return tuple(sections)


def _rows(found, lines, start) -> tuple:
    """A Row for each source line of the analysed function, beside the backward sweep
    that starts at `lines[start]`."""
    src = found.source
    first, last = src.tree.lineno, getattr(src.tree, "end_lineno", None) or src.tree.lineno
    by_line = _attributed(lines, start, _enclosing(src.tree), first)
    stopped, active = _line_facts(found.activity)
    stated = {f.line for f in found.activity.flows}     # lines where a statement starts
    loops = {n.lineno: getattr(n, "end_lineno", None) or n.lineno
             for n in gast.walk(src.tree) if isinstance(n, (gast.For, gast.While))}
    rows, margin = [], _indent(src.lines[first - 1])
    for number in range(first, last + 1):
        text = src.lines[number - 1].rstrip("\n")[margin:]
        adjoint = tuple(by_line.get(number, ()))
        if number in loops and not adjoint and \
                not any(by_line.get(n) for n in range(number, loops[number] + 1)):
            why = "no adjoint: nothing in the loop is active"
        elif adjoint or number == first or number not in stated:
            why = ""
        else:
            why = _why_none(number, stopped, active)
        rows.append(Row(number, text, adjoint, why))
    return tuple(rows)


def _helpers(found):
    """(user function, its active parameters) for each call of the analysed function
    that the gradient goes through, as explain/report.py follows them."""
    return [(callee, active) for _, callee, active in called(found.activity)]


def _backward_start(lines, src, active):
    """The index of the first line of the body of the backward function made for `src`
    with `active` parameters (after the header its pieces have), or None."""
    where = f"({src.short_filename}:{src.firstlineno}) for {', '.join(active)}"
    for k, text in enumerate(lines):
        if not (text.startswith("# forward and backward of ") and where in text):
            continue
        if not text[text.index(where) + len(where):].startswith((", generated", " with ")):
            continue        # (a piece for more parameters: "for W, b")
        return next((j + 1 for j in range(k + 1, len(lines))
                     if lines[j].startswith("def ") and "_backward(" in lines[j]), None)
    return None


def side_by_side_text(rows, color: bool = False) -> str:
    """The rows as two columns; ANSI colours when `color` (for a terminal)."""
    width = min(WIDTH, max((len(r.text.rstrip()) for r in rows), default=0))
    paint = _Paint(color)
    out = []
    for row in rows:
        left = _cut(row.text.rstrip(), width).ljust(width)
        number = f"{row.number:4d}  "
        right = list(row.adjoint) or ([paint.why(row.why_none)] if row.why_none else [""])
        right = [r if not row.adjoint else paint.code(r) for r in right]
        out.append(f"{paint.dim(number)}{paint.source(left)} {paint.dim('|')} {right[0]}"
                   .rstrip())
        out.extend(f"{' ' * (len(number) + width)} {paint.dim('|')} {r}".rstrip()
                   for r in right[1:])
    return "\n".join(out) + "\n"


def side_by_side_sections_text(sections, color: bool = False) -> str:
    """The sections one after another: the function's rows as side_by_side_text prints
    them, then each helper's under its title."""
    paint = _Paint(color)
    parts = [side_by_side_text(sections[0].rows, color)]
    for section in sections[1:]:
        parts.append(f"\n{paint.dim(section.title)}\n" + side_by_side_text(section.rows, color))
    return "".join(parts)


def _attributed(lines, start, enclosing: dict, def_line: int) -> dict:
    """{source line: [generated statement text]} from the sweep that starts at
    `lines[start]` (up to the end of its function)."""
    if start is None or start >= len(lines):
        return {}
    opener = lines[start - 1]         # "# backward", or the backward function's def
    reader = _Reader(_indent(opener) + 4 * opener.startswith("def "), enclosing, def_line)
    for text in lines[start:]:
        if not text.strip():
            continue
        if _indent(text) < reader.base:
            break                               # the next function: a helper's pieces
        if not text.lstrip().startswith("del "):     # memory management: not shown
            reader.read(text)
    reader.close(reader.base)
    return reader.by_line


class _Block:
    """A generated loop or branch of the backward sweep, and the source line it reverses
    (None until the first mark inside it tells)."""

    def __init__(self, indent: int, owner: int | None):
        self.indent, self.owner, self.pending = indent, owner, []


class _Reader:
    """Reads the backward sweep line by line, giving each line its source line."""

    def __init__(self, base: int, enclosing: dict, def_line: int):
        self.base, self.enclosing, self.def_line = base, enclosing, def_line
        self.by_line, self.marks, self.blocks = {}, {}, []
        self.closed = None          # the block that closed last (for its `else:`)

    def read(self, text: str) -> None:
        indent, stripped = _indent(text), text[self.base:]
        self.close(indent)
        mark = _MARK.match(text)
        if mark:
            self.mark(indent, int(mark.group(2)))
        elif stripped.rstrip().endswith(":") and \
                stripped.lstrip().startswith(("for ", "while ", "if ", "elif ", "else")):
            continuing = stripped.lstrip().startswith(("elif ", "else")) and self.closed
            block = _Block(indent, self.closed.owner if continuing else None)
            self.put(block if block.owner is None else block.owner, stripped)
            self.blocks.append(block)
        elif indent == self.base and stripped.startswith("return "):
            self.put(self.def_line, stripped)
        else:
            self.put(self.owner_at(indent), stripped)

    def close(self, indent: int) -> None:
        """Close the blocks that `indent` has left."""
        while self.blocks and self.blocks[-1].indent >= indent:
            block = self.blocks.pop()
            if block.owner is None:
                self.resolve(block, self.marks.get(block.indent, self.def_line))
            self.marks = {i: n for i, n in self.marks.items() if i <= block.indent}
            self.marks[block.indent] = block.owner   # what follows it reverses its iterable
            self.closed = block
        self.marks = {i: n for i, n in self.marks.items() if i <= indent}

    def mark(self, indent: int, number: int) -> None:
        self.marks[indent] = number
        self.closed = None
        for block in reversed(self.blocks):
            if block.owner is None:
                same = self.marks.get(block.indent) == number     # a comprehension's loop
                self.resolve(block, number if same else
                             _owner(number, (indent - block.indent) // 4, self.enclosing))

    def owner_at(self, indent: int):
        if indent in self.marks:
            return self.marks[indent]
        block = self.blocks[-1] if self.blocks else None
        if block is not None:
            return block if block.owner is None else block.owner
        return self.def_line                    # the seeds

    def put(self, owner, text: str) -> None:
        if isinstance(owner, _Block):
            owner.pending.append(text)
        else:
            self.by_line.setdefault(owner, []).append(text)

    def resolve(self, block: _Block, owner: int) -> None:
        block.owner = owner
        for text in block.pending:
            self.by_line.setdefault(owner, []).append(text)
        block.pending = []


def _owner(number: int, levels: int, enclosing: dict) -> int:
    """The source line a piece of scaffolding `levels` blocks outside line `number`'s
    statement belongs to: the compound statement that many levels up (the line itself
    when the source has fewer: a comprehension's loop is on its own line)."""
    owner = number
    for _ in range(max(levels, 0)):
        if owner not in enclosing:
            break
        owner = enclosing[owner]
    return owner


def _enclosing(tree) -> dict:
    """{line of a statement: line of the compound statement whose block holds it}."""
    parents = {}
    for node in gast.walk(tree):
        if not isinstance(node, _COMPOUND):
            continue
        for block in (getattr(node, "body", []), getattr(node, "orelse", []),
                      getattr(node, "finalbody", [])):
            for stmt in block:
                for inner in gast.walk(stmt):
                    if isinstance(inner, gast.stmt):
                        parents.setdefault(inner.lineno, node.lineno)
    return {line: parent for line, parent in parents.items() if line != parent}


def _line_facts(act) -> tuple[set, set]:
    """(lines made inactive by, or under, a stop_gradient; lines with an active
    statement)."""
    stopped = set()
    for cut in stop_cuts(act):
        stopped.add(cut.line)
        stopped.update(act.flows[j].line for j in cut.cut)
    stopped.update(f.line for f in act.flows if f.kind == STOPPED)
    active = {f.line for f in act.flows if f.target in act.active}
    return stopped, active


def _why_none(number: int, stopped: set, active: set) -> str:
    if number in active:
        return "no adjoint of its own (the identity, or folded into a neighbouring line)"
    if number in stopped:
        return "no adjoint: stop_gradient"
    return "no adjoint: inactive"


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


class _Paint:
    """ANSI colours, or nothing."""

    def __init__(self, on: bool):
        self.on = on

    def _wrap(self, code: str, text: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.on and text else text

    def dim(self, text):
        return self._wrap("2", text)

    def source(self, text):
        return self._wrap("36", text)

    def code(self, text):
        return self._wrap("32", text)

    def why(self, text):
        return self._wrap("33", text)
