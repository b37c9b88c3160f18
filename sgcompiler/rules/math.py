"""Derivative rules of the `math` module's functions (Python floats)."""
import math

from .registry import vjp


@vjp(math.sin)
def sin(g, ans, x):
    return g * math.cos(x)


@vjp(math.cos)
def cos(g, ans, x):
    return -g * math.sin(x)


@vjp(math.tan)
def tan(g, ans, x):
    return g * (1.0 + ans ** 2)


@vjp(math.exp)
def exp(g, ans, x):
    return g * ans


@vjp(math.log)
def log(g, ans, x):
    return g / x


@vjp(math.log1p)
def log1p(g, ans, x):
    return g / (1.0 + x)


@vjp(math.sqrt)
def sqrt(g, ans, x):
    return g / (2.0 * ans)


@vjp(math.tanh)
def tanh(g, ans, x):
    return g * (1.0 - ans ** 2)


@vjp(math.pow)
def pow(g, ans, x, y):
    return g * y * x ** (y - 1), g * ans * math.log(x) if x > 0 else 0.0


@vjp(math.fabs)
def fabs(g, ans, x):
    return g * math.copysign(1.0, x) if x != 0 else 0.0
