"""SciPy rules through the whole compiler, the checks the rule table cannot make (points on
a simplex, tuple arguments), the refusals, and that sgcompiler works without SciPy."""
import ast
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from gradcheck import assert_grad_matches
from sgcompiler import SGCompilerError, grad
from sgcompiler.rules import lookup

scipy = pytest.importorskip("scipy")
import scipy.linalg  # noqa: E402
import scipy.signal  # noqa: E402
import scipy.special as sp  # noqa: E402
import scipy.stats as stats  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent


# --- scipy.stats, compiled ---------------------------------------------------------------------


def gaussian_fit(x, mu, sigma):
    return -np.sum(stats.norm.logpdf(x, mu, sigma))


def student_t_fit(x, df, loc):
    return -np.sum(stats.t.logpdf(x, df, loc, 1.5)) + np.sum(stats.t.logcdf(x, 3.0, loc))


def gamma_model(x, a, scale):
    return np.sum(stats.gamma.logpdf(x, a, scale=scale)) + np.sum(stats.gamma.sf(x, 2.0))


def beta_model(x, a, b):
    return np.sum(stats.beta.pdf(x, a, b) * stats.lognorm.cdf(x + 1.0, a))


def mixed_tails(x, loc, scale):
    return (np.sum(stats.logistic.logsf(x, loc, scale)) + np.sum(stats.laplace.cdf(x, loc))
            + np.sum(stats.cauchy.logpdf(x, loc, scale))
            + np.sum(stats.expon.logcdf(x + 3.0, loc, scale)))


def poisson_rate(k, mu):
    return np.sum(stats.poisson.logpmf(k, mu)) + np.sum(stats.poisson.cdf(k, mu))


def gaussian_process(x, mean, cov):
    return np.sum(stats.multivariate_normal.logpdf(x, mean, cov))


def test_stats_families_through_the_compiler():
    r = np.random.default_rng(0)
    x = r.uniform(0.2, 0.8, size=(2, 3))
    assert_grad_matches(gaussian_fit, [r.normal(size=5), 0.3, 1.7])
    assert_grad_matches(student_t_fit, [r.normal(size=4), 4.0, np.array([0.1, -0.2, 0.3, 0.0])])
    assert_grad_matches(gamma_model, [x + 0.5, r.uniform(1.5, 3.0, size=3), 1.3])
    assert_grad_matches(beta_model, [x, r.uniform(1.5, 3.0, size=3), 2.5])
    assert_grad_matches(mixed_tails, [r.normal(size=(3, 2)), 0.2, r.uniform(1.0, 2.0, 2)])
    assert_grad_matches(poisson_rate, [np.array([0, 2, 5]), r.uniform(1.0, 3.0, 3)], wrt=[1])
    a = r.normal(size=(3, 3))
    assert_grad_matches(gaussian_process, [r.normal(size=(4, 3)), r.normal(size=3),
                                           a @ a.T + 3.0 * np.eye(3)])


def test_generated_code_calls_the_distribution_by_name():
    source = grad(mixed_tails, wrt=0).source
    assert "scipy.stats.laplace.pdf(" in source and "exp_ratio(" in source, source


def cdf_in_df(x, df):
    return np.sum(stats.t.cdf(x, df))


def frozen(x):
    dist = stats.norm(0.0, 2.0)
    return np.sum(dist.logpdf(x))


def test_a_shape_without_a_closed_form_derivative_is_refused_by_name():
    with pytest.raises(SGCompilerError, match=r"scipy.stats.t.cdf gives no gradient for its "
                                              r"parameter 'df'"):
        grad(cdf_in_df, wrt=1)(np.array([0.5]), 3.0)
    assert np.isfinite(grad(cdf_in_df, wrt=0)(np.array([0.5]), 3.0)).all()


def test_a_frozen_distribution_is_refused_with_a_message():
    with pytest.raises(SGCompilerError, match=r"test_scipy_rules.py:\d+.*logpdf"):
        grad(frozen)(np.array([0.5, 1.0]))


def test_dirichlet_gradient_in_x_along_the_simplex():
    r = np.random.default_rng(3)
    alpha = np.array([1.5, 2.0, 3.5, 0.8])
    for prim, x in [(stats.dirichlet.logpdf, r.dirichlet(alpha)),
                    (stats.dirichlet.pdf, r.dirichlet(alpha, size=5).T)]:
        rule = lookup(prim)
        g = r.normal(size=np.shape(prim(x, alpha)))
        dx, _ = rule.source(g, prim(x, alpha), x, alpha)
        v = r.normal(size=x.shape)
        v -= v.mean(axis=0)               # stays on the simplex: the components sum to 1
        eps = 1e-6
        numeric = np.sum(g * (prim(x + eps * v, alpha) - prim(x - eps * v, alpha))) / (2 * eps)
        np.testing.assert_allclose(np.sum(dx * v), numeric, rtol=1e-5)


def dirichlet_both(x, alpha):
    return np.sum(stats.dirichlet.logpdf(x, alpha) + 0.1 * stats.dirichlet.pdf(x, alpha))


def test_dirichlet_with_k_minus_one_components():
    """SciPy reads x of K-1 components as a point whose last one is 1 - sum(x); the
    gradient raised ValueError for it (issue 13). Any step keeps such a point inside the
    simplex, so both gradients are checked against finite differences."""
    alpha = np.array([1.5, 2.0, 3.0])
    for x in (np.array([0.2, 0.3]), np.array([[0.2, 0.1, 0.5], [0.3, 0.6, 0.1]])):
        assert_grad_matches(dirichlet_both, [x, alpha], wrt=(0, 1))


# --- scipy.special ------------------------------------------------------------------------------


def bessel_mix(z):
    return np.sum(sp.jv(1.5, z) + sp.kve(0.5, z) * sp.gammaincc(2.0, z) + sp.zeta(3.0, z))


def bessel_order(v, z):
    return np.sum(sp.iv(v, z))


def test_special_functions_through_the_compiler():
    assert_grad_matches(bessel_mix, [np.array([0.5, 1.2, 2.7])])
    with pytest.raises(SGCompilerError, match=r"scipy.special.iv gives no gradient for its "
                                              r"parameter 'v'"):
        grad(bessel_order, wrt=0)(1.0, np.array([1.0]))


def signed_logsumexp(a, b):
    value, sign = sp.logsumexp(a, axis=1, b=b, return_sign=True)
    return np.sum(value * sign) + np.sum(value)


def test_logsumexp_with_return_sign_and_negative_weights():
    a = np.random.default_rng(7).normal(size=(2, 3))
    b = np.array([[1.0, -2.0, 0.5], [1.0, 1.0, -0.2]])
    assert (sp.logsumexp(a, axis=1, b=b, return_sign=True)[1] == [-1.0, 1.0]).all()
    assert_grad_matches(signed_logsumexp, [a, b])


# --- scipy.linalg and scipy.signal, compiled ---------------------------------------------------


def cholesky_solve(a, b):
    factor = scipy.linalg.cho_factor(a)
    return np.sum(scipy.linalg.cho_solve(factor, b) * b)


def lu_solve_twice(a, b):
    factors = scipy.linalg.lu_factor(a)
    x = scipy.linalg.lu_solve(factors, b)
    return np.sum(scipy.linalg.lu_solve(factors, x, trans=1) ** 2)


def blocks_and_filters(a, b, k):
    m = scipy.linalg.block_diag(a, b)
    return np.sum(scipy.signal.convolve(m, k, mode="same") ** 2) + \
        np.sum(scipy.signal.correlate(np.sum(m, axis=0), k[0], mode="valid"))


def literal_tuple(a, b):
    c, low = scipy.linalg.cho_factor(a)
    return np.sum(scipy.linalg.cho_solve((c, low), b))


def test_linalg_and_signal_through_the_compiler():
    r = np.random.default_rng(5)
    m = r.normal(size=(3, 3))
    spd = m @ m.T + 3.0 * np.eye(3)
    assert_grad_matches(cholesky_solve, [spd, r.normal(size=3)])
    assert_grad_matches(lu_solve_twice, [r.normal(size=(3, 3)) + 3.0 * np.eye(3),
                                         r.normal(size=(3, 2))])
    assert_grad_matches(blocks_and_filters, [r.normal(size=(2, 2)), r.normal(size=(1, 3)),
                                             r.normal(size=(2, 2))])


def test_a_factor_tuple_written_in_the_call():
    r = np.random.default_rng(6)
    m = r.normal(size=(3, 3))
    assert_grad_matches(literal_tuple, [m @ m.T + 3.0 * np.eye(3), r.normal(size=3)])


# --- without SciPy -----------------------------------------------------------------------------


def _unguarded_scipy_imports(tree):
    """`import scipy...` statements of a module that are not inside a try statement."""
    todo = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Try):
            continue
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "scipy"
                                                for a in node.names):
            yield node.lineno
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "scipy":
            yield node.lineno
        todo.extend(ast.iter_child_nodes(node))


def test_only_the_scipy_rule_modules_import_scipy():
    offenders = []
    for path in sorted((ROOT / "sgcompiler").rglob("*.py")):
        if path.parent.name == "scipy":     # rules/scipy/ and runtime/scipy/
            continue
        for line in _unguarded_scipy_imports(ast.parse(path.read_text())):
            offenders.append(f"{path.relative_to(ROOT)}:{line}")
    assert not offenders, offenders


def test_sgcompiler_works_without_scipy(tmp_path):
    program = tmp_path / "no_scipy.py"
    program.write_text(
        "import sys; sys.modules['scipy'] = None\n"
        "import numpy as np, sgcompiler\n"
        "from sgcompiler.rules import all_rules\n"
        "def loss(x):\n"
        "    return np.sum(np.exp(x) * x)\n"
        "g = sgcompiler.grad(loss)(np.array([0.5, 1.0]))\n"
        "assert np.allclose(g, np.exp([0.5, 1.0]) * (1 + np.array([0.5, 1.0])))\n"
        "assert not any(r.name.startswith('scipy') for r in all_rules())\n"
        "print('ok')\n")
    done = subprocess.run([sys.executable, str(program)], capture_output=True, text=True,
                          cwd=tmp_path, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
