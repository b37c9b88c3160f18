"""The forms of issue 15 its second session left refused (dict comprehensions over a dict
argument, `grad` of a function taking *args/**kwargs, local functions with defaults passed
to a helper, lambdas given to np.apply_along_axis and np.vectorize): each against finite
differences on shapes that broadcast, in loops and with stop_gradient, and forward mode
against reverse mode."""
import numpy as np
import pytest

from sgcompiler import SGCompilerError, grad, jvp
from gradcheck import assert_grad_matches, numeric_grad
import specimens_late_forms as L

WORKING = [L.scaled_params, L.params_if_on_values, L.params_comprehension_in_loop]
STOPPED = {L.params_comprehension_stopped:
           lambda x, w, c: np.sum(x * c[0] + w * c[1])}
STOPPED_VALUES = {L.params_comprehension_stopped: lambda x, w: (x, w)}

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
