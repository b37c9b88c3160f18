"""Gradients with NumPy parameters over dask data: lazy (one graph, nothing computed until
the caller asks), equal to the NumPy gradient and to finite differences, with memory flat
in the number of rows, and computed on a real dask.distributed cluster."""
import tracemalloc

import numpy as np
import pytest

from gradcheck import numeric_grad
from sgcompiler import grad, hessian, hvp, jacobian, jvp, stop_gradient, value_and_grad, vjp
from sgcompiler.errors import SGCompilerError
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


def picked(w, X):
    return np.sum((X[:, :2] @ w[np.array([0, 0])]) ** 2)    # w[0] twice: np.add.at


def picked_grid(w, X):
    # a 2-d index array with duplicates, and a mask: each picks some weights twice
    W = w[np.array([[0, 1], [1, 1], [2, 0]])]
    return np.sum((X @ W) ** 2) + np.sum(X[:, 0] * np.sum(w[w > 0.0]))


def picked_rows(w, X):
    z = np.tanh(X @ w)
    idx = np.array([0, 3, 3, 1, 0, 0])
    return np.sum(z[idx] ** 2) + np.sum(z[idx, None] * X[:6, :2])  # z (dask) picked twice


def picked_columns(W, X):
    return np.sum(np.exp(X @ W[:, np.array([1, 1, 0])]))      # a slice and an index array


@pytest.mark.parametrize("f", [picked, picked_grid, picked_rows, picked_columns],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_adding_at_an_index_array_with_dask_data_is_lazy_and_right(f, dtype):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 3)).astype(dtype) * 0.3
    w = (rng.normal(size=(3, 2)) if f is picked_columns else rng.normal(size=3)).astype(dtype)
    with dask.config.set(scheduler=refuse):
        g = grad(f)(w, as_dask(X, 7))
    assert isinstance(g, da.Array) and g.dtype == dtype
    want = grad(f)(w, X)
    tol = 1e-10 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(g.compute(), want, rtol=tol, atol=tol)
    if dtype == np.float64:
        np.testing.assert_allclose(g.compute(), numeric_grad(f, (w, X), 0), rtol=1e-5,
                                   atol=1e-7)


def test_adding_at_an_index_array_of_dask_is_refused_with_a_reason():
    from sgcompiler.errors import RuntimeRefusal
    from sgcompiler.runtime import add_at
    index = da.from_array(np.array([0, 0, 2]), chunks=2)
    with dask.config.set(scheduler=refuse), \
            pytest.raises(RuntimeRefusal, match="an index array of another library"):
        add_at(np.zeros(3), index, da.ones(3, chunks=2))
    # a NumPy index into dask values adds its duplicates, as np.add.at does
    added = add_at(np.ones((2, 3)), (np.array([1, 1, 0]), np.array([2, 2, 0])),
                   da.from_array(np.array([1.0, 2.0, 5.0]), chunks=2))
    np.testing.assert_array_equal(added.compute(), [[6.0, 1, 1], [1, 1, 4.0]])


def contracted(w, X):
    z = np.einsum("ij,j->i", X, w)
    return np.sum(np.tanh(z) ** 2) + np.einsum("ij,ij->", X * w, X) / X.shape[0]


def contracted_matrix(W, X):
    return np.sum(np.einsum("ni,ik->nk", X, W) ** 2) + np.einsum("ik,ik", W, W)


@pytest.mark.parametrize("f", [contracted, contracted_matrix], ids=lambda f: f.__name__)
def test_einsum_over_dask_data_is_lazy_and_right(f):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(33, 3))
    w = rng.normal(size=(3, 2)) if f is contracted_matrix else rng.normal(size=3)
    with dask.config.set(scheduler=refuse):
        g = grad(f)(w, as_dask(X, 10))
    assert isinstance(g, da.Array)
    np.testing.assert_allclose(g.compute(), grad(f)(w, X), rtol=1e-10)
    np.testing.assert_allclose(g.compute(), numeric_grad(f, (w, X), 0), rtol=1e-5, atol=1e-7)


def test_einsum_onto_a_diagonal_over_dask_data_is_refused_with_a_reason():
    def diagonal(w, X):
        return np.sum(np.einsum("ii->i", X[:3, :] * w) ** 2)
    X = as_dask(np.random.default_rng(0).normal(size=(20, 3)), 5)
    with dask.config.set(scheduler=refuse), \
            pytest.raises(SGCompilerError, match="repeated index"):
        grad(diagonal)(np.ones(3), X)


def tanh_rows(w, X):
    return np.tanh(X @ w)


def loss_and_rows(w, X):
    z = X @ w
    return np.sum(np.log1p(np.exp(-z))) / X.shape[0], z


def test_has_aux_over_dask_data_is_lazy_and_right():
    w, X, _ = data("logreg", 50, 3)
    with dask.config.set(scheduler=refuse):
        g, aux = grad(loss_and_rows, has_aux=True)(w, as_dask(X, 20))
        (value, aux2), g2 = value_and_grad(loss_and_rows, has_aux=True)(w, as_dask(X, 20))
    assert all(isinstance(a, da.Array) for a in (g, aux, value, aux2, g2))
    want_g, want_aux = grad(loss_and_rows, has_aux=True)(w, X)
    g, aux, value, aux2, g2 = dask.compute(g, aux, value, aux2, g2)
    for got, want in [(g, want_g), (g2, want_g), (aux, want_aux), (aux2, want_aux),
                      (value, loss_and_rows(w, X)[0])]:
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_forward_mode_and_second_order_over_dask_data_are_lazy_and_right():
    w, X, y = data("logreg", 60, 3)
    Xd, yd, v = as_dask(X, 25), as_dask(y, 25), np.array([0.5, -1.0, 2.0])
    with dask.config.set(scheduler=refuse):
        made = {"jvp": jvp(logreg, (w, Xd, yd), (v, None, None)),
                "jvp rows": jvp(tanh_rows, (w, Xd), (v, None)),
                "hvp": hvp(logreg, w, v, Xd, yd),
                "hessian": hessian(logreg)(w, Xd, yd),
                "jacobian": jacobian(tanh_rows)(w, Xd),
                "jacobian rev": jacobian(tanh_rows, mode="rev")(w, Xd[:4])}
    want = {"jvp": jvp(logreg, (w, X, y), (v, None, None)),
            "jvp rows": jvp(tanh_rows, (w, X), (v, None)),
            "hvp": hvp(logreg, w, v, X, y),
            "hessian": hessian(logreg)(w, X, y),
            "jacobian": jacobian(tanh_rows)(w, X),
            "jacobian rev": jacobian(tanh_rows, mode="rev")(w, X[:4])}
    for key, got in made.items():
        for part, expected in zip(got if isinstance(got, tuple) else (got,),
                                  want[key] if isinstance(got, tuple) else (want[key],)):
            assert isinstance(part, da.Array), key
            np.testing.assert_allclose(part.compute(), expected, rtol=1e-10, atol=1e-12,
                                       err_msg=key)
    H = made["hessian"].compute()       # and the Hessian is the gradient's derivative
    h = 1e-5
    np.testing.assert_allclose(H @ v, (grad(logreg)(w + h * v, X, y) -
                                       grad(logreg)(w - h * v, X, y)) / (2 * h), rtol=1e-5)


DATA = as_dask(np.random.default_rng(6).normal(size=(24, 3)), 8)


def on_global_data(w):
    return np.tanh(DATA @ w)


def test_vjp_reads_dask_data_lazily_and_refuses_it_as_a_primal():
    w = np.array([0.3, -0.2, 0.5])
    with dask.config.set(scheduler=refuse):
        out, pull = vjp(on_global_data, w)
        (g,) = pull(np.ones(24))
    assert isinstance(out, da.Array) and isinstance(g, da.Array)
    X = DATA.compute()
    np.testing.assert_allclose(g.compute(), (1 - np.tanh(X @ w) ** 2) @ X, rtol=1e-12)
    with pytest.raises(TypeError, match="read from a global or a closure"):
        vjp(tanh_rows, w, DATA)


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


def _gradient_along_v(w, X, y):
    # the directional derivative of logreg's gradient: its gradient is the Hessian times v
    return np.sum(grad(logreg)(w, X, y) * np.array([0.5, -1.0, 2.0]))


@pytest.mark.parametrize("rows, chunk", [(60, 25), (41, 41)])
def test_grad_of_grad_over_dask_data_is_lazy_and_right(rows, chunk):
    w, X, y = data("logreg", rows, 3, seed=rows)
    v = np.array([0.5, -1.0, 2.0])
    s, X2, y2 = data("scaled", rows, 3, seed=rows)
    with dask.config.set(scheduler=refuse):
        Hv = grad(_gradient_along_v)(w, as_dask(X, chunk), as_dask(y, chunk))
        second = grad(grad(scaled))(s, as_dask(X2, chunk), y2)
        H = hessian(logreg)(w, as_dask(X, chunk), y)
    assert all(isinstance(a, da.Array) for a in (Hv, second, H))
    Hv, second, H = dask.compute(Hv, second, H)
    h, g = 1e-5, grad(logreg)
    np.testing.assert_allclose(Hv, (g(w + h * v, X, y) - g(w - h * v, X, y)) / (2 * h),
                               rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(H @ v, Hv, rtol=1e-10)
    g2 = grad(scaled)
    np.testing.assert_allclose(second, (g2(s + h, X2, y2) - g2(s - h, X2, y2)) / (2 * h),
                               rtol=1e-6)


def _row_operations(result, rows_chunks):
    """The elementwise layers of result's dask graph that run once per chunk of rows."""
    elementwise = ("neg", "exp", "add", "truediv", "sub", "mul", "pow", "log")
    return sorted(name.rsplit("-", 1)[0] for name, layer in result.dask.layers.items()
                  if name.rsplit("-", 1)[0] in elementwise and len(layer) == rows_chunks)


def test_logistic_over_dask_data_takes_the_hand_written_operations_a_row():
    # the mean's -1/N scales X.T @ (y - p) (10 numbers), not y - p (N): 5 a row, as by hand
    w, X, y = data("logreg", 400, 3)
    X, y = as_dask(X, 100), da.from_array(y, chunks=100)
    got = grad(logreg)(w, X, y)
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    hand = X.T @ (p - y) / X.shape[0]
    assert _row_operations(got, 4) == ["add", "exp", "neg", "sub", "truediv"]
    assert len(_row_operations(got, 4)) <= len(_row_operations(hand, 4))
    np.testing.assert_allclose(got.compute(), hand.compute(), rtol=1e-12)
