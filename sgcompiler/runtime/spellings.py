"""More of NumPy's (and SciPy's) functions spelled with the array API standard alone, for
`runtime.namespace.NumPyNames` (a base class of it): shape functions (atleast_*d, fliplr,
flipud, rot90, rollaxis, append, delete, compress, extract), sums and choices (trapezoid,
polyval, select, bincount, flatnonzero), 1-D convolution and correlation, np.gradient of
numbers or coordinates as spacings, the scipy.special functions that are elementary or
series of them (`xp.special.xlogy`, `xp.special.gammaln`: backend/namespace.py spells
them so), the scipy.stats distributions whose functions are (`xp.stats.norm.logpdf`; the
normal cdf through erfc, from a series and a continued fraction), and scipy.linalg's and
scipy.signal's functions the standard's operations spell (`xp.scipy.linalg.solve`;
`SciPyNames` is what the helpers of runtime/scipy/ see as `scipy`). Each computes what
NumPy computes, in the same order of operations where NumPy's is elementwise; what the
standard cannot express is refused by name (`self.missing`).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np


class MoreSpellings:
    """NumPy's names the standard spells with others (mixed into NumPyNames, which gives
    `xp`, `ndarray`, `asarray` and `missing`)."""

    # --- shapes ------------------------------------------------------------------------
    def _atleast(self, arrays, shape_of):
        made = [self.asarray(a) if not isinstance(a, self.ndarray) else a for a in arrays]
        made = [self.xp.reshape(a, shape_of(tuple(a.shape))) for a in made]
        return made[0] if len(made) == 1 else list(made)

    def atleast_1d(self, *arys):
        return self._atleast(arys, lambda s: s if len(s) >= 1 else (1,))

    def atleast_2d(self, *arys):
        return self._atleast(arys, lambda s: s if len(s) >= 2 else ((1, 1) if not s
                                                                    else (1,) + s))

    def atleast_3d(self, *arys):
        def shape(s):
            return s if len(s) >= 3 else {0: (1, 1, 1), 1: (1,) + s + (1,)}.get(
                len(s), s + (1,))
        return self._atleast(arys, shape)

    def fliplr(self, m):
        if m.ndim < 2:
            raise ValueError("Input must be >= 2-d.")
        return self.xp.flip(m, axis=1)

    def flipud(self, m):
        if m.ndim < 1:
            raise ValueError("Input must be >= 1-d.")
        return self.xp.flip(m, axis=0)

    def rot90(self, m, k=1, axes=(0, 1)):
        xp = self.xp
        a, b = (int(v) % m.ndim for v in axes)
        if len(axes) != 2 or a == b:
            raise ValueError("len(axes) must be 2 and the axes must differ")
        k %= 4
        if k == 0:
            return m
        if k == 2:
            return xp.flip(xp.flip(m, axis=a), axis=b)
        order = list(range(m.ndim))
        order[a], order[b] = order[b], order[a]
        if k == 1:
            return xp.permute_dims(xp.flip(m, axis=b), tuple(order))
        return xp.flip(xp.permute_dims(m, tuple(order)), axis=b)

    def rollaxis(self, a, axis, start=0):
        n = a.ndim
        axis %= n
        start = start + n if start < 0 else start
        if not 0 <= start <= n:
            raise ValueError(f"start={start} is out of bounds for an array of {n} axes")
        start = start - 1 if axis < start else start
        if axis == start:
            return a
        order = [i for i in range(n) if i != axis]
        order.insert(start, axis)
        return self.xp.permute_dims(a, tuple(order))

    def append(self, arr, values, axis=None):
        xp = self.xp
        arr, values = (v if isinstance(v, self.ndarray) else self.asarray(v)
                       for v in (arr, values))
        if axis is None:
            arr, values, axis = xp.reshape(arr, (-1,)), xp.reshape(values, (-1,)), 0
        return xp.concat([arr, values], axis=axis)

    def _indices(self, picks):
        """Integer positions (a NumPy array, a list, an int) as an array of the library."""
        if isinstance(picks, self.ndarray):
            return picks
        return self.xp.asarray(np.asarray(picks, dtype=np.int64).reshape(-1).tolist(),
                               dtype=self.xp.int64)

    def _true_at(self, condition):
        """Where a condition (a NumPy or library array, a list) is true, flat."""
        if isinstance(condition, self.ndarray):
            return self.xp.nonzero(self.xp.reshape(condition, (-1,)))[0]
        return self._indices(np.flatnonzero(np.asarray(condition)))

    def delete(self, arr, obj, axis=None):
        if isinstance(obj, self.ndarray):
            raise self.missing("delete(arr, obj) at positions held in an array")
        if axis is None:
            arr, axis = self.xp.reshape(arr, (-1,)), 0
        kept = np.delete(np.arange(arr.shape[axis]), obj)
        return self.xp.take(arr, self._indices(kept), axis=axis)

    def compress(self, condition, a, axis=None):
        if axis is None:
            a, axis = self.xp.reshape(a, (-1,)), 0
        at = self._true_at(condition)
        if at.shape[0] and int(self.xp.max(at)) >= a.shape[axis]:
            raise IndexError("condition is longer than the axis it picks from")
        return self.xp.take(a, at, axis=axis)

    def extract(self, condition, arr):
        return self.xp.take(self.xp.reshape(arr, (-1,)), self._true_at(condition), axis=0)

    def flatnonzero(self, a):
        return self._true_at(a)

    def real_if_close(self, a, tol=100):
        """a's real part where a is complex with imaginary parts within tol machine
        epsilons of 0 (tol > 1) or within tol (tol <= 1), else a."""
        xp = self.xp
        a = a if isinstance(a, self.ndarray) else self.asarray(a)
        if not xp.isdtype(a.dtype, "complex floating"):
            return a
        if tol > 1:
            tol = tol * xp.finfo(xp.real(a).dtype).eps
        return xp.real(a) if bool(xp.all(xp.abs(xp.imag(a)) < tol)) else a

    def ascontiguousarray(self, a, dtype=None):
        return self.asarray(a, dtype=dtype)

    def asfortranarray(self, a, dtype=None):
        return self.asarray(a, dtype=dtype)

    def broadcast_to(self, x, shape):
        """np.broadcast_to, of a Python number too (a zero adjoint)."""
        x = x if isinstance(x, self.ndarray) else self.asarray(x)
        return self.xp.broadcast_to(x, tuple(shape))

    def times_mask(self, a, mask):
        """`a * mask` of a boolean mask (the standard multiplies numbers only): the mask
        as numbers of the product's dtype, as NumPy promotes it."""
        xp = self.xp
        if not isinstance(mask, self.ndarray) or mask.dtype != xp.bool:
            return a * mask
        if isinstance(a, self.ndarray):
            dtype = a.dtype if a.dtype != xp.bool else xp.bool
        else:
            dtype = xp.float64 if isinstance(a, float) else \
                xp.complex128 if isinstance(a, complex) else xp.int64
        if dtype == xp.bool:
            return a & mask
        return a * xp.astype(mask, dtype)

    # --- sums and choices --------------------------------------------------------------
    def trapezoid(self, y, x=None, dx=1.0, axis=-1):
        xp = self.xp
        axis %= y.ndim
        before = (slice(None),) * axis
        if x is None:
            d = dx
        else:
            x = x if isinstance(x, self.ndarray) else self.asarray(x)
            d = x[1:] - x[:-1] if x.ndim == 1 else self.diff(x, axis=axis)
            if x.ndim == 1:
                d = xp.reshape(d, (-1,) + (1,) * (y.ndim - 1 - axis))
        return xp.sum(d * (y[before + (slice(1, None), ...)] + y[before + (slice(None, -1), ...)])
                      / 2.0, axis=axis)

    trapz = trapezoid

    def polyval(self, p, x):
        x = x if isinstance(x, self.ndarray) else self.asarray(x)
        y = self.xp.zeros_like(x)
        for k in range(p.shape[0] if isinstance(p, self.ndarray) else len(p)):
            y = y * x + p[k]
        return y

    def select(self, condlist, choicelist, default=0):
        xp = self.xp
        if len(condlist) != len(choicelist):
            raise ValueError("list of cases must be same length as list of conditions")
        conditions = [c if isinstance(c, self.ndarray) else xp.asarray(
            np.asarray(c, dtype=bool).tolist(), dtype=xp.bool) for c in condlist]
        choices = [c if isinstance(c, self.ndarray) else self.asarray(c) for c in choicelist]
        dtype = self.result_type(*choices, default)
        result = default if isinstance(default, self.ndarray) else xp.asarray(
            default, dtype=dtype)
        result = xp.astype(result, dtype) if result.dtype != dtype else result
        for condition, choice in zip(reversed(conditions), reversed(choices)):
            result = xp.where(condition, xp.astype(choice, dtype), result)
        shape = np.broadcast_shapes(*(tuple(v.shape) for v in conditions + choices),
                                    tuple(result.shape))
        return xp.broadcast_to(result, shape)

    def bincount(self, x, weights=None, minlength=0):
        xp = self.xp
        x = self._indices(x)
        if x.ndim != 1:
            raise ValueError("object too deep for desired array")
        n = max(int(xp.max(x)) + 1 if x.shape[0] else 0, minlength)
        hit = xp.reshape(x, (-1, 1)) == xp.reshape(xp.arange(n, dtype=x.dtype), (1, -1))
        if weights is None:
            return xp.sum(xp.astype(hit, xp.int64), axis=0)
        weights = weights if isinstance(weights, self.ndarray) else self.asarray(weights)
        weights = xp.astype(weights, xp.float64) if not xp.isdtype(
            weights.dtype, "complex floating") else weights
        return xp.sum(xp.where(hit, xp.reshape(weights, (-1, 1)), 0.0), axis=0)

    def i0(self, x):
        """The modified Bessel function I0 from its integral (1/2 pi) int exp(x cos t) dt by
        the trapezoid rule, exact to rounding for the points taken (as runtime.bessel_i1)."""
        xp = self.xp
        x = x if isinstance(x, self.ndarray) else self.asarray(x)
        x = x if xp.isdtype(x.dtype, "real floating") else xp.astype(x, xp.float64)
        biggest = float(xp.max(xp.abs(x))) if math.prod(x.shape) else 0.0
        n = 32 + int(math.sqrt(80.0 * biggest))
        total = xp.zeros_like(x)
        for k in range(n):
            total = total + xp.exp(x * math.cos(k * (2.0 * math.pi / n)))
        return total / n

    # --- filters -----------------------------------------------------------------------
    def convolve(self, a, v, mode="full"):
        xp = self.xp
        a, v = (x if isinstance(x, self.ndarray) else self.asarray(x) for x in (a, v))
        if a.ndim != 1 or v.ndim != 1 or not a.shape[0] or not v.shape[0]:
            raise ValueError("convolve takes two non-empty 1-D arrays")
        if v.shape[0] > a.shape[0]:
            a, v = v, a
        n, m = a.shape[0], v.shape[0]
        dtype = self.result_type(a, v)
        a, v = xp.astype(a, dtype), xp.astype(v, dtype)
        zeros = xp.zeros((m - 1,), dtype=dtype)
        padded = xp.concat([zeros, a, zeros])
        full = None
        for i in range(m):
            term = v[i] * padded[m - 1 - i:m - 1 - i + n + m - 1]
            full = term if full is None else full + term
        if mode == "full":
            return full
        if mode == "same":
            return full[(m - 1) // 2:(m - 1) // 2 + n]
        if mode == "valid":
            return full[m - 1:n]
        raise ValueError(f"mode must be 'full', 'same' or 'valid', not {mode!r}")

    def correlate(self, a, v, mode="valid"):
        a, v = (x if isinstance(x, self.ndarray) else self.asarray(x) for x in (a, v))
        if self.xp.isdtype(self.result_type(a, v), "complex floating"):
            raise self.missing("correlate of complex arrays")
        if mode == "same" and v.shape[0] > a.shape[0]:
            raise self.missing("correlate(a, v, 'same') with v longer than a")
        reversed_v = self.xp.flip(v, axis=0)
        return self.convolve(a, reversed_v, mode)

    def gradient(self, f, *varargs, axis=None, edge_order=1):
        """np.gradient with numbers or 1-D coordinates as the spacings (one for every
        axis, or one for each axis)."""
        xp = self.xp
        axes = tuple(range(f.ndim)) if axis is None else \
            tuple(a % f.ndim for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
        if len(varargs) > 1 and len(varargs) != len(axes):
            raise TypeError("invalid number of arguments")
        spacing = list(varargs) * len(axes) if len(varargs) == 1 else \
            list(varargs) or [1.0] * len(axes)
        spacing = [self._spacing(h, f.shape[ax]) for h, ax in zip(spacing, axes)]
        if edge_order not in (1, 2):
            raise ValueError("'edge_order' greater than 2 not supported")
        f = f if xp.isdtype(f.dtype, ("real floating", "complex floating")) else \
            xp.astype(f, xp.float64)
        out = [self._gradient_along(f, ax, h, edge_order) for ax, h in zip(axes, spacing)]
        return out[0] if len(out) == 1 else out

    def _spacing(self, h, n):
        """A spacing as np.gradient reads it: a number, or coordinates, whose differences
        it takes as one number when they are all equal."""
        if isinstance(h, (int, float)) or (isinstance(h, self.ndarray) and h.ndim == 0):
            return float(h)
        xp = self.xp
        x = h if isinstance(h, self.ndarray) else self.asarray(h)
        if x.ndim != 1:
            raise ValueError("distances must be either scalars or 1d")
        if x.shape[0] != n:
            raise ValueError("when 1d, distances must match the length of the "
                             "corresponding dimension")
        x = x if xp.isdtype(x.dtype, "real floating") else xp.astype(x, xp.float64)
        dx = x[1:] - x[:-1]
        return float(dx[0]) if bool(xp.all(dx == dx[0])) else dx

    def _gradient_along(self, f, axis, h, edge_order):
        xp = self.xp
        n = f.shape[axis]
        if n < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, "
                             "at least (edge_order + 1) elements are required.")

        def at(start, stop=None):
            index = slice(start, stop) if stop is not None or start is None else \
                slice(start, start + 1 if start != -1 else None)
            return f[(slice(None),) * axis + (index, ...)]
        if not isinstance(h, float):
            return self._nonuniform_along(f, axis, h, edge_order, at)
        inner = (at(2, n) - at(0, n - 2)) / (2.0 * h)
        if edge_order == 1:
            first = (at(1) - at(0)) / h
            last = (at(-1) - at(-2)) / h
        else:
            first = -1.5 / h * at(0) + 2.0 / h * at(1) + -0.5 / h * at(2)
            last = 0.5 / h * at(-3) + -2.0 / h * at(-2) + 1.5 / h * at(-1)
        return xp.concat([first, inner, last], axis=axis)

    def _nonuniform_along(self, f, axis, dx, edge_order, at):
        """np.gradient along `axis` at coordinates of differences dx: the second-order
        differences of the three points around each inner one, and at the ends the
        one-sided ones of edge_order."""
        xp = self.xp
        n = f.shape[axis]

        def along(v):       # (coefficients along `axis`, broadcast over the others)
            return xp.reshape(v, (-1,) + (1,) * (f.ndim - 1 - axis))
        dx1, dx2 = dx[:-1], dx[1:]
        a = along(-dx2 / (dx1 * (dx1 + dx2)))
        b = along((dx2 - dx1) / (dx1 * dx2))
        c = along(dx1 / (dx2 * (dx1 + dx2)))
        inner = a * at(0, n - 2) + b * at(1, n - 1) + c * at(2, n)
        if edge_order == 1:
            first = (at(1) - at(0)) / dx[0]
            last = (at(-1) - at(-2)) / dx[-1]
        else:
            d1, d2 = dx[0], dx[1]
            first = -(2.0 * d1 + d2) / (d1 * (d1 + d2)) * at(0) + \
                (d1 + d2) / (d1 * d2) * at(1) - d1 / (d2 * (d1 + d2)) * at(2)
            d1, d2 = dx[-2], dx[-1]
            last = d2 / (d1 * (d1 + d2)) * at(-3) - (d2 + d1) / (d1 * d2) * at(-2) + \
                (2.0 * d2 + d1) / (d2 * (d1 + d2)) * at(-1)
        return xp.concat([first, inner, last], axis=axis)

    # --- scipy.special and scipy.stats ---------------------------------------------------
    @property
    def special(self):
        found = self.__dict__.get("_special")
        if found is None:
            found = self.__dict__["_special"] = Special(self)
        return found

    @property
    def stats(self):
        found = self.__dict__.get("_stats")
        if found is None:
            found = self.__dict__["_stats"] = Stats(self)
        return found

    @property
    def scipy_linalg(self):
        found = self.__dict__.get("_scipy_linalg")
        if found is None:
            if not hasattr(self.xp, "linalg"):
                raise self.missing("linalg")
            found = self.__dict__["_scipy_linalg"] = SciPyLinalg(self)
        return found

    @property
    def scipy(self):
        found = self.__dict__.get("_scipy")
        if found is None:
            found = self.__dict__["_scipy"] = SciPyNames(self)
        return found


# --- the gamma function's logarithm, digamma and Hurwitz's zeta, without lgamma (which the
# standard lacks): the argument moved past _SHIFT by the recurrences (log Gamma(x + 1) =
# log Gamma(x) + log x, psi(x + 1) = psi(x) + 1 / x, zeta(s, q) = q^-s + zeta(s, q + 1)),
# then Stirling's series and Euler-Maclaurin's, with Bernoulli's numbers B2 ... B16; below
# 1/2 the reflection formulas. About 1e-15 relative, 3e-14 absolute near the zeros of log
# Gamma (at 1 and 2).
_SHIFT = 16.0
_BERNOULLI = (Fraction(1, 6), Fraction(-1, 30), Fraction(1, 42), Fraction(-1, 30),
              Fraction(5, 66), Fraction(-691, 2730), Fraction(7, 6), Fraction(-3617, 510))


def _shifted(xp, x, term):
    """(z, the sum of term(x), term(x + 1), ... below _SHIFT): z = x moved past _SHIFT, for
    x >= 1/2 (NaN and infinities as they are)."""
    z, total = x, xp.zeros_like(x)
    for _ in range(int(_SHIFT)):
        low = z < _SHIFT
        total = total + xp.where(low, term(xp.where(low, z, 1.0)), 0.0)
        z = xp.where(low, z + 1.0, z)
    return z, total


def _sin_cos_pi(xp, x):
    """sin(pi x) and cos(pi x), x reduced to [-1, 1] exactly first."""
    r = x - 2.0 * xp.round(x / 2.0)
    return xp.sin(math.pi * r), xp.cos(math.pi * r)


def _log_gamma(xp, x):
    """log |Gamma(x)| (SciPy's gammaln): inf at the poles 0, -1, -2, ..."""
    reflect = x < 0.5
    y = xp.where(reflect, 1.0 - x, x)
    z, logs = _shifted(xp, y, xp.log)
    safe = xp.where(xp.isinf(z) | xp.isnan(z), _SHIFT, z)
    series = (safe - 0.5) * xp.log(safe) - safe + 0.5 * math.log(2.0 * math.pi)
    power, square = 1.0 / safe, 1.0 / (safe * safe)
    for k, b in enumerate(_BERNOULLI, start=1):
        series = series + float(b / (2 * k * (2 * k - 1))) * power
        power = power * square
    value = xp.where(xp.isinf(z), z, xp.where(xp.isnan(z), z, series - logs))
    sin, _ = _sin_cos_pi(xp, x)
    pole = (x <= 0) & (x == xp.floor(x))
    sin = xp.where(pole | ~reflect, 1.0, sin)
    reflected = math.log(math.pi) - xp.log(xp.abs(sin)) - value
    value = xp.where(reflect, reflected, value)
    value = xp.where(pole, math.inf, value)
    return xp.where(xp.isinf(x) & (x < 0), -math.inf, value)     # (SciPy's at -inf)


def _digamma(xp, x):
    """psi(x) = d log Gamma(x) / dx (SciPy's digamma): -inf at +0, inf at -0, NaN at the
    negative integers."""
    reflect = x < 0.5
    y = xp.where(reflect, 1.0 - x, x)
    z, inverses = _shifted(xp, y, lambda v: 1.0 / v)
    safe = xp.where(xp.isinf(z) | xp.isnan(z), _SHIFT, z)
    series = xp.log(safe) - 0.5 / safe
    square = 1.0 / (safe * safe)
    power = square
    for k, b in enumerate(_BERNOULLI, start=1):
        series = series - float(b / (2 * k)) * power
        power = power * square
    value = xp.where(xp.isinf(z) | xp.isnan(z), z, series - inverses)
    sin, cos = _sin_cos_pi(xp, x)
    pole = (x <= 0) & (x == xp.floor(x))
    reflected = value - math.pi * cos / xp.where(pole | ~reflect, 1.0, sin)
    value = xp.where(reflect, reflected, value)
    zero = xp.where(xp.signbit(x), xp.full_like(x, math.inf), -math.inf)
    return xp.where(x == 0, zero, xp.where(pole, math.nan, value))


def _hurwitz_zeta(xp, s, q):
    """zeta(s, q) = sum over k >= 0 of (q + k)^-s, for s > 1 and q > 0."""
    z, head = _shifted(xp, q, lambda v: v ** (-s))
    safe = xp.where(xp.isinf(z) | xp.isnan(z), _SHIFT, z)
    tail = safe ** (1.0 - s) / (s - 1.0) + 0.5 * safe ** (-s)
    term, factorial = s * safe ** (-s - 1.0), 2.0    # s (s+1) ... (s+2k-2) z^(1-s-2k), (2k)!
    for k, b in enumerate(_BERNOULLI, start=1):
        tail = tail + float(b) / factorial * term
        term = term * (s + 2 * k - 1) * (s + 2 * k) / (safe * safe)
        factorial *= (2 * k + 1) * (2 * k + 2)
    return xp.where(xp.isinf(q), 0.0, xp.where(xp.isnan(z), z, head + tail))


def _gamma_sign(xp, x):
    """The sign of Gamma(x) away from its poles: negative on (-1, 0), (-3, -2), ..."""
    odd = xp.remainder(xp.floor(x), 2.0) == 1.0
    return xp.where((x < 0) & odd, xp.full_like(x, -1.0), 1.0)


class Special:
    """scipy.special's elementary functions in the standard's operations (what SciPy
    computes for real arguments: the value at x == 0 of x log y is 0, entropies are inf
    outside their domain)."""

    def __init__(self, names):
        self.names = names
        self.xp = names.xp

    def __repr__(self):
        return f"<scipy.special's names for {self.names.library}>"

    def __getattr__(self, name):
        from ..errors import SGCompilerError
        raise SGCompilerError(
            f"scipy.special.{name} (SciPy) has no counterpart in the array API standard, so "
            f"it cannot run on {self.names.library} arrays; compute this gradient with NumPy "
            "arrays (np.asarray(...) of the arguments)")

    def _arrays(self, *values):
        """The values as arrays of one real floating dtype: their floating arrays', with
        float64 for integer or boolean arrays among them (as NumPy promotes them)."""
        xp = self.xp
        given = [v.dtype for v in values if isinstance(v, self.names.ndarray)]
        floats = [t for t in given if xp.isdtype(t, "real floating")]
        if len(floats) < len(given) or not floats:
            floats.append(xp.float64)
        dtype = xp.result_type(*floats)
        return [xp.astype(v, dtype) if isinstance(v, self.names.ndarray) else
                xp.asarray(v, dtype=dtype) for v in values]

    def xlogy(self, x, y):
        x, y = self._arrays(x, y)
        return self.xp.where(x == 0, self.xp.zeros_like(x), x * self.xp.log(y))

    def xlog1py(self, x, y):
        x, y = self._arrays(x, y)
        return self.xp.where(x == 0, self.xp.zeros_like(x), x * self.xp.log1p(y))

    def rel_entr(self, x, y):
        xp = self.xp
        x, y = self._arrays(x, y)
        inside = (x > 0) & (y > 0)
        safe = xp.where(inside, x / xp.where(inside, y, 1.0), 1.0)
        return xp.where(inside, x * xp.log(safe),
                        xp.where((x == 0) & (y >= 0), xp.zeros_like(x),
                                 xp.full_like(x, math.inf)))

    def kl_div(self, x, y):
        xp = self.xp
        x, y = self._arrays(x, y)
        inside = (x > 0) & (y > 0)
        safe = xp.where(inside, x / xp.where(inside, y, 1.0), 1.0)
        return xp.where(inside, x * xp.log(safe) - x + y,
                        xp.where((x == 0) & (y >= 0), y, xp.full_like(x, math.inf)))

    def huber(self, delta, r):
        xp = self.xp
        delta, r = self._arrays(delta, r)
        small = xp.abs(r) <= delta
        return xp.where(delta < 0, xp.full_like(r, math.inf),
                        xp.where(small, 0.5 * r * r, delta * (xp.abs(r) - 0.5 * delta)))

    def pseudo_huber(self, delta, r):
        xp = self.xp
        delta, r = self._arrays(delta, r)
        positive = delta > 0
        d = xp.where(positive, delta, 1.0)
        ratio = r / d
        value = d * d * (xp.sqrt(1.0 + ratio * ratio) - 1.0)
        return xp.where(delta < 0, xp.full_like(value, math.inf),
                        xp.where(positive, value, xp.zeros_like(value)))

    def gammaln(self, x):
        (x,) = self._arrays(x)
        return _log_gamma(self.xp, x)

    def gamma(self, x):
        xp = self.xp
        (x,) = self._arrays(x)
        value = _gamma_sign(xp, x) * xp.exp(_log_gamma(xp, x))
        pole = (x < 0) & (x == xp.floor(x))
        zero = xp.where(xp.signbit(x), xp.full_like(x, -math.inf), math.inf)
        return xp.where(x == 0, zero, xp.where(pole | (x == -math.inf), math.nan, value))

    def digamma(self, x):
        (x,) = self._arrays(x)
        return _digamma(self.xp, x)

    psi = digamma

    def betaln(self, a, b):
        a, b = self._arrays(a, b)
        xp = self.xp
        return _log_gamma(xp, a) + _log_gamma(xp, b) - _log_gamma(xp, a + b)

    def beta(self, a, b):
        xp = self.xp
        a, b = self._arrays(a, b)
        sign = _gamma_sign(xp, a) * _gamma_sign(xp, b) * _gamma_sign(xp, a + b)
        return sign * xp.exp(self.betaln(a, b))

    def zeta(self, x, q=None):
        """Hurwitz's zeta of x > 1 at q > 0 (Riemann's with q=None); refused elsewhere."""
        xp = self.xp
        x, q = self._arrays(x, 1.0 if q is None else q)
        if bool(xp.any(x <= 1.0)) or bool(xp.any(q <= 0.0)):
            raise self.names.missing("scipy.special.zeta(x, q) at x <= 1 or q <= 0")
        return _hurwitz_zeta(xp, x, q)

    def polygamma(self, n, x):
        """The n-th derivative of digamma: (-1)^(n+1) n! zeta(n + 1, x) for n >= 1."""
        xp = self.xp
        orders = np.asarray(n.__array__() if isinstance(n, self.names.ndarray) else n)
        if orders.dtype.kind not in "iuf" or np.any(orders != np.floor(orders)) or \
                np.any(orders < 0):
            raise ValueError("polygamma's order n must be a non-negative integer")
        if not orders.ndim and int(orders) == 0:
            return self.digamma(x)
        if np.any(orders == 0):
            raise self.names.missing("scipy.special.polygamma of orders 0 and more together")
        (x,) = self._arrays(x)
        order = xp.asarray(orders.astype(float).tolist(), dtype=x.dtype)
        factorial = xp.asarray(np.vectorize(math.factorial)(orders.astype(int)).astype(
            float).tolist(), dtype=x.dtype)
        sign = xp.where(xp.remainder(order, 2.0) == 1.0, xp.ones_like(order), -1.0)
        return sign * factorial * self.zeta(order + 1.0, x)

    def softmax(self, x, axis=None):
        xp = self.xp
        axis = tuple(axis) if isinstance(axis, list) else axis
        e = xp.exp(x - xp.max(x, axis=axis, keepdims=True))
        return e / xp.sum(e, axis=axis, keepdims=True)

    def log_softmax(self, x, axis=None):
        xp = self.xp
        axis = tuple(axis) if isinstance(axis, list) else axis
        shifted = x - xp.max(x, axis=axis, keepdims=True)
        return shifted - xp.log(xp.sum(xp.exp(shifted), axis=axis, keepdims=True))


class Stats:
    """scipy.stats distributions whose functions are elementary, in the standard's
    operations (`xp.stats.norm.logpdf(x, loc, scale)`): what SciPy computes for real
    arguments, NaN where scale (or a shape parameter) is not positive, the values outside
    the support SciPy gives (pdf 0, logpdf -inf, cdf 0, sf 1)."""

    def __init__(self, names):
        self.names = names
        for family in _FAMILIES:
            setattr(self, family, _FAMILIES[family](names))

    def __repr__(self):
        return f"<scipy.stats's names for {self.names.library}>"

    def __getattr__(self, name):
        from ..errors import SGCompilerError
        raise SGCompilerError(
            f"scipy.stats.{name} (SciPy) has no counterpart in the array API standard, so it "
            f"cannot run on {self.names.library} arrays; compute this gradient with NumPy "
            "arrays (np.asarray(...) of the arguments)")


class _Family:
    """One location-scale family: its standard density's formulas in z = (x - loc) / scale
    (`_logpdf(z)`, ..., each given z inside the support), wrapped as SciPy's functions of
    x, the shape parameters, loc and scale. `lower` is the support's lower end in z
    (-inf, or 0 where the support is [0, inf) or (0, inf))."""

    lower = -math.inf
    upper = None
    shapes = ()
    methods = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")

    def __init__(self, names):
        self.names = names
        self.xp = names.xp

    def __getattribute__(self, name):
        if name in _Family.methods and name not in type(self).methods:
            return type(self).__getattr__(self, name)       # (a method it leaves out)
        return object.__getattribute__(self, name)

    def __getattr__(self, name):
        from ..errors import SGCompilerError
        raise SGCompilerError(
            f"scipy.stats.{self.name}.{name} (SciPy) has no counterpart in the array API "
            f"standard, so it cannot run on {self.names.library} arrays; compute this "
            "gradient with NumPy arrays (np.asarray(...) of the arguments)")

    def _arguments(self, x, args, loc, scale):
        """z inside the support (an inside point where it is not), the shape parameters,
        scale, and where the arguments are valid, the point inside and NaN."""
        xp = self.xp
        shapes = list(args[:len(self.shapes)])
        if len(args) > len(self.shapes):
            loc, *rest = args[len(self.shapes):]
            scale = rest[0] if rest else scale
        values = Special._arrays(self, x, loc, scale, *shapes)
        x, loc, scale, *shapes = xp.broadcast_arrays(*values)
        valid = scale > 0
        for s in shapes:
            valid = valid & (s > 0)
        scale = xp.where(valid, scale, 1.0)
        shapes = [xp.where(valid, s, 1.0) for s in shapes]
        z = (x - loc) / scale
        nan = xp.isnan(z) | ~valid
        return z, shapes, scale, valid & ~nan, nan

    def _inside(self, z, closed):
        """Whether z is in the support, and z moved inside where it is not."""
        xp = self.xp
        if self.lower == -math.inf:
            return xp.ones_like(z, dtype=xp.bool), z
        inside = z >= self.lower if closed else z > self.lower
        if self.upper is not None:
            inside = inside & (z <= self.upper if closed else z < self.upper)
        return inside, xp.where(inside, z, 0.5 if self.upper is not None else 1.0)

    def _value(self, method, x, args, loc, scale):
        xp = self.xp
        z, shapes, scale, ok, nan = self._arguments(x, args, loc, scale)
        inside, zi = self._inside(xp.where(nan, 0.0, z), method in ("pdf", "logpdf"))
        value = getattr(self, "_" + method)(zi, *shapes)
        if method == "logpdf":
            value = value - xp.log(scale)
        elif method == "pdf":
            value = value / scale
        below = {"logpdf": -math.inf, "pdf": 0.0, "cdf": 0.0, "logcdf": -math.inf,
                 "sf": 1.0, "logsf": 0.0}[method]
        value = xp.where(inside, value, below)
        return xp.where(nan, math.nan, value)

    # SciPy's signatures: f(x, *shapes, loc=0, scale=1)
    def logpdf(self, x, *args, loc=0.0, scale=1.0):
        return self._value("logpdf", x, args, loc, scale)

    def pdf(self, x, *args, loc=0.0, scale=1.0):
        return self._value("pdf", x, args, loc, scale)

    def cdf(self, x, *args, loc=0.0, scale=1.0):
        return self._value("cdf", x, args, loc, scale)

    def logcdf(self, x, *args, loc=0.0, scale=1.0):
        return self._value("logcdf", x, args, loc, scale)

    def sf(self, x, *args, loc=0.0, scale=1.0):
        return self._value("sf", x, args, loc, scale)

    def logsf(self, x, *args, loc=0.0, scale=1.0):
        return self._value("logsf", x, args, loc, scale)

    # the standard density's formulas; a family without closed-form tails leaves them out
    def _pdf(self, z, *shapes):
        return self.xp.exp(self._logpdf(z, *shapes))


_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)

# erfc(w) of w >= 0 without erf (which the standard lacks), to about 1e-15 relative: below
# _SERIES_END, 1 - erf(w) from the series of positive terms
#     erf(w) = 2/sqrt(pi) exp(-w^2) sum_k (2 w^2)^k w / (1 3 5 ... (2k+1)),
# beyond it Laplace's continued fraction
#     erfc(w) exp(w^2) sqrt(pi) = 1 / (w + (1/2) / (w + 1 / (w + (3/2) / (w + ...)))),
# both in a fixed number of terms (what they need for 1e-15 there)
_SERIES_END, _SERIES_TERMS, _FRACTION_TERMS = 1.5, 30, 100


def _log_erfc(xp, w):
    """(erfc(w), log erfc(w)) of an array w >= 0, the log without underflow."""
    near = w < _SERIES_END
    v = xp.where(near, w, 0.0)
    term, total, twice = v, v, 2.0 * v * v
    for k in range(1, _SERIES_TERMS):
        term = term * twice / (2 * k + 1)
        total = total + term
    series = 1.0 - 2.0 / math.sqrt(math.pi) * xp.exp(-v * v) * total
    u = xp.where(near, _SERIES_END, w)
    fraction = u
    for k in range(_FRACTION_TERMS, 0, -1):
        fraction = u + (k / 2.0) / fraction
    log_tail = -(u * u) - xp.log(math.sqrt(math.pi) * fraction)
    return (xp.where(near, series, xp.exp(log_tail)),
            xp.where(near, xp.log(xp.where(near, series, 1.0)), log_tail))


def _ndtr(xp, z, log=False):
    """The standard normal cdf of z (or its log), as erfc(-z / sqrt(2)) / 2."""
    u = -z / math.sqrt(2.0)
    tail, log_tail = _log_erfc(xp, xp.abs(u))
    if not log:
        return xp.where(u >= 0, 0.5 * tail, 1.0 - 0.5 * tail)
    return xp.where(u >= 0, log_tail + math.log(0.5), xp.log1p(-0.5 * tail))


class _Norm(_Family):
    name = "norm"

    def _logpdf(self, z):
        return -(z * z) / 2.0 - _LOG_SQRT_2PI

    def _pdf(self, z):
        return self.xp.exp(-(z * z) / 2.0) / math.sqrt(2.0 * math.pi)

    def _cdf(self, z):
        return _ndtr(self.xp, z)

    def _logcdf(self, z):
        return _ndtr(self.xp, z, log=True)

    def _sf(self, z):
        return _ndtr(self.xp, -z)

    def _logsf(self, z):
        return _ndtr(self.xp, -z, log=True)


class _Logistic(_Family):
    name = "logistic"

    def _logpdf(self, z):
        y = -self.xp.abs(z)
        return y - 2.0 * self.xp.log1p(self.xp.exp(y))

    def _cdf(self, z):
        e = self.xp.exp(-self.xp.abs(z))     # expit, without overflow on either side
        return self.xp.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))

    def _sf(self, z):
        return self._cdf(-z)

    def _logcdf(self, z):
        return -self.xp.logaddexp(self.xp.zeros_like(z), -z)

    def _logsf(self, z):
        return self._logcdf(-z)


class _Laplace(_Family):
    name = "laplace"

    def _logpdf(self, z):
        return math.log(0.5) - self.xp.abs(z)

    def _pdf(self, z):
        return 0.5 * self.xp.exp(-self.xp.abs(z))

    def _cdf(self, z):
        half = 0.5 * self.xp.exp(-self.xp.abs(z))
        return self.xp.where(z > 0, 1.0 - half, half)

    def _sf(self, z):
        return self._cdf(-z)

    def _logcdf(self, z):
        xp = self.xp
        return xp.where(z > 0, xp.log1p(-0.5 * xp.exp(-xp.abs(z))), math.log(0.5) - xp.abs(z))

    def _logsf(self, z):
        return self._logcdf(-z)


class _Cauchy(_Family):
    name = "cauchy"

    def _logpdf(self, z):
        xp = self.xp
        a = xp.abs(z)
        big = a > 1.0       # log(1 + z^2) as 2 log|z| + log1p(1 / z^2), no overflow
        safe = xp.where(big, a, 1.0)
        return -math.log(math.pi) - xp.where(big, 2.0 * xp.log(safe) + xp.log1p(
            1.0 / (safe * safe)), xp.log1p(z * z))

    def _pdf(self, z):
        return 1.0 / math.pi / (1.0 + z * z)

    def _cdf(self, z):
        return self.xp.atan2(self.xp.ones_like(z), -z) / math.pi

    def _sf(self, z):
        return self.xp.atan2(self.xp.ones_like(z), z) / math.pi

    def _logcdf(self, z):
        return self.xp.log(self._cdf(z))

    def _logsf(self, z):
        return self.xp.log(self._sf(z))


class _Expon(_Family):
    name = "expon"
    lower = 0.0

    def _logpdf(self, z):
        return -z

    def _pdf(self, z):
        return self.xp.exp(-z)

    def _cdf(self, z):
        return -self.xp.expm1(-z)

    def _logcdf(self, z):
        xp = self.xp        # (log1p(-exp(-z)) where 1 - exp(-z) rounds to 1)
        far = z > math.log(2.0)
        return xp.where(far, xp.log1p(-xp.exp(-xp.where(far, z, 1.0))),
                        xp.log(-xp.expm1(-xp.where(far, 0.5, z))))

    def _sf(self, z):
        return self.xp.exp(-z)

    def _logsf(self, z):
        return -z


class _Lognorm(_Family):
    name = "lognorm"
    lower = 0.0
    shapes = ("s",)

    def _inside(self, z, closed):
        inside = z > 0.0        # (the density is 0 at 0 too)
        return inside, self.xp.where(inside, z, 1.0)

    def _logpdf(self, z, s):
        log_z = self.xp.log(z)
        u = log_z / s
        return -(u * u) / 2.0 - self.xp.log(s) - log_z - _LOG_SQRT_2PI

    def _cdf(self, z, s):
        return _ndtr(self.xp, self.xp.log(z) / s)

    def _logcdf(self, z, s):
        return _ndtr(self.xp, self.xp.log(z) / s, log=True)

    def _sf(self, z, s):
        return _ndtr(self.xp, -self.xp.log(z) / s)

    def _logsf(self, z, s):
        return _ndtr(self.xp, -self.xp.log(z) / s, log=True)


def _xlogy(xp, x, y):
    """x log y, 0 where x is 0 (the densities' powers at the ends of the support)."""
    return xp.where(x == 0, xp.zeros_like(y), x * xp.log(xp.where(x == 0, 1.0, y)))


class _T(_Family):
    name = "t"
    shapes = ("df",)
    methods = ("logpdf", "pdf")      # (its cdf is an incomplete beta function's)

    def _logpdf(self, z, df):
        xp = self.xp
        return (_log_gamma(xp, (df + 1.0) / 2.0) - _log_gamma(xp, df / 2.0)
                - 0.5 * xp.log(df * math.pi) - (df + 1.0) / 2.0 * xp.log1p(z * z / df))


class _Chi2(_Family):
    name = "chi2"
    lower = 0.0
    shapes = ("df",)
    methods = ("logpdf", "pdf")      # (its cdf is an incomplete gamma function's)

    def _logpdf(self, z, df):
        xp = self.xp
        return _xlogy(xp, df / 2.0 - 1.0, z) - z / 2.0 - _log_gamma(xp, df / 2.0) - \
            df / 2.0 * math.log(2.0)


class _Gamma(_Family):
    name = "gamma"
    lower = 0.0
    shapes = ("a",)
    methods = ("logpdf", "pdf")

    def _logpdf(self, z, a):
        return _xlogy(self.xp, a - 1.0, z) - z - _log_gamma(self.xp, a)


class _Beta(_Family):
    name = "beta"
    lower, upper = 0.0, 1.0
    shapes = ("a", "b")
    methods = ("logpdf", "pdf")

    def _logpdf(self, z, a, b):
        xp = self.xp
        log_beta = _log_gamma(xp, a) + _log_gamma(xp, b) - _log_gamma(xp, a + b)
        return _xlogy(xp, a - 1.0, z) + _xlogy(xp, b - 1.0, 1.0 - z) - log_beta


class _Poisson:
    """scipy.stats.poisson's pmf, logpmf, cdf, logcdf, sf and logsf: the cdf the sum of the
    pmf's terms up to floor(k), the sf 1 - cdf where the cdf is below 1/2, else the sum of
    the terms above floor(k) (so the tail keeps its digits), up to where they are below
    1e-30 of it (12 sqrt(mu) + 40 terms past max(k, mu)). A sum of more than _TERMS terms
    is refused."""
    name = "poisson"
    methods = ("pmf", "logpmf", "cdf", "logcdf", "sf", "logsf")
    _TERMS = 20000

    def __init__(self, names):
        self.names = names
        self.xp = names.xp

    __getattr__ = _Family.__getattr__

    def _arguments(self, k, mu, loc):
        xp = self.xp
        k, mu, loc = xp.broadcast_arrays(*Special._arrays(self, k, mu, loc))
        nan = xp.isnan(k) | xp.isnan(mu) | ~(mu >= 0)
        return k - loc, xp.where(nan, 1.0, mu), nan

    def _log_terms(self, j, mu):
        return _xlogy(self.xp, j, mu) - mu - _log_gamma(self.xp, j + 1.0)

    def logpmf(self, k, mu, loc=0):
        xp = self.xp
        k, mu, nan = self._arguments(k, mu, loc)
        inside = (k >= 0) & (k == xp.floor(k)) & ~xp.isinf(k)
        value = xp.where(inside, self._log_terms(xp.where(inside, k, 0.0), mu), -math.inf)
        at_inf = xp.where(mu < 1.0, -math.inf, xp.full_like(mu, math.nan))  # (SciPy's
        value = xp.where(k == math.inf, at_inf, value)      # inf log(mu) - inf there)
        return xp.where(nan, math.nan, value)

    def pmf(self, k, mu, loc=0):
        return self.xp.exp(self.logpmf(k, mu, loc))

    def _sum(self, mu, first, last, start, stop):
        """The sum of the pmf's terms j = first ... last of each element (first, last:
        arrays), the loop from start to stop."""
        xp = self.xp
        if stop - start > self._TERMS:
            raise self.names.missing(f"scipy.stats.poisson's cdf or sf summing more than "
                                     f"{self._TERMS} terms")
        total, log_mu = xp.zeros_like(mu), xp.log(mu)
        for j in range(start, stop + 1):        # (log Gamma(j + 1) of a Python int: math's)
            log_term = -mu if j == 0 else j * log_mu - mu - math.lgamma(j + 1.0)
            total = total + xp.where((first <= j) & (j <= last), xp.exp(log_term), 0.0)
        return total

    def _below(self, k, mu):
        """(P(K <= k), floor(k) with -1 for k below 0, infinite or NaN)."""
        xp = self.xp
        top = xp.floor(xp.where(xp.isfinite(k) & (k >= 0), k, -1.0))
        most = int(float(xp.max(top))) if math.prod(top.shape) else -1
        below = self._sum(mu, xp.zeros_like(top), top, 0, most)
        return xp.where(xp.isinf(k) & (k > 0), 1.0, below), top

    def _both(self, k, mu, loc):
        """(P(K <= k), P(K > k), whether the first is the sum, the points that are NaN):
        the smaller one summed, the other 1 minus it."""
        xp = self.xp
        k, mu, nan = self._arguments(k, mu, loc)
        below, top = self._below(k, mu)
        tail = (below >= 0.5) & ~nan & ~xp.isinf(k)
        if bool(xp.any(tail)):
            last = xp.floor(xp.maximum(top, mu) + 12.0 * xp.sqrt(mu) + 40.0)
            start = int(float(xp.min(xp.where(tail, top, math.inf)))) + 1
            stop = int(float(xp.max(xp.where(tail, last, -math.inf))))
            above = self._sum(mu, top + 1.0, last, start, stop)
        else:
            above = below
        return below, xp.where(tail, above, 1.0 - below), ~tail, nan

    def cdf(self, k, mu, loc=0):
        xp = self.xp
        below, above, summed, nan = self._both(k, mu, loc)
        return xp.where(nan, math.nan, xp.where(summed, below, 1.0 - above))

    def logcdf(self, k, mu, loc=0):
        xp = self.xp
        below, above, summed, nan = self._both(k, mu, loc)
        value = xp.where(summed, xp.log(below), xp.log1p(-above))
        return xp.where(nan, math.nan, value)

    def sf(self, k, mu, loc=0):
        xp = self.xp
        below, above, summed, nan = self._both(k, mu, loc)
        return xp.where(nan, math.nan, above)

    def logsf(self, k, mu, loc=0):
        xp = self.xp
        below, above, summed, nan = self._both(k, mu, loc)
        value = xp.where(summed, xp.log1p(-below), xp.log(above))
        return xp.where(nan, math.nan, value)


_FAMILIES = {f.name: f for f in (_Norm, _Logistic, _Laplace, _Cauchy, _Expon, _Lognorm, _T,
                                 _Chi2, _Gamma, _Beta, _Poisson)}


def spelled_stats(family: str, method: str) -> bool:
    """Whether scipy.stats.`family`.`method` is spelled here."""
    found = _FAMILIES.get(family)
    return found is not None and method in found.methods


class SciPyNames:
    """`scipy` for the helpers of runtime/scipy/ bound to NumPyNames (runtime/namespace.py
    binds their `scipy` to this): its special, stats and linalg spelled here, its other
    modules refused by name."""

    def __init__(self, names):
        self.names = names

    def __repr__(self):
        return f"<SciPy's names for {self.names.library}>"

    @property
    def special(self):
        return self.names.special

    @property
    def stats(self):
        return self.names.stats

    @property
    def linalg(self):
        return self.names.scipy_linalg

    @property
    def signal(self):
        found = self.__dict__.get("_signal")
        if found is None:
            found = self.__dict__["_signal"] = SciPySignal(self.names)
        return found

    def __getattr__(self, name):
        from ..errors import SGCompilerError
        raise SGCompilerError(
            f"scipy.{name} (SciPy) has no counterpart in the array API standard, so it "
            f"cannot run on {self.names.library} arrays; compute this gradient with NumPy "
            "arrays (np.asarray(...) of the arguments)")


# --- expm by scaling and squaring of the [13/13] Pade approximant, sqrtm and Sylvester ----
_PADE_DEGREE = 13
_PADE = tuple(math.factorial(2 * _PADE_DEGREE - k) * math.factorial(_PADE_DEGREE) /
              (math.factorial(2 * _PADE_DEGREE) * math.factorial(k) *
               math.factorial(_PADE_DEGREE - k)) for k in range(_PADE_DEGREE + 1))
_PADE_THETA = 5.371920351148152     # (the 1-norm up to which [13/13] is exact to rounding)


def _expm(names, a):
    """exp of square matrices (..., n, n): a scaled by 2^-s to a 1-norm below theta, the
    [13/13] Pade approximant N(a) / N(-a) solved for, squared s times."""
    xp = names.xp
    n = a.shape[-1]
    norm = float(xp.max(xp.sum(xp.abs(a), axis=-2))) if math.prod(a.shape) else 0.0
    if not math.isfinite(norm):
        raise ValueError("expm of a matrix with infinite or NaN entries")
    s = max(0, math.ceil(math.log2(norm / _PADE_THETA))) if norm > _PADE_THETA else 0
    a = a / (2.0 ** s)
    eye = xp.eye(n, dtype=a.dtype)
    even, odd, power = _PADE[0] * eye, _PADE[1] * a, eye
    square = a @ a
    for k in range(2, _PADE_DEGREE + 1, 2):
        power = power @ square
        even = even + _PADE[k] * power
        if k + 1 <= _PADE_DEGREE:
            odd = odd + _PADE[k + 1] * (power @ a)
    result = xp.linalg.solve(even - odd, even + odd)
    for _ in range(s):
        result = result @ result
    return result


class _MoreSciPyLinalg:
    """SciPyLinalg's expm, expm_frechet, solve_sylvester and sqrtm."""

    def expm(self, A):
        self._real(A)
        return _expm(self.names, A)

    def expm_frechet(self, A, E, method=None, compute_expm=True, check_finite=True):
        """The Frechet derivative of expm at A in the direction E: the upper right block of
        expm([[A, E], [0, A]]) (with expm(A) the upper left one)."""
        xp = self.xp
        self._real(A, E)
        n = A.shape[-1]
        dtype = self.names.result_type(A, E)
        A, E = xp.astype(A, dtype), xp.astype(E, dtype)
        block = xp.concat([xp.concat([A, E], axis=-1),
                           xp.concat([xp.zeros_like(A), A], axis=-1)], axis=-2)
        big = _expm(self.names, block)
        if compute_expm:
            return big[..., :n, :n], big[..., :n, n:]
        return big[..., :n, n:]

    def solve_sylvester(self, a, b, q):
        """X with a X + X b = q, as one linear system in X's entries (row by row: a X is
        kron(a, I) and X b is kron(I, b^T) of them)."""
        xp = self.xp
        self._real(a, b, q)
        n, m = a.shape[-1], b.shape[-1]
        if a.ndim != 2 or b.ndim != 2 or n * m > self._SYLVESTER_SIZE:
            raise self.names.missing(
                f"scipy.linalg.solve_sylvester of stacks or of more than "
                f"{self._SYLVESTER_SIZE} unknowns")
        dtype = self.names.result_type(a, b, q)
        a, b, q = (xp.astype(v, dtype) for v in (a, b, q))
        system = self.names.kron(a, xp.eye(m, dtype=dtype)) + \
            self.names.kron(xp.eye(n, dtype=dtype), self.names.transpose(b))
        return xp.reshape(xp.linalg.solve(system, xp.reshape(q, (-1, 1))), (n, m))

    def sqrtm(self, A, disp=True, blocksize=64):
        """The principal square root of A with no eigenvalues on the closed negative real
        axis, by Denman and Beavers' iteration (Y -> sqrt(A), Z -> its inverse), refused
        where it does not converge (a square root that is not real)."""
        xp = self.xp
        self._real(A)
        if A.ndim != 2:
            raise self.names.missing("scipy.linalg.sqrtm of stacks of matrices")
        y, z = A, xp.eye(A.shape[-1], dtype=A.dtype)
        scale = float(xp.max(xp.abs(A))) if math.prod(A.shape) else 0.0
        for _ in range(100):
            try:        # (a singular iterate: the library's own LinAlgError)
                y, z = (y + xp.linalg.inv(z)) / 2.0, (z + xp.linalg.inv(y)) / 2.0
            except Exception:
                break
            if float(xp.max(xp.abs(y @ y - A))) <= 1e-13 * max(scale, 1e-300):
                return y
        raise self.names.missing("scipy.linalg.sqrtm of a matrix whose square root is not "
                                 "real (or does not converge)")


_GENERAL = (None, "gen", "general")
_SYMMETRIC = ("sym", "symmetric", "her", "hermitian", "pos", "positive definite")
_TRANSPOSED = (1, 2, "T", "C")


class SciPyLinalg(_MoreSciPyLinalg):
    """scipy.linalg's functions the standard's linalg extension spells (`xp.scipy.linalg.inv`:
    backend/namespace.py spells them so): the triangle a function reads (solve and inv of
    a symmetric matrix, cholesky, eigvalsh, solve_triangular) is the matrix it is given,
    as in SciPy, and a triangular system is solved as the triangular matrix it is (for
    real matrices). `SPELLED` names them."""

    SPELLED = frozenset({"inv", "solve", "solve_triangular", "cholesky", "eigvalsh",
                         "cho_factor", "cho_solve", "block_diag", "expm", "expm_frechet",
                         "solve_sylvester", "sqrtm"})
    _SYLVESTER_SIZE = 4096      # (unknowns of solve_sylvester's one linear system, at most)

    def __init__(self, names):
        self.names = names
        self.xp = names.xp

    def __repr__(self):
        return f"<scipy.linalg's names for {self.names.library}>"

    module = "linalg"

    def __getattr__(self, name):
        from ..errors import SGCompilerError
        raise SGCompilerError(
            f"scipy.{self.module}.{name} (SciPy) has no counterpart in the array API "
            f"standard, so it cannot run on {self.names.library} arrays; compute this "
            "gradient with NumPy arrays (np.asarray(...) of the arguments)")

    def _real(self, *arrays):
        for a in arrays:
            if isinstance(a, self.names.ndarray) and \
                    self.xp.isdtype(a.dtype, "complex floating"):
                raise self.names.missing("scipy.linalg's functions of complex matrices")

    def _matrix(self, a, assume_a, lower):
        """The matrix scipy.linalg.solve and inv read: a, or for a symmetric assume_a the
        symmetric matrix of the triangle `lower` names."""
        if assume_a in _GENERAL:
            return a
        if assume_a in _SYMMETRIC:
            return self.names.linalg._spanned(a, "L" if lower else "U")
        raise self.names.missing(f"scipy.linalg.solve/inv(..., assume_a={assume_a!r})")

    def inv(self, a, overwrite_a=False, check_finite=True, *, assume_a=None, lower=False):
        self._real(a)
        return self.xp.linalg.inv(self._matrix(a, assume_a, lower))

    def solve(self, a, b, lower=False, overwrite_a=False, overwrite_b=False,
              check_finite=True, assume_a=None, transposed=False):
        self._real(a, b)
        matrix = self._matrix(a, assume_a, lower)
        if transposed:
            matrix = self.names.swapaxes(matrix, -1, -2)
        return self._solve(matrix, b)

    def _solve(self, matrix, b):
        xp = self.xp
        if b.ndim == 1:         # (a vector: the standard's solve takes it so only in 2-D)
            return xp.linalg.solve(matrix, xp.reshape(b, (-1, 1)))[..., 0]
        return xp.linalg.solve(matrix, b)

    def _triangular(self, a, lower, unit_diagonal):
        xp = self.xp
        part = xp.tril(a) if lower else xp.triu(a)
        if unit_diagonal:
            eye = xp.eye(a.shape[-1], dtype=a.dtype)
            part = part - part * eye + eye
        return part

    def solve_triangular(self, a, b, trans=0, lower=False, unit_diagonal=False,
                         overwrite_b=False, check_finite=True):
        self._real(a, b)
        part = self._triangular(a, lower, unit_diagonal)
        if trans in _TRANSPOSED:
            part = self.names.swapaxes(part, -1, -2)
        elif trans not in (0, "N"):
            raise ValueError(f"trans must be 0, 1, 2, 'N', 'T' or 'C', not {trans!r}")
        return self._solve(part, b)

    def cholesky(self, a, lower=False, overwrite_a=False, check_finite=True):
        self._real(a)
        low = self.xp.linalg.cholesky(self.names.linalg._spanned(a, "L" if lower else "U"))
        return low if lower else self.names.swapaxes(low, -1, -2)

    def eigvalsh(self, a, b=None, *, lower=True, **options):
        if b is not None or options:
            raise self.names.missing("scipy.linalg.eigvalsh(a, b) or its options")
        self._real(a)
        return self.names.linalg.eigvalsh(a, "L" if lower else "U")

    def cho_factor(self, a, lower=False, overwrite_a=False, check_finite=True):
        """(c, lower): the factor in the triangle `lower` names, a's other triangle kept
        (as LAPACK leaves it)."""
        xp = self.xp
        factor = self.cholesky(a, lower=lower)
        return (factor + xp.triu(a, k=1) if lower else factor + xp.tril(a, k=-1)), lower

    def cho_solve(self, c_and_lower, b, overwrite_b=False, check_finite=True):
        c, lower = c_and_lower
        self._real(c, b)
        factor = self.xp.tril(c) if lower else self.xp.triu(c)
        other = self.names.swapaxes(factor, -1, -2)
        first, second = (factor, other) if lower else (other, factor)   # A = F F^T, U^T U
        return self._solve(second, self._solve(first, b))

    def block_diag(self, *arrs):
        xp = self.xp
        if not arrs:
            return xp.zeros((1, 0))
        blocks = [self.names.atleast_2d(a if isinstance(a, self.names.ndarray)
                                        else self.names.asarray(a)) for a in arrs]
        if any(b.ndim > 2 for b in blocks):
            raise ValueError("arguments in the following positions have dimension greater "
                             "than 2")
        dtype = xp.result_type(*blocks)
        width = sum(b.shape[1] for b in blocks)
        rows, before = [], 0
        for b in blocks:
            left = xp.zeros((b.shape[0], before), dtype=dtype)
            right = xp.zeros((b.shape[0], width - before - b.shape[1]), dtype=dtype)
            rows.append(xp.concat([left, xp.astype(b, dtype), right], axis=1))
            before += b.shape[1]
        return xp.concat(rows, axis=0)


class SciPySignal:
    """scipy.signal's convolve and correlate of real arrays of any number of axes
    (`xp.scipy.signal.convolve`): the full result is the sum, over the smaller operand's
    elements, of each times the other shifted (one product an element: meant for
    kernels, not two large arrays); 'same' and 'valid' are its centred slices, as SciPy
    takes them. `method` does not change the values beyond rounding."""

    SPELLED = frozenset({"convolve", "correlate"})
    module = "signal"

    def __init__(self, names):
        self.names = names
        self.xp = names.xp

    def __repr__(self):
        return f"<scipy.signal's names for {self.names.library}>"

    __getattr__ = SciPyLinalg.__getattr__

    def _operands(self, in1, in2):
        xp = self.xp
        a, b = (v if isinstance(v, self.names.ndarray) else self.names.asarray(v)
                for v in (in1, in2))
        if xp.isdtype(a.dtype, "complex floating") or xp.isdtype(b.dtype, "complex floating"):
            return SciPyLinalg.__getattr__(self, "convolve of complex arrays")
        if a.ndim != b.ndim:
            raise ValueError("in1 and in2 should have the same dimensionality")
        dtype = self.names.result_type(a, b)
        dtype = dtype if xp.isdtype(dtype, "real floating") else xp.float64
        return xp.astype(a, dtype), xp.astype(b, dtype)

    def _full(self, a, b):
        if math.prod(b.shape) > math.prod(a.shape):
            a, b = b, a                 # (the same sum: fewer, larger products)
        full = tuple(m + n - 1 for m, n in zip(a.shape, b.shape))
        padded = self.names.pad(a, [(n - 1, n - 1) for n in b.shape])
        total = None
        for at in np.ndindex(*b.shape):
            part = padded[tuple(slice(n - 1 - i, n - 1 - i + f)
                                for n, i, f in zip(b.shape, at, full))]
            term = b[at] * part if at else b * part
            total = term if total is None else total + term
        return total

    def _centred(self, full, shape):
        return full[tuple(slice((f - n) // 2, (f - n) // 2 + n)
                          for f, n in zip(full.shape, shape))]

    def convolve(self, in1, in2, mode="full", method="auto"):
        a, b = self._operands(in1, in2)
        if mode not in ("full", "same", "valid"):
            raise ValueError("acceptable mode flags are 'valid', 'same', or 'full'")
        if not a.ndim:
            return a * b
        if mode == "valid":
            if not (all(m >= n for m, n in zip(a.shape, b.shape)) or
                    all(m <= n for m, n in zip(a.shape, b.shape))):
                raise ValueError("For 'valid' mode, one must be at least as large as the "
                                 "other in every dimension")
        full = self._full(a, b)
        if mode == "full":
            return full
        if mode == "same":
            return self._centred(full, tuple(a.shape))
        return self._centred(full, tuple(abs(m - n) + 1 for m, n in zip(a.shape, b.shape)))

    def correlate(self, in1, in2, mode="full", method="auto"):
        a, b = self._operands(in1, in2)
        return self.convolve(a, self.xp.flip(b), mode=mode)
