"""Runtime helpers that array_api_strict refused before: casts given NumPy's dtypes,
`np.add.at` (which the standard lacks) and its users (repeat, take_along_axis, take) and
tile's reps (and, as a guard, rows of a list of arrays). Each gradient is the NumPy
gradient, which the rule tables check against finite differences; add.at is checked
against NumPy's."""
import numpy as np
import pytest

from sgcompiler import grad
from sgcompiler import runtime

xps = pytest.importorskip("array_api_strict", reason="array-api-strict is not installed")
from sgcompiler.runtime.namespace import numpy_names  # noqa: E402


def cast_to(x, w):
    return np.sum(runtime.astype(x, np.float32) * w) + np.sum(np.astype(x, float) * w)


def cast_to_int(x, w):
    return np.sum(runtime.astype(x, int) * w) + np.sum(x * w)


def repeated(x, w):
    return np.sum(np.repeat(x, 2, axis=1) * w)


def repeated_flat(x, w):
    return np.sum(np.repeat(x, 3) * w)


def taken_along(x, w):
    return np.sum(np.take_along_axis(x, np.array([[0, 2, 2], [1, 1, 0]]), axis=1) * w)


def tiled(x, w):
    return np.sum(np.tile(x, (2, 1)) * w)


def rows_of_a_list(x, w):
    rows = [x * 2.0, x * w]
    return np.sum(rows[0] * w) + np.sum(np.sin(rows[1]))


@pytest.mark.parametrize("f, shape, w_shape", [
    (cast_to, (2, 3), (2, 3)), (cast_to_int, (3,), (3,)), (repeated, (2, 3), (2, 6)),
    (repeated, (1, 2), (1, 4)), (repeated_flat, (2, 3), (18,)),
    (taken_along, (2, 3), (2, 3)), (tiled, (2, 3), (4, 3)), (tiled, (3,), (2, 3)),
    (rows_of_a_list, (2, 3), (2, 3))])
def test_gradient_on_strict_arrays_is_numpys(f, shape, w_shape):
    rng = np.random.default_rng(len(shape))
    x, w = rng.normal(size=shape), rng.normal(size=w_shape)
    want = grad(f)(x, w)
    got = grad(f)(xps.asarray(x), xps.asarray(w))
    assert type(got) is type(xps.asarray(x)) and got.dtype == xps.float64
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("shape, index", [
    ((5,), np.array([0, 2, 2, 4, 2])), ((3, 4), (slice(None), np.array([1, 1, 3]))),
    ((3, 4), (np.array([0, 2, 2]), np.array([1, 1, 3]))), ((6,), np.array([[0, 1], [1, 5]])),
    ((3, 4), np.array([2, 0, 2])), ((2, 3), (slice(None), np.array([[0, 0], [2, 0]]))),
    ((4,), np.array([], dtype=int)), ((3, 2), 1), ((3, 2), (slice(0, 2), 1))])
def test_add_at_adds_repeats_as_numpy_does(shape, index):
    rng = np.random.default_rng(3)
    values = rng.normal(size=np.zeros(shape)[index].shape)
    start = rng.normal(size=shape)
    want = start.copy()
    np.add.at(want, index, values)
    parts = index if isinstance(index, tuple) else (index,)
    strict_index = tuple(xps.asarray(p) if isinstance(p, np.ndarray) else p for p in parts)
    strict_index = strict_index if isinstance(index, tuple) else strict_index[0]
    out = xps.asarray(start)
    numpy_names(xps).add.at(out, strict_index, xps.asarray(values))
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-13, atol=1e-15)


def test_the_namespace_add_is_the_librarys_add():
    a, b = xps.asarray([1.0, 2.0]), xps.asarray([3.0, 4.0])
    assert np.asarray(numpy_names(xps).add(a, b)).tolist() == [4.0, 6.0]


def test_numpy_dtypes_name_the_librarys_dtypes():
    names = numpy_names(xps)
    assert names.dtype(np.float32) == xps.float32 and names.dtype(float) == xps.float64
    assert names.dtype(xps.int64) == xps.int64 and names.dtype(None) is None
