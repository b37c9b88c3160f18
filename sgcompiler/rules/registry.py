"""The derivative-rule table: how rules are written, registered and looked up.

A rule is an ordinary NumPy function whose single `return` gives the adjoint of each
positional parameter of the primitive, given `g` (the adjoint of the result) and `ans` (the
result):

    @vjp(np.log, elementwise=True)
    def log(g, ans, x):
        return g / x

The compiler reads the rule's source once and inlines its expression into generated code,
with the parameters replaced by the actual operands. `None` means "no gradient" for that
parameter; the compiler refuses (rather than returning zero) if such a parameter is active.
"""
from __future__ import annotations

import inspect
import textwrap
from dataclasses import dataclass, field

import gast

from ..errors import SGCompilerError


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

    def output_for(self, param: str):
        return self.outputs[self.params.index(param)]


_RULES: dict[int, Rule] = {}
NONDIFFERENTIABLE: dict[int, object] = {}   # id -> the function (kept alive)


def _display_name(primitive) -> str:
    module = getattr(primitive, "__module__", None) or ""
    name = getattr(primitive, "__name__", repr(primitive))
    if isinstance(primitive, __import__("numpy").ufunc) or module.startswith("numpy"):
        return f"np.{name}"
    if module in ("math", "builtins", "_operator", "operator"):
        return name if module == "builtins" else f"{module.lstrip('_')}.{name}"
    return f"{module}.{name}" if module else name


def parse_rule(rule_fn, primitive, *, elementwise=False, reduction=False,
               multiple_results=False, name=None) -> Rule:
    """Read a rule function into a `Rule`.

    Raises:
        SGCompilerError: when the rule is not `def r(g, ans, *params): return ...`.
    """
    label = name or _display_name(primitive)
    where = f"derivative rule {rule_fn.__qualname__} for {label}"
    sig = inspect.signature(rule_fn)
    names = list(sig.parameters)
    if names[:2] != ["g", "ans"]:
        raise SGCompilerError(f"{where}: a rule's first two parameters must be (g, ans), "
                              f"got ({', '.join(names[:2])})")
    for p in list(sig.parameters.values())[2:]:
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            raise SGCompilerError(f"{where}: parameter {p.name} must be a plain parameter "
                                  "(no *args or **kwargs)")
    try:
        text = textwrap.dedent(inspect.getsource(rule_fn))
    except (OSError, TypeError):
        raise SGCompilerError(f"{where}: its source is not available; define it in a file")
    tree = gast.parse(text).body[0]
    body = [s for s in tree.body if not _is_docstring(s)]
    if len(body) != 1 or not isinstance(body[0], gast.Return) or body[0].value is None:
        raise SGCompilerError(f"{where}: the body must be a single 'return' of one "
                              "expression per parameter")
    params = tuple(names[2:])
    value = body[0].value
    exprs = list(value.elts) if isinstance(value, gast.Tuple) else [value]
    if len(exprs) > len(params):
        raise SGCompilerError(f"{where}: returns {len(exprs)} gradients for "
                              f"{len(params)} parameters")
    exprs += [None] * (len(params) - len(exprs))
    outputs = tuple(None if e is None or (isinstance(e, gast.Constant) and e.value is None)
                    else e for e in exprs)
    if all(o is None for o in outputs):
        raise SGCompilerError(f"{where}: gives no gradient for any parameter; declare the "
                              "function with sgcompiler.nondifferentiable instead")
    defaults = {p.name: p.default for p in sig.parameters.values()
                if p.default is not inspect.Parameter.empty}
    namespace = dict(rule_fn.__globals__)
    if rule_fn.__closure__:
        namespace.update(zip(rule_fn.__code__.co_freevars,
                             (c.cell_contents for c in rule_fn.__closure__)))
    return Rule(primitive=primitive, name=label, params=params, defaults=defaults,
                outputs=outputs, namespace=namespace, elementwise=elementwise,
                reduction=reduction, multiple_results=multiple_results, source=rule_fn)


def _is_docstring(stmt) -> bool:
    return isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant) \
        and isinstance(stmt.value.value, str)


def vjp(*primitives, elementwise=False, reduction=False, multiple_results=False, name=None):
    """Register the decorated function as the derivative rule of each of `primitives`.

    `multiple_results`: the primitive returns a tuple; the rule's `g` is then a list with
    one adjoint per result (0.0 for results that received none)."""
    def register(rule_fn):
        for primitive in primitives:
            _RULES[id(primitive)] = parse_rule(rule_fn, primitive, elementwise=elementwise,
                                               reduction=reduction,
                                               multiple_results=multiple_results, name=name)
        return rule_fn
    return register


def nondifferentiable(*functions) -> None:
    """Declare functions whose results carry no gradient (shapes, indexes, comparisons)."""
    for f in functions:
        NONDIFFERENTIABLE[id(f)] = f


def lookup(obj):
    """The `Rule` for `obj`, or None."""
    rule = _RULES.get(id(obj))
    return rule if rule is not None and rule.primitive is obj else None


def is_nondifferentiable(obj) -> bool:
    return NONDIFFERENTIABLE.get(id(obj)) is obj


def all_rules() -> list[Rule]:
    return sorted(_RULES.values(), key=lambda r: r.name)
