"""The rule table's rows for SciPy functions (imported only when SciPy is installed)."""
import scipy.linalg
import scipy.special as sp

from rule_cases import (BROADCAST, REDUCE, SHAPES, case, ints, nonzero, normal, positive, spd,
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
case(scipy.linalg.cholesky, spd(3))
case(scipy.linalg.cholesky, spd(3), id="lower", lower=True)
case(scipy.linalg.eigvalsh, spd(3))
case(scipy.linalg.eigvalsh, spd(3), id="upper", lower=False)
case(scipy.linalg.expm, lambda r: 0.5 * r.normal(size=(3, 3)))
case(scipy.linalg.sqrtm, spd(3))

# Bessel functions: the order (first argument) gets no gradient and is not checked here
for name, order, dom in [("jv", normal, normal), ("yv", normal, positive),
                         ("iv", normal, normal), ("ive", normal, nonzero),
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
