"""Second derivatives through the gradient helpers of functions that move elements (sort,
take_along_axis, pad, diff, rollaxis, stack and its kin, ...) and of np.interp, whose
rules are in rules/runtime.py or who are read through their source: hessian, hvp and
grad of grad against central differences of the first-order gradient, on several shapes
and with broadcasting.

Each specimen puts the primitive between nonlinear functions, so that its second
derivative matters.
"""
import numpy as np
import pytest

from sgcompiler import check_grads, grad
from gradcheck import assert_hessian_and_hvp_match, fd_hessian

R = np.random.default_rng(1406)


def sorted_cubes(x):
    return np.sum(np.sort(np.sin(x)) ** 3 * np.arange(x.shape[-1]))


def sorted_axis0(x):
    return np.sum(np.sort(x * x, axis=0) ** 3 * np.arange(x.shape[0])[:, None])


def sorted_flat(x):
    return np.sum(np.sort(x ** 3, axis=None) * np.linspace(-1.0, 2.0, x.size) ** 2)


def taken_along(x):
    order = np.argsort(x, axis=-1)
    picked = np.take_along_axis(np.exp(x), order[..., :2], axis=-1)
    return np.sum(picked ** 2 * x[..., :2])


def padded(x):
    p = np.pad(np.sin(x), 1, mode="edge") + np.pad(x * x, 1, mode="reflect") ** 2
    return np.sum(p ** 3) + np.sum(np.pad(x ** 3, (2, 1)) * np.arange(x.shape[0] + 3))


def differenced(x):
    d = np.diff(np.sin(x), n=2, axis=0) ** 2
    return np.sum(d * np.diff(x, axis=0, prepend=0.5)[1:-1])


def rolled(x):
    return np.sum(np.rollaxis(np.sin(x), 1) ** 3 * x.T)


def partitioned(x):
    return np.sum(np.partition(np.sin(x), 1) ** 3 * x) + np.sum(np.partition(x, 0, axis=None) ** 2)


def bessel_i0(x):
    # np.i0's derivative is the runtime helper bessel_i1, which has a rule of its own
    return np.sum(np.i0(np.sin(x) * 2.0) ** 2 * x)


def interpolated(x):
    xp = np.array([-1.0, 0.0, 0.5, 2.0])
    return np.sum(np.interp(np.sin(x), xp, x[:4] ** 2) ** 3)


def interpolated_left(x):
    xp = np.array([-0.5, 0.0, 0.5])
    return np.sum(np.interp(x, xp, np.cos(x[:3]), left=0.0) ** 2 * x)


def stacked(x):
    return np.sum(np.stack([np.sin(x), x * x, x], axis=-1) ** 3 * np.arange(3))


def stacked_kin(x):
    return np.sum(np.hstack([np.sin(x), x ** 2]) ** 3) + np.sum(np.vstack([x, np.cos(x)]) ** 3) \
        + np.sum(np.dstack([np.sin(x), x]) ** 3) + np.sum(np.column_stack([x, x ** 2]) ** 3)


def appended(x):
    return np.sum(np.append(np.sin(x), x ** 2) ** 3) + np.sum(np.delete(x ** 2, [0]) ** 3)


def integrated(x):
    return np.sum(np.trapezoid(np.sin(x) ** 2, axis=0) * np.trapezoid(x ** 3, dx=0.5, axis=0))


def selected(x):
    return np.sum(np.select([x > 0.5, x < -0.5], [x ** 3, np.sin(x)], np.cos(x)) ** 2)


def polynomial(x):
    return np.sum(np.polyval(x[:3] ** 2, np.sin(x)) ** 2)


def averaged(x):
    return np.average(np.sin(x), weights=x ** 2) ** 2 + np.sum(np.average(x ** 3, axis=0) ** 2) \
        + np.sum(np.average(x * x, axis=-1, weights=np.exp(x[-1])) ** 3)


def kronecker(x):
    return np.sum(np.kron(np.sin(x), x ** 2) ** 2) + np.sum(np.kron(x, np.eye(2)) ** 3)


def vector_dots(x):
    return np.sum(np.vecdot(np.sin(x), x ** 2) ** 2) + np.sum(np.vecdot(x, x[0]) ** 3)


def filtered(x):
    return np.sum(np.convolve(np.sin(x), x ** 2) ** 2) \
        + np.sum(np.correlate(x, np.cos(x[:2]), "same") ** 3) \
        + np.sum(np.convolve(x ** 2, np.sin(x[:3]), "valid") ** 3)


def einsums(x):
    return np.sum(np.einsum("ij,jk->ik", np.sin(x), x ** 2) ** 2) + np.einsum("ii", x) ** 3 \
        + np.sum(np.einsum("ij,j,ik->k", x, np.cos(x[0]), x * x) ** 2) \
        + np.sum(np.einsum("...i,...i", x, x[0]) ** 3)


CASES = [
    (sorted_cubes, lambda: R.normal(size=5)),
    (sorted_cubes, lambda: R.normal(size=(2, 4))),
    (sorted_axis0, lambda: R.normal(size=(3, 2))),
    (sorted_flat, lambda: R.normal(size=(2, 3))),
    (taken_along, lambda: R.normal(size=(2, 4))),
    (taken_along, lambda: R.normal(size=5)),
    (padded, lambda: R.normal(size=4)),
    (padded, lambda: R.normal(size=(3, 3))),
    (differenced, lambda: R.normal(size=(5, 2))),
    (differenced, lambda: R.normal(size=6)),
    (rolled, lambda: R.normal(size=(2, 3))),
    (partitioned, lambda: R.normal(size=4)),
    (partitioned, lambda: R.normal(size=(2, 3))),
    (bessel_i0, lambda: R.normal(size=4)),
    (bessel_i0, lambda: R.normal(size=(2, 3))),
    (interpolated, lambda: R.normal(size=6)),
    (interpolated_left, lambda: np.array([-0.9, -0.3, 0.2, 0.4, 0.8])),
    (stacked, lambda: R.normal(size=3)),
    (stacked, lambda: R.normal(size=(2, 2))),
    (stacked_kin, lambda: R.normal(size=3)),
    (stacked_kin, lambda: R.normal(size=(2, 3))),
    (appended, lambda: R.normal(size=4)),
    (appended, lambda: R.normal(size=(2, 2))),
    (integrated, lambda: R.normal(size=(4, 2))),
    (integrated, lambda: R.normal(size=5)),
    (selected, lambda: np.array([0.9, -0.2, -1.3, 0.1, 2.0])),
    (polynomial, lambda: R.normal(size=4)),
    (averaged, lambda: R.normal(size=(3, 3))),
    (averaged, lambda: R.normal(size=(2, 4))),
    (kronecker, lambda: R.normal(size=(2, 2))),
    (kronecker, lambda: R.normal(size=3)),
    (vector_dots, lambda: R.normal(size=(2, 3))),
    (filtered, lambda: R.normal(size=4)),
    (filtered, lambda: R.normal(size=6)),
    (einsums, lambda: R.normal(size=(3, 3))),
    (einsums, lambda: R.normal(size=(2, 2))),
]
IDS = [f"{f.__name__}-{i}" for i, (f, _) in enumerate(CASES)]




@pytest.mark.parametrize("f, make", CASES, ids=IDS)
def test_hessian_through_moving_helpers(f, make):
    x = make()
    assert_hessian_and_hvp_match(f, x, R)


# (check_grads calls the function as a helper of its own: np.interp's xp arrives with
# the helper's saved values, made from no parameter, so stop_gradient'ed there; it was
# refused, interp_grad_fp giving no gradient for xp)
FIRST = {f: (f, make) for f, make in reversed(CASES)}     # one shape per specimen


@pytest.mark.parametrize("f, make", list(FIRST.values()), ids=[f.__name__ for f in FIRST])
def test_grad_of_grad_through_moving_helpers(f, make):
    check_grads(f, (make(),), order=2, modes=("rev",))


V = np.array([0.3, -1.2, 0.7, 0.5, -0.4, 1.1])


def interpolated_directional(x):
    return np.sum(grad(interpolated)(x) * V)


def interpolated_left_directional(x):
    return np.sum(grad(interpolated_left)(x) * V[:5])


@pytest.mark.parametrize("f, directional, x", [
    (interpolated, interpolated_directional, R.normal(size=6)),
    (interpolated_left, interpolated_left_directional,
     np.array([-0.9, -0.3, 0.2, 0.4, 0.8]))], ids=["interpolated", "interpolated_left"])
def test_grad_of_grad_through_interp(f, directional, x):
    expected = np.tensordot(fd_hessian(f, x), V[:x.size], 1)
    np.testing.assert_allclose(grad(directional)(x), expected, rtol=1e-5, atol=1e-5)


# --- `for pair in zip(a, b)` (kron_grad's shapes): an AssertionError inside the compiler
# before; the name holds the tuple of the elements

def zipped_pairs(x, y):
    total = 0.0
    for pair in zip(x, y):
        total = total + pair[0] * np.sin(pair[1]) ** 2
    return total


def zipped_in_comprehension(x):
    shape = [n for pair in zip((1, 2), (3, 2)) for n in pair]
    return np.sum(np.reshape(x, shape) ** 3)


@pytest.mark.parametrize("n", [1, 4])
def test_for_a_name_over_zip(n):
    x, y = R.normal(size=n), R.normal(size=n)
    check_grads(zipped_pairs, (x, y), order=2, modes=("rev", "fwd"))
    check_grads(zipped_in_comprehension, (R.normal(size=12),), order=2)
