"""What one normal-form right-hand side computes, as plain data shared by the later passes.

    describe_op(`np.sum(e, axis=1)`)  -> Op(RULE, rule=np.sum, args={'a': e, 'axis': 1},
                                           inputs=(('a', 'e'),))
    describe_op(`x.T`)                -> Op(RULE, rule=np.transpose, args={'a': x})
    describe_op(`x > 0`)              -> Op(NONDIFF)

`inputs` are the (parameter, variable) pairs through which a gradient flows; `blocked`
are variables in parameters the rule gives no gradient for (an error if they are active).
"""
from __future__ import annotations

import inspect
import operator
import types
from dataclasses import dataclass, field

import gast
import numpy as np

from .. import rules, runtime
from ..errors import error_at
from ..frontend.normalize import is_global_chain
from ..frontend.resolve import (ITERATION, METHOD, NONDIFF, OPAQUE, PRIMITIVE, STOP, USER,
                                is_library)
from ..ir.blocks import walk

COPY, CONST, RULE, STOPPED, NONDIFFERENTIABLE, INDEX, CONTAINER, APPEND, CALL, SETITEM, \
    NO_RULE = ("copy", "const", "rule", "stop", "nondiff", "index", "container", "append",
               "call", "setitem", "no rule")

_BINOPS = {gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
           gast.Div: operator.truediv, gast.Pow: operator.pow, gast.MatMult: operator.matmul,
           gast.FloorDiv: operator.floordiv, gast.Mod: operator.mod,
           gast.BitAnd: operator.and_, gast.BitOr: operator.or_, gast.BitXor: operator.xor}
_UNARY = {gast.USub: operator.neg, gast.UAdd: operator.pos, gast.Not: operator.not_,
          gast.Invert: operator.invert}

# x.name(...) -> the NumPy function that computes it, with x as the first argument
_METHODS = {
    "sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod,
    "reshape": np.reshape, "transpose": np.transpose, "dot": np.dot, "squeeze": np.squeeze,
    "clip": np.clip, "copy": np.copy, "argmax": np.argmax, "argmin": np.argmin,
    "argsort": np.argsort, "any": np.any, "all": np.all, "nonzero": np.nonzero,
    "round": np.round, "var": np.var, "std": np.std, "cumsum": np.cumsum,
    "cumprod": np.cumprod, "ravel": np.ravel, "flatten": np.ravel, "astype": runtime.astype,
    "trace": np.trace, "diagonal": np.diagonal, "swapaxes": np.swapaxes, "repeat": np.repeat,
    "take": np.take, "conj": np.conjugate, "conjugate": np.conjugate,
    "searchsorted": np.searchsorted, "argpartition": np.argpartition,
}
NONDIFF_METHODS = {"keys", "index", "count", "tolist"}
_PACKED = {"reshape", "transpose"}     # x.reshape(2, 3) means np.reshape(x, (2, 3))
NONDIFF_ATTRIBUTES = {"shape", "ndim", "size", "dtype", "itemsize", "nbytes"}
# x.name -> the NumPy function that computes it from x
_ATTRIBUTES = {"T": np.transpose, "real": np.real, "imag": np.imag,
               **({"mT": np.matrix_transpose} if hasattr(np, "matrix_transpose") else {})}


@dataclass(frozen=True)
class Op:
    kind: str
    rule: object = None
    args: dict = field(default_factory=dict)   # rule parameter -> atom node
    inputs: tuple = ()                         # (parameter, variable name) with a gradient
    blocked: tuple = ()                        # (parameter, variable name) without one
    reads: tuple = ()                          # every variable name the rhs reads
    what: str = ""                             # how messages name the operation
    why: str = ""                              # for NO_RULE: why no gradient flows


def describe_stmt(stmt, resolution, fn) -> Op:
    """The Op of a normal-form assignment, list append or element write."""
    if is_setitem(stmt):
        target, value = stmt.targets[0], stmt.value
        reads = tuple(dict.fromkeys(n.id for n in walk(stmt) if isinstance(n, gast.Name)
                                    and n.id not in resolution.global_roots))
        return Op(SETITEM, inputs=(("x", target.value.id),) + _names_of([value], "v"),
                  reads=reads)
    return describe_op(stmt.value, resolution, fn, stmt)


def describe_op(rhs, resolution, fn, node) -> Op:
    """Classify the right-hand side `rhs` of a normal-form statement `node`."""
    reads = tuple(dict.fromkeys(n.id for n in walk(rhs) if isinstance(n, gast.Name)
                                and n.id not in resolution.global_roots))
    if isinstance(rhs, gast.Name):
        if rhs.id in resolution.global_roots:
            return Op(CONST)
        return Op(COPY, inputs=(("x", rhs.id),), reads=reads)
    if isinstance(rhs, gast.Constant) or is_global_chain(rhs, resolution.global_roots):
        return Op(CONST)
    if isinstance(rhs, gast.BinOp):
        return _rule_op(fn, node, _BINOPS.get(type(rhs.op)), [rhs.left, rhs.right], {},
                        reads, type(rhs.op).__name__)
    if isinstance(rhs, gast.UnaryOp):
        return _rule_op(fn, node, _UNARY[type(rhs.op)], [rhs.operand], {}, reads,
                        type(rhs.op).__name__)
    if isinstance(rhs, gast.BoolOp):
        # `a or b` returns an operand: a differentiable value through it would be lost
        return Op(NO_RULE, blocked=_names_of(rhs.values), reads=reads,
                  what="'and'/'or' (use np.where or an if statement)")
    if isinstance(rhs, (gast.Compare, gast.JoinedStr)):
        return Op(NONDIFFERENTIABLE, reads=reads)
    if isinstance(rhs, gast.Attribute):
        if rhs.attr in NONDIFF_ATTRIBUTES:
            return Op(NONDIFFERENTIABLE, reads=reads)
        if rhs.attr in _ATTRIBUTES:
            return _rule_op(fn, node, _ATTRIBUTES[rhs.attr], [rhs.value], {}, reads,
                            f".{rhs.attr}")
        return Op(NO_RULE, blocked=_names_of([rhs.value]), reads=reads,
                  what=f"the attribute .{rhs.attr}")
    if isinstance(rhs, gast.Subscript):
        return Op(INDEX, inputs=_names_of([rhs.value], "x"), reads=reads)
    if isinstance(rhs, (gast.Tuple, gast.List)):
        return Op(CONTAINER, inputs=_names_of(rhs.elts), reads=reads)
    if isinstance(rhs, gast.Dict):
        return Op(CONTAINER, inputs=_names_of(rhs.values), reads=reads)
    if isinstance(rhs, gast.Call):
        return _call_op(rhs, resolution, fn, node, reads)
    raise AssertionError(f"not in normal form: {gast.dump(rhs)}")


def is_append(stmt) -> bool:
    """`L.append(v)` as a statement: the one normal-form statement that mutates a value."""
    value = stmt.value if isinstance(stmt, gast.Expr) else None
    return isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) \
        and value.func.attr == "append" and isinstance(value.func.value, gast.Name) \
        and len(value.args) == 1 and not value.keywords


def is_setitem(stmt) -> bool:
    """`x[index] = v`: writes into an array in place."""
    return isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Subscript)


def target_of(stmt) -> str:
    """The variable a normal-form assignment (or append, or element write) writes."""
    if isinstance(stmt, gast.Assign):
        target = stmt.targets[0]
        return target.value.id if isinstance(target, gast.Subscript) else target.id
    return stmt.value.func.value.id


def _names_of(atoms, param=None):
    return tuple((param or str(i), a.id) for i, a in enumerate(atoms)
                 if isinstance(a, gast.Name))


def _call_op(rhs, resolution, fn, node, reads) -> Op:
    callee = resolution.callee(rhs.func)
    args, keywords = list(rhs.args), {k.arg: k.value for k in rhs.keywords}
    if callee.kind == STOP:
        return Op(STOPPED, reads=reads)
    if callee.kind == NONDIFF:
        return Op(NONDIFFERENTIABLE, reads=reads)
    if callee.kind == PRIMITIVE:
        return _rule_op(fn, node, callee.obj, args, keywords, reads, callee.name)
    if callee.kind == METHOD:
        target = _METHODS.get(callee.name)
        receiver = rhs.func.value
        if callee.name == "append" and is_append(node):
            return Op(APPEND, inputs=_names_of([receiver], "list") + _names_of(args, "x"),
                      reads=reads)
        if callee.name in NONDIFF_METHODS:
            return Op(NONDIFFERENTIABLE, reads=reads)
        if target is None:
            return Op(NO_RULE, blocked=_names_of([receiver] + args + list(keywords.values())),
                      reads=reads, what=f"the method .{callee.name}()")
        if callee.name in _PACKED and len(args) > 1:
            args = [gast.Tuple(elts=args, ctx=gast.Load())]
        if rules.is_nondifferentiable(target, rules.scope_of(fn)):
            return Op(NONDIFFERENTIABLE, reads=reads)
        return _rule_op(fn, node, target, [receiver] + args, keywords, reads,
                        f".{callee.name}()")
    if callee.kind == OPAQUE:
        what = callee.name
        parts = callee.name.split(".")        # (as the source spells it: any alias)
        advice = _NO_RULE_ADVICE.get(rules.registry._display_name(callee.obj)) or \
            _NO_RULE_ADVICE.get(".".join(parts[-2:])) or _NO_RULE_ADVICE.get(parts[-1])
        if advice:
            return Op(NO_RULE, blocked=_names_of(args + list(keywords.values())), reads=reads,
                      what=what, why=advice)
        if isinstance(callee.obj, types.FunctionType) and is_library(callee.obj):
            what = (f"{rules.registry._display_name(callee.obj)} (library code is not "
                    "differentiated through its source unless you ask for it with "
                    "sgcompiler.differentiate_module)")
        return Op(NO_RULE, blocked=_names_of(args + list(keywords.values())), reads=reads,
                  what=what)
    if callee.kind == ITERATION:
        return Op(NO_RULE, blocked=_names_of(args), reads=reads,
                  what=f"{callee.name}() outside a for statement")
    if callee.kind == USER:
        try:
            bound = inspect.signature(callee.obj).bind(*args, **keywords).arguments
        except TypeError as exc:
            raise error_at(node, fn, f"{callee.name} is called with arguments it does not "
                                     f"take ({exc})") from None
        packed = _packed_params(callee.obj, bound)
        if packed:
            # the arguments travel in a tuple or dict that the callee unpacks: refused
            # (no gradient would reach them) where a gradient has to flow
            return Op(NO_RULE, blocked=_names_of(args + list(keywords.values())),
                      reads=reads, what=callee.name,
                      why=f"{callee.name} collects arguments in {packed}, which sgcompiler "
                          f"cannot differentiate through (give {callee.name} a named "
                          "parameter for each argument)")
        inputs = tuple((p, v.id) for p, v in bound.items() if isinstance(v, gast.Name))
        return Op(CALL, rule=callee.obj, args=dict(bound), inputs=inputs, reads=reads,
                  what=callee.name)
    raise AssertionError(f"unexpected callee {callee}")


_SOLVER = ("has no derivative rule: its solver runs in compiled code, which sgcompiler "
           "cannot read; integrate with a loop of fixed steps instead (Euler or Runge-Kutta: "
           "for k in range(n): y = y + h * f(y, t[k])), which sgcompiler differentiates "
           "(with checkpointing for long loops)")
# functions that will not get a rule, and what to do instead (by name as messages spell it)
_NO_RULE_ADVICE = {
    "scipy.integrate.odeint": "scipy.integrate.odeint " + _SOLVER,
    "odeint": "scipy.integrate.odeint " + _SOLVER,
    "scipy.integrate.solve_ivp": "scipy.integrate.solve_ivp " + _SOLVER,
    "solve_ivp": "scipy.integrate.solve_ivp " + _SOLVER,
}


def _packed_params(function, bound) -> str:
    """'*args' or '**kwargs' (as the callee spells it) when `bound` puts arguments there."""
    for name, param in inspect.signature(function).parameters.items():
        if name in bound and param.kind == param.VAR_POSITIONAL:
            return f"*{name}"
        if name in bound and param.kind == param.VAR_KEYWORD:
            return f"**{name}"
    return ""


def _rule_op(fn, node, primitive, args, keywords, reads, what) -> Op:
    if rules.is_nondifferentiable(primitive, rules.scope_of(fn)):
        return Op(NONDIFFERENTIABLE, reads=reads)
    rule = rules.lookup(primitive, rules.scope_of(fn))
    if rule is None:
        return Op(NO_RULE, blocked=_names_of(args + list(keywords.values())), reads=reads,
                  what=what)
    try:
        bound = rule.signature.bind(*args, **keywords).arguments
    except TypeError as exc:
        raise error_at(node, fn, f"{rule.name} is called with arguments its derivative "
                                 f"rule does not take ({exc}); the rule's parameters are "
                                 f"({', '.join(rule.params)})") from None
    rule = _as_called(rule, bound, node, fn)
    inputs, blocked = [], []
    for param, value in bound.items():
        if isinstance(value, gast.Tuple):
            names = [e.id for e in value.elts if isinstance(e, gast.Name)]
        else:
            names = [value.id] if isinstance(value, gast.Name) else []
        if rule.is_zero(param):
            continue        # exactly zero: no adjoint, and nothing to refuse
        for name in names:
            if rule.output_for(param) is None or isinstance(value, gast.Tuple):
                blocked.append((param, name))
            else:
                inputs.append((param, name))
    return Op(RULE, rule=rule, args=dict(bound), inputs=tuple(inputs),
              blocked=tuple(blocked), reads=reads, what=rule.name)


def _as_called(rule, bound, node, fn):
    """The rule of this call: one with several results may have one for a literal option
    (np.linalg.svd(a, compute_uv=False)), which must then be written as a literal."""
    if not rule.single_result_when:
        return rule
    param = rule.single_result_when[0]
    if param in bound and not isinstance(bound[param], gast.Constant):
        raise error_at(node, fn, f"{rule.name}'s {param} decides whether it returns one "
                                 f"result or several: pass it as a literal "
                                 f"({param}={rule.single_result_when[1]!r}, say)")
    literals = {param: bound[param].value} if param in bound else {}
    return rules.as_called(rule, literals)


def assignments(body):
    """Every normal-form assignment (and list append) in `body`, nested blocks included,
    in source order."""
    for stmt in body:
        if isinstance(stmt, gast.Assign) or is_append(stmt):
            yield stmt
        elif isinstance(stmt, gast.If):
            yield from assignments(stmt.body)
            yield from assignments(stmt.orelse)
        elif isinstance(stmt, (gast.For, gast.While)):
            yield from assignments(stmt.body)
            yield from assignments(stmt.orelse)
