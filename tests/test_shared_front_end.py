"""A helper's front end is made once per compilation: the one its summary made
(analysis/summaries.py, for the caller's shapes) is handed to the compilation of its
piece (frontend.read_front_end, front_end). What the handed-over front end read is still
recorded in the piece's cache entry, and a helper that check refuses is still refused.
The user code lives in modules of its own, written to temporary files."""
import cProfile
import importlib.util
import itertools
import pstats

import numpy as np
import pytest

from gradcheck import numeric_grad
from sgcompiler import SGCompilerError, grad

_count = itertools.count()


def load(tmp_path, source):
    path = tmp_path / f"shared_{next(_count)}.py"
    path.write_text("import numpy as np\n\n" + source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _calls(call, function, module) -> int:
    """How many times `call()` calls `function` of the compiler's `module` (a file)."""
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        call()
    finally:
        profiler.disable()
    return sum(stat[1] for (file, _, name), stat in pstats.Stats(profiler).stats.items()
               if name == function and file.endswith(module))


HELPERS = ("def h0(y, c):\n    z = np.tanh(y * 1.5 + c)\n    return z * 0.5\n\n"
           "def h1(y, c):\n    return np.sin(y) * c\n\n"
           "def h2(y, c):\n    return y * y + c\n\n"
           "def f(x, c):\n    y = h0(x, c)\n    y = h1(y, c)\n    y = h2(y, c)\n"
           "    return np.sum(y)\n")


@pytest.mark.parametrize("shape", [(3,), (2, 3)])
def test_each_helper_is_normalized_once(tmp_path, shape):
    m = load(tmp_path, HELPERS)
    rng = np.random.default_rng(0)
    x, c = rng.uniform(-1, 1, shape), rng.uniform(-1, 1, shape[-1:])     # broadcast
    made = {}
    assert _calls(lambda: made.setdefault("g", grad(m.f)(x, c)), "normalize",
                  "normalize.py") == 4       # f, h0, h1, h2
    np.testing.assert_allclose(made["g"], numeric_grad(m.f, (x, c), 0), rtol=1e-6,
                               atol=1e-8)


def test_each_function_is_parsed_once(tmp_path):
    # (the front end, the summaries' search for dicts and factories' search for factories
    # read the same parse)
    m = load(tmp_path, HELPERS)
    x, c = np.linspace(-1, 1, 4), np.linspace(0.5, 1, 4)
    assert _calls(lambda: grad(m.f)(x, c), "parse_function", "source.py") == 4
    assert _calls(lambda: grad(m.f)(x[:2], c[:2]), "parse_function", "source.py") == 4


def test_a_factory_helper_is_still_read_as_its_def(tmp_path):
    m = load(tmp_path, "def make(s):\n    def inner(y):\n        return np.tanh(y) * s\n"
                       "    return inner\n\n"
                       "def f(x):\n    g = make(3.0)\n    return np.sum(g(x) ** 2)\n")
    x = np.array([0.3, -0.7, 1.1])
    np.testing.assert_allclose(grad(m.f)(x), numeric_grad(m.f, (x,), 0), rtol=1e-6)


def test_a_helper_made_for_another_caller_follows_a_rebound_global(tmp_path):
    # g's compilation finds h's piece in the cache (made while compiling f); it is valid
    # only while `act` is what h's front end found, which f's summary of h read
    m = load(tmp_path, "act = np.sin\n\ndef h(y):\n    return act(y) * 2.0\n\n"
                       "def f(x):\n    return np.sum(h(x))\n\n"
                       "def g(x):\n    return np.sum(h(x) * x)\n")
    x = np.array([0.3, -0.7, 1.1])
    np.testing.assert_allclose(grad(m.f)(x), 2.0 * np.cos(x), rtol=1e-12)
    m.act = np.exp
    np.testing.assert_allclose(grad(m.g)(x), numeric_grad(m.g, (x,), 0), rtol=1e-6)
    np.testing.assert_allclose(grad(m.f)(x), 2.0 * np.exp(x), rtol=1e-12)


def test_a_helper_that_check_refuses_is_refused_with_its_line(tmp_path):
    m = load(tmp_path, "def h(y):\n    global _state\n    return y * 2.0\n\n"
                       "def f(x):\n    return np.sum(h(x))\n")
    with pytest.raises(SGCompilerError, match=r"shared_\d+\.py:4.*'global'"):
        grad(m.f)(np.ones(3))
    with pytest.raises(SGCompilerError, match="'global'"):      # and again, from cache
        grad(m.f)(np.ones(3))
