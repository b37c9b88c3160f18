"""A "library" module for the custom-rule tests: functions other modules give rules for."""
import numpy as np


def cube(x):
    """Differentiated only through the global rule that custom_rules_a gives it."""
    return x ** 3


def safe_norm(x):
    """sqrt(sum(x**2)): its value is fine at 0, its naive gradient x / norm is 0/0 there."""
    return np.sqrt(np.sum(x * x))


def rounded_sum(x):
    """Called by a function of another module; custom_lib's own rules apply inside."""
    return np.sum(np.round(x) * x)
