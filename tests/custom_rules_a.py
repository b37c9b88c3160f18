"""Module A of the custom-rule tests: registers rules; only its own functions see them."""
import numpy as np

import sgcompiler
from custom_lib import cube

try:
    import scipy.special
except ImportError:                      # the SciPy tests skip themselves
    scipy = None


# A straight-through estimator: module A wants np.round to pass gradients through. It is
# A's business only; module B keeps np.round as a constant.
@sgcompiler.adjoint(np.round)
def round_straight_through(g, ans, a, decimals=0, out=None):
    return g


# A rule for someone else's function made global on purpose.
@sgcompiler.adjoint(cube, scope="global")
def cube_rule(g, ans, x):
    return 3.0 * g * x ** 2


def rounded(x, w):
    return np.sum(np.round(x) * w)


def cubed(x):
    return np.sum(cube(x))


if scipy is not None:
    @sgcompiler.adjoint(scipy.special.dawsn)
    def dawsn(g, ans, x):
        """Dawson's integral F satisfies F'(x) = 1 - 2 x F(x)."""
        return g * (1.0 - 2.0 * x * ans)

    def dawson(x):
        return np.sum(scipy.special.dawsn(x) * x)
