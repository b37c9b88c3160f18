"""Complex mode: which rules code that may hold complex values uses (registry.py looks
them up first when the mode is on).

Code that may hold complex values is compiled in "complex mode" (pipeline/__init__.py decides, from
frontend/complex_values.py). Adjoints follow JAX's convention: the adjoint `g` of a value
w pairs with a change dw as Re(g * dw), so a holomorphic function's rule is its real rule
(dz = g * f'(z)) and the gradient of a real loss is df/dx - i df/dy. In complex mode a
lookup finds the complex variant of a rule first (np.abs, np.real, np.conj, ...); rules
that are right for complex operands as written are declared `complex_safe`; any other
rule refuses, at run time, the complex operands it cannot take (runtime/complex_numbers.py).
"""
from __future__ import annotations

import contextlib
import contextvars

from .parsing import BUILTIN, Rule, parse_rule, parse_tangent_rule


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
