"""Shapes that follow from the arguments' shapes through what users write (analysis/values.py).

`x.shape[i]`, `len(x)`, tuples of them, `np.zeros/ones/full/empty(shape)`, `np.zeros_like`,
`reshape(-1, n)`, slices with computed bounds and `np.dot` of any rank: the gradient
specialised for the arguments' shapes knows the shapes of what they make, so it gets the
code a hand-writer would write (`d_add @ W.T`, not `dot_grad_left(d_dot2, h, W)`). Each
gradient is checked against finite differences on several shapes.
"""
import numpy as np
import pytest

from sgcompiler import grad
from sgcompiler.pipeline.stages import dump_stage

from gradcheck import numeric_grad

try:
    from scipy.special import logsumexp
except ImportError:         # SciPy is an optional extra
    logsumexp = None


def _check(f, shapes_list, wrt, seed=0):
    """One gradient of f, called with each list of argument shapes in turn; its source
    for the last one."""
    g = grad(f, wrt=wrt)
    rng = np.random.default_rng(seed)
    for arg_shapes in shapes_list:
        args = [rng.normal(size=s) * 0.5 for s in arg_shapes]
        got = g(*args)
        got = got if isinstance(got, tuple) else (got,)
        for i, value in zip(wrt, got):
            np.testing.assert_allclose(value, numeric_grad(f, args, i), rtol=1e-6,
                                       atol=1e-8, err_msg=f"{f.__name__} {arg_shapes}")
    return g.source


def rnn_made_state(W, U, xs):
    h = np.zeros((xs.shape[1], W.shape[1]))
    for t in range(xs.shape[0]):
        h = np.tanh(np.dot(xs[t], U) + np.dot(h, W))
    return np.sum(h ** 2)


def rnn_given_state(W, U, xs, h):
    for t in range(xs.shape[0]):
        h = np.tanh(np.dot(xs[t], U) + np.dot(h, W))
    return np.sum(h ** 2)


def _backward(source):
    """The adjoint sweep, without its comments (they give the source lines) and its
    `del`s (a parameter is not freed)."""
    lines = source[source.index("# backward"):].splitlines()
    return [line for line in lines if not line.strip().startswith(("#", "del "))]


def test_state_made_inside_gets_the_code_of_state_passed_in():
    made = _check(rnn_made_state, [((5, 5), (3, 5), (4, 2, 3)), ((3, 3), (2, 3), (2, 1, 2))],
                  wrt=(0, 1))
    assert "dh = d_add @ W.T" in made and "dot_grad" not in made and "unbroadcast" not in made
    # the per-step dW += h.T @ d_add, summed after the loop by one product of the steps'
    # rows one after the other, which is the first write of dW (optimize/loops/rows.py)
    assert "dW = _hs.T @ _d_adds" in made and "dW +=" not in made
    rng = np.random.default_rng(1)
    g = grad(rnn_given_state, wrt=(0, 1))
    g(rng.normal(size=(3, 3)), rng.normal(size=(2, 3)), rng.normal(size=(2, 1, 2)),
      np.zeros((1, 3)))
    assert _backward(made) == _backward(g.source)


def zeros_like_plus(x, w):
    z = np.zeros_like(x) + w
    return np.sum(np.sin(z) * x)


def ones_of_len(x, w):
    b = np.ones((len(x), 1)) * w
    return np.sum(np.cos(x * b))


def full_column(x, w):
    m = np.full((x.shape[0], 1), 2.0)
    return np.sum(np.sin(x * m + w))


def empty_filled(x, w):
    e = np.empty(x.shape)
    e[...] = 1.5
    return np.sum(np.sin(x * e + w))


@pytest.mark.parametrize("f", [zeros_like_plus, ones_of_len, full_column, empty_filled],
                         ids=lambda f: f.__name__)
def test_made_arrays_have_known_shapes(f):
    source = _check(f, [((4, 3), (3,)), ((2, 5), (1, 5)), ((3, 2), (2,))], wrt=(0, 1))
    assert "unbroadcast" not in source and "np.sum(d" in source


def reshaped(x, W):
    n = x.shape[-1]
    y = x.reshape(-1, n) @ W
    return np.sum(np.tanh(y))


def test_reshape_minus_one():
    source = _check(reshaped, [((2, 3, 4), (4, 5)), ((6, 2), (2, 3))], wrt=(0, 1))
    assert "matmul_grad" not in source and "_reshape.T @ dy" in source


def stencil(u, w):
    n = len(u)
    d = u[2:n] - u[0:n - 2]
    return np.sum(d * d * w)


def stencil_2d(u, w):
    n, m = u.shape
    lap = u[2:n, 1:m - 1] + u[0:n - 2, 1:m - 1] - 2.0 * u[1:n - 1, 1:m - 1]
    return np.sum(lap * lap * w)


def test_slices_with_computed_bounds():
    source = _check(stencil, [((7,), (5,)), ((4,), (1,)), ((5,), ())], wrt=(0, 1))
    assert "unbroadcast" not in source
    source = _check(stencil_2d, [((5, 4), (3, 2)), ((4, 6), (4,)), ((3, 3), (1, 1))],
                    wrt=(0, 1))
    assert "unbroadcast" not in source


def dot_3d(X, W, b):
    return np.sum(np.tanh(np.dot(X, W) + b))


def dot_3d_vector(X, v, b):
    return np.sum(np.sin(np.dot(X, v) * b))


def test_dot_of_higher_rank_operands():
    source = _check(dot_3d, [((1, 2, 3), (3, 2), (1, 2)), ((2, 3, 4), (4, 5), (5,))],
                    wrt=(1, 2))
    assert "unbroadcast" not in source and "np.sum(d_add, axis=(0, 1))" in source
    source = _check(dot_3d_vector, [((3, 2, 2), (2,), (3, 1)), ((2, 3, 4), (4,), (3,))],
                    wrt=(1, 2))
    assert "unbroadcast" not in source


def counter_state(x, w):
    n = x.shape[0]
    k = 1
    for i in range(3):
        k = k * 2          # assigned twice: its value is never taken as a constant
    z = np.zeros((n, k)) + w
    return np.sum(np.sin(z) * w)


def test_a_changing_int_is_not_a_constant():
    _check(counter_state, [((4, 3), (8,)), ((2,), (1,))], wrt=(1,))


def concatenated(x, k):
    c = np.kron(x, k)                   # (a function whose result's shape is not followed)
    s = np.sin(c) * 2.0
    return np.sum(s * c)


def _header(source):
    return " ".join(line[2:] for line in source.splitlines() if line.startswith("# "))


def test_the_header_says_what_is_specialised():
    rng = np.random.default_rng(0)
    g = grad(rnn_made_state, wrt=(0, 1))
    assert "specialised" not in _header(g.source)       # before a call: any shape
    g(rng.normal(size=(3, 3)), rng.normal(size=(2, 3)), rng.normal(size=(2, 1, 2)))
    assert "specialised for W (3, 3) float64, U (2, 3) float64, xs (2, 1, 2) float64: " \
           "every active value's shape is known" in _header(g.source)


def test_the_header_names_values_of_unknown_shape_with_their_lines():
    line = concatenated.__code__.co_firstlineno
    g = grad(concatenated)
    x, k = np.linspace(0, 1, 4), np.ones(2)
    np.testing.assert_allclose(g(x, k), numeric_grad(concatenated, [x, k], 0), rtol=1e-6)
    header = _header(g.source)
    assert f"c (line {line + 1}: np.kron is not followed)" in header
    assert f"s (line {line + 2}: from c)" in header


def state_of_number_size(W, U, xs, n):
    h = np.zeros((n, W.shape[1]))       # n is a number: its value is not specialised
    for t in range(xs.shape[0]):
        h = np.tanh(np.dot(xs[t], U) + np.dot(h, W))
    return np.sum(h ** 2)


def zeros_of_number_size(W, n):
    h = np.zeros((n, W.shape[1]))       # a constant: not active itself
    h = h + W[0]
    return np.sum(np.tanh(h) ** 2)


def test_the_header_names_the_root_a_loop_state_comes_from():
    # h is assigned before the loop and in it: the loop's assignment reads values of
    # unknown shape made from h itself, and the header said "h (line 2: from h)"
    line = state_of_number_size.__code__.co_firstlineno
    rng = np.random.default_rng(3)
    W, U, xs = rng.normal(size=(4, 4)) * 0.5, rng.normal(size=(3, 4)), rng.normal(size=(2, 2, 3))
    g = grad(state_of_number_size, wrt=(0, 1))
    got = g(W, U, xs, 2)
    for k in (0, 1):
        want = numeric_grad(lambda W, U: state_of_number_size(W, U, xs, 2), [W, U], k)
        np.testing.assert_allclose(got[k], want, rtol=1e-6, atol=1e-9)
    header = _header(g.source)
    assert (f"h (line {line + 1}: np.zeros of a size from the number n: the code is "
            "specialised for shapes, not for numbers' values)") in header
    assert f"_add (line {line + 3}: from h)" in header and "from h)" in header
    assert "(line {}: from h)".format(line + 1) not in header


def test_the_header_names_an_inactive_root_of_unknown_shape():
    line = zeros_of_number_size.__code__.co_firstlineno
    W = np.linspace(-1, 1, 12).reshape(3, 4)
    g = grad(zeros_of_number_size)
    np.testing.assert_allclose(g(W, 2), numeric_grad(lambda W: zeros_of_number_size(W, 2),
                                                     [W], 0), rtol=1e-6)
    header = _header(g.source)
    # h itself is a constant (no gradient flows into it), but what is computed from it
    # has no known shape because of it: the header names it and why
    assert f"h (line {line + 1}: np.zeros of a size from the number n" in header
    assert f"(line {line + 2}: from h)" in header


def test_the_cli_prints_it(capsys):
    from sgcompiler import cli
    assert cli.main([f"{__file__}:concatenated", "--shapes", "x=4,k=2"]) == 0
    out = _header(capsys.readouterr().out)
    assert "shapes not known" in out and "np.kron is not followed" in out


def rnn_bias(W, U, b, xs):
    h = np.zeros((xs.shape[1], W.shape[1]))
    for t in range(xs.shape[0]):
        h = np.tanh(np.dot(xs[t], U) + np.dot(h, W) + b)
    return np.sum(h * h)


def test_matrix_products_in_a_loop_are_summed_after_it():
    source = _check(rnn_bias, [((3, 3), (2, 3), (3,), (4, 5, 2)), ((2, 2), (1, 2), (2,),
                                                                  (1, 1, 1))],
                    wrt=(0, 1, 2))
    # the steps' rows one after the other: column sums and products (loops/rows.py)
    assert "db = np.sum(_d_add2s, axis=0)" in source
    assert "dU = _xs_ts.T @ _d_add2s" in source and "tensordot" not in source


def with_pi(x, s):
    z = x * s - 0.5 * np.log(2.0 * np.pi)
    return np.sum(np.sin(z))


def test_numpy_constants_are_numbers():
    source = _check(with_pi, [((4, 3), (3,)), ((2,), (2,))], wrt=(0, 1))
    assert "every active value's shape is known" in _header(source)
    assert "unbroadcast" not in source


def lse_rows(a, w):
    return np.sum(logsumexp(a * w, axis=1) * 2.0)


@pytest.mark.skipif(logsumexp is None, reason="SciPy is not installed")
def test_logsumexp_is_a_reduction():
    source = _check(lse_rows, [((4, 3), (3,)), ((2, 5), (2, 1))], wrt=(0, 1))
    assert "every active value's shape is known" in _header(source)


def test_balanced_eq_is_its_definition():
    from sgcompiler.runtime import balanced_eq
    x = np.array([[1.0, 0.0, -1.0, np.nan]])
    for y in (0.0, np.zeros((3, 1)), np.float32(0.0)):
        z = np.maximum(x, y)
        want = np.asarray(x == z, float) / (1.0 + np.asarray(x == y, float))
        got = balanced_eq(x, z, y)
        np.testing.assert_array_equal(got, want)
        assert got.shape == want.shape
    x32 = x.astype(np.float32)
    assert balanced_eq(x32, np.maximum(x32, np.float32(0)), np.float32(0)).dtype == np.float32


def _two(x, W):
    a = x @ W
    return a, np.sin(a)


def tuple_helper(x, W, b):
    a, s = _two(x, W)
    return np.sum(a * s + b)


def test_items_of_a_tuple_a_helper_returns():
    source = _check(tuple_helper, [((4, 3), (3, 5), (5,)), ((2, 2), (2, 1), (1,)),
                                   ((3,), (3, 2), (2,))], wrt=(0, 1, 2))
    assert "every active value's shape is known" in _header(source)


# np.array of a list or tuple display: the items' common shape after one axis
def stacked_numbers(x, y):
    v = np.array([np.sum(x * y), x[0], 1.5])
    return np.sum(np.sin(v) * y[:3])


def stacked_rows(x, y):
    w = np.array([x, y * 2.0])          # (2, n)
    return np.sum(np.tanh(w) * x)


def stacked_tuple(x, y):
    t = np.asarray((x[1], np.max(y)))
    return np.sum(t ** 2 * x[:2])


def list_changed_after(x, y):
    parts = [1.0, 2.0]
    parts.extend([3.0])                 # (read again: its length is not the display's)
    return np.sum(np.array(parts) * x[:3] * y[:3])


def ragged_or_mixed(x, y):
    w = np.array([np.sum(x), y[0] * 2.0])
    return np.sum(np.exp(w) * x[:2])


@pytest.mark.parametrize("f", [stacked_numbers, stacked_rows, stacked_tuple, ragged_or_mixed])
def test_np_array_of_a_display_has_a_known_shape(f):
    source = _check(f, [((3,), (3,)), ((5,), (5,))], wrt=(0, 1))
    assert "every active value's shape is known" in source, source


def test_a_list_changed_after_its_display_is_not_stacked_by_its_items():
    _check(list_changed_after, [((3,), (3,)), ((4,), (4,))], wrt=(0, 1))
    arrays = tuple((n, (3,), np.dtype(np.float64)) for n in ("x", "y"))
    found = dump_stage(list_changed_after, ("x",), "shapes", arrays=arrays)
    assert "_array: array _array\n" in found, found       # no shape: (2,) would be wrong
    found = dump_stage(stacked_numbers, ("x",), "shapes", arrays=arrays)
    assert "v: array v  (3,) float64" in found, found


# What users write to join, reshape and reorder arrays, with shapes known from the
# arguments' (analysis/sizes.py: _evaluated runs NumPy on stand-ins, _larger works out
# np.outer, np.einsum, np.broadcast_to, np.diag, np.linalg.solve/inv). x: (n,), A: (n, n).
def joined(x, A):
    parts = np.concatenate([x, x * 2.0])
    rows = np.stack([x, np.sin(x)], axis=1)
    return np.sum(np.sin(parts)) + np.sum(rows * np.vstack([x, x]).T) + np.sum(np.hstack([x, A[0]]))


def reordered(x, A):
    s = np.sort(x * 3.0) + np.flip(x) + np.roll(x, 1) + np.cumsum(x)
    t = np.swapaxes(A, 0, 1) + np.moveaxis(A, 0, -1) + np.triu(A) + np.tril(A, -1)
    return np.sum(np.sin(s)) + np.sum(np.tanh(t)) + np.sum(np.diff(x) ** 2)


def dimensions(x, A):
    e = np.expand_dims(x, 0) * A + np.atleast_2d(x)
    q = np.squeeze(e[None, :, :], axis=0) + np.ravel(A).reshape(A.shape)
    return np.sum(np.sin(q)) + np.sin(np.trace(A)) + np.sum(np.diagonal(A) * x)


def products(x, A):
    o = np.outer(x, np.cos(x))
    m = np.einsum("ij,j->i", A, x) + np.diag(A) + np.diag(x) @ x
    b = np.broadcast_to(x, (2,) + x.shape)
    s = np.linalg.solve(A + 3.0 * np.eye(len(x)), x) + np.linalg.inv(A + 3.0 * np.eye(len(x))) @ x
    return np.sum(np.sin(o)) + np.sum(np.tanh(m)) + np.sum(b * b) + np.sum(s ** 2)


@pytest.mark.parametrize("f", [joined, reordered, dimensions, products])
def test_joins_and_reorders_have_known_shapes(f):
    source = _check(f, [((3,), (3, 3)), ((5,), (5, 5))], wrt=(0, 1))
    assert "every active value's shape is known" in source, source
