"""The scale-products optimization (optimize/algebraic/scalars.py): a number that scales a
matrix product's adjoint (the mean's -1/N) moves to the product's result, so it multiplies
the few numbers of the gradient rather than every row. Gradients are checked against
finite differences, on several shapes (stacks, broadcasting, vectors), at the orders and
modes the compiler supports."""
import numpy as np
import pytest

from gradcheck import assert_grad_matches
from sgcompiler import check_grads, grad


def logistic(w, X, y):
    z = X @ w
    p = 1.0 / (1.0 + np.exp(-z))
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def mean_of_product(A, B):
    return np.mean(np.tanh(A @ B)) * 3.0


def scaled_left(A, B):
    return np.sum((A @ B) * 0.5)


def halved_square(w, X):
    return np.mean((X @ w) ** 2) / 2.0


def test_the_mean_multiplies_the_gradient_not_the_rows():
    rng = np.random.default_rng(0)
    w, X, y = rng.normal(size=4), rng.normal(size=(30, 4)), (rng.random(30) < 0.5) * 1.0
    g = grad(logistic)
    got = g(w, X, y)
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    np.testing.assert_allclose(got, X.T @ (p - y) / 30, rtol=1e-12)
    # shapes known: the difference is written into p, the number scales X.T @ dz
    assert "dz = np.subtract(y, p, out=p)" in g.source, g.source
    assert "dw = -1.0 / 30 * (X.T @ dz)" in g.source, g.source


@pytest.mark.parametrize("f, shapes", [
    (logistic, [(3,), (7, 3), (7,)]),
    (logistic, [(3, 2), (5, 3), (5, 2)]),          # a matrix of weights, y broadcast
    (mean_of_product, [(4, 3), (3, 2)]),
    (mean_of_product, [(2, 4, 3), (3, 5)]),         # a stack times one matrix
    (mean_of_product, [(3,), (3, 2)]),              # a vector times a matrix
    (mean_of_product, [(3,), (3,)]),                # two vectors
    (mean_of_product, [(2, 1, 4, 3), (5, 3, 2)]),   # stacks that broadcast
    (scaled_left, [(4, 3), (3, 2)]),
    (halved_square, [(3,), (6, 3)]),
    (halved_square, [(3, 2), (6, 3)]),
])
def test_gradients_with_the_number_moved_match_finite_differences(f, shapes):
    rng = np.random.default_rng(len(shapes) + sum(map(len, shapes)))
    args = [rng.normal(size=s) for s in shapes]
    if f is logistic:
        args[2] = (rng.random(shapes[2]) < 0.5) * 1.0
        assert_grad_matches(f, args, wrt=[0])        # (y gets no gradient: the dask case)
    check_grads(f, args, order=2)
