"""Every registered derivative rule, called directly (no compiler), against finite differences.

Each row of CASES is (primitive, argument maker, keyword arguments, id). A rule that has no
row fails `test_every_rule_is_tested`, so nothing is registered untested.
"""
import builtins
import math
import operator

import numpy as np
import pytest

from sgcompiler import rules

R = np.random.default_rng(1)


def normal(*shape):
    return lambda: R.normal(size=shape)


def positive(*shape):
    return lambda: R.uniform(0.5, 2.0, size=shape)


def scalar(lo=-2.0, hi=2.0):
    return lambda: float(R.uniform(lo, hi))


def args(*makers):
    return lambda: [m() for m in makers]


SHAPES = [(), (3,), (2, 3)]
BROADCAST = [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 3), (2, 1)), ((3,), ()), ((), (2, 3)),
             ((4, 1, 3), (2, 1))]

UNARY = [
    (np.exp, normal), (np.expm1, normal), (np.log, positive), (np.log1p, positive),
    (np.sin, normal), (np.cos, normal), (np.tan, lambda *s: lambda: R.uniform(-1, 1, s)),
    (np.tanh, normal), (np.sqrt, positive), (np.square, normal), (np.abs, positive),
    (np.absolute, normal), (np.negative, normal), (operator.neg, normal), (operator.pos, normal),
]
BINARY = [
    (operator.add, normal, normal), (operator.sub, normal, normal),
    (operator.mul, normal, normal), (operator.truediv, normal, positive),
    (operator.pow, positive, normal), (np.add, normal, normal),
    (np.subtract, normal, normal), (np.multiply, normal, normal),
    (np.divide, normal, positive), (np.power, positive, normal),
    (np.maximum, normal, normal), (np.minimum, normal, normal),
]

CASES = []
for prim, dom in UNARY:
    for shape in SHAPES:
        CASES.append((prim, args(dom(*shape)), {}, f"{prim.__name__}-{shape}"))
for prim, d1, d2 in BINARY:
    for s1, s2 in BROADCAST:
        CASES.append((prim, args(d1(*s1), d2(*s2)), {}, f"{prim.__name__}-{s1}-{s2}"))
for prim in (math.sin, math.cos, math.exp, math.tanh):
    CASES.append((prim, args(scalar()), {}, prim.__name__))
CASES += [
    (math.tan, args(scalar(-1, 1)), {}, "math.tan"),
    (math.log, args(scalar(0.5, 2)), {}, "math.log"),
    (math.log1p, args(scalar(0.5, 2)), {}, "math.log1p"),
    (math.sqrt, args(scalar(0.5, 2)), {}, "math.sqrt"),
    (math.fabs, args(scalar(0.5, 2)), {}, "math.fabs+"),
    (math.fabs, args(scalar(-2, -0.5)), {}, "math.fabs-"),
    (math.pow, args(scalar(0.5, 2), scalar()), {}, "math.pow"),
    (builtins.float, args(scalar()), {}, "float"),
    (builtins.abs, args(normal(3)), {}, "abs"),
    (builtins.max, args(scalar(), scalar()), {}, "max"),
    (builtins.min, args(scalar(), scalar()), {}, "min"),
    (builtins.sum, args(normal(4, 3)), {}, "sum-rows"),
    (operator.mod, args(positive(3), lambda: 0.7), {}, "mod"),
    (operator.matmul, args(normal(2, 3), normal(3, 4)), {}, "matmul-2d"),
    (operator.matmul, args(normal(3), normal(3, 4)), {}, "matmul-1d-2d"),
    (operator.matmul, args(normal(2, 3), normal(3)), {}, "matmul-2d-1d"),
    (operator.matmul, args(normal(3), normal(3)), {}, "matmul-1d-1d"),
    (operator.matmul, args(normal(5, 2, 3), normal(3, 4)), {}, "matmul-batched"),
    (np.matmul, args(normal(2, 3), normal(3, 4)), {}, "np.matmul"),
    (np.dot, args(normal(2, 3), normal(3, 4)), {}, "dot-2d"),
    (np.dot, args(normal(3), normal(3)), {}, "dot-1d"),
    (np.dot, args(normal(3), normal(3, 2)), {}, "dot-1d-2d"),
    (np.dot, args(normal(2, 3), normal(3)), {}, "dot-2d-1d"),
    (np.dot, args(normal(2, 3), scalar()), {}, "dot-scalar"),
    (np.dot, args(normal(2, 3), normal(4, 3, 5)), {}, "dot-nd"),
    (np.where, args(lambda: R.normal(size=(2, 3)) > 0, normal(2, 3), normal(3)), {}, "where"),
    (np.clip, args(normal(2, 3), lambda: -0.5, lambda: 0.5), {}, "clip"),
    (np.clip, args(normal(2, 3), lambda: R.uniform(-1, 0, 3), lambda: 0.8), {},
     "clip-array-bounds"),
    (np.transpose, args(normal(2, 3)), {}, "transpose"),
    (np.transpose, args(normal(2, 3, 4)), {"axes": (1, 2, 0)}, "transpose-axes"),
    (np.reshape, args(normal(2, 3)), {"shape": (3, 2)}, "reshape"),
    (np.expand_dims, args(normal(2, 3)), {"axis": 1}, "expand_dims"),
    (np.squeeze, args(normal(2, 1, 3)), {}, "squeeze"),
    (np.asarray, args(normal(2, 3)), {}, "asarray"),
    (np.array, args(normal(2, 3)), {}, "array"),
    (np.copy, args(normal(2, 3)), {}, "copy"),
    (np.float64, args(scalar()), {}, "float64"),
]
for prim in (np.sum, np.mean, np.max, np.min, np.amax, np.amin, np.prod):
    for shape, kw in [((3,), {}), ((2, 3), {}), ((2, 3), {"axis": 0}), ((2, 3), {"axis": 1}),
                      ((2, 3), {"axis": -1, "keepdims": True}),
                      ((2, 3, 4), {"axis": (0, 2)}), ((2, 3), {"keepdims": True})]:
        CASES.append((prim, args(normal(*shape)), kw, f"{prim.__name__}-{shape}-{kw}"))


def _vjp(rule, prim, values, kw, g):
    ans = prim(*values, **kw)
    bound = dict(zip(rule.params, values))
    bound.update(kw)
    return rule.source(g, ans, **bound)


@pytest.mark.parametrize("prim, make, kw", [c[:3] for c in CASES], ids=[c[3] for c in CASES])
def test_rule_matches_finite_differences(prim, make, kw):
    rule = rules.lookup(prim)
    assert rule is not None, f"no rule registered for {prim}"
    values = make()
    ans = prim(*values, **kw)
    g = R.normal(size=np.shape(ans))
    grads = _vjp(rule, prim, values, kw, g)
    grads = grads if isinstance(grads, tuple) else (grads,)
    eps = 1e-6
    for i, value in enumerate(values):
        if i >= len(grads) or grads[i] is None or np.asarray(value).dtype == bool:
            continue
        v = R.normal(size=np.shape(value))
        plus, minus = list(values), list(values)
        plus[i] = value + eps * v
        minus[i] = value - eps * v
        numeric = np.sum(g * (prim(*plus, **kw) - prim(*minus, **kw))) / (2 * eps)
        assert np.shape(grads[i]) == np.shape(value), (rule.name, i)
        analytic = np.sum(np.asarray(grads[i]) * v)
        np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-8,
                                   err_msg=f"{rule.name}: argument {i}")


def test_max_splits_ties_evenly():
    rule = rules.lookup(np.max)
    x = np.array([1.0, 3.0, 3.0])
    assert np.allclose(rule.source(1.0, 3.0, x), [0.0, 0.5, 0.5])


def test_prod_with_a_zero():
    rule = rules.lookup(np.prod)
    x = np.array([2.0, 0.0, 3.0])
    assert np.allclose(rule.source(1.0, 0.0, x), [0.0, 6.0, 0.0])


def test_every_rule_is_tested():
    tested = {id(c[0]) for c in CASES}
    missing = [r.name for r in rules.all_rules() if id(r.primitive) not in tested]
    assert not missing, f"rules without a row in tests/test_rules.py: {missing}"
