"""Every tangent (forward-mode) rule, evaluated directly on numbers (no compiler), against
central finite differences along a random direction: the rows of tests/rule_cases.py,
which cover several shapes, every broadcasting pair and the reduction axes.

A tangent rule is explicit (@jvp), linear or multilinear (the function of the tangents),
or derived from the adjoint rule (rules/derive.py); all are checked the same way.
"""
import ast
import zlib

import gast
import numpy as np
import pytest

from rule_cases import CASES
from sgcompiler import rules
from sgcompiler.rules.derive import tangent_rule
from sgcompiler.rules.registry import key

try:
    import rule_cases_scipy  # noqa: F401  (adds the SciPy rows to CASES)
except ImportError:
    pass

IDS = [c.id for c in CASES]

# functions with an adjoint rule but no tangent rule yet: jvp through them is refused
# with an SGCompilerError that names them (test_missing_tangent_rule_is_a_clear_error)
WITHOUT_TANGENT = {
    "np.linalg.matrix_power", "np.linalg.svdvals", "np.linalg.pinv", "np.linalg.multi_dot",
    "unbroadcast_each", "add_trees", "scipy.linalg.inv", "scipy.linalg.det",
    "scipy.linalg.solve", "scipy.linalg.solve_triangular", "scipy.linalg.cholesky",
    "scipy.linalg.eigvalsh", "scipy.linalg.expm", "scipy.linalg.sqrtm",
}


def _float(value) -> bool:
    if isinstance(value, list):
        return bool(value) and all(_float(v) for v in value)
    return isinstance(value, float) or (isinstance(value, np.ndarray) and value.dtype.kind
                                        in "fc")


def _random_like(r, value):
    """A random tangent like `value`: complex where `value` is (complex mode's rows)."""
    if isinstance(value, list):
        return [_random_like(r, v) for v in value]
    t = r.normal(size=np.shape(value))
    if np.iscomplexobj(value):
        return t + 1j * r.normal(size=np.shape(value))
    return float(t) if isinstance(value, float) else t


def _kind(*values):
    """complex when one of `values` is, else float (what finite differences compare in)."""
    return complex if any(np.iscomplexobj(v) for v in values) else float


def _zero_like(value):
    if isinstance(value, list):
        return [_zero_like(v) for v in value]
    return 0.0 if isinstance(value, float) else np.zeros_like(value, dtype=float)


def _step(value, direction, eps):
    if isinstance(value, list):
        return [_step(v, d, eps) for v, d in zip(value, direction)]
    return value + eps * direction


def _evaluate(rule, expr, names):
    tree = ast.Expression(gast.gast_to_ast(expr))
    ast.fix_missing_locations(tree)
    return eval(compile(tree, "<tangent rule>", "eval"), dict(rule.namespace), names)


def _tangent(case, rule, values, tangents):
    """The rule's tangent of the result for `tangents` (param -> tangent; the others 0)."""
    bound = dict(zip(rule.params, values))
    prim = lambda *a: case.prim(*a, **case.kw)      # noqa: E731
    if rule.kind == "linear":
        args = [tangents.get(p, _zero_like(v)) if rule.tangent_of(p) else v
                for p, v in zip(rule.params, values)]
        return prim(*args)
    if rule.kind == "multilinear":
        total = 0.0
        for p in tangents:
            args = [tangents[p] if q == p else v for q, v in zip(rule.params, values)]
            total = total + np.asarray(prim(*args))
        return total
    names = dict(rule.defaults)
    names.update(bound)
    names.update(case.kw)
    names["ans"] = case.prim(*values, **case.kw)
    for p, t in rule.tangents:
        names[t] = tangents.get(p, 0.0)
    if rule.multiple_results:
        outs = [_evaluate(rule, o, names) for o in rule.outputs]
        return outs[0] if len(outs) == 1 else tuple(outs)
    total = 0.0
    for (p, t), out in zip(rule.tangents, rule.outputs):
        if p in tangents:
            total = total + np.asarray(_evaluate(rule, out, names))
    return total


def _as_list(value):
    return list(value) if isinstance(value, (tuple, list)) else [value]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_tangent_rule_matches_finite_differences(case):
    with rules.complex_values(case.complex_mode):
        adjoint = rules.lookup(case.prim)
        rule = tangent_rule(key(case.prim), adjoint)
    if rule is None:
        assert adjoint.name in WITHOUT_TANGENT, \
            f"{adjoint.name} has no tangent rule"
        pytest.skip(f"no tangent rule for {adjoint.name}")
    r = np.random.default_rng(zlib.crc32(case.id.encode()))
    values = [m(r) for m in case.makers]
    params = [p for p, _ in rule.tangents]
    tangents = {p: _random_like(r, v) for i, (p, v) in enumerate(zip(rule.params, values))
                if p in params and _float(v) and i not in case.fixed}
    if not tangents:
        pytest.skip("no float argument with a tangent")
    plus = [_step(v, tangents[p], case.eps) if p in tangents else v
            for p, v in zip(rule.params, values)]
    minus = [_step(v, tangents[p], -case.eps) if p in tangents else v
             for p, v in zip(rule.params, values)]
    ans = case.prim(*values, **case.kw)
    numeric = [(np.asarray(a, dtype=_kind(a)) - np.asarray(b, dtype=_kind(b))) / (2 * case.eps)
               for a, b in zip(_as_list(case.prim(*plus, **case.kw)),
                               _as_list(case.prim(*minus, **case.kw)))]
    analytic = _as_list(_tangent(case, rule, values, tangents))
    for k, (a, n, out) in enumerate(zip(analytic, numeric, _as_list(ans))):
        if k in case.unused:
            continue
        a = np.broadcast_to(np.asarray(a, dtype=_kind(a, n)), np.shape(out)) \
            if not rule.full_shape else np.asarray(a, dtype=_kind(a, n))
        assert a.shape == np.shape(out), (rule.name, k, a.shape, np.shape(out))
        np.testing.assert_allclose(a, n, rtol=max(case.rtol, 1e-5), atol=1e-6,
                                   err_msg=f"{rule.name}: result {k}")
