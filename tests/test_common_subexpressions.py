"""optimize/common.py (common-subexpressions) and fold-constants: what they share, what
they must not, and gradients through code they rewrote against finite differences."""
import ast
import random
import textwrap

import gast
import numpy as np
import pytest

from sgcompiler import grad, stop_gradient
from sgcompiler.optimize.algebra import fold_constants
from sgcompiler.optimize.common import share_subexpressions

from gradcheck import assert_grad_matches
from program_check import check_program
from program_grammar import Choices, write_program

PURE = frozenset({"unbroadcast"})


def shared(source: str, user_names=("a", "b", "c", "x", "y", "v", "r", "s")) -> str:
    """The body of `def f(a, b, c, x, y):` + source after the pass, as text."""
    code = "def f(a, b, c, x, y):\n" + textwrap.indent(textwrap.dedent(source), "    ")
    tree = gast.parse(code).body[0]
    share_subexpressions(tree, PURE, "np", frozenset(user_names))
    return _unparse(tree.body).strip()


def _unparse(body):
    return ast.unparse(gast.gast_to_ast(gast.Module(body=body, type_ignores=[])))


def lines(*text):
    return "\n".join(text)


@pytest.mark.parametrize("source, expected", [
    # a later expression reads the name that holds it
    ("r = a * b\ns = np.sin(a * b) + 1", lines("r = a * b", "s = np.sin(r) + 1")),
    # through a copy of an operand
    ("r = np.sum(a, axis=0)\nv = a\ns = -np.sum(v, axis=0)",
     lines("r = np.sum(a, axis=0)", "v = a", "s = -r")),
    # a later temporary computing what an earlier statement computes inside it moves up
    ("r = -(y * y)\n_t = y * y\ns = _t + r", lines("_t = y * y", "r = -_t", "s = _t + r")),
    # a temporary equal to a held name is that name
    ("r = a * b\n_t = a * b\ns = _t + r", lines("r = a * b", "s = r + r")),
    # x += -e is x -= e
    ("_e = a * y\nb += -(a * y)", lines("_e = a * y", "b -= _e")),
])
def test_shares(source, expected):
    assert shared(source) == expected


@pytest.mark.parametrize("source", [
    "r = a * b\na = c\ns = a * b + 1",              # an operand rebound
    "r = a * b\nr = c\ns = a * b + 1",              # the holder rebound
    "r = a * b\nr += 1\ns = a * b + 1",             # the holder written into
    "v = a[0:2]\nr = a * b\nv += 1\ns = a * b + 1",  # an operand written through a view
    "r = a * b\nb[0] = 1.0\ns = a * b + 1",         # an operand written into
    "r = a * b\nnp.multiply(c, 2, out=a)\ns = a * b + 1",   # ... by a call (resets)
    "r = a * b\nfor i in range(3):\n    s = a * b + 1",      # not into a loop
    "r = a * b\nif c:\n    a = c\ns = a * b + 1",             # not past a branch
    "r = np.random.normal(size=3)\ns = np.random.normal(size=3) + 1",   # draws
    "r = np.empty(3)\ns = np.empty(3) + 1",          # two buffers
    "r = f(a)\ns = f(a) + 1",                        # a call the pass does not know
    "r = a[1:]\ns = a[:1] * 2",                     # different slices
    "r = a * b\n_t = a * b\n_t += 1\ns = _t + r",   # the copy would be written into
])
def test_does_not_share(source):
    assert shared(source) == textwrap.dedent(source).strip()


def test_moves_only_temporaries_and_not_past_a_line_comment():
    assert shared("r = -(y * y)\ns = y * y + r") == "r = -(y * y)\ns = y * y + r"
    source = "r = -(y * y)\n'# line 3: s = y'\n_t = y * y\ns = _t + r"
    assert "r = -(y * y)" in shared(source)


def test_fold_constants():
    tree = gast.parse("def f(x):\n    return 1.0 / 20 / (1 + x) + 2 * 3 - x / 0\n").body[0]
    fold_constants(tree)
    text = _unparse(tree.body)
    assert "0.05 / (1 + x)" in text and "+ 6" in text and "x / 0" in text
    assert 1.0 / 20 == 0.05


# -- gradients of functions whose generated code the pass rewrote -----------------------

def squares(x, y):
    a = np.sin(x) * np.exp(-y * y)
    c = np.sqrt(x * x + y * y + 1.0)
    return np.sum(a * c + x * y)


def shared_sums(w, b):
    z = w * b
    u = np.sum(z * z, axis=0)
    v = np.sum(z * z, axis=0) + np.tanh(w * b)
    return np.sum(u * v) + np.sum(np.exp(-(w * b)))


def held_apart(x, y):
    m = stop_gradient(np.max(x * y))
    e = np.exp(x * y - m)
    return np.sum(e * (x * y)) / np.sum(e)


def in_loop(x, y):
    s = x * 0.0
    for k in range(3):
        s = s + np.cos(x * y) * np.cos(x * y) + k
        x = x * 0.9
    return np.sum(s * s)


SHAPES = [((5,), (5,)), ((3, 4), (4,)), ((2, 3), (1, 3)), ((4, 1), (1, 3))]


@pytest.mark.parametrize("f", [squares, shared_sums, held_apart, in_loop],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_gradients_match_finite_differences(f, shapes):
    rng = np.random.default_rng(len(shapes[0]) + shapes[0][0])
    args = (rng.normal(size=shapes[0]) * 0.7, rng.normal(size=shapes[1]) * 0.7)
    assert_grad_matches(f, args)


def test_generated_code_computes_a_square_once():
    g = grad(squares, wrt=(0, 1))
    g(np.ones(4), np.ones(4))
    body = g.source.split("# backward")
    assert body[0].count("y * y") == 1, g.source
    assert g.source.count("d_mul * y") <= 1, g.source


@pytest.mark.parametrize("seed", [19001, 19002, 19003, 19004, 19005, 19006])
def test_random_programs(seed):
    source, y_float = write_program(Choices(random.Random(seed).randrange))
    outcome = check_program(source, y_float)
    assert outcome.status in ("ok", "skipped"), (outcome.status, outcome.detail, source)
