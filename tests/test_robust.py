"""Regression tests for issue 13's robustness items: text from the user's file never
becomes generated code, array subclasses are refused, std/var at zero spread, the primal's
own errors, deep expressions, and library code that is not differentiated by accident."""
import hashlib
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
