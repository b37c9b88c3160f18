"""Derivative rules of scipy.stats distributions, in the functional form
(`scipy.stats.norm.logpdf(x, loc, scale)`). See registry.py.

The ten location-scale families share their rules' arithmetic: with z = (x - loc) / scale
and the score s(z) = d log f0 / dz of the standard density (runtime/scipy_stats.py),

    logpdf: dx = g s(z) / scale,  dloc = -dx,  dscale = -g (s(z) z + 1) / scale
    cdf:    dx = g pdf(x),        dloc = -dx,  dscale = -g pdf(x) z

and pdf, logcdf, sf, logsf follow (times the pdf, over the cdf or the sf, negated). So each
family's six rules are written out from one template per method (`_rule_text`), with the
family's name, shape parameters and helpers filled in, and defined from that text (kept in
linecache, so the rule's source reads like any other). The generated code calls the
distribution's own methods: `scipy.stats.norm.pdf(x, loc, scale)`.

A shape parameter whose cdf has no closed-form derivative (t's df, gamma's a, ...) gets
none in cdf, logcdf, sf and logsf: a gradient there is refused. Frozen distributions
(`scipy.stats.norm(0, 1).logpdf(x)`) are not seen by the compiler; call the functional form.
"""
import inspect
import linecache

import numpy as np
import scipy.stats

from ...runtime import unbroadcast
from ...runtime.scipy.stats import (beta_dlogpdf_da, beta_dlogpdf_db, beta_score, cauchy_score,
                                   chi2_dlogpdf_ddf, chi2_score, dirichlet_grad_alpha,
                                   dirichlet_grad_x, exp_ratio, expon_score, gamma_dlogpdf_da,
                                   gamma_score, laplace_score, logistic_score,
                                   lognorm_dcdf_ds, lognorm_dlogpdf_ds, lognorm_score,
                                   dirichlet_full, mT_lower, mvn_grad_cov, mvn_grad_mean,
                                   mvn_grad_x, norm_score,
                                   poisson_dlogpmf_dmu, t_dlogpdf_ddf, t_score)
from ...runtime.scipy.stats import (dirichlet_tangent_alpha, mvn_tangent_cov, mvn_tangent_mean,
                                   mvn_tangent_x)
from ...runtime.scipy.stats import (mvn_cdf_grad_mean, mvn_cdf_grad_x, mvn_cdf_tangent_mean,
                                    mvn_cdf_tangent_x)
from ..registry import jvp, through_source, vjp

# family -> its shape parameters, each with (d log f0 / d shape, d cdf / d shape or None)
FAMILIES = {
    "norm": {}, "logistic": {}, "laplace": {}, "cauchy": {}, "expon": {},
    "t": {"df": ("t_dlogpdf_ddf", None)},
    "chi2": {"df": ("chi2_dlogpdf_ddf", None)},
    "gamma": {"a": ("gamma_dlogpdf_da", None)},
    "beta": {"a": ("beta_dlogpdf_da", None), "b": ("beta_dlogpdf_db", None)},
    "lognorm": {"s": ("lognorm_dlogpdf_ds", "lognorm_dcdf_ds")},
}
METHODS = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")
_Z = "(x - loc) / scale"


def _density_grads(family, method, shapes):
    """The gradient expressions of logpdf or pdf, in the order x, shapes, loc, scale."""
    g = "g" if method == "logpdf" else "g * ans"
    shape_args = "".join(f", {p}" for p in shapes)
    score = f"{family}_score({_Z}{shape_args})"
    return ([f"{g} * {score} / scale"]
            + [f"{g} * {dlog}({_Z}{shape_args})" for dlog, _ in shapes.values()]
            + [f"-{g} * {score} / scale", f"-{g} * ({score} * {_Z} + 1.0) / scale"])


def _tail_grads(family, method, shapes):
    """The gradient expressions of cdf, logcdf, sf or logsf: x, shapes, loc, scale."""
    plus, minus = ("g", "-g") if method in ("cdf", "logcdf") else ("-g", "g")
    shape_args = "".join(f", {p}" for p in shapes)
    density = f"scipy.stats.{family}.pdf(x{shape_args}, loc, scale)"
    if method.startswith("log"):
        density = f"exp_ratio(scipy.stats.{family}.logpdf(x{shape_args}, loc, scale), ans)"
    over = " / np.exp(ans)" if method.startswith("log") else ""
    return ([f"{plus} * {density}"]
            + [None if dcdf is None else f"{plus} * {dcdf}({_Z}{shape_args}){over}"
               for _, dcdf in shapes.values()]
            + [f"{minus} * {density}", f"{minus} * {density} * {_Z}"])


def _rule_text(family, method):
    """The source of the rule of scipy.stats.`family`.`method`."""
    shapes = FAMILIES[family]
    params = ["x", *shapes, "loc", "scale"]
    exprs = (_density_grads if method in ("logpdf", "pdf") else _tail_grads)(
        family, method, shapes)
    outputs = ",\n            ".join("None" if e is None else f"unbroadcast({e}, {p})"
                                   for e, p in zip(exprs, params))
    signature = ", ".join(["x", *shapes, "loc=0.0", "scale=1.0"])
    return f"def {family}_{method}(g, ans, {signature}):\n    return ({outputs})\n"


def _define(family, method):
    """The rule function of `_rule_text`, defined in this module, its source in linecache."""
    text = _rule_text(family, method)
    filename = f"<sgcompiler.rules.scipy_stats: {family}.{method}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    scope = {}
    exec(compile(text, filename, "exec"), globals(), scope)
    return scope[f"{family}_{method}"]


def _notes(family, method) -> str:
    shapes = FAMILIES[family]
    notes = []
    refused = [p for p, (_, dcdf) in shapes.items() if dcdf is None]
    if refused and method not in ("logpdf", "pdf"):
        notes.append(f"no gradient in {' or '.join(refused)} (it has no closed form)")
    if family in ("expon", "chi2", "gamma", "beta", "lognorm") and method == "logpdf":
        notes.append("x inside the support (outside, logpdf is the constant -inf)")
    if family == "laplace":
        notes.append("x != loc")
    return "; ".join(notes)


for _family in FAMILIES:
    for _method in METHODS:
        _dist = getattr(scipy.stats, _family)
        vjp(getattr(_dist, _method), name=f"scipy.stats.{_family}.{_method}",
            notes=_notes(_family, _method), elementwise=True)(_define(_family, _method))


# --- scipy.stats.poisson: a gradient in mu; k and loc are integers ---------------------------

_POISSON = "no gradient in k or loc (integers)"


@vjp(scipy.stats.poisson.logpmf, name="scipy.stats.poisson.logpmf", notes=_POISSON,
     elementwise=True)
def poisson_logpmf(g, ans, k, mu, loc=0):
    return None, unbroadcast(g * poisson_dlogpmf_dmu(k, mu, loc), mu), None


@vjp(scipy.stats.poisson.pmf, name="scipy.stats.poisson.pmf", notes=_POISSON,
     elementwise=True)
def poisson_pmf(g, ans, k, mu, loc=0):
    return None, unbroadcast(g * ans * poisson_dlogpmf_dmu(k, mu, loc), mu), None


# d/dmu P(K <= k) = -pmf(floor(k)): the cdf is a regularized incomplete gamma function in mu
@vjp(scipy.stats.poisson.cdf, name="scipy.stats.poisson.cdf", notes=_POISSON,
     elementwise=True)
def poisson_cdf(g, ans, k, mu, loc=0):
    return None, unbroadcast(-g * scipy.stats.poisson.pmf(np.floor(k), mu, loc), mu), None


@vjp(scipy.stats.poisson.logcdf, name="scipy.stats.poisson.logcdf", notes=_POISSON,
     elementwise=True)
def poisson_logcdf(g, ans, k, mu, loc=0):
    return (None, unbroadcast(-g * exp_ratio(scipy.stats.poisson.logpmf(np.floor(k), mu, loc),
                                             ans), mu), None)


@vjp(scipy.stats.poisson.sf, name="scipy.stats.poisson.sf", notes=_POISSON,
     elementwise=True)
def poisson_sf(g, ans, k, mu, loc=0):
    return None, unbroadcast(g * scipy.stats.poisson.pmf(np.floor(k), mu, loc), mu), None


@vjp(scipy.stats.poisson.logsf, name="scipy.stats.poisson.logsf", notes=_POISSON,
     elementwise=True)
def poisson_logsf(g, ans, k, mu, loc=0):
    return (None, unbroadcast(g * exp_ratio(scipy.stats.poisson.logpmf(np.floor(k), mu, loc),
                                            ans), mu), None)


# --- scipy.stats.dirichlet and multivariate_normal -------------------------------------------

_DIRICHLET = "x with K or K-1 components (the last is 1 - sum) along its first axis; alpha 1-D"


@vjp(scipy.stats.dirichlet.logpdf, name="scipy.stats.dirichlet.logpdf", notes=_DIRICHLET)
def dirichlet_logpdf(g, ans, x, alpha):
    return dirichlet_grad_x(g, x, alpha), dirichlet_grad_alpha(g, x, alpha)


@vjp(scipy.stats.dirichlet.pdf, name="scipy.stats.dirichlet.pdf", notes=_DIRICHLET)
def dirichlet_pdf(g, ans, x, alpha):
    return dirichlet_grad_x(g * ans, x, alpha), dirichlet_grad_alpha(g * ans, x, alpha)


_MVN = ("cov a scalar, a diagonal or a full positive definite matrix (the gradient is on "
        "its lower triangle, which SciPy reads); not allow_singular")


@vjp(scipy.stats.multivariate_normal.logpdf, name="scipy.stats.multivariate_normal.logpdf",
     notes=_MVN)
def multivariate_normal_logpdf(g, ans, x, mean=None, cov=1, allow_singular=False):
    return (mvn_grad_x(g, ans, x, mean, cov), mvn_grad_mean(g, ans, x, mean, cov),
            mvn_grad_cov(g, ans, x, mean, cov))


@vjp(scipy.stats.multivariate_normal.pdf, name="scipy.stats.multivariate_normal.pdf",
     notes=_MVN)
def multivariate_normal_pdf(g, ans, x, mean=None, cov=1, allow_singular=False):
    return (mvn_grad_x(g * ans, ans, x, mean, cov), mvn_grad_mean(g * ans, ans, x, mean, cov),
            mvn_grad_cov(g * ans, ans, x, mean, cov))


# The cdf's rules pass the call's rng= on to SciPy; an older SciPy's cdf takes
# random_state= instead, and there the cdf and logcdf stay without rules (refused by name).
MVN_CDF_TAKES_RNG = "rng" in inspect.signature(scipy.stats.multivariate_normal.cdf).parameters


def _with_rng(register):
    """`register` (a rule's decorator) where SciPy's cdf takes rng=, else nothing."""
    return register if MVN_CDF_TAKES_RNG else (lambda rule: rule)


_MVN_CDF = ("the gradient in x and mean (none in cov): the density of each coordinate "
            "times the cdf of the others given it, exact in two dimensions, in more "
            "integrated by SciPy as the call asks (maxpts, abseps, releps, rng), so about as "
            "accurate as the cdf itself; lower_limit gets no gradient")


@_with_rng(vjp(scipy.stats.multivariate_normal.cdf, name="scipy.stats.multivariate_normal.cdf",
               notes=_MVN_CDF))
def multivariate_normal_cdf(g, ans, x, mean=None, cov=1, allow_singular=False, maxpts=None,
                            abseps=1e-5, releps=1e-5, *, lower_limit=None, rng=None):
    return (mvn_cdf_grad_x(g, x, mean, cov, maxpts, abseps, releps, lower_limit, rng),
            mvn_cdf_grad_mean(g, x, mean, cov, maxpts, abseps, releps, lower_limit, rng),
            None)


@_with_rng(vjp(scipy.stats.multivariate_normal.logcdf,
               name="scipy.stats.multivariate_normal.logcdf",
               notes=_MVN_CDF.replace("cdf of the others", "cdf of the others, over the cdf,", 1)))
def multivariate_normal_logcdf(g, ans, x, mean=None, cov=1, allow_singular=False,
                               maxpts=None, abseps=1e-5, releps=1e-5, *, lower_limit=None,
                               rng=None):
    return (mvn_cdf_grad_x(g * np.exp(-ans), x, mean, cov, maxpts, abseps, releps,
                           lower_limit, rng),
            mvn_cdf_grad_mean(g * np.exp(-ans), x, mean, cov, maxpts, abseps, releps,
                              lower_limit, rng),
            None)


# --- tangent rules (forward mode) of dirichlet and multivariate_normal ------------------------
# (the location-scale families and poisson are elementwise: rules/derive.py derives theirs)


@jvp(scipy.stats.dirichlet.logpdf, name="scipy.stats.dirichlet.logpdf")
def dirichlet_logpdf_jvp(x_dot, alpha_dot, ans, x, alpha):
    return (np.sum(x_dot * dirichlet_grad_x(1.0, x, alpha), axis=0),
            dirichlet_tangent_alpha(alpha_dot, x, alpha))


@jvp(scipy.stats.dirichlet.pdf, name="scipy.stats.dirichlet.pdf")
def dirichlet_pdf_jvp(x_dot, alpha_dot, ans, x, alpha):
    return (ans * np.sum(x_dot * dirichlet_grad_x(1.0, x, alpha), axis=0),
            ans * dirichlet_tangent_alpha(alpha_dot, x, alpha))


@jvp(scipy.stats.multivariate_normal.logpdf, name="scipy.stats.multivariate_normal.logpdf")
def multivariate_normal_logpdf_jvp(x_dot, mean_dot, cov_dot, ans, x, mean=None, cov=1,
                                   allow_singular=False):
    return (mvn_tangent_x(x_dot, ans, x, mean, cov),
            mvn_tangent_mean(mean_dot, ans, x, mean, cov),
            mvn_tangent_cov(cov_dot, ans, x, mean, cov))


@jvp(scipy.stats.multivariate_normal.pdf, name="scipy.stats.multivariate_normal.pdf")
def multivariate_normal_pdf_jvp(x_dot, mean_dot, cov_dot, ans, x, mean=None, cov=1,
                                allow_singular=False):
    return (ans * mvn_tangent_x(x_dot, ans, x, mean, cov),
            ans * mvn_tangent_mean(mean_dot, ans, x, mean, cov),
            ans * mvn_tangent_cov(cov_dot, ans, x, mean, cov))


# second order (grad of grad, hessian): the scores and shape derivatives are elementwise
# formulas, read through their own source (rules/runtime.py says why)
through_source(exp_ratio, norm_score, logistic_score, laplace_score, cauchy_score,
               expon_score, t_score, chi2_score, gamma_score, beta_score, lognorm_score,
               t_dlogpdf_ddf, chi2_dlogpdf_ddf, gamma_dlogpdf_da, beta_dlogpdf_da,
               beta_dlogpdf_db, lognorm_dlogpdf_ds, lognorm_dcdf_ds, poisson_dlogpmf_dmu,
               mvn_grad_x, mvn_grad_mean, mvn_grad_cov, mT_lower, dirichlet_grad_x,
               dirichlet_grad_alpha, dirichlet_full)


@_with_rng(jvp(scipy.stats.multivariate_normal.cdf, name="scipy.stats.multivariate_normal.cdf"))
def multivariate_normal_cdf_jvp(x_dot, mean_dot, ans, x, mean=None, cov=1,
                                allow_singular=False, maxpts=None, abseps=1e-5, releps=1e-5,
                                *, lower_limit=None, rng=None):
    return (mvn_cdf_tangent_x(x_dot, ans, x, mean, cov, maxpts, abseps, releps, lower_limit,
                              rng),
            mvn_cdf_tangent_mean(mean_dot, ans, x, mean, cov, maxpts, abseps, releps,
                                 lower_limit, rng))


@_with_rng(jvp(scipy.stats.multivariate_normal.logcdf,
               name="scipy.stats.multivariate_normal.logcdf"))
def multivariate_normal_logcdf_jvp(x_dot, mean_dot, ans, x, mean=None, cov=1,
                                   allow_singular=False, maxpts=None, abseps=1e-5,
                                   releps=1e-5, *, lower_limit=None, rng=None):
    return (np.exp(-ans) * mvn_cdf_tangent_x(x_dot, ans, x, mean, cov, maxpts, abseps, releps,
                                             lower_limit, rng),
            np.exp(-ans) * mvn_cdf_tangent_mean(mean_dot, ans, x, mean, cov, maxpts, abseps,
                                                releps, lower_limit, rng))
