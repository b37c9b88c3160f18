"""The array-API path on a GPU: CuPy arrays in, CuPy gradients out, equal to NumPy's.

Skipped without CuPy or without a CUDA device (CI has neither; tests/test_array_api.py
checks the same path with array_api_strict, which rejects anything outside the standard).
CuPy refuses to convert a device array to NumPy implicitly, so a gradient that comes back
at all was computed on the device."""
import numpy as np
import pytest

from sgcompiler import SGCompilerError, grad

cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
try:
    cupy.cuda.runtime.getDeviceCount()
except Exception as exc:        # pragma: no cover - a machine without a GPU
    pytest.skip(f"no CUDA device: {exc}", allow_module_level=True)

from benchmarks.workloads import mlp, softmax_xent  # noqa: E402
from samples import mlp_training, stable_softmax  # noqa: E402


def check(got, expected, like, rtol=1e-10):
    assert isinstance(got, cupy.ndarray), type(got)
    assert got.dtype == like.dtype and got.shape == like.shape
    assert got.device == like.device
    np.testing.assert_allclose(cupy.asnumpy(got), expected, rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("workload", [mlp.WORKLOAD, softmax_xent.WORKLOAD],
                         ids=["mlp", "softmax_xent"])
@pytest.mark.parametrize("size", ["smoke", "full"])
def test_workload_gradients_on_cupy(workload, size):
    args = workload.make(workload.sizes[size], np.random.default_rng(0))
    g = grad(workload.fn, wrt=workload.wrt if len(workload.wrt) > 1 else workload.wrt[0])
    expected, got = g(*args), g(*[cupy.asarray(a) for a in args])
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = got if isinstance(got, tuple) else (got,)
    for a, e, name in zip(got, expected, workload.wrt):
        check(a, e, cupy.asarray(args[workload.fn.__code__.co_varnames.index(name)]),
              rtol=1e-9)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_stable_softmax_on_cupy(dtype):
    rng = np.random.default_rng(1)
    x, w = rng.normal(size=7).astype(dtype), rng.normal(size=7).astype(dtype)
    expected = grad(stable_softmax.softmax_loss_stable)(x, w)
    got = grad(stable_softmax.softmax_loss_stable)(cupy.asarray(x), cupy.asarray(w))
    check(got, expected, cupy.asarray(x), rtol=1e-5 if dtype == np.float32 else 1e-10)


def test_parameter_tree_on_cupy():
    rng = np.random.default_rng(2)
    params = mlp_training.init_params(rng, hidden=8)
    x, labels = mlp_training.spirals(rng, n_per_class=5)
    y = np.eye(3)[labels]
    expected = grad(mlp_training.loss)(params, x, y)
    got = grad(mlp_training.loss)({k: cupy.asarray(v) for k, v in params.items()},
                                  cupy.asarray(x), cupy.asarray(y))
    for k in params:
        check(got[k], expected[k], cupy.asarray(params[k]))


def test_scipy_is_refused_on_cupy():
    special = pytest.importorskip("scipy.special")

    def f(x):
        return np.sum(special.expit(x))
    with pytest.raises(SGCompilerError, match="SciPy"):
        grad(f)(cupy.ones(3))


def test_benchmark_script_runs_on_cupy():
    from benchmarks import array_libraries
    assert array_libraries.main(["--library", "cupy", "--smoke"]) == 0
