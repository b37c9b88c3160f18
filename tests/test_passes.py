"""Pass-level tests: source in, facts or text out, one line per case."""
import ast
import textwrap
import types

import gast
import numpy as np
import pytest

from sgcompiler.analysis.activity import activity
from sgcompiler.frontend import front_end
from sgcompiler.frontend.normalize import is_atom
from sgcompiler.pipeline import compile_gradient
import sgcompiler


def make(src, **globals_):
    """A function from source text, with its source findable (written to a temp module)."""
    import linecache
    text = textwrap.dedent(src)
    filename = f"<test {abs(hash(text))}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = {"np": np, "stop_gradient": sgcompiler.stop_gradient, **globals_}
    exec(compile(text, filename, "exec"), namespace)
    return next(v for v in namespace.values()
                if isinstance(v, types.FunctionType) and v.__code__.co_filename == filename)


def normal(src):
    front = front_end(make(src))
    return front.source, front.resolution, front.norm


def active(body, wrt="x"):
    fn, resolution, norm = normal(f"def f(x, w):\n" + textwrap.indent(body, "    "))
    return set(activity(norm, resolution, (wrt,)).active)


def test_activity():
    assert active("y = x * 2\nz = 3\nreturn y") == {"x", "y"}
    assert active("y = x * 2\nz = w * 3\nreturn y + z") >= {"x", "y"}
    assert "z" not in active("y = x * 2\nz = w * 3\nreturn y + z")
    assert "m" not in active("m = stop_gradient(x)\nreturn m * x")
    assert "y" not in active("y = x * 2\nm = stop_gradient(y)\nreturn m * w")
    assert "n" not in active("n = len(x)\nreturn x * n")
    assert active("i = np.argmax(x)\nreturn w[i]") == set()


def _check_normal_form(body):
    for stmt in body:
        if isinstance(stmt, gast.Assign):
            target = stmt.targets[0]
            assert isinstance(target, (gast.Name, gast.Subscript))
            value = stmt.value
            if isinstance(value, gast.BinOp):
                assert is_atom(value.left, set()) or isinstance(value.left, gast.Name)
                assert isinstance(value.right, (gast.Name, gast.Constant))
            elif isinstance(value, gast.Call):
                for a in value.args:
                    assert isinstance(a, (gast.Name, gast.Constant, gast.Tuple)), gast.dump(a)
        elif isinstance(stmt, gast.If):
            assert isinstance(stmt.test, (gast.Name, gast.Constant))
            _check_normal_form(stmt.body)
            _check_normal_form(stmt.orelse)
        elif isinstance(stmt, (gast.For, gast.While)):
            _check_normal_form(stmt.body)
        else:
            assert isinstance(stmt, (gast.Return, gast.Expr, gast.Break, gast.Raise,
                                     gast.Assert)), type(stmt)


@pytest.mark.parametrize("src", [
    "def f(x):\n    return np.sum(np.sin(x * 2.0) + x[1:3].sum() ** 2)\n",
    "def f(x):\n    y = x if np.sum(x) > 0 else -x\n    return np.sum(y)\n",
    "def f(x):\n    s = 0.0\n    for i in range(3):\n        if i > 1:\n            break\n        s += np.sum(x * i)\n    return s\n",
    "def f(x):\n    while np.sum(x) < 10:\n        x = x * 2\n    return np.sum(x)\n",
])
def test_normal_form(src):
    _, _, norm = normal(src)
    _check_normal_form(norm.body)
    assert isinstance(norm.body[-1], gast.Return)


def test_normalize_text():
    _, _, norm = normal("def f(x, y):\n    z = np.sin(x * y) + 1\n    z = z * z\n    return z\n")
    text = [ast.unparse(gast.gast_to_ast(s)) for s in norm.body]
    assert text == ["_mul = x * y", "_sin = np.sin(_mul)", "z = _sin + 1", "z_1 = z * z",
                    "return z_1"]


def test_generated_code_is_deterministic():
    f = make("def f(x, w):\n    z = x - stop_gradient(np.max(x))\n    return np.sum(np.exp(z) * w)\n")
    from sgcompiler import pipeline
    first = compile_gradient(f, ("x",)).source
    pipeline._CACHE.clear()
    assert compile_gradient(f, ("x",)).source == first


def test_traceback_shows_generated_line():
    import traceback
    f = make("def f(x):\n    y = np.log(x)\n    return np.sum(y * x)\n")
    g = sgcompiler.grad(f)
    with np.errstate(all="raise"):
        with pytest.raises(FloatingPointError) as info:
            g(np.array([0.0, 1.0]))
    text = "".join(traceback.format_tb(info.value.__traceback__))
    assert "<sgcompiler f_grad " in text
    assert "np.log(x)" in text or "/ x" in text


def test_generated_source_compiles_and_mentions_lines():
    f = make("def f(x):\n    e = np.exp(x)\n    return np.sum(e)\n")
    source = sgcompiler.grad(f).source
    compile(source, "<check>", "exec")
    assert "# line 2: e = np.exp(x)" in source


def test_trees_compared_without_printing_them_agree_with_gast_dump():
    import itertools

    from sgcompiler.optimize.tidy.cleanup import _mentions_random, _same_tree, pure_assign
    texts = ["d * x", "d * 1", "d * 1.0", "d * True", "d * -0.0", "d * 0.0", "x * d",
             "d * x[0]", "d * x[1]", "d * (x + 1)", "f(x, k=1)", "f(x, k=2)", "f(x)",
             "d * x * 2", "d.T * x", "d * 'a'", "d * float('nan')"]
    trees = [gast.parse(text).body[0].value for text in texts]
    trees.append(gast.parse("d * x").body[0].value)            # equal, not the same node
    for a, b in itertools.product(trees, trees):
        assert _same_tree(a, b) == (gast.dump(a) == gast.dump(b)), (gast.dump(a), gast.dump(b))
    # a draw is not pure (it advances the generator), whatever the module is called
    for text, draws in [("np.random.normal(x)", True), ("random.random()", True),
                        ("np.sin(x)", False), ("rng.normal(x)", False)]:
        call = gast.parse(text).body[0].value
        assert _mentions_random(call.func) == draws
        assert pure_assign(gast.parse(f"y = {text}").body[0], {}) == (
            not draws and text.startswith("np."))
