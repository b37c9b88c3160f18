"""`z[np.arange(n), y]`, the log-likelihood of integer labels (cross-entropy written the
common way), in code specialised for known shapes: np.arange of known ints and an index
by int arrays of known shapes have known shapes (analysis/values.py, shape_algebra._index),
and since np.arange(n)'s ints are all different and none negative (shapes.distinct), the
index picks no element twice: its adjoint is `dz[_arange, y] -= 1 / n`, not np.add.at
(reverse/adjoints.distinct_picks). Each form is checked against finite differences and
against the code for any shape, on several shapes; the cases below it must keep
np.add.at, since their picks may repeat."""
import numpy as np
import pytest

from gradcheck import assert_grad_matches
from sgcompiler import SGCompilerError, grad, hvp, jvp, stop_gradient

R = np.random.default_rng(2024)


def xent(W, X, y):
    logits = X @ W
    z = logits - stop_gradient(np.max(logits, axis=1, keepdims=True))
    lse = np.log(np.sum(np.exp(z), axis=1))
    return np.mean(lse - z[np.arange(len(y)), y])


def picked_twice(W, X, y):
    z = np.tanh(X @ W)
    rows = np.arange(X.shape[0])
    return np.sum(z[rows, y] ** 2) + np.sum(z[rows, y] * 3.0)


def rows_from_one(W, X, y):
    z = X @ W
    return np.sum(np.sin(z[np.arange(1, len(y) + 1), y]))


def data(n, d, k, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(d, k)), rng.normal(size=(n, d)), rng.integers(0, k, size=n)


SHAPES = [(6, 3, 4), (1, 2, 2), (9, 2, 5)]


@pytest.mark.parametrize("n, d, k", SHAPES)
@pytest.mark.parametrize("f", [xent, picked_twice])
def test_label_picks_against_finite_differences(f, n, d, k):
    W, X, y = data(n, d, k)
    assert_grad_matches(f, (W, X, y), wrt=(0, 1))
    # the same as the code for any shape, to the bit
    plain = grad(f, wrt=(0, 1)).as_function()
    for got, expected in zip(grad(f, wrt=(0, 1))(W, X, y), plain(W, X, y)):
        np.testing.assert_array_equal(got, expected)


def test_the_adjoint_of_a_label_pick_is_a_subtraction_not_add_at():
    W, X, y = data(50, 4, 3)
    g = grad(xent)
    g(W, X, y)
    header = " ".join(line.lstrip("# ") for line in g.source.splitlines()[:3])
    assert "every active value's shape is known" in header, header
    assert "dz[_arange, y] -= 0.02" in g.source, g.source
    assert "add.at" not in g.source and "unreduce" not in g.source


def test_labels_picked_from_a_row_offset_keep_add_at():
    """np.arange(1, n + 1) (rows from 1) is distinct too; its picks are distinct."""
    W, X, y = data(6, 3, 4)
    X = np.vstack([X, X[:1]])
    assert_grad_matches(rows_from_one, (W, X, y), wrt=(0,))


def negative_rows(W, X, y):
    z = X @ W
    rows = np.arange(-len(y) // 2, len(y) // 2)      # -3..2 of 6 rows: each row twice? no:
    return np.sum(z[rows, y] ** 2)                   # -3, -2, -1 are rows 3, 4, 5


def wrapped_rows(W, X, y):
    z = X @ W
    rows = np.arange(-2, 2)          # rows -2, -1, 0, 1 of a 2-row z: each row twice
    return np.sum(z[rows, y] ** 2)


def written_rows(W, X, y):
    z = X @ W
    rows = np.arange(len(y))
    rows[1] = 0                      # no longer all different
    return np.sum(z[rows, y] ** 2)


def passed_on(W, X, y):
    z = X @ W
    rows = np.arange(len(y))
    _clobber(rows)                   # writes into rows: its last row is its first now
    return np.sum(z[rows, y] ** 2)


def _clobber(r):
    r[-1] = r[0]


def aliased(W, X, y):
    z = X @ W
    rows = np.arange(len(y))
    first = np.sum(z[rows, y] ** 3)
    alias = rows
    alias[2] = 1                     # rows 1 and 2 are both row 1
    return first + np.sum(z[rows, y] ** 2)


def scaled_by_a_constant_changed_later(x):
    s = np.array([1.0, 2.0, 3.0])
    a = np.sum(x * s)
    t = s
    t[0] = 5.0                       # changes s: a's adjoint must not read it
    return a + np.sum(x * s)


def test_a_constant_written_through_an_alias_after_it_is_used_is_refused():
    """Session 11: these gave silently wrong gradients (d/dx[0] 6 where it is 1 + 5): the
    adjoint sweep read the constant (an index, a factor) as the later write through its
    alias left it. Writing into a name that shares memory with what the result is
    computed from is refused now, as it was for differentiated values."""
    W, X, y = data(5, 3, 3, seed=5)
    for f, args in ((aliased, (W, X, y)), (scaled_by_a_constant_changed_later,
                                           (R.normal(size=3),))):
        with pytest.raises(SGCompilerError, match="written in place later but may share "
                                                  "memory.*make it a copy") as caught:
            grad(f)(*args)
        assert "test_label_picks.py" in str(caught.value)
    # with the copy the message asks for, right
    assert_grad_matches(copied_first, (R.normal(size=3),))


def copied_first(x):
    s = np.array([1.0, 2.0, 3.0])
    a = np.sum(x * s)
    t = s.copy()
    t[0] = 5.0
    return a + np.sum(x * s) + np.sum(x * t)


def labels_as_rows(W, X, y):
    z = X @ W
    return np.sum(z[y, y] ** 2)      # the same label twice picks one element twice


@pytest.mark.parametrize("f, n", [(negative_rows, 6), (wrapped_rows, 4), (written_rows, 5),
                                  (passed_on, 5), (labels_as_rows, 5)])
def test_picks_that_may_repeat_add_each(f, n):
    W, X, y = data(n, 3, 3, seed=n)
    if f is wrapped_rows:
        X = X[:2]
    if f is labels_as_rows:
        W = R.normal(size=(3, 5))
        y = np.array([0, 1, 1, 2, 1])
    if f is passed_on:
        y = np.zeros(n, dtype=int)     # (the repeated rows pick the same column)
    assert_grad_matches(f, (W, X, y), wrt=(0,))
    g = grad(f)
    g(W, X, y)
    assert "add.at" in g.source or "add_at" in g.source, g.source


def test_label_picks_at_second_order_and_forward():
    W, X, y = data(7, 3, 4)
    V = R.normal(size=W.shape)
    eps = 1e-5
    g = grad(xent)
    expected = (g(W + eps * V, X, y) - g(W - eps * V, X, y)) / (2 * eps)
    np.testing.assert_allclose(hvp(xent, W, V, X, y), expected, rtol=1e-6, atol=1e-8)
    out, out_dot = jvp(xent, (W, X, y), (V, None, None))
    np.testing.assert_allclose(out_dot, np.sum(g(W, X, y) * V), rtol=1e-9)
