"""The numba backend: generated code compiled by numba (`grad(f, backend="numba")`).

numba is an optional extra (`pip install 'sgcompiler[jit]'`) and this is the only module
that imports it. The generated NumPy code stays the readable reference; for numba it
differs in three ways only, made here on the final tree (`for_numba`):

    del _tape                            (gone: numba refuses `del`; it frees on return)
    np.multiply(d, 2, out=d)     ->      np.multiply(d, 2, d)      (numba's spelling)
    _tape.append(x)              ->      _tape_x.append(x)         (backend/numba_tapes.py)

and the pipeline leaves out the optimizations whose code numba cannot type (`NOT_FOR_NUMBA`:
per-trip values gathered into one `np.array` for a single matrix product; numba loops
need no such batching).

Where numba cannot compile a generated function (a runtime helper, a tape of mixed types,
a call of another generated function, an argument type it does not know), the NumPy code
runs instead and a `JitFallbackWarning` says once, for that function, why.
"""
from __future__ import annotations

import warnings

import gast

from .numba_tapes import split_tapes

try:
    import numba
    from numba.core.errors import NumbaError
except ImportError:         # the extra is not installed: every function falls back
    numba = None
    NumbaError = ()

BACKENDS = ("numpy", "numba")
NOT_FOR_NUMBA = frozenset({"batch-outer-products", "free-after-last-use"})


class JitFallbackWarning(UserWarning):
    """A generated function runs as NumPy code, not numba-compiled code (the message says
    why); given once per function."""


def check_backend(backend) -> str:
    """`backend` if it is one sgcompiler has, else a ValueError that lists them."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(map(repr, BACKENDS))}, "
                         f"not {backend!r}")
    return backend


def for_numba(tree, refers_to=lambda name: None, facts=None, ints=frozenset()):
    """Rewrite the final tree in place into what numba compiles: no `del` statements,
    ufunc outputs passed by position, a tape per saved name (backend/numba_tapes.py;
    `refers_to(name)`: what a free name of the code refers to; `facts`: name ->
    (shape, dtype) of the primal's values; `ints`: names that only hold ints). Returns
    it."""
    for block in _blocks(tree.body):
        if block:       # (an empty `else` stays empty; an emptied block holds a `pass`)
            block[:] = [stmt for stmt in block if not isinstance(stmt, gast.Delete)] \
                or [gast.Pass()]
    for node in gast.walk(tree):
        if isinstance(node, gast.Call) and [k.arg for k in node.keywords] == ["out"]:
            node.args.append(node.keywords[0].value)
            node.keywords = []
    return split_tapes(tree, refers_to, facts, ints)


def _blocks(body):
    yield body
    for stmt in body:
        for field in ("body", "orelse"):
            if isinstance(getattr(stmt, field, None), list) and \
                    not isinstance(stmt, gast.FunctionDef):
                yield from _blocks(getattr(stmt, field))


def jitted(function, title: str):
    """`function` (generated code) compiled by numba on its first call for each kind of
    arguments, or `function` itself, after one warning, where numba cannot compile it."""
    if numba is None:
        return _Fallback(function, title, "numba is not installed (pip install "
                                          "'sgcompiler[jit]' installs it)")
    return _Jitted(function, title)


class _Fallback:
    """The NumPy code, with the warning given on its first call."""

    def __init__(self, function, title, why):
        self.function, self.title, self.why = function, title, why
        self.__name__ = function.__name__
        self.warned = False

    def __call__(self, *args, **kwargs):
        if not self.warned:
            self.warned = True
            _warn(self.title, self.why)
        return self.function(*args, **kwargs)


class _Jitted:
    """numba's dispatcher for `function`, until it fails to compile for some arguments;
    then the NumPy code for good."""

    def __init__(self, function, title):
        self.function, self.title = function, title
        self.__name__ = function.__name__
        # error_model="numpy": x / 0.0 is inf (with NumPy's warning rules), as in the
        # NumPy code, not a ZeroDivisionError
        self.dispatcher = numba.njit(error_model="numpy")(function)
        self.fallen_back = False

    def __call__(self, *args, **kwargs):
        if self.fallen_back:
            return self.function(*args, **kwargs)
        try:
            return self.dispatcher(*args, **kwargs)
        except NumbaError as exc:       # compiling failed; nothing of the call ran
            self.fallen_back = True
            _warn(self.title, f"numba cannot compile it: {_reason(exc)}")
            return self.function(*args, **kwargs)


def _reason(exc) -> str:
    """The first informative line of numba's message, without its terminal colours."""
    text = str(exc)
    for code in ("\x1b[0m", "\x1b[1m"):
        text = text.replace(code, "")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    useful = [line for line in lines if not line.startswith(("Failed in ", "During:"))]
    return (useful or lines or [type(exc).__name__])[0][:300]


def _warn(title, why):
    warnings.warn(f"{title}: runs as NumPy code, not compiled by numba: {why}",
                  JitFallbackWarning, stacklevel=4)
