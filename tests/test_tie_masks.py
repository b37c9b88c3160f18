"""max's and min's mask without a float temporary (optimize/memory/ties.py, split-ties):
`g * balanced_eq(x, z, y)` becomes `g * (x == z)` with the ties halved in place, in code
specialised for shapes. The gradient must not change, at ties least of all (half to each
side), so every case is checked against finite differences away from ties and, on inputs
full of ties, bit for bit against the code made without the step."""
import numpy as np
import pytest

from sgcompiler import grad, hvp, pipeline

from gradcheck import checked_source


def relu_left(W, b, X):
    h = np.maximum(0, X @ W + b)
    return np.sum(np.sin(h @ W.T))


def relu_right(W, b, X):
    h = np.maximum(X @ W + b, 0.0)
    return np.sum((h + 1.0) ** 2)        # (an adjoint that is not 0 at the ties)


def floor_min(W, b, X):
    h = np.minimum(X @ W, -0.5) + b
    return np.sum(np.cos(h))


def fmax_relu(W, b, X):
    return np.sum(np.tanh(np.fmax(X @ W + b, 0) + 0.5) ** 2)


def broadcast_max(x, y):          # x (n, 1) and y (k,): both sides active, broadcast
    return np.sum(np.cos(np.maximum(x * 2.0, y)))


def both_min(x, y):               # the same shape, one side read again
    return np.sum(np.minimum(x, y) * x)


def saved_min(W, b, X):           # the ties of the minimum saved in the forward sweep
    return np.sum(np.sin(np.minimum(X @ W, 1.0) + b))


LAYERS = [relu_left, relu_right, floor_min, fmax_relu, saved_min]
SHAPES = [(7, 3, 5), (40, 6, 20), (128, 2, 64)]     # (n, i, k): X (n, i), W (i, k)


def _layer_args(n, i, k, seed):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(i, k)), rng.normal(size=k), rng.normal(size=(n, i))


@pytest.fixture
def without_split_ties(monkeypatch):
    """A function that compiles grad(f) afresh without split-ties and calls it."""
    def compiled(f, args, wrt, **kwargs):
        kept = pipeline.OPTIMIZATIONS
        monkeypatch.setattr(pipeline, "OPTIMIZATIONS",
                            tuple(o for o in kept if o[0] != "split-ties"))
        pipeline._CACHE.clear()
        pipeline._PIECES.clear()
        try:
            g = grad(f, wrt=wrt, **kwargs)
            return g(*args), g.source
        finally:
            monkeypatch.setattr(pipeline, "OPTIMIZATIONS", kept)
            pipeline._CACHE.clear()
            pipeline._PIECES.clear()
    return compiled


@pytest.mark.parametrize("f", LAYERS)
@pytest.mark.parametrize("n, i, k", SHAPES)
def test_the_layers_agree_with_finite_differences(f, n, i, k):
    args = _layer_args(n, i, k, n + k)
    source = checked_source(f, args, (0, 1), atol=1e-6)
    assert "balanced_eq(" not in source and "] *= 0.5" in source, source


@pytest.mark.parametrize("n, k", [(5, 3), (30, 8), (200, 40)])
def test_broadcast_and_both_sides_active(n, k):
    rng = np.random.default_rng(k)
    x, y = rng.normal(size=(n, 1)), rng.normal(size=k)
    source = checked_source(broadcast_max, (x, y), (0, 1), atol=1e-6)
    assert "balanced_eq(" not in source and source.count("] *= 0.5") == 2, source
    x, y = rng.normal(size=(n, k)), rng.normal(size=(n, k))
    source = checked_source(both_min, (x, y), (0, 1), atol=1e-6)
    assert source.count("] *= 0.5") == 2, source


def test_relu_reads_like_the_hand_written_backward():
    """The forward writes h into the dying pre-activation (its ties saved first), the
    backward multiplies the mask into the dying adjoint: no large array is made for
    the ReLU, as in the hand-written `np.maximum(a, 0.0, out=a)`, `dh *= h > 0`."""
    W, b, X = _layer_args(256, 16, 128, 0)
    g = grad(relu_left, wrt=(0, 1))
    g(W, b, X)
    lines = [line.strip() for line in g.source.splitlines()]
    order = ["_ties = _add == 0", "h = np.maximum(0, _add, out=_add)",
             "d_add = np.multiply(dh, (h > 0) | _ties, out=dh)", "d_add[_ties] *= 0.5"]
    assert all(line in lines for line in order), g.source
    assert [lines.index(line) for line in order] == sorted(lines.index(line) for line in order)


def floor_min_saved(W, X):
    h = np.minimum(X @ W, 1.0)
    return np.sum(h * h * h)


def relu_read_again(W, X):        # the pre-activation is read again: its ties are not saved
    a = X @ W
    return np.sum(np.maximum(a, 0.0) * a)


@pytest.mark.parametrize("n, k", [(5, 3), (64, 40)])
def test_the_ties_are_saved_only_where_the_operand_dies(n, k):
    rng = np.random.default_rng(k)
    W, X = rng.normal(size=(3, k)), rng.normal(size=(n, 3))
    source = checked_source(floor_min_saved, (W, X), 0, atol=1e-6)
    assert "(h < 1.0) | _ties" in source and "_ties = _matmul == 1.0" in source, source
    source = checked_source(relu_read_again, (W, X), 0, atol=1e-6)
    assert "_ties" not in source and "] *= 0.5" in source, source


def _with_ties(n, i, k, seed, dtype=np.float64):
    """Integer data: X @ W + b is exactly 0 in many places."""
    W, b, X = (np.round(2 * a).astype(dtype) for a in _layer_args(n, i, k, seed))
    return W, b, X


@pytest.mark.parametrize("f", LAYERS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_ties_are_split_as_before_to_the_bit(f, dtype, without_split_ties):
    W, b, X = _with_ties(60, 3, 50, 1, dtype)
    if f is floor_min:
        b = b - 0.5     # (ties of X @ W with -0.5: halves)
        X = X / 2
    assert np.sum(X @ W + b == 0) > 50 and np.sum(X @ W == 1.0) > 20
    args = (W, b, X)
    want, before = without_split_ties(f, args, (0, 1))
    assert "balanced_eq(" in before
    g = grad(f, wrt=(0, 1))
    got = g(*args)
    assert "balanced_eq(" not in g.source
    for a, w in zip(got, want):
        assert a.dtype == w.dtype == dtype
        np.testing.assert_array_equal(a, w)


def test_ties_give_half_to_each_side():
    x = np.array([[-1.0], [0.5], [1.0], [2.0]])
    y = np.array([1.0, 3.0, -4.0])            # 2 * x == y at x = 0.5, y = 1
    dx, dy = grad(broadcast_max, wrt=(0, 1))(x, y)
    a = 2.0 * x
    chosen_x = np.where(a > y, 1.0, np.where(a == y, 0.5, 0.0))
    slope = -np.sin(np.maximum(a, y))
    assert chosen_x[1, 0] == 0.5
    np.testing.assert_array_equal(dx[:, 0], np.sum(slope * chosen_x, axis=1) * 2.0)
    np.testing.assert_array_equal(dy, np.sum(slope * (1.0 - chosen_x), axis=0))


def test_relu_ties_at_zero_get_half():
    W = np.array([[1.0, -1.0, 0.0]])
    b = np.zeros(3)
    X = np.array([[2.0], [0.0], [-3.0]])      # X @ W + b: zeros in the middle row, column 2
    dW, db = grad(relu_right, wrt=(0, 1))(W, b, X)
    a = X @ W + b
    weight = np.where(a > 0, 1.0, np.where(a == 0, 0.5, 0.0))
    np.testing.assert_array_equal(db, np.sum(2 * (np.maximum(a, 0) + 1.0) * weight, axis=0))
    assert np.sum(a == 0) == 5


@pytest.mark.parametrize("n, k", [(6, 4), (50, 30)])
def test_second_order_through_relu(n, k):
    rng = np.random.default_rng(n)
    W, b, X = rng.normal(size=(2, k)), rng.normal(size=k), rng.normal(size=(n, 2))
    v = rng.normal(size=W.shape)
    got = hvp(relu_right, W, v, b, X, wrt=0)
    g = grad(relu_right, wrt=0)
    eps = 1e-6
    want = (g(W + eps * v, b, X) - g(W - eps * v, b, X)) / (2 * eps)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.filterwarnings("ignore::UserWarning")     # (numba has no balanced_eq: NumPy runs)
def test_numba_code_keeps_balanced_eq():
    """numba rejects a boolean mask of two axes (split-ties is in NOT_FOR_NUMBA)."""
    pytest.importorskip("numba")
    W, b, X = _with_ties(20, 3, 10, 2)
    g = grad(relu_right, wrt=(0, 1), backend="numba")
    got = g(W, b, X)
    assert "balanced_eq(" in g.source
    for a, w in zip(got, grad(relu_right, wrt=(0, 1))(W, b, X)):
        np.testing.assert_array_equal(a, w)


def test_the_benchmark_hand_written_relu_agrees_at_ties():
    """benchmarks/workloads/mlp_relu.py's hand-written gradient gives the ties half, as
    grad does (the workload's contract: the same result as grad)."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benchmarks.workloads import mlp_relu
    w = mlp_relu.WORKLOAD
    args = tuple(np.round(2 * a) for a in w.make(w.sizes["smoke"], np.random.default_rng(0)))
    assert np.sum(args[4] @ args[0] + args[1] == 0) > 3
    for got, want in zip(grad(w.fn, wrt=w.wrt)(*args), w.hand(*args)):
        np.testing.assert_array_equal(got, want)
