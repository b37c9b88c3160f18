"""More NumPy and SciPy functions spelled with the array API standard
(runtime/spellings.py), on array_api_strict arrays: atleast_1d/2d/3d, fliplr, flipud, rot90,
rollaxis, append, delete, compress, extract, trapezoid, polyval, select, bincount,
convolve, correlate, np.gradient (numbers or coordinates as spacings), np.i0, heaviside's gradient (a product with
a comparison) and scipy.special's xlogy, xlog1py, rel_entr, kl_div, huber, pseudo_huber,
softmax and log_softmax, and scipy.stats's norm, logistic, laplace, cauchy, expon and
lognorm (pdf, logpdf, cdf, logcdf, sf, logsf; the normal cdf from a series and a continued
fraction of erfc), and scipy.linalg's inv, solve, solve_triangular, cholesky, eigvalsh,
cho_factor, cho_solve, block_diag, expm, expm_frechet, sqrtm and solve_sylvester,
np.real_if_close, and a rule's product with
np.equal (bessel_i1's), scipy.special's gammaln, gamma, digamma, psi, betaln, beta, zeta and
polygamma (shifts, then Stirling's and Euler-Maclaurin's series), scipy.stats's t, chi2,
gamma and beta (pdf, logpdf) and poisson, np.pad's edge, reflect, symmetric and wrap
modes, scipy.signal's convolve and correlate of any number of axes. Each gradient on strict arrays is the NumPy gradient, which is
checked here against finite differences too, on several shapes, with broadcasting; the
spellings are checked against NumPy's and SciPy's own values. What stays outside the
standard (partition, eigvals, pad's modes that compute) is refused, naming the function."""
import numpy as np
import pytest

from gradcheck import numeric_grad
from sgcompiler import SGCompilerError, grad
from sgcompiler.runtime import bessel_i1

xps = pytest.importorskip("array_api_strict", reason="array-api-strict is not installed")
special = pytest.importorskip("scipy.special", reason="SciPy is not installed")


def at_least(x, w):
    return np.sum(np.atleast_2d(x) * w) + np.sum(np.atleast_3d(x) ** 2) + \
        np.sum(np.atleast_1d(x) ** 3)


def flipped(x, w):
    return np.sum(np.fliplr(x) * w) + np.sum(np.flipud(x) ** 2 * w)


def rotated(x, w):
    return np.sum(np.rot90(x) * w) + np.sum(np.rot90(x, 2) ** 2) + \
        np.sum(np.rot90(x, -1) ** 3)


def rotated_on_axes(x, w):
    return np.sum(np.rot90(x, 1, axes=(2, 0)) ** 2 * w)


def rolled(x, w):
    return np.sum(np.rollaxis(x, 2) * w) + np.sum(np.rollaxis(x, 0, 3) ** 2)


def appended(x, w):
    return np.sum(np.append(x, x ** 2, axis=0) * w) + np.sum(np.append(x, 1.5) ** 2)


def deleted(x, w):
    return np.sum(np.delete(x, [0, 2], axis=1) * w) + np.sum(np.delete(x, 1) ** 2)


def compressed(x, w):
    return np.sum(np.compress([True, False, True], x, axis=1) * w) + \
        np.sum(np.compress(np.array([False, True]), x) ** 2)


CHECKERED = np.array([[True, False, True], [False, True, False], [True, False, True]])


def extracted(x, w):
    return np.sum(np.extract(CHECKERED, x) ** 2) * w[0]


def bessel(x, w):
    return np.sum(np.i0(x) * w)


def integrated(x, w):
    return np.sum(np.trapezoid(x * w, axis=0)) + np.sum(np.trapezoid(x ** 2, dx=0.5)) + \
        np.sum(np.trapezoid(x, x=np.linspace(0.0, 2.0, x.shape[-1])))


def polynomial(x, w):
    return np.sum(np.polyval(w, x))


def selected(x, w):
    return np.sum(np.select([x > 0.5, x < -0.5], [x ** 2, x * w], default=1.5) * w)


def counted(x, w):
    return np.sum(np.bincount(np.array([0, 2, 2, 4]), weights=x, minlength=6) * w)


def convolved(x, w):
    return np.sum(np.convolve(x, w) ** 2) + np.sum(np.convolve(x, w, "same")) + \
        np.sum(np.convolve(w, x, "valid") ** 3)


def correlated(x, w):
    return np.sum(np.correlate(x, w, "full") ** 2) + np.sum(np.correlate(x, w)) + \
        np.sum(np.correlate(x, w, "same") ** 2)


def differentiated(x, w):
    return np.sum(np.gradient(x, axis=0) * w) + np.sum(np.gradient(x, 0.5, axis=-1) ** 2)


def differentiated_twice(x, w):
    return np.sum(np.gradient(x, edge_order=2)[0] * w)


def stepped(x, w):
    return np.sum(np.heaviside(x, w) * np.sin(w))


def entropies(x, w):
    p, q = x ** 2 + 0.1, w ** 2 + 0.2
    return np.sum(special.xlogy(p, q)) + np.sum(special.xlog1py(q, p)) + \
        np.sum(special.rel_entr(p, q)) + np.sum(special.kl_div(q, p) ** 2)


def robust(x, w):
    return np.sum(special.huber(np.abs(w) + 0.3, x) * w) + \
        np.sum(special.pseudo_huber(np.abs(w) + 0.3, x) ** 2)


def softmaxed(x, w):
    return np.sum(special.softmax(x, axis=-1) * w) + np.sum(special.log_softmax(x) * w)


CASES = [
    (at_least, (3,), (1, 3)), (at_least, (), ()), (at_least, (2, 3), (2, 3)),
    (flipped, (2, 3), (2, 3)), (flipped, (3, 2, 2), (2,)),
    (rotated, (2, 3), (3, 2)), (rotated, (2, 2, 3), (2, 2, 3)),
    (rotated_on_axes, (2, 3, 4), (1, 3, 2)),
    (rolled, (2, 3, 4), (4, 2, 3)), (appended, (2, 3), (4, 3)), (appended, (3,), (1,)),
    (deleted, (2, 4), (2, 2)), (deleted, (3, 3), (3, 1)),
    (compressed, (2, 3), (2, 2)), (compressed, (3, 3), (2,)), (extracted, (3, 3), (2,)),
    (integrated, (4, 3), (4, 3)), (integrated, (3, 5), (5,)),
    (polynomial, (2, 3), (4,)), (polynomial, (), (2,)),
    (selected, (3, 4), (3, 4)), (selected, (5,), (1,)),
    (counted, (4,), (6,)),
    (convolved, (5,), (3,)), (convolved, (2,), (4,)), (correlated, (6,), (4,)),
    (correlated, (5,), (3,)),
    (differentiated, (4, 3), (4, 3)), (differentiated, (5, 2), (2,)),
    (differentiated_twice, (4, 5), (5,)),
    (bessel, (2, 3), (3,)), (bessel, (4,), (1,)),
    (stepped, (2, 3), (3,)), (stepped, (4,), (4,)),
    (entropies, (2, 3), (3,)), (entropies, (4,), (4,)),
    (robust, (2, 3), (3,)), (robust, (5,), (1,)),
    (softmaxed, (2, 3), (2, 3)), (softmaxed, (4,), (4,)),
]


def _values(f, shape, w_shape):
    rng = np.random.default_rng(len(shape) * 7 + sum(shape) + len(w_shape))
    x, w = rng.normal(size=shape), rng.normal(size=w_shape)
    if f in (selected, stepped):        # (no value at a jump of the choice)
        x = np.where(np.abs(np.abs(x) - 0.5) < 0.1, x + 0.25, x)
        x = np.where(np.abs(x) < 0.1, x + 0.3, x)
    if f is robust:                     # (no residual at the kink |x| == delta)
        x = np.where(np.abs(np.abs(x) - np.abs(w) - 0.3) < 0.1, x * 1.5, x)
    return np.asarray(x, dtype=float), np.asarray(w, dtype=float)


@pytest.mark.parametrize("f, shape, w_shape", CASES,
                         ids=[f"{c[0].__name__}-{c[1]}-{c[2]}" for c in CASES])
def test_gradient_on_strict_arrays_is_numpys_and_right(f, shape, w_shape):
    x, w = _values(f, shape, w_shape)
    _same_and_right(f, x, w)


def _names():
    from sgcompiler.runtime.namespace import numpy_names
    return numpy_names(xps)


A = np.arange(12.0).reshape(3, 4) - 4.5
MASK = np.array([[True, False, False, True], [False, True, True, False],
                 [True, True, False, False]])


@pytest.mark.parametrize("call", [
    lambda m, a: m.atleast_1d(a[0, 0]), lambda m, a: m.atleast_2d(a[0, :]),
    lambda m, a: m.atleast_3d(a), lambda m, a: m.atleast_3d(a[0, :]),
    lambda m, a: m.fliplr(a), lambda m, a: m.flipud(a),
    lambda m, a: m.rot90(a), lambda m, a: m.rot90(a, 3), lambda m, a: m.rot90(a, 6),
    lambda m, a: m.rollaxis(m.reshape(a, (3, 2, 2)), 2, 1),
    lambda m, a: m.rollaxis(m.reshape(a, (3, 2, 2)), -1, -3),
    lambda m, a: m.append(a, a), lambda m, a: m.append(a, a[:1, :], axis=0),
    lambda m, a: m.delete(a, 1, axis=0), lambda m, a: m.delete(a, slice(0, 3, 2), axis=1),
    lambda m, a: m.delete(a, [-1, 0]), lambda m, a: m.compress([0, 1, 1], a, axis=0),
    lambda m, a: m.compress([True, False, True], a),
    lambda m, a: m.extract(MASK, a), lambda m, a: m.flatnonzero(a > 0),
    lambda m, a: m.trapezoid(a), lambda m, a: m.trapezoid(a, axis=0, dx=0.25),
    lambda m, a: m.trapezoid(a, x=a[0, :] ** 2),
    lambda m, a: m.polyval(a[0, :], a), lambda m, a: m.polyval([2.0, -1.0, 0.5], a),
    lambda m, a: m.select([a > 1, a < -2], [a, a ** 2], default=-7.0),
    lambda m, a: m.select([MASK], [a]),
    lambda m, a: m.bincount(np.array([1, 1, 3])),
    lambda m, a: m.bincount(np.array([0, 4, 4, 2]), weights=a[0, :], minlength=7),
    lambda m, a: m.convolve(a[0, :], a[1, :3]), lambda m, a: m.convolve(a[1, :2], a[0, :], "same"),
    lambda m, a: m.convolve(a[0, :], a[2, :], "valid"), lambda m, a: m.convolve(a[0, :], a[1, :3], "same"),
    lambda m, a: m.correlate(a[0, :], a[1, :3]), lambda m, a: m.correlate(a[0, :], a[1, :2], "same"),
    lambda m, a: m.correlate(a[0, :], a[1, :3], "same"), lambda m, a: m.correlate(a[1, :2], a[0, :], "full"),
    lambda m, a: m.gradient(a)[1], lambda m, a: m.gradient(a, 2.0, axis=0),
    lambda m, a: m.gradient(a, edge_order=2)[0], lambda m, a: m.gradient(a[0, :], 0.5, edge_order=2),
    lambda m, a: m.heaviside(a, 0.5), lambda m, a: m.i0(a), lambda m, a: m.i0(a * 8.0),
], ids=["atleast_1d", "atleast_2d", "atleast_3d", "atleast_3d-vector", "fliplr", "flipud",
        "rot90", "rot90-3", "rot90-6", "rollaxis", "rollaxis-negative", "append",
        "append-axis", "delete", "delete-slice", "delete-flat", "compress", "compress-flat",
        "extract", "flatnonzero", "trapezoid", "trapezoid-dx", "trapezoid-x", "polyval",
        "polyval-list", "select", "select-mask", "bincount", "bincount-weights",
        "convolve", "convolve-same-short", "convolve-valid", "convolve-same",
        "correlate", "correlate-same-even", "correlate-same", "correlate-full-swapped",
        "gradient", "gradient-spacing", "gradient-edge2", "gradient-edge2-spacing",
        "heaviside", "i0", "i0-large"])
def test_spellings_are_numpys(call):
    want = call(np, A)
    names = _names()
    got = call(names, xps.asarray(A))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13, atol=1e-13)
    assert np.asarray(got).dtype == np.asarray(want).dtype


@pytest.mark.parametrize("name", ["xlogy", "xlog1py", "rel_entr", "kl_div", "huber",
                                  "pseudo_huber"])
def test_special_functions_are_scipys_on_edges(name):
    x = np.array([0.0, 0.0, 1.5, 2.0, -1.0, 0.5, 3.0, 0.0, -0.0, 2.0])
    y = np.array([0.0, 2.0, 0.7, -1.0, 2.0, 0.0, 3.0, -1.0, 1.0, 1e-300])
    with np.errstate(all="ignore"):
        want = getattr(special, name)(x, y)
        got = np.asarray(getattr(_names().special, name)(xps.asarray(x), xps.asarray(y)))
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-300, equal_nan=True)


def test_softmax_is_scipys():
    a = xps.asarray(A)
    for axis in (None, 0, -1, (0, 1)):
        np.testing.assert_allclose(np.asarray(_names().special.softmax(a, axis=axis)),
                                   special.softmax(A, axis=axis), rtol=1e-13)
        np.testing.assert_allclose(np.asarray(_names().special.log_softmax(a, axis=axis)),
                                   special.log_softmax(A, axis=axis), rtol=1e-13)


def partitioned(x, w):
    return np.sum(np.partition(x, 1) * w)


@pytest.mark.parametrize("f, w_shape, name", [(partitioned, (3,), "partition")])
def test_what_the_standard_lacks_is_refused_by_name(f, w_shape, name):
    x = np.array([0.3, -1.2, 0.8])
    w = np.ones(w_shape)
    grad(f)(x, w)
    with pytest.raises(SGCompilerError, match=f"numpy.{name}.*array_api_strict"):
        grad(f)(xps.asarray(x), xps.asarray(w))


def test_numpy_code_still_calls_numpy():
    x, w = _values(rotated, (2, 3), (3, 2))
    g = grad(rotated)
    g(x, w)
    assert "np.rot90(" in g.source and "xp." not in g.source


# --- scipy.stats: the location-scale families with elementary densities and tails --------
stats = pytest.importorskip("scipy.stats", reason="SciPy is not installed")


def normal_family(x, w):
    s = 1.5 + w ** 2
    return np.sum(stats.norm.logpdf(x, w, s) * w) + np.sum(stats.norm.pdf(x, w, s)) + \
        np.sum(stats.norm.cdf(x, w, s) * w) + np.sum(stats.norm.logcdf(x, loc=w, scale=s)) + \
        np.sum(stats.norm.sf(x * 3.0, w) ** 2) + np.sum(stats.norm.logsf(x, w, s) * w) + \
        np.sum(stats.norm.logcdf(x * 9.0 - 6.0)) + np.sum(stats.norm.logsf(x * 9.0 + 6.0))


def logistic_family(x, w):
    s = 1.5 + w ** 2
    return np.sum(stats.logistic.logpdf(x, w, s) * w) + np.sum(stats.logistic.pdf(x, w, s)) + \
        np.sum(stats.logistic.cdf(x, w, s) * w) + np.sum(stats.logistic.logcdf(x, w, s)) + \
        np.sum(stats.logistic.sf(x, loc=w) ** 2) + np.sum(stats.logistic.logsf(x, w, s) * w)


def laplace_family(x, w):
    s = 1.5 + w ** 2
    return np.sum(stats.laplace.logpdf(x, w, s) * w) + np.sum(stats.laplace.pdf(x, w, s)) + \
        np.sum(stats.laplace.cdf(x, w, s) * w) + np.sum(stats.laplace.logcdf(x, w, s)) + \
        np.sum(stats.laplace.sf(x, w, s) ** 2) + np.sum(stats.laplace.logsf(x, scale=s) * w)


def cauchy_family(x, w):
    s = 1.5 + w ** 2
    return np.sum(stats.cauchy.logpdf(x, w, s) * w) + np.sum(stats.cauchy.pdf(x, w, s)) + \
        np.sum(stats.cauchy.cdf(x, w, s) * w) + np.sum(stats.cauchy.logcdf(x, w, s)) + \
        np.sum(stats.cauchy.sf(x, w, s) ** 2) + np.sum(stats.cauchy.logsf(x * 4.0, w) * w)


def expon_family(x, w):         # (x > 0.5, loc in (-0.2, 0.2): inside the support)
    s = 1.5 + w ** 2
    loc = 0.2 * np.tanh(w)
    return np.sum(stats.expon.logpdf(x, loc, s) * w) + np.sum(stats.expon.pdf(x, loc, s)) + \
        np.sum(stats.expon.cdf(x, loc, s) * w) + np.sum(stats.expon.logcdf(x, loc, s)) + \
        np.sum(stats.expon.sf(x, scale=s) ** 2) + np.sum(stats.expon.logsf(x, loc, s) * w) + \
        np.sum(stats.expon.logcdf(x * 30.0, loc))


def lognorm_family(x, w):       # (x > 0.5, loc in (-0.2, 0.2))
    s, scale = 0.5 + w ** 2, 1.5 + np.sin(w)
    loc = 0.2 * np.tanh(w)
    return np.sum(stats.lognorm.logpdf(x, s, loc, scale) * w) + \
        np.sum(stats.lognorm.pdf(x, s, loc, scale)) + \
        np.sum(stats.lognorm.cdf(x, s, loc, scale) * w) + \
        np.sum(stats.lognorm.logcdf(x, s, loc=loc)) + \
        np.sum(stats.lognorm.sf(x, s, loc, scale) ** 2) + \
        np.sum(stats.lognorm.logsf(x, s, scale=scale) * w)


FAMILY_CASES = [(f, shape, w_shape) for f in (normal_family, logistic_family, laplace_family,
                                              cauchy_family, expon_family, lognorm_family)
                for shape, w_shape in (((2, 3), (3,)), ((4,), (4,)), ((3, 1), (1, 2)))]


@pytest.mark.parametrize("f, shape, w_shape", FAMILY_CASES,
                         ids=[f"{c[0].__name__}-{c[1]}-{c[2]}" for c in FAMILY_CASES])
def test_stats_gradient_on_strict_arrays_is_numpys_and_right(f, shape, w_shape):
    rng = np.random.default_rng(len(shape) * 5 + sum(shape) + len(w_shape))
    x, w = rng.normal(size=shape), rng.normal(size=w_shape)
    if f in (expon_family, lognorm_family):
        x = np.abs(x) + 0.5
    if f is laplace_family:             # (no value at the kink x == loc)
        x = np.where(np.abs(x - w) < 0.1, x + 0.3, x)
    _same_and_right(f, x, w)


POINTS = np.concatenate([np.linspace(-40.0, 40.0, 161), [0.0, -0.0, 1e-300, 1.5, -1.5, 7.5,
                                                         -7.5, np.nan, np.inf, -np.inf]])


@pytest.mark.parametrize("family", ["norm", "logistic", "laplace", "cauchy", "expon",
                                    "lognorm"])
@pytest.mark.parametrize("method", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"])
def test_stats_functions_are_scipys(family, method):
    """Inside and outside the support, far in the tails, at NaN and infinities, and with
    a scale that is not positive (NaN, as SciPy gives)."""
    spelled = getattr(getattr(_names().stats, family), method)
    shape = (0.7,) if family == "lognorm" else ()
    for loc, scale in ((0.0, 1.0), (0.3, 2.0), (-1.0, 0.25), (0.0, -1.0), (0.0, 0.0)):
        with np.errstate(all="ignore"):
            want = getattr(getattr(stats, family), method)(POINTS, *shape, loc, scale)
            got = np.asarray(spelled(xps.asarray(POINTS), *shape, loc=loc, scale=scale))
        assert got.dtype == np.float64 and got.shape == want.shape
        big = np.abs(want) > 1e-290     # (SciPy's normal tails round to 0 sooner)
        np.testing.assert_allclose(got[big], want[big], rtol=1e-12)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_array_equal(got[~big & ~np.isnan(want)] == np.inf,
                                      want[~big & ~np.isnan(want)] == np.inf)
        assert np.all(np.abs(got[~big & np.isfinite(want)]) < 1e-290)


def test_stats_positional_loc_and_scale():
    names = _names().stats
    x = xps.asarray(A)
    for method in ("logpdf", "cdf", "logsf"):
        np.testing.assert_allclose(np.asarray(getattr(names.lognorm, method)(x, 0.5, -5.0, 2.0)),
                                   getattr(stats.lognorm, method)(A, 0.5, -5.0, 2.0),
                                   rtol=1e-13)
        np.testing.assert_allclose(np.asarray(getattr(names.norm, method)(x, 1.0)),
                                   getattr(stats.norm, method)(A, 1.0), rtol=1e-13)


def t_tail(x, w):
    return np.sum(stats.t.cdf(x, 3.0, w) * w)


def test_other_distributions_are_refused_by_name():
    x, w = np.array([0.3, -1.2, 0.8]), np.array([0.5, 0.1, -0.2])
    grad(t_tail)(x, w)
    with pytest.raises(SGCompilerError, match=r"scipy\.stats\.t\.cdf"):
        grad(t_tail)(xps.asarray(x), xps.asarray(w))
    with pytest.raises(SGCompilerError, match=r"scipy\.stats\.weibull_min .*array_api_strict"):
        _names().stats.weibull_min
    with pytest.raises(SGCompilerError, match=r"scipy\.stats\.t\.cdf .*array_api_strict"):
        _names().stats.t.cdf


# --- scipy.linalg: the functions the standard's linalg extension spells ------------------
scipy_linalg = pytest.importorskip("scipy.linalg", reason="SciPy is not installed")
INV_ASSUMES = "assume_a" in __import__("inspect").signature(scipy_linalg.inv).parameters


def solved(a, b):
    n = a.shape[0]
    spd = a @ a.T + n * np.eye(n)
    t = a + 3.0 * np.eye(n)
    x = scipy_linalg.solve(t, b) + scipy_linalg.solve(t, b, transposed=True) + \
        scipy_linalg.solve(spd, b, assume_a="pos", lower=True) + \
        scipy_linalg.solve(t, b, assume_a="sym")
    y = scipy_linalg.solve_triangular(t, b) + \
        scipy_linalg.solve_triangular(t, b, lower=True, trans="T") + \
        scipy_linalg.solve_triangular(t, b, trans=1, unit_diagonal=True)
    return np.sum(x * b) + np.sum(y ** 2) + np.sum(scipy_linalg.inv(t) * a)


def solved_symmetric(a, b):     # (inv's assume_a: SciPy 1.17)
    spd = a @ a.T + a.shape[0] * np.eye(a.shape[0])
    return np.sum(scipy_linalg.inv(spd, assume_a="pos", lower=True) * b) + \
        np.sum(scipy_linalg.inv(a + spd, assume_a="sym") * b)


def factored(a, b):
    n = a.shape[0]
    spd = a @ a.T + n * np.eye(n)
    c = scipy_linalg.cho_factor(spd + a * 0.1)
    c_lower = scipy_linalg.cho_factor(spd, lower=True)
    return np.sum(scipy_linalg.cholesky(spd + 0.1 * a) * a) + \
        np.sum(scipy_linalg.cholesky(spd, lower=True) ** 2) + \
        np.sum(scipy_linalg.eigvalsh(spd + 0.1 * a) ** 2) + \
        np.sum(scipy_linalg.eigvalsh(spd, lower=False) * np.linspace(0.0, 1.0, n)) + \
        np.sum(scipy_linalg.cho_solve(c, b) * b) + np.sum(scipy_linalg.cho_solve(c_lower, b))


def blocks(a, b):
    out = scipy_linalg.block_diag(a, b, a[0, :])
    return np.sum(out ** 2 * np.linspace(0.0, 1.0, out.shape[0])[:, None]) + \
        np.sum(scipy_linalg.block_diag(b) * b)


LINALG_CASES = [(solved, (3, 3), (3,)), (solved, (4, 4), (4, 2)),
                (factored, (3, 3), (3,)), (factored, (4, 4), (4, 3)),
                (blocks, (2, 2), (3,)), (blocks, (3, 3), (2, 1))]
if INV_ASSUMES:
    LINALG_CASES += [(solved_symmetric, (3, 3), (3, 3)), (solved_symmetric, (4, 4), (1, 4))]


@pytest.mark.parametrize("f, shape, w_shape", LINALG_CASES,
                         ids=[f"{c[0].__name__}-{c[1]}-{c[2]}" for c in LINALG_CASES])
def test_scipy_linalg_gradient_on_strict_arrays_is_numpys_and_right(f, shape, w_shape):
    rng = np.random.default_rng(len(shape) * 3 + sum(shape) + len(w_shape))
    x, w = rng.normal(size=shape), rng.normal(size=w_shape)
    _same_and_right(f, x, w)


M = np.array([[4.0, 1.0, -0.5], [0.3, 3.0, 0.2], [-0.7, 0.4, 5.0]])     # (not symmetric)
B = np.array([[1.0, -2.0], [0.5, 0.25], [3.0, 1.0]])


@pytest.mark.parametrize("call", [
    lambda s, a, b: s.inv(a), lambda s, a, b: s.solve(a, b),
    lambda s, a, b: s.solve(a, b[:, 0]), lambda s, a, b: s.solve(a, b, transposed=True),
    lambda s, a, b: s.solve(a, b, assume_a="sym"),
    lambda s, a, b: s.solve(a, b[:, 1], assume_a="pos", lower=True),
    lambda s, a, b: s.solve_triangular(a, b), lambda s, a, b: s.solve_triangular(a, b[:, 0], lower=True),
    lambda s, a, b: s.solve_triangular(a, b, trans="T", unit_diagonal=True),
    lambda s, a, b: s.solve_triangular(a, b, trans=2, lower=True),
    lambda s, a, b: s.cholesky(a), lambda s, a, b: s.cholesky(a, lower=True),
    lambda s, a, b: s.eigvalsh(a), lambda s, a, b: s.eigvalsh(a, lower=False),
    lambda s, a, b: s.cho_factor(a)[0], lambda s, a, b: s.cho_factor(a, lower=True)[0],
    lambda s, a, b: s.cho_solve(s.cho_factor(a), b),
    lambda s, a, b: s.cho_solve(s.cho_factor(a, lower=True), b[:, 0]),
    lambda s, a, b: s.block_diag(a, b, b[0, :], 2.0), lambda s, a, b: s.block_diag(b),
], ids=["inv", "solve", "solve-vector", "solve-transposed", "solve-sym", "solve-pos-lower",
        "solve_triangular", "solve_triangular-lower", "solve_triangular-T-unit",
        "solve_triangular-C-lower", "cholesky", "cholesky-lower", "eigvalsh",
        "eigvalsh-upper", "cho_factor", "cho_factor-lower", "cho_solve", "cho_solve-lower",
        "block_diag", "block_diag-one"])
def test_scipy_linalg_is_scipys(call):
    """SciPy reads one triangle of the matrix for the symmetric and triangular functions:
    M is not symmetric, so the spellings must read the same one."""
    want = call(scipy_linalg, M, B)
    got = call(_names().scipy_linalg, xps.asarray(M), xps.asarray(B))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13, atol=1e-14)
    assert np.asarray(got).shape == want.shape


def lu_solved(a, w):
    return np.sum(scipy_linalg.lu_solve(scipy_linalg.lu_factor(a), w) * w)


def test_other_scipy_linalg_functions_are_refused_by_name():
    a = np.eye(3) + 0.1
    grad(lu_solved)(a, a)
    with pytest.raises(SGCompilerError, match=r"lu_(factor|solve)\w* .*SciPy"):
        grad(lu_solved)(xps.asarray(a), xps.asarray(a))
    with pytest.raises(SGCompilerError, match=r"scipy\.linalg\.schur .*array_api_strict"):
        _names().scipy_linalg.schur


# --- a rule's product with np.equal (bessel_i1's, second order of np.i0), real_if_close ---
def first_bessel(x, w):
    return np.sum(bessel_i1(x) * w) + np.sum(bessel_i1(x * w) ** 2)


def nearly_real(x, w):
    return np.sum(np.real_if_close(x * w) * w) + np.sum(np.real_if_close(x, tol=1000) ** 2)


@pytest.mark.parametrize("f, shape, w_shape", [
    (first_bessel, (2, 3), (3,)), (first_bessel, (4,), (1,)), (first_bessel, (3,), (3,)),
    (nearly_real, (2, 3), (2, 3)), (nearly_real, (4,), (1,))])
def test_more_gradients_on_strict_arrays_are_numpys_and_right(f, shape, w_shape):
    x, w = _values(f, shape, w_shape)
    if f is first_bessel and shape == (3,):
        x = np.array([0.0, -1.5, 3.0])      # (I1' at 0 is 1/2: the np.equal term)
    _same_and_right(f, x, w)


def _same_and_right(f, x, w):
    want = grad(f, wrt=(0, 1))(x, w)
    for got, i in zip(want, (0, 1)):
        np.testing.assert_allclose(got, numeric_grad(f, (x, w), i), rtol=1e-6, atol=1e-7)
    got = grad(f, wrt=(0, 1))(xps.asarray(x), xps.asarray(w))
    for g, e, value in zip(got, want, (x, w)):
        assert type(g) is type(xps.asarray(x)) and g.dtype == xps.float64
        assert tuple(g.shape) == value.shape
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("values, tol", [
    ([2.1 + 4e-14j, 5.2 + 3e-15j], 1000), ([2.1 + 4e-13j, 5.2 + 3e-15j], 1000),
    ([1.0 + 0.0j, -2.0 + 1e-20j], 100), ([1.0 + 0.5j], 0.6), ([1.0 + 0.5j], 0.4),
    ([1.5, -2.0], 100)])
def test_real_if_close_is_numpys(values, tol):
    a = np.array(values)
    want = np.real_if_close(a, tol=tol)
    got = np.asarray(_names().real_if_close(xps.asarray(a), tol=tol))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


# --- the gamma function's family (scipy.special), and the distributions made of it -------
def gammas(x, w):
    p, q = x ** 2 + 0.5, w ** 2 + 0.3
    return np.sum(special.gammaln(p) * w) + np.sum(special.gamma(q) * x) + \
        np.sum(special.digamma(p) * q) + np.sum(special.psi(q) ** 2) + \
        np.sum(special.betaln(p, q) * w) + np.sum(special.beta(q, p + 1.0)) + \
        np.sum(special.polygamma(1, p) * w) + np.sum(special.polygamma(2, q)) + \
        np.sum(special.zeta(2.5, p) * x) + np.sum(special.gammaln(x - 3.3) * w)


def t_family(x, w):
    df, s = 2.5 + w ** 2, 1.5 + np.sin(w)
    return np.sum(stats.t.logpdf(x, df, w, s) * w) + np.sum(stats.t.pdf(x, df, scale=s)) + \
        np.sum(stats.t.logpdf(x, 4.0) ** 2)


def gamma_families(x, w):       # (x > 0.5, loc in (-0.2, 0.2))
    a, s = 1.5 + w ** 2, 1.5 + np.sin(w)
    loc = 0.2 * np.tanh(w)
    return np.sum(stats.gamma.logpdf(x, a, loc, s) * w) + np.sum(stats.gamma.pdf(x, a)) + \
        np.sum(stats.chi2.logpdf(x, a, loc, s) * w) + np.sum(stats.chi2.pdf(x, a, scale=s))


def beta_family(x, w):          # (x in (0.2, 0.6))
    a, b = 1.2 + w ** 2, 1.5 + np.cos(w) ** 2
    return np.sum(stats.beta.logpdf(x, a, b) * w) + np.sum(stats.beta.pdf(x, a, b, 0.05)) + \
        np.sum(stats.beta.logpdf(x, b, a, -0.1, 1.2) ** 2)


COUNTS = np.array([0, 1, 2, 3, 5, 8])


def poisson_family(x, w):       # (integer counts, as the arguments' library's array)
    mu, k = x ** 2 + 0.5, np.asarray(COUNTS)
    return np.sum(stats.poisson.logpmf(k, mu) * w) + np.sum(stats.poisson.pmf(k, mu)) + \
        np.sum(stats.poisson.cdf(k, mu) * w) + np.sum(stats.poisson.logcdf(k, mu)) + \
        np.sum(stats.poisson.sf(k, mu) * w) + np.sum(stats.poisson.logsf(k, mu)) + \
        np.sum(stats.poisson.logsf(k, mu * 20.0, 1) * w)


GAMMA_CASES = [(gammas, (2, 3), (3,)), (gammas, (4,), (4,)), (t_family, (2, 3), (3,)),
               (t_family, (4,), (1,)), (gamma_families, (2, 3), (3,)),
               (gamma_families, (3,), (3,)), (beta_family, (2, 3), (3,)),
               (beta_family, (4,), (1,)), (poisson_family, (6,), (6,)),
               (poisson_family, (2, 6), (6,))]


@pytest.mark.parametrize("f, shape, w_shape", GAMMA_CASES,
                         ids=[f"{c[0].__name__}-{c[1]}-{c[2]}" for c in GAMMA_CASES])
def test_gamma_family_gradient_on_strict_arrays_is_numpys_and_right(f, shape, w_shape):
    rng = np.random.default_rng(len(shape) * 11 + sum(shape) + len(w_shape))
    x, w = rng.normal(size=shape), rng.normal(size=w_shape)
    if f is gamma_families:
        x = np.abs(x) + 0.5
    if f is beta_family:
        x = rng.uniform(0.2, 0.6, size=shape)
    if f is gammas:                 # (gammaln of x - 3.3: away from the poles)
        x = np.clip(x, -1.0, 1.0)
    _same_and_right(f, x, w)


GRID = np.concatenate([np.linspace(-20.25, 40.0, 1211), [1e-8, 0.5, 1.0, 2.0, 170.5, 1e4]])


@pytest.mark.parametrize("name", ["gammaln", "gamma", "digamma", "psi"])
def test_gamma_functions_are_scipys(name):
    want = getattr(special, name)(GRID)
    got = np.asarray(getattr(_names().special, name)(xps.asarray(GRID)))
    near = np.abs(GRID - np.round(GRID)) < 0.01      # (next to a pole, as conditioned)
    np.testing.assert_allclose(got[~near], want[~near], rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(got[near], want[near], rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("name", ["gammaln", "gamma", "digamma"])
def test_gamma_functions_at_poles_and_infinities_are_scipys(name):
    x = np.array([0.0, -0.0, -1.0, -4.0, np.inf, -np.inf, np.nan])
    with np.errstate(all="ignore"):
        want = getattr(special, name)(x)
    got = np.asarray(getattr(_names().special, name)(xps.asarray(x)))
    np.testing.assert_array_equal(got, want)


def test_beta_zeta_polygamma_are_scipys():
    names = _names().special
    a, b = np.abs(GRID[::7]) + 1e-3, np.abs(GRID[::-7]) + 0.2
    np.testing.assert_allclose(np.asarray(names.betaln(xps.asarray(a), xps.asarray(b))),
                               special.betaln(a, b), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(names.beta(xps.asarray(a / 9.0), 0.7)),
                               special.beta(a / 9.0, 0.7), rtol=1e-12)
    c = np.array([-0.5, -1.5, -2.5, 0.3])
    np.testing.assert_allclose(np.asarray(names.beta(xps.asarray(c), 0.7)),
                               special.beta(c, 0.7), rtol=1e-12)
    for s in (1.5, 2.0, 3.0, 7.5):
        np.testing.assert_allclose(np.asarray(names.zeta(s, xps.asarray(a))),
                                   special.zeta(s, a), rtol=1e-13)
    np.testing.assert_allclose(float(names.zeta(3.0)), special.zeta(3.0), rtol=1e-14)
    for n in (0, 1, 2, 5):
        np.testing.assert_allclose(np.asarray(names.polygamma(n, xps.asarray(a))),
                                   special.polygamma(n, a), rtol=1e-12, atol=1e-13)
    with pytest.raises(SGCompilerError, match=r"zeta.*q <= 0.*array_api_strict"):
        names.zeta(2.0, xps.asarray(np.array([1.0, -0.5])))


@pytest.mark.parametrize("family, shapes", [("t", (3.5,)), ("t", (0.7,)), ("chi2", (2.0,)),
                                            ("chi2", (0.8,)), ("chi2", (5.5,)),
                                            ("gamma", (1.0,)), ("gamma", (0.4,)),
                                            ("gamma", (3.5,)), ("beta", (0.5, 2.5)),
                                            ("beta", (1.0, 1.0)), ("beta", (3.0, 0.8))])
@pytest.mark.parametrize("method", ["logpdf", "pdf"])
def test_gamma_distributions_are_scipys(family, shapes, method):
    spelled = getattr(getattr(_names().stats, family), method)
    x = np.concatenate([np.linspace(-3.0, 12.0, 121), [0.0, 1.0, 1e-9, np.nan, np.inf]])
    for loc, scale in ((0.0, 1.0), (0.3, 2.0), (-1.0, 0.25), (0.0, -1.0)):
        with np.errstate(all="ignore"):
            want = getattr(getattr(stats, family), method)(x, *shapes, loc, scale)
            got = np.asarray(spelled(xps.asarray(x), *shapes, loc=loc, scale=scale))
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300)
    with np.errstate(all="ignore"):     # (a shape parameter that is not positive: NaN)
        want = getattr(getattr(stats, family), method)(x, *(-s for s in shapes))
        got = np.asarray(spelled(xps.asarray(x), *(-s for s in shapes)))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))


@pytest.mark.parametrize("mu", [0.0, 0.3, 2.5, 17.0, 150.0])
@pytest.mark.parametrize("method", ["pmf", "logpmf", "cdf", "logcdf", "sf", "logsf"])
def test_poisson_is_scipys(mu, method):
    """Against SciPy's values where they keep their digits: its logcdf is log(cdf) and its
    logsf log(sf), which lose them where the cdf (the sf) is near 1; there the spelling is
    compared with log1p(-sf) (log1p(-cdf)) of SciPy's sf (cdf), which keeps them."""
    k = np.array([-1.0, 0.0, 0.5, 1.0, 2.0, 3.7, 5.0, 10.0, 30.0, 60.0, -np.inf, np.nan])
    spelled = getattr(_names().stats.poisson, method)
    for loc in (0, 2):
        with np.errstate(all="ignore"):
            want = getattr(stats.poisson, method)(k, mu, loc)
            got = np.asarray(spelled(xps.asarray(k), mu, loc))
        with np.errstate(all="ignore"):
            cdf, sf = stats.poisson.cdf(k, mu, loc), stats.poisson.sf(k, mu, loc)
        if method == "logcdf":
            want = np.where(cdf > 0.5, np.log1p(-sf), want)
        if method == "logsf":
            want = np.where(sf > 0.5, np.log1p(-cdf), want)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300)
    np.testing.assert_array_equal(np.isnan(np.asarray(spelled(xps.asarray(k), -1.0))), True)


def test_poisson_sums_past_their_limit_are_refused():
    with pytest.raises(SGCompilerError, match=r"poisson.*terms.*array_api_strict"):
        _names().stats.poisson.cdf(xps.asarray(np.array([50000.0])), 3.0)


# --- np.pad's modes that copy elements ---------------------------------------------------
def padded(x, w):
    return np.sum(np.pad(x, 1, mode="edge") * w) + \
        np.sum(np.pad(x, (2, 3), mode="reflect") ** 2) + \
        np.sum(np.pad(x, ((0, 1),) + ((4, 2),) * (x.ndim - 1), mode="symmetric") ** 3) + \
        np.sum(np.pad(x ** 2, 5, mode="wrap")) * np.mean(w)


@pytest.mark.parametrize("shape, w_shape", [((3,), (5,)), ((2, 3), (4, 5)), ((3, 2), (1,))])
def test_pad_gradient_on_strict_arrays_is_numpys_and_right(shape, w_shape):
    rng = np.random.default_rng(sum(shape) + len(w_shape))
    x, w = rng.normal(size=shape), rng.normal(size=w_shape)
    if shape == (3, 2):         # (w broadcast against every padded x: one number)
        w = w.reshape(())
    _same_and_right(padded, x, w)


@pytest.mark.parametrize("mode", ["edge", "reflect", "symmetric", "wrap", "constant"])
@pytest.mark.parametrize("width", [1, (0, 2), ((2, 1), (3, 0)), 7, ((9, 4), (0, 5))])
def test_pad_modes_are_numpys(mode, width):
    a = A[:, :3] if mode != "constant" else A
    want = np.pad(a, width, mode=mode)
    got = np.asarray(_names().pad(xps.asarray(a), width, mode=mode))
    np.testing.assert_array_equal(got, want)


def test_pad_modes_that_compute_are_refused_by_name():
    for mode, options in (("maximum", {}), ("linear_ramp", {}), ("reflect",
                                                                 {"reflect_type": "odd"})):
        with pytest.raises(SGCompilerError, match=r"numpy\.pad.*array_api_strict"):
            _names().pad(xps.asarray(A), 1, mode=mode, **options)


# --- scipy.signal's convolve and correlate, of any number of axes -------------------------
signal = pytest.importorskip("scipy.signal", reason="SciPy is not installed")


def filtered(x, w):
    return np.sum(signal.convolve(x, w) ** 2) + np.sum(signal.convolve(x, w, "same") * x) + \
        np.sum(signal.correlate(x, w, "full") * 0.5) + \
        np.sum(signal.correlate(w, x, mode="same") ** 2) + \
        np.sum(signal.convolve(x, w, "valid") ** 3) + np.sum(signal.correlate(x, w, "valid"))


@pytest.mark.parametrize("shape, w_shape", [((5,), (3,)), ((3,), (5,)), ((4, 5), (2, 3)),
                                            ((2, 3), (4, 5)), ((3, 4, 2), (2, 2, 2))])
def test_signal_gradient_on_strict_arrays_is_numpys_and_right(shape, w_shape):
    rng = np.random.default_rng(sum(shape) * 3 + sum(w_shape))
    _same_and_right(filtered, rng.normal(size=shape), rng.normal(size=w_shape))


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("sa, sb", [((5,), (3,)), ((3,), (5,)), ((4, 5), (2, 3)),
                                    ((2, 3), (4, 5)), ((3, 4, 2), (2, 2, 2)), ((6,), (6,)),
                                    ((4, 2), (2, 4)), ((), ())])
def test_signal_functions_are_scipys(name, mode, sa, sb):
    rng = np.random.default_rng(len(sa) + sum(sa) * 5 + sum(sb))
    a, b = rng.normal(size=sa), rng.normal(size=sb)
    spelled = getattr(_names().scipy.signal, name)
    try:
        want = getattr(signal, name)(a, b, mode)
    except ValueError:          # ('valid' of operands neither of which is the larger)
        with pytest.raises(ValueError):
            spelled(xps.asarray(a), xps.asarray(b), mode)
        return
    got = np.asarray(spelled(xps.asarray(a), xps.asarray(b), mode))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def test_signal_of_complex_arrays_is_refused_by_name():
    z = xps.asarray(np.array([1.0 + 1.0j, 2.0]))
    with pytest.raises(SGCompilerError, match=r"scipy\.signal\.convolve.*array_api_strict"):
        _names().scipy.signal.convolve(z, z)


# --- expm (Pade), its Frechet derivative, sqrtm (Denman-Beavers), solve_sylvester ---------
def matrix_functions(a, b):
    n = a.shape[0]
    spd = a @ a.T + n * np.eye(n)
    return np.sum(scipy_linalg.expm(0.5 * a) * b) + np.sum(scipy_linalg.expm(a * 3.0) ** 2) * 1e-3 + \
        np.sum(scipy_linalg.sqrtm(spd) * b) + \
        np.sum(scipy_linalg.solve_sylvester(a + 3.0 * np.eye(n), b.T @ b + np.eye(n), a) * b)


@pytest.mark.parametrize("shape", [(2, 2), (3, 3), (5, 5)])
def test_matrix_functions_gradient_on_strict_arrays_is_numpys_and_right(shape):
    rng = np.random.default_rng(sum(shape))
    _same_and_right(matrix_functions, rng.normal(size=shape), rng.normal(size=shape))


@pytest.mark.parametrize("n, size", [(1, 1.0), (3, 0.5), (4, 3.0), (5, 0.01), (3, 20.0)])
def test_matrix_functions_are_scipys(n, size):
    rng = np.random.default_rng(n * 7 + int(size))
    a, e = rng.normal(size=(n, n)) * size, rng.normal(size=(n, n))
    names = _names().scipy_linalg
    want = scipy_linalg.expm(a)
    np.testing.assert_allclose(np.asarray(names.expm(xps.asarray(a))), want,
                               rtol=1e-12, atol=1e-12 * np.max(np.abs(want)))
    got_e, got_f = names.expm_frechet(xps.asarray(a), xps.asarray(e))
    want_e, want_f = scipy_linalg.expm_frechet(a, e)
    np.testing.assert_allclose(np.asarray(got_e), want_e, rtol=1e-12,
                               atol=1e-12 * np.max(np.abs(want_e)))
    np.testing.assert_allclose(np.asarray(got_f), want_f, rtol=1e-11,
                               atol=1e-12 * np.max(np.abs(want_f)))
    spd = a @ a.T + np.eye(n)
    np.testing.assert_allclose(np.asarray(names.sqrtm(xps.asarray(spd))), scipy_linalg.sqrtm(spd),
                               rtol=1e-12, atol=1e-13)
    b, q = rng.normal(size=(n + 1, n + 1)) + 3.0 * np.eye(n + 1), rng.normal(size=(n, n + 1))
    np.testing.assert_allclose(
        np.asarray(names.solve_sylvester(xps.asarray(a + 3.0 * np.eye(n)), xps.asarray(b),
                                         xps.asarray(q))),
        scipy_linalg.solve_sylvester(a + 3.0 * np.eye(n), b, q), rtol=1e-12, atol=1e-12)


def test_matrix_functions_outside_what_they_spell_are_refused():
    names = _names().scipy_linalg
    with pytest.raises(SGCompilerError, match=r"sqrtm.*not real.*array_api_strict"):
        names.sqrtm(xps.asarray(np.array([[-1.0, 0.0], [0.0, 2.0]])))
    big = xps.asarray(np.eye(70))
    with pytest.raises(SGCompilerError, match=r"solve_sylvester.*4096.*array_api_strict"):
        names.solve_sylvester(big, big, big)


# --- helpers of runtime modules imported after the table of bound helpers was made --------
from sgcompiler.runtime import namespace as _namespace            # noqa: E402
from sgcompiler.runtime.scipy.linalg import expm_grad             # noqa: E402


def through_expm_grad(a, g):
    return np.sum(expm_grad(g, a) ** 2)


def test_helpers_of_runtime_modules_imported_later_run_bound():
    """The table of bound helpers made before a runtime module was imported (SciPy's,
    when its rules load late) is made again for a helper it lacks: expm_grad runs on
    the strict arrays, not through SciPy and NumPy."""
    a = np.array([[0.3, 0.1], [-0.2, 0.4]])
    want = grad(through_expm_grad)(a, np.ones((2, 2)))
    _namespace._HELPERS[id(xps)] = (xps, {})      # (as made before runtime/scipy/ loaded)
    got = grad(through_expm_grad)(xps.asarray(a), xps.asarray(np.ones((2, 2))))
    assert type(got) is type(xps.asarray(a))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


# --- np.gradient at coordinates ------------------------------------------------------------
def differentiated_at(x, w):
    t = np.linspace(0.0, 1.0, x.shape[0]) ** 2 + np.linspace(0.0, 0.5, x.shape[0])
    return np.sum(np.gradient(x, t, axis=0) * w) + \
        np.sum(np.gradient(x, t, edge_order=2, axis=0) ** 2) + \
        np.sum(np.gradient(x * w, np.linspace(0.0, 3.0, x.shape[0]), axis=0))


@pytest.mark.parametrize("shape, w_shape", [((5,), (5,)), ((4, 3), (3,)), ((6, 2), (6, 2))])
def test_gradient_at_coordinates_on_strict_arrays_is_numpys_and_right(shape, w_shape):
    rng = np.random.default_rng(sum(shape) + 2 * len(w_shape))
    _same_and_right(differentiated_at, rng.normal(size=shape), rng.normal(size=w_shape))


COORDINATES = np.array([0.0, 0.3, 1.1, 1.2, 2.5])


@pytest.mark.parametrize("call", [
    lambda m, a, t: m.gradient(a[:, 0], t), lambda m, a, t: m.gradient(a[:, 0], t, edge_order=2),
    lambda m, a, t: m.gradient(m.reshape(a, (5, 2)), t, axis=0),
    lambda m, a, t: m.gradient(m.reshape(a, (2, 5)), 0.5, t)[1],
    lambda m, a, t: m.gradient(m.reshape(a, (5, 2)), t, axis=0, edge_order=2),
    lambda m, a, t: m.gradient(a[:, 0], t * 0.0 + m.linspace(0.0, 1.0, 5)),
], ids=["1-d", "edge2", "axis", "per-axis", "axis-edge2", "uniform-coordinates"])
def test_gradient_at_coordinates_is_numpys(call):
    a = np.arange(10.0).reshape(5, 2) ** 2 / 7.0
    want = call(np, a, COORDINATES)
    got = call(_names(), xps.asarray(a), xps.asarray(COORDINATES))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-13, atol=1e-13)
