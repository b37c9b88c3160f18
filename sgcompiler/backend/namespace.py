"""The gradient for arrays of another array library: `xp.` in place of NumPy.

`to_namespace` rewrites a generated gradient (made for any shape, so with no `out=`
buffers) so that every reference to NumPy goes through one name, `xp`: `np.exp(z)` becomes
`xp.exp(z)`, and `exp(z)` of `from numpy import exp` becomes `xp.exp(z)`. When the code
runs, `xp` is the `runtime.namespace.NumPyNames` of the arguments' namespace and every
runtime helper it calls is bound to the same names (runtime/namespace.py). What only
NumPy and SciPy can compute is refused here, naming the function.
"""
from __future__ import annotations

import builtins
import types

import gast
import numpy as np

from ..errors import SGCompilerError
from .. import runtime
from ..runtime import is_helper
from ..runtime.namespace import XP

_NUMPY_MODULES = frozenset({"numpy", "numpy.linalg", "numpy.fft"})


def to_namespace(tree: gast.FunctionDef, lookup, linker, where: str) -> tuple:
    """Rewrite `tree` in place to reach NumPy through `xp`; returns the NumPy names it
    uses, ((name, line), ...), for the caller to check against a namespace.

    `lookup(name)` says what a free name of the function refers to ((found, value));
    `linker` names the objects inlined rules use; `where` is the function's file and
    line, for messages.

    Raises:
        SGCompilerError: for a call of a SciPy function or helper.
    """
    xp = linker.name_for("xp", XP)
    local = _local_names(tree)
    used = []

    def meaning(name):
        if name in local:
            return False, None
        if name in linker.names:
            return True, linker.names[name]
        return lookup(name)

    _standard_spellings(tree, meaning, linker)
    for node in gast.walk(tree):
        for field, child in gast.iter_fields(node):
            if isinstance(child, list):
                child[:] = [_rewritten(c, meaning, xp, where, linker) for c in child]
            elif isinstance(child, gast.AST):
                setattr(node, field, _rewritten(child, meaning, xp, where, linker))
    for node in gast.walk(tree):
        chain = _numpy_chain(node, xp)
        if chain:
            used.append((chain, getattr(node, "lineno", None)))
    return tuple(dict.fromkeys(used))


def _local_names(tree):
    names = {a.id for a in tree.args.args + tree.args.kwonlyargs}
    for extra in (tree.args.vararg, tree.args.kwarg):
        if extra is not None:
            names.add(extra.id)
    names.update(n.id for n in gast.walk(tree)
                 if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)))
    return names


def _standard_spellings(tree, meaning, linker):
    """What NumPy arrays do that the standard's do not, spelled through runtime helpers
    (bound to the namespace like the others): `x.astype(t)` (the standard's arrays have no
    astype method) becomes `astype(x, t)`, and Python's `sum(x)` of an array (which
    iterates its rows) `rows_sum(x)`."""
    for node in gast.walk(tree):
        if not isinstance(node, gast.Call):
            continue
        func = node.func
        if isinstance(func, gast.Attribute) and func.attr == "astype" and \
                not _names_a_module(func.value, meaning):
            node.func = _helper_name(linker, "astype", runtime.astype)
            node.args = [func.value] + node.args
        elif isinstance(func, gast.Name) and _is(meaning(func.id), builtins.sum):
            node.func = _helper_name(linker, "rows_sum", runtime.rows_sum)


def _names_a_module(node, meaning) -> bool:
    """Whether `node` is a name of a module or class (np.astype, runtime.astype: functions,
    not methods of an array)."""
    if not isinstance(node, gast.Name):
        return False
    found, value = meaning(node.id)
    return found and isinstance(value, (types.ModuleType, type))


def _is(meant, value):
    found, what = meant
    return found and what is value


def _helper_name(linker, name, helper):
    return gast.Name(id=linker.name_for(name, helper), ctx=gast.Load(), annotation=None,
                     type_comment=None)


def _rewritten(node, meaning, xp, where, linker):
    """`node` with a Name that refers to NumPy (or one of its functions) spelled
    through `xp`."""
    if not isinstance(node, gast.Name) or not isinstance(node.ctx, gast.Load) or \
            node.id == xp:
        return node
    found, value = meaning(node.id)
    if not found:
        return node
    module = getattr(value, "__module__", None) or ""
    if value is np or value is np.linalg or value is np.fft:
        chain = value.__name__.split(".")[1:]
        return _attributes(xp, chain)
    if isinstance(value, np.ufunc) and getattr(np, value.__name__, None) is not value:
        raise SGCompilerError(      # a ufunc of SciPy's (scipy.special.xlogy)
            f"{where}: {value.__name__} (a SciPy ufunc) computes with NumPy arrays only, so "
            "this gradient cannot run on arrays of other array-API libraries; pass NumPy "
            "arrays")
    if module in _NUMPY_MODULES or isinstance(value, np.ufunc) or \
            (isinstance(value, type) and issubclass(value, np.generic)):
        name = getattr(value, "__name__", node.id)
        prefix = module.split(".")[1:] if module in _NUMPY_MODULES else []
        return _attributes(xp, prefix + [name])
    if is_helper(value) and not module.rpartition(".")[2].startswith("scipy") and \
            node.id not in linker.names:       # (called by the user: bound to xp too)
        return gast.Name(id=linker.name_for(node.id, value), ctx=gast.Load(),
                         annotation=None, type_comment=None)
    if module.startswith("scipy") or getattr(value, "__name__", "").startswith("scipy") \
            or (is_helper(value) and module.rpartition(".")[2].startswith("scipy")):
        public = ".".join(p for p in module.split(".") if not p.startswith("_"))
        what = f"{public}.{getattr(value, '__name__', node.id)}" if module else node.id
        raise SGCompilerError(
            f"{where}: {what} (SciPy) computes with NumPy arrays only, so this gradient "
            "cannot run on arrays of other array-API libraries; pass NumPy arrays")
    return node


def _attributes(xp, chain):
    node = gast.Name(id=xp, ctx=gast.Load(), annotation=None, type_comment=None)
    for attr in chain:
        node = gast.Attribute(value=node, attr=attr, ctx=gast.Load())
    return node


def _numpy_chain(node, xp):
    """'linalg.norm' for `xp.linalg.norm` (the outermost attribute of a chain on xp)."""
    parts = []
    while isinstance(node, gast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, gast.Name) and node.id == xp and parts:
        return ".".join(reversed(parts))
    return None
