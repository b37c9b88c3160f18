"""Where in the user's code a runtime helper refused (errors.RuntimeRefusal): the generated
line that called it, read back to the `# line N: ...` comment above it and to its text's
header (`# gradient of f (model.py:3) ...`), so that a refusal known only at run time
names the function, file and line as a compile-time one does. Code with no such comment
above the line (a primal sweep, tangent code) is placed by the user's line its statement
came from, registered with the text (loader.user_line):

    pad_grad(dresult, x, 1, m)     ->   helper (model.py:3): the gradient of np.pad(mode=
      raised RuntimeRefusal              'linear_ramp') is not supported; ... [in: ...]
"""
from __future__ import annotations

import linecache
import os
import re

from ..errors import RuntimeRefusal, SGCompilerError
from .loader import user_line

GENERATED = "<sgcompiler "      # how loader.compile_source names the texts it registers
_HEADER = re.compile(r"# (?:gradient|forward and backward|tangent) of (.+?) "
                     r"\(([^()]*):(\d+)\)")
_LINE = re.compile(r"\s*# line (\d+): (.*)$")


def located(exc: RuntimeRefusal) -> SGCompilerError:
    """`exc` as an SGCompilerError that starts with the place of the user's line whose
    generated code raised it (the innermost generated frame of its traceback)."""
    place = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith(GENERATED):
            place = tb.tb_frame.f_code.co_filename, tb.tb_lineno
        tb = tb.tb_next
    where, text = _where(linecache.getlines(place[0]), place[1], *user_line(*place)) \
        if place else (None, "")
    if where is None:
        return SGCompilerError(str(exc))
    return SGCompilerError(f"{where}: {exc} [in: {text}]" if text else f"{where}: {exc}")


def _where(lines: list[str], lineno: int, filename: str, user: int | None
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
