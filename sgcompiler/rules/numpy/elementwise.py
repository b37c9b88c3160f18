"""Derivative rules of NumPy's elementwise functions (ufuncs and friends), and of Python's
arithmetic operators, which share them (`x * y` is `np.multiply(x, y)`). See registry.py.

Constants are Python floats (`math.log(2.0)`, not `np.log(2.0)`), so a float32 gradient
stays float32. Reductions are in reductions.py, linear algebra in linalg.py, shapes and
indexing in shapes.py, and functions without a gradient in constants.py.
"""
import math
import operator

import numpy as np

from ...runtime import balanced_eq, bessel_i1, cast_grad, divide_or_zero, unbroadcast
from ..registry import jvp, vjp

# --- exponentials and logarithms -------------------------------------------------------------


@vjp(np.exp, elementwise=True)
def exp(g, ans, x):
    return g * ans


@vjp(np.exp2, elementwise=True)
def exp2(g, ans, x):
    return g * ans * math.log(2.0)


@vjp(np.expm1, elementwise=True)
def expm1(g, ans, x):
    return g * (ans + 1.0)


@vjp(np.log, elementwise=True)
def log(g, ans, x):
    return g / x


@vjp(np.log2, elementwise=True)
def log2(g, ans, x):
    return g / (x * math.log(2.0))


@vjp(np.log10, elementwise=True)
def log10(g, ans, x):
    return g / (x * math.log(10.0))


@vjp(np.log1p, elementwise=True)
def log1p(g, ans, x):
    return g / (1.0 + x)


@vjp(np.logaddexp, elementwise=True)
def logaddexp(g, ans, x1, x2):
    return unbroadcast(g * np.exp(x1 - ans), x1), unbroadcast(g * np.exp(x2 - ans), x2)


@vjp(np.logaddexp2, elementwise=True)
def logaddexp2(g, ans, x1, x2):
    return unbroadcast(g * np.exp2(x1 - ans), x1), unbroadcast(g * np.exp2(x2 - ans), x2)


# --- powers and roots ------------------------------------------------------------------------


@vjp(np.sqrt, elementwise=True)
def sqrt(g, ans, x):
    return g / (2.0 * ans)


@vjp(np.cbrt, elementwise=True, notes="undefined at 0")
def cbrt(g, ans, x):
    return g / (3.0 * ans ** 2)


@vjp(np.square, elementwise=True)
def square(g, ans, x):
    return g * 2.0 * x


@vjp(np.reciprocal, elementwise=True)
def reciprocal(g, ans, x):
    return -g * ans ** 2


@vjp(np.power, np.float_power, operator.pow, elementwise=True,
     notes="the exponent's gradient uses log(x1); it is 0 where x1 == 0")
def power(g, ans, x1, x2):
    return (unbroadcast(g * x2 * x1 ** (x2 - 1), x1),
            unbroadcast(g * ans * np.log(np.where(x1 == 0, 1.0, x1)), x2))


# --- trigonometric and hyperbolic -------------------------------------------------------------


@vjp(np.sin, elementwise=True)
def sin(g, ans, x):
    return g * np.cos(x)


@vjp(np.cos, elementwise=True)
def cos(g, ans, x):
    return -g * np.sin(x)


@vjp(np.tan, elementwise=True)
def tan(g, ans, x):
    return g * (1.0 + ans ** 2)


@vjp(np.arcsin, elementwise=True)
def arcsin(g, ans, x):
    return g / np.sqrt(1.0 - x ** 2)


@vjp(np.arccos, elementwise=True)
def arccos(g, ans, x):
    return -g / np.sqrt(1.0 - x ** 2)


@vjp(np.arctan, elementwise=True)
def arctan(g, ans, x):
    return g / (1.0 + x ** 2)


@vjp(np.arctan2, elementwise=True)
def arctan2(g, ans, x1, x2):
    return (unbroadcast(g * x2 / (x1 ** 2 + x2 ** 2), x1),
            unbroadcast(-g * x1 / (x1 ** 2 + x2 ** 2), x2))


@vjp(np.hypot, elementwise=True, notes="0 at (0, 0)")
def hypot(g, ans, x1, x2):
    return (unbroadcast(g * divide_or_zero(x1, ans), x1),
            unbroadcast(g * divide_or_zero(x2, ans), x2))


@vjp(np.sinh, elementwise=True)
def sinh(g, ans, x):
    return g * np.cosh(x)


@vjp(np.cosh, elementwise=True)
def cosh(g, ans, x):
    return g * np.sinh(x)


@vjp(np.tanh, elementwise=True)
def tanh(g, ans, x):
    return g * (1.0 - ans ** 2)


@vjp(np.arcsinh, elementwise=True)
def arcsinh(g, ans, x):
    return g / np.sqrt(x ** 2 + 1.0)


@vjp(np.arccosh, elementwise=True)
def arccosh(g, ans, x):
    return g / np.sqrt(x ** 2 - 1.0)


@vjp(np.arctanh, elementwise=True)
def arctanh(g, ans, x):
    return g / (1.0 - x ** 2)


@vjp(np.deg2rad, np.radians, elementwise=True)
def deg2rad(g, ans, x):
    return g * (math.pi / 180.0)


@vjp(np.rad2deg, np.degrees, elementwise=True)
def rad2deg(g, ans, x):
    return g * (180.0 / math.pi)


@vjp(np.i0, elementwise=True, notes="the derivative I1 is summed on a grid: |x| < 700")
def i0(g, ans, x):
    return g * bessel_i1(x)


# second order through np.i0: I1' = I0 - I1 / x (1/2 at 0), with I1 its own answer, in
# x's precision (np.i0 gives float64 for float32)
@vjp(bessel_i1, name="bessel_i1", elementwise=True)
def bessel_i1_(g, ans, x):
    return g * cast_grad(np.i0(x) - divide_or_zero(ans, x) - 0.5 * np.equal(x, 0), x,
                         "float64")


@vjp(np.sinc, elementwise=True)
def sinc(g, ans, x):
    return g * np.where(x == 0, 0.0, (np.cos(math.pi * x) - ans) / np.where(x == 0, 1.0, x))


# --- signs, absolute values, real parts ---------------------------------------------------------


@vjp(np.abs, np.absolute, np.fabs, elementwise=True, notes="0 at x == 0")
def abs(g, ans, x):
    return g * np.sign(x)


@vjp(np.negative, operator.neg, elementwise=True)
def negative(g, ans, x):
    return -g


@vjp(operator.pos, elementwise=True)
@vjp(np.positive, np.conjugate, elementwise=True, notes="real input")
def positive(g, ans, x):
    return g


@vjp(np.real, elementwise=True, notes="real input")
def real(g, ans, val):
    return g


@vjp(np.real_if_close, elementwise=True, notes="real input")
def real_if_close(g, ans, a, tol=100):
    return g


@vjp(np.copysign, elementwise=True, notes="x2 only chooses the sign (zero gradient)")
def copysign(g, ans, x1, x2):
    return unbroadcast(g * np.sign(x1) * np.sign(ans), x1), 0.0


@vjp(np.heaviside, elementwise=True, notes="x1: zero gradient; x2 is the value at x1 == 0")
def heaviside(g, ans, x1, x2):
    return 0.0, unbroadcast(g * (x1 == 0), x2)


@vjp(np.nan_to_num, elementwise=True, notes="zero where x is NaN or infinite")
def nan_to_num(g, ans, x, copy=True, nan=0.0, posinf=None, neginf=None):
    return g * np.isfinite(x)


# --- arithmetic -----------------------------------------------------------------------------


@vjp(np.add, operator.add, elementwise=True)
def add(g, ans, x1, x2):
    return unbroadcast(g, x1), unbroadcast(g, x2)


@vjp(np.subtract, operator.sub, elementwise=True)
def subtract(g, ans, x1, x2):
    return unbroadcast(g, x1), unbroadcast(-g, x2)


@vjp(np.multiply, operator.mul, elementwise=True)
def multiply(g, ans, x1, x2):
    return unbroadcast(g * x2, x1), unbroadcast(g * x1, x2)


@vjp(np.divide, operator.truediv, elementwise=True)
def divide(g, ans, x1, x2):
    return unbroadcast(g / x2, x1), unbroadcast(-g * x1 / x2 ** 2, x2)


@vjp(np.remainder, operator.mod, elementwise=True, notes="jumps where x1 / x2 is an integer")
def remainder(g, ans, x1, x2):
    return unbroadcast(g, x1), unbroadcast(-g * np.floor_divide(x1, x2), x2)


@vjp(np.fmod, elementwise=True, notes="jumps where x1 / x2 is an integer")
def fmod(g, ans, x1, x2):
    return unbroadcast(g, x1), unbroadcast(-g * np.trunc(x1 / x2), x2)


@vjp(np.ldexp, elementwise=True, notes="x2 is an integer exponent (no gradient)")
def ldexp(g, ans, x1, x2):
    return unbroadcast(np.ldexp(g, x2), x1), None


@vjp(np.maximum, np.minimum, np.fmax, np.fmin, elementwise=True, notes="ties split evenly")
def maximum(g, ans, x1, x2):
    return (unbroadcast(g * balanced_eq(x1, ans, x2), x1),
            unbroadcast(g * balanced_eq(x2, ans, x1), x2))


@vjp(np.where, elementwise=True)
def where(g, ans, condition, x, y):
    return 0.0, unbroadcast(np.where(condition, g, 0.0), x), \
        unbroadcast(np.where(condition, 0.0, g), y)


@vjp(np.clip, elementwise=True, notes="at a bound, the gradient goes to a")
def clip(g, ans, a, a_min, a_max):
    # (np.where, not g times the bool mask: the array API standard has no arithmetic on
    # bools, and where keeps g's precision)
    return (unbroadcast(np.where((a >= a_min) & (a <= a_max), g, 0.0), a),
            unbroadcast(np.where(a < a_min, g, 0.0), a_min),
            unbroadcast(np.where(a > a_max, g, 0.0), a_max))


# --- tangents (forward mode); the others are derived from the adjoints (derive.py) --------


@jvp(np.where, elementwise=True)
def where_tangent(x_dot, y_dot, ans, condition, x, y):
    return np.where(condition, x_dot, 0.0), np.where(condition, 0.0, y_dot)


@jvp(np.clip, elementwise=True)
def clip_tangent(a_dot, a_min_dot, a_max_dot, ans, a, a_min, a_max):
    return (np.where((a >= a_min) & (a <= a_max), a_dot, 0.0),
            np.where(a < a_min, a_min_dot, 0.0), np.where(a > a_max, a_max_dot, 0.0))


@jvp(np.ldexp)
def ldexp_tangent(t, ans, x1, x2):
    return np.ldexp(t, x2)
