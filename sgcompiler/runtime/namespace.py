"""Arrays of other libraries: which array namespace the arguments come from, NumPy's names
spelled with the array API standard, and the runtime helpers bound to them.

Generated code for NumPy arrays calls `np.` and the helpers of this package directly. For
arrays of another array-API library (array_api_strict, CuPy, ...) the compiler generates
the same gradient for any shape (no `out=` buffers) with `xp.` in place of NumPy
(backend/namespace.py); `xp` is a `NumPyNames` of the arguments' namespace, and every
runtime helper the code calls is the same function run with `np` bound to that
`NumPyNames` (`helpers_for`), so each helper is written once, in NumPy's spelling.
What the standard cannot express raises SGCompilerError naming the function and the
library.
"""
from __future__ import annotations

import contextvars
import math
import sys
import types

import numpy as np

from ..errors import SGCompilerError
from .scatter import StandardAdd
from .spellings import MoreSpellings, Special

try:        # optional: it knows the namespaces of libraries without __array_namespace__
    from array_api_compat import array_namespace as _compat_namespace
    from array_api_compat import is_array_api_obj as _compat_is_array
except ImportError:         # pragma: no cover - the protocol alone
    _compat_namespace = _compat_is_array = None


def is_foreign(value) -> bool:
    """Whether `value` is an array of an array-API library other than NumPy."""
    t = type(value)
    if t is np.ndarray or t is float or isinstance(value, (np.ndarray, np.generic, type)):
        return False        # (a type: np.float32 has __array_namespace__ too)
    if t.__module__.partition(".")[0] == "dask":
        return False        # dask arrays take NumPy's code, lazily (data_kinds.py)
    return hasattr(t, "__array_namespace__") or (
        _compat_is_array is not None and not isinstance(value, (int, float, complex)) and
        _compat_is_array(value))


def namespace_of(values):
    """The array namespace of the arrays among `values` (Python numbers and NumPy arrays
    aside), or None when there are none. Raises TypeError for arrays of two libraries."""
    foreign = [v for v in values if is_foreign(v)]
    if not foreign:
        return None
    if _compat_namespace is not None:
        return _compat_namespace(*foreign)
    spaces = {id(ns): ns for ns in (v.__array_namespace__() for v in foreign)}
    if len(spaces) > 1:
        raise TypeError("the arguments are arrays of different array libraries ("
                        f"{', '.join(sorted(s.__name__ for s in spaces.values()))}); "
                        "convert them to one")
    return next(iter(spaces.values()))


def library_name(xp) -> str:
    """The name users know a namespace by (array_api_compat.cupy -> cupy)."""
    name = getattr(xp, "__name__", type(xp).__name__)
    return name.removeprefix("array_api_compat.")


# NumPy's name -> the standard's, where only the name differs
_RENAMED = {"power": "pow", "arccos": "acos", "arcsin": "asin", "arctan": "atan",
            "arccosh": "acosh", "arcsinh": "asinh", "arctanh": "atanh",
            "arctan2": "atan2", "concatenate": "concat", "absolute": "abs",
            "invert": "bitwise_invert", "cumprod": "cumulative_prod",
            "true_divide": "divide"}
# NumPy names the standard has with other semantics, refused unless spelled below
_DIFFERENT = frozenset({"take", "squeeze", "round", "where", "diff", "transpose",
                        "reshape"})


class NumPyNames(MoreSpellings):
    """NumPy's names (those generated code and the runtime helpers use), implemented with
    the array namespace `xp` alone: `NumPyNames(xp).exp is xp.exp`, `.arccos is xp.acos`,
    `.swapaxes(x, 0, 1)` permutes with `xp.permute_dims`. A NumPy function the standard
    has no spelling of raises SGCompilerError naming it and the library."""

    def __init__(self, xp):
        self.xp = xp
        self.library = library_name(xp)
        self.ndarray = type(xp.asarray(0.0))
        self.generic = _NoScalarType
        add = getattr(xp, "add", None)
        if add is not None and not hasattr(add, "at"):
            self.add = StandardAdd(self)    # (CuPy's add has its own .at)

    def __repr__(self):
        return f"<NumPy's names for {self.library}>"

    def __getattr__(self, name):
        xp = self.__dict__["xp"]
        target = _RENAMED.get(name, name)
        if target.startswith("_") or name in _DIFFERENT or not hasattr(xp, target):
            raise self.missing(name)
        found = getattr(xp, target)
        setattr(self, name, found)
        return found

    def missing(self, name) -> SGCompilerError:
        return SGCompilerError(
            f"numpy.{name} has no counterpart in the array API standard, so it cannot run "
            f"on {self.library} arrays; compute this gradient with NumPy arrays "
            "(np.asarray(...) of the arguments), or write the function with what the "
            "standard offers")

    # --- what NumPy spells differently ---------------------------------------------------

    def shape(self, x):
        return tuple(x.shape) if hasattr(x, "shape") else ()

    def ndim(self, x):
        return x.ndim if hasattr(x, "ndim") else 0

    def size(self, x):
        return math.prod(self.shape(x))

    def dtype(self, dtype):
        """The library's dtype for a dtype spelled as NumPy's (np.float32, float, 'int64'),
        by its name; the library's own dtypes as they are."""
        if dtype is None:
            return None
        try:
            name = np.dtype(dtype).name
        except TypeError:
            return dtype
        return getattr(self.xp, name, dtype)

    def asarray(self, a, dtype=None):
        dtype = self.dtype(dtype)
        if isinstance(a, self.ndarray):
            return a if dtype is None or a.dtype == dtype else self.xp.astype(a, dtype)
        return self.xp.asarray(a, dtype=dtype)

    def array(self, a, dtype=None, copy=True):
        dtype = self.dtype(dtype)
        if isinstance(a, self.ndarray) and dtype is not None and a.dtype != dtype:
            return self.xp.astype(a, dtype)
        return self.xp.asarray(a, dtype=dtype, copy=copy)

    def astype(self, x, dtype, copy=True):
        if not isinstance(x, self.ndarray):
            return self.xp.asarray(x, dtype=self.dtype(dtype))
        return self.xp.astype(x, self.dtype(dtype), copy=copy)

    def copy(self, a):
        return self.xp.asarray(a, copy=True)

    def iscomplexobj(self, x):
        if isinstance(x, (int, float, complex)):
            return isinstance(x, complex)
        return self.xp.isdtype(x.dtype, "complex floating")

    def negative(self, x):
        if isinstance(x, (tuple, list)):        # a shift of np.roll, say
            return tuple(-v for v in x)
        return -x if isinstance(x, (int, float)) else self.xp.negative(x)

    def ravel(self, a):
        return self.xp.reshape(a, (-1,))

    def result_type(self, *xs):
        typed = [x for x in xs if not isinstance(x, (int, float, bool))]
        if not typed:
            return self.xp.float64 if any(isinstance(x, float) for x in xs) \
                else self.xp.int64
        return self.xp.result_type(*typed)

    def expand_dims(self, x, axis):
        axes = axis if isinstance(axis, (tuple, list)) else (axis,)
        ndim = self.ndim(x) + len(axes)
        for a in sorted(a % ndim for a in axes):
            x = self.xp.expand_dims(x, axis=a)
        return x

    def transpose(self, x, axes=None):
        return self.xp.permute_dims(x, tuple(reversed(range(x.ndim))) if axes is None
                                    else tuple(axes))

    def swapaxes(self, x, a, b):
        order = list(range(x.ndim))
        order[a], order[b] = order[b], order[a]
        return self.xp.permute_dims(x, tuple(order))

    def reshape(self, x, shape, order="C"):
        if order != "C":
            raise self.missing(f"reshape(..., order={order!r})")
        return self.xp.reshape(x, (shape,) if isinstance(shape, int) else tuple(shape))

    def argsort(self, a, axis=-1, kind=None):
        if isinstance(a, (tuple, list)):        # a permutation of axes
            return tuple(sorted(range(len(a)), key=a.__getitem__))
        return self.xp.argsort(a, axis=axis, stable=True)

    def cumsum(self, a, axis=None):
        if isinstance(a, (tuple, list)):        # sizes of pieces: bookkeeping, not data
            return np.cumsum(a)
        if axis is None and a.ndim != 1:
            raise self.missing("cumsum(..., axis=None) of an array of several axes")
        return self.xp.cumulative_sum(a, axis=axis)

    def split(self, a, cuts, axis=0):
        if isinstance(cuts, int):
            raise self.missing("split(a, n) into equal pieces")
        bounds = [0] + [int(c) for c in cuts] + [a.shape[axis]]
        before = (slice(None),) * (axis % a.ndim)
        return [a[before + (slice(start, stop), ...)]
                for start, stop in zip(bounds[:-1], bounds[1:])]

    def flip(self, x, axis=None):
        return self.xp.flip(x, axis=_axis(axis))

    def roll(self, x, shift, axis=None):
        return self.xp.roll(x, shift, axis=_axis(axis))

    def triu(self, x, k=0):
        return self.xp.triu(x, k=k)

    def tril(self, x, k=0):
        return self.xp.tril(x, k=k)

    def tile(self, x, reps):
        return self.xp.tile(x, tuple(reps) if isinstance(reps, (tuple, list)) else (reps,))

    def tensordot(self, a, b, axes=2):
        if not isinstance(axes, int):
            axes = tuple(tuple(v) if isinstance(v, (tuple, list)) else (v,) for v in axes)
        return self.xp.tensordot(a, b, axes=axes)

    def take_along_axis(self, a, indices, axis):
        return self.xp.take_along_axis(a, indices, axis=axis)

    def squeeze(self, x, axis=None):
        if axis is None:
            axis = tuple(i for i, n in enumerate(x.shape) if n == 1)
        return self.xp.squeeze(x, axis=axis)

    def where(self, condition, x, y):
        if isinstance(x, (int, float, complex)) and isinstance(y, (int, float, complex)):
            x = self.xp.asarray(x, dtype=self.result_type(x, y))  # (the standard takes one)
        return self.xp.where(condition, x, y)

    def isneginf(self, x):
        return self.xp.isinf(x) & (x < 0)

    def isposinf(self, x):
        return self.xp.isinf(x) & (x > 0)

    def dot(self, a, b):
        if self.ndim(a) == 0 or self.ndim(b) == 0:
            return a * b
        if self.ndim(a) > 2 or self.ndim(b) > 2:
            raise self.missing("dot of arrays of more than two axes")
        return self.xp.matmul(a, b)

    def inner(self, a, b):
        if self.ndim(a) == 0 or self.ndim(b) == 0:
            return a * b
        return self.xp.tensordot(a, b, axes=((a.ndim - 1,), (b.ndim - 1,)))

    def outer(self, a, b):
        return self.xp.reshape(a, (-1, 1)) * self.xp.reshape(b, (1, -1))

    def moveaxis(self, x, source, destination):
        return self.xp.moveaxis(x, source, destination)

    def sum(self, a, axis=None, dtype=None, keepdims=False):
        if dtype is not None and a.dtype == self.xp.bool:       # counting a mask
            return self.xp.sum(self.xp.astype(a, dtype), axis=_axis(axis), keepdims=keepdims)
        return self.xp.sum(a, axis=_axis(axis), dtype=dtype, keepdims=keepdims)

    def mean(self, a, axis=None, keepdims=False):
        return self.xp.mean(a, axis=_axis(axis), keepdims=keepdims)

    def std(self, a, axis=None, ddof=0, keepdims=False):
        return self.xp.std(a, axis=_axis(axis), correction=ddof, keepdims=keepdims)

    def var(self, a, axis=None, ddof=0, keepdims=False):
        return self.xp.var(a, axis=_axis(axis), correction=ddof, keepdims=keepdims)

    def repeat(self, x, repeats, axis=None):
        if not isinstance(repeats, (int, self.ndarray)):    # (a list or NumPy counts)
            repeats = self.xp.asarray(np.asarray(repeats).tolist(), dtype=self.xp.int64)
        return self.xp.repeat(x, repeats, axis=axis)

    def diagonal(self, a, offset=0, axis1=0, axis2=1):
        moved = self.xp.moveaxis(a, (axis1, axis2), (-2, -1))
        return self.xp.linalg.diagonal(moved, offset=offset)

    @property
    def linalg(self):
        found = self.__dict__.get("_linalg")
        if found is None:
            if not hasattr(self.xp, "linalg"):
                raise self.missing("linalg")
            found = self.__dict__["_linalg"] = _Linalg(self)
        return found

    # NumPy's elementwise functions the standard spells with others (exact: a choice,
    # a power of two, a cast; logaddexp2 as logaddexp of the numbers times log(2))
    def fmax(self, x, y):
        xp = self.xp
        return xp.where(xp.isnan(y), x, xp.where(xp.isnan(x), y, xp.maximum(x, y)))

    def fmin(self, x, y):
        xp = self.xp
        return xp.where(xp.isnan(y), x, xp.where(xp.isnan(x), y, xp.minimum(x, y)))

    def heaviside(self, x, h0):
        xp = self.xp
        one, zero = xp.ones_like(x), xp.zeros_like(x)
        h0 = h0 if isinstance(h0, self.ndarray) else xp.full_like(x, h0)
        step = xp.where(x > 0, one, xp.where(x < 0, zero, h0))
        return xp.where(xp.isnan(x), x, step)

    def logaddexp2(self, x, y):
        ln2 = math.log(2.0)
        return self.xp.logaddexp(x * ln2, y * ln2) / ln2

    def float_power(self, x, y):
        xp = self.xp
        wide = [v if not isinstance(v, self.ndarray) else xp.astype(
            v, xp.complex128 if xp.isdtype(v.dtype, "complex floating") else xp.float64)
            for v in (x, y)]
        return xp.pow(*wide)

    def exp2(self, x):
        return self.xp.pow(2.0, x)

    def ldexp(self, x, i):
        xp = self.xp
        twos = xp.pow(2.0, xp.astype(i, x.dtype) if isinstance(i, self.ndarray) else i)
        return x * twos

    def fmod(self, x, y):
        """C's fmod (the sign of x): the remainder of the magnitudes (exact, as NumPy's
        remainder of two non-negative numbers is), given x's sign."""
        xp = self.xp
        r = xp.remainder(xp.abs(x), xp.abs(y))
        if isinstance(r, self.ndarray) and xp.isdtype(r.dtype, "real floating"):
            return xp.copysign(r, x)
        return xp.where(xp.asarray(x) < 0, -r, r)

    # NumPy's functions of arrays the standard spells with others
    def take(self, a, indices, axis=None, mode=None):
        xp = self.xp
        if axis is None:
            a, axis = xp.reshape(a, (-1,)), 0
        axis %= a.ndim
        n = a.shape[axis]
        index = indices if isinstance(indices, self.ndarray) else \
            xp.asarray(np.asarray(indices).tolist(), dtype=xp.int64)
        if mode == "wrap":
            index = index % n
        elif mode == "clip":
            index = xp.clip(index, 0, n - 1)
        else:
            index = xp.where(index < 0, index + n, index)
        picked = xp.take(a, xp.reshape(index, (-1,)), axis=axis)
        return xp.reshape(picked, tuple(a.shape[:axis]) + tuple(index.shape) +
                          tuple(a.shape[axis + 1:]))

    def pad(self, array, pad_width, mode="constant", constant_values=0, **options):
        """np.pad of a number as the constant, or of a mode that copies elements (edge,
        reflect, symmetric, wrap: each axis taken at the positions np.pad gives its
        element numbers, NumPy's semantics for any width)."""
        xp = self.xp
        widths = np.broadcast_to(np.asarray(pad_width, dtype=int), (array.ndim, 2))
        if mode in ("edge", "reflect", "symmetric", "wrap") and not options:
            for axis, (before, after) in enumerate(widths.tolist()):
                places = np.pad(np.arange(array.shape[axis]), (before, after), mode=mode)
                array = xp.take(array, xp.asarray(places.tolist(), dtype=xp.int64),
                                axis=axis)
            return array
        if mode != "constant" or np.ndim(constant_values) != 0 or options:
            raise self.missing(f"pad(..., mode={mode!r}) with these values")
        for axis, (before, after) in enumerate(widths.tolist()):
            shape = list(array.shape)
            parts = []
            for width in (before, after):
                shape[axis] = width
                parts.append(xp.full(tuple(shape), constant_values, dtype=array.dtype))
            array = xp.concat([parts[0], array, parts[1]], axis=axis)
        return array

    def diff(self, a, n=1, axis=-1, prepend=None, append=None):
        xp = self.xp
        axis %= a.ndim
        ends = []
        for value in (prepend, append):
            if value is None:
                ends.append(None)
                continue
            shape = list(a.shape)
            shape[axis] = 1
            value = xp.asarray(value, dtype=a.dtype) if not isinstance(
                value, self.ndarray) else value
            ends.append(xp.broadcast_to(value, tuple(shape)) if value.ndim == 0 else value)
        if ends[0] is not None or ends[1] is not None:
            a = xp.concat([e for e in (ends[0], a, ends[1]) if e is not None], axis=axis)
        before = (slice(None),) * axis
        for _ in range(n):
            a = a[before + (slice(1, None), ...)] - a[before + (slice(None, -1), ...)]
        return a

    def diag(self, v, k=0):
        xp = self.xp
        if v.ndim == 2:
            return xp.linalg.diagonal(v, offset=k)
        if v.ndim != 1:
            raise ValueError("Input must be 1- or 2-d.")
        size = v.shape[0] + abs(k)
        placed = xp.concat([v, xp.zeros((abs(k),), dtype=v.dtype)])
        placed = xp.reshape(placed, (-1, 1) if k >= 0 else (1, -1))
        return xp.eye(size, k=k, dtype=v.dtype) * placed

    def diagflat(self, v, k=0):
        return self.diag(self.xp.reshape(v, (-1,)), k)

    def kron(self, a, b):
        xp = self.xp
        nd = max(a.ndim, b.ndim)
        sa = (1,) * (nd - a.ndim) + tuple(a.shape)
        sb = (1,) * (nd - b.ndim) + tuple(b.shape)
        blocks = xp.reshape(a, tuple(n for s in sa for n in (s, 1))) * \
            xp.reshape(b, tuple(n for s in sb for n in (1, s)))
        return xp.reshape(blocks, tuple(x * y for x, y in zip(sa, sb)))

    def cross(self, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
        xp = self.xp
        if axis is not None:
            axisa = axisb = axisc = axis
        a, b = xp.moveaxis(a, axisa, -1), xp.moveaxis(b, axisb, -1)
        if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
            raise ValueError("incompatible dimensions for cross product "
                             "(dimension must be 2 or 3)")
        a0, a1 = a[..., 0], a[..., 1]
        b0, b1 = b[..., 0], b[..., 1]
        third = a0 * b1 - a1 * b0
        if a.shape[-1] == 2 and b.shape[-1] == 2:
            return third
        a2 = a[..., 2] if a.shape[-1] == 3 else None
        b2 = b[..., 2] if b.shape[-1] == 3 else None
        first = (a1 * b2 if b2 is not None else 0) - (a2 * b1 if a2 is not None else 0)
        second = (a2 * b0 if a2 is not None else 0) - (a0 * b2 if b2 is not None else 0)
        first, second, third = xp.broadcast_arrays(xp.asarray(first), xp.asarray(second),
                                                   third)
        return xp.moveaxis(xp.stack([first, second, third], axis=-1), -1, axisc)

    def nancumsum(self, a, axis=None):
        return self._skipping_nans(self.xp.cumulative_sum, a, 0.0, axis)

    def nancumprod(self, a, axis=None):
        return self._skipping_nans(self.xp.cumulative_prod, a, 1.0, axis)

    def _skipping_nans(self, cumulative, a, neutral, axis):
        a = self.xp.where(self.xp.isnan(a), neutral, a)
        if axis is None:
            a, axis = self.xp.reshape(a, (-1,)), 0
        return cumulative(a, axis=axis)

    def put_along_axis(self, arr, indices, values, axis):
        """NumPy's put_along_axis (in place, through arr[...] =) at indices that name each
        place once (a permutation: sort's and partition's gradients), one-hot along axis."""
        xp = self.xp
        if axis is None:
            raise self.missing("put_along_axis(..., axis=None)")
        axis %= arr.ndim
        n = arr.shape[axis]
        index = xp.where(indices < 0, indices + n, indices)
        every = xp.reshape(xp.arange(n), (1,) * arr.ndim + (n,))
        hit = xp.expand_dims(index, axis=-1) == every  # (..., place m along axis, n)
        hit = xp.astype(hit, arr.dtype)
        if xp.any(xp.sum(hit, axis=axis) > 1):
            raise self.missing("put_along_axis at indices that repeat a place")
        values = xp.broadcast_to(xp.asarray(values, dtype=arr.dtype) if not isinstance(
            values, self.ndarray) else values, tuple(index.shape))
        put = xp.sum(hit * xp.expand_dims(values, axis=-1), axis=axis, keepdims=True)
        touched = xp.sum(hit, axis=axis, keepdims=True) > 0
        put, touched = xp.moveaxis(put, -1, axis), xp.moveaxis(touched, -1, axis)
        put, touched = (xp.squeeze(v, axis=axis + 1) for v in (put, touched))
        arr[...] = xp.where(touched, put, arr)

    def einsum(self, subscripts, *operands):
        """np.einsum of explicit or implicit subscripts (no interleaved form): each operand's
        repeated letters as its diagonal, then all operands broadcast over every letter,
        multiplied and summed over the letters not in the output."""
        if not isinstance(subscripts, str):
            raise self.missing("einsum with index lists")
        from .numpy.linalg import _einsum_parse
        xp = self.xp
        inputs, output = _einsum_parse(subscripts, [x.ndim for x in operands])
        letters = list(output) + sorted(set("".join(inputs)) - set(output))
        product = None
        for spec, x in zip(inputs, operands):
            spec = list(spec)
            for c in dict.fromkeys(spec):       # a repeated letter: x's diagonal
                while spec.count(c) > 1:
                    i = spec.index(c)
                    j = spec.index(c, i + 1)
                    x = xp.linalg.diagonal(xp.moveaxis(x, (i, j), (-2, -1)))
                    spec = [s for k, s in enumerate(spec) if k not in (i, j)] + [c]
            order = sorted(range(len(spec)), key=lambda k: letters.index(spec[k]))
            x = xp.permute_dims(x, tuple(order))
            have = [spec[k] for k in order]
            x = xp.reshape(x, tuple(x.shape[have.index(c)] if c in have else 1
                                    for c in letters))
            product = x if product is None else product * x
        summed = tuple(range(len(output), len(letters)))
        return xp.sum(product, axis=summed) if summed else product

    # what NumPy's arrays do that the standard's do not (generated code's `x.copy()` and
    # `y[index] = v` are spelled with these for other libraries: backend/namespace.py)
    def copy_of(self, x):
        """`x.copy()`: a new array for an array, the object's own copy for a list or dict."""
        return self.xp.asarray(x, copy=True) if isinstance(x, self.ndarray) else x.copy()

    def getitem(self, x, index):
        """`x[index]` as NumPy reads it, for the index forms generated code and the
        helpers use: the library's own indexing where it takes the index, else integer
        arrays taken along their axis (scatter._places)."""
        parts, integers = self._integer_arrays(index)
        if not integers:
            return x[index]
        try:        # (all axes indexed by integers and integer arrays; CuPy's arrays)
            return x[parts if isinstance(index, tuple) else parts[0]]
        except IndexError:
            return self._taken_at(x, parts)

    def _taken_at(self, x, parts):
        """x[parts] for one integer array among slices (scatter._places), or a clear
        refusal."""
        from .scatter import _places
        at = [k for k, p in enumerate(parts) if isinstance(p, self.ndarray)]
        if len(at) != 1 or not all(isinstance(p, slice) for k, p in enumerate(parts)
                                   if k != at[0]):
            raise SGCompilerError(
                "an index of integer arrays mixed with integers, None or other integer "
                f"arrays and slices has no counterpart in the array API standard, so it "
                f"cannot run on {self.library} arrays; index with one integer array among "
                "slices, or with integers and integer arrays for every axis, or pass NumPy "
                "arrays")
        return _places(self.xp, x, parts, self)

    def _integer_arrays(self, index):
        """(index's parts, library arrays for lists and NumPy arrays; whether one is an
        integer array)."""
        parts = index if isinstance(index, tuple) else (index,)
        integers = any(isinstance(p, (list, np.ndarray)) or (
            isinstance(p, self.ndarray) and not self.xp.isdtype(p.dtype, "bool"))
            for p in parts)
        if integers:
            parts = tuple(self.xp.asarray(np.asarray(p).tolist(), dtype=self.xp.int64)
                          if isinstance(p, (list, np.ndarray)) else p for p in parts)
        return parts, integers

    def setitem(self, out, index, value):
        """`out[index] = value` as NumPy assigns, in place: the library's own assignment
        where the standard has it (integers, slices, a boolean mask) or the library takes
        the index; otherwise the new values are chosen by comparing each flat place with
        the places written (one-hot, the last write to a place winning, as NumPy's), then
        written with `out[...] =`."""
        xp = self.xp
        parts, integers = self._integer_arrays(index)
        if not integers:
            out[index] = value
            return
        try:        # (CuPy's arrays take integer arrays)
            out[parts if isinstance(index, tuple) else parts[0]] = value
            return
        except (IndexError, TypeError):
            pass
        shape = tuple(out.shape)
        n = math.prod(shape)
        places = self.getitem(xp.reshape(xp.arange(n), shape),
                              parts if isinstance(index, tuple) else parts[0])
        flat = xp.reshape(places, (-1,))
        m = flat.shape[0]
        if m == 0:
            return
        value = value if isinstance(value, self.ndarray) else xp.asarray(value)
        values = xp.reshape(xp.broadcast_to(xp.astype(value, out.dtype),
                                            tuple(places.shape)), (-1,))
        hit = xp.reshape(xp.arange(n), (n, 1)) == xp.reshape(flat, (1, m))
        last = xp.max(xp.where(hit, xp.reshape(xp.arange(m), (1, m)), -1), axis=1)
        new = xp.take(values, xp.clip(last, 0, m - 1))
        out[...] = xp.reshape(xp.where(last >= 0, new, xp.reshape(out, (-1,))), shape)

    def may_share_memory(self, a, b):
        return a is b

    def shares_memory(self, a, b):
        return a is b


class _Linalg:
    """numpy.linalg's names in the standard's linalg extension: its functions, and eigh and
    eigvalsh with NumPy's UPLO (the standard's read a symmetric matrix whole: they are
    given the symmetric matrix the triangle UPLO names spans)."""

    def __init__(self, names):
        self.names = names
        self.linalg = names.xp.linalg

    def __repr__(self):
        return f"<numpy.linalg's names for {self.names.library}>"

    def __getattr__(self, name):
        if name.startswith("_") or not hasattr(self.linalg, name):
            raise self.names.missing(f"linalg.{name}")
        return getattr(self.linalg, name)

    def _spanned(self, a, UPLO):
        xp = self.names.xp
        if UPLO.upper() not in ("L", "U"):
            raise ValueError(f"UPLO must be 'L' or 'U', not {UPLO!r}")
        part = xp.tril(a) if UPLO.upper() == "L" else xp.triu(a)
        return part + self.names.swapaxes(part, -1, -2) - xp.tril(xp.triu(part))

    def eigh(self, a, UPLO="L"):
        return self.linalg.eigh(self._spanned(a, UPLO))

    def eigvalsh(self, a, UPLO="L"):
        return self.linalg.eigvalsh(self._spanned(a, UPLO))


def _axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


class _NoScalarType:
    """What `np.generic` is for arrays of other libraries: a type nothing is."""


_NAMES: dict = {}
_HELPERS: dict = {}


def numpy_names(xp) -> NumPyNames:
    """The (one) NumPyNames of the namespace `xp`."""
    if id(xp) not in _NAMES:
        _NAMES[id(xp)] = (xp, NumPyNames(xp))
    return _NAMES[id(xp)][1]


def standard_helper(helper) -> bool:
    """Whether a runtime helper may run bound to NumPyNames: any but those of
    runtime/scipy/ (they compute with SciPy, which needs NumPy), except the ones their
    module names in STANDARD (written with NumPy's functions alone)."""
    module = sys.modules.get(getattr(helper, "__module__", None) or "")
    package = __name__.rpartition(".")[0]
    if module is None or not module.__name__.startswith(package + ".scipy"):
        return True
    return helper.__name__ in getattr(module, "STANDARD", ())


def helpers_for(xp) -> dict:
    """{helper: the same helper with `np` bound to NumPyNames(xp)}, for every function of
    the runtime modules generated code may call (SciPy's aside, standard_helper says
    which: they need NumPy)."""
    if id(xp) not in _HELPERS:
        _HELPERS[id(xp)] = (xp, _rebound(numpy_names(xp)))
    return _HELPERS[id(xp)][1]


def bound_helper(xp, helper):
    """`helper` bound to NumPyNames(xp), the table made again for a helper of a runtime
    module imported after it (runtime/scipy/'s, once SciPy's rules load); a function
    that is not a helper as it is."""
    found = helpers_for(xp).get(helper)
    if found is None and _is_runtime_function(helper) and standard_helper(helper):
        _HELPERS.pop(id(xp), None)
        found = helpers_for(xp).get(helper)
    return helper if found is None else found


def _is_runtime_function(value) -> bool:
    """Whether `value` is a function of a runtime module _rebound binds (this one aside)."""
    package = __name__.rpartition(".")[0]
    module = str(getattr(value, "__module__", ""))
    return isinstance(value, types.FunctionType) and module.startswith(package + ".") and \
        module != __name__


def _rebound(names: NumPyNames) -> dict:
    package = __name__.rpartition(".")[0]
    modules = [m for n, m in sorted(sys.modules.items())
               if n.startswith(package + ".") and n != __name__]
    made, spaces = {}, []
    for module in modules:
        space = dict(vars(module), np=names)
        if module.__name__.startswith(package + ".scipy"):
            _scipy_spelled(space, names)
        spaces.append(space)
        for value in vars(module).values():
            if isinstance(value, types.FunctionType) and value.__module__ == module.__name__ \
                    and standard_helper(value):
                copy = types.FunctionType(value.__code__, space, value.__name__,
                                          value.__defaults__, value.__closure__)
                copy.__kwdefaults__ = value.__kwdefaults__
                copy.__doc__ = value.__doc__
                made[value] = copy
    for space in spaces:        # a helper calls the other helpers bound the same way
        for key, value in space.items():
            if isinstance(value, types.FunctionType) and value in made:
                space[key] = made[value]
    return made


def _scipy_spelled(space: dict, names: NumPyNames):
    """In a helper module's namespace, `scipy` as SciPyNames (scipy.linalg.solve:
    SciPyLinalg's) and the scipy.special functions Special spells (digamma) as its."""
    special = sys.modules.get("scipy.special")
    for key, value in list(space.items()):
        if key == "scipy" and isinstance(value, types.ModuleType):
            space[key] = names.scipy
        elif special is not None and key in vars(Special) and not key.startswith("_") and \
                getattr(special, key, None) is value:
            space[key] = getattr(names.special, key)


class _Namespace:
    """What `xp` is in generated code until it is bound to the arguments' namespace."""

    def __repr__(self):
        return "<the array namespace of the arguments>"


XP = _Namespace()


def bound_extra(extra: dict, xp) -> dict:
    """The objects a gradient generated with `xp.` refers to (Compiled.extra), for
    arguments of the namespace `xp`: NumPyNames(xp) for XP, helpers bound to it."""
    names = numpy_names(xp)
    return {k: names if v is XP else bound_helper(xp, v) if isinstance(v, types.FunctionType)
            else v for k, v in extra.items()}


def check_uses(uses, xp, where: str):
    """Refuse, before it runs, a gradient whose NumPy names (('linalg.norm', line), ...)
    the namespace `xp` has no counterpart of."""
    names = numpy_names(xp)
    for chain, line in uses:
        found = names
        for i, part in enumerate(chain.split(".")):
            try:
                found = getattr(found, part)
            except (AttributeError, SGCompilerError):
                at = f" (for line {line})" if line else ""
                what = f"scipy.{chain} (SciPy)" if chain.startswith("special.") \
                    else f"numpy.{chain}"
                raise SGCompilerError(
                    f"{where}: the gradient calls {what}{at}, which has no "
                    f"counterpart in the array API standard as {names.library} offers it, "
                    f"so it cannot run on {names.library} arrays; pass NumPy arrays "
                    "(np.asarray(...)) or write the function with what the standard "
                    "offers") from None


def like_array(g, x):
    """The gradient `g` (an array of x's library, or a number: a zero) as an array of the
    shape, dtype and device of `x`, an array of another library: a new array unless `g`
    is already exactly that."""
    xp = namespace_of([x])
    if isinstance(g, np.ndarray):
        raise SGCompilerError(
            f"the gradient for a {library_name(xp)} array came back as a NumPy array: the "
            "function calls something that computes with NumPy (a function the compiler "
            "does not see, or np.asarray); compute with the arguments' namespace")
    if is_foreign(g) and tuple(g.shape) == tuple(x.shape) and g.dtype == x.dtype:
        return g
    if is_foreign(g):
        g = g if g.dtype == x.dtype else xp.astype(g, x.dtype)
    else:
        g = xp.asarray(g, dtype=x.dtype, device=x.device)
    return xp.asarray(xp.broadcast_to(g, tuple(x.shape)), copy=True)


# the namespace of the gradient for arrays of another library that is running (set by
# failing_clearly's wrapper): what the pieces of user functions it calls compute with
_RUNNING = contextvars.ContextVar("sgcompiler_namespace", default=None)


class _Current:
    """`xp` in a piece of a user function: NumPyNames of the running gradient's namespace."""

    def __getattr__(self, name):
        xp = _RUNNING.get()
        if xp is None:
            raise SGCompilerError("code generated for arrays of another library ran outside "
                                  "the gradient that calls it")
        return getattr(numpy_names(xp), name)

    def __repr__(self):
        return "<the array namespace of the running gradient>"


CURRENT = _Current()


def _current_helper(helper):
    def run(*args, **kwargs):
        return bound_helper(_RUNNING.get(), helper)(*args, **kwargs)
    run.__name__ = run.__qualname__ = helper.__name__
    run.__module__ = helper.__module__
    return run


def current_extra(extra: dict) -> dict:
    """The objects a piece generated with `xp.` refers to: CURRENT for XP, and each
    runtime helper run bound to the running gradient's namespace."""
    return {k: CURRENT if v is XP else _current_helper(v) if _is_runtime_function(v) and
            standard_helper(v) else v for k, v in extra.items()}


def failing_clearly(function, xp, fname: str):
    """`function` (a gradient bound to `xp`), raising SGCompilerError, with the error
    chained, when it fails: most often a rule or helper needs what the standard does not
    offer (an operation on bool arrays, a NumPy-only keyword)."""
    library = library_name(xp)

    def run(*args, **kwargs):
        token = _RUNNING.set(xp)
        try:
            return function(*args, **kwargs)
        except SGCompilerError:
            raise
        except Exception as exc:
            raise SGCompilerError(
                f"{fname}: the gradient failed on {library} arrays ({type(exc).__name__}: "
                f"{exc}): the function, or a derivative rule it needs, uses what the array "
                f"API standard does not offer for {library}; pass NumPy arrays "
                "(np.asarray(...)) for it") from exc
        finally:
            _RUNNING.reset(token)
    run.__name__, run.__qualname__ = function.__name__, function.__qualname__
    run.__wrapped__ = function
    return run
