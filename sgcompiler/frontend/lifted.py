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

_TREES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()   # function -> entry
_MADE: dict = {}        # key -> function object


def lifted_function(tree: gast.FunctionDef, globals_: dict, key, filename: str,
                    introduced: dict | None = None, qualname: str | None = None,
                    cells: dict | None = None):
    """A function object for `tree` (a def from `filename`), run in `globals_`, the same
    one for the same `key` (which must say everything the tree was made from); `cells`
    are closure cells of the function it was made from (name -> cell), shared with it."""
    cells = dict(cells or {})
    key = (key, id(globals_), tuple((k, id(c)) for k, c in sorted(cells.items())))
    found = _MADE.get(key)
    if found is not None and found.__globals__ is globals_:
        return found
    # the names it has bound are its closure cells: the function runs as it is, too
    introduced = dict(introduced or {})
    text = ast.unparse(gast.gast_to_ast(copy.deepcopy(tree)))
    text = (f"def _sg_lifted({', '.join(sorted(set(introduced) | set(cells)))}):\n"
            + "".join(f"    {line}\n" for line in text.splitlines())
            + f"    return {tree.name}\n")
    namespace = {}
    exec(compile(text, f"<sgcompiler lifted {tree.name}>", "exec"), globals_, namespace)
    made = namespace["_sg_lifted"](**introduced, **{k: None for k in cells})
    # the closure variables of the function it was made from: the very same cells
    closure = tuple(cells.get(name, cell) for name, cell in
                    zip(made.__code__.co_freevars, made.__closure__ or ()))
    function = types.FunctionType(made.__code__, globals_, made.__name__, made.__defaults__,
                                  closure)
    function.__kwdefaults__ = made.__kwdefaults__
    function.__qualname__ = qualname or tree.name
    _TREES[function] = (copy.deepcopy(tree), filename)
    if len(_MADE) > 4096:
        _MADE.clear()
    _MADE[key] = function
    return function


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
