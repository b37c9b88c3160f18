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
    if isinstance(value, list):          # a sequence of arrays (np.concatenate's arrays)
        return bool(value) and all(_is_float(v) for v in value)
    return isinstance(value, float) or (isinstance(value, np.ndarray) and value.dtype.kind == "f")


def _random_like(r, value, dtype=None):
    """A random array (a list of them, for a sequence) shaped like `value`."""
    if isinstance(value, (list, tuple)):
        return [_random_like(r, v, dtype) for v in value]
    g = r.normal(size=np.shape(value))
    if isinstance(value, float):
        return float(g)
    return np.asarray(g, dtype=dtype) if dtype else g


def _step(value, direction, eps):
    if isinstance(value, list):
        return [_step(v, d, eps) for v, d in zip(value, direction)]
    return value + eps * direction


def _inner(a, b) -> float:
    """<a, b> for arrays or (nested) sequences of them; a 0.0 adjoint stands for zeros."""
    if isinstance(a, (list, tuple)):
        return sum(_inner(x, y) for x, y in zip(a, b))
    return float(np.sum(np.asarray(a, dtype=float) * b))


def _difference(a, b):
    if isinstance(a, (list, tuple)):
        return [_difference(x, y) for x, y in zip(a, b)]
    return np.asarray(a, dtype=float) - b


def _seed_gradient(r, ans, case, dtype=None):
    """g for the rule: one per result (a list) for a function with several results, 0.0
    for those the case leaves without an adjoint."""
    g = _random_like(r, ans, dtype)
    if isinstance(ans, (tuple, list)):
        g = [0.0 if k in case.unused else gk for k, gk in enumerate(g)]
    return g


def _rule_grads(case, values, g):
    rule = rules.lookup(case.prim)
    assert rule is not None, f"no rule registered for {case.prim}"
    ans = case.prim(*values, **case.kw)
    assert rule.multiple_results == isinstance(ans, (tuple, list)), rule.name
    bound = dict(zip(rule.params, values))
    bound.update(case.kw)
    grads = rule.source(g, ans, **bound)
    return rule, grads if isinstance(grads, tuple) else (grads,)


def _shape_of(value):
    if isinstance(value, list):
        return [np.shape(v) for v in value]
    return np.shape(value)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_rule_matches_finite_differences(case):
    r = _rng(case)
    values = [m(r) for m in case.makers]
    g = _seed_gradient(r, case.prim(*values, **case.kw), case)
    rule, grads = _rule_grads(case, values, g)
    checked = 0
    for i, value in enumerate(values):
        if i >= len(grads) or grads[i] is None or not _is_float(value) or i in case.fixed:
            continue
        direction = _random_like(r, value)
        plus, minus = list(values), list(values)
        plus[i] = _step(value, direction, case.eps)
        minus[i] = _step(value, direction, -case.eps)
        change = _difference(case.prim(*plus, **case.kw), case.prim(*minus, **case.kw))
        numeric = _inner(g, change) / (2 * case.eps)
        zero = rule.is_zero(rule.params[i])
        if not zero:
            assert _shape_of(list(grads[i]) if isinstance(value, list) else grads[i]) \
                == _shape_of(value), (rule.name, i)
        analytic = _inner(grads[i], direction)
        np.testing.assert_allclose(analytic, numeric, rtol=case.rtol, atol=1e-7,
                                   err_msg=f"{rule.name}: argument {i}")
        checked += 1
    assert checked, f"{case.id}: no argument was checked"


def _float32(value):
    if isinstance(value, list):
        return [_float32(v) for v in value]
    if isinstance(value, (np.ndarray, np.floating)) and value.dtype.kind == "f":
        return value.astype(np.float32)
    return value


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_float32_gradients_stay_float32(case):
    r = _rng(case)
    values = [_float32(m(r)) for m in case.makers]
    if not any(isinstance(v, np.ndarray) and v.dtype == np.float32 for v in values
               if not isinstance(v, list)) and not any(isinstance(v, list) for v in values):
        pytest.skip("no float32 array argument")
    try:
        ans = case.prim(*values, **case.kw)
    except ValueError as exc:        # scipy.stats.dirichlet: not on the simplex in float32
        pytest.skip(f"the function refuses float32 arguments: {exc}")
    results = ans if isinstance(ans, (tuple, list)) else (ans,)
    floats = [a for a in results if np.asarray(a).dtype.kind == "f"]   # not lu_factor's piv
    if not floats or np.result_type(*floats) != np.float32:
        pytest.skip(f"the result is {np.result_type(*results)}")    # e.g. np.float_power
    g = _seed_gradient(r, ans, case, np.float32)
    rule, grads = _rule_grads(case, values, g)
    for i, value in enumerate(values):
        if i >= len(grads) or grads[i] is None or rule.is_zero(rule.params[i]):
            continue
        if isinstance(value, list):
            assert all(np.asarray(gi).dtype == np.float32 for gi in grads[i]), (rule.name, i)
        elif isinstance(value, np.ndarray) and value.dtype == np.float32:
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
