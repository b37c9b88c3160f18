"""The few helpers that generated gradient code calls.

Generated code does its arithmetic inline; these helpers cover the bookkeeping that has no
one-line NumPy spelling: summing a broadcast gradient back to an operand's shape, putting
back the axes a reduction removed, and splitting the gradient of max/min among ties.
Each helper is plain NumPy, so generated code stays readable and debuggable. The helpers
of the linear-algebra, array and SciPy rules are in runtime_linalg.py, runtime_arrays.py
and runtime_scipy.py (the optimize pass treats them all alike).
"""
from __future__ import annotations

import numpy as np


def stop_gradient(x):
    """The identity at run time; to the compiler, its result is a constant."""
    return x


def unbroadcast(g, x):
    """Sum `g` (the gradient of a broadcast result) down to the shape of operand `x`."""
    shape = np.shape(x)
    if isinstance(g, (int, float)) and shape:     # the seed 1.0: x's precision
        g = np.asarray(g, dtype=float_dtype(x))
    gshape = np.shape(g)
    if gshape == shape:
        return g
    extra = len(gshape) - len(shape)
    if extra > 0:
        g = np.sum(g, axis=tuple(range(extra)))
    elif extra < 0:     # g broadcasts against x from the right: (3,) against (1, 3)
        g = np.reshape(g, (1,) * -extra + gshape)
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and np.shape(g)[i] != 1)
    if axes:
        g = np.sum(g, axis=axes, keepdims=True)
    if np.shape(g) != shape:     # g was smaller than x (a broadcast scalar gradient)
        g = np.array(np.broadcast_to(g, shape))   # a writable array of its own
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
    g = as_float(g, x)
    if axis is not None and not keepdims and np.ndim(g):
        # (a number g, the zero of an unused result say, broadcasts as it is)
        g = np.expand_dims(g, _axes(axis, len(shape)))
    return np.broadcast_to(g, shape)


def reduced_size(x, axis=None):
    """How many elements of `x` a reduction over `axis` combines into one (1 for none:
    the mean of an empty array is nan, and its gradient, an empty array, divides by this
    number without a ZeroDivisionError)."""
    shape = np.shape(x)
    n = 1
    for a in _axes(axis, len(shape)):
        n *= shape[a]
    return max(n, 1)


def choose_grad(g, ans, x, axis=None, keepdims=False):
    """Gradient of max/min: `g` goes to the chosen elements, split evenly among ties."""
    ans = unreduce(ans, x, axis, keepdims)
    chosen = x == ans
    count = np.sum(chosen, axis=axis, keepdims=True, dtype=float_dtype(x))
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


def _ndim(a):
    ndim = getattr(a, "ndim", None)
    return np.ndim(a) if ndim is None else ndim


def _new_axis(a, axis):
    """np.expand_dims(a, axis) for axis -1 or -2; indexing is several times faster for
    the small arrays of loops (and works on any array type that indexes like NumPy)."""
    if not hasattr(a, "ndim"):
        return np.expand_dims(a, axis)
    return a[..., None] if axis == -1 else a[..., None, :]


def _swap_last(a):
    """np.swapaxes(a, -1, -2), by the array's own method when it has one (no dispatch)."""
    return a.swapaxes(-1, -2) if hasattr(a, "swapaxes") else np.swapaxes(a, -1, -2)


def matmul_grad_left(g, x, y):
    """d(x @ y)/dx applied to g, for any of NumPy's 1-D/2-D/stacked cases."""
    if _ndim(y) == 1:
        if _ndim(x) == 1:
            return g * y
        return _new_axis(g, -1) * y
    if _ndim(x) == 1:
        # x is one row that each matrix of a stack y multiplies: (y @ g[..., None])[..., 0]
        return unbroadcast((y @ _new_axis(g, -1))[..., 0] if _ndim(y) > 2 else y @ g, x)
    return unbroadcast(g @ _swap_last(y), x)


def matmul_grad_right(g, x, y):
    """d(x @ y)/dy applied to g, for any of NumPy's 1-D/2-D/stacked cases."""
    if _ndim(x) == 1:
        if _ndim(y) == 1:
            return g * x
        return unbroadcast(_new_axis(x, -1) * _new_axis(g, -2), y)
    if _ndim(y) == 1:
        return unbroadcast(np.sum(_swap_last(x) * _new_axis(g, -2), axis=-1)
                           if _ndim(x) > 2 else g @ x, y)
    return unbroadcast(_swap_last(x) @ g, y)


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
    dtype = float_dtype(x, y)
    return np.asarray(x == z, dtype=dtype) / (1.0 + np.asarray(x == y, dtype=dtype))


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


def float_dtype(*xs):
    """The floating dtype a gradient of `xs` is computed in (float64 unless they are
    floats of another precision)."""
    dtype = np.result_type(*xs)
    return dtype if dtype.kind == "f" else np.dtype(np.float64)


def as_float(g, *xs):
    """`g` as an array in the precision of `xs` when it is a Python number (the seed 1.0,
    which would otherwise make float32 gradients float64); other values unchanged."""
    if isinstance(g, (int, float)):
        return np.asarray(g, dtype=float_dtype(*xs))
    return g


def mT(x):
    """The matrix transpose of `x` (its last two axes swapped), as NumPy 2's `x.mT`."""
    return np.swapaxes(x, -1, -2)


def real_dtype(dtype) -> bool:
    """Whether a cast to `dtype` has a gradient sgcompiler computes (not complex)."""
    try:
        return np.dtype(dtype).kind != "c"
    except TypeError:
        return True         # not a dtype: the cast itself fails


def cast_grad(g, x, dtype):
    """Gradient of x.astype(dtype): `g` in x's dtype; zero for a cast to integers or bools,
    which are piecewise constant."""
    kind = np.dtype(dtype).kind
    if kind == "c":
        raise TypeError("cannot differentiate a cast to a complex dtype; complex gradients "
                        "are not supported")
    if kind != "f":
        return np.zeros(np.shape(x), dtype=float_dtype(x))
    return np.asarray(g, dtype=float_dtype(x))


def cumsum_grad(g, a, axis=None):
    """Gradient of np.cumsum(a, axis): the reversed cumulative sum of `g`."""
    if axis is None:
        return np.flip(np.cumsum(np.flip(np.ravel(g)))).reshape(np.shape(a))
    return np.flip(np.cumsum(np.flip(g, axis), axis), axis)


def cumprod_grad(g, ans, a, axis=None):
    """Gradient of np.cumprod(a, axis); exact also when `a` has zeros."""
    if axis is None:
        flat = cumprod_grad(np.ravel(g), np.ravel(ans), np.ravel(a), 0)
        return flat.reshape(np.shape(a))
    a = np.asarray(a)
    if np.all(a != 0):
        return cumsum_grad(g * ans, a, axis) / a
    # d out[j] / d a[i] = prod(a[:i]) * prod(a[i+1:j+1]) for j >= i; the sum over j of
    # g[j] * prod(a[i+1:j+1]) follows the recurrence s[i] = g[i] + a[i+1] * s[i+1].
    am, gm = np.moveaxis(a, axis, -1), np.moveaxis(np.broadcast_to(g, a.shape), axis, -1)
    ones = np.ones(am.shape[:-1] + (1,), dtype=am.dtype)
    before = np.cumprod(np.concatenate([ones, am[..., :-1]], axis=-1), axis=-1)
    s = np.zeros(am.shape, dtype=np.result_type(gm, am, float_dtype(am)))
    acc = 0.0
    for i in reversed(range(am.shape[-1])):
        acc = gm[..., i] + (am[..., i + 1] * acc if i + 1 < am.shape[-1] else 0.0)
        s[..., i] = acc
    return np.moveaxis(before * s, -1, axis)


def axes_last(x, axis=None):
    """`x` with the axes of a reduction over `axis` merged into one last axis, and a
    function that puts an array of that layout back into x's shape."""
    x = np.asarray(x)
    axes = _axes(axis, x.ndim)
    moved = np.moveaxis(x, axes, tuple(range(-len(axes), 0))) if axes else x[..., None]
    merged = moved.reshape(moved.shape[:x.ndim - len(axes)] + (-1,))

    def restore(y):
        if not axes:
            return y[..., 0]
        return np.moveaxis(np.reshape(y, moved.shape), tuple(range(-len(axes), 0)), axes)
    return merged, restore


def median_grad(g, a, axis=None, keepdims=False):
    """Gradient of np.median: `g` goes to the middle element, or half to each of the two
    middle ones for an even count; ties split evenly."""
    merged, restore = axes_last(a, axis)
    n = merged.shape[-1]
    ordered = np.sort(merged, axis=-1)
    low = ordered[..., (n - 1) // 2:(n - 1) // 2 + 1]
    high = ordered[..., n // 2:n // 2 + 1]
    dtype = float_dtype(merged)
    share = 0.5 * ((merged == low) / np.sum(merged == low, axis=-1, keepdims=True, dtype=dtype)
                   + (merged == high) / np.sum(merged == high, axis=-1, keepdims=True,
                                               dtype=dtype))
    return unreduce(g, a, axis, keepdims) * restore(share)


def average_weights(a, weights, axis=None):
    """The weights of np.average broadcast to a's shape (they may be 1-D along `axis`)."""
    a, weights = np.asarray(a), np.asarray(weights)
    if weights.shape == a.shape:
        return weights
    axes = _axes(axis, a.ndim)
    shape = [a.shape[i] if i in axes else 1 for i in range(a.ndim)]
    return np.broadcast_to(np.reshape(weights, shape), a.shape)


def average_grad_a(g, a, axis=None, weights=None, keepdims=False, returned=False):
    """Gradient of np.average(a, axis, weights) with respect to a."""
    _no_returned(returned)
    g = unreduce(g, a, axis, keepdims)
    if weights is None:
        return g / reduced_size(a, axis)
    w = average_weights(a, weights, axis)
    return g * w / np.sum(w, axis=axis, keepdims=True)


def average_grad_weights(g, ans, a, axis=None, weights=None, keepdims=False, returned=False):
    """Gradient of np.average(a, axis, weights) with respect to the weights (None when
    there are none)."""
    _no_returned(returned)
    if weights is None:
        return None
    w = average_weights(a, weights, axis)
    grad = unreduce(g, a, axis, keepdims) * (a - unreduce(ans, a, axis, keepdims)) \
        / np.sum(w, axis=axis, keepdims=True)
    if np.shape(weights) == np.shape(a):
        return grad
    others = tuple(i for i in range(np.ndim(a)) if i not in _axes(axis, np.ndim(a)))
    return np.reshape(np.sum(grad, axis=others), np.shape(weights))


def _no_returned(returned):
    if returned:
        raise NotImplementedError("the gradient of np.average(..., returned=True) is not "
                                  "supported; compute np.sum(weights) separately")


def divide_or_zero(g, d):
    """`g / d`, and 0 where `d` is 0: the gradient of a norm (np.std, np.hypot) where it is
    0, a kink at its minimum, at which 0 is the subgradient (as for abs at 0)."""
    zero = np.equal(d, 0)
    if not np.any(zero):
        return g / d
    return np.where(zero, 0.0, g / np.where(zero, 1.0, d))


def nan_count(a, axis=None):
    """How many elements of `a` are not NaN, per reduction over `axis` (dimensions kept)."""
    return np.sum(~np.isnan(a), axis=axis, keepdims=True, dtype=float_dtype(a))


def astype(x, dtype, order="K", casting="unsafe", subok=True, copy=True):
    """x.astype(dtype) as a function: the primitive the method stands for in rules."""
    return np.asarray(x).astype(dtype, order=order, casting=casting, subok=subok, copy=copy)
