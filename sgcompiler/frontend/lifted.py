"""Functions the front end makes from pieces of the user's source (part of parsing).

A nested def or lambda inside a differentiated function, a helper specialised for the
function it is passed, a method bound to its object: each becomes a real function object
(so pieces, caches and reads work as for any user function) whose tree is kept here, with
the user's file and line numbers; the names it has bound to objects (`introduced`) are
its closure cells:

    fn = lifted_function(tree, module_globals, key, introduced={"self": model})
    lifted_source(fn)     # -> (tree copy, filename), which parse_function reads

The same key gives the same function object, so code compiled for it is reused.
"""
from __future__ import annotations

import ast
import copy
import types
import weakref

import gast

from ..ir.ast_tree import to_ast

_TREES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()   # function -> entry
# key -> function object, held weakly: a function holds what it was made from (a bound
# method's instance, a partial's values) in its cells, so holding it here would keep every
# instance alive; it lives as long as a gradient, a caller's code or a caller holds it
_MADE: "weakref.WeakValueDictionary" = weakref.WeakValueDictionary()


def lifted_function(tree: gast.FunctionDef, globals_: dict, key, filename: str,
                    introduced: dict | None = None, qualname: str | None = None,
                    cells: dict | None = None, defaults=None, unchanging: bool = False):
    """A function object for `tree` (a def from `filename`), run in `globals_`, the same
    one for the same `key` (which must say everything the tree was made from); `cells`
    are closure cells of the function it was made from (name -> cell), shared with it;
    `defaults` its (__defaults__, __kwdefaults__), the very objects (not re-evaluated);
    `unchanging`: `tree` is never changed, so its code is made once for every key."""
    cells = dict(cells or {})
    defaults = defaults or (None, None)
    key = (key, id(globals_), tuple((k, id(c)) for k, c in sorted(cells.items())),
           object_ids(defaults[0]), object_ids(defaults[1]))
    found = _MADE.get(key)
    if found is not None and found.__globals__ is globals_:
        return found
    # the names it has bound are its closure cells: the function runs as it is, too
    introduced = dict(introduced or {})
    names = tuple(sorted(set(introduced) | set(cells)))
    code, kept = _code_of(tree, names) if unchanging else _made_code(tree, names)
    # the closure variables of the function it was made from: the very same cells
    closure = tuple(cells[name] if name in cells else types.CellType(introduced[name])
                    for name in code.co_freevars)
    function = types.FunctionType(code, globals_, code.co_name, defaults[0], closure)
    function.__kwdefaults__ = defaults[1]
    function.__qualname__ = qualname or tree.name
    _TREES[function] = (kept, filename)
    _MADE[key] = function
    return function


# an unchanging tree -> {closure names: (code, copy of the tree)}: a tree lifted again (a
# method bound to another instance, or again to the same one: jvp(model.loss, ...) on
# every call) is not unparsed and compiled again
_CODES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _code_of(tree, names: tuple):
    made = _CODES.setdefault(tree, {})
    if names not in made:
        made[names] = _made_code(tree, names)
    return made[names]


def _made_code(tree, names: tuple):
    """(the code of the function `tree` defines, as a closure over `names`; a copy of
    `tree` that nothing changes)."""
    runnable = copy.deepcopy(tree)
    # defaults are the original objects (set by the caller), not their source evaluated again
    runnable.args.defaults = []
    runnable.args.kw_defaults = [None] * len(runnable.args.kwonlyargs)
    text = ast.unparse(to_ast(runnable))
    text = (f"def _sg_lifted({', '.join(names)}):\n"
            + "".join(f"    {line}\n" for line in text.splitlines())
            + f"    return {tree.name}\n")
    namespace = {}
    exec(compile(text, f"<sgcompiler lifted {tree.name}>", "exec"), {}, namespace)
    inner = next(c for c in namespace["_sg_lifted"].__code__.co_consts
                 if isinstance(c, types.CodeType))
    return inner, copy.deepcopy(tree)


def object_ids(values):
    """A hashable key for a tuple or dict of objects, by identity (they must be kept
    alive by what the key finds: while it lives, no other object can take their ids)."""
    if values is None:
        return None
    if isinstance(values, dict):
        return tuple((k, id(v)) for k, v in sorted(values.items()))
    return tuple(id(v) for v in values)


def remaining_defaults(func, dropped) -> tuple:
    """(__defaults__, __kwdefaults__) of `func` once the parameters in `dropped` are gone."""
    code = func.__code__
    positional = code.co_varnames[:code.co_argcount]
    values = func.__defaults__ or ()
    named = zip(positional[len(positional) - len(values):], values)
    defaults = tuple(v for n, v in named if n not in dropped) or None
    kw = {k: v for k, v in (func.__kwdefaults__ or {}).items() if k not in dropped} or None
    return defaults, kw


def lifted_source(fn):
    """(a copy of the tree, filename) of a lifted function, or None."""
    try:
        entry = _TREES.get(fn)
    except TypeError:
        return None
    if entry is None:
        return None
    tree, filename = entry
    return copy.deepcopy(tree), filename
