"""scipy.sparse matrices and arrays as data (constants) with dense parameters: matrix
products (X @ w, w @ X, X.T @ r) are differentiated through, equal to the dense gradient
and to finite differences; any other use of sparse data is refused with its line."""
import numpy as np
import pytest

from gradcheck import numeric_grad
from sgcompiler import SGCompilerError, grad, stop_gradient

sp = pytest.importorskip("scipy.sparse", reason="SciPy is an optional extra")

FORMATS = ["csr_matrix", "csc_matrix", "coo_matrix", "csr_array", "csc_array", "coo_array"]


def least_squares(w, X, y):
    r = X @ w - y
    return 0.5 * np.sum(r ** 2) / X.shape[0]


def logreg(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def softmax_bias(W, X, b):
    z = X @ W + b           # b (k,) broadcast over the rows
    z = z - stop_gradient(np.max(z, axis=1, keepdims=True))
    return np.sum(np.log(np.sum(np.exp(z), axis=1))) - np.sum(z[:, 0])


def normal_equations(w, X, y):
    g = X.T @ (X @ w - y)
    for _ in range(2):
        g = X.T @ (X @ g)
    return np.sum(g ** 2)


def row_side(V, X, y):
    return np.sum(np.tanh(V @ X) ** 2) + np.sum(V * y[:, None].T)   # V (m, rows)


def case(name, rows, cols, rng):
    X = sp.random(rows, cols, density=0.3, random_state=rng, format="csr")
    if name == "softmax_bias":
        return rng.normal(size=(cols, 3)), X, rng.normal(size=3)
    if name == "row_side":
        return rng.normal(size=(2, rows)), X, rng.normal(size=rows)
    y = (rng.random(rows) < 0.5).astype(float) if name == "logreg" else rng.normal(size=rows)
    return rng.normal(size=cols), X, y


FUNCTIONS = {f.__name__: f for f in (least_squares, logreg, softmax_bias, normal_equations,
                                     row_side)}


@pytest.mark.parametrize("fmt, rows, cols", [(fmt, 12, 4) for fmt in FORMATS] +
                         [("csr_matrix", 30, 7), ("csc_array", 30, 7)])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_sparse_data_in_matrix_products(fmt, name, rows, cols):
    f = FUNCTIONS[name]
    w, X, y = case(name, rows, cols, np.random.default_rng(rows))
    X = getattr(sp, fmt)(X)
    g = grad(f)(w, X, y)
    dense = X.toarray()
    assert type(g) is np.ndarray and g.shape == w.shape
    np.testing.assert_allclose(g, grad(f)(w, dense, y), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g, numeric_grad(f, (w, dense, y), 0), rtol=1e-5, atol=1e-6)


def times(w, X, y):
    return np.sum(X * w)        # a matrix product for a sparse matrix, elementwise for an array


def summed(w, X, y):
    n = np.sum(X)
    return np.sum((X @ w - y) ** 2) / n


def gram(w, X, y):
    A = X.T @ X
    return np.sum(w * (A * w))


def helper(X, w):
    return X @ w


def through_a_call(w, X, y):
    return np.sum((helper(X, w) - y) ** 2)


@pytest.mark.parametrize("fmt", ["csr_matrix", "csr_array"])
@pytest.mark.parametrize("f, text", [(times, "np.sum(X * w)"), (summed, "n = np.sum(X)"),
                                     (gram, "A * w"), (through_a_call, "helper(X, w)")],
                         ids=["times", "summed", "gram", "call"])
def test_other_uses_of_sparse_data_are_refused_with_the_line(fmt, f, text):
    w, X, y = case("least_squares", 10, 4, np.random.default_rng(0))
    with pytest.raises(SGCompilerError, match=r"\(test_sparse_data.py:[0-9]+\): .*scipy.sparse "
                                              "data .* only in matrix products") as info:
        grad(f)(w, getattr(sp, fmt)(X), y)
    assert text in str(info.value)


def test_sparse_data_inside_a_parameter_tree_is_refused():
    def tree(w, data):
        return np.sum(data["X"] @ w)
    X = sp.random(5, 3, density=0.5, random_state=0, format="csr")
    with pytest.raises(TypeError, match="argument 'data' holds scipy.sparse data inside"):
        grad(tree)(np.ones(3), {"X": X})


def test_sparse_data_by_keyword():
    w, X, y = case("least_squares", 10, 4, np.random.default_rng(1))
    np.testing.assert_allclose(grad(least_squares)(w, X=X, y=y),
                               grad(least_squares)(w, X.toarray(), y), rtol=1e-10)
    with pytest.raises(SGCompilerError, match="only in matrix products"):
        grad(times)(w, y=y, X=X)
