"""The derivative-rule table, filled once at import. See registry.py for how a rule reads,
and custom.py for how users add their own (`sgcompiler.adjoint`).

    numpy/         NumPy's functions, a module per family (elementwise, reductions,
                   linalg, shapes, decompositions, signal, fft)
    scipy/         SciPy's, a module per package (special, stats, linalg, signal)
    math.py, builtins.py: Python's own (operators: numpy/elementwise.py and numpy/linalg.py)
    constants.py   functions without a gradient
    complex_numbers.py  complex values (real, imag, conj, abs, angle, eig)
    complex_decompositions.py  svd, qr, cholesky, eigh of complex matrices
    runtime.py     the runtime helpers generated code calls (grad of grad reads that code)
    sequences.py   the same for the adjoints of + and * on lists and tuples
    complex_helpers.py  the same for the helpers of complex mode and of the FFTs
    third_order.py  the same for the helpers second-order code calls (np.einsum's)
"""
from . import (builtins, complex_decompositions, complex_helpers, complex_numbers, constants, math, numpy, runtime,  # noqa: F401
               sequences, third_order)
from .registry import (GLOBAL, NONDIFFERENTIABLE, Rule, all_nondifferentiable, all_rules,
                       as_called, complex_mode, complex_values, find, handles_complex,
                       is_nondifferentiable, lookup, nondifferentiable, parse_rule, scope_of,
                       version, version_parts, vjp)

__all__ = ["GLOBAL", "NONDIFFERENTIABLE", "Rule", "all_nondifferentiable", "all_rules",
           "as_called", "complex_mode", "complex_values", "find", "handles_complex", "is_nondifferentiable", "lookup", "nondifferentiable",
           "parse_rule", "scope_of", "version", "version_parts", "vjp"]
