"""The derivative-rule table, filled once at import. See registry.py for how a rule reads,
and custom.py for how users add their own (`sgcompiler.adjoint`).

    numpy.py       elementwise functions (ufuncs)       reductions.py   sums, norms, cumsum
    linalg.py      products and linear algebra          shapes.py       shapes, indexing
    constants.py   functions without a gradient         scipy.py        scipy.special/linalg
    math.py, builtins.py: Python's own (operators: numpy.py and linalg.py)
"""
from . import builtins, constants, linalg, math, numpy, reductions, shapes  # noqa: F401
from .registry import (GLOBAL, NONDIFFERENTIABLE, Rule, all_nondifferentiable, all_rules,
                       find, is_nondifferentiable, lookup, nondifferentiable, parse_rule,
                       scope_of, version, vjp)

__all__ = ["GLOBAL", "NONDIFFERENTIABLE", "Rule", "all_nondifferentiable", "all_rules",
           "find", "is_nondifferentiable", "lookup", "nondifferentiable", "parse_rule",
           "scope_of", "version", "vjp"]
