"""The few helpers that generated gradient code calls.

Generated code does its arithmetic inline; these helpers cover the bookkeeping that has no
one-line NumPy spelling: summing a broadcast gradient back to an operand's shape, putting
back the axes a reduction removed, and splitting the gradient of max/min among ties.
Each helper is plain NumPy, so generated code stays readable and debuggable.
"""
from __future__ import annotations

import numpy as np


def stop_gradient(x):
    """The identity at run time; to the compiler, its result is a constant."""
    return x


def unbroadcast(g, x):
    """Sum `g` (the gradient of a broadcast result) down to the shape of operand `x`."""
    shape = np.shape(x)
    gshape = np.shape(g)
    if gshape == shape:
        return g
    extra = len(gshape) - len(shape)
    if extra > 0:
        g = np.sum(g, axis=tuple(range(extra)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and np.shape(g)[i] != 1)
    if axes:
        g = np.sum(g, axis=axes, keepdims=True)
    if np.shape(g) != shape:     # g was smaller than x (a broadcast scalar gradient)
        g = np.broadcast_to(g, shape)
    return g


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(sorted(a % ndim for a in axis))
    return (axis % ndim,)


def unreduce(g, x, axis=None, keepdims=False):
    """Broadcast `g`, the gradient of a reduction of `x` over `axis`, back to `x`'s shape."""
    shape = np.shape(x)
    if axis is not None and not keepdims:
        g = np.expand_dims(g, _axes(axis, len(shape)))
    return np.broadcast_to(g, shape)


def reduced_size(x, axis=None):
    """How many elements of `x` a reduction over `axis` combines into one."""
    shape = np.shape(x)
    n = 1
    for a in _axes(axis, len(shape)):
        n *= shape[a]
    return n


def choose_grad(g, ans, x, axis=None, keepdims=False):
    """Gradient of max/min: `g` goes to the chosen elements, split evenly among ties."""
    ans = unreduce(ans, x, axis, keepdims)
    chosen = x == ans
    count = np.sum(chosen, axis=axis, keepdims=True)
    return unreduce(g, x, axis, keepdims) * chosen / count


def prod_grad(g, ans, x, axis=None, keepdims=False):
    """Gradient of prod; exact also when some elements are zero."""
    x = np.asarray(x)
    if axis is None:
        flat = x.reshape(-1)
        return (g * _prod_others(flat, 0)).reshape(x.shape)
    axes = _axes(axis, x.ndim)
    if len(axes) != 1:
        moved = np.moveaxis(x, axes, tuple(range(-len(axes), 0)))
        flat = moved.reshape(moved.shape[:-len(axes)] + (-1,))
        others = _prod_others(flat, -1).reshape(moved.shape)
        others = np.moveaxis(others, tuple(range(-len(axes), 0)), axes)
    else:
        others = _prod_others(x, axes[0])
    return unreduce(g, x, axis, keepdims) * others


def _prod_others(x, axis):
    """For each element, the product of the other elements along `axis` (no division)."""
    x = np.moveaxis(x, axis, -1)
    ones = np.ones(x.shape[:-1] + (1,), dtype=x.dtype)
    before = np.cumprod(np.concatenate([ones, x[..., :-1]], axis=-1), axis=-1)
    after = np.cumprod(np.concatenate([ones, x[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    return np.moveaxis(before * after, -1, axis)


def matmul_grad_left(g, x, y):
    """d(x @ y)/dx applied to g, for any of NumPy's 1-D/2-D/stacked cases."""
    if np.ndim(y) == 1:
        if np.ndim(x) == 1:
            return g * y
        return np.expand_dims(g, -1) * y
    if np.ndim(x) == 1:
        return unbroadcast(np.swapaxes(y, -1, -2) @ g if np.ndim(y) > 2 else y @ g, x)
    return unbroadcast(g @ np.swapaxes(y, -1, -2), x)


def matmul_grad_right(g, x, y):
    """d(x @ y)/dy applied to g, for any of NumPy's 1-D/2-D/stacked cases."""
    if np.ndim(x) == 1:
        if np.ndim(y) == 1:
            return g * x
        return unbroadcast(np.expand_dims(x, -1) * np.expand_dims(g, -2), y)
    if np.ndim(y) == 1:
        return unbroadcast(np.sum(np.swapaxes(x, -1, -2) * np.expand_dims(g, -2), axis=-1)
                           if np.ndim(x) > 2 else g @ x, y)
    return unbroadcast(np.swapaxes(x, -1, -2) @ g, y)


def dot_grad_left(g, x, y):
    """d(np.dot(x, y))/dx applied to g (np.dot's N-d rule: last axis of x, second-last of y)."""
    if np.ndim(x) == 0 or np.ndim(y) == 0:
        return unbroadcast(g * y, x)
    if np.ndim(y) <= 2:
        return matmul_grad_left(g, x, y)
    yt = np.moveaxis(y, -2, -1).reshape(-1, np.shape(y)[-2])
    return np.reshape(g, np.shape(g)[: np.ndim(x) - 1] + (-1,)) @ yt


def dot_grad_right(g, x, y):
    """d(np.dot(x, y))/dy applied to g."""
    if np.ndim(x) == 0 or np.ndim(y) == 0:
        return unbroadcast(g * x, y)
    if np.ndim(y) <= 2:
        return matmul_grad_right(g, x, y)
    xf = np.reshape(x, (-1, np.shape(x)[-1]))
    gf = np.reshape(g, (xf.shape[0], -1))
    out = xf.T @ gf
    ys = np.shape(y)
    return np.moveaxis(out.reshape((ys[-2],) + ys[:-2] + (ys[-1],)), 0, -2)


def transpose_grad(g, axes=None):
    """Gradient of np.transpose(x, axes): transpose back with the inverse permutation."""
    if axes is None:
        return np.transpose(g)
    return np.transpose(g, np.argsort(axes))


def balanced_eq(x, z, y):
    """1 where x is the chosen one of (x, y) in max/min, 0.5 on ties, else 0."""
    return (x == z) / (1.0 + (x == y))


def index_grad(g, x, index):
    """The gradient of x[index]: zeros like x with `g` added at `index` (repeats summed)."""
    dx = np.zeros(np.shape(x), dtype=np.result_type(g, float) if np.ndim(x) else float)
    np.add.at(dx, index, g)
    return dx




def unbroadcast_each(g, items):
    """The gradient of sum(items) for each item: `g`, summed to that item's shape."""
    if isinstance(items, np.ndarray):
        return np.broadcast_to(g, items.shape)
    return [unbroadcast(g, item) for item in items]


def zeros_tree(x):
    """A zero adjoint for a container: a list (or dict) of 0.0 with the same keys.

    Elements stay plain 0.0 until something is added to them, so nothing is allocated
    for parts of a parameter tree that get no gradient."""
    if isinstance(x, dict):
        return dict.fromkeys(x, 0.0)
    if isinstance(x, (list, tuple)):
        return [0.0] * len(x)
    return np.zeros_like(x, dtype=np.result_type(x, float))


def add_at(dx, index, g):
    """dx[index] += g for an adjoint that is an array or a container (list, dict)."""
    if isinstance(dx, (list, dict)):
        dx[index] = add_trees(dx[index], g)
    else:
        np.add.at(dx, index, g)
    return dx


def _is_zero(a):
    return type(a) is float and a == 0.0


def add_trees(a, b):
    """The sum of two adjoints that may be containers (elementwise, nested) or arrays; a
    plain 0.0 stands for a zero of any structure."""
    if _is_zero(a):
        return b
    if _is_zero(b):
        return a
    if isinstance(a, dict):
        return {k: add_trees(a.get(k, 0.0), b.get(k, 0.0)) for k in {**a, **b}}
    if isinstance(a, (list, tuple)):
        return [add_trees(x, y) for x, y in zip(a, b)]
    return a + b


def not_a_view(value, array, where):
    """Refuse `value = array[...]` being a view when `array` is later written in place."""
    if isinstance(value, np.ndarray) and np.shares_memory(value, array):
        from .errors import SGCompilerError
        raise SGCompilerError(
            f"{where}: this reads a view of an array that is written in place later, so the "
            "write would change the value read here; read a copy instead: x[...].copy()")
