"""Rules and non-differentiable markers for Python builtins."""
import builtins
import operator

from .registry import nondifferentiable, vjp


@vjp(builtins.float)
def float(g, ans, x):
    return g


@vjp(builtins.abs)
def abs(g, ans, x):
    return g * ((x > 0) * 1.0 - (x < 0) * 1.0)


nondifferentiable(
    builtins.len, builtins.range, builtins.int, builtins.bool, builtins.round,
    builtins.isinstance, builtins.print, builtins.enumerate,
    operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne,
    operator.not_, operator.floordiv, operator.is_, operator.is_not,
    operator.contains,
)
