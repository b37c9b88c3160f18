"""a + b of two lists or tuples is Python's concatenation, [a] * n its repetition, not
NumPy's arithmetic (whose rules gave a wrong gradient, silently: the adjoint of
[sin(x)] + [2 x] was summed onto both lists). Reverse mode splits the adjoint of the
joined list (runtime/sequences.py), also where a list arrives as a parameter of a helper,
and forward mode joins the tangents the same way. NumPy arithmetic with a list operand
still differentiates."""
import numpy as np
import pytest

from gradcheck import assert_grad_matches, fd_hessian
from sgcompiler import check_grads, derivatives, grad, hessian, jvp
from test_forward import fd_jvp

R = np.random.default_rng(1407)


def joined_lists(x):
    a = [2 * x]
    b = [np.sin(x)] + a
    return np.sum(b[0] * b[1])


def joined_tuples(x):
    t = (x, 2 * x)
    u = (np.sin(x),) + t
    return np.sum(u[0] * u[2])


def repeated_list(x):
    a = [2 * x] * 2
    return np.sum(a[0] * a[1])


def list_plus_array(x):
    a = [1.0, 2.0, 3.0] + x          # NumPy's add: x is an array
    return np.sum(a * x)


def _joined(a, b):
    return a + b


def joined_in_a_helper(x):
    c = _joined([x, 2 * x], [np.sin(x)])
    return np.sum(c[0] * c[2] + c[1])


def _cos_first(a, x):
    return (np.cos(x),) + a


def tuple_joined_in_a_helper(x):
    u = _cos_first((x * x, 3.0 * x), x)
    return np.sum(u[0] * u[2] - u[1])


def _repeated(a, n):
    return a * n


def repeated_in_a_helper(x):
    r = _repeated([x, np.sin(x)], 3)
    return np.sum(r[0] * r[3] + r[5] * r[2])


def repeated_on_the_left(x):
    r = 2 * [x, x * x]
    return np.sum(r[0] * r[3] + r[1])


def joined_in_place(x):
    a = [x]
    a += [np.sin(x)]
    a += a                  # a + a: (was 2 * the adjoint, as NumPy's x + x)
    return np.sum(a[0] * a[1] * a[3])


def _plus(a, x):
    return a + x            # arrays here: NumPy's add


def arrays_added_in_a_helper(x):
    return np.sum(_plus(np.ones(3) * 2.0, x) * x)


def constant_tuple_joined(x):
    u = (1.0, 2.0) + (x,)
    return np.sum(u[2] * u[1])


def joined_then_sliced_and_unpacked(x):
    a = [x, 2 * x] + [x * x]
    b = a[1:]
    p, q, r = a
    return np.sum(b[0] * b[1] + p * q * r) + np.sum(np.array(a))


def _scaled(x, k):
    return np.sin(x) * k     # k: a number the caller passes as it would a tree


def _forwarding(*args, **kw):
    return _scaled(*args, **kw)


def array_times_a_forwarded_number(x):
    # (a Python number that may be a tree is not a list to repeat: NumPy's product)
    return np.sum(_forwarding(x, k=2.0) * x)


JOINS = [array_times_a_forwarded_number, joined_lists, joined_tuples, repeated_list, joined_in_a_helper,
         tuple_joined_in_a_helper, repeated_in_a_helper, repeated_on_the_left,
         joined_in_place, arrays_added_in_a_helper, constant_tuple_joined,
         joined_then_sliced_and_unpacked]


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)], ids=str)
@pytest.mark.parametrize("f", JOINS, ids=lambda f: f.__name__)
def test_joined_lists_match_finite_differences(f, shape):
    x = R.normal(size=shape) if shape else 0.7
    assert_grad_matches(f, [x])


@pytest.mark.parametrize("f", [joined_lists, joined_tuples, repeated_list])
def test_forward_mode_joins_the_tangents(f):
    x, t = R.normal(size=3), R.normal(size=3)
    np.testing.assert_allclose(jvp(f, (x,), (t,))[1], fd_jvp(f, (x,), (t,)), rtol=1e-6)


def test_numpy_arithmetic_with_a_list_still_differentiates():
    x = R.normal(size=3)
    np.testing.assert_allclose(grad(list_plus_array)(x), 2 * x + np.array([1.0, 2.0, 3.0]),
                               rtol=1e-12)


def _repeated_times(a, n, x):
    return sum(_repeated(a, n)) * np.sum(x * x)


def repeated_in_a_helper_times(x):
    # (the list's tangent and the count's 0.0 were added with `+`: a TypeError in the
    # Hessian; found by random programs, program_check --hessian seeds 1029 and 1042)
    return _repeated_times([np.sum(x[..., -1]) * -1.3, np.sum(np.sin(x))], 3, x)


@pytest.mark.parametrize("shape", [(3,), (2, 3)], ids=str)
@pytest.mark.parametrize("f", [repeated_in_a_helper, repeated_in_a_helper_times,
                               joined_in_a_helper, tuple_joined_in_a_helper],
                         ids=lambda f: f.__name__)
def test_second_order_of_lists_joined_or_repeated_in_a_helper(f, shape):
    x = R.normal(size=shape)
    check_grads(f, (x,), order=2, modes=("fwd", "rev"))
    np.testing.assert_allclose(hessian(f)(x), fd_hessian(f, x), rtol=1e-5, atol=1e-6)


def _join_one(t, u):
    return t + (u * 0.5,)


def join_own_items_active(x, y):
    b = _join_one((x * x, np.sin(x), y), y)
    return np.sum(b[0] * b[3] + b[1] * x)


def join_new_item_active(x, y):
    # (the tangent of t + (u,) with u's alone was u's tangent in t's first place: a wrong
    # jvp and Hessian; with t's alone it was broadcast to the join's shape, a ValueError,
    # or an IndexError batched; found by program_check --hessian, seed 1016)
    b = _join_one((y, y * 2.0), x * x)
    return np.sum(b[0] * b[2] + b[1] * np.sin(b[2]))


def join_lists_in_a_helper(x, y):
    c = _joined([y, x], [np.sin(y)])
    d = _joined([y], [np.cos(x), y * 2.0])
    return np.sum(c[1] * c[2] + d[1] * d[2] * x)


@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 3), (3,)), ((2, 1), (2, 4))], ids=str)
@pytest.mark.parametrize("f", [join_own_items_active, join_new_item_active,
                               join_lists_in_a_helper], ids=lambda f: f.__name__)
def test_one_side_of_a_join_in_a_helper_has_a_tangent(monkeypatch, f, shapes):
    x, y, t = R.normal(size=shapes[0]), R.normal(size=shapes[1]), R.normal(size=shapes[0])
    np.testing.assert_allclose(jvp(f, (x, y), (t, None))[1], fd_jvp(f, (x, y), (t, None)),
                               rtol=1e-6, atol=1e-8)
    check_grads(f, (x, y), order=2, modes=("fwd", "rev"))
    reference = fd_hessian(f, x, y)
    np.testing.assert_allclose(hessian(f)(x, y), reference, rtol=1e-5, atol=1e-6)
    monkeypatch.setattr(derivatives, "_batched_jacobian", lambda *a: None)
    np.testing.assert_allclose(hessian(f)(x, y), reference, rtol=1e-5, atol=1e-6)

