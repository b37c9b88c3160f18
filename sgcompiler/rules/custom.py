"""The public way to add derivative rules: `sgcompiler.adjoint` and `sgcompiler.nondifferentiable`.

    import scipy.special
    import sgcompiler

    @sgcompiler.adjoint(scipy.special.gammaln)
    def gammaln(g, ans, x):
        return g * scipy.special.digamma(x)

A user's rule has the form of the built-in ones (registry.py) and is inlined the same way.
Where it applies (its scope):

- a rule for a function defined in the registering module itself (a custom gradient of
  your own function, as jax.custom_vjp gives) applies everywhere: the compiler no longer
  descends into that function but uses the rule;
- a rule for anyone else's function (NumPy, SciPy, another package) applies only to
  functions defined in the registering module (and its submodules, when it is a package),
  so importing a module never changes the gradients of another;
- `scope="global"` makes it apply everywhere, `scope=some_module` to that module.

A scope holds one rule per function: registering a different one again is an error unless
`override=True`, and so is a global rule for a function that has a built-in rule.
Registration takes effect for gradients compiled afterwards.
"""
from __future__ import annotations

import inspect
import sys
import types

import numpy as np

from ..errors import SGCompilerError
from .registry import (GLOBAL, _display_name, add_source_module, builtin_entry, parse_rule,
                       parse_tangent_rule, register_scoped, register_tangent, scoped_entry)


def adjoint(fn, *, scope=None, override: bool = False, multiple_results: bool = False):
    """Decorator: the decorated function is the derivative rule of `fn`.

    The rule is `def rule(g, ans, <fn's parameters>): return <one gradient per parameter>`,
    with `fn`'s parameter names and defaults (any names for positional-only ones); `g` is
    the adjoint of `fn`'s result and `ans` the result. Return `None` for a parameter with
    no gradient (the compiler then refuses to differentiate through it) and `0.0` for one
    whose gradient is exactly zero.

    Args:
        fn: the function (NumPy, SciPy or your own) the rule is for.
        scope: None (your own function: everywhere; anyone else's: this module),
            "global", "module" (this module), or a module object.
        override: replace a different rule already registered for `fn` in that scope (or,
            for scope="global", a built-in rule).
        multiple_results: `fn` returns a tuple; `g` and `ans` are then sequences with one
            entry per result (`g[k]` is 0.0 for a result that got no gradient).
    Returns:
        A decorator that registers the rule and returns it unchanged.
    Raises:
        SGCompilerError: at registration, for a rule whose form or parameters do not fit
            `fn`, or that conflicts with another rule in the same scope.
    """
    caller = sys._getframe(1).f_globals.get("__name__", "__main__")
    where = _scope(fn, scope, caller)

    def register(rule_fn):
        rule = parse_rule(rule_fn, fn, name=_display_name(fn), scope=where,
                          multiple_results=multiple_results)
        _check_signature(rule, fn)
        _check_conflicts(fn, rule, where, override)
        register_scoped(fn, rule, where)
        return rule_fn
    return register


def differentiate_module(module) -> None:
    """Differentiate the functions of an installed library module (and its submodules)
    through their source, as your own code is. By default a function of the standard
    library or of site-packages without a derivative rule is refused ("no derivative rule
    for scipy.signal.convolve"): its source is not written for sgcompiler.

    Args:
        module: a module object or its name ("mypackage.layers").
    """
    name = module if isinstance(module, str) else getattr(module, "__name__", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"differentiate_module takes a module or a module name, got "
                        f"{module!r}")
    add_source_module(name)


def tangent(fn, *, multiple_results: bool = False):
    """Decorator: the decorated function is the tangent (forward-mode) rule of `fn`.

    The rule is `def rule(t, ans, <fn's parameters>): return <the tangent of the result>`
    for one tangent (of the first parameter), or, with several, tangent parameters named
    `<parameter>_dot` before `ans` and one contribution per tangent in the return (the
    compiler adds those that are not zero):

        @sgcompiler.tangent(np.hypot)
        def hypot(x1_dot, x2_dot, ans, x1, x2):
            return x1_dot * x1 / ans, x2_dot * x2 / ans

    A tangent rule applies everywhere (jvp, jacobian, hessian) and takes precedence over
    the built-in one; registration takes effect for code compiled afterwards.

    Raises:
        SGCompilerError: at registration, for a rule that is not of this form.
    """
    def register(rule_fn):
        register_tangent(fn, parse_tangent_rule(rule_fn, fn, name=_display_name(fn),
                                                multiple_results=multiple_results,
                                                scope=GLOBAL))
        return rule_fn
    return register


def nondifferentiable(fn, *, scope=None, override: bool = False):
    """Declare `fn` non-differentiable: its results are constants to the compiler.

    Scoped like `adjoint`. Returns `fn`, so it also works as a decorator.

    Raises:
        SGCompilerError: when `fn` has a different rule in that scope (unless override).
    """
    caller = sys._getframe(1).f_globals.get("__name__", "__main__")
    where = _scope(fn, scope, caller)
    if not callable(fn):
        raise SGCompilerError(f"nondifferentiable: {fn!r} is not a function")
    _check_conflicts(fn, None, where, override)
    register_scoped(fn, None, where)
    return fn


def _scope(fn, scope, caller: str) -> str:
    if scope is None:
        own = isinstance(fn, types.FunctionType) and fn.__module__ == caller
        return GLOBAL if own else caller
    if scope == "global":
        return GLOBAL
    if scope == "module":
        return caller
    if isinstance(scope, types.ModuleType):
        return scope.__name__
    raise SGCompilerError(f"scope must be None, 'global', 'module' or a module; got {scope!r}")


def _describe(rule) -> str:
    if rule is None:
        return "a non-differentiable declaration"
    return f"the derivative rule {rule.source.__module__}.{rule.source.__qualname__}"


def _same(a, b) -> bool:
    """The same rule registered again (a module reloaded, a notebook cell run twice)."""
    if a is None or b is None:
        return a is b
    return a.text == b.text and a.params == b.params


def _check_conflicts(fn, rule, scope: str, override: bool) -> None:
    if override:
        return
    label = _display_name(fn)
    old = scoped_entry(fn, scope)
    if old is not None and not _same(old[1], rule):
        where = "globally" if scope == GLOBAL else f"in module {scope}"
        raise SGCompilerError(f"{label} already has {_describe(old[1])} {where}; pass "
                              "override=True to replace it")
    builtin = builtin_entry(fn)
    if scope == GLOBAL and builtin is not None and not _same(builtin[1], rule):
        kind = "rule" if builtin[1] is not None else "non-differentiable declaration"
        raise SGCompilerError(f"{label} has a built-in {kind}; replacing it globally would "
                              "change the gradients of every module. Register it for your "
                              "module only (leave out scope=\"global\"), or pass "
                              "override=True")


# --- does the rule fit the function? ------------------------------------------------------


def _check_signature(rule, fn) -> None:
    """Refuse a rule whose parameters cannot stand for `fn`'s: the compiler binds a call's
    arguments to the rule's parameters, so names, order and defaults must agree."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return          # nothing to check against (some C functions)
    problem = signature_problem(rule, sig)
    if problem:
        raise SGCompilerError(f"derivative rule {rule.source.__qualname__} for {rule.name}: "
                              f"{problem}; the function's signature is {rule.name}{sig}")


def _reserved_spelling(rule_name: str, name: str) -> bool:
    """A function's own parameter named `g` or `ans` (a runtime helper's, say) is written
    `g_` or `ans_` in its rule: `g` and `ans` are the rule's first two parameters."""
    return name in ("g", "ans") and rule_name == name + "_"


def signature_problem(rule, sig: inspect.Signature) -> str | None:
    """Why `rule`'s parameters do not fit the signature `sig`, or None when they do."""
    fparams = list(sig.parameters.values())
    positional = [p for p in fparams if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    variadic = any(p.kind == p.VAR_POSITIONAL for p in fparams)
    by_name = {p.name: p for p in fparams
               if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    has_kwargs = any(p.kind == p.VAR_KEYWORD for p in fparams)
    matched = set()
    for i, param in enumerate(rule.signature.parameters.values()):
        if param.kind == param.POSITIONAL_OR_KEYWORD:
            if i < len(positional):
                target = positional[i]
                if target.kind == target.POSITIONAL_OR_KEYWORD and target.name != param.name \
                        and not _reserved_spelling(param.name, target.name):
                    return (f"its parameter {i + 1} is '{param.name}' but the function's is "
                            f"'{target.name}' (use the function's names, in its order)")
            elif not variadic:
                return f"'{param.name}' is not a parameter of the function"
            else:
                target = None
        else:
            target = by_name.get(param.name)
            if target is None and not has_kwargs:
                return f"'{param.name}' is not a keyword parameter of the function"
        if target is None:
            continue
        matched.add(target.name)
        problem = _default_problem(param, target)
        if problem:
            return problem
    missing = [p.name for p in fparams if p.default is p.empty and p.name not in matched
               and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if missing:
        return f"it has no parameter for the function's required '{missing[0]}'"
    return None


def _default_problem(param, target) -> str | None:
    # a rule without a default only makes calls that leave the argument out refuse
    if target.default is target.empty or param.default is param.empty:
        return None
    if target.default is np._NoValue:
        return None
    same = type(param.default) is type(target.default) and param.default == target.default
    if not same and not (isinstance(param.default, (int, float)) and
                         isinstance(target.default, (int, float)) and
                         not isinstance(param.default, bool) and
                         param.default == target.default):
        return (f"'{param.name}' defaults to {param.default!r} in the rule but to "
                f"{target.default!r} in the function")
    return None
