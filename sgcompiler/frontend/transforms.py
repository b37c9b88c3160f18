"""sgcompiler's own transformations called inside a differentiated function.

    def pinn(x, w):                              def pinn(x, w):
        du = grad(u)(x, w)              ->           du = _grad_u(x, w)
        ...                                          ...

`grad(u)` is evaluated once, when the function is compiled (its arguments must be module-
level names and constants), and the call then reads like a call of a user function whose
source is the generated gradient (`resolve` classifies it so, `GradientFunction.as_function`
gives the code). Runs right after parsing, before `check`.
"""
from __future__ import annotations

import ast
from dataclasses import replace

import gast

from ..errors import describe, errors_at
from .depends import module_level
from .source import FunctionSource
from ..ir.ast_tree import to_ast
from ..ir.blocks import walk_list


def inline_transforms(fn: FunctionSource) -> FunctionSource:
    """`fn` with each `grad(g, ...)(args)` call rewritten to call a name bound to the
    gradient (in `fn.introduced`), or `fn` itself when it has none.

    Raises:
        SGCompilerError: when a transformation's arguments are not known at compile time.
    """
    everything = walk_list(fn.tree)     # (one walk for the names and the calls)
    local = {n.id for n in everything if isinstance(n, gast.Name)
             and isinstance(n.ctx, (gast.Store, gast.Param))}
    introduced, problems = {}, []
    for node in everything:
        refused = _refused_inside(fn, node, local)
        if refused:
            problems.append(describe(fn, node, refused))
            continue
        if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Call)):
            continue
        inner = node.func
        maker = module_level(fn, inner.func, local)
        if not getattr(maker, "sgcompiler_transform_maker", False):
            continue
        try:
            args = [_constant(fn, a, local) for a in inner.args]
            kwargs = {k.arg: _constant(fn, k.value, local) for k in inner.keywords}
            made = maker(*args, **kwargs)
        except _NotConstant as exc:
            problems.append(describe(fn, inner, f"{_text(inner)}: {exc}; inside a "
                                                "differentiated function, name a "
                                                "module-level function and constant wrt"))
            continue
        for_call = getattr(made, "for_call", None)
        if for_call is not None:    # grad(g) of a g(*ws): the gradient of g's copy for
            # this call's arguments (frontend/forms/varargs.collected_copy)
            if any(isinstance(a, gast.Starred) for a in node.args) or \
                    any(k.arg is None for k in node.keywords):
                problems.append(describe(fn, node, f"{_text(node)}: a gradient of a "
                                                   "function taking *args is called here "
                                                   "with *args or **kwargs; pass its "
                                                   "arguments one by one"))
                continue
            made, renamed = for_call(len(node.args), tuple(k.arg for k in node.keywords))
            for k in node.keywords:
                k.arg = renamed.get(k.arg, k.arg)
        name = _fresh(f"_{getattr(maker, '__name__', 'transform')}_"
                      f"{getattr(args[0], '__name__', 'f') if args else 'f'}",
                      local | set(introduced) | set(fn.globals) | set(fn.closure))
        introduced[name] = made
        node.func = gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)
    if problems:
        raise errors_at(problems)
    if not introduced:
        return fn
    return replace(fn, introduced={**fn.introduced, **introduced})


# the API functions that say, with `sgcompiler_refused_inside`, what to write instead of
# calling them inside a differentiated function (only grad and value_and_grad are read)
_API_NAMES = ("jvp", "vjp", "jacobian", "hessian", "hvp", "check_grads")


def _refused_inside(fn, node, local) -> str | None:
    """The refusal of a call of jvp, vjp, jacobian, hessian, hvp or check_grads, or None."""
    if not isinstance(node, gast.Call):
        return None
    func = node.func
    last = func.attr if isinstance(func, gast.Attribute) else \
        func.id if isinstance(func, gast.Name) else None
    if last not in _API_NAMES:
        return None
    found = module_level(fn, func, local)
    why = getattr(found, "sgcompiler_refused_inside", None)
    if why is None:
        return None
    return f"{last}(...) inside a differentiated function is not supported yet; {why}"


class _NotConstant(Exception):
    pass


def _text(node) -> str:
    return ast.unparse(to_ast(node))


def _constant(fn, node, local):
    """The value of a constant, a tuple of constants or a module-level name."""
    if isinstance(node, gast.Constant):
        return node.value
    if isinstance(node, gast.Tuple):
        return tuple(_constant(fn, e, local) for e in node.elts)
    found = module_level(fn, node, local) if isinstance(node, (gast.Name, gast.Attribute)) \
        else None
    if found is None:
        raise _NotConstant(f"'{_text(node)}' is not known when the function is compiled")
    return found


def _fresh(base: str, taken) -> str:
    name, k = base, 2
    while name in taken:
        name, k = f"{base}{k}", k + 1
    return name

