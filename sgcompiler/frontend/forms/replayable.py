"""What a checkpointed loop's segments must not do (checkpoint.py): the adjoint sweep runs
each segment's trips a second time, from the state it started with, so the loop may not
jump out of itself, draw random numbers (the second run would draw others), or write into
what it was given (the second run would start from the written values)."""
from __future__ import annotations

import gast
from ...ir.blocks import walk


class Refused(Exception):
    """(node, message): a loop that cannot be checkpointed."""


_DRAWS = frozenset({
    "random", "normal", "standard_normal", "uniform", "integers", "randint", "rand",
    "randn", "choice", "permutation", "shuffle", "permuted", "binomial", "poisson",
    "exponential", "gamma", "beta", "multivariate_normal", "standard_cauchy",
    "standard_exponential", "standard_gamma", "laplace", "logistic", "lognormal",
    "dirichlet", "multinomial", "geometric", "gumbel", "bytes", "random_sample", "sample",
    "chisquare", "weibull", "triangular", "vonmises", "wald", "pareto", "rayleigh",
    "power", "zipf", "hypergeometric", "logseries", "negative_binomial", "f",
    "noncentral_chisquare", "noncentral_f", "standard_t"})


_WRITES = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update",
                     "setdefault", "popitem", "sort", "reverse", "fill", "put", "resize",
                     "itemset", "__setitem__", "__iadd__"})


_HELPER_DRAWS = frozenset({"random", "default_rng", "rvs", "normal", "standard_normal",
                           "uniform", "integers", "choice", "permutation", "shuffle"})


def _walk_jumps(body, inside_loop=False):
    """(node, whether it is inside a loop within `body`) for the statements of `body`."""
    for stmt in body:
        yield stmt, inside_loop
        inner = inside_loop or isinstance(stmt, (gast.For, gast.While))
        for field in ("body", "orelse"):
            if isinstance(stmt, (gast.If, gast.For, gast.While)):
                yield from _walk_jumps(getattr(stmt, field), inner)


def check_replayable(fn, local_names, stmt):
    """Refuse what a second run of `stmt`'s trips would not reproduce: a jump out of
    the loop, `else:`, random draws."""
    if stmt.orelse:
        raise Refused(stmt, "checkpoint= cannot run a loop with `else:` in segments; "
                            "move the else block after the loop")
    for node, inside_loop in _walk_jumps(stmt.body):
        if isinstance(node, gast.Return) or isinstance(node, gast.Break) and \
                not inside_loop:
            kind = "return" if isinstance(node, gast.Return) else "break"
            raise Refused(node, f"checkpoint= runs this loop in segments, and a `{kind}`"
                                " inside it would leave only its segment; compute the "
                                "trip count first, or compile without checkpoint=")
    for node in walk(stmt):
        if isinstance(node, gast.Call) and _draws(fn, local_names, node.func):
            raise Refused(node, "this loop draws random numbers, and checkpoint= runs "
                                "its trips again in the adjoint sweep, where they would "
                                "draw other numbers; draw them before the loop (one "
                                "array of all the draws), or compile without "
                                "checkpoint=")


def check_writes(stmt, params):
    """Refuse writes into what a segment is passed (`out[t] = v`, `acc.append(h)`):
    a segment is a function of its arguments, and the adjoint sweep runs it again."""
    for node in walk(stmt):
        base = None
        if isinstance(node, (gast.Subscript, gast.Attribute)) and \
                isinstance(node.ctx, gast.Store):
            base = node.value
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
                node.func.attr in _WRITES:
            base = node.func.value
        while isinstance(base, (gast.Subscript, gast.Attribute)):
            base = base.value
        if isinstance(base, gast.Name) and base.id in params:
            raise Refused(node, f"this loop writes into '{base.id}', which checkpoint= "
                                "would pass to each segment of the loop and write into "
                                "again when the adjoint sweep runs the segment again; "
                                "reduce the values in the loop (`total = total + "
                                "...`), or compile without checkpoint=")
        if isinstance(node, gast.BinOp) and isinstance(node.op, gast.Add) and any(
                isinstance(side, (gast.List, gast.ListComp, gast.Tuple))
                for side in (node.left, node.right)):
            raise Refused(node, "checkpoint= cannot yet differentiate lists or tuples "
                                "joined with + inside a segment of a loop (the joined "
                                "sequence is a parameter of the segment: issue 13); "
                                "reduce the values in the loop (`total = total + "
                                "...`), or compile without checkpoint=")


def _draws(fn, local_names, func) -> bool:
    """Whether a call of `func` may draw random numbers."""
    parts = []
    while isinstance(func, gast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, gast.Name):
        return False
    if "random" in parts or "rvs" in parts:
        return True
    if func.id in local_names:
        return bool(parts) and parts[-1] in _DRAWS or bool(parts) and parts[0] in _DRAWS
    found, obj = fn.lookup(func.id)
    for attr in reversed(parts):
        obj = getattr(obj, attr, None)
    module = getattr(obj, "__module__", None) or type(obj).__module__ or ""
    if module.startswith(("numpy.random", "random")):
        return True
    code = getattr(obj, "__code__", None)
    return code is not None and bool(set(code.co_names) & _HELPER_DRAWS)
