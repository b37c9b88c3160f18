"""Gradients with NumPy parameters over dask data: lazy (one graph, nothing computed until
the caller asks), equal to the NumPy gradient and to finite differences, with memory flat
in the number of rows, and computed on a real dask.distributed cluster."""
import tracemalloc

import numpy as np
import pytest

from gradcheck import numeric_grad
from sgcompiler import grad, stop_gradient, value_and_grad
from sgcompiler.runtime import unbroadcast, unreduce

dask = pytest.importorskip("dask", reason="dask is an optional extra (pip install .[dask])")
da = pytest.importorskip("dask.array", reason="dask.array needs dask[array]")


def logreg(w, X, y):
    z = X @ w
    p = 1.0 / (1.0 + np.exp(-z))
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def softmax(W, X, Y):
    z = X @ W
    z = z - stop_gradient(np.max(z, axis=1, keepdims=True))
    lse = np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.sum(Y * (z - lse)) / X.shape[0]


def least_squares(params, X, Y):
    r = np.tanh(X @ params["W"] + params["b"]) - Y      # b (k,) broadcast over the rows
    return np.mean(r ** 2) + 0.1 * np.sum(params["W"] ** 2)


def scaled(s, X, y):
    return np.sum((np.sum(X, axis=1) * s - y) ** 2) / X.shape[0]


def refuse(dsk, keys, **kwargs):
    raise AssertionError("the gradient was computed eagerly")


def data(kind, rows, cols, seed=0):
    """NumPy parameters, and NumPy data of `rows` rows."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, cols))
    if kind == "logreg":
        return rng.normal(size=cols), X, (rng.random(rows) < 0.5).astype(float)
    Y = np.eye(3)[rng.integers(0, 3, rows)]
    if kind == "softmax":
        return rng.normal(size=(cols, 3)), X, Y
    if kind == "least_squares":
        return {"W": rng.normal(size=(cols, 3)), "b": rng.normal(size=3)}, X, Y
    return 0.7, X, rng.normal(size=rows)


FUNCTIONS = {"logreg": logreg, "softmax": softmax, "least_squares": least_squares,
             "scaled": scaled}


def as_dask(a, chunk):
    return da.from_array(a, chunks=(chunk,) + a.shape[1:])


def leaves(tree):
    return list(tree.values()) if isinstance(tree, dict) else [tree]


@pytest.mark.parametrize("kind", sorted(FUNCTIONS))
@pytest.mark.parametrize("rows, cols, chunk", [(60, 3, 25), (203, 5, 64)])
@pytest.mark.parametrize("lazy", ["both", "X", "y"])
def test_gradient_over_dask_data_is_lazy_and_right(kind, rows, cols, chunk, lazy):
    f = FUNCTIONS[kind]
    params, X, y = data(kind, rows, cols)
    Xd = as_dask(X, chunk) if lazy in ("both", "X") else X
    yd = as_dask(y, chunk) if lazy in ("both", "y") else y
    with dask.config.set(scheduler=refuse):     # building the gradient computes nothing
        g = grad(f)(params, Xd, yd)
    assert all(isinstance(leaf, da.Array) for leaf in leaves(g)), type(g)
    g = dask.compute(g)[0]      # one graph, computed once
    expected = grad(f)(params, X, y)
    for got, want, p in zip(leaves(g), leaves(expected), leaves(params)):
        assert np.shape(got) == np.shape(p) and np.result_type(got) == np.result_type(p)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    if not isinstance(params, dict):        # and both agree with finite differences
        np.testing.assert_allclose(g, numeric_grad(f, (params, X, y), 0), rtol=1e-5,
                                   atol=1e-7)
    else:
        for key in params:
            def part(v, X, y, key=key):
                return f({**params, key: v}, X, y)
            np.testing.assert_allclose(g[key], numeric_grad(part, (params[key], X, y), 0),
                                       rtol=1e-5, atol=1e-7)


def relu_sum(w, X):
    return np.sum(np.maximum(X @ w, 0.0) ** 2)       # maximum's rule compares values


def first_weight(w, X):
    return np.sum((X[:, 0] * w[0] + X[:, 1:] @ w[1:]) ** 2)     # w[0]: an add at an index


def aliased(w, X):
    return np.sum(X * w)        # the gradient is X's column sums (once X itself, copied)


def row_max(w, X):
    return np.sum(np.max(X * w, axis=1)) + np.var(X @ w)


@pytest.mark.parametrize("f", [relu_sum, first_weight, aliased, row_max],
                         ids=lambda f: f.__name__)
def test_more_forms_over_dask_data_stay_lazy(f):
    rng = np.random.default_rng(3)
    X, w = rng.normal(size=(45, 3)), rng.normal(size=3)
    with dask.config.set(scheduler=refuse):
        g = grad(f)(w, as_dask(X, 10))
    assert isinstance(g, da.Array)
    np.testing.assert_allclose(g.compute(), grad(f)(w, X), rtol=1e-10)
    np.testing.assert_allclose(g.compute(), numeric_grad(f, (w, X), 0), rtol=1e-5, atol=1e-7)


def test_value_and_grad_over_dask_data_is_lazy():
    w, X, y = data("logreg", 100, 4)
    with dask.config.set(scheduler=refuse):
        value, g = value_and_grad(logreg)(w, as_dask(X, 30), as_dask(y, 30))
    value, g = dask.compute(value, g)
    want_value, want = value_and_grad(logreg)(w, X, y)
    np.testing.assert_allclose(value, want_value, rtol=1e-12)
    np.testing.assert_allclose(g, want, rtol=1e-10)


def test_gradient_of_float32_parameters_over_dask_data_is_float32():
    w, X, y = data("logreg", 80, 3)
    w, X, y = w.astype(np.float32), X.astype(np.float32), y.astype(np.float32)
    g = grad(logreg)(w, as_dask(X, 20), as_dask(y, 20))
    assert isinstance(g, da.Array) and g.dtype == np.float32
    np.testing.assert_allclose(g.compute(), grad(logreg)(w, X, y), rtol=1e-5)


def test_unreduce_and_unbroadcast_of_a_number_are_chunked_like_the_dask_array():
    x = da.ones((1000, 3), chunks=(100, 3))
    for made in (unreduce(np.float64(-1.0 / 3000), x), unbroadcast(2.5, x),
                 unbroadcast(np.ones(3), x), unreduce(np.ones((1000, 1)), x, 1, True)):
        assert isinstance(made, da.Array) and made.chunks == x.chunks, type(made)
    np.testing.assert_array_equal(unreduce(np.float64(0.5), x).compute(),
                                  np.full((1000, 3), 0.5))
    np.testing.assert_array_equal(unbroadcast(np.arange(3.0), x).compute(),
                                  np.broadcast_to(np.arange(3.0), (1000, 3)))


def logreg_by_hand(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return X.T @ (p - y) / X.shape[0]


def traced_peak(gradient, rows, chunk):
    """Peak of the memory allocated while `gradient` is made and computed (one chunk at a
    time: the synchronous scheduler)."""
    w = np.random.default_rng(1).normal(size=4)
    X = da.random.RandomState(0).normal(size=(rows, 4), chunks=(chunk, 4))
    y = (X @ np.ones(4) > 0).astype(float)
    with dask.config.set(scheduler="sync"):
        gradient(w, X[:chunk], y[:chunk]).compute()     # compiled before the measurement
        tracemalloc.start()
        try:
            gradient(w, X, y).compute()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()


def test_memory_of_the_gradient_is_that_of_the_hand_written_one():
    # the mean's gradient, unreduce(1.0 / N, ...), once made a broadcast of N numbers that
    # dask took in as a full array (16 bytes a row: 4.4 times the hand-written gradient's
    # peak here); what both still grow by is dask's graph, a few bytes a row
    mine = traced_peak(grad(logreg), 256_000, 16_000)
    hand = traced_peak(logreg_by_hand, 256_000, 16_000)
    assert mine < 1.5 * hand, (mine, hand)


def test_gradient_on_a_local_cluster_with_worker_processes():
    distributed = pytest.importorskip("distributed", reason="dask.distributed is optional")
    params, X, Y = data("least_squares", 300, 4)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=50) as cluster, \
            distributed.Client(cluster) as client:
        Xd, Yd = as_dask(X, 50), as_dask(Y, 50)
        Xd, Yd = client.persist([Xd, Yd])       # the data lives on the workers
        g = client.compute(grad(least_squares)(params, Xd, Yd)).result()
        assert len(client.scheduler_info()["workers"]) == 2
    want = grad(least_squares)(params, X, Y)
    for key in params:
        np.testing.assert_allclose(g[key], want[key], rtol=1e-10)


def test_adding_at_an_index_array_with_dask_data_is_refused_not_computed():
    def picked(w, X):
        return np.sum((X[:, :2] @ w[np.array([0, 0])]) ** 2)    # w[0] twice: np.add.at
    X = as_dask(np.random.default_rng(0).normal(size=(20, 3)), 5)
    with dask.config.set(scheduler=refuse), \
            pytest.raises(Exception, match="an index array into an array of another library"):
        grad(picked)(np.ones(3), X)


def test_one_gradient_serves_numpy_and_dask_calls_with_code_of_their_own():
    W, X, Y = data("softmax", 90, 4)
    g = grad(softmax)
    want = g(W, X, Y)
    assert "out=" in g.source       # NumPy's code, specialised for the shapes, with buffers
    with dask.config.set(scheduler=refuse):
        lazy = g(W, as_dask(X, 30), Y)      # dask X, NumPy Y: once an out= into NumPy's Y
    assert "out=" not in g.source and "+=" not in g.source
    np.testing.assert_allclose(lazy.compute(), want, rtol=1e-10)
    np.testing.assert_allclose(g(W, X, Y), want, rtol=1e-12)


@pytest.mark.parametrize("workload", ["logistic", "softmax"])
def test_the_dask_benchmark_compares_equal_gradients(workload):
    import pathlib
    import sys
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
    from benchmarks import dask_scale
    made = {m: dask_scale.measure_one(workload, m, 3000, 1000, 1)
            for m in ("hand", "sgcompiler", "numpy")}
    assert made["hand"]["lazy"] and made["sgcompiler"]["lazy"] and not made["numpy"]["lazy"]
    rows = [{"workload": workload, "method": m, "gradient": np.array(r["gradient"])}
            for m, r in made.items()]
    assert dask_scale.check(rows) == []
    rows[1]["gradient"] = rows[1]["gradient"] * (1 + 1e-6)      # and a wrong one is seen
    assert dask_scale.check(rows) == [f"{workload} (sgcompiler)"]
