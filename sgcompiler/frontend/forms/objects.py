"""Callables that are not plain functions, read as functions (part of parsing).

    model.loss                 -> Model_loss(w), with `self` bound to model
    model (with __call__)      -> Model_call(w), the same
    functools.partial(f, a, k=v) -> f_partial(x), with f's first parameter bound to a, k to v

Each is a function made from the user's source with the bound parameters removed and
bound, as closure cells, to the objects (frontend/lifted.py). The same objects give the same
function, so code compiled for it is reused; other objects give other code: the cache
cannot hand one instance's gradient to another.
"""
from __future__ import annotations

import functools
import inspect
import linecache
import sysconfig
import types
import weakref

import gast
import numpy as np

from ...errors import SGCompilerError
from ..lifted import lifted_function, remaining_defaults
from ..source import parse_function


def user_code(func) -> bool:
    """Whether `func` is the user's own code, not a library's (whose methods without a
    rule stay opaque: their source is not read)."""
    filename = func.__code__.co_filename
    if func.__module__ and func.__module__.split(".")[0] in ("numpy", "scipy", "sgcompiler"):
        return False
    return not any(path and filename.startswith(path) for path in _LIBRARIES)


_LIBRARIES = tuple(sorted({sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib",
                                                                   "purelib", "platlib")}
                          - {None}))


def as_function(obj):
    """A plain function equivalent to callable `obj` (itself when it is one), or None."""
    if isinstance(obj, types.FunctionType):
        return obj
    if getattr(type(obj), "sgcompiler_transform", False):
        return None
    if isinstance(obj, types.MethodType) and isinstance(obj.__func__, types.FunctionType):
        return _bound(obj.__func__, obj.__self__)
    if isinstance(obj, functools.partial) and isinstance(obj.func, types.FunctionType) \
            and user_code(obj.func):
        return _partial(obj)
    if isinstance(obj, functools.partial) and callable(obj.func) and \
            not isinstance(obj.func, type):
        return library_partial(obj)
    call = getattr(type(obj), "__call__", None)
    if isinstance(call, types.FunctionType) and not isinstance(obj, type):
        return _bound(call, obj)
    return None


def _owner(func) -> str:
    parts = [p for p in func.__qualname__.split(".") if p != "<locals>"]
    return "_".join(p for p in parts if p.isidentifier()) or func.__name__


def _bound(func, self):
    """`func` (a method) with its first parameter bound to `self`."""
    tree, filename, name = _method_tree(func)
    key = ("method", func.__code__, id(self))
    return lifted_function(tree, func.__globals__, key, filename, {name: self},
                           qualname=func.__qualname__, cells=cells_of(func),
                           defaults=remaining_defaults(func, {name}), unchanging=True)


# method -> (its tree without the self parameter, filename, that parameter's name): read
# once, as `jvp(model.loss, ...)` binds the method again on every call (the tree is never
# changed: lifted_function copies it)
_METHOD_TREES = weakref.WeakKeyDictionary()


def _method_tree(func):
    found = _METHOD_TREES.get(func)
    if found is not None:
        return found
    src = parse_function(func)
    args = src.tree.args
    if not args.args:
        raise SGCompilerError(f"{src.qualname} ({src.short_filename}:{src.firstlineno}): a "
                              "method without a 'self' parameter cannot be bound")
    name = args.args.pop(0).id
    src.tree.name = _owner(func).replace("___call__", "_call")
    found = _METHOD_TREES[func] = (src.tree, src.filename, name)
    return found


def _partial(p):
    """`p.func` with the parameters `p` binds removed and bound to `p`'s values."""
    func = p.func
    src = parse_function(func)
    args = src.tree.args
    where = f"{src.qualname} ({src.short_filename}:{src.firstlineno})"
    if args.vararg or args.kwarg or len(p.args) > len(args.args) + len(args.posonlyargs):
        raise SGCompilerError(f"{where}: a functools.partial of a function with *args or "
                              "**kwargs is not supported; name each parameter")
    params = args.posonlyargs + args.args
    bound = {a.id: v for a, v in zip(params, p.args)}
    for key, value in p.keywords.items():
        if key in bound or key not in {a.id for a in params + args.kwonlyargs}:
            raise SGCompilerError(f"{where}: functools.partial binds '{key}', which is not "
                                  "a parameter it can bind")
        bound[key] = value
    _drop(args, set(bound))
    # (named after the tree: a lambda's is a name, lambda_12, where __name__ is <lambda>)
    src.tree.name = f"{src.tree.name}_partial"
    key = ("partial", func.__code__, tuple((k, id(v)) for k, v in sorted(bound.items())))
    return lifted_function(src.tree, func.__globals__, key, src.filename, bound,
                           qualname=f"{src.qualname}_partial", cells=cells_of(func),
                           defaults=remaining_defaults(func, set(bound)))


def library_partial(p):
    """`functools.partial(np.sum, axis=0)` as the function `def sum_partial(a): return
    sum(a, axis=0)`, whose parameters are the library function's required ones it does
    not bind (NumPy's names; a ufunc's are x1, x2, ...); constants are written in, other
    bound values (arrays) are names bound to them. None when its parameters are unknown."""
    func = p.func
    if isinstance(func, np.ufunc):
        params = [f"x{i + 1}" for i in range(func.nin)]
    else:
        try:
            params = [q.name for q in inspect.signature(func).parameters.values()
                      if q.default is inspect.Parameter.empty and q.kind in (
                          q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD)]
        except (TypeError, ValueError):
            return None
    name = getattr(func, "__name__", "function")
    if len(p.args) > len(params) or not name.isidentifier() or name in params:
        return None
    free = [q for q in params[len(p.args):] if q not in p.keywords]
    bound, values = {name: func}, []
    for i, value in enumerate(list(p.args) + list(p.keywords.values())):
        if _literal(value):
            values.append(repr(value))
        else:
            bound[f"_bound{i}"] = value
            values.append(f"_bound{i}")
    positional = values[:len(p.args)] + free
    keywords = [f"{k}={v}" for k, v in zip(p.keywords, values[len(p.args):])]
    text = (f"def {name}_partial({', '.join(free)}):\n"
            f"    return {name}({', '.join(positional + keywords)})\n")
    filename = f"<sgcompiler partial {name}>"
    lines = [text.splitlines(True)[0], text.splitlines(True)[1]]
    linecache.cache[filename] = (len(text), None, lines, filename)
    tree = gast.parse(text).body[0]
    key = ("library partial", id(func), tuple(free), tuple(values),
           tuple(id(v) for v in bound.values()))
    return lifted_function(tree, {"__builtins__": __builtins__}, key, filename, bound,
                           qualname=f"{name}_partial")


def _literal(value) -> bool:
    """Whether `value` is written in code as its repr (a number, a string, a tuple)."""
    if isinstance(value, tuple):
        return all(_literal(v) for v in value)
    return value is None or type(value) in (bool, int, float, str)


def with_default_functions(fn):
    """`fn` with its parameters whose defaults are functions (`act=np.tanh`) bound to
    them (a call that passes another function is then a TypeError, not a wrong
    gradient), or `fn` itself when it has none."""
    code = fn.__code__
    positional = code.co_varnames[:code.co_argcount]
    defaults = fn.__defaults__ or ()
    bound = {n: v for n, v in zip(positional[len(positional) - len(defaults):], defaults)
             if _is_function(v)}
    bound.update((n, v) for n, v in (fn.__kwdefaults__ or {}).items() if _is_function(v))
    if not bound:
        return fn
    src = parse_function(fn)
    _drop(src.tree.args, set(bound))
    key = ("defaults", code, tuple((k, id(v)) for k, v in sorted(bound.items())))
    return lifted_function(src.tree, fn.__globals__, key, src.filename, bound,
                           qualname=fn.__qualname__, cells=cells_of(fn),
                           defaults=remaining_defaults(fn, set(bound)))


def _is_function(obj) -> bool:
    return isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, np.ufunc))


def cells_of(func) -> dict:
    """A function's closure cells by name."""
    return dict(zip(func.__code__.co_freevars, func.__closure__ or ()))


def _drop(args, names):
    """Remove the parameters in `names` (and their defaults) from a gast `arguments`."""
    positional = args.posonlyargs + args.args
    first_default = len(positional) - len(args.defaults)
    args.defaults = [d for j, d in enumerate(args.defaults)
                     if positional[first_default + j].id not in names]
    args.posonlyargs = [a for a in args.posonlyargs if a.id not in names]
    args.args = [a for a in args.args if a.id not in names]
    kept = [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if a.id not in names]
    args.kwonlyargs, args.kw_defaults = [a for a, _ in kept], [d for _, d in kept]
