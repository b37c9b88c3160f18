"""Every registered derivative rule, called directly (no compiler), against finite differences.

The table is tests/rule_cases.py (and rule_cases_scipy.py when SciPy is installed). A rule
that has no row fails `test_every_rule_is_tested`, so nothing is registered untested.
"""
import inspect
import zlib

import numpy as np
import pytest

from rule_cases import CASES
from sgcompiler import rules
from sgcompiler.rules.custom import signature_problem
from sgcompiler.rules.registry import key

try:
    import rule_cases_scipy  # noqa: F401  (adds the SciPy rows to CASES)
except ImportError:
    pass

IDS = [c.id for c in CASES]


def _rng(case):
    return np.random.default_rng(zlib.crc32(case.id.encode()))


def _is_float(value) -> bool:
    return isinstance(value, float) or (isinstance(value, np.ndarray) and value.dtype.kind == "f")


def _seed_gradient(r, ans, dtype=None):
    g = r.normal(size=np.shape(ans))
    if isinstance(ans, float):
        return float(g)
    return np.asarray(g, dtype=dtype) if dtype else g


def _rule_grads(case, values, g):
    rule = rules.lookup(case.prim)
    assert rule is not None, f"no rule registered for {case.prim}"
    ans = case.prim(*values, **case.kw)
    bound = dict(zip(rule.params, values))
    bound.update(case.kw)
    grads = rule.source(g, ans, **bound)
    return rule, grads if isinstance(grads, tuple) else (grads,)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_rule_matches_finite_differences(case):
    r = _rng(case)
    values = [m(r) for m in case.makers]
    g = _seed_gradient(r, case.prim(*values, **case.kw))
    rule, grads = _rule_grads(case, values, g)
    checked = 0
    for i, value in enumerate(values):
        if i >= len(grads) or grads[i] is None or not _is_float(value):
            continue
        direction = r.normal(size=np.shape(value))
        plus, minus = list(values), list(values)
        plus[i] = value + case.eps * direction
        minus[i] = value - case.eps * direction
        numeric = np.sum(g * (np.asarray(case.prim(*plus, **case.kw), dtype=float)
                              - case.prim(*minus, **case.kw))) / (2 * case.eps)
        grad = np.asarray(grads[i])
        zero = rule.is_zero(rule.params[i])
        assert grad.shape == np.shape(value) or zero, (rule.name, i, grad.shape)
        analytic = np.sum(grad * direction)
        np.testing.assert_allclose(analytic, numeric, rtol=case.rtol, atol=1e-7,
                                   err_msg=f"{rule.name}: argument {i}")
        checked += 1
    assert checked, f"{case.id}: no argument was checked"


def _float32(value):
    if isinstance(value, (np.ndarray, np.floating)) and value.dtype.kind == "f":
        return value.astype(np.float32)
    return value


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_float32_gradients_stay_float32(case):
    r = _rng(case)
    values = [_float32(m(r)) for m in case.makers]
    if not any(isinstance(v, np.ndarray) and v.dtype == np.float32 for v in values):
        pytest.skip("no float32 array argument")
    ans = case.prim(*values, **case.kw)
    if np.result_type(ans) != np.float32:
        pytest.skip(f"the result is {np.result_type(ans)}")    # e.g. np.float_power
    g = _seed_gradient(r, ans, np.float32)
    rule, grads = _rule_grads(case, values, g)
    for i, value in enumerate(values):
        if i < len(grads) and grads[i] is not None and isinstance(value, np.ndarray) \
                and value.dtype == np.float32 and not rule.is_zero(rule.params[i]):
            assert np.asarray(grads[i]).dtype == np.float32, (rule.name, i)


def test_rule_parameters_fit_their_functions():
    problems = []
    for rule in rules.all_rules():
        try:
            sig = inspect.signature(rule.primitive)
        except (TypeError, ValueError):
            continue
        problem = signature_problem(rule, sig)
        if problem:
            problems.append(f"{rule.name}: {problem}")
    assert not problems, "\n".join(problems)


def test_every_rule_is_tested():
    tested = {id(key(c.prim)) for c in CASES}
    missing = [r.name for r in rules.all_rules() if id(r.primitive) not in tested]
    assert not missing, f"rules without a row in tests/rule_cases.py: {missing}"


def test_at_least_150_rules():
    assert len({id(r.primitive) for r in rules.all_rules()}) >= 150


def test_max_splits_ties_evenly():
    rule = rules.lookup(np.max)
    x = np.array([1.0, 3.0, 3.0])
    assert np.allclose(rule.source(1.0, 3.0, x), [0.0, 0.5, 0.5])


def test_prod_with_a_zero():
    rule = rules.lookup(np.prod)
    x = np.array([2.0, 0.0, 3.0])
    assert np.allclose(rule.source(1.0, 0.0, x), [0.0, 6.0, 0.0])


def test_median_of_an_even_count_splits_between_the_middle_two():
    rule = rules.lookup(np.median)
    x = np.array([4.0, 1.0, 3.0, 2.0])
    assert np.allclose(rule.source(1.0, 2.5, x), [0.0, 0.0, 0.5, 0.5])


def test_norm_of_zero_vector_has_zero_gradient():
    rule = rules.lookup(np.linalg.norm)
    assert np.allclose(rule.source(1.0, 0.0, np.zeros(3)), 0.0)
