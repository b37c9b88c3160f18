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

import importlib
import sys
import types
from dataclasses import replace

import numpy as np

# (rule modules import what they register with from here: how a rule is read, parsing.py,
# and complex mode's table, complex_mode.py, are re-exported)
from .complex_mode import (_COMPLEX_MODE, _COMPLEX_RULES, _COMPLEX_TANGENTS,  # noqa: F401
                           complex_jvp, complex_mode, complex_rules, complex_safe,
                           complex_safe_functions, complex_values, complex_vjp,
                           handles_complex)
from .parsing import (BUILTIN, GLOBAL, Rule, TangentRule, _display_name,  # noqa: F401
                      parse_rule, parse_tangent_rule)

_RULES: dict[int, Rule] = {}
NONDIFFERENTIABLE: dict[int, object] = {}   # id -> the function (kept alive)
_SCOPED: dict[str, dict[int, tuple]] = {}   # scope -> id -> (function, Rule or None)
_BOUND: dict[tuple, object] = {}            # (id(obj), id(function)) -> obj.function
_VERSION = [0]                              # bumped by every user registration
# rule modules for optional packages: loaded when the package is first seen in sys.modules
_OPTIONAL = {"scipy": "sgcompiler.rules.scipy"}
_LOADED_OPTIONAL: set = set()


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
    same = numpy_counterpart(obj)
    if same is not None:        # xp.exp of an array-API library: the rule of np.exp
        entry = builtin_entry(same)
        return None if entry is None else (obj, entry[1])
    return None


# the top-level modules of array-API namespaces that do not say so themselves
_NAMESPACE_PACKAGES = frozenset({"cupy", "array_api_compat", "array_api_strict"})


def numpy_counterpart(obj):
    """The NumPy function of the same name (NumPy 2 has the standard's names: np.acos,
    np.concat, np.permute_dims) for a function of an array-API namespace module
    (array_api_strict.exp, cupy.exp, array_api_compat.numpy.exp), or None."""
    module = getattr(obj, "__module__", None)
    name = getattr(obj, "__name__", None)
    if not isinstance(module, str) or not isinstance(name, str) or not callable(obj):
        return None
    top = module.partition(".")[0]
    if top == "numpy" or not (top in _NAMESPACE_PACKAGES or
                              hasattr(sys.modules.get(top), "__array_api_version__")):
        return None
    same = getattr(np.linalg if module.endswith("linalg") else np, name, None)
    return same if callable(same) and same is not obj else None


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


_SOURCE_HELPERS: dict[int, object] = {}    # id -> runtime helper read through its source


def through_source(*helpers) -> None:
    """Declare runtime helpers (the gradient helpers of rules/) whose own derivatives the
    compiler takes by reading their source, as it reads a user function: grad of grad and
    forward over reverse through them (rules/runtime.py lists them, and tests check each
    at second order against finite differences)."""
    for h in helpers:
        assert id(h) not in _RULES, f"{h!r} has a rule and is read through its source"
        _SOURCE_HELPERS[id(h)] = h


def reads_source(obj) -> bool:
    """Whether runtime helper `obj` is differentiated through its source: those declared,
    and the private functions they call (generated code calls only public helpers)."""
    return _SOURCE_HELPERS.get(id(obj)) is obj or \
        (isinstance(obj, types.FunctionType) and obj.__name__.startswith("_"))


def runtime_helper_read(obj) -> bool:
    """Whether `obj` is a runtime helper (of sgcompiler.runtime) read through its source,
    not a user function that happens to have a private name."""
    module = getattr(obj, "__module__", None) or ""
    package = __name__.rsplit(".", 2)[0] + ".runtime"
    return reads_source(obj) and (module == package or module.startswith(package + "."))


def is_source_module(module: str | None) -> bool:
    return bool(module) and any(module == m or module.startswith(m + ".")
                                for m in _SOURCE_MODULES)


def version():
    """What the rules in use depend on (part of every compile cache key): a number that
    changes whenever a user registers a rule, and whether complex values may occur."""
    return _VERSION[0], _COMPLEX_MODE.get()


def version_parts():
    """What version() is made of, for a caller that tests it inline on every call:
    (a list whose item 0 counts the registrations, the complex mode's ContextVar)."""
    return _VERSION, _COMPLEX_MODE


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


_TANGENTS: dict[int, TangentRule] = {}
_LINEAR: dict[int, object] = {}          # id -> function declared linear
_USER_TANGENTS: dict[int, tuple] = {}    # id -> (function, TangentRule): sgcompiler.tangent


def jvp(*primitives, multiple_results=False, name=None, elementwise=False, trees=False):
    """Register the decorated function as the built-in tangent rule of `primitives`
    (sgcompiler's own rule modules; users call `sgcompiler.tangent`). `elementwise`: a
    contribution may have an operand's shape, and is broadcast to the result's; `trees`:
    contributions may be lists or tuples (or 0.0 for a zero of any structure), added with
    runtime.add_trees, not `+`."""
    def register(rule_fn):
        for primitive in dict.fromkeys(map(_keep_bound, primitives)):
            assert id(primitive) not in _TANGENTS, f"two tangent rules for {primitive!r}"
            _TANGENTS[id(primitive)] = parse_tangent_rule(
                rule_fn, primitive, multiple_results=multiple_results, name=name,
                elementwise=elementwise, trees=trees)
        return rule_fn
    return register


# explicit tangent rules whose code, with the helpers it calls swapped for their batched
# forms, is right for tangents with a leading axis of directions (forward/batch.py)
_BATCHABLE: dict = {}       # id(primitive) -> primitive
_BATCHED_HELPERS: dict = {}     # id(helper) -> (helper, its batched form)


def batchable(*primitives, helpers=()) -> None:
    """Declare the explicit tangent rules of `primitives` right for batched tangents
    (hessian's), once each helper of `helpers`, pairs (helper, batched form), is called
    as its batched form: every call the rule makes with a tangent argument either
    broadcasts over leading axes (matrix helpers written with `...`, `@`) or has a form
    here that moves its axes past the batch's."""
    for primitive in primitives:
        primitive = _keep_bound(primitive)
        _BATCHABLE[id(primitive)] = primitive
    for helper, batched_form in helpers:
        _BATCHED_HELPERS[id(helper)] = (helper, batched_form)


def is_batchable(primitive) -> bool:
    return _BATCHABLE.get(id(primitive)) is primitive


def batched_helper(helper):
    """The batched form declared for `helper` (batchable's helpers), or None."""
    entry = _BATCHED_HELPERS.get(id(helper))
    return entry[1] if entry is not None and entry[0] is helper else None


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
