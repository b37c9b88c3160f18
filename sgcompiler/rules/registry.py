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
The literal `0.0` means "exactly zero": the parameter only matters through its shape, or the
function is piecewise constant in it, and the compiler emits nothing for it.

Built-in rules (this package) form one table, filled when `sgcompiler.rules` is imported;
the SciPy rules are added the first time a SciPy module is seen (`sys.modules`), so SciPy
stays optional and is never imported by sgcompiler itself. Rules that users register
(`sgcompiler.adjoint`, see custom.py) live in scopes: GLOBAL, or a module name whose rules
are seen by functions defined in that module and its submodules. A lookup tries the most
specific scope first: the function's module, its packages, GLOBAL, then the built-ins.
"""
from __future__ import annotations

import contextlib
import contextvars
import importlib
import inspect
import sys
import textwrap
import types
from dataclasses import dataclass, field, replace

import gast
import numpy as np

from ..errors import SGCompilerError

BUILTIN, GLOBAL = "builtin", "global"


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


_RULES: dict[int, Rule] = {}
NONDIFFERENTIABLE: dict[int, object] = {}   # id -> the function (kept alive)
_SCOPED: dict[str, dict[int, tuple]] = {}   # scope -> id -> (function, Rule or None)
_BOUND: dict[tuple, object] = {}            # (id(obj), id(function)) -> obj.function
_VERSION = [0]                              # bumped by every user registration
# rule modules for optional packages: loaded when the package is first seen in sys.modules
_OPTIONAL = {"scipy": "sgcompiler.rules.scipy"}
_LOADED_OPTIONAL: set = set()


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
    if all(o is None or _is_zero(o) for o in outputs):
        raise SGCompilerError(f"{where}: gives no gradient for any parameter; declare the "
                              "function with sgcompiler.nondifferentiable instead")
    defaults = {p.name: p.default for p in sig.parameters.values()
                if p.default is not inspect.Parameter.empty}
    namespace = dict(rule_fn.__globals__)
    if rule_fn.__closure__:
        namespace.update(zip(rule_fn.__code__.co_freevars,
                             (c.cell_contents for c in rule_fn.__closure__)))
    signature = inspect.Signature(list(sig.parameters.values())[2:])
    return Rule(primitive=primitive, name=label, params=params, defaults=defaults,
                outputs=outputs, namespace=namespace, elementwise=elementwise,
                reduction=reduction, multiple_results=multiple_results, source=rule_fn,
                signature=signature, notes=notes, scope=scope, text=text,
                supported=dict(supported or {}),
                single_result_when=tuple(single_result_when))


def _is_docstring(stmt) -> bool:
    return isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant) \
        and isinstance(stmt.value.value, str)


def vjp(*primitives, elementwise=False, reduction=False, multiple_results=False, name=None,
        notes="", supported=None, single_result_when=()):
    """Register the decorated function as the built-in derivative rule of `primitives`.

    `multiple_results`: the primitive returns a tuple; the rule's `g` is then a list with
    one adjoint per result (0.0 for results that received none). `single_result_when`:
    (parameter, value) for which it returns one array instead (np.linalg.svd with
    compute_uv=False); the rule's `g` is then that array's adjoint, and calls must pass
    the parameter as a literal (see `as_called`). `name` is how messages
    and the coverage page name the primitive (default: its module and name), `notes` a
    caveat for the coverage page. `supported` maps a parameter to the literal values the
    rule handles (a tuple) or to a test of its value (a function): a call with another
    value that needs the gradient is refused at compile time. For sgcompiler's own rule
    modules only; users call `sgcompiler.adjoint`.
    """
    def register(rule_fn):
        for primitive in dict.fromkeys(map(_keep_bound, primitives)):  # aliases once
            assert id(primitive) not in _RULES and id(primitive) not in NONDIFFERENTIABLE, \
                f"two built-in rules for {primitive!r}"
            _RULES[id(primitive)] = parse_rule(rule_fn, primitive, elementwise=elementwise,
                                               reduction=reduction,
                                               multiple_results=multiple_results, name=name,
                                               notes=notes, supported=supported,
                                               single_result_when=single_result_when)
        return rule_fn
    return register


_SINGLE: dict[int, Rule] = {}               # id(rule) -> the same rule with one result


def as_called(rule: Rule, literals: dict) -> Rule:
    """The rule a call uses, given the values of its literal arguments: a rule with several
    results has one for a call that passes its `single_result_when` option."""
    if rule.single_result_when:
        param, value = rule.single_result_when
        if param in literals and literals[param] == value:
            if id(rule) not in _SINGLE:
                _SINGLE[id(rule)] = replace(rule, multiple_results=False)
            return _SINGLE[id(rule)]
    return rule


def nondifferentiable(*functions) -> None:
    """Declare built-in functions whose results carry no gradient (shapes, indexes, ...)."""
    for f in functions:
        assert id(f) not in _RULES, f"{f!r} has a built-in rule and is non-differentiable"
        NONDIFFERENTIABLE[id(f)] = f


def present(module, *names) -> list:
    """The attributes of `module` among `names` that this version of the library has."""
    return [getattr(module, n) for n in names if hasattr(module, n)]


# --- user scopes -------------------------------------------------------------------------


def key(obj):
    """The object a rule is registered for. Bound methods are new objects on every
    attribute read: those of compiled classes (rng.normal on a Generator) are keyed by the
    function they wrap (np.random.Generator.normal), those of one object that has rules
    (scipy.stats.norm.logpdf) by the first such method registered."""
    if isinstance(obj, types.MethodType):
        if not isinstance(obj.__func__, types.FunctionType):
            return obj.__func__
        return _BOUND.get((id(obj.__self__), id(obj.__func__)), obj)
    return obj


def _keep_bound(primitive):
    """Remember a bound method of a Python function (scipy.stats.norm.logpdf), so that
    later reads of the same attribute find its rule; the object is kept alive with it."""
    if isinstance(primitive, types.MethodType) and \
            isinstance(primitive.__func__, types.FunctionType):
        primitive = _BOUND.setdefault((id(primitive.__self__), id(primitive.__func__)),
                                      primitive)
    return primitive


def builtin_entry(obj):
    """(obj, Rule) or (obj, None) for non-differentiable, from the built-in table, or None."""
    _load_optional()           # first: it may register rules for bound methods (key)
    obj = key(obj)
    if _COMPLEX_MODE.get():
        rule = _COMPLEX_RULES.get(id(obj))
        if rule is not None and rule.primitive is obj:
            return obj, rule
    rule = _RULES.get(id(obj))
    if rule is not None and rule.primitive is obj:
        return obj, rule
    if NONDIFFERENTIABLE.get(id(obj)) is obj:
        return obj, None
    return None


def scoped_entry(obj, scope: str):
    """The entry registered for `obj` in exactly `scope`, or None."""
    obj = key(obj)
    entry = _SCOPED.get(scope, {}).get(id(obj))
    return entry if entry is not None and entry[0] is obj else None


def register_scoped(obj, rule, scope: str) -> None:
    """Put a user's rule (or None: non-differentiable) for `obj` into `scope`."""
    obj = _keep_bound(key(obj))
    _SCOPED.setdefault(scope, {})[id(obj)] = (obj, rule)
    _VERSION[0] += 1


_SOURCE_MODULES: set = set()     # library modules whose functions are read as user code


def add_source_module(name: str) -> None:
    """Differentiate the functions of library module `name` (and its submodules) through
    their source."""
    _SOURCE_MODULES.add(name)
    _VERSION[0] += 1


def is_source_module(module: str | None) -> bool:
    return bool(module) and any(module == m or module.startswith(m + ".")
                                for m in _SOURCE_MODULES)


def version():
    """What the rules in use depend on (part of every compile cache key): a number that
    changes whenever a user registers a rule, and whether complex values may occur."""
    return _VERSION[0], _COMPLEX_MODE.get()


# --- complex values -----------------------------------------------------------------------
#
# Code that may hold complex values is compiled in "complex mode" (pipeline.py decides, from
# frontend/complex_values.py). Adjoints follow JAX's convention: the adjoint `g` of a value
# w pairs with a change dw as Re(g * dw), so a holomorphic function's rule is its real rule
# (dz = g * f'(z)) and the gradient of a real loss is df/dx - i df/dy. In complex mode a
# lookup finds the complex variant of a rule first (np.abs, np.real, np.conj, ...); rules
# that are right for complex operands as written are declared `complex_safe`; any other
# rule refuses, at run time, the complex operands it cannot take (runtime/complex_numbers.py).

_COMPLEX_MODE = contextvars.ContextVar("sgcompiler_complex_mode", default=False)
_COMPLEX_RULES: dict[int, Rule] = {}        # id -> the rule complex mode uses
_COMPLEX_TANGENTS: dict = {}                # id -> the tangent rule complex mode uses
_COMPLEX_SAFE: dict[int, object] = {}       # id -> a function whose rule takes complex values


@contextlib.contextmanager
def complex_values(on: bool):
    """Compile in complex mode inside the block when `on` (or when already in it)."""
    token = _COMPLEX_MODE.set(bool(on) or _COMPLEX_MODE.get())
    try:
        yield
    finally:
        _COMPLEX_MODE.reset(token)


def complex_mode() -> bool:
    """Whether the code being compiled may hold complex values."""
    return _COMPLEX_MODE.get()


def complex_safe(*functions) -> None:
    """Declare built-in functions whose rules (adjoint and tangent) are right, as written,
    for complex operands in the convention above (holomorphic and linear functions)."""
    for f in functions:
        _COMPLEX_SAFE[id(f)] = f


def handles_complex(rule) -> bool:
    """Whether `rule` (an adjoint or tangent rule) is right for complex operands."""
    return rule.scope == BUILTIN and _COMPLEX_SAFE.get(id(rule.primitive)) is rule.primitive


def complex_vjp(*primitives, **options):
    """Register the decorated function as the adjoint rule complex mode uses for
    `primitives` (the options of `vjp`)."""
    def register(rule_fn):
        for primitive in dict.fromkeys(primitives):
            assert id(primitive) not in _COMPLEX_RULES, f"two complex rules for {primitive!r}"
            _COMPLEX_RULES[id(primitive)] = parse_rule(rule_fn, primitive, **options)
            complex_safe(primitive)
        return rule_fn
    return register


def complex_jvp(*primitives, **options):
    """Register the decorated function as the tangent rule complex mode uses."""
    def register(rule_fn):
        for primitive in dict.fromkeys(primitives):
            _COMPLEX_TANGENTS[id(primitive)] = parse_tangent_rule(rule_fn, primitive,
                                                                  **options)
        return rule_fn
    return register


def complex_rules() -> list:
    """The adjoint rules complex mode uses instead of the built-in ones (or in addition)."""
    return sorted(_COMPLEX_RULES.values(), key=lambda r: r.name)


def complex_safe_functions() -> list:
    """The functions whose ordinary rules complex mode uses for complex operands too."""
    return [f for i, f in _COMPLEX_SAFE.items() if i not in _COMPLEX_RULES]


def _scope_chain(module: str | None):
    """'a.b.c' -> 'a.b.c', 'a.b', 'a', GLOBAL: where a function in module a.b.c looks."""
    if module:
        parts = module.split(".")
        for i in range(len(parts), 0, -1):
            yield ".".join(parts[:i])
    yield GLOBAL


def find(obj, module: str | None = None):
    """What a function compiled in `module` sees for `obj`: (obj, Rule), (obj, None) for
    non-differentiable, or None when nothing is registered."""
    if _SCOPED:
        for scope in _scope_chain(module):
            entry = scoped_entry(obj, scope)
            if entry is not None:
                return entry
    return builtin_entry(obj)


def lookup(obj, module: str | None = None):
    """The `Rule` for `obj` as seen from functions defined in `module`, or None."""
    entry = find(obj, module)
    return entry[1] if entry is not None else None


def is_nondifferentiable(obj, module: str | None = None) -> bool:
    entry = find(obj, module)
    return entry is not None and entry[1] is None


def scope_of(fn) -> str | None:
    """The module a function (a FunctionSource) is compiled in: where its rules are looked up."""
    return fn.globals.get("__name__")


def _load_optional() -> None:
    """Load the rules of optional packages (SciPy) the user has imported."""
    if len(_LOADED_OPTIONAL) == len(_OPTIONAL):
        return
    for package, module in _OPTIONAL.items():
        if sys.modules.get(package) is not None and package not in _LOADED_OPTIONAL:
            _LOADED_OPTIONAL.add(package)
            importlib.import_module(module)


def load_all_optional() -> None:
    """Load the rules of every optional package that is installed (for docs and tests)."""
    for package in _OPTIONAL:
        try:
            importlib.import_module(package)
        except ImportError:
            continue
    _load_optional()


def all_rules() -> list[Rule]:
    """Every built-in rule, by name (with those of installed optional packages)."""
    load_all_optional()
    only_complex = [r for i, r in _COMPLEX_RULES.items() if i not in _RULES]
    return sorted([*_RULES.values(), *only_complex], key=lambda r: r.name)


def all_nondifferentiable() -> list:
    """Every built-in non-differentiable function."""
    load_all_optional()
    return list(NONDIFFERENTIABLE.values())


# --- tangent (forward-mode) rules --------------------------------------------------------
#
# A tangent rule gives the directional derivative of a primitive: the tangent parameters
# come before `ans`, then the primitive's own parameters. `t` is the tangent of the first
# parameter; with several, each is named after its parameter (`x1_dot`, `x2_dot`). The
# single `return` gives one contribution per tangent parameter; the compiler adds those
# of the tangents that are not zero at compile time (a zero tangent emits nothing):
#
#     @jvp(np.exp)
#     def exp(t, ans, x):
#         return t * ans
#
#     @jvp(np.matmul)
#     def matmul(x1_dot, x2_dot, ans, x1, x2):
#         return x1_dot @ x2, x1 @ x2_dot
#
# `multiple_results=True`: the return gives one tangent per result (or one expression, the
# tuple), from all the tangent parameters at once (0.0 for those that are zero).
# `linear(f, ...)` declares functions linear in their differentiable parameters: the tangent
# is the function applied to the tangents. Elementwise functions and reductions need no
# tangent rule: derive.py derives theirs from the adjoint rule where that is exact.


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

    def tangent_of(self, param):
        """The name of `param`'s tangent in the outputs, or None (no tangent)."""
        return dict(self.tangents).get(param)


_TANGENTS: dict[int, TangentRule] = {}
_LINEAR: dict[int, object] = {}          # id -> function declared linear
_USER_TANGENTS: dict[int, tuple] = {}    # id -> (function, TangentRule): sgcompiler.tangent


def parse_tangent_rule(rule_fn, primitive, *, multiple_results=False, name=None,
                       scope=BUILTIN, elementwise=False) -> TangentRule:
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
    namespace = dict(rule_fn.__globals__)
    if rule_fn.__closure__:
        namespace.update(zip(rule_fn.__code__.co_freevars,
                             (c.cell_contents for c in rule_fn.__closure__)))
    return TangentRule(
        primitive=primitive, name=label, params=params,
        defaults={p.name: p.default for p in sig.parameters.values()
                  if p.default is not inspect.Parameter.empty},
        tangents=tuple(tangents), outputs=tuple(exprs), namespace=namespace,
        multiple_results=multiple_results, source=rule_fn, scope=scope,
        full_shape=not elementwise,
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


def jvp(*primitives, multiple_results=False, name=None, elementwise=False):
    """Register the decorated function as the built-in tangent rule of `primitives`
    (sgcompiler's own rule modules; users call `sgcompiler.tangent`). `elementwise`: a
    contribution may have an operand's shape, and is broadcast to the result's."""
    def register(rule_fn):
        for primitive in dict.fromkeys(map(_keep_bound, primitives)):
            assert id(primitive) not in _TANGENTS, f"two tangent rules for {primitive!r}"
            _TANGENTS[id(primitive)] = parse_tangent_rule(
                rule_fn, primitive, multiple_results=multiple_results, name=name,
                elementwise=elementwise)
        return rule_fn
    return register


def linear(*functions) -> None:
    """Declare built-in functions linear in their differentiable parameters (those their
    adjoint rule gives a gradient): the tangent is the function of the tangents."""
    for f in functions:
        _LINEAR[id(f)] = (f, "linear")


def multilinear(*functions) -> None:
    """Declare built-in functions linear in each differentiable parameter separately
    (products: matmul, dot, einsum): the tangent is the sum, over the parameters that have
    a tangent, of the function with that one argument replaced by its tangent."""
    for f in functions:
        _LINEAR[id(f)] = (f, "multilinear")


def register_tangent(obj, rule: TangentRule) -> None:
    """A user's tangent rule (sgcompiler.tangent): it applies everywhere."""
    obj = key(obj)
    _USER_TANGENTS[id(obj)] = (obj, rule)
    _VERSION[0] += 1


def explicit_tangent(obj):
    """The tangent rule registered for `obj` (a user's first), or None."""
    obj = key(obj)
    _load_optional()
    entry = _USER_TANGENTS.get(id(obj))
    if entry is not None and entry[0] is obj:
        return entry[1]
    found = _COMPLEX_TANGENTS.get(id(obj)) if _COMPLEX_MODE.get() else None
    found = found if found is not None and found.primitive is obj else _TANGENTS.get(id(obj))
    return found if found is not None and found.primitive is obj else None


def linearity(obj) -> str | None:
    """"linear", "multilinear" or None, as declared for `obj`."""
    obj = key(obj)
    entry = _LINEAR.get(id(obj))
    return entry[1] if entry is not None and entry[0] is obj else None


def all_tangent_rules() -> list:
    """Every built-in explicit tangent rule."""
    load_all_optional()
    return list(_TANGENTS.values())
