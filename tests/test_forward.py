"""jvp, jacobian, hessian and hvp against finite differences: straight-line code, loops,
branches, helper calls, parameter trees, stop_gradient; the generated tangent code; errors."""
import re

import numpy as np
import pytest

import sgcompiler
from sgcompiler import SGCompilerError, grad, hessian, hvp, jacobian, jvp, stop_gradient
from sgcompiler.derivatives import jvp_source

EPS = 1e-6
R = np.random.default_rng(0)


def fd_jvp(f, primals, tangents, eps=EPS):
    """Central differences of f along the tangents (None: constant)."""
    def moved(sign):
        return [_move(p, t, sign * eps) for p, t in zip(primals, tangents)]
    plus, minus = f(*moved(1)), f(*moved(-1))
    return _tree_diff(plus, minus, 2 * eps)


def _move(p, t, step):
    if t is None:
        return p
    if isinstance(p, dict):
        return {k: _move(p[k], t[k], step) for k in p}
    if isinstance(p, (list, tuple)):
        return type(p)(_move(a, b, step) for a, b in zip(p, t))
    return p + step * t


def _tree_diff(a, b, h):
    if isinstance(a, dict):
        return {k: _tree_diff(a[k], b[k], h) for k in a}
    if isinstance(a, (list, tuple)):
        return type(a)(_tree_diff(x, y, h) for x, y in zip(a, b))
    return (np.asarray(a) - np.asarray(b)) / h


def assert_tree_close(a, b, rtol=1e-5, atol=1e-7):
    if isinstance(b, dict):
        assert isinstance(a, dict) and set(a) == set(b)
        for k in b:
            assert_tree_close(a[k], b[k], rtol, atol)
    elif isinstance(b, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_tree_close(x, y, rtol, atol)
    else:
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def check_jvp(f, primals, tangents):
    out, out_dot = jvp(f, primals, tangents)
    assert_tree_close(out, f(*primals), 1e-12, 1e-12)
    assert_tree_close(out_dot, fd_jvp(f, primals, tangents))
    return out_dot


# --- specimens ----------------------------------------------------------------------------


def straight(x, w):
    z = np.tanh(x @ w) + np.exp(-x[:, 0])
    return np.sum(z ** 2) / z.size + np.max(w)


def vector_out(x, w):
    return np.sin(x) * w - np.log1p(x ** 2)


def branches(x, w):
    if np.sum(x) > 0:
        y = x * w
    else:
        y = x / (1.0 + w ** 2)
    return np.sum(np.cos(y))


def loops(x, w):
    s = 0.0
    h = np.zeros_like(w)
    for i in range(len(x)):
        h = np.tanh(x[i] * w + h)
        s = s + np.sum(h)
    k = 0
    while k < 3:
        s = s * 0.9 + np.mean(h)
        k = k + 1
    return s


def helper(u, scale=2.0):
    return np.sin(u) * scale


def calls(x, w):
    a = helper(x)
    b = helper(w, 3.0)
    return np.sum(a) * np.sum(b)


def recursive_power(x, n):
    if n == 0:
        return np.ones_like(x)
    return x * recursive_power(x, n - 1)


def recursion(x):
    return np.sum(recursive_power(x, 3))


def tree_loss(params, x):
    h = np.tanh(x @ params["W"] + params["b"])
    return np.sum(h ** 2) + np.sum(params["extra"][0] * 2.0)


def stopped(x, w):
    z = x - stop_gradient(np.max(x))
    e = np.exp(z)
    return np.sum(e / np.sum(e) * w)


def writes(x):
    y = np.zeros(3)
    y[0] = x[0] * 2.0
    y[1:] = np.sin(x[1:])
    return y


def listing(x):
    parts = []
    for i in range(3):
        parts.append(x * i)
    return np.concatenate(parts) * 2.0


@pytest.mark.parametrize("f, make", [
    (straight, lambda: (R.normal(size=(4, 3)), R.normal(size=3))),
    (vector_out, lambda: (R.normal(size=(2, 3)), R.normal(size=3))),
    (branches, lambda: (R.normal(size=3) + 1.0, R.normal(size=3))),
    (branches, lambda: (R.normal(size=3) - 1.0, R.normal(size=3))),
    (loops, lambda: (R.normal(size=4), R.normal(size=3))),
    (calls, lambda: (R.normal(size=3), R.normal(size=2))),
    (stopped, lambda: (R.normal(size=4), R.normal(size=4))),
], ids=["straight", "vector", "if", "else", "loops", "calls", "stop_gradient"])
def test_jvp_matches_finite_differences(f, make):
    x, w = make()
    check_jvp(f, (x, w), (R.normal(size=x.shape), R.normal(size=w.shape)))
    check_jvp(f, (x, w), (R.normal(size=x.shape), None))
    check_jvp(f, (x, w), (None, R.normal(size=w.shape)))


def test_jvp_of_a_recursive_function():
    x = R.normal(size=3)
    check_jvp(recursion, (x,), (R.normal(size=3),))


def test_jvp_of_a_parameter_tree():
    params = {"W": R.normal(size=(3, 2)), "b": R.normal(size=2), "extra": [R.normal(size=2)]}
    tangents = {"W": R.normal(size=(3, 2)), "b": R.normal(size=2),
                "extra": [R.normal(size=2)]}
    check_jvp(tree_loss, (params, R.normal(size=(4, 3))), (tangents, None))


def test_jvp_of_writes_and_lists():
    x = R.normal(size=3)
    check_jvp(writes, (x,), (R.normal(size=3),))
    check_jvp(listing, (x,), (R.normal(size=3),))


def test_jvp_of_a_tuple_output():
    def pair(x):
        return np.sin(x), np.sum(x ** 2)
    x = R.normal(size=3)
    out, out_dot = check_jvp(pair, (x,), (R.normal(size=3),)), None
    assert isinstance(out, tuple) and len(out) == 2


def test_jvp_equals_grad_dot_direction():
    x, w = R.normal(size=(4, 3)), R.normal(size=3)
    v = R.normal(size=(4, 3))
    _, out_dot = jvp(straight, (x, w), (v, None))
    assert np.isclose(out_dot, np.sum(grad(straight)(x, w) * v), rtol=1e-10)


def test_stop_gradient_generates_no_tangent_code():
    text = jvp_source(stopped, (np.ones(3), np.ones(3)), (np.ones(3), None))
    assert "_max_dot" not in text and "_stop_gradient_dot" not in text
    assert "def stopped_jvp(x, w, x_dot):" in text


def test_no_zero_tangents_in_straight_line_code():
    text = jvp_source(straight, (np.ones((4, 3)), np.ones(3)), (None, np.ones(3)))
    assert "zeros" not in text and not re.search(r"\bx_dot\b", text)


def test_jacobian_forward_reverse_and_auto_agree_with_finite_differences():
    x, w = R.normal(size=(2, 3)), R.normal(size=3)
    expected = np.zeros((2, 3, 2, 3))
    for k in range(6):
        e = np.zeros(6)
        e[k] = 1.0
        expected[..., k // 3, k % 3] = fd_jvp(vector_out, (x, w), (e.reshape(2, 3), None))
    for mode in ("fwd", "rev", "auto"):
        J = jacobian(vector_out, mode=mode)(x, w)
        np.testing.assert_allclose(J, expected, rtol=1e-5, atol=1e-7, err_msg=mode)
    Jw = jacobian(vector_out, wrt="w", mode="fwd")(x, w)
    assert Jw.shape == (2, 3, 3)


def test_jacobian_of_a_scalar_function_is_the_gradient():
    x, w = R.normal(size=4), R.normal(size=4)
    np.testing.assert_allclose(jacobian(stopped, mode="fwd")(x, w), grad(stopped)(x, w),
                               rtol=1e-10)


def _fd_hessian(f, args, eps=1e-5):
    gradient = grad(f)
    x = args[0]
    cols = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = eps
        e = e.reshape(x.shape)
        cols.append((gradient(x + e, *args[1:]) - gradient(x - e, *args[1:])) / (2 * eps))
    return np.stack(cols, axis=-1).reshape(x.shape + x.shape)


@pytest.mark.parametrize("f, make", [
    (straight, lambda: (R.normal(size=(3, 2)), R.normal(size=2))),
    (loops, lambda: (R.normal(size=3), R.normal(size=2))),
    (calls, lambda: (R.normal(size=3), R.normal(size=2))),
    (branches, lambda: (R.normal(size=3) + 1.0, R.normal(size=3))),
    (stopped, lambda: (R.normal(size=4), R.normal(size=4))),
], ids=["straight", "loops", "calls", "if", "stop_gradient"])
def test_hessian_and_hvp_match_finite_differences_of_the_gradient(f, make):
    args = make()
    H = hessian(f)(*args)
    expected = _fd_hessian(f, args)
    np.testing.assert_allclose(H, expected, rtol=1e-4, atol=1e-6)
    v = R.normal(size=args[0].shape)
    Hv = hvp(f, args[0], v, *args[1:])
    np.testing.assert_allclose(Hv, np.tensordot(H, v, axes=v.ndim), rtol=1e-8, atol=1e-10)


def test_third_order_through_jvp_of_a_hessian_vector_product():
    def cubic(x):
        return np.sum(x ** 3) + np.sum(np.sin(x))
    x, v, u = R.normal(size=3), R.normal(size=3), R.normal(size=3)
    # d/du (H(x) v) = T(x)[v, u]; T = diag(6 + (-cos)) ... for this separable function
    third = (hvp(cubic, x + EPS * u, v) - hvp(cubic, x - EPS * u, v)) / (2 * EPS)
    np.testing.assert_allclose(third, (6.0 - np.cos(x)) * v * u, rtol=1e-5, atol=1e-7)


def test_logistic_regression_hessian_is_the_closed_form():
    X, y, w = R.normal(size=(20, 4)), (R.random(20) > 0.5).astype(float), R.normal(size=4)

    def loss(w, X, y):
        p = 1.0 / (1.0 + np.exp(-(X @ w)))
        return -np.sum(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    np.testing.assert_allclose(hessian(loss)(w, X, y), X.T @ ((p * (1 - p))[:, None] * X),
                               rtol=1e-10, atol=1e-12)


def products(a, b, x):
    """The NumPy functions whose tangent rules came last; multi_dot's list has a constant."""
    p = np.linalg.multi_dot([x, a, np.eye(a.shape[0]) + 0.5, b])
    q = np.linalg.matrix_power(a, 3) - np.linalg.matrix_power(a, -2)
    s = np.linalg.svd(b, compute_uv=False)
    return np.sum(p) * np.sum(s) + np.sum(np.linalg.pinv(b) @ q) + np.sum(np.linalg.svdvals(a))


@pytest.mark.parametrize("n, m", [(3, 2), (4, 5)])
def test_jvp_through_products_and_matrix_functions(n, m):
    a = R.normal(size=(n, n)) + n * np.eye(n)
    b = R.normal(size=(n, m))
    x = R.normal(size=n)
    check_jvp(products, (a, b, x), (R.normal(size=a.shape), R.normal(size=b.shape),
                                    R.normal(size=n)))
    check_jvp(lambda a, b: products(a, b, x), (a, b), (R.normal(size=a.shape),
                                                       R.normal(size=b.shape)))


def stopped_after_active(x, y):
    """A name with a tangent that stop_gradient then rebinds: its tangent becomes zero."""
    a = np.sin(x) * y
    b = np.sum(a ** 2)
    n = 0
    while n < 2:         # (a loop, so that a keeps its name and its tangent)
        n += 1
        a = a * x
    b = b + np.sum(a)
    a = stop_gradient(x * 2.0 if y[-1] > 3.0 else x)
    return b + np.sum(a * x)


def test_stop_gradient_rebinding_a_name_with_a_tangent():
    x, y, tx, ty = (R.normal(size=3) for _ in range(4))
    _, out_dot = jvp(stopped_after_active, (x, y), (tx, ty))
    c = x * 2.0 if y[-1] > 3.0 else x             # the stopped value, held constant

    def held(x, y):
        return np.sum((np.sin(x) * y) ** 2) + np.sum(np.sin(x) * y * x * x) + np.sum(c * x)
    np.testing.assert_allclose(out_dot, fd_jvp(held, (x, y), (tx, ty)), rtol=1e-6)
    gx, gy = grad(stopped_after_active, wrt=(0, 1))(x, y)
    np.testing.assert_allclose(out_dot, gx @ tx + gy @ ty, rtol=1e-12)
    source = jvp_source(stopped_after_active, (x, y), (x, y))
    assert "stop_gradient" not in source.split("\n", 2)[2], source


def adjoint_only(x):
    """A function with a user's adjoint rule and no tangent rule (every built-in has one)."""
    return x ** 3


@sgcompiler.adjoint(adjoint_only)
def adjoint_only_rule(g, ans, x):
    return 3.0 * g * x ** 2


def no_rule_user(x):
    return np.sum(adjoint_only(x))


def test_missing_tangent_rule_is_a_clear_error():
    with pytest.raises(SGCompilerError, match=r"no tangent \(forward-mode\) rule for "
                                              r".*adjoint_only.*sgcompiler.tangent"):
        jvp(no_rule_user, (np.eye(2),), (np.eye(2),))


def user_fn(x):
    return x ** 3


def uses_user_rule(x):
    return np.sum(user_fn(x))


def test_a_user_tangent_rule():
    @sgcompiler.tangent(user_fn)
    def user_fn_tangent(t, ans, x):
        return 3.0 * t * x ** 2
    x = R.normal(size=3)
    check_jvp(uses_user_rule, (x,), (R.normal(size=3),))


def test_tangent_shape_mismatch_is_a_type_error():
    with pytest.raises(TypeError, match="tangent of 'x' has shape"):
        jvp(straight, (np.ones((4, 3)), np.ones(3)), (np.ones(3), None))


def test_forward_benchmarks_run_and_check_their_results():
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benchmarks import forward
    assert forward.main(["--smoke"]) == 0


def test_a_repeated_jvp_of_a_plain_function_is_not_compiled_again(monkeypatch):
    # the second call with the same types, shapes and dtypes takes the fast path: it
    # neither compiles nor binds again (a plain function was taken for one made from a
    # bound method, so every call went the slow way)
    from sgcompiler import derivatives
    x, w = R.normal(size=(4, 3)), R.normal(size=3)
    tangents = (R.normal(size=(4, 3)), None)
    first = jvp(straight, (x, w), tangents)

    def no_compile(*args, **kwargs):
        raise AssertionError("compiled again")
    monkeypatch.setattr(derivatives, "_compiled", no_compile)
    again = jvp(straight, (x, w), tangents)
    np.testing.assert_allclose(again[1], first[1])
    np.testing.assert_allclose(again[1], fd_jvp(straight, (x, w), tangents), rtol=1e-6)


def affine_relu(W, b, X):
    h = np.maximum(0.0, X @ W + b)
    z = h - stop_gradient(np.max(h, axis=1, keepdims=True))
    return np.sum(np.exp(z) * X[:, :1])


@pytest.mark.parametrize("shapes", [((4, 8), (8,), (10, 4)), ((3, 1), (1,), (2, 3))])
def test_no_broadcast_of_a_tangent_that_has_the_results_shape(shapes):
    """`X @ W + b` with shapes known: the sum's tangent is the product's, of its shape
    already (session 11: it went through broadcast_like at run time)."""
    W, b, X = (R.normal(size=s) for s in shapes)
    W_dot, b_dot = R.normal(size=W.shape), R.normal(size=b.shape)
    text = jvp_source(affine_relu, (W, b, X), (W_dot, None, None))
    assert "broadcast_like" not in text, text
    _, out_dot = jvp(affine_relu, (W, b, X), (W_dot, None, None))
    np.testing.assert_allclose(out_dot, np.sum(grad(affine_relu)(W, b, X) * W_dot),
                               rtol=1e-9)
    # where b has a tangent too, its contribution is broadcast (b is smaller than the sum)
    _, both = jvp(affine_relu, (W, b, X), (W_dot, b_dot, None))
    np.testing.assert_allclose(both, out_dot + np.sum(grad(affine_relu, wrt=1)(W, b, X) *
                                                      b_dot), rtol=1e-9)
