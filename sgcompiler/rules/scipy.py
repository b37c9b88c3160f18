"""Derivative rules of scipy.special and scipy.linalg functions. See registry.py.

Loaded the first time a SciPy module is seen in sys.modules (registry._load_optional), so
SciPy stays optional. Constants are Python floats so float32 gradients stay float32.
"""
import math

import numpy as np
import scipy.linalg
import scipy.special
from scipy.special import digamma, expit, i0, i0e, i1, i1e, polygamma, zeta

from ..runtime import mT, unbroadcast
from ..runtime.linalg import cholesky_grad, eigvalsh_grad
from ..runtime.scipy import (ASSUME_A, expm_grad, inv_grad, logsumexp_grad_a, logsumexp_grad_b,
                             solve_grad_matrix, solve_grad_rhs, solve_triangular_grad_a,
                             solve_triangular_grad_b, sqrtm_grad)
from .registry import vjp


def special(*names, **options):
    """Register a rule for the scipy.special functions `names` that this SciPy has."""
    found = [getattr(scipy.special, n) for n in names if hasattr(scipy.special, n)]
    return vjp(*found, name=f"scipy.special.{names[0]}", **options)


def linalg(name, **options):
    return vjp(getattr(scipy.linalg, name), name=f"scipy.linalg.{name}", **options)


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


@special("logsumexp", reduction=True, notes="a and b; not return_sign=True",
         supported={"return_sign": (False,)})
def logsumexp(g, ans, a, axis=None, b=None, keepdims=False, return_sign=False):
    return (logsumexp_grad_a(g, ans, a, axis, b, keepdims, return_sign), None,
            logsumexp_grad_b(g, ans, a, axis, b, keepdims, return_sign))


@special("softmax")
def softmax(g, ans, x, axis=None):
    return ans * (g - np.sum(g * ans, axis=axis, keepdims=True))


@special("log_softmax")
def log_softmax(g, ans, x, axis=None):
    return g - np.exp(ans) * np.sum(g, axis=axis, keepdims=True)


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
def gammaln(g, ans, x):
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
def betaln(g, ans, x1, x2):
    return (unbroadcast(g * (digamma(x1) - digamma(x1 + x2)), x1),
            unbroadcast(g * (digamma(x2) - digamma(x1 + x2)), x2))


@special("beta", elementwise=True)
def beta(g, ans, x1, x2):
    return (unbroadcast(g * ans * (digamma(x1) - digamma(x1 + x2)), x1),
            unbroadcast(g * ans * (digamma(x2) - digamma(x1 + x2)), x2))


# --- scipy.special: entropies and logarithms -------------------------------------------------------


@special("xlogy", elementwise=True)
def xlogy(g, ans, x1, x2):
    return unbroadcast(g * np.log(x2), x1), unbroadcast(g * x1 / x2, x2)


@special("xlog1py", elementwise=True)
def xlog1py(g, ans, x1, x2):
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


# --- scipy.linalg ------------------------------------------------------------------------------------


@linalg("inv", notes="nonsingular input; assume_a general, symmetric or positive definite",
        supported={"assume_a": ASSUME_A})
def inv(g, ans, a, overwrite_a=False, check_finite=True, *, assume_a=None, lower=False):
    return inv_grad(g, ans, a, assume_a, lower)


@linalg("det", notes="nonsingular input")
def det(g, ans, a, overwrite_a=False, check_finite=True):
    return g * ans * mT(np.linalg.inv(a))


@linalg("solve", notes="assume_a general, symmetric or positive definite",
        supported={"assume_a": ASSUME_A})
def solve(g, ans, a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
          assume_a=None, transposed=False):
    return (solve_grad_matrix(g, ans, a, b, lower, assume_a, transposed),
            solve_grad_rhs(g, a, b, lower, assume_a, transposed))


@linalg("solve_triangular")
def solve_triangular(g, ans, a, b, trans=0, lower=False, unit_diagonal=False,
                     overwrite_b=False, check_finite=True):
    return (solve_triangular_grad_a(g, ans, a, b, trans, lower, unit_diagonal),
            solve_triangular_grad_b(g, a, trans, lower, unit_diagonal))


@linalg("cholesky", notes="symmetric positive definite input; the gradient is on the "
                          "triangle SciPy reads (upper unless lower=True)")
def cholesky(g, ans, a, lower=False, overwrite_a=False, check_finite=True):
    return cholesky_grad(g, ans, not lower)


@linalg("eigvalsh", notes="standard problem (b=None), distinct eigenvalues")
def eigvalsh(g, ans, a, b=None, *, lower=True):
    return eigvalsh_grad(g, a, "L" if lower else "U"), None


@linalg("expm")
def expm(g, ans, A):
    return expm_grad(g, A)


@linalg("sqrtm", notes="input with a real square root (e.g. positive definite)")
def sqrtm(g, ans, A):
    return sqrtm_grad(g, ans)
