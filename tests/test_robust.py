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
