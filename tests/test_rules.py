"""Every registered derivative rule, called directly (no compiler), against finite differences:
along one random direction for one random cotangent, and, where the arguments and the
result are small (nearly every row), element by element over the whole Jacobian.

The table is tests/rule_cases.py (and rule_cases_scipy.py when SciPy is installed). A rule
that has no row fails `test_every_rule_is_tested`, so nothing is registered untested.
"""
import inspect
import zlib

import numpy as np
import pytest

from rule_cases import CASES
from sgcompiler import rules, runtime
from sgcompiler.rules.custom import signature_problem
from sgcompiler.rules.registry import key

try:
    import rule_cases_scipy  # noqa: F401  (adds the SciPy rows to CASES)
except ImportError as exc:
    SCIPY_MISSING = f"SciPy is not installed ({exc}): the SciPy rows of the rule table " \
        "are not run (pip install -e .[test] installs it)"
else:
    SCIPY_MISSING = ""

IDS = [c.id for c in CASES]


def _rng(case):
    return np.random.default_rng(zlib.crc32(case.id.encode()))


def _is_float(value) -> bool:
    """A float or a float array, or (rows of complex mode) a complex one."""
    if isinstance(value, list):          # a sequence of arrays (np.concatenate's arrays)
        return bool(value) and all(_is_float(v) for v in value)
    return isinstance(value, float) or (isinstance(value, np.ndarray) and value.dtype.kind
                                        in "fc")


def _random_like(r, value, dtype=None):
    """A random array (a list of them, for a sequence) shaped like `value`: complex, with
    random real and imaginary parts, where `value` is complex."""
    if isinstance(value, (list, tuple)):
        return [_random_like(r, v, dtype) for v in value]
    g = r.normal(size=np.shape(value))
    if np.iscomplexobj(value):
        return g + 1j * r.normal(size=np.shape(value))
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
    if np.iscomplexobj(a) or np.iscomplexobj(b):    # the pairing Re(g * dw) of complex mode
        return float(np.real(np.sum(np.asarray(a) * b)))
    return float(np.sum(np.asarray(a, dtype=float) * b))


def _difference(a, b):
    if isinstance(a, (list, tuple)):
        return [_difference(x, y) for x, y in zip(a, b)]
    return np.asarray(a, dtype=complex if np.iscomplexobj(a) else float) - b


def _seed_gradient(r, ans, case, dtype=None):
    """g for the rule: one per result (a list) for a function with several results, 0.0
    for those the case leaves without an adjoint."""
    g = _random_like(r, ans, dtype)
    if isinstance(ans, (tuple, list)):
        g = [0.0 if k in case.unused else gk for k, gk in enumerate(g)]
    return g


def _rule_grads(case, values, g):
    with rules.complex_values(case.complex_mode):
        rule = rules.lookup(case.prim)
    assert rule is not None, f"no rule registered for {case.prim}"
    rule = rules.as_called(rule, case.kw)
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
        # copies: a primitive that writes into an argument (add_at) must not see the
        # other side's write
        plus, minus = _copies(values), _copies(values)
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


def _copies(values):
    return [np.copy(v) if isinstance(v, np.ndarray) else v for v in values]


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
            got = runtime.real_like(grads[i], value) if case.complex_mode else grads[i]
            assert np.asarray(got).dtype == np.float32, (rule.name, i)


if SCIPY_MISSING:
    def test_scipy_rules():
        pytest.skip(SCIPY_MISSING)


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


# --- every component, on small shapes -----------------------------------------------------
# The test above checks one direction against one cotangent, which a wrong rule can pass
# (a transposed Jacobian, a wrong off-diagonal term that the two random vectors happen to
# weigh little). Here, where the arguments and results are small, every element of the
# Jacobian is compared: the rule's vector-Jacobian product with each one-hot cotangent
# gives a row, central differences in each input element give a column.

SMALL = 30          # at most this many elements in each checked argument and in the result


def _flatten(value, like=None):
    """The elements of an array, a float or a (nested) sequence of them, as one vector;
    with `like`, a 0.0 adjoint (or None) stands for zeros shaped like it."""
    like = value if like is None else like
    if isinstance(like, (list, tuple)):
        if not isinstance(value, (list, tuple)):
            value = [value] * len(like)
        return np.concatenate([_flatten(v, w) for v, w in zip(value, like)] + [np.zeros(0)])
    if value is None:
        value = 0.0
    if np.iscomplexobj(like):       # complex: its real parts, then its imaginary parts
        flat = np.broadcast_to(np.asarray(value, dtype=complex), np.shape(like)).ravel()
        return np.concatenate([flat.real, flat.imag])
    # (the adjoint of a real value is the real part of what a rule gives it)
    return np.broadcast_to(np.real(np.asarray(value)).astype(float), np.shape(like)).ravel()


def _unflatten(vector, like):
    """The inverse of _flatten: `vector` shaped like `like`."""
    if isinstance(like, (list, tuple)):
        out, start = [], 0
        for w in like:
            n = _size(w)
            out.append(_unflatten(vector[start:start + n], w))
            start += n
        return out
    if isinstance(like, (float, np.floating)) and not isinstance(like, np.ndarray):
        return float(vector[0])
    if np.iscomplexobj(like):
        n = int(np.size(like))
        return (vector[:n] + 1j * vector[n:]).reshape(np.shape(like))
    return vector.reshape(np.shape(like)).copy()


def _size(value):
    """How many real numbers `value` holds (two per complex element)."""
    if isinstance(value, (list, tuple)):
        return sum(_size(v) for v in value)
    return int(np.size(value)) * (2 if np.iscomplexobj(value) else 1)


def _conj(value):
    """The complex conjugate, element by element (of a sequence too). In complex mode a
    Jacobian row's cotangent is the conjugate of the one-hot vector over real and
    imaginary parts (Re(g * dw) = Re(dw) for g = 1, Im(dw) for g = -1j), and an
    adjoint's real and imaginary parts are d/dx and -d/dy."""
    if isinstance(value, (list, tuple)):
        return [_conj(v) for v in value]
    return np.conj(value) if np.iscomplexobj(value) else value


def _used_results(case, ans):
    """The results whose adjoints are checked (all but case.unused)."""
    if isinstance(ans, (tuple, list)):
        return [k for k in range(len(ans)) if k not in case.unused]
    return None


def _result_vector(case, ans):
    used = _used_results(case, ans)
    return _flatten(ans if used is None else [ans[k] for k in used])


def _cotangent(case, ans, vector):
    """The cotangent for the rule whose used results' elements are `vector`."""
    used = _used_results(case, ans)
    if used is None:
        return _conj(_unflatten(vector, ans))
    parts = _conj(_unflatten(vector, [ans[k] for k in used]))
    g = [0.0] * len(ans)
    for k, part in zip(used, parts):
        g[k] = part
    return g


def _jacobian_rows(case, values):
    """(ans, checked argument positions) when every checked argument and the result are
    small and float; None when the case is too big for this test."""
    ans = case.prim(*values, **case.kw)
    used = _used_results(case, ans)
    results = ans if used is None else [ans[k] for k in used]
    if not _is_float(list(results) if isinstance(results, (list, tuple)) else results) \
            and not isinstance(results, (int, float, np.floating)):
        return None
    if _size(results) > SMALL:
        return None
    with rules.complex_values(case.complex_mode):
        rule = rules.lookup(case.prim)
    positions = [i for i, v in enumerate(values) if _is_float(v) and _size(v) <= SMALL
                 and i < len(rule.params) and i not in case.fixed   # checked on its own
                 and rule.output_for(rule.params[i]) is not None]   # else: refused
    return (ans, positions) if positions else None


def _small_cases():
    out = []
    for case in CASES:
        r = _rng(case)
        values = [m(r) for m in case.makers]
        try:
            if _jacobian_rows(case, values) is not None:
                out.append(case)
        except Exception:       # a maker or primitive that needs the full test's setup
            pass
    return out


SMALL_CASES = _small_cases()


def test_most_rules_have_a_full_jacobian_check():
    checked = {id(key(c.prim)) for c in SMALL_CASES}
    assert len(checked) >= 0.9 * len({id(key(c.prim)) for c in CASES}), \
        "fewer rules than before get a full Jacobian check: make their rows small"


@pytest.mark.parametrize("case", SMALL_CASES, ids=[c.id for c in SMALL_CASES])
def test_rule_jacobian_matches_finite_differences_everywhere(case):
    r = _rng(case)
    values = [m(r) for m in case.makers]
    ans, positions = _jacobian_rows(case, values)
    with rules.complex_values(case.complex_mode):
        rule = rules.lookup(case.prim)
    n_out = _size(_result_vector(case, ans))
    rows = [None] * n_out
    for j in range(n_out):
        basis = np.zeros(n_out)
        basis[j] = 1.0
        rows[j] = _rule_grads(case, values, _cotangent(case, ans, basis))[1]
    for i in positions:
        value = values[i]
        got = np.array([_flatten(_conj(row[i]) if i < len(row) else None, value)
                        for row in rows])
        expected = np.zeros_like(got)
        for k in range(_size(value)):
            step = np.zeros(_size(value))
            step[k] = case.eps
            plus, minus = _copies(values), _copies(values)     # (add_at writes into one)
            plus[i] = _unflatten(_flatten(value) + step, value)
            minus[i] = _unflatten(_flatten(value) - step, value)
            expected[:, k] = (_result_vector(case, case.prim(*plus, **case.kw))
                              - _result_vector(case, case.prim(*minus, **case.kw))) \
                / (2 * case.eps)
        scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
        np.testing.assert_allclose(got, expected, rtol=case.rtol, atol=1e-6 * scale,
                                   err_msg=f"{rule.name}: the Jacobian of argument {i} "
                                   f"(rows: result elements, columns: argument elements)")
