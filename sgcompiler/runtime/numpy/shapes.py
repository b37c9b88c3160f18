"""Helpers that generated gradient code calls for shape and indexing functions (rules/numpy/shapes.py).

Most of these functions only move elements around, so each gradient sends every element of
`g` back to the element of the input it came from, adding where one input element was used
more than once (tile, repeat, take with repeated indices, pad's edge modes).
"""
from __future__ import annotations

import numpy
import numpy as np

from ...errors import RuntimeRefusal
from ..core import float_dtype, unbroadcast
from ..namespace import numpy_names


def _zeros(shape, g, x):
    """Zeros for the gradient of x (float32 stays float32 also when g is a Python float)."""
    return np.zeros(shape, dtype=float_dtype(g, x))


def tile_grad(g, A, reps):
    """Gradient of np.tile(A, reps): the sum of g over the copies."""
    A = np.asarray(A)
    reps = tuple(reps) if isinstance(reps, (tuple, list)) or np.ndim(reps) else \
        (int(reps),)        # (a tuple has no ndim for another library's namespace)
    d = max(A.ndim, len(reps))
    shape = (1,) * (d - A.ndim) + A.shape
    reps = (1,) * (d - len(reps)) + reps
    blocks = np.reshape(g, [n for pair in zip(reps, shape) for n in pair])
    return np.reshape(np.sum(blocks, axis=tuple(range(0, 2 * d, 2))), np.shape(A))


def repeat_grad(g, a, repeats, axis=None):
    """Gradient of np.repeat(a, repeats, axis): g summed over the copies of each element."""
    a = np.asarray(a)
    if axis is None:
        source = np.repeat(np.arange(a.size), repeats)
        out = _zeros(a.size, g, a)
        np.add.at(out, source, g)
        return np.reshape(out, np.shape(a))
    axis %= a.ndim
    source = np.repeat(np.arange(a.shape[axis]), repeats)
    out = _zeros(a.shape, g, a)
    np.add.at(out, (slice(None),) * axis + (source,), g)
    return out


def take_grad(g, a, indices, axis=None, mode="raise"):
    """Gradient of np.take(a, indices, axis, mode): g added at the indices (repeats sum)."""
    a = np.asarray(a)
    n = a.size if axis is None else a.shape[axis]
    source = np.take(np.arange(n), indices, mode=mode)   # wrap/clip resolved the same way
    if axis is None:
        out = _zeros(a.size, g, a)
        np.add.at(out, source, g)
        return np.reshape(out, np.shape(a))
    out = _zeros(a.shape, g, a)
    np.add.at(out, (slice(None),) * (axis % a.ndim) + (source,), g)
    return out


def take_along_axis_grad(g, arr, indices, axis=-1):
    """Gradient of np.take_along_axis(arr, indices, axis): g added where it was taken from."""
    arr = np.asarray(arr)
    if axis is None:
        out = _zeros(arr.size, g, arr)
        np.add.at(out, indices, g)
        return np.reshape(out, np.shape(arr))
    axis %= arr.ndim
    index = tuple(indices if d == axis else
                  np.reshape(np.arange(n), [n if k == d else 1 for k in range(arr.ndim)])
                  for d, n in enumerate(arr.shape))
    out = _zeros(arr.shape, g, arr)
    np.add.at(out, index, g)
    return out


COPYING_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def pad_grad(g, array, pad_width, mode="constant"):
    """Gradient of np.pad for the modes that copy elements (constant, edge, reflect,
    symmetric, wrap): padding an array of element numbers tells where each came from."""
    if mode not in COPYING_PAD_MODES:
        raise RuntimeRefusal(f"the gradient of np.pad(mode={mode!r}) is not supported; the "
                             f"modes are {', '.join(COPYING_PAD_MODES)}; pass one of them, "
                             "or wrap the call in stop_gradient if no gradient should flow "
                             "through it")
    array = np.asarray(array)
    dtype = float_dtype(g, array)
    if mode == "constant":      # the part of g that was `array` (no scatter: the standard's)
        widths = _pad_widths(pad_width, array.ndim)
        if np.ndim(g) == 0:
            return np.full(np.shape(array), g, dtype=dtype)
        g = np.broadcast_to(g, tuple(n + b + e for n, (b, e) in zip(array.shape, widths)))
        return np.array(g[tuple(slice(b, b + n) for n, (b, _) in zip(array.shape, widths))],
                        dtype=dtype)
    source = np.pad(np.reshape(np.arange(np.size(array)), np.shape(array)), pad_width,
                    mode=mode)
    inside = source >= 0
    g = np.broadcast_to(g, source.shape)
    out = np.bincount(source[inside], weights=g[inside], minlength=np.size(array))
    return np.astype(np.reshape(out, np.shape(array)), float_dtype(g, array))


def _pad_widths(pad_width, ndim):
    """np.pad's pad_width (n, (n,), (before, after), ((before, after), ...)) as one
    (before, after) pair of ints an axis."""
    widths = pad_width.tolist() if hasattr(pad_width, "tolist") else pad_width
    if isinstance(widths, int):
        return [(widths, widths)] * ndim
    widths = list(widths)
    if all(isinstance(w, int) for w in widths):
        widths = [widths]
    pairs = [(int(w[0]), int(w[-1])) for w in widths]
    return pairs * ndim if len(pairs) == 1 else pairs


def sort_grad(g, a, axis=-1):
    """Gradient of np.sort(a, axis): g sent back to where each sorted element came from."""
    a = np.asarray(a)
    if axis is None:
        return np.reshape(sort_grad(g, np.ravel(a), 0), np.shape(a))
    order = np.argsort(a, axis=axis, kind="stable")
    out = _zeros(a.shape, g, a)
    np.put_along_axis(out, order, g, axis=axis)
    return out


def sorted_like(t, a, axis=-1):
    """t with its elements moved as np.sort(a, axis) moves a's: the tangent of np.sort,
    and the transpose of sort_grad."""
    order = np.argsort(a, axis=axis, kind="stable")
    if axis is None:
        return np.take(t, order)
    return np.take_along_axis(np.broadcast_to(t, np.shape(a)), order, axis=axis)


def diff_grad(g, a, n=1, axis=-1, prepend=None, append=None):
    """Gradient of np.diff(a, n, axis, prepend, append): the transpose of differencing,
    -diff(g padded with one zero at each end), n times, then the part that was `a`."""
    for _ in range(n):
        widths = [(0, 0)] * np.ndim(g)
        widths[axis] = (1, 1)
        g = -np.diff(np.pad(g, widths), axis=axis)
    start = 0
    if prepend is not None:
        start = 1 if np.ndim(prepend) == 0 else np.shape(prepend)[axis]
    length = np.shape(a)[axis]
    return np.take(g, np.arange(start, start + length), axis=axis)


def append_grad(g, arr, values, axis=None, wrt=0):
    """Gradient of np.append(arr, values, axis): the part of g each came from."""
    if axis is None:
        first, rest = np.split(np.ravel(g), [np.size(arr)])
        return np.reshape(first if wrt == 0 else rest, np.shape(arr if wrt == 0 else values))
    first, rest = np.split(g, [np.shape(arr)[axis]], axis=axis)
    return first if wrt == 0 else rest


def delete_grad(g, arr, obj, axis=None):
    """Gradient of np.delete(arr, obj, axis): g back at the elements that were kept."""
    arr = np.asarray(arr)
    n = arr.size if axis is None else arr.shape[axis]
    kept = np.delete(np.arange(n), obj)
    return take_grad(g, arr, kept, axis)


def trapezoid_grad(g, y, x=None, dx=1.0, axis=-1):
    """Gradient of np.trapezoid(y, x, dx, axis): each y gets half of the intervals next
    to it."""
    y = np.asarray(y)
    n = y.shape[axis]
    if x is None:
        widths = np.full(n - 1, dx, dtype=float_dtype(g, y))
    elif np.ndim(x) == 1:
        widths = np.diff(x)
    else:
        widths = np.moveaxis(np.diff(x, axis=axis), axis, -1)
    pad = [(0, 0)] * (np.ndim(widths) - 1)
    weights = 0.5 * (np.pad(widths, pad + [(1, 0)]) + np.pad(widths, pad + [(0, 1)]))
    return unbroadcast(np.moveaxis(np.expand_dims(g, -1) * weights, -1, axis), y)


def linspace_fractions(g, num=50, endpoint=True, axis=0, retstep=False):
    """Where each point of np.linspace(start, stop, num) lies between start (0) and
    stop (1), shaped to broadcast against its result (`g`) along `axis`."""
    if retstep:
        raise RuntimeRefusal("the gradient of np.linspace(..., retstep=True) is not "
                             "supported; compute the step as (stop - start) / (num - 1)")
    t = np.linspace(0.0, 1.0, num, endpoint=endpoint, dtype=float_dtype(g))
    shape = [1] * np.ndim(g)
    if shape:
        shape[axis] = num
    return np.reshape(t, shape)


def interp_grad_x(g, x, xp, fp, left=None, right=None, period=None):
    """Gradient of np.interp(x, xp, fp) with respect to x: the slope of the segment x is
    in; zero outside [xp[0], xp[-1]]."""
    _no_period(period)
    j, _ = _interp_segment(x, xp)
    slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j])
    inside = (x >= xp[0]) & (x <= xp[-1])
    return g * np.where(inside, slope, 0.0)


def interp_grad_fp(g, x, xp, fp, left=None, right=None, period=None):
    """Gradient of np.interp(x, xp, fp) with respect to fp: each x's two neighbours get
    (1 - t) and t; outside the range the end value gets it unless left/right replace it."""
    _no_period(period)
    j, t = _interp_segment(x, xp)
    below, above = x < xp[0], x > xp[-1]
    inside = ~(below | above)
    out = _zeros(np.shape(fp), g, fp)
    g = np.broadcast_to(g, np.shape(x))
    np.add.at(out, j[inside], (g * (1.0 - t))[inside])
    np.add.at(out, j[inside] + 1, (g * t)[inside])
    if left is None:
        out[0] += np.sum(g[below])
    if right is None:
        out[-1] += np.sum(g[above])
    return out


def interp_linear_part(x, xp, fp, left=None, right=None, period=None):
    """np.interp(x, xp, fp, left, right, period) with a given left or right value taken
    as 0: the part that is linear in fp (np.interp's tangent for fp, and the transpose
    of interp_grad_fp), in the float dtype of x and fp (np.interp gives float64)."""
    part = np.interp(x, xp, fp, None if left is None else 0.0,
                     None if right is None else 0.0, period)
    return np.asarray(part, dtype=float_dtype(x, fp))


def interp_slope_grad(c, x, xp, fp):
    """The gradient for fp of np.sum(c * interp_grad_x(1.0, x, xp, fp)): each slope
    (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]) gives c / (xp[j + 1] - xp[j]) to fp[j + 1]
    and takes it from fp[j], for the x inside [xp[0], xp[-1]]."""
    j, _ = _interp_segment(x, xp)
    inside = (np.asarray(x) >= xp[0]) & (np.asarray(x) <= xp[-1])
    share = np.where(inside, np.broadcast_to(c, np.shape(x)) / (xp[j + 1] - xp[j]), 0.0)
    out = _zeros(np.shape(fp), c, fp)
    np.add.at(out, j + 1, share)
    np.add.at(out, j, -share)
    return out


def _interp_segment(x, xp):
    x = np.asarray(x)
    j = np.clip(np.searchsorted(xp, x, side="right") - 1, 0, len(xp) - 2)
    return j, (x - xp[j]) / (xp[j + 1] - xp[j])


def _no_period(period):
    if period is not None:
        raise RuntimeRefusal("the gradient of np.interp(..., period=...) is not supported; "
                             "reduce x modulo the period first (np.mod) and pass period=None")


def polyval_grad_p(g, p, x):
    """Gradient of np.polyval(p, x) with respect to the coefficients: the powers of x."""
    powers = range(np.shape(p)[0] - 1, -1, -1)     # (np.shape: p may be another library's)
    return np.asarray(np.stack([np.sum(g * np.asarray(x) ** k) for k in powers]),
                      dtype=float_dtype(g, p))


def polyval_grad_x(g, p, x):
    """Gradient of np.polyval(p, x) with respect to x: the derivative polynomial at x."""
    n = np.shape(p)[0] - 1
    if n == 0:
        return np.zeros(np.shape(x), dtype=float_dtype(g, x))
    p = np.asarray(p)
    return g * np.polyval(p[:-1] * np.arange(n, 0, -1, dtype=float_dtype(p)), x)


# --- sequences in, sequences out (the adjoint of a sequence is a list) ---------------------


def split_like(g, arrays, axis=0):
    """Gradient of np.concatenate(arrays, axis): g cut into pieces shaped like `arrays`."""
    if axis is None:
        cuts = np.cumsum([np.size(a) for a in arrays])[:-1]
        return [np.reshape(p, np.shape(a)) for p, a in zip(np.split(np.ravel(g), cuts), arrays)]
    cuts = np.cumsum([np.shape(a)[axis] for a in arrays])[:-1]
    return np.split(g, cuts, axis=axis)


def unstack(g, axis=0):
    """Gradient of np.stack(arrays, axis): the slices of g along `axis`, as a list."""
    moved = np.moveaxis(g, axis, 0)
    return [moved[i, ...] for i in range(np.shape(moved)[0])]   # (strict arrays: no iter)


def _split_reshaped(g, arrays, promoted, axis):
    """Split g like the arrays made `promoted` (atleast_nd), then give each its own shape.
    (The promoted arrays, not the promoting function: the compiler reads these helpers
    again for second derivatives, and calls only functions named at module level.)"""
    pieces = split_like(g, promoted, axis)
    return [np.reshape(p, np.shape(a)) for p, a in zip(pieces, arrays)]


def hstack_grad(g, tup):
    """Gradient of np.hstack(tup): 1-D arrays are joined along axis 0, others along 1."""
    axis = 0 if all([np.ndim(a) <= 1 for a in tup]) else 1
    return _split_reshaped(g, tup, [np.atleast_1d(a) for a in tup], axis)


def vstack_grad(g, tup):
    """Gradient of np.vstack(tup): rows of the arrays made at least 2-D."""
    return _split_reshaped(g, tup, [np.atleast_2d(a) for a in tup], 0)


def dstack_grad(g, tup):
    """Gradient of np.dstack(tup): the arrays made at least 3-D, joined along axis 2."""
    return _split_reshaped(g, tup, [np.atleast_3d(a) for a in tup], 2)


def column_stack_grad(g, tup):
    """Gradient of np.column_stack(tup): 1-D arrays are columns, 2-D ones stay as they are."""
    return _split_reshaped(g, tup, [np.reshape(a, (-1, 1)) if np.ndim(a) < 2 else a
                                    for a in tup], 1)


def join_pieces(g, ans, axis=0):
    """Gradient of np.split and friends: the pieces' adjoints joined along `axis` (zeros
    for pieces that got none, which the compiler passes as 0.0)."""
    return np.concatenate([np.broadcast_to(gi, np.shape(piece)) if not _is_none(gi)
                           else np.zeros(np.shape(piece), dtype=float_dtype(piece))
                           for gi, piece in zip(g, ans)], axis=axis)


def _is_none(g):
    return type(g) is float and g == 0.0


def hsplit_axis(ary):
    """The axis np.hsplit splits along: 0 for 1-D arrays, else 1."""
    return 0 if np.ndim(ary) == 1 else 1


def select_grad(g, condlist, choicelist, i):
    """Gradient of np.select(condlist, choicelist) for choice i: g where condition i is
    the first one that holds."""
    taken = np.asarray(condlist[i], dtype=bool)
    for earlier in condlist[:i]:
        taken = taken & ~np.asarray(earlier, dtype=bool)
    return unbroadcast(np.where(taken, g, 0.0), choicelist[i])


def select_grads(g, condlist, choicelist):
    """The gradients of np.select for every choice, as a list."""
    return [select_grad(g, condlist, choicelist, i) for i in range(len(choicelist))]


def select_default_grad(g, condlist, default):
    """Gradient of np.select for `default`: g where no condition holds."""
    held = False
    for c in condlist:
        held = held | np.asarray(c, dtype=bool)
    return unbroadcast(np.where(held, 0.0, g), default)


def transpose_grad(g, axes=None):
    """Gradient of np.transpose(x, axes): transpose back with the inverse permutation."""
    if axes is None:
        return np.transpose(g)
    return np.transpose(g, np.argsort(axes))


def real_dtype(dtype) -> bool:
    """Whether a cast to `dtype` has a gradient sgcompiler computes (not complex)."""
    try:
        return _dtype_kind(dtype) != "c"
    except TypeError:
        return True         # not a dtype: the cast itself fails


def _dtype_kind(dtype) -> str:
    """NumPy's kind letter of `dtype`, also of another library's dtype of the same name
    (array_api_strict.float32); `numpy`, not `np`, which is rebound to the arguments'
    namespace when this runs on their arrays."""
    try:
        return numpy.dtype(dtype).kind
    except TypeError:
        return numpy.dtype(str(dtype).rsplit(".", 1)[-1]).kind


def cast_grad(g, x, dtype):
    """Gradient of x.astype(dtype): `g` in x's dtype; zero for a cast to integers or bools,
    which are piecewise constant."""
    kind = _dtype_kind(dtype)
    if kind == "c":
        shown = numpy.dtype(dtype) if isinstance(dtype, (type, numpy.dtype, str)) else dtype
        raise RuntimeRefusal(f"the gradient of a cast to the complex dtype {shown} "
                             "is not supported; cast to a real dtype, or wrap the call in "
                             "stop_gradient if no gradient should flow through it")
    if kind != "f":
        return np.zeros(np.shape(x), dtype=float_dtype(x))
    return np.asarray(g, dtype=float_dtype(x))


def astype(x, dtype, order="K", casting="unsafe", subok=True, copy=True):
    """x.astype(dtype) as a function: the primitive the method stands for in rules."""
    namespace = getattr(x, "__array_namespace__", None)
    if namespace is not None and not isinstance(x, numpy.ndarray) and \
            (order, casting, subok) == ("K", "unsafe", True):
        # an array of another library (called as sgcompiler.runtime.astype, this helper
        # is NumPy's): its own astype, not a copy into NumPy
        return numpy_names(namespace()).astype(x, dtype, copy=copy)
    return np.asarray(x).astype(dtype, order=order, casting=casting, subok=subok, copy=copy)


def _partition_orders(ans, a, axis):
    """Stable orders of a and of ans = np.partition(a, ...) along axis: the element at
    ans_order[j] of ans is the one at a_order[j] of a (they hold the same values)."""
    return np.argsort(a, axis=axis, kind="stable"), np.argsort(ans, axis=axis, kind="stable")


def partition_grad(g, ans, a, axis=-1):
    """Gradient of np.partition(a, kth, axis): g sent back to where each element came
    from (found by value, as np.sort's: tied elements each get one of the tied gradients)."""
    a = np.asarray(a)
    if axis is None:
        return np.reshape(partition_grad(g, ans, np.ravel(a), 0), np.shape(a))
    a_order, ans_order = _partition_orders(ans, a, axis)
    out = _zeros(a.shape, g, a)
    np.put_along_axis(out, a_order, np.take_along_axis(as_array(g, ans), ans_order, axis),
                      axis=axis)
    return out


def partition_tangent_of(t, ans, a, axis=-1):
    """Tangent of np.partition(a, kth, axis): t moved as the elements were."""
    if axis is None:
        return partition_tangent_of(np.ravel(t), ans, np.ravel(a), 0)
    a_order, ans_order = _partition_orders(ans, a, axis)
    out = np.zeros(np.shape(ans), dtype=float_dtype(t))
    np.put_along_axis(out, ans_order, np.take_along_axis(
        np.broadcast_to(t, np.shape(a)), a_order, axis), axis=axis)
    return out


def as_array(g, like):
    """g (perhaps a Python float, a broadcast seed) as an array of like's shape."""
    return np.broadcast_to(g, np.shape(like))


def rollaxis_destination(ndim, axis, start=0):
    """Where np.rollaxis(a, axis, start) puts axis (as np.moveaxis's destination)."""
    axis, start = axis % ndim, start + ndim if start < 0 else start
    return start - 1 if start > axis else start


def rollaxis_grad(g, a, axis, start=0):
    """Gradient of np.rollaxis(a, axis, start): the axis moved back."""
    return np.moveaxis(g, rollaxis_destination(np.ndim(a), axis, start), axis)
