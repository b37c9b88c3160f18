"""Final tree -> source text, with the standard library's `ast.unparse`.

(Not astunparse: version 1.6.3 on Python 3.11 prints `x[:, 0]` as `x[(:, 0)]`, a syntax
error.) Comment markers left by the reverse pass become real `# ...` lines, and a first
line says where the code came from; the loader relies on that line (see loader.py). The
text is the same on every supported Python: a tuple target prints bare (`a, b = f(x)`,
`for i, v in ...`), as Python 3.11 prints it, where 3.10 writes `(a, b) = f(x)`.
"""
from __future__ import annotations

import ast
import re

from ..ir.ast_tree import to_printable
from ..ir.builders import COMMENT

_MARK = re.compile(r"^\s*# line (\d+): ")


def to_source(tree, header: str, origins=None) -> str:
    """The text of `tree` (a function, or a module of functions), preceded by the comment
    `header` (one comment line per line of it). `origins`, if given, gets {line of the
    text: the line of the user's file its statement came from}: a statement's own line,
    else that of the `# line N:` mark above it (for explain/, which reads code made to
    be read again as the user's lines, and backend/located.py, which names the line of a
    run-time refusal); a dict is filled now, an `Origins` when it is first read."""
    node = to_printable(tree)
    # split at "\n" only: str.splitlines also splits at \x0c, U+2028 and others, which
    # Python's tokenizer does not (unparse escapes them in strings, but not in docstrings)
    lines = ast.unparse(node).split("\n")
    out = [f"# {comment_text(line)}" for line in header.split("\n")]
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith(("'\\x00#", '"\\x00#', '"""\\x00#')):
            text = ast.literal_eval(stripped)[len(COMMENT):]
            out.append(line[: len(line) - len(stripped)] + "# " + comment_text(text))
        else:
            out.append(line)
    text = "\n".join(out) + "\n"
    if isinstance(origins, Origins):
        origins.keep(_own_lines(node), text)
    elif origins is not None:
        origins.update(_origins(_own_lines(node), text))
    return text


class Origins:
    """{line of a text: the user's line}, worked out when first read (a refusal is rare):
    compiling keeps only the user's line of each statement, not a second parse."""

    def __init__(self):
        self._own, self._text, self._found = (), "", None

    def keep(self, own: list, text: str):
        self._own, self._text = own, text

    def get(self, number, default=None):
        if self._found is None:
            self._found = _origins(self._own, self._text) if self._text else {}
        return self._found.get(number, default)


def _statements(node):
    """The statements under `node`, in one order: the same for a tree and for its printed
    text parsed again."""
    out, todo = [node] if isinstance(node, ast.stmt) else [], [node]
    while todo:
        found = todo.pop()
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            for child in reversed(getattr(found, field, None) or ()):
                if isinstance(child, ast.stmt):
                    out.append(child)
                if isinstance(child, ast.AST):
                    todo.append(child)
    return out


def _own_lines(node) -> list:
    """The user's line of each statement `node` prints (0: none), comments left out."""
    return [getattr(s, "lineno", 0) or 0 for s in _statements(node) if not _comment(s)]


def _origins(own_lines: list, text: str) -> dict:
    """{line of `text`: the user's line} for the statements printed as `text`, whose own
    user's lines are `own_lines` (_own_lines)."""
    printed = _statements(ast.parse(text))
    if len(own_lines) != len(printed):
        return {}
    own = {b.lineno: a for a, b in zip(own_lines, printed) if a}
    found, mark = {}, None
    starts = {s.lineno for s in printed}
    for number, line in enumerate(text.split("\n"), 1):
        matched = _MARK.match(line)
        if matched:
            mark = int(matched.group(1))
        elif line.startswith(("def ", "# ")):
            mark = None         # (a header, or the next function)
        if number in starts and (number in own or mark is not None):
            found[number] = own.get(number, mark)
    return found


def _comment(stmt) -> bool:
    """A comment marker of the reverse pass (printed as a comment, not a statement)."""
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and \
        isinstance(stmt.value.value, str) and stmt.value.value.startswith(COMMENT)


def comment_text(text: str) -> str:
    """`text` safe to put in a comment: a character that a tool may take as a line break
    (\\r, \\x0c, \\x85, U+2028, ...) or that does not show (a bidirectional override) is
    written as its escape, so a source line quoted in a comment can never become code, and
    the text compiled is the text printed, line for line."""
    return "".join(c if c.isprintable() or c == "\t" else
                   c.encode("unicode_escape").decode("ascii") for c in text)
