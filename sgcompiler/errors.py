"""Errors raised by the compiler, and the one helper that attaches a source location.

Every user-facing compile error goes through `error_at`, so no message loses its place:
``f (model.py:14): 'yield' makes f a generator ...; return a value instead``.
"""
from __future__ import annotations

from .ir.origins import user_place


class SGCompilerError(Exception):
    """A function (or a construct in it) that sgcompiler cannot differentiate correctly.

    `problems` holds one line per problem found (the compiler reports them all at once).
    """

    def __init__(self, message: str, problems: tuple[str, ...] = ()):
        super().__init__(message)
        self.problems = problems or (message,)


def location(fn, node) -> str:
    """``name (file:line)`` for a node of the function described by `fn` (a FunctionSource)."""
    line = getattr(node, "lineno", None) if node is not None else None
    if line is None:
        return f"{fn.name} ({fn.filename})"
    return f"{fn.name} ({fn.short_filename}:{line})"


def describe(fn, node, message: str) -> str:
    """One line: location, message, and the offending source text when there is one. In
    code sgcompiler generated (grad of grad, hessian), the location and text are the
    user's line that code came from, and the generated line follows them."""
    line = getattr(node, "lineno", None) if node is not None else None
    text = fn.line_text(line) if node is not None else ""
    users, user_text = user_place(fn.filename, line)
    if users is not None:
        quoted = f"{user_text}; " if user_text else ""
        return f"{users}: {message} [in: {quoted}generated {fn.name}: {text}]"
    where = location(fn, node)
    if text:
        return f"{where}: {message} [in: {text}]"
    return f"{where}: {message}"


def error_at(node, fn, message: str) -> SGCompilerError:
    """An SGCompilerError located at `node` of function `fn`; the caller raises it."""
    return SGCompilerError(describe(fn, node, message))


def errors_at(problems: list[str]) -> SGCompilerError:
    """Several located problems (from `describe`) as one error, one line each."""
    return SGCompilerError("\n".join(problems), tuple(problems))


class SourceUnavailable(SGCompilerError):
    """A function's (or lambda's) source cannot be read. For a user function called from a
    differentiated one, the caller re-raises it with the place of the call."""


class RuntimeRefusal(SGCompilerError):
    """Raised by a runtime helper for what only run time shows (an option held in a
    variable, a matrix with a complex spectrum). Its message has no place: the API adds
    the file and line from the generated code that called the helper (backend/located.py)."""
