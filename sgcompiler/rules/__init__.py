"""The derivative-rule table, filled once at import. See registry.py for how a rule reads."""
from . import builtins, math, numpy, operators  # noqa: F401  (registers the rules)
from .registry import (NONDIFFERENTIABLE, Rule, all_rules, is_nondifferentiable, lookup,
                       nondifferentiable, parse_rule, vjp)

__all__ = ["NONDIFFERENTIABLE", "Rule", "all_rules", "is_nondifferentiable", "lookup",
           "nondifferentiable", "parse_rule", "vjp"]
