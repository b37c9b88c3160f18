"""The rule table: every registered derivative rule with inputs from its domain.

A row is `Case(primitive, makers, kw, id, rtol)`: each maker draws one positional argument
from a seeded generator, `kw` holds keyword arguments (never differentiated). Arguments
that are not float arrays or floats (indices, masks, subscripts, shapes) get no check.
Elementwise rules run on several shapes and every broadcasting pair; reductions on every
axis/keepdims variant. The SciPy rows exist when SciPy is installed.
"""
import builtins
import math
import operator
from dataclasses import dataclass, field

import numpy as np

from sgcompiler import runtime
from sgcompiler.runtime.numpy.shapes import partition_grad, partition_tangent_of
from sgcompiler.runtime.numpy.signal import gradient_adjoint
from sgcompiler.runtime.tangents import (diff_padded, einsum_grad_replacing, einsum_grad_with,
                                        einsum_replacing, einsum_with, unless_in)


@dataclass
class Case:
    prim: object
    makers: tuple
    kw: dict = field(default_factory=dict)
    id: str = ""
    rtol: float = 1e-5
    eps: float = 1e-6
    unused: tuple = ()      # results that get no adjoint (g is 0.0 for them)
    fixed: tuple = ()       # arguments not perturbed (x of a density on the simplex)
    complex_mode: bool = False  # the rule complex mode uses (rules/complex_numbers.py)


CASES: list = []


def case(prim, *makers, id=None, rtol=1e-5, eps=1e-6, unused=(), fixed=(), complex_mode=False,
         **kw):
    name = getattr(prim, "__name__", str(prim))
    CASES.append(Case(prim, makers, kw, f"{name}-{id}" if id else name, rtol, eps, unused,
                      fixed, complex_mode))


def complex_case(prim, *makers, id=None, **options):
    """A row for the rule complex mode uses: complex arguments get complex directions (the
    checks pair an adjoint g with a change dw as Re(g * dw))."""
    name = "complex" if id is None else f"complex-{id}"
    case(prim, *makers, id=name, complex_mode=True, **options)


# --- domains ------------------------------------------------------------------------------


def normal(*shape):
    return lambda r: r.normal(size=shape)


def uniform(lo, hi, *shape):
    return lambda r: r.uniform(lo, hi, size=shape)


def positive(*shape):
    return uniform(0.5, 2.0, *shape)


def unit(*shape):
    return uniform(-0.9, 0.9, *shape)


def nonzero(*shape):
    return lambda r: r.choice([-1.0, 1.0], size=shape) * r.uniform(0.5, 2.0, size=shape)


def with_nan(*shape):
    def make(r):
        x = r.normal(size=shape)
        x.flat[1] = np.nan
        return x
    return make


def with_zero(*shape):
    def make(r):
        x = r.normal(size=shape)
        x.flat[1] = 0.0
        return x
    return make


def ints(lo, hi, *shape):
    return lambda r: r.integers(lo, hi, size=shape)


def mask(*shape):
    return lambda r: r.normal(size=shape) > 0


def cnormal(*shape):
    """Complex numbers with normal real and imaginary parts."""
    return lambda r: np.asarray(r.normal(size=shape) + 1j * r.normal(size=shape))


def cnonzero(*shape):
    """Complex numbers away from 0 (for abs and angle)."""
    return lambda r: np.asarray(r.uniform(0.5, 2.0, size=shape)
                                * np.exp(1j * r.uniform(-3.0, 3.0, size=shape)))


def value(v):
    return lambda r: v


def arrays(*shapes):
    """A list of normal arrays, one per shape (a sequence argument)."""
    return lambda r: [r.normal(size=s) for s in shapes]


def scalar(lo=-2.0, hi=2.0):
    return lambda r: float(r.uniform(lo, hi))


def square(n, *batch):
    """A well-conditioned (nonsingular) matrix."""
    return lambda r: r.normal(size=batch + (n, n)) + 3.0 * np.eye(n)


def real_spectrum(n, *batch):
    """A nonsymmetric matrix with distinct real eigenvalues: P diag(d) P^-1."""
    def make(r):
        p = r.normal(size=batch + (n, n)) + 3.0 * np.eye(n)
        d = np.linspace(-2.0, 2.0, n) + r.uniform(-0.2, 0.2, size=batch + (n,))
        return p @ (d[..., :, None] * np.linalg.inv(p))
    return make


def spd(n, *batch):
    """A symmetric positive definite matrix."""
    def make(r):
        a = r.normal(size=batch + (n, n))
        return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    return make


SHAPES = [(), (3,), (2, 3)]
BROADCAST = [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 3), (2, 1)), ((3,), ()), ((), (2, 3)),
             ((4, 1, 3), (2, 1))]
REDUCE = [((3,), {}), ((2, 3), {}), ((2, 3), {"axis": 0}), ((2, 3), {"axis": 1}),
          ((2, 3), {"axis": -1, "keepdims": True}), ((2, 3, 4), {"axis": (0, 2)}),
          ((2, 3), {"keepdims": True})]

# --- elementwise ----------------------------------------------------------------------------

UNARY = [
    (np.exp, normal), (np.exp2, normal), (np.expm1, normal), (np.log, positive),
    (np.log2, positive), (np.log10, positive), (np.log1p, positive), (np.sqrt, positive),
    (np.cbrt, nonzero), (np.square, normal), (np.reciprocal, positive),
    (np.sin, normal), (np.cos, normal), (np.tan, unit), (np.arcsin, unit), (np.arccos, unit),
    (np.arctan, normal), (np.sinh, normal), (np.cosh, normal), (np.tanh, normal),
    (np.arcsinh, normal), (np.arccosh, lambda *s: uniform(1.2, 3.0, *s)),
    (np.arctanh, unit), (np.deg2rad, normal), (np.radians, normal), (np.rad2deg, normal),
    (np.degrees, normal), (np.sinc, nonzero), (np.abs, nonzero), (np.absolute, nonzero),
    (np.fabs, nonzero), (np.negative, normal), (np.positive, normal), (np.conjugate, normal),
    (np.real, normal), (np.real_if_close, normal), (np.i0, normal), (np.nan_to_num, normal),
    (operator.neg, normal), (operator.pos, normal),
]
BINARY = [
    (operator.add, normal, normal), (operator.sub, normal, normal),
    (operator.mul, normal, normal), (operator.truediv, normal, positive),
    (operator.pow, positive, normal), (builtins.pow, positive, normal),
    (operator.mod, positive, positive), (np.add, normal, normal),
    (np.subtract, normal, normal), (np.multiply, normal, normal),
    (np.divide, normal, positive), (np.power, positive, normal),
    (np.float_power, positive, normal), (np.maximum, normal, normal),
    (np.minimum, normal, normal), (np.fmax, normal, normal), (np.fmin, normal, normal),
    (np.arctan2, normal, normal), (np.hypot, normal, normal), (np.logaddexp, normal, normal),
    (np.logaddexp2, normal, normal), (np.copysign, nonzero, nonzero),
    (np.heaviside, nonzero, normal), (np.remainder, positive, positive),
    (np.fmod, nonzero, positive), (np.ldexp, normal, lambda *s: ints(-2, 3, *s)),
]
for prim, dom in UNARY:
    for shape in SHAPES:
        case(prim, dom(*shape), id=str(shape))
for prim, d1, d2 in BINARY:
    for s1, s2 in BROADCAST:
        case(prim, d1(*s1), d2(*s2), id=f"{s1}-{s2}")
case(np.fmax, with_nan(2, 3), normal(2, 3), id="nan")
case(np.nan_to_num, lambda r: np.array([1.0, np.nan, np.inf, -2.0]), id="nonfinite")
case(np.where, mask(2, 3), normal(2, 3), normal(3))
case(np.where, mask(3), normal(2, 3), normal(), id="scalar")
case(np.clip, normal(2, 3), value(-0.5), value(0.5))
case(np.clip, normal(2, 3), uniform(-1, 0, 3), value(0.8), id="array-bounds")

# --- Python's math module and builtins -------------------------------------------------------

MATH = [
    (math.sin, scalar()), (math.cos, scalar()), (math.tan, scalar(-1, 1)),
    (math.exp, scalar()), (math.expm1, scalar()), (math.log, scalar(0.5, 2)),
    (math.log2, scalar(0.5, 2)), (math.log10, scalar(0.5, 2)), (math.log1p, scalar(0.5, 2)),
    (math.sqrt, scalar(0.5, 2)), (math.tanh, scalar()), (math.sinh, scalar()),
    (math.cosh, scalar()), (math.asin, scalar(-0.9, 0.9)), (math.acos, scalar(-0.9, 0.9)),
    (math.atan, scalar()), (math.asinh, scalar()), (math.acosh, scalar(1.2, 3)),
    (math.atanh, scalar(-0.9, 0.9)), (math.erf, scalar()), (math.erfc, scalar()),
    (math.degrees, scalar()), (math.radians, scalar()), (math.fabs, scalar(0.5, 2)),
]
for prim, dom in MATH:
    case(prim, dom)
case(math.fabs, scalar(-2, -0.5), id="negative")
for name, dom in (("exp2", scalar()), ("cbrt", scalar(0.5, 2))):
    if hasattr(math, name):
        case(getattr(math, name), dom)
case(math.pow, scalar(0.5, 2), scalar())
case(math.atan2, scalar(), scalar())
case(math.hypot, scalar(), scalar())
case(math.copysign, scalar(0.5, 2), scalar(-2, -0.5))
case(math.fmod, scalar(0.5, 2), scalar(0.3, 0.45))
case(builtins.float, scalar())
case(builtins.abs, nonzero(3))
case(builtins.max, scalar(), scalar())
case(builtins.min, scalar(), scalar())
case(builtins.sum, normal(4, 3), id="rows")

# --- reductions -------------------------------------------------------------------------------

for prim in (np.sum, np.mean, np.max, np.min, np.amax, np.amin, np.prod, np.nansum,
             np.nanmean, np.nanmax, np.nanmin, np.nanprod, np.var, np.std, np.nanvar,
             np.nanstd, np.ptp, np.median, np.average):
    for shape, kw in REDUCE:
        case(prim, normal(*shape), id=f"{shape}-{kw}", **kw)
for prim in (np.nansum, np.nanmean, np.nanmax, np.nanmin, np.nanprod, np.nanvar, np.nanstd):
    case(prim, with_nan(2, 3), id="nan")
    case(prim, with_nan(2, 3), id="nan-axis", axis=1)
for prim in (np.var, np.std, np.nanvar, np.nanstd):
    case(prim, normal(2, 3), id="ddof", ddof=1)
    case(prim, normal(2, 3), id="ddof-axis", ddof=1, axis=0, keepdims=True)
case(np.median, normal(4), id="even")
case(np.median, normal(4, 3), id="even-axis", axis=0)
case(np.prod, with_zero(2, 3), id="zero")
case(np.prod, with_zero(2, 3), id="zero-axis", axis=1)
case(np.average, normal(2, 3), value(None), positive(2, 3), id="weights")
case(np.average, normal(2, 3), value(1), positive(3), id="weights-1d")
case(np.average, normal(2, 3), value(0), positive(2), id="weights-1d-0")
case(np.average, normal(2, 3, 4), value((0, 2)), positive(2, 4), id="weights-axes")
case(np.average, normal(2, 3), value(1), positive(2, 3), id="weights-keepdims",
     keepdims=True)

VECTOR_ORDS = [None, 1, 2, np.inf, -np.inf, 3, 0.5, 0, -1, -2]
for ord in VECTOR_ORDS:
    case(np.linalg.norm, normal(4), id=f"vector-{ord}", ord=ord)
    case(np.linalg.norm, normal(2, 4), id=f"vector-axis-{ord}", ord=ord, axis=1)
    if hasattr(np.linalg, "vector_norm"):
        case(np.linalg.vector_norm, normal(2, 3), id=f"{ord}", ord=2 if ord is None else ord)
case(np.linalg.norm, normal(2, 3, 4), id="flat")
case(np.linalg.norm, normal(2, 4), id="vector-keepdims", axis=0, keepdims=True)
if hasattr(np.linalg, "vector_norm"):
    case(np.linalg.vector_norm, normal(2, 3, 4), id="axes", axis=(0, 2), keepdims=True)
for ord in [None, "fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf]:
    case(np.linalg.norm, normal(3, 4), id=f"matrix-{ord}", ord=ord if ord else "fro")
    case(np.linalg.norm, normal(2, 3, 4), id=f"matrix-axes-{ord}", ord=ord, axis=(2, 1))
    if hasattr(np.linalg, "matrix_norm"):
        case(np.linalg.matrix_norm, normal(2, 3, 4), id=f"{ord}", ord=ord or "fro")
case(np.linalg.norm, normal(2, 3, 4), id="matrix-keepdims", ord="nuc", axis=(0, 1),
     keepdims=True)
if hasattr(np.linalg, "matrix_norm"):
    case(np.linalg.matrix_norm, normal(3, 3), id="keepdims", keepdims=True)

for prim in (np.cumsum, np.cumprod, np.nancumsum, np.nancumprod):
    for shape, kw in [((4,), {}), ((2, 3), {}), ((2, 3), {"axis": 0}), ((2, 3), {"axis": -1})]:
        case(prim, normal(*shape), id=f"{shape}-{kw}", **kw)
case(np.cumprod, with_zero(2, 4), id="zero", axis=1)
case(np.cumprod, with_zero(5), id="zero-flat")
case(np.nancumsum, with_nan(2, 3), id="nan", axis=1)
case(np.nancumprod, with_nan(2, 3), id="nan", axis=1)
for name in ("cumulative_sum", "cumulative_prod"):
    if hasattr(np, name):
        case(getattr(np, name), normal(4), id="1d")
        case(getattr(np, name), normal(2, 3), id="axis", axis=1)
        case(getattr(np, name), normal(2, 3), id="initial", axis=0, include_initial=True)

# --- products and linear algebra ----------------------------------------------------------------

for prim in (operator.matmul, np.matmul) + ((np.linalg.matmul,) if hasattr(np.linalg, "matmul")
                                            else ()):
    for s1, s2 in [((2, 3), (3, 4)), ((3,), (3, 4)), ((2, 3), (3,)), ((3,), (3,)),
                   ((5, 2, 3), (3, 4)), ((2, 1, 2, 3), (4, 3, 2))]:
        case(prim, normal(*s1), normal(*s2), id=f"{s1}-{s2}")
for s1, s2 in [((2, 3), (3, 4)), ((3,), (3,)), ((3,), (3, 2)), ((2, 3), (3,)), ((2, 3), ()),
               ((2, 3), (4, 3, 5))]:
    case(np.dot, normal(*s1), normal(*s2), id=f"{s1}-{s2}")
case(np.vdot, normal(2, 3), normal(3, 2))
case(np.vdot, normal(3), normal(3), id="1d")
for s1, s2 in [((3,), (3,)), ((2, 3), (4, 3)), ((2, 3), ()), ((2, 2, 3), (3,))]:
    case(np.inner, normal(*s1), normal(*s2), id=f"{s1}-{s2}")
case(np.outer, normal(3), normal(4))
case(np.outer, normal(2, 2), normal(3), id="flattens")
if hasattr(np.linalg, "outer"):
    case(np.linalg.outer, normal(3), normal(4))
for s1, s2, axes in [((2, 3, 4), (3, 4, 5), 2), ((2, 3), (3, 4), 1), ((2, 3), (4,), 0),
                     ((2, 3, 4), (4, 3), ([1, 2], [1, 0])), ((3, 4), (4, 2), (1, 0))]:
    case(np.tensordot, normal(*s1), normal(*s2), id=f"{s1}-{s2}-{axes}", axes=axes)
if hasattr(np.linalg, "tensordot"):
    case(np.linalg.tensordot, normal(2, 3, 4), normal(3, 4, 5))
    case(np.linalg.tensordot, normal(2, 3), normal(2, 4), id="axes", axes=([0], [0]))
EINSUM = [
    ("ij,jk->ik", (2, 3), (3, 4)), ("ij,jk", (2, 3), (3, 4)), ("ij->", (2, 3)),
    ("ii->i", (3, 3)), ("ii", (3, 3)), ("i,i", (3,), (3,)), ("i,j->ij", (2,), (3,)),
    ("ij->ji", (2, 3)), ("bij,bjk->bik", (2, 2, 3), (2, 3, 4)), ("ij,ij->i", (2, 3), (2, 3)),
    ("...ij,...jk->...ik", (2, 1, 2, 3), (5, 3, 2)), ("ij,k->ijk", (2, 3), (4,)),
    ("iij->j", (3, 3, 2)), ("i,i,i->", (4,), (4,), (4,)), ("ij,jk,kl->il", (2, 3), (3, 4),
                                                            (4, 2)),
    ("i...->...", (3, 2, 4)), (",ij->ij", (), (2, 3)), ("ij->i", (2, 3)),
]
for spec, *shapes in EINSUM:
    case(np.einsum, value(spec), *[normal(*s) for s in shapes], id=spec)
case(np.einsum, value("ij,jk->ik"), normal(2, 3), normal(3, 4), id="optimize",
     optimize=True)
case(np.einsum, value("...ij,jk,...kl->...il"), normal(2, 3, 4), normal(4, 5), normal(2, 5, 3),
     id="optimize-greedy-ellipsis", optimize="greedy")
case(np.einsum, value("ij,jk,kl->il"), normal(3, 4), normal(4, 5), normal(5, 3),
     id="optimize-path", optimize=["einsum_path", (0, 1), (0, 1)])
case(np.kron, normal(2, 3), normal(3, 2))
case(np.kron, normal(2), normal(3, 2), id="ndim")
for s1, s2, kw in [((3,), (3,), {}), ((4, 3), (3,), {}), ((3, 4), (4, 3), {"axisa": 0}),
                   ((3, 2), (2, 3), {"axis": None, "axisa": 0, "axisb": 1, "axisc": 0})]:
    case(np.cross, normal(*s1), normal(*s2), id=f"{s1}-{s2}", **kw)
if hasattr(np.linalg, "cross"):
    case(np.linalg.cross, normal(4, 3), normal(3))
for prim in [getattr(m, "vecdot") for m in (np, np.linalg) if hasattr(m, "vecdot")]:
    case(prim, normal(2, 3), normal(3))
    case(prim, normal(3, 2), normal(3, 2), id="axis", axis=0)
case(np.trace, normal(3, 3))
case(np.trace, normal(3, 4), value(1), id="offset")
case(np.trace, normal(2, 3, 4), value(-1), value(1), value(2), id="axes")
case(np.diagonal, normal(3, 4))
case(np.diagonal, normal(3, 4), value(-1), id="offset")
case(np.diagonal, normal(2, 3, 4), value(1), value(2), value(0), id="axes")
for name in ("trace", "diagonal"):
    if hasattr(np.linalg, name):
        case(getattr(np.linalg, name), normal(2, 3, 3))
        case(getattr(np.linalg, name), normal(3, 4), id="offset", offset=1)
case(np.diag, normal(3))
case(np.diag, normal(3), value(-1), id="1d-k")
case(np.diag, normal(3, 4), id="2d")
case(np.diag, normal(3, 4), value(1), id="2d-k")
case(np.diagflat, normal(2, 2))
case(np.diagflat, normal(3), value(1), id="k")
for prim in {getattr(m, "matrix_transpose") for m in (np, np.linalg)
             if hasattr(m, "matrix_transpose")}:
    case(prim, normal(2, 3, 4))
case(np.linalg.inv, square(3))
case(np.linalg.inv, square(3, 2), id="stacked")
case(np.linalg.solve, square(3), normal(3), id="vector")
case(np.linalg.solve, square(3), normal(3, 2), id="matrix")
case(np.linalg.solve, square(3, 2), normal(3), id="stacked-vector")
case(np.linalg.solve, square(3, 2), normal(2, 3, 4), id="stacked-matrix")
case(np.linalg.det, square(3))
case(np.linalg.det, square(3, 2), id="stacked")
for n in (0, 1, 3, -2):
    case(np.linalg.matrix_power, square(3), value(n), id=str(n))
case(np.linalg.matrix_power, square(2, 3), value(4), id="stacked")
case(np.linalg.cholesky, spd(3))
case(np.linalg.cholesky, spd(3, 2), id="stacked")
case(np.linalg.cholesky, spd(3), id="upper", upper=True)
case(np.linalg.eigvalsh, spd(3))
case(np.linalg.eigvalsh, spd(3, 2), id="stacked")
case(np.linalg.eigvalsh, spd(3), value("U"), id="upper")
if hasattr(np.linalg, "svdvals"):
    case(np.linalg.svdvals, normal(3, 4))
    case(np.linalg.svdvals, normal(2, 4, 3), id="stacked")
case(np.linalg.pinv, square(3))
case(np.linalg.pinv, normal(4, 2), id="tall")
case(np.linalg.pinv, normal(2, 4), id="wide")
case(np.linalg.pinv, spd(3), id="hermitian", hermitian=True)
case(np.linalg.pinv, normal(2, 4, 3), id="stacked")

# --- shapes, copies and indexing ---------------------------------------------------------------

case(np.transpose, normal(2, 3))
case(np.transpose, normal(2, 3, 4), value((1, 2, 0)), id="axes")
if hasattr(np, "permute_dims"):
    case(np.permute_dims, normal(2, 3, 4), value((2, 0, 1)))
case(np.reshape, normal(2, 3), value((3, 2)))
case(np.reshape, normal(2, 3), value((3, 2)), id="F", order="F")
case(np.ravel, normal(2, 3))
case(np.ravel, normal(2, 3), value("F"), id="F")
case(np.expand_dims, normal(2, 3), value(1))
case(np.squeeze, normal(2, 1, 3))
case(np.squeeze, normal(2, 1, 1), value(2), id="axis")
for prim in (np.atleast_1d, np.atleast_2d, np.atleast_3d):
    case(prim, normal())
    case(prim, normal(3), id="1d")
case(np.broadcast_to, normal(3), value((2, 3)))
case(np.broadcast_to, normal(2, 1), value((4, 2, 3)), id="expand")
case(np.swapaxes, normal(2, 3, 4), value(0), value(2))
case(np.moveaxis, normal(2, 3, 4), value(0), value(-1))
case(np.moveaxis, normal(2, 3, 4), value((0, 1)), value((2, 0)), id="many")
case(np.rollaxis, normal(2, 3, 4), value(2))
case(np.rollaxis, normal(2, 3, 4), value(0), value(3), id="to-end")
case(np.rollaxis, normal(2, 3, 4, 5), value(-1), value(1), id="negative")
case(np.rollaxis, normal(2, 3, 4), value(1), value(-1), id="negative-start")
case(np.flip, normal(2, 3))
case(np.flip, normal(2, 3), value(1), id="axis")
case(np.fliplr, normal(2, 3))
case(np.flipud, normal(2, 3))
case(np.roll, normal(5), value(2))
case(np.roll, normal(2, 3), value(4), id="flat")
case(np.roll, normal(2, 3), value((1, -1)), value((0, 1)), id="axes")
case(np.rot90, normal(2, 3))
case(np.rot90, normal(2, 3, 4), value(3), value((1, 2)), id="axes")
case(np.tile, normal(3), value(2))
case(np.tile, normal(2, 3), value((2, 1, 2)), id="more-reps")
case(np.tile, normal(2, 3, 2), value((2, 1)), id="fewer-reps")
case(np.repeat, normal(3), value(2))
case(np.repeat, normal(2, 3), value(np.array([1, 0, 2])), value(1), id="counts")
case(np.repeat, normal(2, 3), value(2), value(0), id="axis")
for prim in (np.triu, np.tril):
    case(prim, normal(3, 4))
    case(prim, normal(2, 3, 3), value(-1), id="k")
for mode in ("constant", "edge", "reflect", "symmetric", "wrap"):
    case(np.pad, normal(3, 4), value(((1, 2), (2, 1))), value(mode), id=mode)
case(np.pad, normal(4), value(2), id="int")
case(np.append, normal(2, 3), normal(4))
case(np.append, normal(2, 3), normal(1, 3), value(0), id="axis")
case(np.delete, normal(5), value([1, 3]))
case(np.delete, normal(2, 4), value(1), value(1), id="axis")
case(np.diff, normal(5))
case(np.diff, normal(2, 5), value(2), id="n")
case(np.diff, normal(4, 3), value(1), value(0), id="axis")
case(np.diff, normal(4), id="prepend", prepend=0.5, append=np.array([1.0, 2.0]))
for prim in (np.asarray, np.array, np.copy, np.ascontiguousarray, np.asfortranarray):
    case(prim, normal(2, 3))
for prim in (np.ascontiguousarray, np.asfortranarray):     # a 0-d array gives shape (1,)
    case(prim, normal(), id="0-d")
case(np.float64, scalar())
case(np.float32, scalar(), rtol=1e-3, eps=1e-2)
case(runtime.astype, normal(2, 3), value(float))
case(runtime.astype, normal(2, 3), value(np.float32), id="float32", rtol=1e-3, eps=1e-2)
case(runtime.astype, normal(2, 3), value(int), id="int")
if hasattr(np, "astype"):
    case(np.astype, normal(2, 3), value(np.float64))
case(np.take, normal(5), value(np.array([0, 3, 3, -1])))
case(np.take, normal(2, 4), value(np.array([[0, 1], [3, 3]])), value(1), id="axis")
case(np.take, normal(4), value([5, -6]), id="wrap", mode="wrap")
case(np.take, normal(4), value([5, -6]), id="clip", mode="clip")
case(np.take_along_axis, normal(3, 4), value(np.array([[0, 0], [3, 1], [2, 2]])), value(1))
case(np.take_along_axis, normal(3, 4), value(np.array([[0, 2, 2, 1]])), value(0),
     id="broadcast")
case(np.take_along_axis, normal(5), value(np.array([4, 4, 0])), value(None), id="flat")
case(np.compress, value([True, False, True]), normal(3, 2), value(0))
case(np.compress, value([False, True]), normal(3, 2), id="flat")
case(np.extract, mask(3, 4), normal(3, 4))
case(np.sort, normal(2, 5))
case(np.sort, normal(3, 4), value(0), id="axis")
case(np.sort, normal(3, 4), value(None), id="flat")
case(np.partition, normal(7), value(3))
case(np.partition, normal(3, 5), value(2), value(0), id="axis")
case(np.partition, normal(4, 5), value((1, 3)), id="several-kth")
case(np.partition, normal(3, 4), value(5), value(None), id="flat")
# --- filters (rules/numpy/signal.py) ----------------------------------------------------------------
for mode in ("full", "same", "valid"):
    for m, n in ((5, 3), (3, 5), (4, 4), (2, 7), (1, 4)):
        for prim in (np.convolve, np.correlate):
            case(prim, normal(m), normal(n), value(mode), id=f"{mode}-{m}-{n}")
case(np.convolve, normal(5), normal(3), id="default")
case(np.correlate, normal(5), normal(3), id="default")
case(np.gradient, normal(6))
case(np.gradient, normal(2), id="two-points")
case(np.gradient, normal(6), value(0.5), id="spacing")
case(np.gradient, normal(6), value(np.array([0.0, 0.3, 1.0, 1.2, 2.0, 3.5])), id="coordinates")
case(np.gradient, normal(6), id="edge-order-2", edge_order=2)
# (np.gradient's gradient helper and its transpose: second and third order)
case(runtime.gradient_grad, normal(3, 4), normal(3, 4), normal(3, 4),
     value((0.5, None, None, None)), value(1))
case(runtime.gradient_grad, normal(6), normal(6), normal(6), value((None,) * 4), id="edges",
     edge_order=2)
case(gradient_adjoint, normal(3, 4), normal(3, 4), normal(3, 4), normal(3, 4),
     value((None,) * 4), value(0), value(2))
case(np.gradient, normal(5), value(np.array([0.0, 0.5, 0.7, 1.5, 2.0])), id="coords-order-2",
     edge_order=2)
case(np.gradient, normal(3, 5), id="axis", axis=1)
case(np.gradient, normal(4, 3), value(0.3), id="axis-0-order-2", axis=0, edge_order=2)
case(np.gradient, normal(3, 4, 3), value(2.0), id="axis-negative", axis=-1)
for prim in (np.fft.fftshift, np.fft.ifftshift):
    case(prim, normal(5))
    case(prim, normal(4, 5), id="2d")
    case(prim, normal(4, 5), value(0), id="axis")
    case(prim, normal(3, 4, 5), value((0, 2)), id="axes")
case(np.bincount, value(np.array([0, 2, 2, 5])), positive(4))
case(np.full, value((2, 3)), scalar())
case(np.full, value((2, 3)), normal(3), id="array")
case(np.full_like, normal(2, 3), scalar())
case(np.linspace, scalar(), scalar(), value(5))
case(np.linspace, normal(3), normal(3), value(4), id="arrays-axis", endpoint=False, axis=1)
case(np.linspace, normal(2, 1), scalar(), value(3), id="broadcast")
case(np.interp, uniform(-0.5, 3.5, 7), value(np.array([0.0, 1.0, 2.5, 3.0])), normal(4))
case(np.interp, uniform(-0.5, 3.5, 7), value(np.array([0.0, 1.0, 2.5, 3.0])), normal(4),
     value(0.0), value(1.0), id="left-right")
trapezoid = getattr(np, "trapezoid", getattr(np, "trapz", None))
case(trapezoid, normal(2, 5))
case(trapezoid, normal(5), value(np.array([0.0, 0.5, 1.5, 2.0, 4.0])), id="x")
case(trapezoid, normal(4, 3), value(None), value(0.5), value(0), id="dx-axis")
if getattr(np, "trapz", trapezoid) is not trapezoid:     # NumPy 2.0-2.3 have both names
    case(np.trapz, normal(2, 5), id="trapz")
case(np.polyval, normal(4), normal(3))
case(np.polyval, normal(1), normal(3), id="constant")

# --- sequences in, sequences out ----------------------------------------------------------------

for prim in [np.concatenate] + ([np.concat] if hasattr(np, "concat") else []):
    case(prim, arrays((2, 3), (4, 3)))
    case(prim, arrays((2, 3), (2, 1), (2, 2)), value(1), id="axis")
    case(prim, arrays((2, 3), (4,)), value(None), id="flat")
case(np.stack, arrays((2, 3), (2, 3), (2, 3)))
case(np.stack, arrays((2, 3), (2, 3)), value(-1), id="axis")
case(np.hstack, arrays((3,), (2,), ()))
case(np.hstack, arrays((2, 3), (2, 1)), id="2d")
case(np.vstack, arrays((3,), (2, 3)))
case(np.dstack, arrays((2, 3), (2, 3, 2)))
case(np.column_stack, arrays((3,), (3, 2)))
case(np.select, value([np.array([True, False, True]), np.array([True, True, False])]),
     arrays((3,), (3,)), normal(3))
case(np.select, value([np.array([True, False, False])]), arrays((2, 3)), value(0.0),
     id="broadcast")
case(np.linalg.multi_dot, arrays((2, 3), (3, 4), (4, 2)))
case(np.linalg.multi_dot, arrays((3,), (3, 4), (4, 2), (2,)), id="vectors")
case(np.linalg.multi_dot, arrays((3,), (3, 4), (4, 2)), id="row")
case(np.linalg.multi_dot, arrays((2, 3), (3, 4), (4, 5), (5, 1), (1, 3)), id="five")
for prim in (np.split, np.array_split):
    case(prim, normal(6, 2), value(3))
    case(prim, normal(2, 6), value([1, 4]), value(1), id="indices", unused=(1,))
case(np.array_split, normal(7), value(3), id="uneven")
case(np.hsplit, normal(2, 4), value(2))
case(np.hsplit, normal(4), value(2), id="1d", unused=(0,))
case(np.vsplit, normal(4, 2), value(2))
case(np.dsplit, normal(2, 2, 4), value([1]))
case(np.linalg.slogdet, square(3))
case(np.linalg.slogdet, square(3, 2), id="stacked")
case(np.linalg.eigh, spd(3))
case(np.linalg.eigh, spd(3), id="values", unused=(1,))
case(np.linalg.eigh, spd(3), id="vectors", unused=(0,))
case(np.linalg.eigh, spd(3, 2), value("U"), id="stacked-upper")
case(np.linalg.svd, normal(3, 3))
case(np.linalg.svd, normal(4, 3), id="tall-thin", full_matrices=False)
case(np.linalg.svd, normal(3, 5), id="wide-thin", full_matrices=False)
case(np.linalg.svd, normal(2, 4, 3), id="stacked-thin", full_matrices=False)
case(np.linalg.svd, normal(4, 3), id="tall-full-s-vt", unused=(0,))
case(np.linalg.svd, normal(3, 4), id="values-only", unused=(0, 2), full_matrices=False)
case(np.linalg.svd, normal(3, 4), id="vectors-only", unused=(1,), full_matrices=False)
case(np.linalg.svd, normal(3, 4), id="compute_uv-false", compute_uv=False)
case(np.linalg.svd, normal(2, 3, 3), id="compute_uv-false-stacked", compute_uv=False)
case(np.linalg.svd, spd(3), id="hermitian", hermitian=True)
case(np.linalg.svd, spd(3), id="hermitian-values", hermitian=True, compute_uv=False)
case(np.linalg.qr, square(3))
case(np.linalg.qr, normal(5, 3), id="tall")
case(np.linalg.qr, normal(3, 5), id="wide")
case(np.linalg.qr, normal(2, 4, 3), id="stacked")
case(np.linalg.qr, normal(2, 3, 4), id="stacked-wide")
case(np.linalg.qr, normal(5, 3), id="r", mode="r")
case(np.linalg.qr, normal(3, 5), id="r-wide", mode="r")
case(np.linalg.qr, normal(3, 4), value("complete"), id="complete-wide")
case(np.linalg.qr, normal(5, 3), id="q-only", unused=(1,))
case(np.linalg.eig, real_spectrum(3))
case(np.linalg.eig, real_spectrum(4, 2), id="stacked")
case(np.linalg.eig, real_spectrum(3), id="values", unused=(1,))
case(np.linalg.eig, real_spectrum(3), id="vectors", unused=(0,))
case(np.linalg.eigvals, real_spectrum(3))
case(np.linalg.eigvals, real_spectrum(4, 2), id="stacked")
case(np.linalg.lstsq, normal(5, 3), normal(5))
case(np.linalg.lstsq, normal(5, 3), normal(5, 2), id="matrix-b")
case(np.linalg.lstsq, square(3), normal(3), id="square")
case(np.linalg.lstsq, normal(3, 5), normal(3), id="wide")
case(np.linalg.lstsq, normal(3, 5), normal(3, 2), id="wide-matrix-b")
case(np.linalg.lstsq, normal(5, 3), normal(5, 2), id="solution-only", unused=(1, 3))

# --- the runtime helpers generated code calls (rules/runtime.py: grad of grad) ------------
rt = runtime
case(rt.unbroadcast, normal(4, 3), normal(3), id="sum-down")
case(rt.unbroadcast, normal(3, 1), normal(1, 4), id="both-ways")
case(rt.unbroadcast, normal(3), normal(2, 3), id="broadcast-up")
case(rt.unreduce, normal(3), normal(4, 3), value(0))
case(rt.unreduce, normal(4, 1), normal(4, 3), value(1), value(True), id="keepdims")
case(rt.unreduce, normal(), normal(2, 3), id="all")
case(rt.unreduce, normal(2, 3), normal(2, 3), id="same-shape")     # (the identity)
case(rt.reduce_like, normal(4, 3), normal(3), value(0))
case(rt.reduce_like, normal(4, 3), normal(4, 3), id="same-shape")
case(rt.reduce_like, normal(4, 3), normal(), id="all")
case(rt.reduce_like, normal(4, 3), normal(4, 1), value(1), value(True), id="keepdims")
case(rt.unbroadcast_each, normal(3), normal(2, 3), id="array")
case(rt.as_float, normal(3), normal(3))
case(rt.mT, normal(2, 3, 4))
case(rt.copied, normal(2, 3))
# (on arrays: the harness compares results of one shape; lists in test_higher_order.py)
case(rt.item_adjoint, normal(3, 2), value(1), normal(2))
case(rt.scatter_item, normal(2), normal(3, 2), value(1))
case(builtins.tuple, normal(3, 2), id="rows")
case(builtins.list, normal(3, 2), id="rows")
case(rt.sequence_adjoint, arrays((2,), (2,), (2,)), normal(3, 2))
case(rt.sequence_parts, normal(3, 2), normal(3, 2))
case(rt.max_of, normal(4))
case(rt.min_of, normal(4))
_ITEMS = np.array([0.3, 1.2, -0.5, 1.2])
case(rt.picked, normal(), value(_ITEMS), value(1.2), fixed=(1, 2))
case(rt.item_of, normal(4), value(_ITEMS), value(-0.5), fixed=(1, 2))
case(rt.add_trees, normal(3), normal(3))
# (lists joined and repeated: test_fuzz_regressions.py; here their NumPy cases)
case(rt.joined_part, normal(2, 3), normal(3), normal(2, 3), value(1))
case(rt.repeated_part, normal(2, 3), normal(3), normal(2, 1))
case(rt.repeated_part, normal(3), normal(3), normal(), id="scalar")
case(rt.joined_whole, normal(2, 3), normal(2, 3), normal(2, 3), normal(3), value(0),
     fixed=(1, 2, 3))
case(rt.joined_whole, normal(3), normal(2, 3), normal(2, 3), normal(3), value(1),
     fixed=(1, 2, 3), id="broadcast")
case(rt.repeated_whole, normal(3), normal(2, 3), normal(3), normal(2, 1), fixed=(1, 2))
case(rt.fitted, normal(2, 3), normal(2, 3), fixed=(1,))
case(rt.field, normal(3), value("real"), fixed=(1,))
case(rt.tree_item, arrays((3,), (2,)), value(1), fixed=(1,))
case(rt.tree_with, normal(3), value("real"), normal(3), fixed=(0, 1))
case(rt.transpose_grad, normal(2, 3, 4), value((1, 2, 0)))
case(rt.transpose_grad, normal(2, 3), id="reverse")
case(rt.cast_grad, normal(3), normal(3), value(np.float32))
for prim in (rt.matmul_grad_left, rt.matmul_grad_right, rt.dot_grad_left, rt.dot_grad_right):
    case(prim, normal(2, 4), normal(2, 3), normal(3, 4))
    case(prim, normal(4), normal(3), normal(3, 4), id="vector-matrix")
    case(prim, normal(2), normal(2, 3), normal(3), id="matrix-vector")
case(rt.matmul_grad_left, normal(5, 2, 4), normal(5, 2, 3), normal(3, 4), id="stacked")
case(rt.matmul_grad_right, normal(5, 2, 4), normal(5, 2, 3), normal(5, 3, 4), id="stacked")
case(rt.inner_grad_a, normal(2, 4), normal(2, 3), normal(4, 3))
case(rt.inner_grad_b, normal(2, 4), normal(2, 3), normal(4, 3))
case(rt.tensordot_grad_a, normal(2, 5), normal(2, 3, 4), normal(3, 4, 5))
case(rt.tensordot_grad_b, normal(2, 5), normal(2, 3, 4), normal(3, 4, 5))
# integers: the choice is piecewise constant in x and ans (their rule is 0.0), and a finite
# difference that moves x off ans would jump
_X = np.array([[5, 20, -10, 20], [15, 2, 3, -4], [-20, -30, -10, -25]])
case(rt.choose_grad, normal(3), value(np.max(_X, axis=1)), value(_X), value(1))
case(rt.written_part, normal(4), value(np.array([1, 3, 1])))
case(rt.written_back, normal(3), value(np.array([1, 3, 1])), normal(4))
case(rt.median_grad, normal(3), normal(3, 5), value(1))
case(rt.cumsum_grad, normal(3, 4), normal(3, 4), value(1))
case(rt.cumsum_grad, normal(12), normal(3, 4), id="flat")
case(rt.take_grad, normal(4), normal(5), value(np.array([0, 3, 3, -1])))
case(rt.tile_grad, normal(2, 6), normal(3), value((2, 2)))
case(rt.repeat_grad, normal(6), normal(3), value(2))
case(rt.add_at, normal(5), value(np.array([0, 3, 3])), normal(3))
case(rt.add_at, normal(2, 3), value(1), normal(3), id="row")
case(rt.index_part, normal(5), value(np.array([0, 3, 3])), normal(3))
case(rt.index_part, normal(2, 3), value(1), normal(1), id="broadcast")
case(rt.old_item, normal(5), value(np.array([0, 3, 3])))
case(rt.old_item, arrays((3,), (2,)), value(1), id="list")
case(rt.old_item_back, normal(3), normal(5), value(np.array([0, 3, 3])), fixed=(1,))
case(rt.sort_grad, normal(3, 4), normal(3, 4))
case(rt.sort_grad, normal(3, 4), normal(3, 4), value(0), id="axis")
case(rt.sort_grad, normal(12), normal(3, 4), value(None), id="flat")
case(rt.sorted_like, normal(3, 4), normal(3, 4))
case(rt.sorted_like, normal(3, 4), normal(3, 4), value(None), id="flat")
case(rt.take_along_axis_grad, normal(3, 2), normal(3, 4),
     value(np.array([[0, 3], [1, 1], [2, 0]])))
case(rt.pad_grad, normal(5, 6), normal(3, 4), value(((1, 1), (2, 0))), value("edge"))
case(rt.pad_grad, normal(6), normal(4), value(1), id="constant")
case(rt.diff_grad, normal(2, 4), normal(2, 5))
case(rt.diff_grad, normal(3), normal(5), value(2), id="n")
case(rt.diff_grad, normal(6), normal(4), id="prepend", prepend=0.5, append=np.array([1.0, 2.0]))
case(diff_padded, normal(2, 5))
case(diff_padded, normal(5), value(2), id="n")
case(diff_padded, normal(4), id="prepend", prepend=0.5, append=np.array([1.0, 2.0]))
case(rt.rollaxis_grad, normal(3, 2, 4), normal(2, 4, 3), value(2))
case(rt.einsum_grad, normal(2, 4), value(0), value("ij,jk->ik"), normal(2, 3), normal(3, 4))
case(rt.einsum_grad, normal(3), value(1), value("ij,jk,k->i"), normal(3, 2), normal(2, 4),
     normal(4), id="three")
case(rt.einsum_grad, normal(3), value(0), value("ii->i"), normal(3, 3), id="diagonal")
# third order (rules/third_order.py): einsums with one operand replaced by t
case(einsum_with, value(1), normal(3, 4), value("ij,jk->ik"), normal(2, 3), normal(3, 4))
case(einsum_with, value(0), normal(3, 2), value("ij,jk,k->i"), normal(3, 2), normal(2, 4),
     normal(4), id="three")
case(einsum_grad_with, normal(2, 4), value(0), value(1), normal(3, 4), value("ij,jk->ik"),
     normal(2, 3), normal(3, 4))
case(einsum_grad_with, normal(3), value(1), value(2), normal(4), value("ij,jk,k->i"),
     normal(3, 2), normal(2, 4), normal(4), id="three")
# their general forms (positions known at run time): where[j] replaced by t_j, first wins
_NONE6 = (value(None),) * 6
case(einsum_replacing, value("ij,jk->ik"), value((1,)), normal(2, 3), normal(3, 4), *_NONE6,
     normal(3, 4))
case(einsum_replacing, value("ij,jk,k->i"), value((2, 0, 2)), normal(3, 2), normal(2, 4),
     normal(4), value(None), value(None), value(None), value(None), value(None), normal(4),
     normal(3, 2), normal(4), id="shadowed")
case(einsum_grad_replacing, normal(2, 4), value(0), value("ij,jk->ik"), value((1,)),
     normal(2, 3), normal(3, 4), *_NONE6, normal(3, 4))
case(einsum_grad_replacing, normal(3), value(1), value("ij,jk,k->i"), value((1, 2)),
     normal(3, 2), normal(2, 4), normal(4), value(None), value(None), value(None), value(None),
     value(None), normal(2, 4), normal(4), id="own")
case(unless_in, normal(2, 3), value(1), value((0, 2)))
case(unless_in, normal(3), value(2), value((0, 2)), id="zero")
case(rt.unbroadcast_sum, normal(2, 3), normal(3), id="array")
case(rt.bessel_i1, normal(5))
case(rt.bessel_i1, value(np.array([0.0, -1.5, 3.0])), id="zero")
# (a and its partition, whose elements partition_grad finds by value: not perturbed)
_A = np.array([0.3, -1.2, 2.0, 0.7, -0.1])
case(partition_grad, normal(5), value(np.partition(_A, 1)), value(_A), fixed=(1, 2))
case(partition_tangent_of, normal(5), value(np.partition(_A, 3)), value(_A), fixed=(1, 2))
_XP = np.array([0.0, 1.0, 2.5, 3.0])
case(rt.interp_grad_fp, normal(7), uniform(-0.5, 3.5, 7), value(_XP), normal(4))
case(rt.interp_grad_fp, normal(7), uniform(-0.5, 3.5, 7), value(_XP), normal(4), id="ends",
     left=0.5, right=-1.0)
case(rt.interp_linear_part, uniform(-0.5, 3.5, 7), value(_XP), normal(4))
case(rt.interp_linear_part, uniform(-0.5, 3.5, 7), value(_XP), normal(4), id="ends",
     left=0.5, right=-1.0)


# --- complex values (rules/complex_numbers.py) and the FFTs (rules/numpy/fft.py) -----------------

for shape in SHAPES:
    label = "x".join(map(str, shape)) or "scalar"
    for prim in (np.real, np.imag, np.conjugate):
        complex_case(prim, cnormal(*shape), id=label)
        complex_case(prim, normal(*shape), id=f"{label}-real")
    for prim in (np.abs, np.absolute, np.angle, np.sign):
        complex_case(prim, cnonzero(*shape), id=label)
        complex_case(prim, nonzero(*shape), id=f"{label}-real")
    complex_case(np.angle, cnonzero(*shape), value(True), id=f"{label}-deg")
    for prim, make in ((np.exp, cnormal), (np.log, cnonzero), (np.sqrt, cnonzero),
                       (np.sin, cnormal), (np.tanh, cnormal), (np.square, cnormal),
                       (np.reciprocal, cnonzero), (np.negative, cnormal)):
        complex_case(prim, make(*shape), id=label)
for a, b in BROADCAST:
    label = "-".join("x".join(map(str, s)) or "scalar" for s in (a, b))
    for prim in (operator.add, operator.sub, operator.mul):
        complex_case(prim, cnormal(*a), cnormal(*b), id=label)
        complex_case(prim, normal(*a), cnormal(*b), id=f"{label}-real-complex")
    complex_case(operator.truediv, cnormal(*a), cnonzero(*b), id=label)
    complex_case(operator.truediv, normal(*a), cnonzero(*b), id=f"{label}-real-complex")
    complex_case(operator.pow, cnonzero(*a), cnormal(*b), id=label)
for shape, kw in REDUCE:
    label = "x".join(map(str, shape)) + "".join(f"-{k}{v}" for k, v in kw.items())
    complex_case(np.sum, cnormal(*shape), id=label, **kw)
    complex_case(np.mean, cnormal(*shape), id=label, **kw)
complex_case(np.vdot, cnormal(2, 3), cnormal(3, 2))
complex_case(np.vdot, cnormal(3), cnormal(3), id="1d")
complex_case(np.vdot, normal(3), cnormal(3), id="real-complex")
complex_case(np.dot, cnormal(2, 3), cnormal(3, 4))
complex_case(np.dot, cnormal(3), cnormal(3), id="1d")
complex_case(operator.matmul, cnormal(2, 3), cnormal(3, 4), id="matmul")
complex_case(operator.matmul, cnormal(5, 2, 3), normal(3, 4), id="matmul-stacked-real")
complex_case(runtime.astype, normal(2, 3), value(np.complex128), id="to-complex")
complex_case(runtime.astype, cnormal(2, 3), value(np.float64), id="to-real")
complex_case(runtime.astype, cnormal(3), value(np.complex64), id="complex64", rtol=1e-3,
             eps=1e-3)
if hasattr(np, "astype"):
    complex_case(np.astype, normal(2, 3), value(np.complex128), id="to-complex")

NORMS = (None, "backward", "ortho", "forward")
for norm in NORMS:
    label = norm or "default"
    for prim in (np.fft.fft, np.fft.ifft):
        case(prim, normal(6), id=f"real-{label}", norm=norm)
        complex_case(prim, cnormal(6), id=label, norm=norm)
        complex_case(prim, cnormal(6), value(4), id=f"truncated-{label}", norm=norm)
        complex_case(prim, cnormal(3, 5), value(8), value(0), id=f"padded-axis0-{label}",
                     norm=norm)
    case(np.fft.rfft, normal(7), id=f"odd-{label}", norm=norm)
    case(np.fft.rfft, normal(3, 6), value(4), value(0), id=f"axis0-truncated-{label}",
         norm=norm)
    case(np.fft.rfft, normal(2, 5), value(8), id=f"padded-{label}", norm=norm)
    complex_case(np.fft.irfft, cnormal(5), id=f"{label}", norm=norm)
    complex_case(np.fft.irfft, cnormal(4), value(7), id=f"odd-n-{label}", norm=norm)
    complex_case(np.fft.irfft, cnormal(3, 6), value(6), value(0), id=f"axis0-short-{label}",
                 norm=norm)
    complex_case(np.fft.irfft, cnormal(2, 3), value(10), id=f"padded-{label}", norm=norm)
    for prim in (np.fft.fft2, np.fft.ifft2, np.fft.fftn, np.fft.ifftn):
        case(prim, normal(3, 4), id=f"real-{label}", norm=norm)
        complex_case(prim, cnormal(2, 3, 4), id=label, norm=norm)
        complex_case(prim, cnormal(3, 4), value((5, 2)), value((0, 1)), id=f"s-{label}",
                     norm=norm)
        complex_case(prim, cnormal(3, 4, 2), value((2, 6)), value((0, 2)), id=f"axes-{label}",
                     norm=norm)
complex_case(np.fft.fftn, cnormal(2, 3, 4), value(None), value((1,)), id="one-axis")
for norm in NORMS:      # the real-input transforms of several axes and the Hermitian ones
    label = norm or "default"
    for prim in (np.fft.rfft2, np.fft.rfftn):
        case(prim, normal(3, 5), id=f"odd-{label}", norm=norm)
        case(prim, normal(2, 4, 3), value((5, 2)), value((1, 0)), id=f"s-axes-{label}",
             norm=norm)
        case(prim, normal(4, 6), value((3, 8)), value((0, 1)), id=f"cut-padded-{label}",
             norm=norm)
    case(np.fft.rfftn, normal(2, 3, 4), id=f"three-{label}", norm=norm)
    case(np.fft.rfftn, normal(3, 4), value((-1, 5)), value((0, 0)), id=f"same-axis-{label}",
         norm=norm)
    for prim in (np.fft.irfft2, np.fft.irfftn):
        complex_case(prim, cnormal(3, 4), id=f"{label}", norm=norm)
        complex_case(prim, cnormal(4, 3), value((3, 5)), value((0, 1)), id=f"odd-s-{label}",
                     norm=norm)
        complex_case(prim, cnormal(2, 3, 4), value((6, 2)), value((2, 0)),
                     id=f"s-axes-{label}", norm=norm)
        complex_case(prim, cnormal(3, 3), value((5, 8)), value((-2, -1)), id=f"padded-{label}",
                     norm=norm)
    complex_case(np.fft.irfftn, cnormal(2, 3, 4), id=f"three-{label}", norm=norm)
    complex_case(np.fft.hfft, cnormal(5), id=f"{label}", norm=norm)
    complex_case(np.fft.hfft, cnormal(4), value(7), id=f"odd-n-{label}", norm=norm)
    complex_case(np.fft.hfft, cnormal(3, 4), value(10), value(0), id=f"padded-axis0-{label}",
                 norm=norm)
    complex_case(np.fft.hfft, cnormal(2, 6), value(4), id=f"short-{label}", norm=norm)
    case(np.fft.ihfft, normal(7), id=f"odd-{label}", norm=norm)
    case(np.fft.ihfft, normal(3, 6), value(4), value(0), id=f"axis0-truncated-{label}",
         norm=norm)
    case(np.fft.ihfft, normal(2, 5), value(8), id=f"padded-{label}", norm=norm)
# real functions of complex values that reduce, sorting and choosing (complex_numbers.py)
for shape, kw in (((5,), {}), ((3, 4), {"axis": 0}), ((3, 4), {"axis": 1, "keepdims": True}),
                  ((2, 3), {"ddof": 1})):
    label = "x".join(map(str, shape)) + "".join(f"-{k}{v}" for k, v in kw.items())
    complex_case(np.var, cnormal(*shape), id=label, **kw)
    complex_case(np.std, cnormal(*shape), id=label, **kw)
for ord_, shape, axis in ((None, (5,), None), (None, (3, 4), None), (1, (5,), None),
                          (np.inf, (5,), None), (3, (5,), None), (2, (3, 4), 1),
                          ("fro", (3, 4), None), ("nuc", (3, 4), None), (2, (3, 4), None),
                          (1, (3, 4), None), (np.inf, (2, 3, 4), (1, 2))):
    label = f"ord{ord_}-" + "x".join(map(str, shape)) + f"-axis{axis}"
    complex_case(np.linalg.norm, cnonzero(*shape), value(ord_), value(axis), id=label)
    complex_case(np.linalg.norm, nonzero(*shape), value(ord_), value(axis), id=f"{label}-real")
if hasattr(np.linalg, "vector_norm"):
    complex_case(np.linalg.vector_norm, cnonzero(3, 4), id="axis1", axis=1)
    complex_case(np.linalg.matrix_norm, cnonzero(2, 3, 4), id="fro")
    complex_case(np.linalg.matrix_norm, cnonzero(3, 4), id="nuc", ord="nuc")
complex_case(np.sort, cnormal(6))
complex_case(np.sort, cnormal(3, 4), value(0), id="axis0")
complex_case(np.maximum, cnormal(3, 4), cnormal(4), id="broadcast")
complex_case(np.minimum, cnormal(5), normal(5), id="real-complex")
# the helpers of complex mode and the FFTs' adjoints (rules/complex_helpers.py: grad of grad)
case(rt.real_only, normal(2, 3), value("f"), lambda r: (r.normal(size=3), 2))
complex_case(rt.real_only, cnormal(3), value("f"), lambda r: (r.normal(size=3),))
complex_case(rt.real_like, cnormal(3), normal(3), id="to-real")
complex_case(rt.real_like, normal(2, 3), cnormal(2, 3), id="to-complex")
complex_case(rt.real_like, cnormal(2, 3), cnormal(3), id="complex")
case(rt.abs_squared, normal(2, 3))
complex_case(rt.abs_squared, cnormal(2, 3))
complex_case(rt.abs_squared, cnormal(), id="scalar")
complex_case(rt.abs_squared, normal(4), id="real")
complex_case(rt.complex_sign, cnonzero(2, 3))
complex_case(rt.complex_sign, nonzero(4), id="real")
complex_case(rt.complex_sign_reciprocal, cnonzero(2, 3))
complex_case(rt.complex_sign_reciprocal, nonzero(4), id="real")
complex_case(rt.fft_grad, cnormal(8), cnormal(6), value(-1), value("ortho"), value(np.fft.ifft),
             id="padded")
complex_case(rt.fft_grad, cnormal(2, 3), cnormal(5, 3), value(0), value(None), value(None),
             id="truncated")
complex_case(rt.fftn_grad, cnormal(5, 2), cnormal(3, 4), value((5, 2)), value((0, 1)),
             value("forward"), value(np.fft.ifftn))
complex_case(rt.rfft_grad, cnormal(4), normal(7), value(None), value(-1), value("ortho"))
complex_case(rt.rfft_grad, cnormal(3, 5), normal(3, 6), value(8), value(-1), value(None),
             id="padded")
complex_case(rt.irfft_grad, normal(8), cnormal(5), value(None), value(-1), value(None))
complex_case(rt.irfft_grad, normal(2, 7), cnormal(2, 4), value(7), value(-1),
             value("forward"), id="odd")
complex_case(rt.rfftn_grad, cnormal(2, 5, 3), normal(2, 4, 3), value((5, 2)), value((1, 0)),
             value("ortho"))
complex_case(rt.irfftn_grad, normal(3, 6), cnormal(3, 4), value(None), value(None),
             value(None))
complex_case(rt.hfft_grad, normal(8), cnormal(5), value(None), value(-1), value("forward"))
complex_case(rt.ihfft_grad, cnormal(4), normal(7), value(None), value(-1), value(None))
complex_case(np.fft.fftshift, cnormal(4, 5))
complex_case(np.fft.ifftshift, cnormal(4, 5), value(1), id="axis")


def rotation_spectrum(n, *batch):
    """A real matrix with complex (distinct) eigenvalues: a scaled rotation plus noise."""
    def make(r):
        a = r.normal(size=batch + (n, n)) * 0.3
        a[..., 0, 1] -= 1.5
        a[..., 1, 0] += 1.5
        return a
    return make


complex_case(np.linalg.eigvals, rotation_spectrum(3))
complex_case(np.linalg.eigvals, rotation_spectrum(3, 2), id="stacked")
complex_case(np.linalg.eigvals, cnormal(3, 3), id="complex-matrix")
complex_case(np.linalg.eigvals, real_spectrum(3), id="real-spectrum")
complex_case(np.linalg.eig, rotation_spectrum(3), id="values", unused=(1,))
complex_case(np.linalg.eig, rotation_spectrum(3), id="vectors")
complex_case(np.linalg.eig, cnormal(2, 3, 3), id="complex-matrix-vectors")
complex_case(np.linalg.eig, cnormal(2, 3, 3), id="complex-matrix-values", unused=(1,))
complex_case(np.linalg.eig, real_spectrum(3), id="real-spectrum")


def chermitian(n, *batch):
    """A Hermitian positive definite complex matrix."""
    def make(r):
        a = r.normal(size=batch + (n, n)) + 1j * r.normal(size=batch + (n, n))
        return a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)
    return make


# svd's and eigh's vectors have a phase per column that LAPACK chooses: a random adjoint
# of them depends on it, so their rows here are of the values (and of Q and R, which are
# unique); tests/test_complex_decompositions.py checks the vectors with losses that do
# not depend on the phases
complex_case(np.linalg.svd, cnormal(4, 3), id="values", unused=(0, 2), full_matrices=False)
complex_case(np.linalg.svd, cnormal(2, 3, 4), id="compute_uv-false", compute_uv=False)
complex_case(np.linalg.svd, chermitian(3), id="hermitian-values", compute_uv=False,
             hermitian=True)
complex_case(np.linalg.svd, normal(3, 4), id="real", full_matrices=False)
if hasattr(np.linalg, "svdvals"):
    complex_case(np.linalg.svdvals, cnormal(3, 4))
    complex_case(np.linalg.svdvals, cnormal(2, 4, 3), id="stacked")
complex_case(np.linalg.qr, cnormal(4, 3))
complex_case(np.linalg.qr, cnormal(3, 3), id="square")
complex_case(np.linalg.qr, cnormal(3, 5), id="wide")
complex_case(np.linalg.qr, cnormal(2, 4, 3), id="stacked")
complex_case(np.linalg.qr, cnormal(3, 5), id="r", mode="r")
complex_case(np.linalg.qr, cnormal(3, 4), value("complete"), id="complete-wide")
complex_case(np.linalg.qr, normal(4, 3), id="real")
complex_case(np.linalg.cholesky, chermitian(3))
complex_case(np.linalg.cholesky, chermitian(3, 2), id="stacked")
complex_case(np.linalg.cholesky, chermitian(3), id="upper", upper=True)
complex_case(np.linalg.cholesky, spd(3), id="real")
complex_case(np.linalg.eigvalsh, chermitian(3))
complex_case(np.linalg.eigvalsh, chermitian(3, 2), value("U"), id="stacked-upper")
complex_case(np.linalg.eigh, chermitian(3), id="values", unused=(1,))
complex_case(np.linalg.eigh, chermitian(3, 2), value("U"), id="stacked-upper-values",
             unused=(1,))
complex_case(np.linalg.eigh, spd(3), id="real")
