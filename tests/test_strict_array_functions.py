"""NumPy functions the array API standard spells with others, on array_api_strict arrays:
`take`, `pad` (constant), `diff`, `diag`, `diagflat`, `kron`, `cross`, `einsum`,
`nancumsum`, `nancumprod`, `fmod`, `put_along_axis` (sort's and partition's gradients) and a
user's assignment at an integer array, `y[idx] = v` (the standard's arrays take none). Each
gradient on strict arrays is the NumPy gradient, which is checked here against finite
differences too, on several shapes, with broadcasting and float32; the spellings are checked
against NumPy's own on the awkward values. What stays outside the standard is refused,
naming the function."""
import numpy as np
import pytest

from gradcheck import numeric_grad
from sgcompiler import SGCompilerError, grad

xps = pytest.importorskip("array_api_strict", reason="array-api-strict is not installed")


def taken(x, w):
    return np.sum(np.take(x, np.array([2, 0, 2, -1])) * w)


def taken_on_axis(x, w):
    return np.sum(np.take(x, np.array([[1, 0], [1, 1]]), axis=1) * w)


def taken_wrapped(x, w):
    return np.sum(np.take(x, np.array([5, -7, 1]), axis=0, mode="wrap") ** 2 * w)


def taken_clipped(x, w):
    return np.sum(np.take(x, np.array([9, -3, 1]), axis=-1, mode="clip") * w)


def padded(x, w):
    return np.sum(np.pad(x, 2) ** 2 * w)


def padded_unevenly(x, w):
    return np.sum(np.pad(x, ((1, 0), (0, 3)), constant_values=1.5) * np.sin(w))


def differenced(x, w):
    return np.sum(np.diff(x) ** 2 * w)


def differenced_twice_on_rows(x, w):
    return np.sum(np.diff(x, 2, axis=0) * w)


def differenced_with_ends(x, w):
    return np.sum(np.diff(x, prepend=0.5, append=np.ones((x.shape[0], 1))) ** 2 * w)


def diagonal_matrix(x, w):
    return np.sum(np.diag(x) * w) + np.sum(np.diag(x, 1) ** 2) + np.sum(np.diag(x, -2) ** 3)


def diagonal_of_matrix(x, w):
    return np.sum(np.diag(x, -1) ** 2 * w)


def flat_diagonal(x, w):
    return np.sum(np.diagflat(x, 1) * w)


def kronecker(x, w):
    return np.sum(np.kron(x, w) ** 2) + np.sum(np.kron(w, x * x))


def crossed(x, w):
    return np.sum(np.cross(x, w) ** 2) + np.sum(np.cross(w, x) * w)


def crossed_on_axis(x, w):
    return np.sum(np.cross(x, w, axisa=0, axisb=0, axisc=0) ** 2)


def einsum_product(x, w):
    return np.sum(np.einsum("ij,jk->ik", x, w) ** 2)


def einsum_batched(x, w):
    return np.einsum("bij,j->", np.sin(x), w) + np.sum(np.einsum("...ij->...ji", x) ** 2)


def einsum_diagonal(x, w):
    return np.sum(np.einsum("ii->i", x) * w) + np.einsum("ij,ij", x, x)


def nan_cumulative_sum(x, w):
    return np.sum(np.nancumsum(np.where(x > 1.0, np.nan, x * w)) ** 2)


def nan_cumulative_product(x, w):
    return np.sum(np.nancumprod(np.where(x > 1.0, np.nan, x * w), axis=-1))


def remainder_of_c(x, w):
    return np.sum(np.fmod(x, w) ** 2) + np.sum(np.fmod(-3.0 * x, 0.7))


def sorted_rows(x, w):
    return np.sum(np.sort(x, axis=0) * w)


def assigned_at(x, w):
    y = x * 2.0
    y[np.array([0, 2, 0])] = w
    return np.sum(y * y)


def assigned_at_rows(x, w):
    y = np.sin(x)
    idx = np.array([1, -1])
    y[idx] = w * y[0, ...]
    y[idx] += w
    return np.sum(y * x)


def assigned_at_columns(x, w):
    y = x * x
    y[:, np.array([2, 0])] = w
    return np.sum(np.cos(y))


def assigned_at_sliced_columns(x, w):
    y = x * 1.0
    i = np.array([0, 2])
    y[1:, i] = w
    y[:2, i] += w
    y[::2, i] = y[::2, i] * 3.0
    return np.sum(y * y)


def assigned_at_points(x, w):
    y = x + 0.0
    y[np.array([0, 1, 1]), np.array([2, 0, 0])] = w[0, 1] * x[0, 0]
    y[np.array([1]), [2]] = 3.0
    return np.sum(y * w)


CASES = [
    (taken, (5,), (4,)), (taken, (2, 3), (1,)), (taken_on_axis, (3, 2), (3, 2, 2)),
    (taken_on_axis, (2, 2, 3), (2, 2, 2, 3)), (taken_wrapped, (4, 2), (3, 1)),
    (taken_clipped, (2, 4), (3,)),
    (padded, (3,), (7,)), (padded, (2, 3), (6, 7)), (padded_unevenly, (2, 3), (3, 6)),
    (padded_unevenly, (3, 1), (1, 4)),
    (differenced, (5,), (4,)), (differenced, (2, 4), (1, 3)),
    (differenced_twice_on_rows, (5, 2), (3, 2)), (differenced_twice_on_rows, (4, 2, 2), (2,)),
    (differenced_with_ends, (2, 3), (2, 4)),
    (diagonal_matrix, (3,), (3, 3)), (diagonal_of_matrix, (4, 3), (3,)),
    (diagonal_of_matrix, (3, 3), (1,)), (flat_diagonal, (2, 2), (5, 5)),
    (kronecker, (2, 3), (3, 2)), (kronecker, (3,), (2, 2)), (kronecker, (2, 1, 2), (2, 3)),
    (crossed, (3,), (3,)), (crossed, (4, 3), (3,)), (crossed, (2, 1, 3), (4, 3)),
    (crossed_on_axis, (3, 2), (3, 1)),
    (einsum_product, (2, 3), (3, 4)), (einsum_batched, (2, 3, 3), (3,)),
    (einsum_diagonal, (3, 3), (3,)),
    (nan_cumulative_sum, (5,), (5,)), (nan_cumulative_sum, (2, 3), (3,)),
    (nan_cumulative_product, (2, 4), (4,)),
    (remainder_of_c, (4,), (4,)), (remainder_of_c, (2, 3), (3,)),
    (sorted_rows, (4, 3), (4, 3)), (sorted_rows, (3,), (1,)),
    (assigned_at, (4,), (3,)), (assigned_at, (3,), ()),
    (assigned_at_rows, (3, 2), (2,)), (assigned_at_rows, (4,), ()),
    (assigned_at_columns, (2, 3), (2, 1)), (assigned_at_columns, (2, 3), (2,)),
    (assigned_at_points, (2, 3), (2, 3)), (assigned_at_sliced_columns, (3, 4), (2,)),
    (assigned_at_sliced_columns, (4, 3), (1,)),
]


def _values(f, shape, w_shape, dtype=np.float64):
    rng = np.random.default_rng(len(shape) * 7 + sum(shape) + len(w_shape))
    x = rng.normal(size=shape)
    w = rng.normal(size=w_shape)
    if f is remainder_of_c:         # (no remainder within rounding of a jump)
        x, w = np.abs(x) + 0.3, np.where(w < 0, -1.0, 1.0) * (np.abs(w) + 0.4)
        x = np.where(np.abs(np.fmod(x, w)) < 0.05, x + 0.1, x)
    if f in (nan_cumulative_sum, nan_cumulative_product):
        x.flat[1] = 2.0             # (a nan the reduction skips, where x > 1)
    return x.astype(dtype), w.astype(dtype)


@pytest.mark.parametrize("f, shape, w_shape", CASES,
                         ids=[f"{c[0].__name__}-{c[1]}-{c[2]}" for c in CASES])
def test_gradient_on_strict_arrays_is_numpys_and_right(f, shape, w_shape):
    x, w = _values(f, shape, w_shape)
    want = grad(f, wrt=(0, 1))(x, w)
    for i, (value, got) in enumerate(zip((x, w), want)):
        numeric = numeric_grad(f, (x, w), i)
        finite = np.isfinite(numeric)       # (the nan element: no derivative)
        np.testing.assert_allclose(got[finite], numeric[finite], rtol=1e-6, atol=1e-7)
    got = grad(f, wrt=(0, 1))(xps.asarray(x), xps.asarray(w))
    for g, e, value in zip(got, want, (x, w)):
        assert type(g) is type(xps.asarray(x)) and g.dtype == xps.float64
        assert tuple(g.shape) == value.shape
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-10, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("f, shape, w_shape", [
    (taken_on_axis, (3, 2), (3, 2, 2)), (padded, (2, 3), (6, 7)), (kronecker, (2, 3), (3, 2)),
    (einsum_product, (2, 3), (3, 4)), (crossed, (4, 3), (3,)),
    (assigned_at_rows, (3, 2), (2,))])
def test_float32_stays_float32(f, shape, w_shape):
    x, w = _values(f, shape, w_shape, np.float32)
    want = grad(f)(x, w)
    got = grad(f)(xps.asarray(x), xps.asarray(w))
    assert got.dtype == xps.float32 and want.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)


def _names():
    from sgcompiler.runtime.namespace import numpy_names
    return numpy_names(xps)


def test_fmod_is_c_fmod_on_signs_zeros_and_infinities():
    x = np.array([5.5, -5.5, 5.5, -5.5, 0.0, -0.0, 1e-20, -1e-20, np.inf, 3.0, 2.0, np.nan])
    y = np.array([2.0, 2.0, -2.0, -2.0, 3.0, 3.0, 1.0, 1.0, 2.0, np.inf, 0.0, 1.0])
    with np.errstate(invalid="ignore"):
        want = np.fmod(x, y)
        got = np.asarray(_names().fmod(xps.asarray(x), xps.asarray(y)))
    np.testing.assert_array_equal(got, want)
    numbers = ~np.isnan(want)
    assert np.array_equal(np.signbit(got[numbers]), np.signbit(want[numbers]))
    ints = np.array([7, -7, 7, -7]), np.array([3, 3, -3, -3])
    np.testing.assert_array_equal(
        np.asarray(_names().fmod(*(xps.asarray(v) for v in ints))), np.fmod(*ints))


@pytest.mark.parametrize("call", [
    lambda m, a: m.take(a, [3, -1, 0]), lambda m, a: m.take(a, [[1], [0]], axis=1),
    lambda m, a: m.take(a, 7, axis=0, mode="wrap"), lambda m, a: m.pad(a, (1, 2)),
    lambda m, a: m.pad(a, ((0, 1), (2, 0)), constant_values=-1.0),
    lambda m, a: m.diff(a, 2), lambda m, a: m.diff(a, axis=0, append=0.0),
    lambda m, a: m.diag(a), lambda m, a: m.diag(a, -1), lambda m, a: m.diag(a[0, :], 2),
    lambda m, a: m.diagflat(a, -1), lambda m, a: m.kron(a, a[0, :]),
    lambda m, a: m.cross(a[:, :3], a[:, 1:]), lambda m, a: m.cross(a[:, :3], a[1:2, 1:], axisc=0),
    lambda m, a: m.einsum("ij,kj->ik", a, a),
    lambda m, a: m.einsum("ii", a[:, :3]), lambda m, a: m.einsum("ij", a),
    lambda m, a: m.nancumsum(a), lambda m, a: m.nancumprod(a, axis=0)],
    ids=["take", "take-axis", "take-wrap", "pad", "pad-values", "diff", "diff-append",
         "diag", "diag-below", "diag-vector", "diagflat", "kron", "cross", "cross-axisc",
         "einsum", "einsum-trace", "einsum-implicit", "nancumsum",
         "nancumprod"])
def test_spellings_are_numpys(call):
    a = np.arange(12.0).reshape(3, 4) - 4.0
    if "nancum" in call.__code__.co_names:
        a[1, 2] = np.nan
    want = call(np, a)
    got = call(_names(), xps.asarray(a))
    np.testing.assert_array_equal(np.asarray(got), want)


def test_put_along_axis_writes_in_place_and_refuses_repeats():
    names = _names()
    out = xps.zeros((2, 3))
    order = np.array([[2, 0, 1], [1, 2, 0]])
    values = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    names.put_along_axis(out, xps.asarray(order), xps.asarray(values), axis=1)
    want = np.zeros((2, 3))
    np.put_along_axis(want, order, values, axis=1)
    np.testing.assert_array_equal(np.asarray(out), want)
    with pytest.raises(SGCompilerError, match="put_along_axis.*repeat.*array_api_strict"):
        names.put_along_axis(out, xps.asarray([[0, 0, 1], [1, 2, 0]]), 1.0, axis=1)


@pytest.mark.parametrize("shape, index", [
    ((5,), np.array([1, 3, 1])), ((4, 2), (np.array([0, -1, 0]), np.array([1, 0, 1]))),
    ((3, 4), (slice(None), np.array([3, 0, 3]))), ((3, 2), np.array([[2, 0], [0, 1]])),
    ((4,), np.array([True, False, True, False])), ((3, 2), [2, 0])])
def test_assignment_at_integer_arrays_is_numpys(shape, index):
    """The last write to a place wins, as in NumPy's assignment."""
    rng = np.random.default_rng(3)
    y = rng.normal(size=shape)
    v = rng.normal(size=y[index].shape)
    want = y.copy()
    want[index] = v
    parts = index if isinstance(index, tuple) else (index,)
    strict = tuple(xps.asarray(p) if isinstance(p, np.ndarray) else p for p in parts)
    got = xps.asarray(y)
    _names().setitem(got, strict if isinstance(index, tuple) else strict[0], xps.asarray(v))
    np.testing.assert_array_equal(np.asarray(got), want)


def test_numpy_code_keeps_its_assignment():
    """The spellings are for other libraries: NumPy's gradient assigns as before."""
    source = grad(assigned_at).source
    assert "y[_array] = w" in source
    assert "setitem" not in source and "copy_of" not in source


def test_helper_of_the_scipy_rules_is_refused_by_name():
    """solve_banded_grad_b computes with scipy.linalg.solve_banded, which the standard does
    not spell: refused, naming it and SciPy, rather than failing inside SciPy on a strict
    array. (expm_grad, refused so before, runs: tests/test_strict_spellings.py.)"""
    pytest.importorskip("scipy.linalg")
    from sgcompiler.runtime.scipy.linalg import solve_banded_grad_b

    def f(ab, g):
        return np.sum(solve_banded_grad_b(g, (1, 1), ab, g) ** 2)
    ab = np.array([[0.0, 1.0, 1.0], [4.0, 4.0, 4.0], [1.0, 1.0, 0.0]])
    assert np.all(np.isfinite(grad(f)(ab, np.ones(3))))
    with pytest.raises(SGCompilerError, match=r"solve_banded_grad_b.*SciPy.*array-API"):
        grad(f)(xps.asarray(ab), xps.asarray(np.ones(3)))



def test_index_outside_the_standards_forms_is_refused_clearly():
    def f(x):
        y = x * 1.0
        y[np.array([0, 1]), :, np.array([1, 0])] = 0.0
        return np.sum(y * y)
    x = np.ones((2, 2, 2))
    assert grad(f)(x).shape == x.shape
    with pytest.raises(SGCompilerError, match="integer arrays mixed.*array_api_strict"):
        grad(f)(xps.asarray(x))
