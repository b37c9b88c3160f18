"""Second order (and third, for block_diag) through scipy.linalg.block_diag and np.gradient:
their gradient helpers (block_diag_grad, gradient_grad) have rules of their own, each the
transpose of the other helper of its pair (block_diag_place, gradient_adjoint). Checked
against finite differences of the checked gradient (sgcompiler.check_grads), both modes,
on several shapes."""
import numpy as np
import pytest

from sgcompiler import check_grads, hessian

scipy_linalg = pytest.importorskip("scipy.linalg")


def blocks(a, b):
    return np.sum(np.sin(scipy_linalg.block_diag(a, b)) ** 2)


def three_blocks(a, b, c):
    m = scipy_linalg.block_diag(a, b, c)
    return np.sum(m @ m.T * m[0, 0])


@pytest.mark.parametrize("shapes", [((2, 3), (3, 2)), ((1, 1), (4,)), ((3, 3), (2, 2))])
def test_second_order_through_block_diag(shapes):
    rng = np.random.default_rng(len(shapes[0]) + shapes[1][0])
    args = tuple(rng.normal(size=s) for s in shapes)
    check_grads(blocks, args, order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("shapes", [((2, 2), (1, 3), (2,)), ((1, 2), (2, 1), (3, 3))])
def test_second_and_third_order_through_three_blocks(shapes):
    rng = np.random.default_rng(sum(map(len, shapes)))
    args = tuple(rng.normal(size=s) * 0.5 for s in shapes)
    check_grads(three_blocks, args, order=3, modes=("fwd", "rev"))


def gradient_1d(x):
    return np.sum(np.gradient(x) ** 3)


def gradient_axis(x):
    return np.sum(np.cos(np.gradient(x, 0.5, axis=1)) * x)


def gradient_edges(x):
    return np.sum(np.sin(np.gradient(x, edge_order=2, axis=0)) ** 2)


@pytest.mark.parametrize("f, shape", [(gradient_1d, (5,)), (gradient_1d, (8,)),
                                      (gradient_axis, (3, 4)), (gradient_axis, (2, 5)),
                                      (gradient_edges, (4, 3)), (gradient_edges, (6,))])
def test_second_order_through_np_gradient(f, shape):
    x = np.random.default_rng(shape[0]).normal(size=shape)
    check_grads(f, (x,), order=2, modes=("fwd", "rev"))


def test_third_order_through_np_gradient():
    x = np.random.default_rng(3).normal(size=(5, 3))
    check_grads(gradient_axis, (x,), order=3, modes=("fwd", "rev"))


T = np.cumsum(np.random.default_rng(4).random(6)) + 0.5


def coordinates(x):
    return np.sum(np.gradient(x, T) ** 3)


@pytest.mark.parametrize("n", [4, 6])
def test_second_order_with_coordinates(n):
    x = np.random.default_rng(n).normal(size=n)
    f = coordinates if n == 6 else short_coordinates
    check_grads(f, (x,), order=2, modes=("fwd", "rev"))


def short_coordinates(x):
    return np.sum(np.sin(np.gradient(x, T[:4], edge_order=2)) * x)


def several_axes(x):
    a, b = np.gradient(x)
    return np.sum(a ** 2 * b) + np.sum(np.sin(b))


def several_axes_spaced(x):
    # (axes given, a spacing each, on 3-d input: the first and last axes)
    a, b = np.gradient(x, 0.5, 2.0, axis=(0, 2))
    return np.sum(np.cos(a) * b + a * x)


def several_axes_read_as_one(x):
    g = np.gradient(x)
    return np.sum(g[0] * g[1] ** 2)


# (reverse over reverse was refused: the first gradient's code held the tuple's zero
# adjoint as a list, [0.0, 0.0], and added it to the results stacked as one array)
@pytest.mark.parametrize("f, shape", [(several_axes, (3, 4)), (several_axes, (5, 2)),
                                      (several_axes_read_as_one, (4, 3)),
                                      (several_axes_spaced, (3, 2, 4))],
                         ids=lambda c: getattr(c, "__name__", str(c)))
def test_second_order_over_several_axes_at_once(f, shape):
    x = np.random.default_rng(5).normal(size=shape)
    check_grads(f, (x,), order=2, modes=("fwd", "rev"))
    eps, v = 1e-6, np.random.default_rng(6).normal(size=shape)
    H = hessian(f)(x)
    from sgcompiler import grad
    g = grad(f)
    np.testing.assert_allclose(np.tensordot(H, v, axes=len(shape)),
                               (g(x + eps * v) - g(x - eps * v)) / (2 * eps), rtol=1e-5,
                               atol=1e-7)


def test_check_grads_of_a_lambda_at_second_order():
    # its "<lambda>" name made the checked function's text a SyntaxError
    x = np.random.default_rng(7).normal(size=5)
    check_grads(lambda x: np.sum(np.sin(x) * x ** 2), (x,), order=2, modes=("fwd", "rev"))
