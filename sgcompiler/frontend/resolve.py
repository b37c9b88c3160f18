"""Tell what every called name in a function refers to.

Names are looked up where Python would look them up at run time (closure, globals,
builtins) and classified by the object they refer to, not by their spelling:

    np.exp(x)        -> Callee(PRIMITIVE, rule for np.exp)
    sg(np.max(x))    -> Callee(STOP)        (when sg is sgcompiler.stop_gradient)
    len(x)           -> Callee(NONDIFF)
    x.sum(axis=0)    -> Callee(METHOD, 'sum')
    scipy.special.gammaln(x) -> Callee(OPAQUE): an error if a gradient must flow through it

The result maps each callee's source text to a `Callee`; it is keyed by text because the
same text means the same object everywhere in one function (locals cannot be called).
"""
from __future__ import annotations

import ast
import functools
import os
import site
import sys
import sysconfig
import types
from dataclasses import dataclass

import gast
import numpy as np

from .. import rules
from .depends import ATTR, MISSING, function_reads, note
from ..errors import describe, errors_at
from ..runtime import is_helper, stop_gradient
from .forms.objects import as_function, user_code
from .source import FunctionSource
from ..ir.blocks import local_names  # (later stages import it from here: _REEXPORTED)
from ..ir.blocks import local_names_in, walk_list
from ..ir.ast_tree import to_ast

PRIMITIVE, STOP, NONDIFF, METHOD, USER, ITERATION, OPAQUE = (
    "primitive", "stop", "nondiff", "method", "user", "iteration", "opaque")
# allowed as what a `for` loop iterates over (normalize rewrites them), nowhere else
_ITERATION = (enumerate, zip, reversed)
_LOOP_BUILTINS = frozenset({"len", "range", "min", "list"})


@dataclass(frozen=True)
class Callee:
    kind: str
    obj: object = None
    rule: object = None         # a rules.Rule for PRIMITIVE
    name: str = ""              # the text of the callee, or the method's name


@dataclass(frozen=True)
class Resolution:
    callees: dict               # callee text -> Callee
    global_roots: frozenset     # names the function reads from its module, closure, builtins

    def callee(self, func) -> Callee:
        key = callee_key(func, self.global_roots)
        if key not in self.callees and key.startswith("."):
            return Callee(METHOD, name=key[1:])    # a method call normalize wrote
        return self.callees[key]


def callee_key(func, global_roots) -> str:
    """The key of a call's `func`: its text, or '.name' for a method of a local value."""
    if isinstance(func, gast.Attribute) and _root(func) not in global_roots:
        return "." + func.attr
    return _text(func)


def _root(func):
    """The name at the root of a Name/Attribute chain, or None if it is not a chain."""
    while isinstance(func, gast.Attribute):
        func = func.value
    return func.id if isinstance(func, gast.Name) else None


def _text(node) -> str:
    text = dotted(node)
    return text if text is not None else ast.unparse(to_ast(node))


def dotted(node):
    """The text of a name or a chain of attributes of one (`np.linalg.norm`), as
    ast.unparse prints it, without converting and printing it (resolve asks for the text
    of every callee, of every call, in every pass that looks calls up); else None."""
    parts = []
    while isinstance(node, gast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, gast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def classify(obj, text: str, module: str | None = None) -> Callee | None:
    """A `Callee` for a function object, or None when nothing is known about it.
    `module` is where the calling function is defined (rules registered there apply)."""
    if obj is stop_gradient:
        return Callee(STOP, obj, name=text)
    if any(obj is f for f in _ITERATION):
        return Callee(ITERATION, obj, name=text)
    rule = rules.lookup(obj, module)
    if rule is not None:
        return Callee(PRIMITIVE, obj, rule, name=text)
    if rules.is_nondifferentiable(obj, module):
        return Callee(NONDIFF, obj, name=text)
    if isinstance(obj, type) and obj.__module__ == "builtins":
        return None
    if is_helper(obj):      # a runtime helper with no rule (rules/runtime.py): refused,
        # unless it is one that is differentiated through its source
        # (or code generated from one: its piece at second order, read at third)
        readable = rules.registry.reads_source(obj) or _generated(obj)
        return Callee(USER, obj, name=text) if readable else None
    generated = getattr(type(obj), "as_function", None)
    if generated is not None and getattr(type(obj), "sgcompiler_transform", False):
        # a gradient made by sgcompiler (grad(g) called inside the function): its
        # generated code is differentiated like a user function's
        return Callee(USER, obj.as_function(), name=text)
    if isinstance(obj, types.FunctionType):
        if is_library(obj) and not rules.registry.is_source_module(obj.__module__):
            return None     # no rule: refused if a gradient must flow through it
        return Callee(USER, obj, name=text)
    function = _user_callable(obj)
    if function is not None:    # a method of the user's object, a partial, a __call__
        return Callee(USER, function, name=text)
    return None


def _generated(obj) -> bool:
    """Whether `obj` is a function sgcompiler generated (backend/loader.py names its text
    '<sgcompiler ...>')."""
    code = getattr(obj, "__code__", None)
    return isinstance(obj, types.FunctionType) and code is not None and \
        code.co_filename.startswith("<sgcompiler ")


def _user_callable(obj):
    """The function a bound method, partial or callable object of user code is, or None
    (a partial of a library function too: objects.library_partial)."""
    if isinstance(obj, functools.partial):
        return as_function(obj)
    func = getattr(obj, "__func__", None) or getattr(obj, "func", None) or \
        getattr(type(obj), "__call__", None)
    if not isinstance(func, types.FunctionType) or not user_code(func) or is_library(func):
        return None
    return as_function(obj)


def is_library(fn) -> bool:
    """Whether `fn` is defined in the standard library or an installed package
    (site-packages), not in the user's own code (any other file, or exec'd text). Told by
    its file, not its module's name: a user's test.py is not the standard library's."""
    filename = fn.__code__.co_filename
    if filename.startswith("<"):
        return filename.startswith("<frozen ")
    module = (getattr(fn, "__module__", None) or "").split(".")[0]
    if module == __name__.split(".")[0]:
        return False        # sgcompiler's own helpers, however it is installed
    path = os.path.realpath(filename)
    return any(path.startswith(root) for root in _library_roots())


@functools.lru_cache(maxsize=1)
def _library_roots() -> tuple:
    paths = sysconfig.get_paths()
    roots = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    roots.update(site.getsitepackages() if hasattr(site, "getsitepackages") else ())
    roots.add(site.getusersitepackages())
    roots.update(p for p in sys.path if os.path.basename(p) in ("site-packages",
                                                               "dist-packages"))
    return tuple(os.path.join(os.path.realpath(r), "") for r in roots if r)


# np.r_[a, b] and np.c_[a, b] (indexing, not calls): normalize writes them as the
# concatenation of the items made at least 1-d (r_), or 2-d with a 1-d array as a column
# (c_: np.transpose(np.atleast_2d(np.transpose(a))) is that for any number of dimensions)
INDEX_JOINS = {type(np.r_): ("concatenate", "atleast_1d"),
               type(np.c_): ("concatenate", "atleast_2d", "transpose")}


def index_join(fn, node, global_roots):
    """For `np.r_[...]` / `np.c_[...]`: (the type of np.r_ or np.c_, the text of a name of
    the numpy module), else None."""
    value = node.value if isinstance(node, gast.Subscript) else None
    if _root(value) not in global_roots or not isinstance(value, (gast.Name, gast.Attribute)):
        return None
    obj, error = _evaluate(fn, value)
    if error or type(obj) not in INDEX_JOINS or type(obj) is type(np.c_) and obj is not np.c_:
        return None
    if isinstance(value, gast.Attribute) and _evaluate(fn, value.value)[0] is np:
        return type(obj), _text(value.value)
    names = sorted(k for k, v in fn.globals.items() if v is np)
    return (type(obj), names[0]) if names else (type(obj), None)


def _index_join_callees(fn, everything, global_roots, callees, problems):
    """The callees of what normalize writes for each np.r_[...] and np.c_[...]
    (`everything`: the nodes of fn's tree, in walk's order)."""
    for node in everything:
        found = index_join(fn, node, global_roots) if isinstance(node, gast.Subscript) \
            else None
        if found is None:
            continue
        kind, numpy_name = found
        if numpy_name is None:
            problems.append(describe(fn, node, f"{_text(node.value)}[...] is supported "
                                               "when numpy is imported as a module name "
                                               "(import numpy as np; np.r_[...])"))
            continue
        for name in INDEX_JOINS[kind]:
            obj = getattr(np, name)
            callees[f"{numpy_name}.{name}"] = classify(obj, f"{numpy_name}.{name}",
                                                       rules.scope_of(fn))


def resolve(fn: FunctionSource) -> Resolution:
    """Classify every call in `fn`.

    Raises:
        SGCompilerError: listing every callee that is unknown or has no derivative rule.
    """
    everything = walk_list(fn.tree)     # (one walk for the names, calls and subscripts)
    local = local_names_in(fn.tree, everything)
    global_roots = frozenset(n.id for n in everything
                             if isinstance(n, gast.Name) and n.id not in local)
    callees, problems = {}, []
    # builtins that normalize uses to rewrite loops over sequences
    for name in _LOOP_BUILTINS - local:
        found, obj = fn.lookup(name)
        callee = classify(obj, name) if found else None
        if callee is not None:
            callees[name] = callee
    global_roots |= _LOOP_BUILTINS - local
    for node in everything:
        if not isinstance(node, gast.Call):
            continue
        key = callee_key(node.func, global_roots)
        if key in callees:
            continue
        root = _root(node.func)
        if isinstance(node.func, gast.Attribute) and root not in global_roots:
            callees[key] = Callee(METHOD, name=node.func.attr)
            continue
        if root is None:
            problems.append(describe(fn, node, f"cannot call the result of an expression "
                                               f"({_text(node.func)}); assign the function "
                                               "to a module-level name and call that"))
            continue
        if root in local:
            problems.append(describe(fn, node, f"'{root}' is a local variable; calling a "
                                               "local variable is not supported, call the "
                                               "function by its module-level name"))
            continue
        obj, error = _evaluate(fn, node.func)
        if error:
            problems.append(describe(fn, node, error))
            continue
        # a function without a rule is fine while no gradient has to flow through it
        # (e.g. under stop_gradient); activity analysis refuses it otherwise
        callees[key] = classify(obj, key, rules.scope_of(fn)) or Callee(OPAQUE, obj, name=key)
    _index_join_callees(fn, everything, global_roots, callees, problems)
    if problems:
        raise errors_at(sorted(set(problems), key=problems.index))
    return Resolution(callees, global_roots)


def _evaluate(fn, func):
    """The object a Name/Attribute chain refers to: (obj, None) or (None, error text)."""
    parts = []
    node = func
    while isinstance(node, gast.Attribute):
        parts.append(node.attr)
        node = node.value
    found, obj = fn.lookup(node.id)
    if not found:
        return None, f"name '{node.id}' is not defined"
    for attr in reversed(parts):
        holder = obj
        obj = getattr(holder, attr, MISSING)
        note(ATTR, holder, attr, obj)      # np.exp = np.sin later changes the code
        if obj is MISSING:
            return None, f"'{_text(func)}' does not exist ({attr} is not an attribute)"
    if isinstance(obj, types.FunctionType):    # its code and defaults are compiled in
        for read in function_reads(obj):
            note(*read)
    return obj, None


_REEXPORTED = (local_names,)
