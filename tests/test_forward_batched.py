"""Batched tangents (forward/batch.py): jacobian(mode="fwd") and hessian run the tangent
code once, with every unit direction along a leading axis of each tangent. Checked against
finite differences, on code the batched pass handles (broadcasting between ranks, sums
along axes, every matmul case, indexing, transposes, gradient code's helpers, calls of
user functions, writes into arrays) and against one jvp per column, and on code it hands
back to one jvp per column."""
import warnings

import numpy as np
import pytest

from sgcompiler import PerColumnWarning, derivatives, grad, hessian, jacobian, stop_gradient
from sgcompiler.derivatives import _kinds, _params
from sgcompiler.forward.batch import NotBatchable
from sgcompiler.pipeline.forward_mode import compile_jvp
from test_forward import _fd_hessian, fd_jvp

R = np.random.default_rng(7)


def batched_source(f, args, position):
    """The batched tangent code of f for the unit directions of args[position], or None."""
    scalars, trees, arrays = _kinds(_params(f), args)
    try:
        return compile_jvp(f, (_params(f)[position],), scalars, trees, arrays,
                           batch=int(np.size(args[position]))).source
    except NotBatchable:
        return None


def fd_jacobian(f, args, position):
    x = args[position]
    columns = []
    for k in range(np.size(x)):
        e = np.zeros(np.size(x))
        e[k] = 1.0
        tangents = [None] * len(args)
        tangents[position] = float(e[0]) if isinstance(x, float) else e.reshape(np.shape(x))
        columns.append(np.asarray(fd_jvp(f, args, tangents)))
    out = np.shape(f(*args))
    return np.stack(columns, axis=-1).reshape(out + np.shape(x))


def ranks(x, Y):
    return np.sin(x) * Y + x - np.sum(Y * x, axis=1, keepdims=True)


def scalar_param(a, x):
    return np.exp(a * x) * a


def sums(x):
    return np.sum(x, axis=0) * np.mean(x, axis=-1, keepdims=True) + np.sum(x ** 2)


def products(x, A):
    return np.tanh(A @ x) + x @ A.T + (x @ x) * x


def matrix_products(M, v):
    return np.sum(M @ v) + v @ M @ v + np.sum(M @ M.T) + np.sum(M.T * 2.0)


def indexing(x):
    return np.concatenate([x[1:] * x[:-1], x[0] * x, x[..., -1:]])


def helper(u):
    return np.sin(u) * 2.0


def calls(x):
    return helper(x) * x


def writes(x):
    y = np.zeros(3)
    y[0] = x[0] * 2.0
    y[1:] = np.sin(x[1:])
    return y


def reshaped(x):
    return np.reshape(np.sin(x), (2, 3))


def loop_writes(x, A):
    y = np.zeros((x.shape[0], 2))
    for i in range(x.shape[0]):
        y[i] = np.tanh(A @ x * x[i])
    return y


def tuple_writes(x, M):
    y = np.zeros((3, 4))
    for i in range(3):
        y[i, 1:] = np.sin(x * M[i, 0])
        y[i, 0] = np.sum(x) * i
    return y * 2.0


def broadcast_writes(x):
    y = np.ones((2, 3, 3))
    y[1] = np.cos(x)            # (3,) into a (3, 3) slot
    y[0, :, 1] = x[0]           # a number into a column
    y[..., 2] = y[..., 0] * x   # through Ellipsis
    return np.sum(y * y, axis=0)


def masked_write(x, mask):
    y = x * 1.0
    y[mask] = np.exp(x[mask])
    return y


def layer(W, h, b):
    return np.tanh(W @ h + b)


def helper_in_loop(W, x, b):
    h = x
    for i in range(3):
        h = layer(W, h, b)
    return np.sum(h ** 2)


def pair(u, v):
    return u * v, np.sin(u)


def calls_pair(x, y):
    a, b = pair(x, y)
    c = pair(b, x)[0]
    return a + b * y + c


def scaled(u, s):
    return np.sin(u) * s


def calls_with_a_number(x):
    return scaled(x, 3.0) * x


def calls_with_a_number_that_moves(x, s):
    return scaled(x, s * 2.0) + scaled(x * s, 0.5)


# (f, arguments, position, whether the batched pass takes it)
JACOBIANS = [
    (ranks, lambda: (R.normal(size=3), R.normal(size=(4, 3))), 0, True),
    (scalar_param, lambda: (0.3, R.normal(size=4)), 0, True),
    (sums, lambda: (R.normal(size=(3, 4)),), 0, True),
    (products, lambda: (R.normal(size=3), R.normal(size=(3, 3))), 0, True),
    (products, lambda: (R.normal(size=3), R.normal(size=(3, 3))), 1, True),
    (matrix_products, lambda: (R.normal(size=(3, 3)), R.normal(size=3)), 0, True),
    (matrix_products, lambda: (R.normal(size=(3, 3)), R.normal(size=3)), 1, True),
    (indexing, lambda: (R.normal(size=4),), 0, True),
    (reshaped, lambda: (R.normal(size=6),), 0, True),
    (calls, lambda: (R.normal(size=3),), 0, True),
    (writes, lambda: (R.normal(size=3),), 0, True),
    (loop_writes, lambda: (R.normal(size=2), R.normal(size=(2, 2))), 0, True),
    (loop_writes, lambda: (R.normal(size=4), R.normal(size=(2, 4))), 1, True),
    (tuple_writes, lambda: (R.normal(size=3), R.normal(size=(3, 2))), 0, True),
    (tuple_writes, lambda: (R.normal(size=3), R.normal(size=(3, 2))), 1, True),
    (broadcast_writes, lambda: (R.normal(size=3),), 0, True),
    (helper_in_loop, lambda: (R.normal(size=(3, 3)), R.normal(size=3), R.normal(size=3)),
     0, True),
    (helper_in_loop, lambda: (R.normal(size=(2, 2)), R.normal(size=2), R.normal(size=1)),
     1, True),
    (helper_in_loop, lambda: (R.normal(size=(3, 3)), R.normal(size=3), R.normal(size=3)),
     2, True),
    (calls_pair, lambda: (R.normal(size=(2, 3)), R.normal(size=3)), 0, True),
    (calls_pair, lambda: (R.normal(size=(2, 3)), R.normal(size=3)), 1, True),
    (masked_write, lambda: (R.normal(size=4), np.array([True, False, True, True])), 0,
     True),
    (calls_with_a_number, lambda: (R.normal(size=3),), 0, True),
    (calls_with_a_number_that_moves, lambda: (R.normal(size=3), 0.7), 1, True),
    (calls_with_a_number_that_moves, lambda: (R.normal(size=3), 0.7), 0, True),
]


@pytest.mark.parametrize("f, make, position, batched", JACOBIANS,
                         ids=[f"{f.__name__}-{p}" for f, _, p, _ in JACOBIANS])
def test_forward_jacobian_matches_finite_differences(monkeypatch, f, make, position,
                                                     batched):
    args = make()
    assert (batched_source(f, args, position) is not None) == batched
    J = jacobian(f, wrt=position, mode="fwd")(*args)
    np.testing.assert_allclose(J, fd_jacobian(f, args, position), rtol=1e-5, atol=1e-7)
    monkeypatch.setattr(derivatives, "_batched_jacobian", lambda *a: None)
    per_column = jacobian(f, wrt=position, mode="fwd")(*args)
    np.testing.assert_allclose(J, per_column, rtol=1e-12, atol=1e-14)


def logistic(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.sum(y * np.log(p) + (1.0 - y) * np.log(1.0 - p)) / X.shape[0]


def two_layer(W, x, v):
    h = np.tanh(W @ x)
    return np.sum((h @ v) ** 2) + np.sum(W ** 2) * 0.1


def broadcast_loss(b, X):
    z = X * b + b
    return np.sum(np.log1p(z ** 2)) + np.sum(z, axis=0) @ b


HESSIANS = [
    (logistic, lambda: (R.normal(size=4), R.normal(size=(20, 4)),
                        (R.random(20) > 0.5).astype(float))),
    (two_layer, lambda: (R.normal(size=(3, 4)), R.normal(size=4), R.normal(size=3))),
    (broadcast_loss, lambda: (R.normal(size=3), R.normal(size=(5, 3)))),
]


@pytest.mark.parametrize("f, make", HESSIANS, ids=[f.__name__ for f, _ in HESSIANS])
def test_batched_hessian_matches_finite_differences_of_the_gradient(f, make):
    args = make()
    gradient = grad(f).as_function(*_kinds(_params(f), args)[:2])
    assert batched_source(gradient, args, 0) is not None
    np.testing.assert_allclose(hessian(f)(*args), _fd_hessian(f, args), rtol=1e-4, atol=1e-6)


def test_the_unit_directions_of_a_vector_fold_into_its_matrix_product():
    args = HESSIANS[0][1]()
    gradient = grad(logistic).as_function(*_kinds(_params(logistic), args)[:2])
    source = batched_source(gradient, args, 0)
    assert "_matmul_dot = X.T\n" in source
    assert "batch_matmul_grad_right(" in source


# --- hessians whose gradient code the compiler does not know every shape of: a loop's
# tape, writes through masks and array indexes, lists, helpers in loops (session 8). Where
# a shape or an index's kind is not known, batched code works it out at run time
# (runtime/batched.py: batch_lifted, batch_zeros, batch_last, batch_item).


def tape_loop(x, w):
    t = x
    for i in range(3):
        t = np.sin(t) * w + np.mean(t)      # w (2, 1) grows t from x's (3,) to (2, 3)
    return np.sum(t * t)


def helper_loop_loss(x, W, b):
    h = x
    for i in range(3):
        h = layer(W, h, b)
    return np.sum(h ** 2) + np.sum(h * x)


def write_then_method(x, c):
    y = np.zeros((3,) + x.shape)
    y[0] = np.sin(x) * c
    y[1] = x * x
    y[2, ...] = np.exp(x) / c
    return y.sum() + (y * y).sum() + y.mean(axis=0).ravel().dot(np.cos(x).ravel())


def masked_loss(x, mask):
    y = x * 1.0
    y[mask] = np.exp(x[mask]) * x[mask]
    return np.sum(y * y) + np.sum(x[mask] ** 3)


def appended(x, w):
    out = []
    for i in range(3):
        out.append(np.sin(x * (i + 1.0)) * w)
    total = 0.0
    for v in out:
        total = total + np.sum(v * v)
    return total + np.sum(np.stack(out) ** 3)


def stopped_in_loop(x, w):
    t = x
    for i in range(3):
        t = np.tanh(t * stop_gradient(np.cos(x * i)) * w) + stop_gradient(w) * t
    return np.sum(t ** 2)


def stopped_held(x, w, c, v):
    """stopped_in_loop with its stopped values given: c[i] = np.cos(x * i), v = w."""
    t = x
    for i in range(3):
        t = np.tanh(t * c[i] * w) + v * t
    return np.sum(t ** 2)


def held(x, w):
    return stopped_held, (x, w, np.stack([np.cos(x * i) for i in range(3)]), w)


def beside(x, idx):
    y = np.zeros_like(x)
    y[1, idx] = np.exp(x[0, idx]) * x[1, idx]        # an array index beside a number
    y[0] = x[1] ** 2
    return np.sum(y * x) + np.sum(x[:, idx][0] ** 3)


def index_in_loop(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + np.sin(x[i] * i) * x[i - 1]          # the loop index is read back too
    return np.sum(s ** 2)


def early_zero(x, y):
    # (found by random programs: where the branch taken returns what x does not reach,
    # the gradient code returns the number 0.0, and the Hessian had the shape (n,), batched,
    # or raised a ValueError, one column at a time)
    if np.sum(x) > 0.5:
        return np.sum(y)
    return np.sum(np.sin(x) * y)


_MASK = np.array([True, False, True, True, False])

# (f, arguments on two shapes, position[, a function of the arguments giving the function
# and arguments to difference: stop_gradient's values held, as the Hessian holds them])
BATCHED_NOW = [
    (tape_loop, lambda: (R.normal(size=3), R.normal(size=(2, 1))), 0),
    (tape_loop, lambda: (R.normal(size=(2, 4)), R.normal(size=4)), 0),
    (tape_loop, lambda: (R.normal(size=3), R.normal(size=(2, 1))), 1),
    (helper_loop_loss, lambda: (R.normal(size=3), R.normal(size=(3, 3)), R.normal(size=3)),
     0),
    (helper_loop_loss, lambda: (R.normal(size=2), R.normal(size=(2, 2)), R.normal(size=1)),
     1),
    (helper_loop_loss, lambda: (R.normal(size=3), R.normal(size=(3, 3)), R.normal(size=3)),
     2),
    (write_then_method, lambda: (R.normal(size=4), 1.5), 0),
    (write_then_method, lambda: (R.normal(size=(2, 3)), 0.7), 0),
    (write_then_method, lambda: (R.normal(size=(2, 3)), 0.7), 1),
    (masked_loss, lambda: (R.normal(size=5), _MASK), 0),
    (masked_loss, lambda: (R.normal(size=(2, 5)), np.stack([_MASK, ~_MASK])), 0),
    (appended, lambda: (R.normal(size=3), R.normal(size=(2, 1))), 0),
    (appended, lambda: (R.normal(size=(2, 2)), R.normal(size=2)), 1),
    (stopped_in_loop, lambda: (R.normal(size=3), R.normal(size=(2, 3))), 0, held),
    (stopped_in_loop, lambda: (R.normal(size=(2, 2)), R.normal(size=2)), 0, held),
    (beside, lambda: (R.normal(size=(2, 4)), np.array([3, 0, 3])), 0),
    (beside, lambda: (R.normal(size=(2, 3)), np.array([1])), 0),
    (index_in_loop, lambda: (R.normal(size=4),), 0),
    (index_in_loop, lambda: (R.normal(size=(3, 2)),), 0),
    (early_zero, lambda: (np.array([0.5, 0.4, 0.3]), R.normal(size=3)), 0),
    (early_zero, lambda: (np.array([[0.5, 0.4], [0.3, 0.1]]), R.normal(size=2)), 0),
    (early_zero, lambda: (np.array([-0.5, 0.4, 0.3]), R.normal(size=3)), 0),
]


def fd_hessian(f, args, position, eps=1e-5):
    """Central differences of the gradient with respect to args[position]."""
    gradient = grad(f, wrt=position)
    x = args[position]
    columns = []
    for k in range(np.size(x)):
        e = np.zeros(np.size(x))
        e[k] = eps
        step = float(e[k]) if isinstance(x, float) else e.reshape(np.shape(x))
        up, down = list(args), list(args)
        up[position], down[position] = x + step, x - step
        columns.append((gradient(*up) - gradient(*down)) / (2 * eps))
    return np.stack(columns, axis=-1).reshape(np.shape(x) + np.shape(x))


@pytest.mark.parametrize("case", BATCHED_NOW,
                         ids=[f"{c[0].__name__}-{c[2]}-{i}" for i, c in enumerate(BATCHED_NOW)])
def test_batched_hessians_of_code_with_shapes_not_known(monkeypatch, case):
    f, make, position = case[:3]
    args = make()
    reference, reference_args = case[3](*args) if len(case) > 3 else (f, args)
    params = _params(f)
    gradient = grad(f, wrt=params[position]).as_function(*_kinds(params, args)[:2])
    assert batched_source(gradient, args, position) is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerColumnWarning)
        H = hessian(f, wrt=position)(*args)
    np.testing.assert_allclose(H, fd_hessian(reference, reference_args, position), rtol=1e-5,
                               atol=1e-6)
    monkeypatch.setattr(derivatives, "_batched_jacobian", lambda *a: None)
    per_column = hessian(f, wrt=position)(*args)
    np.testing.assert_allclose(H, per_column, rtol=1e-12, atol=1e-13)


def fd_jacobian_of_gradient(f, args, position, eps=1e-5):
    """Central differences of f's gradient with respect to args[0], along args[position]."""
    gradient = grad(f, wrt=0)
    x = args[position]
    columns = []
    for k in range(np.size(x)):
        step = np.zeros(np.size(x))
        step[k] = eps
        step = step.reshape(np.shape(x))
        up, down = list(args), list(args)
        up[position], down[position] = x + step, x - step
        columns.append((gradient(*up) - gradient(*down)) / (2 * eps))
    return np.stack(columns, axis=-1).reshape(np.shape(args[0]) + np.shape(x))


@pytest.mark.parametrize("mode", ["fwd", "rev"])
@pytest.mark.parametrize("per_column", [False, True])
@pytest.mark.parametrize("case", [
    (lambda: (np.array([0.5, 0.4, 0.3]), R.normal(size=3)), 0),       # the zero branch
    (lambda: (np.array([0.5, 0.4, 0.3]), R.normal(size=3)), 1),
    (lambda: (np.array([[0.5, 0.4], [0.3, 0.1]]), R.normal(size=2)), 0),
    (lambda: (np.array([[0.5, 0.4], [0.3, 0.1]]), R.normal(size=(2, 1))), 1),   # broadcast
    (lambda: (np.array([-0.5, 0.4, 0.3]), R.normal(size=3)), 0),      # the other branch
    (lambda: (np.array([-0.5, 0.4, 0.3]), R.normal(size=3)), 1),
])
def test_the_jacobian_of_a_gradient_zero_at_compile_time_has_its_shape(monkeypatch, mode,
                                                                       per_column, case):
    # (the gradient code returns the number 0.0 on the branch taken: the Jacobian had the
    # shape of x alone, in both modes)
    make, position = case
    args = make()
    if per_column:
        monkeypatch.setattr(derivatives, "_batched_jacobian", lambda *a: None)
    J = jacobian(grad(early_zero), wrt=position, mode=mode)(*args)
    assert J.shape == np.shape(args[0]) + np.shape(args[position])
    np.testing.assert_allclose(J, fd_jacobian_of_gradient(early_zero, args, position),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_the_jacobian_of_a_gradient_of_two_arguments_is_refused_in_both_modes(mode):
    # (its tuple of results: forward mode raised a TypeError from NumPy's dtype)
    with pytest.raises(TypeError, match="got tuple; use vjp"):
        jacobian(grad(early_zero, wrt=(0, 1)), mode=mode)(np.array([0.1, 0.2]), R.normal(size=2))


def peaked(x, w):
    return np.sum(np.sort(x * x * w) ** 2 * w) + np.sum(np.sin(x) * w)


def test_the_fallback_to_one_jvp_per_column_says_why_once_and_stays_right():
    # (np.sort's explicit tangent rule is one the batched pass does not carry; np.std,
    # np.cumprod, np.linalg.pinv and then np.polyval were the example until they got
    # batched forms)
    x, w = np.array([0.3, -1.2, 0.5]), np.array([1.5, 0.5, 2.0])
    f = hessian(peaked)
    with pytest.warns(PerColumnWarning) as caught:
        H = f(x, w)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert message.startswith("the hessian of peaked runs its tangent code once per "
                              "column (3 times")
    line = peaked.__code__.co_firstlineno + 1
    assert f"test_forward_batched.py:{line}" in message and "np.sort" in message
    assert caught[0].filename == __file__           # (it points at the call)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerColumnWarning)
        again = f(x, w)         # said once
        other = hessian(peaked)(x * 2.0, w)     # the same code
    np.testing.assert_allclose(H, fd_hessian(peaked, (x, w), 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(again, H)
    np.testing.assert_allclose(other, fd_hessian(peaked, (x * 2.0, w), 0), rtol=1e-5,
                               atol=1e-6)
    with pytest.warns(PerColumnWarning, match="the jacobian of peaked runs") as caught:
        jacobian(peaked, mode="fwd")(x, w)
    assert caught[0].filename == __file__


def join(t, u):
    return t + (u * 0.5,)


def joins(x, y):
    a = np.clip(np.where(x > y, x, x[::-1]), -0.5, 0.8)
    b = sum(join((a, x, y), y))         # tuples joined by + in a helper
    return np.sum(b * b) + np.sum(np.sin(b))


def tuple_operand(x, y):
    a, b = np.sum(x * y), np.sum(np.sin(x))
    t = (a, b)
    return np.sum((y[:2] + t) ** 2) + np.sum(x[:2] * t)


@pytest.mark.parametrize("f, args", [
    (joins, (np.array([0.3, -0.2, 0.9]), np.array([0.1, 0.5, -0.4]))),
    (joins, (np.array([0.3, 0.7]), np.array([0.1, 0.5]))),
    (tuple_operand, (np.array([0.3, -0.2]), np.array([0.1, 0.5]))),
    (tuple_operand, (np.array([0.3, -0.2, 0.4]), np.array([0.1, 0.5, 0.7]))),
], ids=["joins-3", "joins-2", "tuple-2", "tuple-3"])
def test_batched_hessians_through_tuples(f, args):
    # (a tuple's batched tangent is a tuple of batched items: joined by + it stays one,
    # read as an array its items go after the batch axis; found by random programs with
    # the containers extra, seeds 1016, 1017, 1034 and 1044, which raised)
    gradient = grad(f).as_function(*_kinds(_params(f), args)[:2])
    assert batched_source(gradient, args, 0) is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerColumnWarning)
        H = hessian(f)(*args)
    np.testing.assert_allclose(H, fd_hessian(f, args, 0), rtol=1e-5, atol=1e-6)
