"""Rules and non-differentiable markers for Python builtins."""
import builtins
import operator

import numpy as np

from ..runtime import (balanced_eq, item_of, max_of, min_of, picked, sequence_adjoint,
                       too_few_values, unbroadcast, unbroadcast_each)
from .registry import jvp, linear, nondifferentiable, vjp


@vjp(builtins.float)
def float(g, ans, x):
    return g


@vjp(builtins.pow, elementwise=True,
     notes="two arguments; the exponent's gradient is 0 where base == 0")
def pow(g, ans, base, exp):
    return (unbroadcast(g * exp * base ** (exp - 1), base),
            unbroadcast(g * ans * np.log(np.where(base == 0, 1.0, base)), exp))


@vjp(builtins.abs)
def abs(g, ans, x):
    return g * np.sign(x)


nondifferentiable(
    builtins.len, builtins.range, builtins.int, builtins.bool, builtins.round,
    builtins.isinstance, builtins.print, too_few_values,
    operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne,
    operator.not_, operator.floordiv, operator.is_, operator.is_not,
    operator.contains, operator.invert, operator.and_, operator.or_, operator.xor,
)


@vjp(builtins.max, builtins.min)
def max(g, ans, a, b):
    return g * balanced_eq(a, ans, b), g * balanced_eq(b, ans, a)


@vjp(max_of, name="max(iterable)", notes="the first largest item gets the gradient")
def max_of_(g, ans, items):
    return picked(g, items, ans)


@vjp(min_of, name="min(iterable)", notes="the first smallest item gets the gradient")
def min_of_(g, ans, items):
    return picked(g, items, ans)


@jvp(max_of, min_of)
def max_of_tangent(t, ans, items):
    return item_of(t, items, ans)


@vjp(builtins.tuple, builtins.list, notes="of a list, a tuple or an array (its rows)")
def sequence(g, ans, iterable):
    return sequence_adjoint(g, iterable)


@vjp(builtins.sum)
def sum(g, ans, iterable, start=0):
    return unbroadcast_each(g, iterable), g


linear(builtins.float, builtins.sum, builtins.tuple, builtins.list)
