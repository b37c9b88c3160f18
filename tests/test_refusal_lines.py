"""A refusal known only at run time names the user's line in every kind of generated code:
the backward sweep (its `# line N:` comments), the primal sweep and tangent code (the line
each statement came from, registered with the text; backend/located.py)."""
import inspect
import re

import numpy as np
import pytest

from sgcompiler import SGCompilerError, grad, hessian, jacobian, jvp

KEYS = ("a", "b", "c")


def zipped(x, vs):
    y = np.sin(x)
    d = dict(zip(KEYS, vs))
    return np.sum(d["a"] * y)


def complete_qr(x):
    y = np.exp(x)
    q, r = np.linalg.qr(y, mode="complete")
    return np.sum(q) + np.sum(r)


def _line(fn, text):
    """the file line of `fn` whose text contains `text`"""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _refused(thunk, fn, text, what):
    with pytest.raises(SGCompilerError) as info:
        thunk()
    message = str(info.value)
    where = re.escape(f"(test_refusal_lines.py:{_line(fn, text)}): ")
    assert re.search(where, message) and what in message, message
    assert message.endswith(f"[in: {text}]"), message


X = np.linspace(0.1, 0.7, 3)
SHORT = [np.ones(3), np.ones(3)]       # two values for three keys
DICT_LINE = "d = dict(zip(KEYS, vs))"


def test_primal_sweep_refusal_names_its_line():
    _refused(lambda: grad(zipped)(X, SHORT), zipped, DICT_LINE, "2 values for 3 keys")


def test_tangent_code_refusal_names_its_line():
    _refused(lambda: jvp(zipped, (X, SHORT), (X, None)), zipped, DICT_LINE,
             "2 values for 3 keys")


def test_hessian_refusal_is_located():
    # was a bare RuntimeRefusal with no place at all
    _refused(lambda: hessian(zipped)(X, SHORT), zipped, DICT_LINE, "2 values for 3 keys")


@pytest.mark.parametrize("shape", [(4, 3), (5, 2)])
def test_tangent_rule_refusal_names_its_line(shape):
    x = np.ones(shape) + np.eye(*shape)
    text = 'q, r = np.linalg.qr(y, mode="complete")'
    _refused(lambda: jvp(complete_qr, (x,), (np.ones(shape),)), complete_qr, text,
             "no tangent for mode='complete'")
    _refused(lambda: jacobian(complete_qr, mode="fwd")(x), complete_qr, text,
             "no tangent for mode='complete'")


def test_full_values_still_differentiate():
    vs = [np.linspace(1, 2, 3), np.ones(3), np.ones(3)]
    g = grad(zipped)(X, vs)
    assert np.allclose(g, vs[0] * np.cos(X))
    _, t = jvp(zipped, (X, vs), (np.ones(3), None))
    assert np.isclose(t, np.sum(vs[0] * np.cos(X)))


# --- a refusal found when compiling second-order code names the user's function and the
# line the generated code came from, then the generated line (it named f_grad and a line
# of the generated text before)

def graded(x):
    # (the gradient helper of a complex svd has no second-order rule yet; np.gradient's,
    # used here before, has one now)
    m = np.outer(x[:2], x[1:]) * (1.0 + 2.0j) + np.eye(2)
    z = np.linalg.svd(m, compute_uv=False)
    return np.sum(z ** 3)


def graded_inside(x):
    return graded(x * 2.0) + np.sum(x)


@pytest.mark.parametrize("fn", [graded, graded_inside])
@pytest.mark.parametrize("order", ["hessian", "grad of grad"])
def test_second_order_compile_refusal_names_the_users_line(fn, order):
    def g(x):
        return np.sum(grad(fn)(x))
    thunk = (lambda: hessian(fn)(X)) if order == "hessian" else (lambda: grad(g)(X))
    with pytest.raises(SGCompilerError) as info:
        thunk()
    line = _line(graded, "np.linalg.svd(m")
    for problem in info.value.problems:
        assert problem.startswith(f"graded (test_refusal_lines.py:{line}): "), problem
        assert "[in: z = np.linalg.svd(m, compute_uv=False); generated graded" in problem, \
            problem
        assert "<sgcompiler" not in problem, problem
