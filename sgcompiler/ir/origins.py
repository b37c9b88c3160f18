"""Where generated code came from: the user's file and line of each line of a text the
loader registered (backend/loader.py fills the map), and the place and source text a
line of generated code stands for, read back to the `# line N: ...` comment above it and
to its text's header (`# gradient of f (model.py:3) ...`). Errors (errors.py) and runtime
refusals (backend/located.py) use it to name the user's function and line, not the
generated one's.
"""
from __future__ import annotations

import linecache
import os
import re

GENERATED = "<sgcompiler "      # how the loader names the texts it registers
# registered text's filename -> (the user's filename, {line of the text: user's line})
_ORIGINS: dict = {}
_HEADER = re.compile(r"# (?:gradient|forward and backward|tangent) of (.+?) "
                     r"\(([^()]*):(\d+)\)")
_LINE = re.compile(r"\s*# line (\d+): (.*)$")


def register(filename: str, origins: tuple) -> None:
    """Register (the user's filename, {line of the text: user's line}) for a text."""
    _ORIGINS[filename] = origins


def user_line(filename: str, number: int | None) -> tuple:
    """(filename, line) of the user's source that line `number` of registered text came
    from (through code made from code, as grad of grad of grad makes), or
    (filename, number) itself when it is the user's; (filename, None) where unknown."""
    while filename in _ORIGINS:
        filename, lines = _ORIGINS[filename]
        number = None if number is None else lines.get(number)
    return filename, number


def is_generated(filename: str) -> bool:
    """Whether `filename` is text registered with the user's lines it came from."""
    return filename in _ORIGINS


def where(lines: list[str], lineno: int, filename: str, user: int | None
          ) -> tuple[str | None, str]:
    """`f (file:line)` and the source text for line `lineno` (1-based) of a generated
    text, whose statement came from line `user` of the user's `filename` where known;
    (None, "") when the text has no header."""
    source = None
    for text in reversed(lines[:lineno]):
        if source is None and text.startswith("def "):
            source = ()         # the function starts above any `# line` comment: none
        elif source is None:
            found = _LINE.match(text)
            source = (found.group(1), found.group(2).rstrip()) if found else None
        header = _HEADER.match(text)
        if header:
            name, shown, first = header.groups()
            if not source and user is not None:     # (through code made from code too)
                source = (str(user), linecache.getline(filename, user).strip())
                shown = os.path.basename(filename) if filename.endswith(".py") else shown
            if source:
                return f"{name} ({shown}:{source[0]})", source[1]
            return f"{name} ({shown}:{first})", ""
    return None, ""


def user_place(filename: str, lineno: int | None) -> tuple[str | None, str]:
    """`f (file:line)` and the user's source text for line `lineno` of generated text
    `filename`; (None, "") when it is not generated text with a header."""
    if lineno is None or not filename.startswith(GENERATED):
        return None, ""
    return where(linecache.getlines(filename), lineno, *user_line(filename, lineno))
