"""Source text -> live Python functions, with the text registered in linecache.

The generated functions must see the user's module globals as they are at call time (not
a copy), the user's closure cells, and the objects that inlined rules refer to. So the text
is compiled inside a factory whose parameters are those extra names, and each inner code
object is then bound to the user's globals with real closure cells. The factory's `def`
line takes the place of the header comment, so line numbers in tracebacks and pdb match
the registered text exactly.
"""
from __future__ import annotations

import hashlib
import linecache
import types

from ..ir.origins import is_generated, register, user_line  # noqa: F401 (theirs)


def compile_source(source: str, filename: str, free_names, origins: tuple | None = None
                   ) -> dict:
    """Compile `source` (a header comment, then top-level defs) to {name: code}.

    `free_names` are the names the functions may take from outside their module: the
    user's closure variables and the objects inlined rules use. The text is registered in
    linecache under `filename` (with a digest of the text added inside its <>), so
    tracebacks and pdb show it; `origins`, (the user's filename, {line of the text: the
    user's line}), with it (`user_line`).
    """
    # a name of its own for each text: code for other shapes must not take its lines
    filename = f"{filename[:-1]} {hashlib.sha1(source.encode()).hexdigest()[:6]}>" \
        if filename.endswith(">") else filename
    # "\n" only, as Python's tokenizer: str.splitlines would also split at \x0c or U+2028
    lines = source.split("\n")
    if lines[-1] == "":
        lines.pop()
    wrapped = [f"def _sg_factory({', '.join(sorted(free_names))}):"]
    wrapped += ["    " + line if line else line for line in lines[1:]]
    wrapped.append("    pass")
    code = compile("\n".join(wrapped) + "\n", filename, "exec")
    factory = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    linecache.cache[filename] = (len(source), None, [line + "\n" for line in lines], filename)
    if origins is not None:
        register(filename, origins)
    return {c.co_name: c for c in factory.co_consts if isinstance(c, types.CodeType)}


def bind(code: types.CodeType, fn, extra: dict):
    """A function running `code` with `fn`'s globals, closure cells and defaults.

    An `extra` value that is itself a cell is used as the cell (it is filled later: a
    function that calls itself refers to its own generated code this way)."""
    closure = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    cells = tuple(closure[v] if v in closure else
                  extra[v] if isinstance(extra[v], types.CellType) else
                  types.CellType(extra[v]) for v in code.co_freevars)
    function = types.FunctionType(code, fn.__globals__, code.co_name, fn.__defaults__, cells)
    function.__kwdefaults__ = fn.__kwdefaults__
    return function


def function_from_text(text: str, name: str, namespace: dict, tag: str):
    """The function `name` defined by `text`, run in `namespace` (its globals), with the
    text registered in linecache under a name with its digest, so that inspect (and so
    the compiler) can read its source; for functions sgcompiler writes itself
    (check_grads' directional derivatives)."""
    digest = hashlib.sha1(text.encode()).hexdigest()[:12]
    filename = f"<sgcompiler {tag} {digest}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    exec(compile(text, filename, "exec"), namespace)
    return namespace[name]
