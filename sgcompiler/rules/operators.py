"""Derivative rules of Python's arithmetic operators (on floats and NumPy arrays alike)."""
import operator

import numpy as np

from ..runtime.linalg import matmul_grad_left, matmul_grad_right
from ..runtime import unbroadcast
from .registry import vjp


@vjp(operator.add, elementwise=True)
def add(g, ans, x, y):
    return unbroadcast(g, x), unbroadcast(g, y)


@vjp(operator.sub, elementwise=True)
def sub(g, ans, x, y):
    return unbroadcast(g, x), unbroadcast(-g, y)


@vjp(operator.mul, elementwise=True)
def mul(g, ans, x, y):
    return unbroadcast(g * y, x), unbroadcast(g * x, y)


@vjp(operator.truediv, elementwise=True)
def truediv(g, ans, x, y):
    return unbroadcast(g / y, x), unbroadcast(-g * x / y ** 2, y)


@vjp(operator.pow, elementwise=True)
def pow(g, ans, x, y):
    return (unbroadcast(g * y * x ** (y - 1), x),
            unbroadcast(g * ans * np.log(np.where(x == 0, 1.0, x)), y))


@vjp(operator.neg, elementwise=True)
def neg(g, ans, x):
    return -g


@vjp(operator.pos, elementwise=True)
def pos(g, ans, x):
    return g


@vjp(operator.matmul)
def matmul(g, ans, x, y):
    return matmul_grad_left(g, x, y), matmul_grad_right(g, x, y)


@vjp(operator.mod, elementwise=True)
def mod(g, ans, x, y):
    return unbroadcast(g, x), unbroadcast(-g * np.floor_divide(x, y), y)
