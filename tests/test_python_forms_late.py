"""The forms of issue 15 its second session left refused (dict comprehensions over a dict
argument, `grad` of a function taking *args/**kwargs, local functions with defaults passed
to a helper, lambdas given to np.apply_along_axis and np.vectorize): each against finite
differences on shapes that broadcast, in loops and with stop_gradient, and forward mode
against reverse mode."""
import functools

import numpy as np
import pytest

from sgcompiler import SGCompilerError, grad, hessian, hvp, jacobian, jvp
from gradcheck import assert_grad_matches, numeric_grad
import specimens_late_forms as L

WORKING = [L.scaled_params, L.params_if_on_values, L.params_comprehension_in_loop,
           L.local_defaults_to_helper, L.lambda_defaults_to_helper, L.local_alias,
           L.along_rows, L.along_first_axis_in_loop, L.vectorized_branch]
STOPPED = {L.params_comprehension_stopped: lambda x, w, c: np.sum(x * c[0] + w * c[1]),
           L.local_defaults_stopped: lambda x, w, c: np.sum(np.tanh(x * c) * w),
           L.along_stopped: lambda x, w, c: np.sum(x * w * c)}
STOPPED_VALUES = {L.params_comprehension_stopped: lambda x, w: (x, w),
                  L.local_defaults_stopped: lambda x, w: w,
                  L.along_stopped: lambda x, w: x * w}

rng = np.random.default_rng(1503)
SHAPES = {"vectors": ((3,), (3,)), "broadcast": ((2, 3), (3,)), "scalar_w": ((4,), ())}


def _args(shapes):
    x = rng.uniform(-0.9, 0.9, size=shapes[0])
    w = rng.uniform(-1.0, 1.0, size=shapes[1])
    return [x, w if shapes[1] else float(w)]


@pytest.mark.parametrize("shapes", SHAPES.values(), ids=SHAPES.keys())
@pytest.mark.parametrize("f", WORKING, ids=lambda f: f.__name__)
def test_reverse_mode_matches_finite_differences(f, shapes):
    args = _args(shapes)
    assert_grad_matches(f, args, wrt=[0] if isinstance(args[1], float) else None)


@pytest.mark.parametrize("shapes", SHAPES.values(), ids=SHAPES.keys())
@pytest.mark.parametrize("f", list(STOPPED), ids=lambda f: f.__name__)
def test_stop_gradient_inside(f, shapes):
    x, w = _args(shapes)
    c = STOPPED_VALUES[f](x, w)
    for i, arg in enumerate((x, w)):
        if isinstance(arg, float):
            continue
        np.testing.assert_allclose(grad(f, wrt=i)(x, w),
                                   numeric_grad(STOPPED[f], [x, w, c], i),
                                   rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("f", WORKING + list(STOPPED), ids=lambda f: f.__name__)
def test_forward_mode_matches_reverse_mode(f):
    x, w = _args(SHAPES["broadcast"])
    v, u = rng.normal(size=x.shape), rng.normal(size=w.shape)
    value, tangent = jvp(f, (x, w), (v, u))
    assert np.isclose(value, f(x, w))
    expected = np.sum(grad(f, wrt=0)(x, w) * v) + np.sum(grad(f, wrt=1)(x, w) * u)
    np.testing.assert_allclose(tangent, expected, rtol=1e-9, atol=1e-12)


def test_a_dict_comprehension_over_a_dict_argument():
    # the keys are the argument's, known only when it runs; an `if` on its values is a
    # branch (keys whose values fail it get no gradient)
    for shape in ((3,), (2, 3), ()):
        a, b = rng.normal(size=shape), rng.normal(size=shape) + 3.0
        x = rng.normal(size=shape)
        got = grad(L.doubled_sum)({"a": a, "b": b}, x)
        for key, value in (("a", a), ("b", b)):
            other = {"a": a, "b": b}

            def along(t, key=key, other=other):
                return L.doubled_sum({**other, key: t}, x)
            np.testing.assert_allclose(got[key], numeric_grad(along, [value], 0),
                                       rtol=1e-6, atol=1e-8)
        kept = grad(L.kept_positive)({"a": a, "b": b, "c": -b})
        np.testing.assert_allclose(kept["c"], 0.0)
        np.testing.assert_allclose(kept["b"], 2 * np.cos(b))


@pytest.mark.parametrize("shapes", SHAPES.values(), ids=SHAPES.keys())
def test_grad_of_a_function_with_args_and_kwargs(shapes):
    # refused ("*args and **kwargs parameters are not supported"); now each call's
    # number of arguments and keyword names get a copy, with wrt positions as in the call
    x, w = _args(shapes)
    assert_grad_matches(L.collected, [x, w, x * 0.5], wrt=[0, 1, 2] if not
                        isinstance(w, float) else [0, 2])
    assert_grad_matches(L.collected, [x], wrt=[0])
    b = rng.normal(size=np.shape(x))
    f = L.named_and_collected
    got = grad(f, wrt=(0, 1, "b"))(x, w, x * 2.0, b=b, c=3.0)
    args = [x, w, x * 2.0, b]

    def by_position(x, w, v, b):
        return f(x, w, v, b=b, c=3.0)
    for i, g in zip((0, 1, 3), got):
        if not isinstance(args[i], float):
            np.testing.assert_allclose(g, numeric_grad(by_position, args, i), rtol=1e-5,
                                       atol=1e-7)
    # another number of arguments: another copy
    np.testing.assert_allclose(grad(f)(x, b=b), numeric_grad(lambda t: f(t, b=b), [x], 0),
                               rtol=1e-5, atol=1e-7)
    # stop_gradient inside, and forward mode against reverse mode
    c = (w * x) if not isinstance(w, float) else w * x
    np.testing.assert_allclose(grad(L.collected_stopped)(x, w),
                               numeric_grad(L.collected_stopped_reference, [x, w, c], 0),
                               rtol=1e-5, atol=1e-7)
    v = rng.normal(size=np.shape(x))
    value, tangent = jvp(L.collected, (x, w, x * 0.5), (v, None, None))
    assert np.isclose(value, L.collected(x, w, x * 0.5))
    np.testing.assert_allclose(tangent, np.sum(grad(L.collected)(x, w, x * 0.5) * v),
                               rtol=1e-9)


@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 3), (3,))], ids=["vectors", "broadcast"])
def test_hessian_hvp_and_jacobian_of_a_function_with_args(shapes):
    # an internal ValueError (tuple.index) reached the user from hessian and jacobian of
    # def f(*ws); each now works on the copy made for the call's number of arguments
    x, w = rng.uniform(-0.9, 0.9, size=shapes[0]), rng.uniform(-0.9, 0.9, size=shapes[1])

    def fd_hessian_of(i, args, eps=1e-5):     # differences of the checked gradient
        g, t = grad(L.collected, wrt=i), args[i]
        cols = []
        for k in range(t.size):
            e = np.zeros(t.size)
            e[k] = eps
            up, down = list(args), list(args)
            up[i], down[i] = t + e.reshape(t.shape), t - e.reshape(t.shape)
            cols.append(((g(*up) - g(*down)) / (2 * eps)).ravel())
        return np.array(cols).T.reshape(t.shape + t.shape)
    args = (x, w, x * 0.5)
    np.testing.assert_allclose(hessian(L.collected, wrt=1)(*args), fd_hessian_of(1, args),
                               rtol=1e-5, atol=1e-5)
    v = rng.normal(size=np.shape(w))
    np.testing.assert_allclose(hvp(L.collected, w, v, x, x * 0.5, wrt=1),
                               np.tensordot(fd_hessian_of(1, args), v, w.ndim),
                               rtol=1e-5, atol=1e-5)
    assert hessian(L.collected).__name__ == "collected_hessian"
    for mode in ("fwd", "rev"):
        J = jacobian(L.collected, wrt=(0, 1), mode=mode)(x, w, x * 0.5)
        np.testing.assert_allclose(J[1], numeric_grad(L.collected, [x, w, x * 0.5], 1),
                                   rtol=1e-5, atol=1e-7)


def test_the_copy_for_collected_arguments_reads_plainly():
    g = grad(L.named_and_collected)
    with pytest.raises(SGCompilerError, match="call the gradient before reading its code"):
        g.source
    g(np.ones(3), np.ones(3), b=np.ones(3))
    assert "def named_and_collected_star1_b_grad(x, ws_0, *, scale" in g.source
    assert "ws = (ws_0,)" in g.source and "kw = {'b': kw_b}" in g.source
    with pytest.raises(TypeError):
        g()     # as Python says: x is missing


def test_enumerate_of_zip():
    # refused ("enumerate() of this iterable is not supported") though the issue lists it
    for x, w in ((rng.normal(size=3), rng.normal(size=3)),
                 (rng.normal(size=(2, 3)), rng.normal(size=(4, 3))),
                 (rng.normal(size=(3, 2)), rng.normal(size=3))):
        for i in (0, 1):
            got = grad(L.enumerate_zip, wrt=i)(x, w)
            want = numeric_grad(L.enumerate_zip_stopped_reference, [x, w, w.copy()], i)
            if i == 1:      # (the stopped w of the second loop gets no gradient)
                want = numeric_grad(lambda w_: L.enumerate_zip_stopped_reference(x, w_, w),
                                    [w], 0)
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
        v = rng.normal(size=x.shape)
        _, tangent = jvp(L.enumerate_zip, (x, w), (v, None))
        np.testing.assert_allclose(tangent, np.sum(grad(L.enumerate_zip)(x, w) * v),
                                   rtol=1e-9)
    xs = [rng.normal(size=2) for _ in range(3)]
    got = grad(lambda xs, w: L.enumerate_zip(xs, [w, w, w]))(xs, xs[0])
    assert isinstance(got, list) and len(got) == 3


_SQUARED = functools.partial(lambda d, w: np.sum(np.sin(d * w) ** 2), np.array([0.5, -1.0]))


def test_a_partial_of_a_lambda():
    # its function was named <lambda>_partial: a SyntaxError reached the user
    for w in (np.array([0.3, 0.7]), np.array([[0.3, 0.7], [1.0, -2.0]])):
        np.testing.assert_allclose(grad(_SQUARED)(w), numeric_grad(_SQUARED, [w], 0),
                                   rtol=1e-6, atol=1e-8)
    assert "def lambda_" in grad(_SQUARED).source


def test_library_loops_compute_what_numpy_does():
    # the helpers apply_along_axis and vectorize are rewritten into give NumPy's values
    from sgcompiler.frontend.forms import library_calls
    namespace = dict(library_calls._GLOBALS)
    for source in library_calls._SOURCES.values():
        exec(source, namespace)
    x = rng.normal(size=(2, 3, 4))
    for axis in (0, 1, 2, -1):
        for func in (lambda r: np.sum(r ** 2), lambda r: r * 2.0,
                     lambda r: np.outer(r, r)):
            np.testing.assert_allclose(namespace["apply_along_axis"](func, axis, x),
                                       np.apply_along_axis(func, axis, x))
    for arg in (x, np.float64(0.5), rng.normal(size=3)):
        np.testing.assert_allclose(namespace["vectorized"](lambda t: np.sin(t) * t, arg),
                                   np.vectorize(lambda t: np.sin(t) * t)(arg))


def test_library_calls_that_stay_refused():
    def extra_arguments(x):
        return np.sum(np.apply_along_axis(lambda r, k: r * k, 0, x, 2.0))
    with pytest.raises(SGCompilerError, match="test_python_forms_late.py:.*library function"):
        grad(extra_arguments)(np.ones((2, 3)))


def test_pieces_of_one_helper_for_different_active_parameters_have_their_own_names():
    # they were all named _scaled_sine_forward/_backward in code for any shape (and by
    # a digest alone for known shapes)
    import re
    x, w = rng.normal(size=3), rng.normal(size=3)
    g = grad(L.one_helper_three_ways, wrt=(0, 1))
    for source in (g.source, (g(x, w), g.source)[1]):
        names = re.findall(r"^def (\w+)\(", source, re.M)
        assert len(names) == len(set(names)) == 7
        assert any(n.startswith("_scaled_sine_for_a_") for n in names)
        assert any(n.startswith("_scaled_sine_for_b_") for n in names)
    got = g(x, w)
    for i in (0, 1):
        np.testing.assert_allclose(got[i], numeric_grad(L.one_helper_three_ways, [x, w], i),
                                   rtol=1e-6, atol=1e-8)
