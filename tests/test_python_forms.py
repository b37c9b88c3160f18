"""Lambdas, nested functions, functions passed as arguments, methods, callable objects and
partials are differentiated like defs (issue 15), checked against finite differences."""
import functools

import numpy as np
import pytest

from sgcompiler import SGCompilerError, grad
from gradcheck import assert_grad_matches, numeric_grad
import specimens_forms as S

X = np.array([0.1, -0.4, 0.7])
W = np.array([0.5, -1.2, 2.0])


@pytest.mark.parametrize("f", [S.square_sum, S.PAIR[0], S.PAIR[1], S.cube, S.TABLE["exp"],
                               S.TABLE["tanh"], S.NESTED, S.calls_module_lambda,
                               S.module_lambda_in_loop],
                         ids=["assigned", "list_first", "list_second", "same_line_third",
                              "dict_exp", "dict_tanh", "lambda_in_lambda", "module_lambda",
                              "module_lambda_in_loop"])
def test_lambdas(f):
    assert_grad_matches(f, [X])


def test_lambda_given_to_grad():
    g = grad(lambda x: np.sum(np.cos(x) * x))
    np.testing.assert_allclose(g(X), -np.sin(X) * X + np.cos(X))


def test_lambda_on_a_line_of_several_is_told_apart():
    # the three lambdas of one line: each by its code object, not by the line
    np.testing.assert_allclose(grad(S.PAIR[0])(X), np.cos(X))
    np.testing.assert_allclose(grad(S.PAIR[1])(X), 3 * X ** 2)
    np.testing.assert_allclose(grad(S.cube)(X), 3 * X ** 2)
    g = grad(S.PAIR[1])
    g(X)
    line = S.cube.__code__.co_firstlineno
    assert f"def lambda_{line}_2_grad(x):" in g.source
    assert f"def cube_lambda_{line}_grad(y):" in grad(S.cube).source


def test_lambda_piece_named_after_where_it_was_defined():
    g = grad(S.calls_module_lambda)
    g(X)
    line = S.triple.__code__.co_firstlineno
    assert f"triple_lambda_{line}_" in g.source and "_forward(t)" in g.source
    assert f"# line {line}: triple = lambda t: t * 3.0" in g.source


@pytest.mark.parametrize("f", [S.local_lambda, S.local_def, S.nested_calls_nested,
                               S.local_in_loop, S.lambda_to_helper, S.def_to_helper_in_loop],
                         ids=lambda f: f.__name__)
def test_nested_and_passed_functions(f):
    assert_grad_matches(f, [X, W])


@pytest.mark.parametrize("f, reference", [
    (S.local_with_stop, S.local_with_stop_reference),
    (S.helper_with_stop, S.helper_with_stop_reference)], ids=["local", "helper"])
def test_stop_gradient_in_lambdas(f, reference):
    stopped = X if f is S.local_with_stop else np.cos(X)
    np.testing.assert_allclose(grad(f)(X), numeric_grad(reference, [X, stopped], 0),
                               rtol=1e-6, atol=1e-8)


def _check_callable(f, x):
    np.testing.assert_allclose(grad(f)(x), numeric_grad(f, [x], 0), rtol=1e-5, atol=1e-7)


def test_bound_method_reads_self():
    _check_callable(S.MODEL.loss, W)
    other = S.Model(np.ones((2, 3)), 0.5)      # another instance: code of its own
    _check_callable(other.loss, W)
    g = grad(S.MODEL.loss)
    g(W)
    assert "def Model_loss_grad(w):" in g.source and "self.scale" in g.source
    assert "# gradient of Model.loss with self bound" in g.source
    model = S.Model(np.ones((2, 3)), 2.0)
    g = grad(model.loss)
    before = g(W)
    model.scale = 5.0               # read when the gradient runs, not compiled in
    np.testing.assert_allclose(g(W), before * 2.5)


def test_callable_object_and_partials():
    _check_callable(S.Quadratic(np.array([1.0, 2.0, 3.0])), X)
    _check_callable(functools.partial(S.scaled, np.array([1.0, 2.0, 3.0]), k=2.0), X)
    # two partials of one function with different bound values: different gradients
    a = grad(functools.partial(S.scaled, 1.0))(X)
    b = grad(functools.partial(S.scaled, 3.0))(X)
    np.testing.assert_allclose(b, 3 * a)


def test_methods_and_partials_called_inside():
    assert_grad_matches(S.calls_method, [W])
    assert_grad_matches(S.calls_partial, [X])


def test_refusals_name_file_and_line(tmp_path):
    f = eval("lambda x: x * 2.0")  # noqa: S307
    with pytest.raises(SGCompilerError, match=r"lambda \(<string>:1\): its source code is "
                                              "not available"):
        grad(f)(1.0)


def test_default_callables():
    assert_grad_matches(S.default_callable, [X])
    assert_grad_matches(S.calls_default_callable, [X, W])
    with pytest.raises(TypeError):      # another function: refused, not a wrong gradient
        grad(S.default_callable)(X, np.sin)


def test_closures_over_functions_are_keyed_by_what_they_capture():
    tanh_loss, sin_loss = S.make_loss(np.tanh, 2.0), S.make_loss(np.sin, 3.0)
    for loss in (tanh_loss, sin_loss, tanh_loss):
        assert_grad_matches(loss, [X, W])
    np.testing.assert_allclose(grad(sin_loss)(X, W), 3.0 * np.cos(X * W) * W)


def test_dict_displays():
    assert_grad_matches(S.dict_display, [X])
    g = grad(S.dict_display)
    g(X)
    assert "tree_item" not in g.source and "zeros_tree" not in g.source
    got = grad(S.dict_from_helper)(X)
    expected = numeric_grad(S.dict_from_helper_reference, [X, np.tanh(X)], 0)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)


def test_dict_display_forward_mode():
    from sgcompiler import jvp
    v = np.array([1.0, -2.0, 0.5])
    _, tangent = jvp(S.dict_display, (X,), (v,))
    np.testing.assert_allclose(tangent, np.sum(numeric_grad(S.dict_display, [X], 0) * v))


def test_errstate_assert_and_print(capsys):
    x = np.array([0.5, 1.5, 2.0])
    assert_grad_matches(S.statements, [x])
    assert "y sums to" in capsys.readouterr().out     # print runs in the primal sweep
    with pytest.raises(AssertionError, match="a vector"):
        grad(S.statements)(np.ones((2, 2)))


def test_callable_object_called_inside():
    assert_grad_matches(S.calls_object, [X])


@pytest.mark.parametrize("f", [S.local_def, S.lambda_to_helper, S.def_to_helper_in_loop],
                         ids=lambda f: f.__name__)
def test_forward_mode(f):
    # the lifted and specialised functions are bound in forward mode too (a NameError before)
    from sgcompiler import jvp
    v = np.array([1.0, -2.0, 0.5])
    _, tangent = jvp(f, (X, W), (v, None))
    np.testing.assert_allclose(tangent, np.sum(grad(f)(X, W) * v), rtol=1e-10)


def test_defaults_survive_binding_and_specialising():
    assert_grad_matches(S.helper_with_defaults, [X, W])
    model = S.WithDefaults(np.array([1.0, 2.0, 3.0]))
    _check_callable(model.loss, np.abs(X) + 0.5)
    np.testing.assert_allclose(grad(model.loss)(np.abs(X) + 0.5),
                               6.0 * model.a * (np.abs(X) + 0.5) ** 2)
    # a partial of a closure whose default reads its cell: the very default object
    loss = S.make_with_default(4.0)
    np.testing.assert_allclose(grad(functools.partial(loss))(X), 4.0 * np.cos(X))
    _check_callable(functools.partial(S.helper_with_defaults, w=W), X)


class _Held:
    def __init__(self, a):
        self.a = a

    def loss(self, w):
        return np.sum(np.sin(w * self.a))


def _scaled_loss(a, w):
    return np.sum(np.sin(w * a))


def test_gradients_of_bound_methods_and_partials_do_not_keep_their_objects_alive():
    # the functions made for them held their instance (and a partial's values) until
    # 4096 had been made
    import gc
    import weakref
    for make in (lambda a: _Held(a).loss, lambda a: functools.partial(_scaled_loss, a)):
        a = np.array([1.0, 2.0, 3.0])
        g = grad(make(a))
        np.testing.assert_allclose(g(W), np.cos(W * a) * a)
        held = weakref.ref(g.primal)
        del g
        gc.collect()
        assert held() is None
    model = _Held(np.ones(3))
    alive = weakref.ref(model)
    grad(model.loss)(W)
    del model
    gc.collect()
    assert alive() is None


class _Chained:
    """A method that calls other methods of `self` (each gets a piece bound to it)."""

    def __init__(self, a):
        self.a = a

    def inner(self, w):
        return np.sin(w * self.a)

    def scaled(self, w):
        return self.inner(w) * self.a

    def loss(self, w):
        return np.sum(self.scaled(w) + self.inner(w))


class _Scaled:
    def __init__(self, a):
        self.a = a

    def loss(self, w):
        return np.sum(np.sin(w * self.a) * self.a)


def _loss_of(model):
    def loss(w):
        return model.loss(w) * 2.0
    return loss


def test_methods_calling_methods_of_self_do_not_keep_their_instance_alive():
    # the compiled-gradient cache held the pieces of self.inner, bound to self, and an
    # entry of the piece cache referred back to its own key (the function)
    import gc
    import weakref
    uses = (lambda m: grad(m.loss), lambda m: grad(_loss_of(m)))
    for use, factor in zip(uses, (1.0, 2.0)):
        for w in (W, np.linspace(-1.0, 1.0, 6).reshape(2, 3)):
            a = np.array([1.0, 2.0, 0.5])
            model = _Chained(a)
            want = numeric_grad(lambda v: factor * model.loss(v), [w], 0)
            np.testing.assert_allclose(use(model)(w), want, rtol=1e-6, atol=1e-8)
            alive = weakref.ref(model)
            del model
            gc.collect()
            assert alive() is None


def test_forward_mode_and_hessian_of_a_method_calling_methods_of_self():
    # jvp refused a bound method and hessian raised IndexError (it counted self)
    import gc
    import weakref
    from sgcompiler import hessian, jvp
    for w in (W, np.linspace(-1.0, 1.0, 6).reshape(2, 3)):
        model = _Chained(np.array([1.0, 2.0, 0.5]))
        v = np.cos(w * 3.0)
        value, tangent = jvp(model.loss, (w,), (v,))
        assert np.isclose(value, model.loss(w))
        np.testing.assert_allclose(tangent, np.sum(grad(model.loss)(w) * v), rtol=1e-10)
        alive = weakref.ref(model)
        del model
        gc.collect()
        assert alive() is None
    model = _Chained(np.array([1.0, 2.0, 0.5]))
    h = hessian(model.loss)(W)
    want = np.stack([numeric_grad(lambda u: grad(model.loss)(u)[i], [W], 0)
                     for i in range(3)])
    np.testing.assert_allclose(h, want, rtol=1e-5, atol=1e-7)


def test_jvp_of_a_bound_method_reuses_its_code_and_not_its_instance(monkeypatch):
    # jvp bound the method again on every call (its source read, parsed and compiled),
    # and a method calling other methods of self had its tangent code compiled again:
    # the method's tree is read once, the code of the function made from it made once,
    # and a bound method that is kept finds its tangent code in the fast cache, whose
    # entry goes with the method object (which is what holds the instance)
    import gc
    import weakref
    from sgcompiler import jvp
    from sgcompiler.frontend import lifted
    from sgcompiler.frontend.forms import objects
    from sgcompiler.pipeline import forward_mode
    counts = {"parse": 0, "code": 0, "compile": 0}

    def counting(module, name, key):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, **k: counts.__setitem__(
            key, counts[key] + 1) or real(*a, **k))
    counting(objects, "parse_function", "parse")
    counting(lifted, "_made_code", "code")
    counting(forward_mode, "_compile_jvp", "compile")
    for w in (W, np.linspace(-1.0, 1.0, 6).reshape(2, 3)):
        model = _Chained(np.array([1.0, 2.0, 0.5]))
        simple = _Scaled(np.array([0.5, 1.5, -2.0]))
        v = np.cos(w * 3.0)
        loss = model.loss
        jvp(loss, (w,), (v,))
        jvp(simple.loss, (w,), (v,))
        before = dict(counts)
        for _ in range(3):
            value, tangent = jvp(loss, (w,), (v,))
            # a method that calls no other: a new bound method each time, the code reused
            _, simple_tangent = jvp(simple.loss, (w,), (v,))
        assert counts == before
        np.testing.assert_allclose(tangent, np.sum(grad(model.loss)(w) * v), rtol=1e-10)
        np.testing.assert_allclose(simple_tangent, np.sum(grad(simple.loss)(w) * v),
                                   rtol=1e-10)
        other = _Chained(np.array([0.5, -1.0, 3.0]))     # another instance: its own values
        _, other_tangent = jvp(other.loss, (w,), (v,))
        np.testing.assert_allclose(other_tangent, np.sum(grad(other.loss)(w) * v),
                                   rtol=1e-10)
        alive = [weakref.ref(model), weakref.ref(other), weakref.ref(simple)]
        del model, other, simple, loss
        gc.collect()
        assert all(a() is None for a in alive)


def test_a_compiled_gradient_is_reused_while_what_it_read_lives(monkeypatch):
    # held weakly, the cache must still serve a new gradient of a live instance
    from sgcompiler import pipeline
    calls = []
    compile_ = pipeline._compile
    monkeypatch.setattr(pipeline, "_compile", lambda *a, **k: calls.append(1) or
                        compile_(*a, **k))
    model = _Chained(np.array([1.0, 2.0, 0.5]))
    first = grad(model.loss)
    first(W)
    grad(model.loss)(W)
    grad(_loss_of(model))(W)
    grad(_loss_of(model))(W)
    assert len(calls) == 2


def test_nested_functions_with_defaults():
    from sgcompiler import jvp
    for x, w in ((X, W), (np.abs(X).reshape(3, 1) + 0.1, W)):
        for i in (0, 1):
            np.testing.assert_allclose(
                grad(S.nested_defaults, wrt=i)(x, w),
                numeric_grad(S.nested_defaults_reference, [x, w, 2.0 * w], i),
                rtol=1e-5, atol=1e-7)
    v = np.array([1.0, -2.0, 0.5])
    _, tangent = jvp(S.nested_defaults, (X, W), (v, None))
    np.testing.assert_allclose(tangent, np.sum(grad(S.nested_defaults)(X, W) * v))
    # passed to a helper (refused until the third session): the helper's calls fill them
    assert_grad_matches(S.passes_local_with_defaults, [X, W], wrt=[0])


def test_partials_of_numpy_functions():
    from sgcompiler import jvp
    x2 = np.array([[0.1, 0.4, 0.3], [0.2, -0.5, 0.9]])
    for x, w in ((x2, W), (x2, 1.5), (X, W)):
        for i in (0, 1):
            if isinstance(w, float) and i == 1:
                continue
            np.testing.assert_allclose(
                grad(S.numpy_partials, wrt=i)(x, w),
                numeric_grad(S.numpy_partials_reference, [x, w, S._A * x], i),
                rtol=1e-5, atol=1e-7)
        assert_grad_matches(S.local_partials, [x, w], wrt=[0] if isinstance(w, float)
                            else None)
        v = np.ones_like(x)
        _, tangent = jvp(S.local_partials, (x, w), (v, None))
        np.testing.assert_allclose(tangent, np.sum(grad(S.local_partials)(x, w) * v))
    # a partial given to grad: its parameters are NumPy's (np.dot(a, b): b)
    np.testing.assert_allclose(grad(functools.partial(np.dot, W))(X), W)
    g = grad(S.numpy_partials)
    g(X, W)
    assert "sum_partial" in g.source and "<sgcompiler partial sum>" in g.source


def test_closures_made_by_factories_and_called_inside():
    from sgcompiler import jvp
    for x, w in ((X, W), (X.reshape(3, 1), W)):
        for i in (0, 1):
            np.testing.assert_allclose(
                grad(S.closures_made_inside, wrt=i)(x, w),
                numeric_grad(S.closures_made_inside_reference, [x, w, w], i),
                rtol=1e-5, atol=1e-7)
    v = np.array([1.0, -2.0, 0.5])
    _, tangent = jvp(S.closures_made_inside, (X, W), (v, None))
    np.testing.assert_allclose(tangent, np.sum(grad(S.closures_made_inside)(X, W) * v))
    # a module-level factory whose closure reads a global the caller shadows: not read
    # as the caller's code (refused, not the caller's OFFSET)
    with pytest.raises(SGCompilerError, match=r"specimens_forms.py:\d+\): 'f' is a local "
                                              "variable"):
        grad(S.factory_reading_a_shadowed_global)(X)
