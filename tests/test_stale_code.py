"""Compiled code is right for what names refer to now, not when it was compiled.

The generated code depends on what every called name resolves to (a closure's captured
function, a module-level helper, a monkeypatched module attribute) and on the defaults a
callee is bound with. Each case changes one of them between two calls and compares both
gradients with finite differences. The user code lives in a module of its own, written
to a temporary file, so nothing here changes this module's globals.
"""
import importlib.util
import itertools
import types

import numpy as np
import pytest

import sgcompiler
from gradcheck import assert_grad_matches, numeric_grad
from sgcompiler import grad, pipeline

X = np.array([0.3, 0.7, -0.4])
_count = itertools.count()


def load(tmp_path, source, name="user"):
    """A fresh module made from `source` (a file, so its source can be read)."""
    path = tmp_path / f"{name}_{next(_count)}.py"
    path.write_text("import numpy as np\nimport types\n\n" + source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_cell(tmp_path, module, source):
    """Run `source` in `module`'s namespace, as a notebook cell run again would."""
    path = tmp_path / f"cell_{next(_count)}.py"
    path.write_text(source)
    exec(compile(source, str(path), "exec"), module.__dict__)


def agrees(g, f, x=X):
    np.testing.assert_allclose(g(x), numeric_grad(f, (x,), 0), rtol=1e-6, atol=1e-8)


def test_factory_whose_captured_function_differs(tmp_path):
    m = load(tmp_path, "def make_loss(act):\n"
                       "    def loss(x):\n"
                       "        return np.sum(act(x))\n"
                       "    return loss\n")
    for act in (np.sin, np.exp, np.tanh, np.sin):
        assert_grad_matches(m.make_loss(act), (X,))


def test_factory_with_a_helper_closure(tmp_path):
    # the helper's pieces are bound to the helper's own closure cells
    m = load(tmp_path, "def make_loss(c, act):\n"
                       "    def helper(x):\n"
                       "        return act(x) * c\n"
                       "    def loss(x):\n"
                       "        return np.sum(helper(x) ** 2)\n"
                       "    return loss\n")
    for c, act in ((2.0, np.sin), (3.0, np.sin), (3.0, np.exp)):
        assert_grad_matches(m.make_loss(c, act), (X,))


def test_helper_redefined(tmp_path):
    m = load(tmp_path, "def helper(x):\n    return np.sin(x)\n\n"
                       "def loss(x):\n    return np.sum(helper(x) * x)\n")
    g = grad(m.loss)
    agrees(g, m.loss)
    run_cell(tmp_path, m, "def helper(x):\n    return np.exp(x)\n")
    agrees(g, m.loss)                   # the same gradient function
    agrees(grad(m.loss), m.loss)        # and a new one


def test_helper_of_helper_redefined(tmp_path):
    m = load(tmp_path, "def inner(x):\n    return np.sin(x)\n\n"
                       "def outer(x):\n    return inner(x) * 2.0\n\n"
                       "def loss(x):\n    return np.sum(outer(x) * x)\n")
    g = grad(m.loss)
    agrees(g, m.loss)
    run_cell(tmp_path, m, "def inner(x):\n    return np.cos(x)\n")
    agrees(g, m.loss)


def test_global_rebound(tmp_path):
    m = load(tmp_path, "act = np.sin\n\ndef loss(x):\n    return np.sum(act(x))\n")
    g = grad(m.loss)
    agrees(g, m.loss)
    m.act = np.exp
    agrees(g, m.loss)
    agrees(grad(m.loss), m.loss)


def test_nonlocal_changed(tmp_path):
    m = load(tmp_path, "def make():\n"
                       "    act = np.sin\n"
                       "    def loss(x):\n"
                       "        return np.sum(act(x))\n"
                       "    def change(new):\n"
                       "        nonlocal act\n"
                       "        act = new\n"
                       "    return loss, change\n")
    loss, change = m.make()
    g = grad(loss)
    agrees(g, loss)
    change(np.exp)
    agrees(g, loss)
    agrees(grad(loss), loss)


def test_module_attribute_monkeypatched(tmp_path):
    m = load(tmp_path, "ops = types.SimpleNamespace(act=np.sin)\n\n"
                       "def loss(x):\n    return np.sum(ops.act(x))\n")
    g = grad(m.loss)
    agrees(g, m.loss)
    m.ops.act = np.exp
    agrees(g, m.loss)


def test_numpy_function_monkeypatched(tmp_path, monkeypatch):
    m = load(tmp_path, "def loss(x):\n    return np.sum(np.exp(x))\n")
    g = grad(m.loss)
    agrees(g, m.loss)
    monkeypatch.setattr(np, "exp", np.sin)
    agrees(g, m.loss)
    agrees(grad(m.loss), m.loss)


def test_one_code_object_different_defaults(tmp_path):
    m = load(tmp_path, "funs = []\n"
                       "for num in [0, 1, 5, 1]:\n"
                       "    def fun(x, y, num=num):\n"
                       "        return np.linspace(x, y, num)\n"
                       "    funs.append(fun)\n\n"
                       "def loss(x):\n"
                       "    return np.sum(fun(x, 2.0) ** 2)\n")
    assert len({f.__code__ for f in m.funs}) == 1
    for fun in m.funs:
        m.fun = fun
        for x in (1.0, np.array(1.0), np.array([1.0, 1.5])):
            assert_grad_matches(m.loss, (x,))


def test_defaults_reassigned(tmp_path):
    m = load(tmp_path, "def fun(x, k=2.0, *, p=1.0):\n    return x ** k * p\n\n"
                       "def loss(x):\n    return np.sum(fun(x))\n")
    g = grad(m.loss)
    agrees(g, m.loss)
    m.fun.__defaults__ = (3.0,)
    agrees(g, m.loss)
    m.fun.__kwdefaults__ = {"p": 5.0}
    agrees(g, m.loss)
    m.loss.__defaults__ = None          # the primal's own (none): nothing changes
    agrees(g, m.loss)


def test_same_meaning_compiles_once(tmp_path, monkeypatch):
    """Closures of one factory that capture the same function share compiled code."""
    m = load(tmp_path, "def make_loss(act, w):\n"
                       "    def loss(x):\n"
                       "        return np.sum(act(x) * w)\n"
                       "    return loss\n")
    calls = []
    compile_ = pipeline._compile
    monkeypatch.setattr(pipeline, "_compile", lambda *a, **k: calls.append(1) or
                        compile_(*a, **k))
    for w in (1.0, 2.0, 3.0):
        assert_grad_matches(m.make_loss(np.sin, w), (X,), wrt=[0])
    assert len(calls) == 1
    assert_grad_matches(m.make_loss(np.cos, 2.0), (X,), wrt=[0])
    assert len(calls) == 2


def test_bound_method_is_not_a_new_meaning_on_every_call(tmp_path, monkeypatch):
    """`rng.normal` is a new bound method at each read: the same method of the same
    object still means the same (no compiling again on every call)."""
    m = load(tmp_path, "from sgcompiler import stop_gradient\n"
                       "rng = np.random.default_rng(0)\n\n"
                       "def loss(x):\n"
                       "    return np.sum(np.sin(x) * stop_gradient(rng.uniform(size=3)))\n")
    calls = []
    compile_ = pipeline._compile
    monkeypatch.setattr(pipeline, "_compile", lambda *a, **k: calls.append(1) or
                        compile_(*a, **k))
    g = grad(m.loss)
    for _ in range(3):
        state = m.rng.bit_generator.state
        got = g(X)
        m.rng.bit_generator.state = state
        np.testing.assert_allclose(got, np.cos(X) * m.rng.uniform(size=3), rtol=1e-12)
    assert len(calls) == 1


def test_nested_recordings_each_keep_their_reads():
    from sgcompiler.frontend import depends
    cell = types.CellType(np.sin)
    with depends.recording() as outer:
        with depends.recording() as inner:      # (equal to outer while both are empty)
            pass
        depends.note(depends.CELL, cell, None, np.sin)
    assert len(outer) == 1 and len(inner) == 0
    check = depends.Depends.of(outer, test_nested_recordings_each_keep_their_reads).checker(
        test_nested_recordings_each_keep_their_reads)
    assert check()
    cell.cell_contents = np.exp
    assert not check()


def test_gradient_of_gradient_after_helper_redefined(tmp_path):
    m = load(tmp_path, "def helper(x):\n    return np.sin(x)\n\n"
                       "def f(x):\n    return helper(x) * x\n")
    gg = grad(grad(m.f))
    for later in ("def helper(x):\n    return np.exp(x)\n", None):
        x = 0.7
        expected = numeric_grad(grad(m.f), (x,), 0)
        np.testing.assert_allclose(gg(x), expected, rtol=1e-6)
        if later:
            run_cell(tmp_path, m, later)


def test_jvp_after_names_change_meaning(tmp_path):
    m = load(tmp_path, "def helper(x):\n    return np.sin(x)\n\n"
                       "def make(act):\n"
                       "    def f(x):\n"
                       "        return act(x) * helper(x)\n"
                       "    return f\n")
    v = np.array([1.0, -2.0, 0.5])
    for act, later in ((np.sin, None), (np.exp, "def helper(x):\n    return np.cos(x)\n"),
                       (np.exp, None)):
        f = m.make(act)
        _, out_dot = sgcompiler.jvp(f, (X,), (v,))
        eps = 1e-6
        np.testing.assert_allclose(out_dot, (f(X + eps * v) - f(X - eps * v)) / (2 * eps),
                                   rtol=1e-6, atol=1e-8)
        if later:
            run_cell(tmp_path, m, later)


def test_a_name_found_nowhere_is_checked_in_the_builtins_dict(monkeypatch):
    # (the check read `not hasattr(builtins, name)`: an AttributeError, 1 us, on every call)
    import builtins

    from sgcompiler.frontend import depends
    with depends.recording() as seen:
        depends.note_name({}, {}, "_sgc_nowhere")
    reads = depends.Depends(tuple(seen.values()))
    check = reads.checker(lambda: None)
    assert check() and reads.holds_for(lambda: None)
    assert "hasattr" not in check.__code__.co_names
    monkeypatch.setattr(builtins, "_sgc_nowhere", 1.0, raising=False)
    assert not check() and not reads.holds_for(lambda: None)
