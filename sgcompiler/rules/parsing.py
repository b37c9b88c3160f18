"""How a rule function is read (registry.py registers what this makes): `parse_rule`
turns `def r(g, ans, *params): return ...` into a `Rule`, `parse_tangent_rule` turns
`def r(<tangents>, ans, *params): return ...` into a `TangentRule`, each with the
expressions the compiler inlines.
"""
from __future__ import annotations

import inspect
import sys
import textwrap
import types
from dataclasses import dataclass, field

import gast
import numpy as np

from ..errors import SGCompilerError

BUILTIN, GLOBAL = "builtin", "global"     # the scopes of built-in and of global rules


@dataclass(frozen=True)
class Rule:
    """One primitive's derivative, parsed and ready to inline."""

    primitive: object
    name: str                              # how messages and docs name the primitive
    params: tuple[str, ...]                # the primitive's parameters, NumPy's names
    defaults: dict = field(repr=False)     # parameter -> default value
    outputs: tuple = field(repr=False)     # parameter -> gast expr or None, same order
    namespace: dict = field(repr=False)    # what the names in `outputs` refer to
    elementwise: bool = False              # result has the broadcast shape of the operands
    reduction: bool = False                # result is a scalar when `axis` is None
    multiple_results: bool = False         # returns a tuple; `g` is a list of adjoints
    source: object = field(repr=False, default=None)   # the rule function itself
    signature: object = field(repr=False, default=None)  # how call arguments bind to params
    notes: str = ""                        # caveats, for docs/numpy-coverage.md
    scope: str = BUILTIN                   # BUILTIN, GLOBAL or a module name
    text: str = field(repr=False, default="")   # the rule's source text
    # parameter -> the literal values the rule handles (a tuple), or a test of a value
    # known at compile time (a function): other values are refused at compile time
    supported: dict = field(repr=False, default_factory=dict)
    single_result_when: tuple = ()         # (parameter, literal): a call passing it has one
    #                                        result (np.linalg.svd's compute_uv=False)

    def output_for(self, param: str):
        return self.outputs[self.params.index(param)]

    def is_zero(self, param: str) -> bool:
        """Whether the rule says the gradient for `param` is exactly zero."""
        return _is_zero(self.output_for(param))

    @property
    def differentiable(self) -> tuple[str, ...]:
        """The parameters that get a (nonzero) gradient."""
        return tuple(p for p, o in zip(self.params, self.outputs)
                     if o is not None and not _is_zero(o))


def _is_zero(expr) -> bool:
    return isinstance(expr, gast.Constant) and type(expr.value) in (int, float) \
        and expr.value == 0


def _display_name(primitive) -> str:
    module = getattr(primitive, "__module__", None) or ""
    name = getattr(primitive, "__qualname__", None) or getattr(primitive, "__name__",
                                                                repr(primitive))
    if isinstance(primitive, np.ufunc):       # ufuncs do not know their module
        for where, label in ((np, "np"), (sys.modules.get("scipy.special"), "scipy.special")):
            if where is not None and getattr(where, name, None) is primitive:
                return f"{label}.{name}"
        return name
    if module.startswith("numpy"):
        sub = module.split(".")[1] if module.count(".") else ""
        if sub in ("linalg", "random", "fft"):
            return f"np.{sub}.{name}"
        if "." in name:      # a method of a NumPy class: np.random.Generator.normal
            return f"np.random.{name}" if "random" in module else f"np.{name}"
        return f"np.{name}"
    if module in ("math", "builtins", "_operator", "operator"):
        return name if module == "builtins" else f"{module.lstrip('_')}.{name}"
    if module.startswith("scipy."):
        module = ".".join(module.split(".")[:2])      # scipy.special._ufuncs -> scipy.special
    return f"{module}.{name}" if module else name


def _is_literal(value) -> bool:
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    return isinstance(value, tuple) and all(_is_literal(v) for v in value)


def parse_rule(rule_fn, primitive, *, elementwise=False, reduction=False,
               multiple_results=False, name=None, notes="", scope=BUILTIN,
               supported=None, single_result_when=()) -> Rule:
    """Read a rule function into a `Rule`.

    Raises:
        SGCompilerError: when the rule is not `def r(g, ans, *params): return ...`.
    """
    label = name or _display_name(primitive)
    qualname = getattr(rule_fn, "__qualname__", repr(rule_fn))
    where = f"derivative rule {qualname} for {label}"
    if not isinstance(rule_fn, types.FunctionType) or rule_fn.__name__ == "<lambda>":
        raise SGCompilerError(f"{where}: a rule must be a function defined with def")
    sig = inspect.signature(rule_fn)
    _check_rule_params(sig, where)
    params = tuple(list(sig.parameters)[2:])
    text, outputs = _rule_outputs(rule_fn, params, where)
    defaults = {p.name: p.default for p in sig.parameters.values()
                if p.default is not inspect.Parameter.empty}
    signature = inspect.Signature(list(sig.parameters.values())[2:])
    return Rule(primitive=primitive, name=label, params=params, defaults=defaults,
                outputs=outputs, namespace=_namespace_of(rule_fn), elementwise=elementwise,
                reduction=reduction, multiple_results=multiple_results, source=rule_fn,
                signature=signature, notes=notes, scope=scope, text=text,
                supported=dict(supported or {}),
                single_result_when=tuple(single_result_when))


def _check_rule_params(sig, where) -> None:
    """Refuse a rule whose parameters are not (g, ans, plain parameters with literal
    defaults)."""
    names = list(sig.parameters)
    if names[:2] != ["g", "ans"]:
        raise SGCompilerError(f"{where}: a rule's first two parameters must be (g, ans), "
                              f"got ({', '.join(names[:2])})")
    for p in list(sig.parameters.values())[2:]:
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            raise SGCompilerError(f"{where}: parameter {p.name} must be a plain parameter "
                                  "(no *args or **kwargs)")
        if p.default is not p.empty and not _is_literal(p.default):
            raise SGCompilerError(f"{where}: the default of {p.name} must be a literal "
                                  f"(None, a number, a string or a tuple), got {p.default!r}")


def _rule_outputs(rule_fn, params, where):
    """(the rule's source text, one gast expression or None per parameter)."""
    try:
        text = textwrap.dedent(inspect.getsource(rule_fn))
    except (OSError, TypeError):
        raise SGCompilerError(f"{where}: its source is not available; define it in a file")
    tree = gast.parse(text).body[0]
    body = [s for s in tree.body if not _is_docstring(s)]
    if len(body) != 1 or not isinstance(body[0], gast.Return) or body[0].value is None:
        raise SGCompilerError(f"{where}: the body must be a single 'return' of one "
                              "expression per parameter")
    value = body[0].value
    exprs = list(value.elts) if isinstance(value, gast.Tuple) else [value]
    if len(exprs) > len(params):
        raise SGCompilerError(f"{where}: returns {len(exprs)} gradients for "
                              f"{len(params)} parameters")
    exprs += [None] * (len(params) - len(exprs))
    outputs = tuple(None if e is None or (isinstance(e, gast.Constant) and e.value is None)
                    else e for e in exprs)
    if all(o is None or _is_zero(o) for o in outputs):
        raise SGCompilerError(f"{where}: gives no gradient for any parameter; declare the "
                              "function with sgcompiler.nondifferentiable instead")
    return text, outputs


def _namespace_of(rule_fn) -> dict:
    """What the names in a rule function's body refer to: its globals and closure cells."""
    namespace = dict(rule_fn.__globals__)
    if rule_fn.__closure__:
        namespace.update(zip(rule_fn.__code__.co_freevars,
                             (c.cell_contents for c in rule_fn.__closure__)))
    return namespace


def _is_docstring(stmt) -> bool:
    return isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant) \
        and isinstance(stmt.value.value, str)


@dataclass(frozen=True)
class TangentRule:
    """One primitive's tangent rule, parsed and ready to inline."""

    primitive: object
    name: str
    params: tuple[str, ...]            # the primitive's parameters (as the adjoint rule's)
    defaults: dict = field(repr=False)
    tangents: tuple = ()               # (parameter, name its tangent has in `outputs`)
    outputs: tuple = field(repr=False, default=())   # one gast expr per tangent (or result)
    namespace: dict = field(repr=False, default_factory=dict)
    kind: str = "rule"                 # "rule", "linear" (f of the tangents), "multilinear"
    #                                    (a sum of f with one tangent each) or "derived"
    #                                    (from the adjoint rule, derive.py)
    multiple_results: bool = False     # outputs: one tangent per result
    full_shape: bool = True            # contributions have the result's shape (derived
    #                                    elementwise ones may have an operand's: broadcast)
    signature: object = field(repr=False, default=None)
    source: object = field(repr=False, default=None)
    scope: str = BUILTIN
    trees: bool = False                # contributions may be lists: added with add_trees

    def tangent_of(self, param):
        """The name of `param`'s tangent in the outputs, or None (no tangent)."""
        return dict(self.tangents).get(param)


def parse_tangent_rule(rule_fn, primitive, *, multiple_results=False, name=None,
                       scope=BUILTIN, elementwise=False, trees=False) -> TangentRule:
    """Read a tangent rule function into a `TangentRule`.

    Raises:
        SGCompilerError: when the rule is not `def r(<tangents>, ans, *params): return ...`.
    """
    label = name or _display_name(primitive)
    where = f"tangent rule {getattr(rule_fn, '__qualname__', rule_fn)!r} for {label}"
    if not isinstance(rule_fn, types.FunctionType) or rule_fn.__name__ == "<lambda>":
        raise SGCompilerError(f"{where}: a rule must be a function defined with def")
    names = list(inspect.signature(rule_fn).parameters)
    if "ans" not in names:
        raise SGCompilerError(f"{where}: the parameters must be (<tangents>, ans, "
                              "<the function's parameters>)")
    split = names.index("ans")
    tangent_names, params = names[:split], tuple(names[split + 1:])
    if not tangent_names or not params:
        raise SGCompilerError(f"{where}: needs at least one tangent parameter before ans and "
                              "the function's parameters after it")
    tangents = []
    for t in tangent_names:
        param = params[0] if t == "t" and len(tangent_names) == 1 else \
            t[:-len("_dot")] if t.endswith("_dot") else None
        if param not in params:
            raise SGCompilerError(f"{where}: tangent parameter '{t}' must be named "
                                  "<parameter>_dot after one of the function's parameters "
                                  "(or t, when there is one tangent, for the first)")
        tangents.append((param, t))
    exprs = _single_return(rule_fn, where)
    if not multiple_results and len(exprs) != len(tangents):
        raise SGCompilerError(f"{where}: returns {len(exprs)} contributions for "
                              f"{len(tangents)} tangents")
    sig = inspect.signature(rule_fn)
    namespace = _namespace_of(rule_fn)
    return TangentRule(
        primitive=primitive, name=label, params=params,
        defaults={p.name: p.default for p in sig.parameters.values()
                  if p.default is not inspect.Parameter.empty},
        tangents=tuple(tangents), outputs=tuple(exprs), namespace=namespace,
        multiple_results=multiple_results, source=rule_fn, scope=scope,
        full_shape=not elementwise, trees=trees,
        signature=inspect.Signature(list(sig.parameters.values())[split + 1:]))


def _single_return(rule_fn, where):
    try:
        text = textwrap.dedent(inspect.getsource(rule_fn))
    except (OSError, TypeError):
        raise SGCompilerError(f"{where}: its source is not available; define it in a file")
    body = [s for s in gast.parse(text).body[0].body if not _is_docstring(s)]
    if len(body) != 1 or not isinstance(body[0], gast.Return) or body[0].value is None:
        raise SGCompilerError(f"{where}: the body must be a single 'return'")
    value = body[0].value
    return list(value.elts) if isinstance(value, gast.Tuple) else [value]
