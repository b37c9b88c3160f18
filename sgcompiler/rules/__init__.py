"""The derivative-rule table, filled once at import. See registry.py for how a rule reads,
and custom.py for how users add their own (`sgcompiler.adjoint`).

    numpy.py       elementwise functions (ufuncs)       reductions.py   sums, norms, cumsum
    linalg.py      products and linear algebra          shapes.py       shapes, indexing
    decompositions.py  svd, qr, lstsq                   signal.py   convolve, np.gradient
    fft.py         np.fft transforms                    complex_numbers.py: complex values
    constants.py   functions without a gradient         scipy.py        SciPy (scipy_*.py)
    math.py, builtins.py: Python's own (operators: numpy.py and linalg.py)
    runtime.py     the runtime helpers generated code calls (grad of grad reads that code)
    sequences.py   the same for the adjoints of + and * on lists and tuples
    complex_helpers.py  the same for the helpers of complex mode and of the FFTs
"""
from . import (builtins, complex_helpers, complex_numbers, constants, decompositions, fft, linalg, math,  # noqa: F401
               numpy, reductions, runtime, sequences, shapes, signal)
from .registry import (GLOBAL, NONDIFFERENTIABLE, Rule, all_nondifferentiable, all_rules,
                       as_called, complex_mode, complex_values, find, handles_complex,
                       is_nondifferentiable, lookup, nondifferentiable, parse_rule, scope_of,
                       version, vjp)

__all__ = ["GLOBAL", "NONDIFFERENTIABLE", "Rule", "all_nondifferentiable", "all_rules",
           "as_called", "complex_mode", "complex_values", "find", "handles_complex", "is_nondifferentiable", "lookup", "nondifferentiable",
           "parse_rule", "scope_of", "version", "vjp"]
