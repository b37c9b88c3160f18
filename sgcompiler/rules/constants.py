"""NumPy functions whose results are constants to the compiler: no gradient flows through them.

They compute shapes, indexes, booleans, integers or random draws, or are piecewise constant
(floor, sign: their derivative is zero wherever it exists). Functions that build arrays
from values that may need a gradient (np.full, np.linspace) have rules instead, in
shapes.py.
"""
import builtins
import math
import operator

import numpy as np

from .registry import nondifferentiable, present

nondifferentiable(
    # shapes, sizes and dtypes
    np.shape, np.ndim, np.size, np.result_type, np.promote_types, np.can_cast, np.finfo,
    np.iinfo, np.dtype, np.broadcast_shapes, np.min_scalar_type, np.isscalar,
    np.iscomplexobj, np.isrealobj,
    # indexes, orderings and counts
    np.argmax, np.argmin, np.argsort, np.argpartition, np.argwhere, np.nonzero,
    np.flatnonzero, np.count_nonzero, np.searchsorted, np.digitize, np.lexsort,
    np.unravel_index, np.ravel_multi_index, np.indices, np.diag_indices, np.tril_indices,
    np.triu_indices, np.nanargmax, np.nanargmin,
    # piecewise constant
    np.floor, np.ceil, np.round, np.rint, np.trunc, np.fix, np.sign, np.signbit,
    np.floor_divide, np.nextafter, np.spacing,
    # tests and comparisons
    np.isnan, np.isinf, np.isfinite, np.isneginf, np.isposinf, np.isreal, np.iscomplex,
    np.isclose, np.allclose, np.array_equal, np.array_equiv,
    np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
    np.logical_and, np.logical_or, np.logical_not, np.logical_xor, np.any, np.all,
    # integers and bits
    np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.invert, np.left_shift,
    np.right_shift, np.gcd, np.lcm,
    # constructors whose values do not depend on their arguments' values
    np.zeros, np.ones, np.empty, np.zeros_like, np.ones_like, np.empty_like, np.arange,
    np.eye, np.identity, np.tri,
    np.linalg.matrix_rank,
    *present(np, "around"),
)

# Random draws are constants: for a gradient through a sample, write it reparameterized,
# mu + sigma * rng.standard_normal(shape). Methods of a Generator or RandomState are found
# through the function they wrap (see registry.key), so rng.normal(...) is covered too.
nondifferentiable(*(getattr(np.random, name) for name in np.random.__all__
                    if callable(getattr(np.random, name))
                    and not isinstance(getattr(np.random, name), type)))
for _cls in (np.random.Generator, np.random.RandomState):
    nondifferentiable(*(getattr(_cls, name) for name in dir(_cls)
                        if not name.startswith("_") and callable(getattr(_cls, name))))

# Piecewise constant: the derivative is zero wherever it exists. An explanation flags a
# varied value that reaches the result through one of these as a likely mistake.
PIECEWISE_CONSTANT = (
    np.floor, np.ceil, np.round, np.rint, np.trunc, np.fix, np.sign, np.floor_divide,
    np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
    builtins.round, builtins.int, math.floor, math.ceil, math.trunc, operator.floordiv,
    *present(np, "around"),
)
