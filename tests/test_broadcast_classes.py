"""Broadcasts of the same shape classes share a class (analysis/shapes.py), so a mean's
adjoint stays a number through the sum of its terms (no array of n filled with 1/n, on
code for any shape too: dask's path); and a negated first write followed by an addition
is one subtraction (optimize/algebraic/negations.py). Gradients against finite
differences, on several shapes, with broadcasting."""
import gast
import numpy as np
import pytest

from gradcheck import assert_grad_matches
from sgcompiler import grad
from sgcompiler.backend.codegen import to_source
from sgcompiler.optimize.algebraic.negations import fold_negated_sums


def two_terms(z, y):
    return np.mean(y * np.log(z) + (1.0 - y) * np.log(2.0 - z))


def terms_of_three(a, b, c):
    return np.sum(a * b - b * c + np.sin(c * a))


def grows_in_a_loop(x, y):
    s = x
    for _ in range(2):
        s = s * 0.5 + y
    t = s * y
    return np.mean(t + y * x)


@pytest.mark.parametrize("f, shapes", [
    (two_terms, [(5,), (5,)]), (two_terms, [(4,), (3, 1)]), (two_terms, [(2, 3), (3,)]),
    (two_terms, [(1,), (4,)]), (terms_of_three, [(3, 1), (1, 4), (4,)]),
    (terms_of_three, [(2,), (2,), (2,)]), (grows_in_a_loop, [(3,), (2, 3)]),
    (grows_in_a_loop, [(2, 1), (2, 4)])])
def test_gradient_matches_differences(f, shapes):
    rng = np.random.default_rng(len(shapes[0]) + len(shapes[1]))
    args = [rng.uniform(0.2, 1.5, size=s) for s in shapes]
    assert_grad_matches(f, args)


def test_a_mean_of_terms_fills_no_array():
    g = grad(two_terms, wrt="z")
    g(np.full(4, 0.5), np.ones(4))
    back = g.source.split("# backward")[1]
    assert "np.full" not in back and "unreduce" not in back, g.source


def _run(text, env):
    out = dict(env)
    exec(text, {"np": np}, out)
    return out


PURE = lambda stmt: isinstance(stmt, gast.Assign) and len(stmt.targets) == 1  # noqa: E731


@pytest.mark.parametrize("body, folded", [
    ("dz = -(a * p)\nd = b * y\ndz = dz + d * q", "dz = d * q - a * p"),
    ("dz = -(a * p)\ndz += b", "dz = b - a * p"),
    ("n = -a\nm = b + n", "m = b - a"),
    ("dz = -(a * p)\np = b\ndz = dz + q", None),      # p changes in between
    ("dz = -(a * p)\nr = dz * 2\ndz = dz + q", None),  # read in between
    ("n = -a\nm = b + n\nr = n * 2", None),           # the negation is read again
    ("dz = -(a * p)\ndz = dz + dz", None),
])
def test_negated_sums(body, folded):
    tree = gast.parse(body)
    fold_negated_sums(tree, PURE)
    text = to_source(tree, "").strip()
    if folded is None:
        assert text.count("-") == body.count("-"), text
    else:
        assert folded in text and "-(" not in text.replace(folded, ""), text
    rng = np.random.default_rng(0)
    env = {k: rng.normal(size=3) for k in "abpqy"}
    expected, got = _run(body, env), _run(text, env)
    for name in expected:
        if name in got:
            np.testing.assert_array_equal(got[name], expected[name])   # to the bit
