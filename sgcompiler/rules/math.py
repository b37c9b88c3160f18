"""Derivative rules of the `math` module's functions (Python floats)."""
import math

from ..runtime import divide_or_zero
from .registry import nondifferentiable, present, vjp


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


@vjp(math.expm1)
def expm1(g, ans, x):
    return g * (ans + 1.0)


@vjp(math.log2)
def log2(g, ans, x):
    return g / (x * math.log(2.0))


@vjp(math.log10)
def log10(g, ans, x):
    return g / (x * math.log(10.0))


@vjp(math.asin)
def asin(g, ans, x):
    return g / math.sqrt(1.0 - x * x)


@vjp(math.acos)
def acos(g, ans, x):
    return -g / math.sqrt(1.0 - x * x)


@vjp(math.atan)
def atan(g, ans, x):
    return g / (1.0 + x * x)


@vjp(math.atan2)
def atan2(g, ans, y, x):
    return g * x / (x * x + y * y), -g * y / (x * x + y * y)


@vjp(math.sinh)
def sinh(g, ans, x):
    return g * math.cosh(x)


@vjp(math.cosh)
def cosh(g, ans, x):
    return g * math.sinh(x)


@vjp(math.asinh)
def asinh(g, ans, x):
    return g / math.sqrt(x * x + 1.0)


@vjp(math.acosh)
def acosh(g, ans, x):
    return g / math.sqrt(x * x - 1.0)


@vjp(math.atanh)
def atanh(g, ans, x):
    return g / (1.0 - x * x)


@vjp(math.hypot, notes="two arguments; 0 at (0, 0)")
def hypot(g, ans, x, y):
    return g * divide_or_zero(x, ans), g * divide_or_zero(y, ans)


@vjp(math.erf)
def erf(g, ans, x):
    return g * 2.0 / math.sqrt(math.pi) * math.exp(-x * x)


@vjp(math.erfc)
def erfc(g, ans, x):
    return -g * 2.0 / math.sqrt(math.pi) * math.exp(-x * x)


@vjp(math.degrees)
def degrees(g, ans, x):
    return g * (180.0 / math.pi)


@vjp(math.radians)
def radians(g, ans, x):
    return g * (math.pi / 180.0)


@vjp(math.copysign, notes="y only chooses the sign (zero gradient)")
def copysign(g, ans, x, y):
    return g * math.copysign(1.0, x) * math.copysign(1.0, y), 0.0


@vjp(math.fmod)
def fmod(g, ans, x, y):
    return g, -g * math.trunc(x / y)


nondifferentiable(math.floor, math.ceil, math.trunc, math.isnan, math.isinf, math.isfinite,
                  math.isclose, math.factorial, math.comb, math.perm, math.gcd)


@vjp(*present(math, "exp2"))
def exp2(g, ans, x):
    return g * ans * math.log(2.0)


@vjp(*present(math, "cbrt"), notes="undefined at 0")
def cbrt(g, ans, x):
    return g / (3.0 * ans * ans)
