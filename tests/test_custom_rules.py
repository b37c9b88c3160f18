"""sgcompiler.adjoint and sgcompiler.nondifferentiable: user rules, their scopes and checks.

Each test registers rules only for functions of its own (or in the helper modules
custom_rules_a/b and custom_lib), so no test changes what another one compiles.
"""
import math

import numpy as np
import pytest

import custom_lib
import custom_rules_a as A
import custom_rules_b as B
import sgcompiler
from gradcheck import assert_grad_matches, numeric_grad
from sgcompiler import SGCompilerError, grad
from sgcompiler.rules import registry


# --- scoping --------------------------------------------------------------------------------


def test_module_rule_applies_in_its_module():
    x, w = np.array([0.2, 1.7, -2.4]), np.array([1.0, 2.0, 3.0])
    assert np.allclose(grad(A.rounded)(x, w), w)          # straight through


def test_module_rule_does_not_leak_into_another_module():
    x, w = np.array([0.2, 1.7, -2.4]), np.array([1.0, 2.0, 3.0])
    assert np.allclose(grad(B.rounded)(x, w), 0.0)        # np.round is a constant there
    assert np.allclose(grad(B.rounded, wrt=1)(x, w), np.round(x))


def test_global_rule_applies_everywhere():
    x = np.array([0.5, -1.0, 2.0])
    assert np.allclose(grad(A.cubed)(x), 3 * x ** 2)
    assert np.allclose(grad(B.cubed)(x), 3 * x ** 2)
    assert "3.0 * " in grad(B.cubed).source                # the rule, not cube's body


def test_rule_for_a_scipy_function():
    pytest.importorskip("scipy")
    x = np.array([0.3, -1.2, 2.0])
    assert_grad_matches(A.dawson, [x])
    with pytest.raises(SGCompilerError, match=r"custom_rules_b.py:\d+.*no derivative rule "
                                              r"for scipy.special.dawsn"):
        grad(B.dawson)(x)


def test_scope_chain_goes_from_module_to_package_to_global():
    assert list(registry._scope_chain("pkg.sub.mod")) == ["pkg.sub.mod", "pkg.sub", "pkg",
                                                           registry.GLOBAL]
    assert list(registry._scope_chain(None)) == [registry.GLOBAL]


def tanh_scoped(x):
    return np.sum(np.tanh(x))


def test_scope_given_as_a_module():
    # a rule for np.tanh in custom_lib's scope changes nothing here
    @sgcompiler.adjoint(np.tanh, scope=custom_lib)
    def bogus_tanh(g, ans, x):
        return 0.0 * g
    x = np.array([0.1, 0.2])
    assert np.allclose(grad(tanh_scoped)(x), 1 - np.tanh(x) ** 2)
    assert registry.scoped_entry(np.tanh, "custom_lib")[1].source is bogus_tanh


def test_bad_scope_is_refused():
    with pytest.raises(SGCompilerError, match="scope must be"):
        sgcompiler.adjoint(np.tanh, scope="everywhere")


# --- custom gradients of user functions (as jax.custom_vjp) -------------------------------------


def safe_norm(x):
    return np.sqrt(np.sum(x * x))


@sgcompiler.adjoint(safe_norm)
def safe_norm_rule(g, ans, x):
    return g * x / np.where(ans == 0, 1.0, ans)


def naive_norm_loss(x):
    return np.sqrt(np.sum(x * x)) * 2.0


def norm_loss(x):
    return safe_norm(x) * 2.0


def test_custom_gradient_replaces_a_numerically_bad_one():
    zero = np.zeros(3)
    with np.errstate(invalid="ignore", divide="ignore"):
        assert np.all(np.isnan(grad(naive_norm_loss)(zero)))
    assert np.array_equal(grad(norm_loss)(zero), np.zeros(3))
    x = np.array([0.3, -1.0, 2.0])
    assert_grad_matches(norm_loss, [x])
    source = grad(norm_loss).source
    assert "np.where(" in source and "np.sqrt" not in source   # the rule, inlined


def test_custom_gradient_rule_for_a_function_is_global_when_its_module_gives_it():
    assert registry.scoped_entry(safe_norm, registry.GLOBAL)[1].source is safe_norm_rule


def polar(x, y):
    return np.hypot(x, y), np.arctan2(y, x)


@sgcompiler.adjoint(polar, multiple_results=True)
def polar_rule(g, ans, x, y):
    return (g[0] * x / ans[0] - g[1] * y / ans[0] ** 2,
            g[0] * y / ans[0] + g[1] * x / ans[0] ** 2)


def uses_polar(x, y):
    r, theta = polar(x, y)
    return np.sum(r * theta)


def uses_angle_only(x, y):
    _, theta = polar(x, y)
    return np.sum(theta ** 2)


def test_custom_rule_of_a_function_with_several_results():
    r = np.random.default_rng(0)
    x, y = r.uniform(0.5, 2, size=3), r.normal(size=3)
    assert_grad_matches(uses_polar, [x, y])
    assert_grad_matches(uses_angle_only, [x, y])


# --- registration checks ------------------------------------------------------------------------


def two_args(x, y=2.0):
    return x * y


@pytest.mark.parametrize("source, message", [
    ("def r(g, ans, z, y=2.0):\n    return g * y, g * z", "parameter 1 is 'z' but the "
                                                        "function's is 'x'"),
    ("def r(g, ans, x, y=2.0, k=1):\n    return g * y, g * x", "'k' is not a parameter"),
    ("def r(g, ans, y):\n    return g", "parameter 1 is 'y'"),
    ("def r(g, ans, x, y=3.0):\n    return g * y, g * x", "defaults to 3.0 in the rule but "
                                                        "to 2.0"),
    ("def r(g, x, y=2.0):\n    return g * y, g * x", "first two parameters must be"),
    ("def r(g, ans, x, y=2.0):\n    a = g * y\n    return a, g * x", "single 'return'"),
    ("def r(g, ans, x, y=2.0):\n    return g, g, g", "returns 3 gradients for 2"),
    ("def r(g, ans, x, y=2.0):\n    return None", "no gradient for any parameter"),
    ("def r(g, ans, x, y=[1]):\n    return g", "must be a literal"),
    ("def r(g, ans, *xs):\n    return g", "plain parameter"),
], ids=["renamed", "extra", "missing", "default", "no-ans", "statements", "too-many",
        "none", "list-default", "varargs"])
def test_wrong_rule_is_refused_at_registration(tmp_path, source, message):
    path = tmp_path / "rule_module.py"
    path.write_text("import numpy as np\n\n" + source + "\n")
    namespace = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    with pytest.raises(SGCompilerError, match=message) as info:
        sgcompiler.adjoint(two_args)(namespace["r"])
    assert "two_args" in str(info.value)
    assert registry.find(two_args, __name__) is None      # nothing was registered


def test_lambda_rule_is_refused():
    with pytest.raises(SGCompilerError, match="defined with def"):
        sgcompiler.adjoint(two_args)(lambda g, ans, x, y=2.0: (g * y, g * x))


def conflicted(x):
    return x * 2.0


def test_a_different_rule_in_the_same_scope_needs_override():
    def first(g, ans, x):
        return g * 2.0

    def second(g, ans, x):
        return g + g

    sgcompiler.adjoint(conflicted)(first)
    sgcompiler.adjoint(conflicted)(first)                  # the same rule again is fine
    with pytest.raises(SGCompilerError, match="already has the derivative rule .*first.*"
                                              "override=True"):
        sgcompiler.adjoint(conflicted)(second)
    sgcompiler.adjoint(conflicted, override=True)(second)
    assert registry.scoped_entry(conflicted, registry.GLOBAL)[1].source is second


def test_builtin_rule_cannot_be_replaced_globally_without_override():
    def my_sin(g, ans, x):
        return g * np.cos(x)
    with pytest.raises(SGCompilerError, match="np.sin has a built-in rule; replacing it "
                                              "globally"):
        sgcompiler.adjoint(np.sin, scope="global")(my_sin)
    with pytest.raises(SGCompilerError, match="built-in non-differentiable"):
        sgcompiler.adjoint(np.floor, scope="global")(my_sin)


# --- non-differentiable functions and late registration ------------------------------------------


def bucket(x):
    return np.floor(x * 4.0) / 4.0


sgcompiler.nondifferentiable(bucket)


def bucketed(x):
    return np.sum(bucket(x) * x)


def test_nondifferentiable_user_function_is_a_constant():
    x = np.array([0.3, 0.9, -0.4])
    assert np.allclose(grad(bucketed)(x), bucket(x))


def test_nondifferentiable_conflicts_with_a_rule_in_the_same_scope():
    with pytest.raises(SGCompilerError, match="safe_norm already has the derivative rule"):
        sgcompiler.nondifferentiable(safe_norm)


erf = np.vectorize(math.erf)


def uses_vectorized(x):
    return np.sum(erf(x) * x)


def test_rule_registered_later_takes_effect_for_later_compiles():
    """The same gradient object compiles again once a rule it needs is registered."""
    x = np.array([0.1, -0.5, 1.0])
    g = grad(uses_vectorized)
    with pytest.raises(SGCompilerError, match="no derivative rule for erf"):
        g(x)

    @sgcompiler.adjoint(erf)
    def erf_rule(g, ans, x):
        return g * 2.0 / np.sqrt(np.pi) * np.exp(-x * x)
    np.testing.assert_allclose(g(x), numeric_grad(uses_vectorized, [x], 0), rtol=1e-6)


def calls_rounded_sum(x):
    return custom_lib.rounded_sum(x) * 2.0


def test_rules_of_the_callee_module_apply_inside_a_called_function():
    x = np.array([0.2, 1.7, -2.4])
    g = grad(calls_rounded_sum)
    assert np.allclose(g(x), 2.0 * np.round(x))            # np.round is a constant

    @sgcompiler.adjoint(np.round, scope=custom_lib)
    def round_straight_through(g, ans, a, decimals=0, out=None):
        return g
    assert np.allclose(g(x), 2.0 * (np.round(x) + x))      # recompiled, callee included
