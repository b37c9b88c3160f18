"""The rule table's rows for SciPy functions (imported only when SciPy is installed)."""
import inspect

import numpy as np
import scipy.linalg
import scipy.signal
import scipy.special as sp
import scipy.stats as stats

from sgcompiler.rules.scipy import stats as scipy_stats
from sgcompiler.runtime.scipy import linalg as scipy_linalg_helpers

from rule_cases import (BROADCAST, REDUCE, SHAPES, case, ints, normal, positive, spd,
                        square, uniform, unit, value)

UNARY = [
    ("expit", normal), ("logit", lambda *s: uniform(0.1, 0.9, *s)), ("log_expit", normal),
    ("softplus", normal), ("erf", normal), ("erfc", normal), ("erfcx", normal),
    ("erfinv", unit), ("erfcinv", lambda *s: uniform(0.1, 1.9, *s)), ("ndtr", normal),
    ("log_ndtr", normal), ("ndtri", lambda *s: uniform(0.1, 0.9, *s)), ("gammaln", positive),
    ("gamma", positive), ("digamma", positive), ("psi", positive), ("entr", positive),
    ("i0", normal), ("i1", lambda *s: uniform(0.5, 2.0, *s)), ("i0e", normal),
    ("i1e", lambda *s: uniform(0.5, 2.0, *s)),
]
BINARY = [
    ("xlogy", normal, positive), ("xlog1py", normal, positive), ("betaln", positive, positive),
    ("beta", positive, positive), ("rel_entr", positive, positive),
    ("kl_div", positive, positive), ("huber", positive, normal),
    ("pseudo_huber", positive, normal),
]
for name, dom in UNARY:
    if hasattr(sp, name):
        for shape in SHAPES:
            case(getattr(sp, name), dom(*shape), id=str(shape))
for name, d1, d2 in BINARY:
    for s1, s2 in BROADCAST:
        case(getattr(sp, name), d1(*s1), d2(*s2), id=f"{s1}-{s2}")
case(sp.polygamma, value(1), positive(2, 3))
case(sp.polygamma, value(0), positive(3), id="0")
for shape, kw in REDUCE:
    case(sp.logsumexp, normal(*shape), id=f"{shape}-{kw}", **kw)
case(sp.logsumexp, normal(2, 3), value(1), positive(2, 3), id="b")
case(sp.logsumexp, normal(2, 3), value(None), positive(3), id="b-broadcast")
case(sp.logsumexp, normal(2, 3), value(0), positive(2, 1), id="b-keepdims", keepdims=True)
for prim in (sp.softmax, sp.log_softmax):
    case(prim, normal(4))
    case(prim, normal(2, 3), value(1), id="axis")
    case(prim, normal(2, 3, 2), value((0, 2)), id="axes")

case(scipy.linalg.inv, square(3))
if "assume_a" in inspect.signature(scipy.linalg.inv).parameters:      # SciPy 1.17
    case(scipy.linalg.inv, spd(3), id="pos", assume_a="pos", lower=True)
case(scipy.linalg.det, square(3))
case(scipy.linalg.solve, square(3), normal(3))
case(scipy.linalg.solve, square(3), normal(3, 2), id="matrix")
case(scipy.linalg.solve, square(3), normal(3, 2), id="transposed", transposed=True)
case(scipy.linalg.solve, spd(3), normal(3), id="sym", assume_a="sym")
case(scipy.linalg.solve, spd(3), normal(3, 2), id="pos-lower", assume_a="pos", lower=True)
case(scipy.linalg.solve_triangular, square(3), normal(3))
case(scipy.linalg.solve_triangular, square(3), normal(3, 2), id="lower-trans", lower=True,
     trans=1)
case(scipy.linalg.solve_triangular, square(3), normal(3), id="unit", unit_diagonal=True)
case(scipy.linalg.solve_triangular, square(4), normal(4, 2), id="upper-C-unit", trans="C",
     unit_diagonal=True)
case(scipy.linalg.solve, square(4), normal(4), id="transposed-vector", transposed=True)
case(scipy.linalg.inv, square(4), id="4")
case(scipy.linalg.cholesky, spd(3))
case(scipy.linalg.cholesky, spd(3), id="lower", lower=True)
case(scipy.linalg.eigvalsh, spd(3))
case(scipy.linalg.eigvalsh, spd(3), id="upper", lower=False)
case(scipy.linalg.expm, lambda r: 0.5 * r.normal(size=(3, 3)))
case(scipy.linalg.expm, lambda r: 0.5 * r.normal(size=(5, 5)), id="5")
case(scipy.linalg.sqrtm, spd(3))
# (expm's gradient helper: grad of grad and hessian through expm)
case(scipy_linalg_helpers.expm_grad, normal(3, 3), lambda r: 0.5 * r.normal(size=(3, 3)))
case(scipy.linalg.sqrtm, spd(5), id="5")
# (block_diag's gradient helper and its transpose: second and third order through block_diag)
case(scipy_linalg_helpers.block_diag_grad, normal(5, 5), value(1), normal(2, 3), normal(3, 2))
case(scipy_linalg_helpers.block_diag_grad, normal(3, 4), value(0), normal(2, 2), normal(2),
     id="row")
case(scipy_linalg_helpers.block_diag_place, normal(3, 2), value(1), normal(5, 5),
     normal(2, 3), normal(3, 2))
case(scipy.linalg.det, square(5), id="5")
case(scipy.linalg.cholesky, spd(5), id="5")
case(scipy.linalg.eigvalsh, spd(5), id="5")

# Bessel functions: the order (first argument) gets no gradient and is not checked here;
# x > 0, since jv, iv and ive of a negative x are nan for an order that is not a whole number
for name, order, dom in [("jv", normal, positive), ("yv", normal, positive),
                         ("iv", normal, positive), ("ive", normal, positive),
                         ("kv", normal, positive), ("kve", normal, positive)]:
    for s1, s2 in BROADCAST:
        case(getattr(sp, name), order(*s1), dom(*s2), id=f"{s1}-{s2}")
case(sp.yn, ints(0, 4, 2, 3), positive(2, 3))
case(sp.yn, value(2), positive(4), id="scalar-order")
for name, dom in [("j0", normal), ("j1", normal), ("y0", positive), ("y1", positive),
                  ("rgamma", normal)]:
    for shape in SHAPES:
        case(getattr(sp, name), dom(*shape), id=str(shape))
for name in ("gammainc", "gammaincc"):
    for s1, s2 in BROADCAST:
        case(getattr(sp, name), positive(*s1), positive(*s2), id=f"{s1}-{s2}")
case(sp.betainc, positive(2, 3), positive(3), uniform(0.1, 0.9, 2, 3))
case(sp.betainc, positive(), positive(4), uniform(0.1, 0.9, 4), id="broadcast")
case(sp.zeta, uniform(1.5, 4.0, 2, 3), positive(2, 3))
case(sp.zeta, value(3.0), positive(4), id="scalar-x")

# --- scipy.stats -----------------------------------------------------------------------------
# x, loc and scale keep z = (x - loc) / scale inside the support: z > 0 for the one-sided
# families, 0 < z < 1 for beta (x in (0.2, 0.6), loc in (-0.1, 0.1), scale in (1.5, 2))
SUPPORT = {"expon": (0.2, 1.0), "chi2": (0.2, 1.0), "gamma": (0.2, 1.0),
           "lognorm": (0.2, 1.0), "beta": (0.2, 0.6)}
SHAPE_DOMAIN = {"df": lambda *s: uniform(1.5, 6.0, *s), "a": lambda *s: uniform(1.2, 3.0, *s),
                "b": lambda *s: uniform(1.2, 3.0, *s), "s": lambda *s: uniform(0.5, 1.5, *s)}
STATS_SHAPES = [((2, 3), (3,), (2, 1)), ((4,), (), ()), ((), (), ())]
for family, shape_params in scipy_stats.FAMILIES.items():
    lo, hi = SUPPORT.get(family, (-2.0, 2.0))
    bounded = family in SUPPORT
    loc = (lambda *s: uniform(-0.1, 0.1, *s)) if bounded else normal
    scale = lambda *s: uniform(1.5, 2.0, *s)      # noqa: E731
    for method in scipy_stats.METHODS:
        prim = getattr(getattr(stats, family), method)
        for sx, sp_, ss in STATS_SHAPES:
            shapes = [SHAPE_DOMAIN[p](*sp_) for p in shape_params]
            case(prim, uniform(lo, hi, *sx), *shapes, loc(*sp_), scale(*ss),
                 id=f"{family}-{sx}-{sp_}-{ss}")
        shapes = [SHAPE_DOMAIN[p](3) for p in shape_params]
        case(prim, uniform(max(lo, 0.3), hi, 3), *shapes, id=f"{family}-defaults")

for method in ("logpmf", "pmf", "cdf", "logcdf", "sf", "logsf"):
    prim = getattr(stats.poisson, method)
    case(prim, ints(0, 6, 2, 3), uniform(0.5, 4.0, 3), id=f"poisson-{method}")
    if method != "logpmf":      # (-inf between the integers)
        case(prim, value(np.array([0.5, 2.5, 3.0, 7.0])), uniform(0.5, 4.0),
             id=f"poisson-{method}-float-k")
    case(prim, ints(1, 7, 4), uniform(0.5, 4.0, 4), id=f"poisson-{method}-loc", loc=1)


def simplex(k, *n):
    return lambda r: r.dirichlet(np.ones(k), size=n).T if n else r.dirichlet(np.ones(k))


# x stays on the simplex (SciPy refuses other points): its gradient is checked in
# tests/test_scipy_rules.py along directions inside it
for prim in (stats.dirichlet.logpdf, stats.dirichlet.pdf):
    case(prim, simplex(3), positive(3), fixed=(0,), id="dirichlet")
    case(prim, simplex(4, 5), positive(4), fixed=(0,), id="dirichlet-points")


def open_simplex(k, *n):
    """K-1 components of a point inside the simplex (SciPy adds the last, 1 - sum): any
    small step keeps it inside, so x's gradient is checked too."""
    return lambda r: simplex(k, *n)(r)[:-1] * 0.9 + 0.1 / k


for prim in (stats.dirichlet.logpdf, stats.dirichlet.pdf):
    case(prim, open_simplex(3), positive(3), id="dirichlet-k-1")
    case(prim, open_simplex(4, 5), positive(4), id="dirichlet-k-1-points")

for prim in (stats.multivariate_normal.logpdf, stats.multivariate_normal.pdf):
    case(prim, normal(3), normal(3), spd(3), id="mvn")
    case(prim, normal(4, 3), normal(3), spd(3), id="mvn-points")
    case(prim, normal(2, 4, 3), normal(3), positive(3), id="mvn-diagonal")
    case(prim, normal(5), value(None), positive(), id="mvn-1d-scalar-cov")
    case(prim, normal(4, 2), normal(2), positive(), id="mvn-scalar-cov")

# the cdf: in one and two dimensions SciPy's value is accurate to about 1e-15 (its
# integral of one dimension converges at once), so finite differences of it check the
# rule; in three and more tests/test_mvn_cdf.py steps wider, with tighter tolerances
# (an older SciPy's cdf takes random_state=, not rng=: its cdf has no rule there)
_CDF_RULES = "rng" in inspect.signature(stats.multivariate_normal.cdf).parameters
for prim in (stats.multivariate_normal.cdf, stats.multivariate_normal.logcdf)[:2 * _CDF_RULES]:
    case(prim, normal(2), normal(2), spd(2), id="mvn")
    case(prim, normal(4, 2), normal(2), spd(2), id="mvn-points")
    case(prim, normal(3, 2), normal(2), positive(2), id="mvn-diagonal")
    case(prim, normal(5), value(None), positive(), id="mvn-1d-scalar-cov")
    case(prim, normal(2, 3, 2), value(None), spd(2), id="mvn-stacked-no-mean")


def banded(lower, upper, n):
    """A diagonally dominant banded matrix in solve_banded's storage."""
    def make(r):
        ab = r.normal(size=(lower + upper + 1, n))
        ab[upper] += 4.0
        return ab
    return make


case(scipy.linalg.cho_factor, spd(3), unused=(1,))
case(scipy.linalg.cho_factor, spd(4), unused=(1,), id="lower", lower=True)
# cho_solve's and lu_solve's factor arguments are tuples: tests/test_scipy_rules.py checks
# them through cho_factor and lu_factor
case(scipy.linalg.cho_solve, lambda r: scipy.linalg.cho_factor(spd(3)(r)), normal(3))
case(scipy.linalg.cho_solve, lambda r: scipy.linalg.cho_factor(spd(3)(r), lower=True),
     normal(3, 2), id="lower")
case(scipy.linalg.lu_factor, square(3), unused=(1,))
case(scipy.linalg.lu_factor, lambda r: r.normal(size=(4, 4)), unused=(1,), id="pivots")
case(scipy.linalg.lu_solve, lambda r: scipy.linalg.lu_factor(square(3)(r)), normal(3))
case(scipy.linalg.lu_solve, lambda r: scipy.linalg.lu_factor(square(3)(r)), normal(3, 2),
     id="trans", trans=1)
case(scipy.linalg.solve_sylvester, square(3), square(2), normal(3, 2))
case(scipy.linalg.solve_sylvester, square(3), square(3), normal(3, 3), id="square")
case(scipy.linalg.solve_banded, value((1, 1)), banded(1, 1, 5), normal(5))
case(scipy.linalg.solve_banded, value((2, 1)), banded(2, 1, 5), normal(5, 2), id="2-1")
case(scipy.linalg.solve_banded, value((0, 2)), banded(0, 2, 4), normal(4), id="upper")
case(scipy.linalg.block_diag, normal(2, 3), normal(1, 2))
case(scipy.linalg.block_diag, normal(2, 2), normal(3), normal(), normal(2, 1), id="mixed")
case(scipy.linalg.block_diag, normal(3, 2), id="one")

for prim in (scipy.signal.convolve, scipy.signal.correlate):
    for mode in ("full", "same", "valid"):
        case(prim, normal(6), normal(3), id=f"1d-{mode}", mode=mode)
        case(prim, normal(4, 5), normal(2, 3), id=f"2d-{mode}", mode=mode)
        case(prim, normal(3), normal(5), id=f"smaller-first-{mode}", mode=mode)
    case(prim, normal(7), normal(4), id="fft", method="fft")
