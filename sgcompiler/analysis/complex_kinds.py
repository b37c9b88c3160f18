"""Which variables of code compiled in complex mode may hold complex values.

    z: complex128 (an argument)      x: float64
    a = np.abs(z)       -> real: abs, real, imag, angle, irfft, hfft, abs_squared give reals
    b = a * x           -> real: every operand is real
    c = b * z           -> may be complex
    s = np.fft.rfft(x)  -> may be complex: a transform of a real array is complex

The reverse pass needs no complex-mode guard (`real_like`, `real_only`) on a statement whose
result and operands are all real. Conservative: an argument of unknown dtype, a global, a
user function's result and anything computed from them may be complex.
"""
from __future__ import annotations

import gast
import numpy as np

from .. import runtime
from .ops import RULE, assignments, describe_stmt, target_of
from .sizes import WEAK
from ..ir.blocks import walk

_REAL_RESULTS = (np.abs, np.absolute, np.real, np.imag, np.angle, np.fft.irfft, np.fft.irfft2,
                 np.fft.irfftn, np.fft.hfft, runtime.abs_squared)
_MAKERS = (np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.fft2, np.fft.ifft2,
           np.fft.fftn, np.fft.ifftn, np.fft.rfft2, np.fft.rfftn, np.fft.ihfft, np.linalg.eig, np.linalg.eigvals, runtime.astype,
           np.asarray, np.array, np.full, np.full_like, *([np.astype] if hasattr(np, "astype")
                                                         else []))
# SciPy's functions, by name (only the rules/scipy_* modules import SciPy): sqrtm and logm
# of a real matrix are complex where it has negative eigenvalues
_NAMED_MAKERS = frozenset({"scipy.linalg.sqrtm", "scipy.linalg.logm"})


def maybe_complex(norm, resolution, concrete) -> frozenset:
    """The names of `norm` (a function in normal form) that may hold complex values, given
    `concrete` (name -> (shape, dtype) of what the shapes pass knows)."""
    local = set(norm.params) | {target_of(s) for s in assignments(norm.body)} | \
        set(_loop_targets(norm.body))
    found = {p for p in norm.params if not _real(concrete.get(p))}
    statements = [(s, describe_stmt(s, resolution, norm.fn)) for s in assignments(norm.body)]
    loops = list(_loop_targets(norm.body).items())
    changed = True
    while changed:          # (a loop carries values around: until nothing changes)
        changed = False
        for stmt, op in statements:
            target = target_of(stmt)
            if target not in found and _makes_complex(stmt, op, found, local):
                found.add(target)
                changed = True
        for target, iterable in loops:
            if target not in found and _reads_complex(iterable, found, local):
                found.add(target)
                changed = True
    return frozenset(found)


def _real(known) -> bool:
    return known is not None and (known[1] is WEAK or isinstance(known[1], np.dtype)
                                  and known[1].kind in "fiub")


def _makes_complex(stmt, op, found, local) -> bool:
    if op.kind == RULE and any(op.rule.primitive is f for f in _REAL_RESULTS):
        return False
    if op.kind == RULE and (any(op.rule.primitive is f for f in _MAKERS) or
                            op.rule.name in _NAMED_MAKERS):
        return True
    if isinstance(stmt.value, gast.Call) and op.kind != RULE:
        return True         # a user function, a function with no rule: anything
    return _reads_complex(stmt, found, local)


def _reads_complex(node, found, local) -> bool:
    """Whether `node` reads a value that may be complex: a complex literal, a name in
    `found`, or a name that is not local (a global); the functions it calls aside."""
    calls = {id(n.func) for n in walk(node) if isinstance(n, gast.Call)}
    stack = [node]
    while stack:
        n = stack.pop()
        if id(n) in calls:
            continue
        if isinstance(n, gast.Constant) and isinstance(n.value, complex):
            return True
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and \
                (n.id in found or n.id not in local):
            return True
        stack.extend(gast.iter_child_nodes(n))
    return False


def _loop_targets(body) -> dict:
    """name -> the iterable of each `for name in iterable` in `body`, nested ones too."""
    found = {}
    for stmt in body:
        if isinstance(stmt, gast.For):
            for n in walk(stmt.target):
                if isinstance(n, gast.Name):
                    found[n.id] = stmt.iter
        for block in ("body", "orelse"):
            if isinstance(stmt, (gast.For, gast.While, gast.If)):
                found.update(_loop_targets(getattr(stmt, block)))
    return found
