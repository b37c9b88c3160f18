"""jvp, vjp, jacobian, hessian, hvp and check_grads called inside a differentiated function
are refused with the line and what to write instead (only grad and value_and_grad are read
there); what the messages suggest is differentiated, against finite differences."""
import inspect

import numpy as np
import pytest

from sgcompiler import (SGCompilerError, check_grads, grad, hessian, hvp, jacobian, jvp,
                        vjp)

R = np.random.default_rng(1408)


def g(x):
    return np.sin(x) * x


def g_scalar(x):
    return np.sum(np.cos(x) * x ** 2)


def uses_vjp(x):
    out, back = vjp(g, x)
    return np.sum(back(np.ones_like(out))[0] ** 2)


def uses_jvp(x):
    out, t = jvp(g, (x,), (np.ones_like(x),))
    return np.sum(t ** 2)


def uses_jacobian(x):
    return np.sum(jacobian(g)(x) ** 2)


def uses_hessian(x):
    return np.sum(hessian(g_scalar)(x))


def uses_hvp(x):
    return np.sum(hvp(g_scalar, x, x))


def uses_check_grads(x):
    check_grads(g, (x,))
    return np.sum(x)


@pytest.mark.parametrize("f, name", [(uses_vjp, "vjp"), (uses_jvp, "jvp"),
                                     (uses_jacobian, "jacobian"), (uses_hessian, "hessian"),
                                     (uses_hvp, "hvp"), (uses_check_grads, "check_grads")])
def test_transformations_inside_are_refused_with_what_to_write(f, name):
    lines, first = inspect.getsourcelines(f)
    line = first + next(i for i, s in enumerate(lines) if i and f"{name}(" in s)
    with pytest.raises(SGCompilerError, match=rf"test_transforms_inside.py:{line}\): "
                                              rf"{name}\(\.\.\.\) inside a differentiated "
                                              "function is not supported yet; "):
        grad(f)(R.normal(size=3))


def gc(x, c):
    return np.sum(g(x) * c)


def gv(x, v):
    return np.sum(grad(g_scalar)(x) * v)


def vjp_as_suggested(x):
    return np.sum(grad(gc)(x, np.ones_like(x)) ** 2)


def jvp_as_suggested(x):
    return np.sum(grad(g_scalar)(x) * np.ones_like(x)) ** 2


def hvp_as_suggested(x):
    return np.sum(grad(gv)(x, x) ** 2)


@pytest.mark.parametrize("f", [vjp_as_suggested, jvp_as_suggested, hvp_as_suggested])
def test_what_the_messages_suggest_is_differentiated(f):
    check_grads(f, (R.normal(size=3),), order=1, modes=("rev",))
    check_grads(f, (R.normal(size=4),), order=1, modes=("rev",))
