"""Module B of the custom-rule tests: imports A, and must not see A's module rules."""
import numpy as np

import custom_rules_a  # noqa: F401  (registers A's rules)
from custom_lib import cube

try:
    import scipy.special
except ImportError:
    scipy = None


def rounded(x, w):
    return np.sum(np.round(x) * w)


def cubed(x):
    return np.sum(cube(x))


def dawson(x):
    return np.sum(scipy.special.dawsn(x) * x)
