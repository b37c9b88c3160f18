"""Grad of grad, grad inside a differentiated function, vjp, has_aux, jacobian and
check_grads, against finite differences (check_grads itself, and gradcheck.numeric_grad).
"""
import gc
import re

import numpy as np
import pytest

import sgcompiler
from gradcheck import numeric_grad
from sgcompiler import (SGCompilerError, check_grads, grad, jacobian, stop_gradient,
                        value_and_grad, vjp)
from sgcompiler.backend.loader import function_from_text


# --- specimens ----------------------------------------------------------------------------


def cubic_sin(x):
    return np.sin(x) * x ** 3


def two_args(x, w):
    z = x * w - x * 2.0
    return np.exp(z) / (1.0 + z * z)


def looped(x):
    t = 0.0
    for i in range(3):
        t = t + np.sin(x * i) * t + x
    return t


def branched(x):
    if x > 0.5:
        y = x ** 2
    else:
        y = np.cos(x)
    return y * x


def helper(u, v):
    return np.tanh(u * v) + u ** 2


def calls_helper(x):
    return helper(x, 2.0) * helper(x * x, x)


SCALAR_CASES = [(cubic_sin, (0.7,)), (two_args, (0.7, 1.3)), (looped, (0.7,)),
                (branched, (0.7,)), (branched, (0.3,)), (calls_helper, (0.4,))]


def mlp(params, x):
    h = np.tanh(params["W1"] @ x + params["b1"])
    return np.sum((params["W2"] @ h) ** 2)


def array_loop(x, w):
    t = x
    for i in range(3):
        t = np.sin(t) * w + np.mean(t)
    return t


def array_branch(x):
    if np.sum(x) > 0:
        y = x ** 3
    else:
        y = np.exp(x)
    return np.sum(y * x)


def softmax_loss(x, w):
    z = x - stop_gradient(np.max(x))
    e = np.exp(z)
    return np.sum(e / np.sum(e) * w)


def fancy_index(y):
    return np.sum(np.sin(y)[[2, 0, 1]] * y)


def reductions(x):
    return np.max(x) * np.sum(x ** 3) + np.mean(x) ** 2 + np.sum(np.cumsum(x) * x)


def matrices(a, b):
    return np.sum(np.tanh(a @ b) * (a @ b.T @ a))


def tuple_out(x, w):
    return np.sin(x) * w, (np.sum(x ** 2), x * 3.0)


def dict_out(x, w):
    return {"a": x * w, "b": (2.0, np.sin(x))}


_R = np.random.default_rng(0)
_P = {"W1": _R.normal(size=(4, 3)), "b1": _R.normal(size=4), "W2": _R.normal(size=(2, 4))}
_X, _W = np.array([0.4, -0.2, 0.5]), np.array([1.5, -2.0, 0.7])
ARRAY_CASES = [(mlp, (_P, _X)), (array_loop, (_X, _W)), (array_branch, (_X,)),
               (array_branch, (-_X - 1.0,)), (softmax_loss, (_X, _W)), (fancy_index, (_W,)),
               (reductions, (_X,)), (matrices, (_R.normal(size=(3, 3)), _R.normal(size=(3, 3)))),
               (tuple_out, (_X, _W)), (dict_out, (_X, _W))]


# --- grad of grad ---------------------------------------------------------------------------


@pytest.mark.parametrize("f, args", SCALAR_CASES, ids=[f"{f.__name__}-{a[0]}"
                                                       for f, a in SCALAR_CASES])
def test_grad_of_grad_matches_finite_differences_of_grad(f, args):
    second = grad(grad(f))(*args)
    assert isinstance(second, float)
    assert np.isclose(second, numeric_grad(grad(f), args, 0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f, args", SCALAR_CASES[:4], ids=[f.__name__ for f, _ in
                                                           SCALAR_CASES[:4]])
def test_third_order(f, args):
    third = grad(grad(grad(f)))(*args)
    assert np.isclose(third, numeric_grad(grad(grad(f)), args, 0), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("f, args", ARRAY_CASES, ids=[f.__name__ for f, _ in ARRAY_CASES])
def test_check_grads_second_order(f, args):
    check_grads(f, args, order=2)


@pytest.mark.parametrize("f, args", [(array_loop, (_X, _W)), (array_branch, (_X,)),
                                     (mlp, (_P, _X))], ids=["loop", "branch", "tree"])
def test_check_grads_third_order(f, args):
    check_grads(f, args, order=3)


def sin_cubed_stopped(x):
    return np.sum(x ** 3 * stop_gradient(np.sin(x)))


def test_stop_gradient_is_a_constant_at_second_order():
    v = np.array([0.3, -1.2, 0.5])
    first = grad(sin_cubed_stopped)
    s = function_from_text("def s(x):\n    return np.sum(_g(x) * _v)\n", "s",
                           {"np": np, "_g": first, "_v": v}, "test")
    # d/dx <3 x^2 c, v> with c = sin(x) held constant
    expected = 6 * _X * np.sin(_X) * v
    assert np.allclose(grad(s)(_X), expected)
    text = sgcompiler.pipeline.compile_gradient(sin_cubed_stopped, ("x",), value=False,
                                                rereadable=True).source
    assert "stop_gradient(" in text           # kept where the compiler reads it again


def test_code_for_rereading_stays_in_the_front_ends_language():
    text = sgcompiler.pipeline.compile_gradient(array_loop, ("x", "w"), value=False,
                                                rereadable=True).source
    assert "del " not in text and "out=" not in text and ".pop()" not in text
    assert not re.search(r"\w\[[^\]]*\] \+=", text)


# --- a gradient inside a differentiated function ------------------------------------------


def network(x, W):
    return np.sum(np.tanh(W @ x) ** 2)


def physics_loss(x, W):
    du = grad(network)(x, W)                  # the network's derivative in its input
    return np.sum(du ** 2) + network(x, W)


def with_value_inside(x, W):
    value, dW = value_and_grad(network, wrt=1)(x, W)
    return value * np.sum(dW * W)


def inner_loss(w, x):
    return np.sum((np.tanh(x * w) - 0.5) ** 2)


def maml(w, x):
    adapted = w - 0.1 * grad(inner_loss)(w, x)
    return inner_loss(adapted, x * 2.0)


_GRAD_NETWORK = grad(network)


def calls_a_gradient_object(x, W):
    return np.sum(_GRAD_NETWORK(x, W) * x)


@pytest.mark.parametrize("f", [physics_loss, with_value_inside, maml,
                               calls_a_gradient_object])
def test_gradient_inside_the_function(f):
    W = np.arange(9.0).reshape(3, 3) / 10 - 0.3
    args = (_X, W) if f is not maml else (_X, _W)
    check_grads(f, args, order=1)
    for i in range(2):
        assert np.allclose(grad(f, wrt=i)(*args), numeric_grad(f, args, i), atol=1e-7)


def test_maml_second_order():
    check_grads(maml, (_X, _W), order=2)


def not_constant_wrt(x, k):
    return grad(network, wrt=k)(x, x)


def test_grad_inside_needs_arguments_known_when_compiling():
    with pytest.raises(SGCompilerError, match=r"test_higher_order.py:\d+.*'k' is not known"):
        grad(not_constant_wrt)(_X, 0)


# --- vjp, has_aux, jacobian -------------------------------------------------------------


def test_vjp_of_a_tuple_output():
    out, f_vjp = vjp(tuple_out, _X, _W)
    assert np.allclose(out[0], np.sin(_X) * _W) and np.isclose(out[1][0], np.sum(_X ** 2))
    dx, dw = f_vjp((np.ones(3), (2.0, np.ones(3))))
    assert np.allclose(dx, np.cos(_X) * _W + 4 * _X + 3.0)
    assert np.allclose(dw, np.sin(_X))
    assert "def tuple_out_" in f_vjp.source and "_backward(" in f_vjp.source


def test_vjp_of_a_dict_output_and_a_tree_primal():
    out, f_vjp = vjp(dict_out, _X, _W)
    dx, dw = f_vjp({"a": _W, "b": (1.0, np.ones(3))})
    assert np.allclose(dx, _W * _W + np.cos(_X)) and np.allclose(dw, _X * _W)
    out, f_vjp = vjp(mlp, _P, _X)
    dparams, dx = f_vjp(1.0)
    assert set(dparams) == {"W1", "b1", "W2"}
    assert np.allclose(dparams["b1"], grad(mlp)(_P, _X)["b1"])


def test_vjp_refuses_a_cotangent_of_another_structure():
    _, f_vjp = vjp(tuple_out, _X, _W)
    with pytest.raises(TypeError, match="structure"):
        f_vjp(np.ones(3))


def test_vjp_of_a_gradient_is_a_hessian_vector_product():
    v = np.array([1.0, -2.0, 0.5])
    _, f_vjp = vjp(grad(reductions), _X)
    hv, = f_vjp(v)
    H = np.array([numeric_grad(lambda x: grad(reductions)(x)[k], [_X], 0) for k in range(3)])
    assert np.allclose(hv, H @ v, atol=1e-6)


def loss_with_aux(x, w):
    y = np.tanh(x * w)
    return np.sum(y ** 2), (y, 3)


def test_has_aux():
    g, (y, n) = grad(loss_with_aux, has_aux=True)(_X, _W)
    assert np.allclose(g, numeric_grad(lambda x, w: loss_with_aux(x, w)[0], (_X, _W), 0))
    assert np.allclose(y, np.tanh(_X * _W)) and n == 3
    (loss, aux), (gx, gw) = value_and_grad(loss_with_aux, wrt=(0, 1), has_aux=True)(_X, _W)
    assert np.isclose(loss, loss_with_aux(_X, _W)[0]) and np.allclose(gx, g)
    with pytest.raises(TypeError, match=r"\(loss, aux\)"):
        grad(network, has_aux=True)(_X, np.eye(3))


def fifty_outputs(x):
    return np.concatenate([np.sin(x), x ** 2]) * np.arange(1.0, 51.0)


@pytest.mark.parametrize("mode", ["rev", "fwd", "auto"])
def test_jacobian(mode):
    x = np.linspace(-1, 1, 25)
    J = jacobian(fifty_outputs, mode=mode)(x)
    assert J.shape == (50, 25)
    expected = np.array([numeric_grad(lambda x: fifty_outputs(x)[k], [x], 0)
                         for k in range(50)])
    assert np.allclose(J, expected, atol=1e-6)


def test_jacobian_of_a_gradient_is_the_hessian_and_tuple_wrt():
    H = jacobian(grad(reductions))(_X)
    expected = np.array([numeric_grad(lambda x: grad(reductions)(x)[k], [_X], 0)
                         for k in range(3)])
    assert np.allclose(H, expected, atol=1e-6) and np.allclose(H, H.T, atol=1e-6)
    Jx, Jw = jacobian(two_args, wrt=(0, 1))(0.7, 1.3)
    assert np.isclose(Jx, numeric_grad(two_args, (0.7, 1.3), 0))
    with pytest.raises(ValueError, match="mode"):
        jacobian(two_args, mode="sideways")


# --- custom rules at second order, check_grads' failures ---------------------------------


def softplus(x):
    return np.log1p(np.exp(x))


@sgcompiler.adjoint(softplus)
def _softplus_rule(g, ans, x):
    return g / (1.0 + np.exp(-x))


def uses_softplus(x):
    return np.sum(softplus(x * 2.0) * x)


def test_grad_of_grad_through_a_custom_rule():
    check_grads(uses_softplus, (_X,), order=2)


def wrongly_squared(x):
    return x ** 2


@sgcompiler.adjoint(wrongly_squared)
def _wrong_rule(g, ans, x):
    return g * 3.0 * x            # deliberately wrong: 2 x is right


def uses_wrong_rule(w, x):
    return np.sum(wrongly_squared(x) * w)


def test_check_grads_names_argument_order_mode_and_error():
    with pytest.raises(AssertionError) as info:
        check_grads(uses_wrong_rule, (_W, _X), order=2)
    message = str(info.value)
    assert "order-1" in message and "rev mode" in message and "argument 1 ('x')" in message
    assert "largest error" in message


# --- regressions found on the way -----------------------------------------------------------


def constant_first(x):
    return (1.0, x * 2.0)


def unpacks_constant_first(x):
    a, b = constant_first(x)
    return np.sum(b * b) + a


def test_tuple_with_a_constant_element_sends_the_right_adjoint():
    # the adjoint of (1.0, x * 2.0) read element 0 for x * 2.0: the gradient was 2, not 8
    assert np.allclose(grad(unpacks_constant_first)(np.ones(2)), 8.0)


def nested_pair(x):
    return (x * 2.0, (2.0, np.sin(x)))


def uses_part_of_nested(x):
    t = nested_pair(x)
    return np.sum(t[0])


def test_caller_using_part_of_a_nested_tuple():
    # nested_pair's backward indexed the plain 0.0 adjoint of the inner tuple
    assert np.allclose(grad(uses_part_of_nested)(np.ones(2)), 2.0)


def pops(x):
    values = [x, x * 2.0]
    values.pop()
    return np.sum(values[-1] * 3.0)


def test_a_method_called_for_its_effect_on_a_varied_value_is_refused():
    with pytest.raises(SGCompilerError, match=r"pops \(test_higher_order.py:\d+\): the method \.pop\(\)"):
        grad(pops)(np.ones(2))


def loop_without_adjoint(x):
    b = np.zeros_like(x)
    for i in range(3):
        if i > 0:
            break
        c = np.sin(x)
    return np.sum(b)


def calls_loop_without_adjoint(x):
    return loop_without_adjoint(x) * 2.0 + np.sum(x)


def test_backward_of_a_loop_with_no_adjoint_code_has_its_trip_count():
    # the callee's backward replayed the loop with a trip count its forward did not save
    assert np.allclose(grad(calls_loop_without_adjoint)(np.ones(2)), 1.0)


def test_same_text_in_another_namespace_is_compiled_for_it():
    text = "def s(x):\n    return _f(x) * 1.0\n"
    for k in range(20):       # dicts' ids are reused once the old ones are freed
        scale = float(k + 1)
        f = function_from_text(f"def f(x):\n    return x * {scale}\n", "f", {}, "test")
        s = function_from_text(text, "s", {"_f": f}, "test")
        assert grad(s)(1.0) == scale
        del f, s
        gc.collect()


def test_cli_order_2_prints_grad_of_grad(capsys):
    from sgcompiler import cli
    target = f"{__file__}:cubic_sin"
    assert cli.main([target, "--order", "2", "--shapes", "x=float"]) == 0
    out = capsys.readouterr().out
    assert "def cubic_sin_grad_sum_grad(x):" in out and "def cubic_sin_grad_forward" in out
    assert cli.main([target, "--order", "0"]) == 1


def lists_in_a_loop(x, y):
    a = 0.0
    for v in y:
        items = [y for j in range(3)]
        a = np.dot(x, sum(items) * 0.5) * v + a
    return a


def test_second_order_of_a_list_remade_on_every_trip():
    # the list restored from the tape for an earlier trip kept the later list's count:
    # an IndexError in the code read again
    check_grads(lists_in_a_loop, (_X, _W), order=2)


def written_into_in_a_loop(x):
    t = 0.0
    for k in range(2):
        buf = x.copy()
        for j in range(len(x)):
            buf[1:] = (buf * 0.5)[:2]
            t = t + buf[j] * buf[j]
    return t


def test_second_order_of_an_array_written_into_in_a_loop():
    # the first-order code saves a reference to buf where it is rebound before any write;
    # read again, that was refused ("buf is written in place, and this keeps a reference")
    check_grads(written_into_in_a_loop, (_X,), order=2)


def first_component_of_a_gradient(x):
    return grad(reductions)(x)[0] * 2.0


def uses_a_gradient_with_aux(x, w):
    g, aux = grad(loss_with_aux, has_aux=True)(x, w)
    return np.sum(g)


def test_grad_of_an_element_of_a_gradient_and_has_aux_inside_refused():
    expected = numeric_grad(first_component_of_a_gradient, (_X,), 0)
    assert np.allclose(grad(first_component_of_a_gradient)(_X), expected, atol=1e-7)
    with pytest.raises(SGCompilerError, match="has_aux=True"):
        grad(uses_a_gradient_with_aux)(_X, _W)
