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

from ..errors import RuntimeRefusal, SGCompilerError
from ..ir.origins import GENERATED, user_line, where


def located(exc: RuntimeRefusal) -> SGCompilerError:
    """`exc` as an SGCompilerError that starts with the place of the user's line whose
    generated code raised it (the innermost generated frame of its traceback)."""
    place = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith(GENERATED):
            place = tb.tb_frame.f_code.co_filename, tb.tb_lineno
        tb = tb.tb_next
    at, text = where(linecache.getlines(place[0]), place[1], *user_line(*place)) \
        if place else (None, "")
    if at is None:
        return SGCompilerError(str(exc))
    return SGCompilerError(f"{at}: {exc} [in: {text}]" if text else f"{at}: {exc}")
