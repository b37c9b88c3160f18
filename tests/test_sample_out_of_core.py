"""samples/out_of_core.py at a small size: its gradient is the logistic regression's, it
stays lazy, fitting over dask data finds the minimiser the same fit over NumPy data finds,
and its main() trains on a LocalCluster."""
import pathlib
import sys

import numpy as np
import pytest

pytest.importorskip("dask.array", reason="dask is an optional extra (pip install .[dask])")
pytest.importorskip("scipy.optimize", reason="SciPy is an optional extra")
import dask  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "samples"))
import out_of_core  # noqa: E402


def test_the_samples_gradient_is_lazy_and_is_the_logistic_regressions():
    X, y, _ = out_of_core.make_data(3000, 1000)
    w = np.random.default_rng(0).normal(size=out_of_core.FEATURES)
    value, g = out_of_core.value_and_grad(out_of_core.loss)(w, X, y, 0.1)
    assert isinstance(g, dask.array.Array) and isinstance(value, dask.array.Array)
    value, g = dask.compute(value, g)
    Xn, yn = dask.compute(X, y)
    p = 1.0 / (1.0 + np.exp(-(Xn @ w)))
    np.testing.assert_allclose(g, Xn.T @ (p - yn) / len(yn) + 0.1 * w, rtol=1e-10)
    np.testing.assert_allclose(value, out_of_core.loss(w, Xn, yn, 0.1), rtol=1e-12)


def test_fitting_over_dask_data_finds_the_numpy_minimiser():
    X, y, truth = out_of_core.make_data(20_000, 5_000)
    with dask.config.set(scheduler="threads"):
        result, seen = out_of_core.fit(X, y, maxiter=100)
    dense, _ = out_of_core.fit(*dask.compute(X, y), maxiter=100)
    assert result.success and seen[-1] < seen[0]
    np.testing.assert_allclose(result.x, dense.x, rtol=1e-6, atol=1e-8)
    assert result.x @ truth / np.linalg.norm(result.x) / np.linalg.norm(truth) > 0.95


def test_main_trains_on_a_local_cluster(capsys):
    pytest.importorskip("distributed", reason="dask.distributed is optional")
    result = out_of_core.main(["--rows", "20000", "--chunk", "5000", "--maxiter", "3"])
    out = capsys.readouterr().out
    assert "2 worker processes" in out and "cosine" in out
    assert result.fun < np.log(2.0)     # below the loss of w = 0
