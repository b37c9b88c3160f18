"""Calls of user helpers that collect arguments in *args or **kwargs (part of parsing).

The number of arguments is known at each call, so the helper gets a copy made for it,
whose *args and **kwargs are displays of named parameters (sugar.py then reads
`f(*args, **kw)` in it as `f(args[0], args[1], k=kw["k"])`):

    def wrapper(*args, **kw):             def wrapper_star2_k(*, args_0, args_1, kw_k):
        return f(*args, **kw)       ->        args = (args_0, args_1)
                                              kw = {"k": kw_k}
    wrapper(x, w, k=2.0)                      return f(*args, **kw)
                                          _wrapper_star2_k(args_0=x, args_1=w, kw_k=2.0)

Runs after sugar.py (so `wrapper(*(x, w))` is already `wrapper(x, w)`), before nested.py.
The function given to `grad` or `jvp` itself gets such a copy for each call's arguments
(`collected_copy`; its *args become positional parameters, so `wrt` positions keep their
meaning): `def f(x, *ws)` called with three arguments is `def f_star2(x, ws_0, ws_1)`.
"""
from __future__ import annotations

import inspect
import types
from dataclasses import replace

import gast

from ...errors import describe, errors_at
from ...ir.builders import const, load, store
from ..depends import function_reads, module_level, note
from ..lifted import lifted_function
from .objects import cells_of, user_code
from ..source import FunctionSource, parse_function
from ...ir.blocks import local_names, local_names_in, walk, walk_list
from .sugar import fresh


def specialise_varargs(fn: FunctionSource) -> FunctionSource:
    """`fn` with each call of a user helper that has *args/**kwargs rewritten to call a
    copy of the helper made for that call's arguments (or `fn` itself when none).

    Raises:
        SGCompilerError: when a call does not fit the helper's signature.
    """
    everything = walk_list(fn.tree)     # (one walk for the names and the calls)
    local = local_names_in(fn.tree, everything)
    introduced, problems = {}, []
    for node in everything:
        if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)):
            continue
        helper = module_level(fn, node.func, local)
        if not (isinstance(helper, types.FunctionType) and user_code(helper) and
                helper.__code__.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)):
            continue
        if any(isinstance(a, gast.Starred) for a in node.args) or \
                any(k.arg is None for k in node.keywords):
            continue        # refused where the helper is compiled, with its reason
        try:
            bound = inspect.signature(helper).bind(
                *range(len(node.args)), **{k.arg: k.arg for k in node.keywords})
        except TypeError as exc:
            problems.append(describe(fn, node, f"this call does not fit {helper.__name__}"
                                               f"'s parameters ({exc})"))
            continue
        for read in function_reads(helper):
            note(*read)
        special, keywords = _special(helper, bound, node)
        taken = local | set(fn.globals) | set(fn.introduced) | set(introduced)
        name = fresh("_" + special.__name__, taken)
        introduced[name] = special
        node.func = load(name)
        node.args, node.keywords = [], keywords
    if problems:
        raise errors_at(problems)
    if not introduced:
        return fn
    return replace(fn, introduced={**fn.introduced, **introduced})


def _special(helper, bound, call):
    """(the copy of `helper` for this binding, the call's keywords for it)."""
    src = parse_function(helper)
    tree, args = src.tree, src.tree.args
    keywords, prologue, suffix = _collected(tree, bound, call)
    args.vararg = args.kwarg = None
    first = tree.body[0]
    tree.body[:0] = [gast.Assign(targets=[store(n)], value=v, type_comment=None)
                     for n, v in prologue]
    for stmt in tree.body[:len(prologue)]:
        for n in walk(stmt):
            gast.copy_location(n, first)
    tree.name = "_".join([src.name] + (suffix or ["star0"]))
    key = ("varargs", helper.__code__, tuple(suffix), tuple(bound.arguments))
    special = lifted_function(tree, helper.__globals__, key, src.filename,
                              dict(src.introduced), qualname=helper.__qualname__,
                              cells=cells_of(helper),
                              defaults=(helper.__defaults__, helper.__kwdefaults__))
    return special, keywords


def collects_arguments(fn) -> bool:
    """Whether `fn` is a plain function with *args or **kwargs."""
    return isinstance(fn, types.FunctionType) and \
        bool(fn.__code__.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS))


def collected_copy(fn, count: int, keywords: tuple):
    """A copy of `fn` (which has *args or **kwargs) for a call with `count` positional
    arguments and the keyword arguments named `keywords`: what *args collects are
    positional parameters of their own (after fn's), what **kwargs collects keyword-only
    ones, put together at the start of the body.

    Returns:
        (the copy, {keyword given: the copy's parameter for it}).
    Raises:
        TypeError: when such a call does not fit fn's parameters (as Python says).
    """
    bound = inspect.signature(fn).bind(*range(count), **{k: k for k in keywords})
    src = parse_function(fn)
    tree, args = src.tree, src.tree.args
    taken = local_names(tree) | {n.id for n in gast.walk(tree) if isinstance(n, gast.Name)}
    prologue, suffix, renamed, defaults = [], [], {}, fn.__defaults__
    if args.vararg is not None:
        star = args.vararg.id
        collected = bound.arguments.get(star, ())
        names = [fresh(f"{star}_{i}", taken) for i in range(len(collected))]
        args.args += [gast.Name(id=n, ctx=gast.Param(), annotation=None, type_comment=None)
                      for n in names]
        prologue.append((star, gast.Tuple(elts=[load(n) for n in names], ctx=gast.Load())))
        suffix.append(f"star{len(names)}")
        defaults = defaults if not names else None     # (every named one is given)
    if args.kwarg is not None:
        double = args.kwarg.id
        given = list(bound.arguments.get(double, {}))
        renamed = {k: fresh(f"{double}_{k}", taken) for k in given}
        _add_keyword_only(args, list(renamed.values()))
        prologue.append((double, gast.Dict(keys=[const(k) for k in given],
                                           values=[load(renamed[k]) for k in given])))
        suffix.extend(given)
    args.vararg = args.kwarg = None
    first = tree.body[0]
    tree.body[:0] = [gast.Assign(targets=[store(n)], value=v, type_comment=None)
                     for n, v in prologue]
    for stmt in tree.body[:len(prologue)]:
        for n in gast.walk(stmt):
            gast.copy_location(n, first)
    tree.name = "_".join([src.name] + suffix)
    key = ("collected", fn.__code__, count, tuple(keywords))
    copy = lifted_function(tree, fn.__globals__, key, src.filename, dict(src.introduced),
                           qualname=fn.__qualname__, cells=cells_of(fn),
                           defaults=(defaults, fn.__kwdefaults__))
    return copy, renamed


def _collected(tree, bound, call):
    """(the call's keywords, [(*args or **kwargs name, its display)], name suffix): each
    collected argument becomes a keyword-only parameter of the copy."""
    args = tree.args
    taken = local_names(tree) | {n.id for n in walk(tree) if isinstance(n, gast.Name)}
    given = {k.arg: k.value for k in call.keywords}
    star = args.vararg.id if args.vararg else None
    double = args.kwarg.id if args.kwarg else None
    keywords, prologue, suffix = [], {}, []
    for name, value in bound.arguments.items():
        if name == star:
            names = [fresh(f"{name}_{i}", taken) for i in range(len(value))]
            keywords += [gast.keyword(arg=n, value=call.args[i]) for n, i in zip(names, value)]
            prologue[name] = gast.Tuple(elts=[load(n) for n in names], ctx=gast.Load())
            suffix.append(f"star{len(names)}")
        elif name == double:
            names = [fresh(f"{name}_{k}", taken) for k in value]
            keywords += [gast.keyword(arg=n, value=given[k]) for n, k in zip(names, value)]
            prologue[name] = gast.Dict(keys=[const(k) for k in value],
                                       values=[load(n) for n in names])
            suffix.extend(value)
        else:
            keywords.append(gast.keyword(
                arg=name, value=call.args[value] if isinstance(value, int) else given[value]))
            continue
        _add_keyword_only(args, names)
    # nothing collected: an empty tuple or dict
    if star is not None and star not in prologue:
        prologue[star] = gast.Tuple(elts=[], ctx=gast.Load())
    if double is not None and double not in prologue:
        prologue[double] = gast.Dict(keys=[], values=[])
    return keywords, list(prologue.items()), suffix


def _add_keyword_only(args, names):
    for n in names:
        args.kwonlyargs.append(gast.Name(id=n, ctx=gast.Param(), annotation=None,
                                         type_comment=None))
        args.kw_defaults.append(None)
