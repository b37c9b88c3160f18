"""Derivative rules of scipy.special functions. See registry.py.

Loaded with the other SciPy rule modules the first time a SciPy module is seen in
sys.modules (registry._load_optional, rules/scipy.py), so SciPy stays optional. Constants
are Python floats so float32 gradients stay float32.
"""
import math

import numpy as np
import scipy.special
from scipy.special import (betaln, digamma, expit, gammaln, i0, i0e, i1, i1e, iv, ive, j0, j1,
                           jv, kv, kve, polygamma, xlog1py, xlogy, y0, y1, yn, yv, zeta)

from ...runtime import unbroadcast
from ...runtime.scipy.special import (batch_logsumexp_tangent_a, batch_logsumexp_tangent_b,
                                     logsumexp_grad_a, logsumexp_grad_b, logsumexp_tangent_a,
                                     logsumexp_tangent_b)
from ..registry import batchable, jvp, nondifferentiable, through_source, vjp


def special(*names, **options):
    """Register a rule for the scipy.special functions `names` that this SciPy has."""
    found = [getattr(scipy.special, n) for n in names if hasattr(scipy.special, n)]
    return vjp(*found, name=f"scipy.special.{names[0]}", **options)


def tangent_of(*names, **options):
    """Register a tangent rule for the scipy.special functions `names` this SciPy has."""
    found = [getattr(scipy.special, n) for n in names if hasattr(scipy.special, n)]
    return jvp(*found, name=f"scipy.special.{names[0]}", **options)


# --- scipy.special: logistic and softmax ------------------------------------------------------


@special("expit", elementwise=True)
def expit_rule(g, ans, x):
    return g * ans * (1.0 - ans)


@special("logit", elementwise=True)
def logit(g, ans, x):
    return g / (x * (1.0 - x))


@special("log_expit", elementwise=True)
def log_expit(g, ans, x):
    return g * expit(-x)


@special("softplus", elementwise=True)
def softplus(g, ans, x):
    return g * expit(x)


@special("logsumexp", reduction=True,
         notes="a and b; with return_sign=True the value gets its gradient, the sign none")
def logsumexp(g, ans, a, axis=None, b=None, keepdims=False, return_sign=False):
    return (logsumexp_grad_a(g, ans, a, axis, b, keepdims, return_sign), None,
            logsumexp_grad_b(g, ans, a, axis, b, keepdims, return_sign))


# (a rule of its own: the derived one is for the reduced array alone, and b has a tangent
# too, for hessian and hvp through a weighted logsumexp)
@tangent_of("logsumexp")
def logsumexp_tangent(a_dot, b_dot, ans, a, axis=None, b=None, keepdims=False,
                      return_sign=False):
    return (logsumexp_tangent_a(a_dot, ans, a, axis, b, keepdims, return_sign),
            logsumexp_tangent_b(b_dot, ans, a, axis, b, keepdims, return_sign))


batchable(*[getattr(scipy.special, n) for n in ("logsumexp", "softmax", "log_softmax")
            if hasattr(scipy.special, n)],
          helpers=[(logsumexp_tangent_a, batch_logsumexp_tangent_a),
                   (logsumexp_tangent_b, batch_logsumexp_tangent_b)])


@special("softmax")
def softmax(g, ans, x, axis=None):
    return ans * (g - np.sum(g * ans, axis=axis, keepdims=True))


@tangent_of("softmax")
def softmax_tangent(t, ans, x, axis=None):
    return ans * (t - np.sum(t * ans, axis=axis, keepdims=True))


@special("log_softmax")
def log_softmax(g, ans, x, axis=None):
    return g - np.exp(ans) * np.sum(g, axis=axis, keepdims=True)


@tangent_of("log_softmax")
def log_softmax_tangent(t, ans, x, axis=None):
    return t - np.sum(np.exp(ans) * t, axis=axis, keepdims=True)


# --- scipy.special: error function and normal distribution ---------------------------------------


@special("erf", elementwise=True)
def erf(g, ans, x):
    return g * (2.0 / math.sqrt(math.pi)) * np.exp(-x ** 2)


@special("erfc", elementwise=True)
def erfc(g, ans, x):
    return -g * (2.0 / math.sqrt(math.pi)) * np.exp(-x ** 2)


@special("erfcx", elementwise=True)
def erfcx_rule(g, ans, x):
    return g * (2.0 * x * ans - 2.0 / math.sqrt(math.pi))


@special("erfinv", elementwise=True)
def erfinv(g, ans, x):
    return g * (math.sqrt(math.pi) / 2.0) * np.exp(ans ** 2)


@special("erfcinv", elementwise=True)
def erfcinv(g, ans, x):
    return -g * (math.sqrt(math.pi) / 2.0) * np.exp(ans ** 2)


@special("ndtr", elementwise=True)
def ndtr(g, ans, x):
    return g * np.exp(-0.5 * x ** 2) / math.sqrt(2.0 * math.pi)


@special("log_ndtr", elementwise=True)
def log_ndtr(g, ans, x):
    return g * np.exp(-0.5 * x ** 2 - ans) / math.sqrt(2.0 * math.pi)


@special("ndtri", elementwise=True)
def ndtri(g, ans, x):
    return g * math.sqrt(2.0 * math.pi) * np.exp(0.5 * ans ** 2)


# --- scipy.special: gamma and beta functions ---------------------------------------------------


@special("gammaln", elementwise=True)
def gammaln_rule(g, ans, x):
    return g * digamma(x)


@special("gamma", elementwise=True)
def gamma(g, ans, x):
    return g * ans * digamma(x)


@special("digamma", "psi", elementwise=True)
def digamma_rule(g, ans, x):
    """The trigamma function polygamma(1, x) is zeta(2, x), which keeps float32."""
    return g * zeta(2.0, x)


@special("polygamma", elementwise=True, notes="integer order n (no gradient)")
def polygamma_rule(g, ans, n, x):
    return None, g * polygamma(n + 1, x)


@special("betaln", elementwise=True)
def betaln_rule(g, ans, x1, x2):
    return (unbroadcast(g * (digamma(x1) - digamma(x1 + x2)), x1),
            unbroadcast(g * (digamma(x2) - digamma(x1 + x2)), x2))


@special("beta", elementwise=True)
def beta(g, ans, x1, x2):
    return (unbroadcast(g * ans * (digamma(x1) - digamma(x1 + x2)), x1),
            unbroadcast(g * ans * (digamma(x2) - digamma(x1 + x2)), x2))


# --- scipy.special: entropies and logarithms -------------------------------------------------------


@special("xlogy", elementwise=True)
def xlogy_rule(g, ans, x1, x2):
    return unbroadcast(g * np.log(x2), x1), unbroadcast(g * x1 / x2, x2)


@special("xlog1py", elementwise=True)
def xlog1py_rule(g, ans, x1, x2):
    return unbroadcast(g * np.log1p(x2), x1), unbroadcast(g * x1 / (1.0 + x2), x2)


@special("entr", elementwise=True)
def entr(g, ans, x):
    return -g * (np.log(x) + 1.0)


@special("rel_entr", elementwise=True)
def rel_entr(g, ans, x1, x2):
    return unbroadcast(g * (np.log(x1 / x2) + 1.0), x1), unbroadcast(-g * x1 / x2, x2)


@special("kl_div", elementwise=True)
def kl_div(g, ans, x1, x2):
    return unbroadcast(g * np.log(x1 / x2), x1), unbroadcast(g * (1.0 - x1 / x2), x2)


@special("huber", elementwise=True, notes="x1 is delta, x2 the residual")
def huber(g, ans, x1, x2):
    return (unbroadcast(g * np.where(np.abs(x2) <= x1, 0.0, np.abs(x2) - x1), x1),
            unbroadcast(g * np.where(np.abs(x2) <= x1, x2, x1 * np.sign(x2)), x2))


@special("pseudo_huber", elementwise=True, notes="x1 is delta, x2 the residual")
def pseudo_huber(g, ans, x1, x2):
    return (unbroadcast(g * (2.0 * ans / x1 - x2 ** 2 / (x1 * np.sqrt(1.0 + (x2 / x1) ** 2))),
                        x1),
            unbroadcast(g * x2 / np.sqrt(1.0 + (x2 / x1) ** 2), x2))


# --- scipy.special: Bessel functions ----------------------------------------------------------------


@special("i0", elementwise=True)
def i0_rule(g, ans, x):
    return g * i1(x)


@special("i1", elementwise=True, notes="x != 0")
def i1_rule(g, ans, x):
    return g * (i0(x) - ans / x)


@special("i0e", elementwise=True)
def i0e_rule(g, ans, x):
    return g * (i1e(x) - np.sign(x) * ans)


@special("i1e", elementwise=True, notes="x != 0")
def i1e_rule(g, ans, x):
    return g * (i0e(x) - ans / x - np.sign(x) * ans)


# Bessel functions of real order v: the derivative in z is a recurrence; in the order v it
# has no closed form (an integral or a series), so v gets no gradient and is refused
# where one must flow.
_ORDER = "no gradient in the order v (it has no closed form)"


@special("jv", elementwise=True, notes=_ORDER)
def jv_rule(g, ans, v, z):
    return None, unbroadcast(g * 0.5 * (jv(v - 1.0, z) - jv(v + 1.0, z)), z)


@special("yv", elementwise=True, notes=_ORDER + "; z > 0")
def yv_rule(g, ans, v, z):
    return None, unbroadcast(g * 0.5 * (yv(v - 1.0, z) - yv(v + 1.0, z)), z)


@special("yn", elementwise=True, notes="integer order n (no gradient); x > 0")
def yn_rule(g, ans, n, x):
    return None, unbroadcast(g * 0.5 * (yn(n - 1, x) - yn(n + 1, x)), x)


@special("iv", elementwise=True, notes=_ORDER)
def iv_rule(g, ans, v, z):
    return None, unbroadcast(g * 0.5 * (iv(v - 1.0, z) + iv(v + 1.0, z)), z)


@special("ive", elementwise=True, notes=_ORDER + "; z != 0")
def ive_rule(g, ans, v, z):
    return None, unbroadcast(g * (0.5 * (ive(v - 1.0, z) + ive(v + 1.0, z))
                                  - np.sign(z) * ans), z)


@special("kv", elementwise=True, notes=_ORDER + "; z > 0")
def kv_rule(g, ans, v, z):
    return None, unbroadcast(g * -0.5 * (kv(v - 1.0, z) + kv(v + 1.0, z)), z)


@special("kve", elementwise=True, notes=_ORDER + "; z > 0")
def kve_rule(g, ans, v, z):
    return None, unbroadcast(g * (ans - 0.5 * (kve(v - 1.0, z) + kve(v + 1.0, z))), z)


@special("j0", elementwise=True)
def j0_rule(g, ans, x):
    return -g * j1(x)


@special("j1", elementwise=True)
def j1_rule(g, ans, x):
    return g * 0.5 * (j0(x) - jv(2.0, x))


@special("y0", elementwise=True, notes="x > 0")
def y0_rule(g, ans, x):
    return -g * y1(x)


@special("y1", elementwise=True, notes="x > 0")
def y1_rule(g, ans, x):
    return g * 0.5 * (y0(x) - yv(2.0, x))


# --- scipy.special: incomplete gamma and beta functions, zeta --------------------------------


@special("gammainc", elementwise=True,
         notes="no gradient in a (it has no closed form); x > 0")
def gammainc_rule(g, ans, a, x):
    return None, unbroadcast(g * np.exp((a - 1.0) * np.log(x) - x - gammaln(a)), x)


@special("gammaincc", elementwise=True,
         notes="no gradient in a (it has no closed form); x > 0")
def gammaincc_rule(g, ans, a, x):
    return None, unbroadcast(-g * np.exp((a - 1.0) * np.log(x) - x - gammaln(a)), x)


@special("rgamma", elementwise=True, notes="x not a pole of gamma (0, -1, -2, ...)")
def rgamma_rule(g, ans, x):
    return -g * ans * digamma(x)


@special("betainc", elementwise=True,
         notes="no gradient in a or b (it has no closed form); 0 < x < 1")
def betainc_rule(g, ans, a, b, x):
    return (None, None,
            unbroadcast(g * np.exp(xlogy(a - 1.0, x) + xlog1py(b - 1.0, -x) - betaln(a, b)),
                        x))


@special("zeta", elementwise=True,
         notes="gradient in q (Hurwitz zeta); none in the exponent x (it has no closed "
               "form); refused for Riemann's zeta(x) with no q")
def zeta_rule(g, ans, x, q=None):
    return None, unbroadcast(-g * x * zeta(x + 1.0, q), q)


# the sign of gamma(x) is piecewise constant
nondifferentiable(*[getattr(scipy.special, n) for n in ("gammasgn",)
                    if hasattr(scipy.special, n)])


# second order (grad of grad, hessian): logsumexp's gradient helpers are read through
# their own source (rules/runtime.py says why)
through_source(logsumexp_grad_a, logsumexp_grad_b)
