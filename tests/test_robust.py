"""Regression tests for issue 13's robustness items: text from the user's file never
becomes generated code, array subclasses are refused, std/var at zero spread, the primal's
own errors, deep expressions, and library code that is not differentiated by accident."""
import hashlib
import importlib
import importlib.util
import linecache
import sys

import numpy as np
import pytest

import sgcompiler
from sgcompiler import SGCompilerError, grad
from gradcheck import assert_grad_matches, numeric_grad

# every character str.splitlines() takes as a line break besides \n and \r (a raw \r in a
# file is a line break to Python too)
LINE_BREAKS = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def _module(tmp_path, name, text):
    """Import `text` as module `name` from a real file (as a user's module would be)."""
    path = tmp_path / f"{name}.py"
    path.write_bytes(text.encode("utf-8"))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _check_compiled_text_is_source(g):
    """The lines Python compiled (linecache, what tracebacks show) are .source's lines, and
    .source has no line break other than \\n."""
    source = g.source
    for ch in LINE_BREAKS + ["\r"]:
        assert ch not in source, repr(ch)
    digest = hashlib.sha1(source.split("\n\n# forward and")[0].encode()).hexdigest()[:6]
    compiled = linecache.cache[f"<sgcompiler {g.primal.__qualname__}_grad {digest}>"][2]
    assert source.startswith("".join(compiled))


@pytest.mark.parametrize("ch", LINE_BREAKS, ids=[f"U+{ord(c):04X}" for c in LINE_BREAKS])
def test_a_line_break_character_in_a_comment_stays_in_the_comment(tmp_path, ch):
    # the file's own line breaks are \n; `ch` is inside a comment
    text = ("import numpy as np\n\n"
            "def f(x):\n"
            f"    y = np.sum(x * x)  # note{ch}    return 0.0 * x\n"
            "    return y\n")
    m = _module(tmp_path, f"odd_comment_{ord(ch):x}", text)
    g = grad(m.f)
    assert g(3.0) == pytest.approx(6.0)
    assert_grad_matches(m.f, (0.7,))
    assert_grad_matches(m.f, (np.array([0.5, -1.5]),))
    _check_compiled_text_is_source(g)


@pytest.mark.parametrize("ch", LINE_BREAKS, ids=[f"U+{ord(c):04X}" for c in LINE_BREAKS])
def test_a_line_break_character_in_strings_docstrings_and_helpers(tmp_path, ch):
    esc = ch.encode("unicode_escape").decode("ascii")
    text = ("import numpy as np\n\n"
            "def helper(x, label):\n"
            f"    '''a helper{ch}    return 0.0'''\n"
            f"    z = np.sin(x)  # {ch}return 0.0 * z\n"
            "    return z * len(label)\n\n"
            "def f(x):\n"
            f"    '''doc{ch}    return 0.0'''\n"
            f"    s = '{esc}x'  # the string holds it too: {ch}    return 0.0 * x\n"
            f"    return np.sum(helper(x, s) * x)  # {ch}\n")
    m = _module(tmp_path, f"odd_string_{ord(ch):x}", text)
    g = grad(m.f)
    expected = numeric_grad(m.f, (0.4,), 0)
    assert g(0.4) == pytest.approx(expected, rel=1e-6)
    _check_compiled_text_is_source(g)
    assert_grad_matches(m.f, (np.array([0.5, -1.5, 2.0]),))


def test_a_header_names_an_odd_file_name_safely(tmp_path):
    m = _module(tmp_path, "odd\u2028name", "def f(x):\n    return x * x\n")
    g = grad(m.f)
    assert g(2.0) == 4.0
    assert "\u2028" not in g.source and "odd\\u2028name" in g.source.splitlines()[0]


def _sq(x):
    return np.sum(x * x)


def _weighted(x, w):
    return np.sum(x * w)


class _Tagged(np.ndarray):
    """An ndarray subclass that changes nothing."""


@pytest.mark.filterwarnings("ignore:the matrix subclass")
@pytest.mark.parametrize("make, name", [
    (lambda: np.ma.array([1.0, 5.0], mask=[0, 1]), "MaskedArray"),
    (lambda: np.matrix([[1.0, 5.0]]), "matrix"),
    (lambda: np.array([1.0, 5.0]).view(_Tagged), "_Tagged"),
], ids=["masked", "matrix", "other"])
def test_array_subclasses_are_refused_with_the_argument_named(make, name):
    with pytest.raises(TypeError, match=rf"_sq: argument 'x' is a \S*{name} \(an ndarray "
                                        "subclass\\); sgcompiler differentiates plain arrays"):
        grad(_sq)(make())
    # not only a wrt argument: a constant one, by keyword, or inside a parameter tree
    with pytest.raises(TypeError, match=rf"argument 'w' is a \S*{name}"):
        grad(_weighted)(np.ones(2), make())
    with pytest.raises(TypeError, match=rf"argument 'w' is a \S*{name}"):
        grad(_weighted)(np.ones(2), w=make())
    with pytest.raises(TypeError, match=rf"argument 'x\['a'\]\[1\]' is a \S*{name}"):
        grad(_tree_loss)({"a": [np.ones(2), make()]})
    # the plain arrays still work, after a refusal as before it
    assert np.allclose(grad(_sq)(np.array([1.0, 5.0])), [2.0, 10.0])


def _tree_loss(x):
    return np.sum(x["a"][0]) + np.sum(x["a"][1] ** 2)


_SPREAD_CASES = [(fn, shape, axis, ddof, keepdims)
                 for fn in ("std", "var", "nanstd", "nanvar")
                 for shape, axis in (((), None), ((5,), None), ((5,), 0), ((3, 4), 1),
                                     ((3, 4), (0, 1)), ((2, 1, 3), 1), ((2, 3, 2), -1))
                 for ddof in (0, 1) for keepdims in (False, True)
                 if not (ddof and np.prod([shape[a] for a in np.atleast_1d(axis)]
                                          if axis is not None else shape) <= 1)]


@pytest.fixture(scope="module")
def spread_module(tmp_path_factory):
    lines = ["import math", "import numpy as np", ""]
    for k, (fn, shape, axis, ddof, keepdims) in enumerate(_SPREAD_CASES):
        lines += [f"def f{k}(x, w):",
                  f"    return np.sum(np.{fn}(x, axis={axis!r}, ddof={ddof}, "
                  f"keepdims={keepdims}) * w)", ""]
    lines += ["def std0(x):", "    return np.std(x)", "",
              "def hypot0(x, y):", "    return np.hypot(x, y) + math.hypot(2.0 * x, y)", ""]
    return _module(tmp_path_factory.mktemp("spread"), "spread_cases", "\n".join(lines))


def _spread_args(k, x):
    fn, shape, axis, ddof, keepdims = _SPREAD_CASES[k]
    out = np.shape(getattr(np, fn)(x, axis=axis, ddof=ddof, keepdims=keepdims))
    return x, np.random.default_rng(k).uniform(0.5, 1.5, out)


@pytest.mark.parametrize("k", range(len(_SPREAD_CASES)),
                         ids=[f"{c[0]}-{c[1]}-axis{c[2]}-ddof{c[3]}-keep{c[4]}"
                              for c in _SPREAD_CASES])
def test_std_and_var_are_zero_where_the_spread_is_zero_and_right_elsewhere(spread_module, k):
    f = getattr(spread_module, f"f{k}")
    shape = _SPREAD_CASES[k][1]
    # elsewhere: finite differences
    x = np.random.default_rng(100 + k).normal(size=shape)
    if shape == ():
        x = float(x)
    if np.size(x) > 1 or _SPREAD_CASES[k][2] is not None:
        assert_grad_matches(f, _spread_args(k, x), wrt=(0, 1))
    # a constant (0 spread along every reduced axis): 0, with no division by zero
    constant = np.full(shape, 2.5) if shape else 2.5
    args = _spread_args(k, constant)
    with np.errstate(all="raise"):
        g = grad(f)(*args)
    assert np.shape(g) == np.shape(constant)
    assert np.all(g == 0.0), g
    # one-sided derivatives there are |v - mean(v)| * c >= 0 in every direction; central
    # differences (and the subgradient of least norm) give 0
    np.testing.assert_allclose(g, numeric_grad(f, args, 0), atol=1e-7)


def test_std_of_a_number_and_hypot_at_zero(spread_module):
    with np.errstate(all="raise"):
        assert grad(spread_module.std0)(3.5) == 0.0
        assert np.all(grad(spread_module.std0)(np.full((2, 3), -1.0)) == 0.0)
        assert grad(spread_module.hypot0, wrt=(0, 1))(0.0, 0.0) == (0.0, 0.0)
    x = np.array([0.0, 0.3, -1.0])
    y = np.array([0.0, 0.4, 2.0])
    g = grad(_hypot_sum, wrt=(0, 1))(x, y)
    assert np.all(np.isfinite(g[0])) and g[0][0] == 0.0 and g[1][0] == 0.0
    np.testing.assert_allclose(g[0][1:], numeric_grad(_hypot_sum, (x, y), 0)[1:], rtol=1e-6)
    np.testing.assert_allclose(g[1][1:], numeric_grad(_hypot_sum, (x, y), 1)[1:], rtol=1e-6)


def _hypot_sum(x, y):
    return np.sum(np.hypot(x, y))


# --- the primal's own errors, and options refused when compiled, not when run -------------

_OPTIONS = '''import numpy as np
import scipy.linalg
import scipy.special
from sgcompiler import stop_gradient

MODE = "linear_ramp"


def pad_mode(x):
    return np.sum(np.pad(x, 1, mode="linear_ramp") ** 2)


def pad_global_mode(x):
    return np.sum(np.pad(x, 1, mode=MODE) ** 2)


def pad_local_mode(x, m):
    return np.sum(np.pad(x, 1, mode=m) ** 2)


def average_returned(x):
    return np.sum(np.average(x, weights=x, returned=True)[0])


def linspace_retstep(x):
    return np.sum(np.linspace(x, 2.0 * x, 5, retstep=True)[0])


def interp_period(x):
    return np.sum(np.interp(x, np.array([0.0, 1.0]), np.array([1.0, 3.0]), period=2.0))


def solve_banded_structure(x):
    return np.sum(scipy.linalg.solve(np.diag(x) + 3.0, x, assume_a="banded"))


def pad_constant_input(x):
    c = np.pad(np.ones(2), 1, mode="linear_ramp")
    return np.sum(c) * np.sum(x ** 2)


def pad_stopped(x):
    return np.sum(stop_gradient(np.pad(x, 1, mode="linear_ramp"))) + np.sum(x ** 2)


def average_local_returned(x, r):
    return np.sum(np.average(x, weights=x, returned=r)[0])


def linspace_local_retstep(x, r):
    return np.sum(np.linspace(x, 2.0 * x, 5, retstep=r)[0])


def interp_local_period(x, p):
    return np.sum(np.interp(x, np.array([0.0, 1.0]), np.array([1.0, 3.0]), period=p))


def solve_local_structure(x, a):
    return np.sum(scipy.linalg.solve(np.diag(x) + 3.0, x, assume_a=a))


def complex_local_cast(x, t):
    return np.sum(np.abs(x.astype(t)))


def pad_in_a_helper(x, m):
    return np.sum(padded(x * 2.0, m))


def padded(v, m):
    return np.pad(v, 1, mode=m) ** 2


def cross_2(a, b):
    c = np.cross(a, b)
    return np.sum(c ** 2 + c)


def cross_mixed(a, b):
    return np.sum(np.cross(a, b) * np.array([1.0, -2.0, 0.5]))


def cross_axis(a, b):
    return np.sum(np.cross(a, b, axisa=0, axisb=0) ** 2)
'''


@pytest.fixture(scope="module")
def options_module(tmp_path_factory):
    pytest.importorskip("scipy")
    return _module(tmp_path_factory.mktemp("options"), "option_cases", _OPTIONS)


@pytest.mark.parametrize("name, option", [
    ("pad_mode", "mode='linear_ramp'"), ("pad_global_mode", "mode='linear_ramp'"),
    ("average_returned", "returned=True"),
    ("linspace_retstep", "retstep=True"), ("interp_period", "period=2.0"),
    ("solve_banded_structure", "assume_a='banded'")])
def test_an_unsupported_option_is_refused_when_compiled_with_its_line(options_module, name,
                                                                      option):
    f = getattr(options_module, name)
    line = f.__code__.co_firstlineno + 1
    with pytest.raises(SGCompilerError) as info:
        grad(f)(np.array([0.3, 0.6]))
    message = str(info.value)
    assert f"option_cases.py:{line}" in message and "is not supported" in message, message
    assert option in message, message
    with pytest.raises(SGCompilerError):       # also for the source, before any call
        grad(f).source


def test_an_unsupported_option_without_a_gradient_through_it_compiles(options_module):
    x = np.array([0.3, -0.6])
    assert_grad_matches(options_module.pad_constant_input, (x,), wrt=(0,))
    assert np.allclose(grad(options_module.pad_stopped)(x), 2 * x)
    # an option in a variable is known when the gradient runs (and checked then)
    assert_grad_matches(options_module.pad_local_mode, (x, "edge"), wrt=(0,))
    with pytest.raises(SGCompilerError, match="np.pad.mode='linear_ramp'. is not supp"):
        grad(options_module.pad_local_mode)(x, "linear_ramp")


@pytest.mark.parametrize("name, option", [("average_local_returned", "returned"),
                                          ("linspace_local_retstep", "retstep")])
def test_a_flag_that_makes_a_tuple_must_be_a_literal(options_module, name, option):
    """retstep=r in a variable made the adjoint code index a tuple as an array (ValueError
    in the generated code when r is True): refused when compiled, with the line."""
    f = getattr(options_module, name)
    with pytest.raises(SGCompilerError) as info:
        grad(f)(np.array([0.3, 0.6]), False)
    message = str(info.value)
    assert f"option_cases.py:{f.__code__.co_firstlineno + 1}" in message, message
    assert f"pass {option}=False as a literal" in message, message


@pytest.mark.parametrize("name, value, option", [
    ("pad_local_mode", "linear_ramp", "np.pad(mode='linear_ramp')"),
    ("interp_local_period", 2.0, "period=..."),
    ("solve_local_structure", "banded", "assume_a='banded'"),
    ("complex_local_cast", np.complex128, "complex dtype complex128"),
    ("pad_in_a_helper", "linear_ramp", "np.pad(mode='linear_ramp')")])
def test_an_unsupported_option_in_a_variable_is_refused_when_it_runs_with_its_line(
        options_module, name, value, option):
    """Issue 13: an option known only at run time raised NotImplementedError or TypeError
    from a runtime helper; it is an SGCompilerError with the function, file and line of
    the call (in the helper that makes it, for a helper), from grad, vjp and jacobian."""
    f = getattr(options_module, name)
    where = options_module.padded if name == "pad_in_a_helper" else f
    place = f"{where.__name__} (option_cases.py:{where.__code__.co_firstlineno + 1})"
    x = np.array([0.3, 0.6])
    calls = [lambda: grad(f)(x, value), lambda: sgcompiler.value_and_grad(f)(x, value),
             lambda: sgcompiler.jacobian(f, mode="rev")(x, value)]
    for call in calls:
        with pytest.raises(SGCompilerError) as info:
            call()
        message = str(info.value)
        assert message.startswith(place + ": ") and option in message, message
        assert message.endswith("]") and "[in: " in message, message


@pytest.mark.filterwarnings("ignore:Arrays of 2-dimensional vectors")
@pytest.mark.parametrize("name, shapes", [
    ("cross_2", ((2,), (2,))), ("cross_2", ((4, 2), (2,))), ("cross_mixed", ((2,), (3,))),
    ("cross_mixed", ((3, 3), (3, 2))), ("cross_axis", ((2, 3), (3, 3)))])
def test_cross_of_2_vectors(options_module, name, shapes):
    rng = np.random.default_rng(len(shapes[0]) + 3 * shapes[1][-1])
    args = tuple(rng.normal(size=s) for s in shapes)
    assert_grad_matches(getattr(options_module, name), args, wrt=(0, 1))


def _tree_sum(x, y):
    return np.sum(x + y)


def _tree_product(x, y):
    return np.sum(x * y)


@pytest.mark.parametrize("f, x, y, wrt", [
    (_tree_sum, {"a": 1.0}, 2.0, 0), (_tree_sum, {"a": 1.0}, 2.0, 1),
    (_tree_product, [1.0, 2.0], 2.0, 0), (_tree_product, [1.0, 2.0], 2.0, 1),
    (_tree_product, (1.0, 2.0), 3.0, 1)])
def test_the_primal_s_own_error_reaches_the_user(f, x, y, wrt):
    with pytest.raises(Exception) as expected:
        f(x, y)
    g = grad(f, wrt=wrt)
    for _ in range(2):         # the second call reuses the compiled code
        with pytest.raises(type(expected.value)) as info:
            g(x, y)
        assert str(info.value) == str(expected.value)
    # the same gradient for arguments the primal takes
    assert_grad_matches(f, (np.array([1.0, 2.0]), 2.0))


# --- expressions nested as deeply as CPython compiles ---------------------------------------

_DEEP = f'''import numpy as np


def products(x):
    return np.sum({" * ".join(["x"] * 300)})


def calls(x):
    return np.sum({"np.sin(" * 190}x{")" * 190})


def negations(x):
    return np.sum({"-" * 500}x * x)


def negations_again(x):
    return np.sum({"-" * 500}x * x)


def shallow(x):
    return np.sum(helper(x))


def helper(x):
    return {" + ".join(f"{k % 3 + 1}.0 * x" for k in range(260))}
'''


@pytest.fixture(scope="module")
def deep_module(tmp_path_factory):
    return _module(tmp_path_factory.mktemp("deep"), "deep_cases", _DEEP)


@pytest.mark.parametrize("name", ["products", "calls", "negations", "shallow"])
def test_deep_expressions_compile_and_their_gradients_are_right(deep_module, name):
    f = getattr(deep_module, name)
    limit = sys.getrecursionlimit()
    x = 1.002 if name == "products" else 0.7
    g = grad(f)(x)
    np.testing.assert_allclose(g, numeric_grad(f, (x,), 0), rtol=1e-6)
    assert_grad_matches(f, (np.array([0.998, -1.001]) if name == "products" else
                            np.array([0.3, -0.6]),))
    assert sys.getrecursionlimit() == limit


def test_too_deep_for_the_compiler_is_refused_with_the_line(deep_module, monkeypatch):
    from sgcompiler.pipeline import deep_code as deep
    # (the limit is below the interpreter's, so this one is not raised)
    monkeypatch.setattr(deep, "_DEEP_LIMIT", 300)
    limit = sys.getrecursionlimit()
    f = deep_module.negations_again
    line = f.__code__.co_firstlineno + 1
    with pytest.raises(SGCompilerError, match=rf"negations_again \(deep_cases.py:{line}\): an "
                                              r"expression nested \d+ levels deep is too deep"):
        grad(f)(0.5)
    assert sys.getrecursionlimit() == limit


# --- library code is not differentiated through its source by accident ------------------

_LIBRARY_CALLS = '''import colorsys

import numpy as np
import scipy.integrate
import scipy.linalg
import scipy.signal
from scipy.signal import fftconvolve


def conv(x):
    return np.sum(scipy.signal.fftconvolve(x, np.ones(3)) ** 2)


def conv_imported(x):
    return np.sum(fftconvolve(x, np.ones(3)) ** 2)


def circulant(x):
    return np.sum(scipy.linalg.solve_circulant(np.array([4.0, 1.0, 0.5]), x))


def smoothed(x):
    return np.sum(scipy.signal.savgol_filter(x, 3, 1) ** 2)


def yiq(r):
    y, i, q = colorsys.rgb_to_yiq(r, 0.2, 0.3)
    return y * i + q * r


def stopped(x):
    from_library = scipy.signal.fftconvolve(np.ones(3), np.ones(2))
    return np.sum(x * from_library[:2])
'''


@pytest.fixture(scope="module")
def library_module(tmp_path_factory):
    pytest.importorskip("scipy")
    return _module(tmp_path_factory.mktemp("library"), "library_calls", _LIBRARY_CALLS)


@pytest.mark.parametrize("name, shown, x", [
    ("conv", "scipy.signal.fftconvolve", np.ones(3)),
    ("conv_imported", "scipy.signal.fftconvolve", np.ones(3)),
    ("circulant", "scipy.linalg.solve_circulant", np.ones(3)),
    ("smoothed", "scipy.signal.savgol_filter", np.ones(5)),
    ("yiq", "colorsys.rgb_to_yiq", 0.5)])
def test_a_library_function_without_a_rule_is_refused_not_read(library_module, name, shown,
                                                                x):
    f = getattr(library_module, name)
    with pytest.raises(SGCompilerError) as info:
        grad(f)(x)
    message = str(info.value)
    assert len(info.value.problems) == 1, message     # nothing about the library's insides
    assert f"{name} (library_calls.py:" in message
    assert f"there is no derivative rule for {shown} (library code is not differentiated " \
           "through its source" in message, message
    assert "sgcompiler.adjoint" in message and "sgcompiler.differentiate_module" in message


def test_a_library_function_without_a_gradient_through_it_compiles(library_module):
    assert_grad_matches(library_module.stopped, (np.array([0.3, -0.2]),))


def test_differentiate_module_reads_a_library_s_source(library_module, monkeypatch):
    from sgcompiler.rules import registry
    monkeypatch.setattr(registry, "_SOURCE_MODULES", set())
    with pytest.raises(SGCompilerError, match="colorsys.rgb_to_yiq"):
        grad(library_module.yiq)(0.5)
    sgcompiler.differentiate_module("colorsys")
    assert_grad_matches(library_module.yiq, (0.5,))
    with pytest.raises(TypeError, match="a module or a module name"):
        sgcompiler.differentiate_module(3)


def test_a_package_installed_in_site_packages_is_a_library(tmp_path, monkeypatch):
    resolve = importlib.import_module("sgcompiler.frontend.resolve")   # (not the function)
    installed = tmp_path / "site"
    installed.mkdir()
    monkeypatch.setitem(sys.modules, "fake_installed",
                        _module(installed, "fake_installed", "def square(x):\n    return x * x\n"))
    text = "import fake_installed\n\ndef f(x):\n    return fake_installed.square(x) * 3.0\n"
    user = _module(tmp_path, "fake_user", text)
    assert grad(user.f)(2.0) == 12.0            # not in site-packages: the user's own code
    monkeypatch.setattr(resolve, "_library_roots", lambda: (str(installed) + "/",))
    user = _module(tmp_path, "fake_user_2", text)
    with pytest.raises(SGCompilerError, match="no derivative rule for fake_installed.square"):
        grad(user.f)(2.0)


def test_a_user_module_named_like_a_standard_module_is_user_code(tmp_path, monkeypatch):
    helper = _module(tmp_path, "test", "def square(x):\n    return x * x\n")
    monkeypatch.setitem(sys.modules, "test", helper)
    user = _module(tmp_path, "uses_test", "import test\n\n"
                   "def f(x):\n    return test.square(x) * 3.0\n")
    assert grad(user.f)(2.0) == 12.0


_VIEWS = '''import numpy as np


def sliced(x):
    y = x * 1.0
    r = y[1:]
    y[1] = 5.0
    return np.sum(r * x[1:])


def copied(x):
    y = x * 1.0
    r = y[1:].copy()
    y[1] = 5.0
    return np.sum(r * x[1:]) + np.sum(y * x)


def indexed(x, i):
    y = x * 1.0
    r = y[i]
    y[1] = 5.0
    return np.sum(r * x[1:])
'''


def test_a_view_of_an_array_written_later_is_refused_when_compiled(tmp_path):
    m = _module(tmp_path, "view_cases", _VIEWS)
    line = m.sliced.__code__.co_firstlineno + 2
    with pytest.raises(SGCompilerError, match=rf"sliced \(view_cases.py:{line}\): this reads "
                                              "a view of an array that is written in place"):
        grad(m.sliced).source            # before any call: nothing runs
    assert_grad_matches(m.copied, (np.array([0.5, -1.0, 2.0]),))
    # an index known only when it runs: an int is not a view, a slice is refused then
    x = np.array([0.5, -1.0, 2.0])
    assert np.allclose(grad(m.indexed)(x, 1), numeric_grad(lambda v: m.indexed(v, 1), (x,), 0))
    with pytest.raises(SGCompilerError) as info:
        grad(m.indexed)(x, slice(1, None))
    # the same kind of message as when compiled: function, file, line, text (issue 13)
    message = str(info.value)
    assert message.startswith(f"indexed (view_cases.py:{line + 14}): this reads a view"), \
        message
    assert message.endswith("]") and "[in: " in message, message


def test_a_deep_function_still_sees_a_name_rebound_later(tmp_path):
    # compiled on the deep thread, under the compile lock: the cache still checks its names
    text = ("import numpy as np\n\nact = np.sin\n\n"
            f"def f(x):\n    return np.sum(act({'-' * 400}x))\n")
    m = _module(tmp_path, "deep_rebound", text)
    g = grad(m.f)
    x = np.array([0.3, -0.5])
    assert np.allclose(g(x), np.cos(x))
    m.act = np.exp
    assert np.allclose(g(x), np.exp(x))
    assert np.allclose(grad(m.f)(x), np.exp(x))


def _linspace_of(x, y, num=5):
    return np.linspace(x, y, num)


def test_a_result_that_is_not_a_scalar_is_the_documented_error_even_if_the_gradient_fails():
    # the gradient's seed (1.0) did not fit the (5, 2) result and failed inside a runtime
    # helper (ValueError from np.reshape); the user must see the non-scalar TypeError
    with pytest.raises(TypeError, match=r"must return a scalar.*shape \(5, 2\)"):
        grad(_linspace_of)(np.array([0.5, 1.0]), np.array([2.0, 3.0]))
