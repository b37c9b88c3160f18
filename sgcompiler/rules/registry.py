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
import inspect
import sys
import textwrap
import types
from dataclasses import dataclass, field

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
        if sub in ("linalg", "random"):
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
               supported=None) -> Rule:
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
                supported=dict(supported or {}))


def _is_docstring(stmt) -> bool:
    return isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant) \
        and isinstance(stmt.value.value, str)


def vjp(*primitives, elementwise=False, reduction=False, multiple_results=False, name=None,
        notes="", supported=None):
    """Register the decorated function as the built-in derivative rule of `primitives`.

    `multiple_results`: the primitive returns a tuple; the rule's `g` is then a list with
    one adjoint per result (0.0 for results that received none). `name` is how messages
    and the coverage page name the primitive (default: its module and name), `notes` a
    caveat for the coverage page. `supported` maps a parameter to the literal values the
    rule handles (a tuple) or to a test of its value (a function): a call with another
    value that needs the gradient is refused at compile time. For sgcompiler's own rule
    modules only; users call `sgcompiler.adjoint`.
    """
    def register(rule_fn):
        for primitive in dict.fromkeys(primitives):     # aliases (np.abs, np.absolute) once
            assert id(primitive) not in _RULES and id(primitive) not in NONDIFFERENTIABLE, \
                f"two built-in rules for {primitive!r}"
            _RULES[id(primitive)] = parse_rule(rule_fn, primitive, elementwise=elementwise,
                                               reduction=reduction,
                                               multiple_results=multiple_results, name=name,
                                               notes=notes, supported=supported)
        return rule_fn
    return register


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
    """The object a rule is registered for. Bound methods of compiled classes (rng.normal
    on a Generator) are new objects on every attribute read, so they are keyed by the
    function they wrap (np.random.Generator.normal)."""
    if isinstance(obj, types.MethodType) and not isinstance(obj.__func__, types.FunctionType):
        return obj.__func__
    return obj


def builtin_entry(obj):
    """(obj, Rule) or (obj, None) for non-differentiable, from the built-in table, or None."""
    obj = key(obj)
    _load_optional()
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
    obj = key(obj)
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


def version() -> int:
    """A number that changes whenever a user registers a rule (part of the compile cache key)."""
    return _VERSION[0]


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
        if package in sys.modules and package not in _LOADED_OPTIONAL:
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
    return sorted(_RULES.values(), key=lambda r: r.name)


def all_nondifferentiable() -> list:
    """Every built-in non-differentiable function."""
    load_all_optional()
    return list(NONDIFFERENTIABLE.values())
