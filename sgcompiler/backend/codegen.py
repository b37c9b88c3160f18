"""Final tree -> source text, with the standard library's `ast.unparse`.

(Not astunparse: version 1.6.3 on Python 3.11 prints `x[:, 0]` as `x[(:, 0)]`, a syntax
error.) Comment markers left by the reverse pass become real `# ...` lines, and a first
line says where the code came from; the loader relies on that line (see loader.py).
"""
from __future__ import annotations

import ast

import gast

from ..ir.builders import COMMENT


def to_source(tree, header: str) -> str:
    """The text of `tree` (a function, or a module of functions), preceded by the one-line
    comment `header`."""
    node = gast.gast_to_ast(tree)
    _prepare(node)
    lines = ast.unparse(node).splitlines()
    out = [f"# {header}"]
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith(("'\\x00#", '"\\x00#', '"""\\x00#')):
            text = ast.literal_eval(stripped)[len(COMMENT):]
            out.append(line[: len(line) - len(stripped)] + "# " + text)
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def _prepare(root):
    """Make `root` printable, in one pass: a negative number constant becomes a negation
    (-2.0 as a constant prints as `-2.0`, so `(-2.0) ** 2` would print as `-2.0 ** 2`, which
    Python reads as -(2.0 ** 2)), and statements get the line numbers `ast.unparse` reads
    (faster than `ast.fix_missing_locations` on every node)."""
    todo = [root]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.stmt) and not hasattr(node, "lineno"):
            node.lineno = 0
        for field, value in ast.iter_fields(node):
            if isinstance(value, list):
                for k, item in enumerate(value):
                    if isinstance(item, ast.AST):
                        value[k] = _positive(item)
                        todo.append(value[k])
            elif isinstance(value, ast.AST):
                new = _positive(value)
                if new is not value:
                    setattr(node, field, new)
                todo.append(new)


def _positive(node):
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
            return ast.UnaryOp(op=ast.USub(), operand=ast.Constant(-value))
    return node
