"""What array_api_strict refused before and the standard can spell: a user's `x.astype(t)`
(the standard's arrays have no astype method), Python's `sum` over an array's rows,
`np.diagonal` (any offset and axes), `cholesky`'s gradient (a `.swapaxes` method),
`eigvalsh` and `eigh` with UPLO, the adjoints of an assignment at an index with repeats (written_part and
written_back, made without the assignment the standard lacks) and `repeat` with an axis. Each
gradient on strict arrays is the NumPy gradient, which is checked here against finite
differences too, for several shapes, broadcasting and float32."""
import numpy as np
import pytest

from gradcheck import numeric_grad
from sgcompiler import grad

xps = pytest.importorskip("array_api_strict", reason="array-api-strict is not installed")


def cast_method(x, w):
    return np.sum(x.astype(np.float64).astype(float) * w) + np.sum(x.astype(float) ** 2)


def cast_through_float32(x, w):
    return np.sum(x.astype(np.float32).astype(float) * w)


def cast_to_int_method(x, w):
    return np.sum(x.astype(int) * w) + np.sum(np.sin(x.astype(x.dtype)) * w)


def rows_added(x, w):
    return np.sum(sum(x) * w)


def rows_added_from(x, w):
    return np.sum(sum(x * x, w) * w)


def rows_of_rows(x, w):
    return np.sum(sum(sum(x)) * w)


def diagonal_plain(x, w):
    return np.sum(np.diagonal(x) * w)


def diagonal_below(x, w):
    return np.sum(np.diagonal(x, -1) ** 2 * w)


def diagonal_above_axes(x, w):
    return np.sum(np.diagonal(x, 1, 2, 0) * w)


def cholesky_lower(x, w):
    a = x @ np.swapaxes(x, -1, -2) + 3.0 * np.eye(np.shape(x)[-1])
    return np.sum(np.linalg.cholesky(a) * w)


def eigvalsh_upper(x, w):
    return np.sum(np.linalg.eigvalsh(x, UPLO="U") * w)


def eigvalsh_lower(x, w):
    return np.sum(np.linalg.eigvalsh(x) * w)


def repeated_rows(x, w):
    return np.sum(np.repeat(x, np.array([2, 1]), axis=0) * w)


CASES = [
    (cast_method, (2, 3), (2, 3)), (cast_method, (4,), (1,)),
    (cast_to_int_method, (3,), (3,)),
    (rows_added, (4, 3), (3,)), (rows_added, (2, 3, 2), (3, 2)), (rows_added, (5,), ()),
    (rows_added_from, (3, 2), (2,)), (rows_added_from, (3, 2), (3, 1, 2)),
    (rows_of_rows, (3, 2), ()),
    (diagonal_plain, (3, 4), (3,)), (diagonal_plain, (4, 2), (1,)),
    (diagonal_below, (3, 4), (2,)), (diagonal_above_axes, (3, 2, 4), (2, 2)),
    (cholesky_lower, (3, 3), (3, 3)), (cholesky_lower, (2, 3, 3), (3, 3)),
    (eigvalsh_upper, (3, 3), (3,)), (eigvalsh_lower, (4, 4), (4,)),
    (eigvalsh_upper, (2, 3, 3), (3,)),
    (repeated_rows, (2, 3), (3, 3)), (repeated_rows, (2, 1), (3, 4)),
]


def _numeric(f, x, w):
    return numeric_grad(lambda v: f(v, w), [x], 0)


@pytest.mark.parametrize("f, shape, w_shape", CASES,
                         ids=[f"{c[0].__name__}-{c[1]}-{c[2]}" for c in CASES])
def test_gradient_on_strict_arrays_is_numpys_and_right(f, shape, w_shape):
    rng = np.random.default_rng(len(shape) + sum(shape))
    x, w = rng.normal(size=shape), rng.normal(size=w_shape)
    want = grad(f)(x, w)
    np.testing.assert_allclose(want, _numeric(f, x, w), rtol=1e-6, atol=1e-7)
    got = grad(f)(xps.asarray(x), xps.asarray(w))
    assert type(got) is type(xps.asarray(x)) and got.dtype == xps.float64
    assert tuple(got.shape) == shape
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("f, shape, w_shape", [
    (cast_method, (2, 3), (2, 3)), (cast_through_float32, (3,), (3,)),
    (rows_added, (4, 3), (3,)), (diagonal_below, (3, 4), (2,))])
def test_float32_stays_float32(f, shape, w_shape):
    rng = np.random.default_rng(7)
    x = rng.normal(size=shape).astype(np.float32)
    w = rng.normal(size=w_shape).astype(np.float32)
    want = grad(f)(x, w)
    got = grad(f)(xps.asarray(x), xps.asarray(w))
    assert got.dtype == xps.float32 and want.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)


def test_python_sum_of_a_list_is_still_pythons():
    """sum of a list of strict arrays (not an array) adds the items as Python does."""
    def listed(x, w):
        return np.sum(sum([x, x * w, w]) * x)
    rng = np.random.default_rng(2)
    x, w = rng.normal(size=(3,)), rng.normal(size=(3,))
    want = grad(listed)(x, w)
    np.testing.assert_allclose(want, _numeric(listed, x, w), rtol=1e-6, atol=1e-7)
    got = grad(listed)(xps.asarray(x), xps.asarray(w))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


def test_a_local_named_sum_is_not_pythons():
    def shadowed(x, w):
        sum = np.sin
        return np.sum(sum(x) * w)
    x, w = np.linspace(0.1, 1.0, 4), np.linspace(-1.0, 1.0, 4)
    got = grad(shadowed)(xps.asarray(x), xps.asarray(w))
    np.testing.assert_allclose(np.asarray(got), np.cos(x) * w, rtol=1e-12)


@pytest.mark.parametrize("shape, index", [
    ((4,), np.array([1, 3, 1])), ((5, 2), np.array([1, 3, 1, 0])),
    ((3, 4), (np.array([0, 2, 0]), np.array([1, 1, 1]))), ((6,), np.array([[0, 5], [5, 0]])),
    ((3, 2), np.array([2, 0, 2]))])
def test_adjoints_of_assignment_at_repeats_are_numpys(shape, index):
    from sgcompiler.runtime import written_back, written_part
    from sgcompiler.runtime.namespace import helpers_for
    bound = helpers_for(xps)
    rng = np.random.default_rng(5)
    g = rng.normal(size=shape)
    parts = index if isinstance(index, tuple) else (index,)
    strict_index = tuple(xps.asarray(p) for p in parts)
    strict_index = strict_index if isinstance(index, tuple) else strict_index[0]
    part = written_part(g, index)
    assert np.count_nonzero(part == 0) > 0       # (a repeat: one write is dropped)
    got = bound[written_part](xps.asarray(g), strict_index)
    np.testing.assert_array_equal(np.asarray(got), part)
    back = written_back(part, index, g)
    got = bound[written_back](xps.asarray(part), strict_index, xps.asarray(g))
    np.testing.assert_array_equal(np.asarray(got), back)
    # the two are each other's transposes: <written_part(g), v> = <g, written_back(v)>
    v = rng.normal(size=part.shape)
    assert np.isclose(np.sum(part * v), np.sum(g * written_back(v, index, g)))


@pytest.mark.parametrize("name", ["fmax", "fmin", "heaviside", "logaddexp2", "float_power",
                                  "exp2", "ldexp"])
def test_numpys_elementwise_functions_spelled_with_the_standards(name):
    """NumPyNames' fmax, fmin, heaviside, ... against NumPy's, on nans, infinities, zeros
    and ties (what the rule table's rows do not hold)."""
    from sgcompiler.runtime.namespace import numpy_names
    x = np.array([np.nan, 1.0, -0.0, 0.0, 2.0, -np.inf, 3.5, np.nan, -1.25])
    y = np.array([1.0, np.nan, 0.0, -0.0, 2.0, 4.0, -np.inf, np.nan, 0.5])
    if name == "exp2":
        args = (x,)
    elif name == "ldexp":
        args = (x, np.array([1, -2, 3, 0, 5, 1, -1, 2, 4]))
    elif name == "float_power":
        args = (np.abs(x), y)
    else:
        args = (x, y)
    with np.errstate(invalid="ignore"):     # (logaddexp2 of inf and -inf is nan)
        want = getattr(np, name)(*args)
        got = getattr(numpy_names(xps), name)(*(xps.asarray(a) for a in args))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-14, equal_nan=True)
    assert np.array_equal(np.signbit(np.asarray(got)), np.signbit(want)) or name in (
        "fmax", "fmin")     # (NumPy's sign of a tie of -0.0 and 0.0 is its own)
