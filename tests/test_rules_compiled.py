"""Every rule once more, through the compiler: for the first row of each primitive in the
rule table, `loss = sum(<w, prim(...)>)` is compiled and its gradient checked against
finite differences. This catches what calling a rule directly cannot: inlining (defaults,
keyword-only parameters, zero gradients), methods of linking names, sequences and several
results as the compiler passes them.

The functions are written to a file (the compiler reads source), one per primitive, with
the primitive bound to a module-level name.

Nothing is skipped silently: a primitive with several results is skipped by name
(SEVERAL_RESULTS, covered by tests/test_numpy_coverage.py), and an exception from `grad()`
fails the test unless the row is in KNOWN_GRAD_ERRORS with its reason.
"""
import importlib.util
import sys
import zlib

import numpy as np
import pytest

from rule_cases import CASES
from sgcompiler import grad, rules
from sgcompiler.rules.registry import key

try:
    import rule_cases_scipy  # noqa: F401  (adds the SciPy rows to CASES)
except ImportError as exc:
    SCIPY_MISSING = f"SciPy is not installed ({exc}): its rules are not compiled"
else:
    SCIPY_MISSING = ""

# Rows of primitives with several results: the weighing below takes one array.
SEVERAL_RESULTS = {"split", "array_split", "hsplit", "vsplit", "dsplit", "slogdet", "eigh",
                   "svd", "qr", "lstsq", "eig",
                   "cho_factor", "lu_factor"}
# row id: why grad() raises for it (a TypeError was skipped here before, silently).
KNOWN_GRAD_ERRORS: dict = {}


def _first_rows():
    seen, rows = set(), []
    for case in CASES:
        if id(key(case.prim)) not in seen:
            seen.add(id(key(case.prim)))
            rows.append(case)
    return rows


ROWS = _first_rows()


def _function_source(k, case):
    args = [f"a{i}" for i in range(len(case.makers))]
    kws = [f"{name}=k_{name}" for name in case.kw]
    params = ", ".join(args + [f"k_{name}" for name in case.kw] + ["w"])
    call = f"P{k}({', '.join(args + kws)})"
    return (f"def f{k}({params}):\n"
            f"    out = {call}\n"
            f"    return weigh(out, w)\n")


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    path = tmp_path_factory.mktemp("compiled_rules") / "compiled_rules.py"
    header = ("import numpy as np\n\n\n"
              "def weigh(out, w):\n"
              "    return np.real(np.sum(out * w))\n\n\n")
    path.write_text(header + "\n\n".join(_function_source(k, c) for k, c in enumerate(ROWS)))
    spec = importlib.util.spec_from_file_location("compiled_rules", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["compiled_rules"] = mod
    spec.loader.exec_module(mod)
    for k, case in enumerate(ROWS):
        setattr(mod, f"P{k}", case.prim)
    yield mod
    del sys.modules["compiled_rules"]


def _is_float(value):
    if isinstance(value, list):
        return bool(value) and all(_is_float(v) for v in value)
    return isinstance(value, (float, np.floating)) or \
        (isinstance(value, np.ndarray) and value.dtype.kind in "fc")


def _inner(a, b):
    """<a, b>; for complex values Re(sum(a * b)), the pairing of complex mode's gradients
    (df/dx - i df/dy) with a complex direction."""
    if isinstance(a, (list, tuple)):
        return sum(_inner(x, y) for x, y in zip(a, b))
    if np.iscomplexobj(a) or np.iscomplexobj(b):
        return float(np.real(np.sum(np.asarray(a) * b)))
    return float(np.sum(np.asarray(a, dtype=float) * b))


def _random_like(r, value):
    if isinstance(value, (list, tuple)):
        return [_random_like(r, v) for v in value]
    out = r.normal(size=np.shape(value))
    if np.iscomplexobj(value):
        return out + 1j * r.normal(size=np.shape(value))
    return float(out) if isinstance(value, (float, np.floating)) else out


def _copies(values):
    return [np.copy(v) if isinstance(v, np.ndarray) else v for v in values]


def _step(value, direction, eps):
    if isinstance(value, list):
        return [_step(v, d, eps) for v, d in zip(value, direction)]
    return value + eps * direction


@pytest.mark.parametrize("k", range(len(ROWS)), ids=[c.id for c in ROWS])
def test_compiled_rule_matches_finite_differences(module, k):
    case = ROWS[k]
    f = getattr(module, f"f{k}")
    r = np.random.default_rng(zlib.crc32(case.id.encode()))
    values = [m(r) for m in case.makers]
    out = case.prim(*values, **case.kw)
    several = isinstance(out, (tuple, list))
    assert several == (case.id in SEVERAL_RESULTS), \
        f"{case.id}: several results is {several}; update SEVERAL_RESULTS"
    if several:
        pytest.skip("several results: covered by tests/test_numpy_coverage.py")
    w = _random_like(r, np.asarray(out))     # (complex for a complex result)
    args = values + list(case.kw.values()) + [w]
    with rules.complex_values(case.complex_mode):
        rule = rules.lookup(case.prim)
    wrt = [i for i, v in enumerate(values)
           if _is_float(v) and rule.output_for(rule.params[i]) is not None
           and i not in case.fixed]
    for i in wrt:
        if case.id in KNOWN_GRAD_ERRORS:
            with pytest.raises(Exception) as raised:
                grad(f, wrt=i)(*args)
            pytest.xfail(f"{KNOWN_GRAD_ERRORS[case.id]}: {raised.value}")
        g = grad(f, wrt=i)(*args)
        direction = _random_like(r, values[i])
        # copies: a primitive that writes into an argument (add_at) must not see the
        # other side's write
        plus, minus = _copies(args), _copies(args)
        plus[i], minus[i] = _step(values[i], direction, case.eps), \
            _step(values[i], direction, -case.eps)
        numeric = (f(*plus) - f(*minus)) / (2 * case.eps)
        np.testing.assert_allclose(_inner(g, direction), numeric, rtol=case.rtol * 10,
                                   atol=1e-6, err_msg=f"{case.id}: argument {i}")
    assert wrt, case.id


if SCIPY_MISSING:
    def test_scipy_rules_compiled():
        pytest.skip(SCIPY_MISSING)
