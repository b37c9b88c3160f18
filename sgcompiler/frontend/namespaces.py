"""`xp = array_namespace(x)` inside a function: the array API's way of writing code for
any array library. Runs right after parsing, with contexts.py:

    xp = array_namespace(x, w)                  (dropped)
    return xp.sum(xp.exp(x) * w)       ->       return xp.sum(xp.exp(x) * w)

The assignment (of `array_api_compat.array_namespace(...)`, or of `x.__array_namespace__()`)
is dropped and the name `xp` is bound, as a name the compiler introduced, to NumPy: NumPy 2
has the standard's names (np.acos, np.concat, np.permute_dims), so `xp.exp` gets np.exp's
rule, and NumPy arrays run the code as it reads. For arrays of another library the
generated code reaches NumPy through the arguments' namespace (backend/namespace.py), so
`xp` is that namespace again. A name assigned more than once is left alone (resolve then
refuses its calls, naming them).
"""
from __future__ import annotations

from dataclasses import replace

import gast
import numpy as np

from .source import FunctionSource
from ..ir.blocks import walk

_FINDERS = frozenset({"array_namespace", "get_namespace"})


def read_namespaces(fn: FunctionSource) -> FunctionSource:
    """`fn` with its top-level `xp = array_namespace(...)` statements dropped and `xp`
    bound to NumPy."""
    found = {stmt.targets[0].id: stmt for stmt in fn.tree.body
             if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
             and isinstance(stmt.targets[0], gast.Name) and _finds_namespace(fn, stmt.value)}
    if not found:
        return fn
    stores = {}
    for node in walk(fn.tree):
        if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load):
            stores[node.id] = stores.get(node.id, 0) + 1
    params = {a.id for a in fn.tree.args.args + fn.tree.args.kwonlyargs}
    names = {n for n in found if stores.get(n) == 1 and n not in params}
    if not names:
        return fn
    fn.tree.body = [s for s in fn.tree.body if not any(found.get(n) is s for n in names)]
    return replace(fn, introduced={**fn.introduced, **dict.fromkeys(names, np)})


def _finds_namespace(fn, call) -> bool:
    """Whether `call` is `x.__array_namespace__()` or array_api_compat's
    `array_namespace(...)` (`get_namespace`), however it is imported."""
    if not isinstance(call, gast.Call) or call.keywords and not call.args:
        return False
    func, parts = call.func, []
    if isinstance(func, gast.Attribute) and func.attr == "__array_namespace__":
        return not call.args
    while isinstance(func, gast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, gast.Name):
        return False
    ok, obj = fn.lookup(func.id)
    for attr in reversed(parts):
        obj = getattr(obj, attr, None) if ok else None
    module = str(getattr(obj, "__module__", "") or "")
    return ok and getattr(obj, "__name__", None) in _FINDERS and \
        module.partition(".")[0] == "array_api_compat"
