"""Every refused construct gets an SGCompilerError naming the function, file and line."""
import importlib.util
import inspect

import numpy as np
import pytest

from sgcompiler import SGCompilerError, grad
import specimens_errors as S


def line_of(f, text):
    lines, first = inspect.getsourcelines(f)
    for i, line in enumerate(lines):
        if text in line:
            return first + i
    raise AssertionError(text)


CASES = [
    (S.generator, "yield x", "generator"),
    (S.coroutine, "async def", "async"),
    (S.uses_global, "global STATE", "'global'"),
    (S.uses_try, "except ValueError", "an 'except' block that does not end by raising"),
    (S.uses_with, "with open", "'with'"),
    (S.uses_del, "del y", "'del'"),
    (S.uses_eval, "return eval", "'eval'"),
    (S.nested_def, "h = inner", "the local function 'inner' can only be called"),
    (S.uses_lambda, "lambda *y", "a nested function with *args"),
    (S.lambda_to_numpy, "apply_along_axis", "a lambda passed to a library function"),
    (S.class_def, "class A", "class definitions"),
    (S.unknown_function, "math.gamma", "no derivative rule for math.gamma"),
    (S.no_rule_for_active, "np.unwrap", "no derivative rule for np.unwrap"),
    (S.attribute_write, "obj.value = x", "assigning to an attribute"),
    (S.star_args, "def inner(*ts)", "*args"),
    (S.method_of_object, "model.forward", "method .forward()"),
    (S.and_or_active, "x or 1.0", "'and'/'or'"),
    (S.returns_none, "def returns_none", "no 'return'"),
    (S.mutate_argument, "x[0] = 1.0", "writing into the argument 'x'"),
    (S.zip_outside_loop, "list(zip", "zip"),
]


@pytest.mark.parametrize("f, text, message", CASES, ids=[c[0].__name__ for c in CASES])
def test_refused_with_location(f, text, message):
    args = [np.ones(3)] * max(1, len(inspect.signature(f).parameters))
    with pytest.raises(SGCompilerError) as info:
        grad(f)(*args)
    text_of_error = str(info.value)
    assert message in text_of_error
    assert f"specimens_errors.py:{line_of(f, text)}" in text_of_error
    assert f.__name__ in text_of_error


def test_star_args_helper_without_gradient_is_fine():
    from gradcheck import assert_grad_matches
    assert_grad_matches(S.star_args_without_gradient, (np.array([0.5, 2.0]), 1.5), wrt=[0])


def test_unknown_function_under_stop_gradient_is_fine():
    import specimens_stop as T
    x = np.array([0.5, 1.5])
    assert np.allclose(grad(T.opaque_under_stop)(x), np.cumsum(x) * 0 + T.opaque(x))


def test_all_problems_in_one_error():
    with pytest.raises(SGCompilerError) as info:
        grad(S.uses_try)(np.ones(3))
    assert len(info.value.problems) >= 1

    def several(x):
        global G
        del x
        return eval("x")
    with pytest.raises(SGCompilerError) as info:
        grad(several)(np.ones(3))
    assert len(info.value.problems) == 3


def test_shadowed_stop_gradient_is_differentiated():
    import specimens_stop as T
    x = np.array([0.5, -1.0, 2.0])
    assert np.allclose(grad(T.own_stop_gradient)(x), 2 * x)


def test_wrong_wrt():
    with pytest.raises(SGCompilerError, match="not a parameter"):
        grad(S.generator, wrt="nope")
    with pytest.raises(SGCompilerError, match="wrt=3 is not a parameter position"):
        grad(S.generator, wrt=3)
    with pytest.raises(SGCompilerError, match="picks parameter 'x' twice"):
        grad(S.generator, wrt=(0, "x"))
    with pytest.raises(SGCompilerError, match="no parameters to differentiate"):
        grad(lambda: 1.0)


def test_file_that_is_not_valid_text_is_named(tmp_path):
    # Python 3.11 imports a file with a latin-1 byte in a comment, but cannot show its source
    path = tmp_path / "notutf8_module.py"
    path.write_bytes(b"def f(x):\n    # caf\xe9\n    return x * x\n")
    spec = importlib.util.spec_from_file_location("notutf8_module", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except SyntaxError:
        pytest.skip("this Python refuses the file")
    with pytest.raises(SGCompilerError, match=r"f \(notutf8_module.py:2\): the file is not "
                                              r"valid utf-8 text \(byte 0xe9 on line 2\)"):
        grad(module.f)(1.0)


def test_source_not_available():
    f = eval("lambda x: x")  # noqa: S307
    with pytest.raises(SGCompilerError, match="lambda"):
        grad(f)(1.0)
    namespace = {}
    exec("def g(x):\n    return x\n", namespace)  # noqa: S102
    with pytest.raises(SGCompilerError, match="source code is not available"):
        grad(namespace["g"])(1.0)


_UNREADABLE_LAMBDA = eval("lambda v: v * v")  # noqa: S307
_NAMESPACE = {}
exec("def unreadable(v):\n    return v * 3.0\n", _NAMESPACE)  # noqa: S102
_unreadable = _NAMESPACE["unreadable"]


def calls_an_unreadable_lambda(x):
    y = x + 1.0
    return np.sum(_UNREADABLE_LAMBDA(y))


def calls_an_unreadable_def(x):
    return np.sum(_unreadable(x * 2.0))


@pytest.mark.parametrize("f, callee", [(calls_an_unreadable_lambda, "_UNREADABLE_LAMBDA"),
                                       (calls_an_unreadable_def, "_unreadable")])
def test_a_callee_without_source_is_refused_at_the_call(f, callee):
    """Issue 13: a module-level lambda (or def) made by eval/exec, called from a
    differentiated function, was refused with the lambda's place alone (<string>:1): the
    message now starts with the caller's file and line, in grad and in jvp."""
    from sgcompiler import jvp
    line = f.__code__.co_firstlineno + (2 if f is calls_an_unreadable_lambda else 1)
    x = np.array([0.5, -1.0])
    for call in (lambda: grad(f)(x), lambda: jvp(f, (x,), (x,))):
        with pytest.raises(SGCompilerError) as info:
            call()
        message = str(info.value)
        assert message.startswith(f"{f.__name__} (test_errors.py:{line}): calling "), message
        assert "source code is not available" in message and "[in: return" in message, message


def _sum_sq(x):
    return np.sum(x * x)


def _tree_sum(p):
    return np.sum(p["w"] * p["w"])


def test_arguments_are_checked_after_a_valid_call_too():
    g = grad(_sum_sq)
    g(np.ones(3))
    with pytest.raises(TypeError, match="dtype int64"):
        g(np.ones(3, dtype=np.int64))
    t = grad(_tree_sum)
    t({"w": np.ones(2)})
    with pytest.raises(TypeError, match="int"):
        t({"w": 3})


def test_helpers_collecting_args_and_kwargs_are_specialised_per_call():
    # sym(*args) and forward_kwargs(**kwargs) were refused (issue 13); the number of
    # arguments is known at each call, so each gets a copy made for it (issue 15)
    from gradcheck import assert_grad_matches
    x = np.arange(9.0).reshape(3, 3) / 7 - 0.5
    assert_grad_matches(S.through_star_args, [x])
    assert_grad_matches(S.through_kwargs, [x])
