"""Refuse what cannot be differentiated, all of it at once, before any other pass runs.

Each problem names the function, file, line and construct, and says what to do instead:

    f (model.py:14): 'yield' makes f a generator, which cannot be differentiated; return a
    value instead [in: yield x]
"""
from __future__ import annotations

import gast

from ..errors import describe, errors_at
from .source import FunctionSource
from .forms.statements import try_refusal
from ..ir.blocks import walk, walk_list

# construct -> what to say about it
_REFUSED = {
    gast.Yield: "'yield' makes {f} a generator, which cannot be differentiated; return a value instead",
    gast.YieldFrom: "'yield from' makes {f} a generator, which cannot be differentiated; return a value instead",
    gast.Await: "'await' cannot be differentiated; compute the value synchronously",
    gast.AsyncFor: "'async for' cannot be differentiated; use a plain for loop",
    gast.AsyncWith: "'async with' cannot be differentiated; compute the value outside it",
    gast.AsyncFunctionDef: "async functions cannot be differentiated; use a plain def",
    gast.Global: "'global' statements are not supported; pass the value as an argument and return results",
    gast.Nonlocal: "'nonlocal' statements are not supported; pass the value as an argument and return results",
    gast.ClassDef: "class definitions inside a differentiated function are not supported; define the class at module level",
    gast.TryStar: "'try' is not supported in differentiated code; check the condition with 'if' instead",
    gast.With: "'with' is supported for np.errstate and warnings.catch_warnings only; move "
               "this one outside the function",
    gast.Delete: "'del' is not supported in differentiated code; let the variable go out of scope instead",
    gast.Import: "imports inside a differentiated function are not supported; import at module level",
    gast.ImportFrom: "imports inside a differentiated function are not supported; import at module level",
    gast.NamedExpr: "':=' is not supported; assign in a statement of its own",
    gast.Match: "'match' is not supported; use if/elif",
    gast.Set: "set literals are not supported in differentiated code",
    gast.SetComp: "set comprehensions are not supported in differentiated code",
    gast.GeneratorExp: "generator expressions are supported as what sum, max, min, list, "
                       "tuple, any, all, a comprehension or a for loop consumes, also "
                       "from a variable read once later in the same block (not again in "
                       "a loop); elsewhere use a list comprehension",
    gast.Starred: "'*' unpacking is supported for a display ((a, b), [a, b]) or a name bound "
                  "once to one, and in 'a, *rest = xs'; here the number of items is not "
                  "known when the function is compiled, so pass them one by one "
                  "(f(xs[0], xs[1]))",
    gast.DictComp: "a dict comprehension is supported as the value of an assignment to a "
                   "name or of a return (it is filled key by key in a loop), or with keys "
                   "known when the function is compiled; assign this one to a name first "
                   "(e = {{k: ... for ...}})",
}
_NOT_YET = {
    gast.Lambda: "lambdas inside a differentiated function are not supported; define the function at module level",
    gast.FunctionDef: "functions defined inside a differentiated function are not supported; define it at module level",
}


def check(fn: FunctionSource) -> None:
    """Raise one SGCompilerError listing every unsupported construct in `fn`.

    Raises:
        SGCompilerError: with one line per problem, each with file and line.
    """
    problems = []    # (line, message)
    tree = fn.tree
    if isinstance(tree, gast.AsyncFunctionDef):
        problems.append((tree, _REFUSED[gast.AsyncFunctionDef]))
    args = tree.args
    if args.vararg is not None or args.kwarg is not None:
        problems.append((tree, "*args and **kwargs parameters are supported on the "
                               "function given to grad, value_and_grad or jvp and on the "
                               "helpers it calls, not here; name each parameter"))
    for stmt in tree.body:
        for node in walk_list(stmt):
            message = _REFUSED.get(type(node)) or _NOT_YET.get(type(node))
            if message:
                problems.append((node, message.format(f=fn.name)))
            elif isinstance(node, gast.Try):
                problems.append(try_refusal(node) or (node, "this 'try' is not supported"))
            elif isinstance(node, gast.Call) and _is_builtin_call(node, ("eval", "exec")):
                problems.append((node, f"'{node.func.id}' cannot be differentiated; "
                                       "write the code out in the function"))
            elif isinstance(node, (gast.Assign, gast.AugAssign, gast.AnnAssign)):
                problems.extend((node, m) for m in _check_targets(node))
    if problems:
        problems.sort(key=lambda p: getattr(p[0], "lineno", 0) or 0)
        raise errors_at(list(dict.fromkeys(describe(fn, n, m) for n, m in problems)))


def _is_builtin_call(node, names) -> bool:
    return isinstance(node.func, gast.Name) and node.func.id in names


def _check_targets(node):
    targets = node.targets if isinstance(node, gast.Assign) else [node.target]
    for target in targets:
        for t in walk(target):
            if isinstance(t, gast.Attribute) and isinstance(t.ctx, gast.Store):
                yield ("assigning to an attribute is not supported in differentiated code; "
                       "use a local variable")
