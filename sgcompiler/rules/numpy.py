"""Derivative rules of NumPy functions. One small function per primitive; see registry.py."""
import numpy as np

from ..runtime import (choose_grad, balanced_eq, dot_grad_left, dot_grad_right,
                       matmul_grad_left, matmul_grad_right, prod_grad, reduced_size,
                       transpose_grad, unbroadcast, unreduce)
from .registry import nondifferentiable, vjp

# --- elementwise, one argument ----------------------------------------------------------


@vjp(np.exp, elementwise=True)
def exp(g, ans, x):
    return g * ans


@vjp(np.expm1, elementwise=True)
def expm1(g, ans, x):
    return g * (ans + 1.0)


@vjp(np.log, elementwise=True)
def log(g, ans, x):
    return g / x


@vjp(np.log1p, elementwise=True)
def log1p(g, ans, x):
    return g / (1.0 + x)


@vjp(np.sin, elementwise=True)
def sin(g, ans, x):
    return g * np.cos(x)


@vjp(np.cos, elementwise=True)
def cos(g, ans, x):
    return -g * np.sin(x)


@vjp(np.tan, elementwise=True)
def tan(g, ans, x):
    return g * (1.0 + ans ** 2)


@vjp(np.tanh, elementwise=True)
def tanh(g, ans, x):
    return g * (1.0 - ans ** 2)


@vjp(np.sqrt, elementwise=True)
def sqrt(g, ans, x):
    return g / (2.0 * ans)


@vjp(np.square, elementwise=True)
def square(g, ans, x):
    return g * 2.0 * x


@vjp(np.abs, np.absolute, elementwise=True)
def abs(g, ans, x):
    return g * np.sign(x)


@vjp(np.negative, elementwise=True)
def negative(g, ans, x):
    return -g


# --- elementwise, two arguments ----------------------------------------------------------


@vjp(np.add, elementwise=True)
def add(g, ans, x1, x2):
    return unbroadcast(g, x1), unbroadcast(g, x2)


@vjp(np.subtract, elementwise=True)
def subtract(g, ans, x1, x2):
    return unbroadcast(g, x1), unbroadcast(-g, x2)


@vjp(np.multiply, elementwise=True)
def multiply(g, ans, x1, x2):
    return unbroadcast(g * x2, x1), unbroadcast(g * x1, x2)


@vjp(np.divide, elementwise=True)
def divide(g, ans, x1, x2):
    return unbroadcast(g / x2, x1), unbroadcast(-g * x1 / x2 ** 2, x2)


@vjp(np.power, elementwise=True)
def power(g, ans, x1, x2):
    return (unbroadcast(g * x2 * x1 ** (x2 - 1), x1),
            unbroadcast(g * ans * np.log(np.where(x1 == 0, 1.0, x1)), x2))


@vjp(np.maximum, np.minimum, elementwise=True)
def maximum(g, ans, x1, x2):
    return (unbroadcast(g * balanced_eq(x1, ans, x2), x1),
            unbroadcast(g * balanced_eq(x2, ans, x1), x2))


@vjp(np.where, elementwise=True)
def where(g, ans, condition, x, y):
    return None, unbroadcast(np.where(condition, g, 0.0), x), \
        unbroadcast(np.where(condition, 0.0, g), y)


@vjp(np.clip, elementwise=True)
def clip(g, ans, a, a_min, a_max):
    return (unbroadcast(g * ((a >= a_min) & (a <= a_max)), a),
            unbroadcast(g * (a < a_min), a_min),
            unbroadcast(g * (a > a_max), a_max))


# --- reductions ---------------------------------------------------------------------------


@vjp(np.sum, reduction=True)
def sum(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    return unreduce(g, a, axis, keepdims)


@vjp(np.mean, reduction=True)
def mean(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    return unreduce(g / reduced_size(a, axis), a, axis, keepdims)


@vjp(np.max, np.min, np.amax, np.amin, reduction=True)
def max(g, ans, a, axis=None, out=None, keepdims=False):
    return choose_grad(g, ans, a, axis, keepdims)


@vjp(np.prod, reduction=True)
def prod(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    return prod_grad(g, ans, a, axis, keepdims)


# --- linear algebra and shapes -------------------------------------------------------------


@vjp(np.matmul)
def matmul(g, ans, x1, x2):
    return matmul_grad_left(g, x1, x2), matmul_grad_right(g, x1, x2)


@vjp(np.dot)
def dot(g, ans, a, b):
    return dot_grad_left(g, a, b), dot_grad_right(g, a, b)


@vjp(np.transpose)
def transpose(g, ans, a, axes=None):
    return transpose_grad(g, axes)


@vjp(np.reshape)
def reshape(g, ans, a, shape=None, order="C"):
    return np.reshape(g, np.shape(a), order=order)


@vjp(np.expand_dims, np.squeeze)
def expand_dims(g, ans, a, axis=None):
    return np.reshape(g, np.shape(a))


@vjp(np.asarray, np.array, np.float64, np.copy)
def asarray(g, ans, a, dtype=None):
    return g


nondifferentiable(
    np.shape, np.ndim, np.size, np.argmax, np.argmin, np.argsort, np.floor, np.ceil,
    np.round, np.rint, np.trunc, np.sign, np.isnan, np.isinf, np.isfinite,
    np.zeros, np.ones, np.empty, np.full, np.zeros_like, np.ones_like, np.empty_like,
    np.full_like, np.arange, np.linspace, np.eye, np.identity,
    np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
    np.logical_and, np.logical_or, np.logical_not, np.any, np.all, np.allclose,
    np.isclose, np.nonzero, np.count_nonzero, np.floor_divide,
)
