"""The helpers every kind of rule shares, and stop_gradient.

Generated code does its arithmetic inline; these helpers cover the bookkeeping that has no
one-line NumPy spelling: summing a broadcast gradient back to an operand's shape, putting
back the axes a reduction removed, adding gradients of parameter trees. Each helper is
plain NumPy, so generated code stays readable and debuggable. The helpers of one family of
rules are in the module of the same name (rules/numpy/linalg.py -> runtime/numpy/linalg.py).
"""
from __future__ import annotations

import builtins
import math

import numpy
import numpy as np

from ..errors import RuntimeRefusal, SGCompilerError
from .scatter import _places


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
        g = _broadcast_to_x(g, x)
        if type(g) is np.ndarray:
            g = np.array(g)     # a writable array of its own
    return g


def _broadcast_to_x(g, x):
    """`g` broadcast to the shape of `x`: a read-only view (in g's library). A NumPy `g`
    for an `x` of another library (a dask array) is zeros like `x` plus `g`, made by that
    library, so the result is as lazy as `x` and chunked like it (dask would take a NumPy
    broadcast of `x`'s N elements in as a full array of N numbers). A number `g` (the
    gradient of a mean, say) is filled in, which dask holds as one number per chunk: no
    chunk of it is made until an operation reads it."""
    if not _other_library(x) or _other_library(g):
        return np.broadcast_to(g, np.shape(x))
    if np.ndim(g) == 0:
        return np.full_like(x, g, dtype=np.result_type(g))
    return np.zeros_like(x, dtype=np.result_type(g)) + g


def _other_library(x) -> bool:
    """Whether `x` is an array of a library NumPy functions dispatch to (dask)."""
    return hasattr(type(x), "__array_function__") and \
        not isinstance(x, (np.ndarray, np.generic))


def scalar_result(value):
    """Refuse a function's value that is not a scalar: the gradient of code made to be
    differentiated again returns the gradient alone, and checks its value here."""
    # (the size from the shape: np.size of a dask array would compute it)
    if isinstance(value, (tuple, list, dict)) or math.prod(np.shape(value)) != 1:
        raise TypeError(f"a function differentiated with grad must return a scalar, but it "
                        f"returned a value of shape {np.shape(value)}; reduce it to a "
                        "scalar (e.g. np.sum) first, or use vjp")


def reduced_axes(axis, ndim):
    """The axes a reduction over `axis` removes from an array of `ndim` axes, sorted."""
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
        g = np.expand_dims(g, reduced_axes(axis, len(shape)))
    return _broadcast_to_x(g, x)


def reduce_like(g, h, axis=None, keepdims=False):
    """The adjoint of unreduce(h, x, axis, keepdims): `g` (x's shape) summed back to the
    shape of `h` (which may be x's shape already, the reduction's, or a number)."""
    if axis is not None and not keepdims and np.ndim(h):
        expanded = np.expand_dims(h, reduced_axes(axis, np.ndim(g)))
        return np.reshape(unbroadcast(g, expanded), np.shape(h))
    return unbroadcast(g, h)


def reduced_size(x, axis=None):
    """How many elements of `x` a reduction over `axis` combines into one (1 for none:
    the mean of an empty array is nan, and its gradient, an empty array, divides by this
    number without a ZeroDivisionError)."""
    shape = np.shape(x)
    n = 1
    for a in reduced_axes(axis, len(shape)):
        n *= shape[a]
    return max(n, 1)


def balanced_eq(x, z, y):
    """1 where x is the chosen one of (x, y) in max/min, 0.5 on ties, else 0."""
    dtype = float_dtype(x, y)
    if not hasattr(dtype, "type"):      # not NumPy's dtype: the array API standard does
        # not mix bools and floats in where
        return np.where(x == y, np.asarray(0.5, dtype=dtype), _as_dtype(x == z, dtype))
    # (x == z) / (1 + (x == y)) in one pass that writes floats: a tie is x == y (then
    # x == z too); the scalar's dtype keeps float32 float32, and np.where dispatches to
    # another library's where (a dask array stays lazy)
    return np.where(x == y, dtype.type(0.5), x == z)


def _as_dtype(a, dtype):
    """`a` (a comparison's result) as numbers of `dtype`: by its own astype when it has
    one, else as an array."""
    return a.astype(dtype) if hasattr(a, "astype") else np.asarray(a, dtype=dtype)


def rows_sum(items, start=0):
    """Python's sum(items, start), for code on arrays of another library (which iterate
    no rows in the array API standard): an array's rows added up by np.sum over its first
    axis, in its dtype; anything else by Python's sum."""
    if not isinstance(items, np.ndarray):
        return builtins.sum(items, start)
    if items.ndim == 0:
        raise TypeError("iteration over a 0-d array")
    if items.shape[0] == 0:
        return start
    return start + np.sum(items, axis=0, dtype=items.dtype)


def unbroadcast_each(g, items):
    """The gradient of sum(items) for each item: `g`, summed to that item's shape."""
    if isinstance(items, np.ndarray):     # (g is larger than a row for sum(x, start))
        if items.ndim > 1 and items.shape[0]:
            g = unbroadcast(g, items[0, ...])
        return np.broadcast_to(g, items.shape)
    return [unbroadcast(g, item) for item in items]


def unbroadcast_sum(g, h):
    """The adjoint of unbroadcast_each(h, items): the sum of each item's `g`, summed down
    to the shape of `h`."""
    if isinstance(g, np.ndarray):
        return unbroadcast(g, h)
    total = 0.0
    for item in g:
        total = total + unbroadcast(item, h)
    return total


def zeros_tree(x):
    """A zero adjoint for a container: a list (or dict) of 0.0 with the same keys.

    Elements stay plain 0.0 until something is added to them, so nothing is allocated
    for parts of a parameter tree that get no gradient; a container inside gets zeros of
    its own keys (the backward of a function returning nested tuples indexes them)."""
    if isinstance(x, dict):
        return {k: _zero_part(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_zero_part(v) for v in x]
    if isinstance(x, (str, bytes)) or x is None:    # (a mode="full" passed on: no adjoint)
        return 0.0
    if not isinstance(x, (np.ndarray, np.generic, float, int)) and hasattr(x, "__dict__"):
        # a record (a dataclass, a registered type): its adjoint is a dict by field name
        return dict.fromkeys(vars(x), 0.0)
    return np.zeros_like(x, dtype=float_dtype(x))


def _zero_part(x):
    # a record (a NamedTuple too) inside stays a plain 0.0: its adjoint may be spelled by
    # field name (a dict), which zeros by position would not add up with
    return zeros_tree(x) if isinstance(x, (dict, list, tuple)) and \
        not hasattr(x, "_fields") else 0.0


def item_adjoint(g, index, x=None):
    """g[index], the adjoint of the element x (an array or a container; None for a number)
    of a list or tuple whose adjoint is g: zeros of x's shape and structure where g, or its
    element, is a plain 0.0 (which the derivative rules that need x's shape cannot take)."""
    item = g if _is_zero(g) else g[_row(g, index)]
    if _is_zero(item) and hasattr(type(x), "_fields"):
        return 0.0      # a NamedTuple's: its adjoint may be keyed by position or by field
    if _is_zero(item) and isinstance(x, (list, tuple, dict, np.ndarray)):
        return zeros_tree(x)
    return item


def _row(g, index):
    """`index` for g[index], as (index, ...) for a row of an array of more axes than one:
    the array API standard wants an index for every axis, or an ellipsis."""
    if isinstance(g, (list, tuple, dict)) or isinstance(index, (tuple, slice)) or \
            not hasattr(index, "__index__") or len(getattr(g, "shape", ())) < 2:
        return index
    return index, Ellipsis


def scatter_item(c, g, index):
    """The adjoint of item_adjoint(g, index): zeros of g's structure with `c` at index
    (0.0 when g was a plain 0.0, whose item does not depend on it)."""
    if _is_zero(g):
        return 0.0
    return add_at(zeros_tree(g), index, c)


def add_at(dx, index, g):
    """dx[index] += g for an adjoint that is an array or a container (list, dict)."""
    if isinstance(dx, (list, dict)):
        dx[index] = add_trees(dx[index], g)
    elif _other_library(g) or _other_library(dx):
        return _added_at(dx, index, g)
    else:
        np.add.at(dx, index, g)
    return dx


def _added_at(dx, index, g):
    """add_at for arrays of another library (dask), which have no ufunc.at: a basic index
    (numbers, slices) picks each element once, so dx[index] + g written there is the same;
    dx is a new array of g's library (a NumPy dx, zeros made for the adjoint, becomes one).
    An index with arrays in it may pick an element twice: see _scattered."""
    parts = index if isinstance(index, tuple) else (index,)
    if not all(isinstance(p, (int, np.integer, slice)) or p is None or p is Ellipsis
               for p in parts):
        return dx + _scattered(np.shape(dx), index, g, np.result_type(dx, g))
    if not _other_library(dx):
        dx = np.zeros_like(g, shape=np.shape(dx), dtype=np.result_type(dx, g)) + dx
    dx = dx.copy()
    dx[index] = dx[index] + g
    return dx


def _scattered(shape, index, g, dtype):
    """Zeros of `shape` with `g` added at a NumPy `index` (duplicates add up, as with
    np.add.at), in g's library and as lazy as g: the flat position of every element the
    index picks, chunked like g, counted by np.bincount with g as the weights."""
    if any(_other_library(p) for p in (index if isinstance(index, tuple) else (index,))):
        raise RuntimeRefusal(
            "adding a gradient at an index array of another library (a dask array) is "
            "not supported: where its duplicates fall is known only when it is computed; "
            "index with a NumPy array, or compute the index first")
    if np.dtype(dtype).kind == "c":
        return _scattered(shape, index, np.real(g), dtype) + \
            1j * _scattered(shape, index, np.imag(g), dtype)
    positions = np.arange(math.prod(shape)).reshape(shape)[index]
    g = np.broadcast_to(g, np.shape(positions))
    if _other_library(g):
        positions = np.zeros_like(g, dtype=positions.dtype) + positions
    counted = np.bincount(np.ravel(positions), weights=np.ravel(g),
                          minlength=math.prod(shape))
    return np.reshape(counted, shape).astype(dtype)


def copied(value):
    """A copy of an array, a list or a dict (one level: the adjoint sweep writes its
    items, not into them), other values as they are: what code read again saves of a value
    that it writes into later (the tape must not keep a reference to it)."""
    if isinstance(value, np.ndarray):
        return np.copy(value)
    if isinstance(value, dict):
        return dict(value)
    return list(value) if isinstance(value, list) else value


def length(items) -> int:
    """len(items), and 0 for None (a list that code read again has not made yet)."""
    return 0 if items is None else len(items)


def index_part(g, index, like):
    """g[index], shaped like `like` (summed where `like` was broadcast into it): the
    adjoint of add_at's value. A number g is the adjoint no value has reached yet (0.0,
    as adjoints start): its part is 0.0 too (zeros of an array `like`: see fitted)."""
    if not isinstance(g, (list, dict, tuple)) and np.ndim(g) == 0:
        if g == 0:
            return _zeros_for(like)
        raise RuntimeRefusal("the adjoint of an index add is a number other than zero; "
                             "please report this program")
    part = g[index]
    if isinstance(g, (list, dict)) or isinstance(part, (list, dict, tuple)):
        return fitted(part, like)
    return unbroadcast(part, like)


def fitted(g, like):
    """An adjoint list `g` padded with zeros (0.0) to the length of the list `like` it is
    the adjoint of: add_trees adds lists up to the shorter one's length (a slice's adjoint
    `da[1:] = add_trees(da[1:], db)` drops the entries of elements appended to b later),
    so like's elements past g's end got no gradient (issue 13: grad of grad lost theirs).
    A plain 0.0 (an item of an adjoint list that no value reached) of an array `like` is
    zeros of its shape: the rules it goes to (np.einsum's) may read its axes. A list
    longer than `like` is cut to its length: that is the transpose of the padding, so
    fitted's adjoint is fitted again (grad of grad of grad: rules/runtime.py)."""
    if isinstance(g, list) and isinstance(like, (list, tuple)) and len(g) < len(like):
        return g + [0.0] * (len(like) - len(g))
    if isinstance(g, (list, tuple)) and isinstance(like, (list, tuple)) and \
            len(g) > len(like):
        return list(g[:len(like)])
    if type(g) is float and g == 0.0:
        return _zeros_for(like)
    return g


def _zeros_for(like):
    """The adjoint no value has reached of `like`: zeros of an array's shape, else 0.0."""
    if isinstance(like, np.ndarray) and like.ndim:
        return np.zeros(like.shape, dtype=float_dtype(like))
    return 0.0


def written_part(g, index):
    """g[index] for the value v of `x[index] = v` (x's adjoint g): a new array, with zeros
    where another element of v was written to the same place after it (an index with
    duplicates; NumPy keeps one write). Which write is kept is found by doing the same
    assignment with the elements' positions as values. A container's item (a dict's key,
    a list's position) is written once: it is g's item."""
    if isinstance(g, (list, dict, tuple)):
        return copied(g[index])
    if np is not numpy:     # (bound to another library: the standard has no fancy assignment)
        part = _picked(g, index)
        return np.where(_kept_writes(np.shape(g), index), part, np.zeros((), dtype=part.dtype))
    part = np.array(g[index])
    order = np.arange(part.size).reshape(part.shape)
    written = np.full(np.shape(g), -1, dtype=np.intp)
    written[index] = order
    part[written[index] != order] = 0
    return part


def written_back(g, index, like):
    """The adjoint of written_part(like, index) (its transpose): zeros of like's shape with
    g assigned at index; with duplicates, assignment keeps the write written_part kept."""
    if isinstance(like, (list, dict, tuple)):
        return old_item_back(g, like, index)
    out = np.zeros(np.shape(like), dtype=float_dtype(like, g))
    if np is not numpy:     # (bound to another library: the standard has no fancy assignment)
        kept = _kept_writes(np.shape(like), index)
        np.add.at(out, index, np.where(kept, g, np.zeros((), dtype=out.dtype)))
        return out
    out[index] = g
    return out


def _picked(a, index):
    """a[index] as NumPy reads it, for an array of another library (the standard reads
    integer arrays only at every axis: `:` then one array is a take)."""
    return _places(np.xp, a, index, np)


def _kept_writes(shape, index):
    """Whether each element written by `x[index] = v` (x of `shape`) is the one kept at its
    place, the last written there, in operations of the array API standard: (number of
    elements written) squared comparisons."""
    places = _picked(np.reshape(np.arange(math.prod(shape)), shape), index)
    flat = np.reshape(places, (-1,))
    order = np.arange(np.shape(flat)[0])
    later = np.reshape(order, (1, -1)) > np.reshape(order, (-1, 1))
    again = np.reshape(flat, (1, -1)) == np.reshape(flat, (-1, 1))
    return np.reshape(~np.any(later & again, axis=1), np.shape(places))


def _is_zero(a):
    return type(a) is float and a == 0.0


def add_trees(a, b):
    """The sum of two adjoints that may be containers (elementwise, nested) or arrays; a
    plain 0.0 stands for a zero of any structure."""
    if _is_zero(a):
        return b
    if _is_zero(b):
        return a
    if isinstance(a, dict) != isinstance(b, dict) and (
            isinstance(a, (dict, list, tuple)) or isinstance(b, (dict, list, tuple))):
        # a NamedTuple read both as p[0] and as p.w: its adjoint has two spellings
        raise SGCompilerError("a parameter tree is read both by position (p[0], unpacking) "
                              "and by field name (p.w), which sgcompiler cannot add up; "
                              "read it one way in the differentiated code")
    if isinstance(a, dict):
        return {k: add_trees(a.get(k, 0.0), b.get(k, 0.0)) for k in {**a, **b}}
    if isinstance(a, (list, tuple)):
        return [add_trees(x, y) for x, y in zip(a, b)]
    return a + b


def field(obj, name):
    """`obj.name`: a field of a record (a NamedTuple, a dataclass, a registered type); its
    rule gives `obj` the adjoint {name: g}. The standard's arrays have no .real and
    .imag: those are its functions. A gradient of a record that a generated function
    returns (grad(loss)(p) called inside differentiated code) is the dict of its fields'
    adjoints, {name: g}, a missing field a zero."""
    if type(obj) is dict and not hasattr(dict, name):
        return obj.get(name, 0.0)
    if name in ("real", "imag") and isinstance(obj, np.ndarray) and not hasattr(obj, name):
        return getattr(np, name)(obj)
    return getattr(obj, name)


def tree_item(g, key):
    """The part at `key` of an adjoint `g` that may be a container (a dict display's, a
    record's: a missing key is a zero, 0.0); an array is its own part (x.real)."""
    if isinstance(g, dict):
        return g.get(key, 0.0)
    if isinstance(g, (list, tuple)):
        return g[key]
    if _is_zero(g) or not isinstance(key, str):
        return 0.0
    return g


def tree_with(like, key, g):
    """A tree shaped like `like` that is `g` at `key` and zero elsewhere: the adjoint of
    `like` for a read of its part at `key` (field(p, 'w'), d['a'])."""
    if isinstance(like, (list, tuple)) and not isinstance(key, str):
        return [g if i == key else np.zeros_like(v) if isinstance(v, np.ndarray) else 0.0
                for i, v in enumerate(like)]
    if isinstance(like, (np.ndarray, np.generic, float, int)):
        return g            # an array's own attribute (x.real)
    return {key: g}         # a record's field (a NamedTuple's too), a dict's entry


def old_item(container, key):
    """container[key] before `container[key] = v` replaces it, for the adjoint sweep to
    put back: a copy (an array element may be written in place later), or 0.0 (a zero of
    any structure) for a key that a dict does not have yet."""
    if isinstance(container, dict) and key not in container:
        return 0.0
    old = container[key]
    return old.copy() if hasattr(old, "copy") else old


def old_item_back(g, container, key):
    """The adjoint of old_item(container, key) for its container (grad of grad restores
    what the gradient saved): g at `key` of a zero shaped like `container`. A key that a
    dict did not have gets nothing, as old_item's 0.0 there is a constant; an array's key
    that picks an element twice adds up."""
    if isinstance(container, dict):
        return {key: g} if key in container and not _is_zero(g) else 0.0
    if isinstance(container, (list, tuple)):
        return tree_with(container, key, g)
    return add_at(zeros_tree(container), key, g)


def not_a_view(value, array, where, text=""):
    """Refuse `value = array[...]` being a view when `array` is later written in place
    (an index known only at run time; a slice is refused when compiled). `where` is
    `f (file:line)`, `text` that line."""
    if isinstance(value, np.ndarray) and np.shares_memory(value, array):
        shown = f" [in: {text}]" if text else ""
        raise SGCompilerError(
            f"{where}: this reads a view of an array that is written in place later (the "
            "index is a slice when it runs), so the write would change the value read "
            f"here; read a copy instead: x[...].copy(){shown}")


def float_dtype(*xs):
    """The floating dtype a gradient of `xs` is computed in (float64 unless they are
    floats of another precision, or complex)."""
    dtype = np.result_type(*(_typed(x) for x in xs))
    return dtype if np.isdtype(dtype, ("real floating", "complex floating")) else \
        np.dtype(np.float64)


def _typed(x):
    """What np.result_type takes for `x`: it reads a list or tuple as a dtype spec, so a
    list of values ([1, a * a, 2]) stands for the result type of its elements."""
    if isinstance(x, (list, tuple)):
        return np.result_type(*(_typed(e) for e in x)) if x else np.dtype(np.float64)
    return x


def as_float(g, *xs):
    """`g` as an array in the precision of `xs` when it is a Python number (the seed 1.0,
    which would otherwise make float32 gradients float64); other values unchanged."""
    if isinstance(g, (int, float)):
        return np.asarray(g, dtype=float_dtype(*xs))
    return g


def mT(x):
    """The matrix transpose of `x` (its last two axes swapped), as NumPy 2's `x.mT`."""
    return np.swapaxes(x, -1, -2)


def sequence_adjoint(g, items):
    """The adjoint of `items` for tuple(items) or list(items) whose adjoint is `g` (a
    list, or a plain 0.0): `g` itself for a list or tuple, the rows stacked for an array,
    nothing for a dict (its keys are listed)."""
    if isinstance(items, dict):
        return 0.0
    if not isinstance(items, np.ndarray):
        return g
    zero = np.zeros(items.shape[1:], dtype=float_dtype(items))
    if _is_zero(g):
        return np.zeros(items.shape, dtype=zero.dtype)
    return np.stack([zero + part for part in g])


def sequence_parts(g, items):
    """The adjoint of sequence_adjoint(g_, items) (its rows, for an array)."""
    if isinstance(items, np.ndarray) and not _is_zero(g):
        return list(g)
    return g


def max_of(items):
    """max(items) of one iterable (Python's: the first largest item); the front end
    writes `max(v for v in xs)` so (frontend/forms/sugar.py), as the rule of max takes two."""
    return max(items)


def min_of(items):
    """min(items) of one iterable, as max_of."""
    return min(items)


def too_few_values(count: int, keys: int, names: str):
    """What `dict(zip(KEYS, vs))` gives when `vs` has fewer values than KEYS has keys and
    its length was not known when compiling (frontend/forms/dicts.py): the keys of the
    dict, and so its adjoint code, were made for as many values as keys."""
    raise RuntimeRefusal(f"{names}: {count} values for {keys} keys, where the gradient "
                         f"was compiled for one value per key (Python makes a shorter "
                         f"dict); zip as many keys as there are values, or pass a list "
                         f"or tuple display, whose length is known when compiling")


def _chosen_index(items, chosen) -> int:
    if isinstance(items, np.ndarray):
        return int(np.flatnonzero(items == chosen)[0])
    for i, item in enumerate(items):
        if item is chosen:
            return i
    return next(i for i, item in enumerate(items) if item == chosen)


def picked(g, items, chosen):
    """The adjoint of `items` for max_of/min_of(items) = chosen: g at the first item
    that is the result, zero elsewhere (a list for a list, an array for an array)."""
    index = _chosen_index(items, chosen)
    if isinstance(items, np.ndarray):
        out = np.zeros(items.shape, dtype=float_dtype(items, g))
        out[index] = g
        return out
    return [g if i == index else 0.0 for i in range(len(items))]


def item_of(t, items, chosen):
    """The tangent of max_of/min_of(items) = chosen: the tangent `t` of items at the item
    chosen (the adjoint of `picked`)."""
    return t if _is_zero(t) else t[_chosen_index(items, chosen)]




# helpers whose result is a tree when one of their arguments is -> that argument's
# position (analysis/shapes.py; item_adjoint's item is like its x)
TREE_HELPERS = ((zeros_tree, 0), (add_trees, 0), (add_at, 0), (item_adjoint, 2),
                (scatter_item, 1), (unbroadcast_each, 1), (picked, 1), (old_item_back, 1),
                (sequence_adjoint, 0), (sequence_parts, 0), (tree_with, 0), (fitted, 1),
                (index_part, 2))

# runtime helper -> the position of the argument it reads only the shape of
SHAPE_ARGUMENT = {"unbroadcast": 1, "unreduce": 1, "reduced_size": 0}


def bessel_i1(x):
    """The modified Bessel function I1 (the derivative of np.i0), from its integral
    I1(x) = (1/2 pi) int_0^2pi exp(x cos t) cos t dt by the trapezoid rule on n points,
    which is exact up to I_(n-1)(x) / I1(x) ~ exp(-n^2 / 2x): below 1e-16 for the n here."""
    x = np.asarray(x)
    dtype = float_dtype(x)
    biggest = float(np.max(np.abs(x))) if np.size(x) else 0.0   # (no initial=: standard)
    n = 32 + int(math.sqrt(80.0 * biggest))
    total = np.zeros(x.shape, dtype=dtype)
    for angle in np.arange(0.0, n) * (2.0 * np.pi / n):     # (float: standard arrays)
        total += np.exp(x * np.cos(angle)) * np.cos(angle)
    return total / n
