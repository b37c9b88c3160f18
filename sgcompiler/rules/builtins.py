"""Rules and non-differentiable markers for Python builtins."""
import builtins
import operator

from ..runtime import balanced_eq, unbroadcast_each
from .registry import nondifferentiable, vjp


@vjp(builtins.float)
def float(g, ans, x):
    return g


@vjp(builtins.abs)
def abs(g, ans, x):
    return g * ((x > 0) * 1.0 - (x < 0) * 1.0)


nondifferentiable(
    builtins.len, builtins.range, builtins.int, builtins.bool, builtins.round,
    builtins.isinstance, builtins.print,
    operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne,
    operator.not_, operator.floordiv, operator.is_, operator.is_not,
    operator.contains,
)


@vjp(builtins.max, builtins.min)
def max(g, ans, a, b):
    return g * balanced_eq(a, ans, b), g * balanced_eq(b, ans, a)


@vjp(builtins.sum)
def sum(g, ans, iterable, start=0):
    return unbroadcast_each(g, iterable), g
