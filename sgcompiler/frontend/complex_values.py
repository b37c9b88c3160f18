"""Whether a function may compute with complex values: then it is compiled in complex mode
(rules/registry.py), which keeps every other function's code as it is.

Read before the front end, from what the function is made of: a complex argument (its
dtype, from the call), a complex literal (`1j`), a name that makes complex values
(`np.fft.fft`, `.imag`, `np.complex128`, `astype("complex64")`, `np.linalg.eig`), a
complex number or array among its globals, closure cells and defaults, and the same for
the functions it refers to (a helper that returns a spectrum makes its caller complex).
"""
from __future__ import annotations

import numbers
import types

import numpy as np

from .resolve import is_library

_MAKERS = frozenset({
    "fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2",
    "rfftn", "irfftn", "hfft", "ihfft", "imag", "angle", "eig", "eigvals", "complex",
    "complex64", "complex128", "complex256", "complex_", "csingle", "cdouble",
    "clongdouble", "complexfloating", "iscomplexobj", "roots", "hilbert", "emath", "scimath",
})
_DEPTH = 8      # functions followed through the names they refer to


def may_hold_complex(fn, arrays=()) -> bool:
    """Whether `fn`, called with arguments of `arrays` ((parameter, shape, dtype) as the
    compiler is given them), may compute with complex values."""
    if any(isinstance(dtype, np.dtype) and dtype.kind == "c" for _, _, dtype in arrays):
        return True
    return _makes_complex(fn, set(), _DEPTH)


def _makes_complex(fn, seen, depth) -> bool:
    code = getattr(fn, "__code__", None)
    if code is None or id(code) in seen or depth == 0:
        return False
    seen.add(id(code))
    if _code_makes_complex(code):
        return True
    values = [getattr(fn, "__globals__", {}).get(name) for name in _names(code)]
    values += [c.cell_contents for c in (fn.__closure__ or ()) if _filled(c)]
    values += list(fn.__defaults__ or ()) + list((fn.__kwdefaults__ or {}).values())
    for value in values:
        if _complex_value(value):
            return True
        if isinstance(value, types.FunctionType) and not _library(value) and \
                _makes_complex(value, seen, depth - 1):
            return True
    return False


def _code_makes_complex(code) -> bool:
    if _MAKERS.intersection(code.co_names):
        return True
    for const in code.co_consts:
        if isinstance(const, complex) or isinstance(const, str) and _complex_dtype_name(const):
            return True
        if isinstance(const, types.CodeType) and _code_makes_complex(const):
            return True
    return False


def _names(code):
    """The global names `code` (and the code nested in it) reads."""
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _names(const)


def _library(fn) -> bool:
    """A library function (sgcompiler's runtime helpers too): it has rules, not a body
    the compiler reads."""
    return is_library(fn) or (getattr(fn, "__module__", None) or "").startswith("sgcompiler.")


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _complex_dtype_name(text) -> bool:
    """`astype("complex64")`, `dtype="c16"`: a string that names a complex dtype."""
    return text.startswith("complex") or text in ("c8", "c16", "c32", "F", "D", "G")


def _complex_value(value, depth=2) -> bool:
    """A complex number or array, or (`depth` levels down) a container or an object that
    holds one (a dict of parameters, a model's attributes)."""
    if isinstance(value, (np.ndarray, np.generic)):
        return value.dtype.kind == "c"
    if isinstance(value, numbers.Number):
        return isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real)
    if depth == 0 or isinstance(value, (str, bytes, type, types.ModuleType,
                                        types.FunctionType)):
        return False
    if isinstance(value, dict):
        items = list(value.values())
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        items = list(getattr(value, "__dict__", {}).values())
    return any(_complex_value(v, depth - 1) for v in items[:64])
