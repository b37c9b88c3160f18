"""grad of a function that calls grad(f) of a function taking *args: the call inside is
the gradient of f's copy for that call's arguments (collected.CollectedGradient.for_call),
read like any gradient called inside. Checked against finite differences to order 2
(check_grads: the gradient of the outer function and its second derivative)."""
import numpy as np
import pytest

from sgcompiler import SGCompilerError, check_grads, grad


def f(*ws):
    return np.sum(np.sin(ws[0]) * ws[1] ** 2)


def scaled(x, *rest, scale=1.0):
    return scale * np.sum(np.cos(x) * rest[0]) + np.sum(rest[1] ** 3)


def norm_of_gradient(x, y):
    return np.sum(grad(f)(x, y) ** 2)


def both_gradients(x, y):
    gx, gy = grad(f, wrt=(0, 1))(x, y)
    return np.sum(gx ** 2) + np.sum(gy * x)


def with_a_keyword(x, y, z):
    return np.sum(grad(scaled, wrt=(0, 2))(x, y, z, scale=1.5)[1] * x)


def spread_arguments(x, y):
    ws = (x, y)
    return np.sum(grad(f)(*ws))


@pytest.mark.parametrize("g", [norm_of_gradient, both_gradients])
@pytest.mark.parametrize("shape", [(3,), (2, 4)])
def test_grad_of_a_function_calling_grad_of_varargs(g, shape):
    rng = np.random.default_rng(len(shape))
    args = (rng.normal(size=shape), rng.normal(size=shape))
    check_grads(g, args, order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("shape", [(4,), (3, 2)])
def test_with_a_keyword_argument(shape):
    rng = np.random.default_rng(5 + len(shape))
    args = tuple(rng.normal(size=shape) for _ in range(3))
    check_grads(with_a_keyword, args, order=2, modes=("fwd", "rev"))


def test_called_with_star_args_inside_is_refused():
    x = np.ones(3)
    with pytest.raises(SGCompilerError, match=r"pass its arguments one by one"):
        grad(spread_arguments)(x, x)
