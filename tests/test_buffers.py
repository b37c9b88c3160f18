"""Writing into an operand that dies (optimize/memory/buffers.py): `np.exp(z, out=z)`.

Each case checks the gradient against finite differences and what the generated code
does: where a write into a buffer is allowed (the operand is an array this code made, of
the result's shape and dtype, never read again) and where it is not (an argument, a value
read later, an array another name shares, a smaller operand, another dtype).
"""
import numpy as np
import pytest

from sgcompiler import grad, value_and_grad

from gradcheck import checked_source

try:
    from scipy.special import logsumexp
except ImportError:         # SciPy is optional: the test that needs it skips
    logsumexp = None


def _grad_and_source(f, *args, wrt=0):
    return checked_source(f, args, wrt)


def softmax_xent(logits, labels):
    z = logits - np.max(logits, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.sum(labels * (z - lse))


def test_softmax_writes_into_what_dies():
    rng = np.random.default_rng(0)
    logits, labels = rng.normal(size=(3, 4)), rng.random((3, 4))
    source = _grad_and_source(softmax_xent, logits, labels)
    assert "np.exp(z, out=z)" in source
    assert "out=logits" not in source and "out=labels" not in source   # arguments


def chain(x):
    a = x * 2.0
    b = np.sin(a)
    c = b * b
    return np.sum(c)


def test_a_chain_of_temporaries():
    source = _grad_and_source(chain, np.linspace(-1.0, 1.0, 5))
    assert "out=" in source


def read_later(x):
    a = x * 2.0
    b = np.exp(a)
    return np.sum(b * a)


def test_an_operand_read_later_is_not_written():
    source = _grad_and_source(read_later, np.linspace(-1.0, 1.0, 5))
    assert "np.exp(a, out=a)" not in source


def shared(x):
    a = x * 2.0
    keep = [a]
    b = np.exp(a)
    return np.sum(b) + np.sum(keep[0])


def test_an_array_a_container_holds_is_not_written():
    source = _grad_and_source(shared, np.linspace(-1.0, 1.0, 5))
    assert "out=a" not in source


def smaller(x, y):
    a = x * 2.0
    b = a + y        # y is larger: the result does not fit in a
    return np.sum(b * b)


def test_a_smaller_operand_is_not_written():
    rng = np.random.default_rng(1)
    source = _grad_and_source(smaller, rng.normal(size=3), rng.normal(size=(4, 3)),
                              wrt=(0, 1))
    assert "out=a" not in source


def mixed(x, y):
    a = x * 2.0
    b = a * y        # float32 * float64 is float64: a float32 buffer cannot hold it
    return np.sum(b)


def test_another_dtype_is_not_written():
    g = grad(mixed, wrt=(0, 1))
    x, y = np.ones(3, dtype=np.float32), np.ones(3)
    dx, dy = g(x, y)
    assert dx.dtype == np.float32 and "out=a" not in g.source
    np.testing.assert_allclose(dy, 2.0 * x)


def in_loop(x):
    total = 0.0
    for i in range(3):
        a = x * float(i)
        total = total + np.sum(np.exp(a))
    return total


def test_loops_are_left_alone():
    source = _grad_and_source(in_loop, np.linspace(-1.0, 1.0, 4))
    assert "out=" not in source.split("# backward")[0].split("for ")[1]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_are_unchanged_by_reuse(dtype):
    rng = np.random.default_rng(2)
    logits = rng.normal(size=(5, 6)).astype(dtype)
    labels = rng.random((5, 6)).astype(dtype)
    value, g = value_and_grad(softmax_xent)(logits, labels)
    assert g.dtype == dtype
    assert value == pytest.approx(softmax_xent(logits, labels), rel=1e-5)
    z = logits - np.max(logits, axis=1, keepdims=True)
    p = np.exp(z) / np.sum(np.exp(z), axis=1, keepdims=True)
    expected = p * np.sum(labels, axis=1, keepdims=True) - labels
    np.testing.assert_allclose(g, expected, rtol=1e-4 if dtype == np.float32 else 1e-10)


def test_arguments_are_not_changed():
    rng = np.random.default_rng(3)
    logits, labels = rng.normal(size=(3, 4)), rng.random((3, 4))
    before = logits.copy(), labels.copy()
    grad(softmax_xent)(logits, labels)
    np.testing.assert_array_equal(logits, before[0])
    np.testing.assert_array_equal(labels, before[1])


def nested(x, w):
    a = np.sin(x)
    return np.sum(np.sum(a * w, axis=0) ** 2)


def test_an_operand_of_a_nested_operation():
    rng = np.random.default_rng(4)
    source = _grad_and_source(nested, rng.normal(size=(4, 3)), rng.normal(size=3),
                              wrt=(0, 1))
    assert "out=" in source


def squares(x, y):
    return np.sum(x * x * y)


def test_a_sum_of_two_equal_terms_is_doubled():
    # the adjoint of x * x is d * x + d * x: computed once, doubled (exactly equal)
    rng = np.random.default_rng(5)
    source = _grad_and_source(squares, rng.normal(size=4), rng.normal(size=4), wrt=(0, 1))
    assert ("* 2" in source or "*= 2" in source) and "x + " not in source


def rnn(W, U, b, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t] + b)
    return np.sum(h * h)


@pytest.mark.parametrize("steps", [0, 1, 4])
def test_outer_products_of_a_loop_are_one_matrix_product(steps):
    rng = np.random.default_rng(6)
    args = (rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(3, 2)), rng.normal(size=3),
            rng.normal(size=(steps, 2)), rng.normal(size=3))
    source = _grad_and_source(rnn, *args, wrt=(0, 1, 2))
    if steps:       # (with no steps, xs[t] has no shape to know)
        assert "np.outer" not in source and ".append(" in source


def outer_then_changed(W, xs, h0):
    h = h0
    total = 0.0
    for t in range(xs.shape[0]):
        a = W @ h
        h = np.tanh(a + xs[t])
        total = total + np.sum(a * a) + np.sum(h)
    return total


def test_vectors_changed_after_the_product_are_not_batched():
    # the adjoint of `a` gets two contributions, the second added in place after the
    # outer product that reads it: batching would see the changed vector
    rng = np.random.default_rng(7)
    args = (rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(4, 3)), rng.normal(size=3))
    source = _grad_and_source(outer_then_changed, *args, wrt=(0,))
    assert "np.outer(da, h)" in source


def reciprocal_root(x, y):
    c = np.sqrt(x * x + y * y + 1.0)
    return np.sum(c * np.tanh(x * y))


def test_an_operation_on_a_new_temporary_writes_into_it(monkeypatch):
    # e.g. d_add = 1.0 / (2.0 * c): the product is a new array, the quotient goes into it
    # (for arrays of 64 KiB and more; a small one keeps the expression whole)
    from sgcompiler import pipeline
    from sgcompiler.optimize.memory import buffers
    rng = np.random.default_rng(8)
    args = rng.normal(size=5), rng.normal(size=5)
    source = _grad_and_source(reciprocal_root, *args, wrt=(0, 1))
    assert "out=d_add" not in source
    monkeypatch.setattr(buffers, "_LARGE", 0)
    monkeypatch.setattr(pipeline, "_CACHE", {})     # compile again
    source = _grad_and_source(reciprocal_root, *args, wrt=(0, 1))
    assert "np.divide(dc, d_add, out=d_add)" in source


def pooled(x, w):
    a = x * x
    s = np.sum(a * w, axis=1)
    return np.sum(np.sin(s))


def test_a_large_array_that_died_earlier_is_reused():
    # d(a * w) is a broadcast view times w: no operand dies there, but the (100, 100)
    # product a * w died when only its shape was read
    from gradcheck import assert_grad_matches
    rng = np.random.default_rng(9)
    x, w = rng.normal(size=(100, 100)), rng.normal(size=100)
    assert_grad_matches(pooled, [x, w])
    g = grad(pooled, wrt=(0, 1))
    g(x, w)
    assert "np.multiply(d_mul, w, out=_mul)" in g.source
    g(x[:10, :10], w[:10])          # small arrays: a new one is cheap, and clearer
    assert "out=_mul)" not in g.source


def scaled_batch(mu, log_s, X):
    diff = X[:, None, :] - mu
    inv = np.exp(-2.0 * log_s)
    q = np.sum(diff * diff * inv, axis=2)
    return np.sum(np.tanh(q))


@pytest.mark.parametrize("n, k, d", [(6, 3, 2), (200, 5, 2), (1, 1, 1)])
def test_factors_constant_along_a_sum_multiply_the_sum(n, k, d):
    # d mu = -sum_i d_q * inv * diff * 2: inv does not depend on i, so it multiplies the
    # (k, d) sum rather than every term
    from gradcheck import assert_grad_matches
    rng = np.random.default_rng(10)
    args = [rng.normal(size=(k, d)), rng.normal(size=(k, d)) * 0.1, rng.normal(size=(n, d))]
    assert_grad_matches(scaled_batch, args, wrt=(0, 1))
    g = grad(scaled_batch, wrt=0)
    g(*args)
    if k > 1 and d > 1:
        assert ", axis=0) * inv" in g.source


def batch_varying(w, X):
    a = X * w               # (n, d) * (d,)
    b = np.sum(a * X, axis=1)
    return np.sum(np.sin(b))


def test_factors_that_vary_along_the_sum_stay_inside():
    from gradcheck import assert_grad_matches
    rng = np.random.default_rng(11)
    assert_grad_matches(batch_varying, [rng.normal(size=3), rng.normal(size=(5, 3))],
                        wrt=(0,))


def rnn_skipping(W, b, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        if t == 1:
            continue
        h = np.tanh(W @ h + xs[t] + b)
    return np.sum(h * h)


def test_the_bias_sum_comes_from_the_stack_and_skipping_loops_stay():
    rng = np.random.default_rng(12)
    args = (rng.normal(size=(3, 3)) * 0.5, rng.normal(size=3), rng.normal(size=(4, 3)),
            rng.normal(size=3))
    source = _grad_and_source(rnn, args[0], rng.normal(size=(3, 2)), args[1],
                              rng.normal(size=(4, 2)), args[3], wrt=(0, 1, 2))
    # (the sum is db's first write: optimize/loops/rows.py)
    assert "db = np.sum(_d_add2s, axis=0)" in source
    _grad_and_source(rnn_skipping, *args, wrt=(0, 1))


def _reused(source, arrays, monkeypatch):
    """The buffer pass run on `source` (a function) with every array counted as large."""
    import ast as stdast

    import gast

    from sgcompiler.optimize.memory import buffers
    from sgcompiler.optimize.known.code_shapes import code_shapes
    monkeypatch.setattr(buffers, "_LARGE", 0)
    tree = gast.parse(source).body[0]
    buffers.reuse_buffers(code_shapes(tree, arrays, "np", {}))
    return stdast.unparse(gast.gast_to_ast(gast.Module(body=[tree], type_ignores=[])))


def test_an_operand_read_twice_in_a_statement_is_not_written(monkeypatch):
    arrays = {"x": ((5,), np.dtype(float))}
    out = _reused("def f(x):\n    a = x * 2.0\n    b = np.sum(a * x + a, axis=0)\n"
                  "    return b\n", arrays, monkeypatch)
    assert "out=a" not in out
    out = _reused("def f(x):\n    a = x * 2.0\n    b = a * x + x\n    return b\n", arrays,
                  monkeypatch)
    assert "np.multiply(a, x, out=a)" in out


def test_an_operand_read_later_or_shared_is_not_written(monkeypatch):
    arrays = {"x": ((5,), np.dtype(float))}
    out = _reused("def f(x):\n    a = x * 2.0\n    b = np.exp(a)\n    return b + a\n",
                  arrays, monkeypatch)
    assert "out=a" not in out
    out = _reused("def f(x):\n    a = x * 2.0\n    c = a\n    b = np.exp(a)\n    return b + c\n",
                  arrays, monkeypatch)
    assert "out=a" not in out
    out = _reused("def f(x):\n    b = np.exp(x)\n    return b\n", arrays, monkeypatch)
    assert "out=x" not in out


def transposed_operand(W, w, X):
    h = np.tanh(X @ W)
    return np.sum(np.sin(h @ w))


def test_an_array_read_through_its_transpose_is_still_owned():
    # d_w = h.T @ dp reads h through a view that the product does not keep, so the
    # gradient of tanh can still write into h (as a hand-written backward does)
    rng = np.random.default_rng(0)
    W, w, X = rng.normal(size=(3, 5)), rng.normal(size=5), rng.normal(size=(2000, 3))
    source = _grad_and_source(transposed_operand, W, w, X, wrt=(0, 1))
    assert "out=h" in source


def mixture_scale(log_s, logit, sq):
    # the adjoint of s2 is the sum over points of a quotient whose divisor (s2 ** 2)
    # does not depend on the point; its numerator comes through logsumexp's gradient
    s2 = np.exp(2.0 * log_s)
    logp = logit - 0.5 * sq / s2
    return -np.sum(logsumexp(logp, axis=1))


@pytest.mark.parametrize("n, k", [(7, 3), (40, 5), (1, 1)])
def test_a_divisor_constant_along_a_sum_divides_the_sum(n, k):
    if logsumexp is None:
        pytest.skip("SciPy is not installed")
    from gradcheck import assert_grad_matches
    rng = np.random.default_rng(13)
    args = [rng.normal(size=k) * 0.2, rng.normal(size=k), rng.random((n, k)) * 3.0]
    assert_grad_matches(mixture_scale, args, wrt=(0, 1))
    g = grad(mixture_scale, wrt=0)
    g(*args)
    if n > 1 and k > 1:
        assert "axis=0) / s2 ** 2" in g.source, g.source


def relu_layer(W, b, X):
    h = np.maximum(0, X @ W + b)
    return np.sum(np.sin(h @ W.T))


def clipped(x, y):
    return np.sum(np.cos(np.maximum(x * 2.0, y)))


@pytest.mark.parametrize("n, k", [(128, 64), (64, 160), (300, 32)])
def test_the_mask_of_max_multiplies_into_the_dying_adjoint(n, k):
    """max's mask, `g * (x == ans)` once split-ties has taken balanced_eq apart, has the
    broadcast shape of its operands (code_shapes knows it), so it writes into g when g
    dies there: one large temporary fewer (mlp_relu's backward; arrays of 64 KB and
    more, where a new one page-faults)."""
    rng = np.random.default_rng(n)
    W, b, X = rng.normal(size=(2, k)), rng.normal(size=k), rng.normal(size=(n, 2))
    # atol: central differences of a sum of n * k sines carry about 3e-8 of rounding at
    # eps=1e-6 (b[142] at n=64, k=160 differs by 2.9e-8 there, by 6e-10 at eps=1e-5)
    source = checked_source(relu_layer, (W, b, X), (0, 1), atol=1e-6)
    assert "np.multiply(dh, (h > 0) | _ties, out=dh)" in source
    # broadcasting operands, and ties (x * 2 == y), which give half the gradient to each
    x, y = rng.normal(size=(n, 1)), rng.normal(size=k)
    y[0] = 2.0 * x[0, 0]
    source = checked_source(clipped, (x, y), (0, 1), atol=1e-6)     # (steps across kinks)
    assert "balanced_eq(" not in source and source.count("] *= 0.5") == 2
    dx, dy = grad(clipped, wrt=(0, 1))(x, y)
    a = 2.0 * x[:, 0]
    weight = np.where(y[0] > a, 1.0, np.where(y[0] == a, 0.5, 0.0))
    assert weight[0] == 0.5
    np.testing.assert_allclose(dy[0], np.sum(-np.sin(np.maximum(a, y[0])) * weight))


def test_the_mask_of_max_keeps_float32():
    W, b = np.full((3, 128), 0.1, dtype=np.float32), np.zeros(128, dtype=np.float32)
    X = np.linspace(-1, 1, 3 * 200, dtype=np.float32).reshape(200, 3)
    g = grad(relu_layer, wrt=(0, 1))
    dW, db = g(W, b, X)
    assert dW.dtype == np.float32 and db.dtype == np.float32 and "out=dh)" in g.source
    want = grad(relu_layer, wrt=(0, 1))(W.astype(float), b.astype(float), X.astype(float))
    np.testing.assert_allclose(dW, want[0], rtol=1e-5)
    np.testing.assert_allclose(db, want[1], rtol=1e-5)


def squared_distances(mu, X, w):
    sq = np.sum((X[:, None, :] - mu[None, :, :]) ** 2, axis=2)
    return np.sum(np.sin(sq) * w)


def column_energy(x):
    return np.sum(np.cos(np.sum(x ** 2, axis=0)))


def last_axis_energy(x):
    return np.sum(np.cos(np.sum(x ** 2, axis=-1)))


@pytest.mark.parametrize("n, k, d", [(7, 3, 2), (40, 8, 4), (300, 5, 3)])
def test_a_reduction_adjoint_is_read_with_new_axes(n, k, d):
    """unreduce(dsq, _pow, 2), read by `dsq * 2 * _sub`, is read as `dsq[:, :, None]`:
    the square (kept only for its shape) dies in the forward sweep, and the product
    writes into the dying difference (gmm_lse)."""
    rng = np.random.default_rng(n)
    mu, X, w = rng.normal(size=(k, d)), rng.normal(size=(n, d)), rng.normal(size=k)
    source = checked_source(squared_distances, (mu, X, w), 0, atol=1e-6)
    # (its 2 multiplies the sum over the points: algebraic/factoring.py)
    assert "unreduce" not in source and "dsq[:, :, None] * _sub" in source, source
    assert "axis=0, keepdims=True) * -2" in source, source
    x = rng.normal(size=(n, d))
    source = checked_source(column_energy, (x,), 0, atol=1e-6)   # (FD rounding of n terms)
    assert "unreduce" not in source and "[None, :] * 2" in source, source
    x = rng.normal(size=(k, n, d))
    source = checked_source(last_axis_energy, (x,), 0, atol=1e-6)
    assert "unreduce" not in source and "[:, :, None] * 2" in source, source
