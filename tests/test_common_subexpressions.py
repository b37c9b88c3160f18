"""optimize/algebraic/common.py (common-subexpressions), fold-constants and
optimize/algebraic/signs.py (sink-negations): what they rewrite, what they must not, and
gradients through the code they rewrote against finite differences (several shapes,
broadcasting, float32)."""
import ast
import random
import textwrap

import gast
import numpy as np
import pytest

from sgcompiler import grad, stop_gradient
from sgcompiler.optimize.algebraic.algebra import fold_constants
from sgcompiler.optimize.algebraic.common import share_subexpressions
from sgcompiler.runtime import unbroadcast

from gradcheck import assert_grad_matches, checked_source
from program_check import check_program
from program_grammar import Choices, write_program

PURE = frozenset({"unbroadcast"})


def shared(source: str, user_names=("a", "b", "c", "x", "y", "v", "r", "s")) -> str:
    """The body of `def f(a, b, c, x, y):` + source after the pass, as text."""
    code = "def f(a, b, c, x, y):\n" + textwrap.indent(textwrap.dedent(source), "    ")
    tree = gast.parse(code).body[0]
    share_subexpressions(tree, PURE | {"add_at", "zeros_tree"}, "np", frozenset(user_names),
                         {"unbroadcast": unbroadcast})
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
    # past a helper that only reads its arguments
    ("r = a * b\nv = unbroadcast(c, b)\ns = a * b + v",
     lines("r = a * b", "v = unbroadcast(c, b)", "s = r + v")),
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
    # a helper's new container, written into by another helper (grad of grad of a dict)
    "r = zeros_tree(a)\n_t = zeros_tree(a)\nv = add_at(_t, 0, b)\ns = add_at(r, 1, v)",
    "r = a * b\nv = add_at(a, 0, c)\ns = a * b + 1",  # a helper may write into a
])
def test_does_not_share(source):
    assert shared(source) == textwrap.dedent(source).strip()


def test_moves_only_temporaries_and_not_past_a_line_comment():
    assert shared("r = -(y * y)\ns = y * y + r") == "r = -(y * y)\ns = y * y + r"
    source = "r = -(y * y)\n'# line 3: s = y'\n_t = y * y\ns = _t + r"
    assert "r = -(y * y)" in shared(source)


def test_fold_constants():
    tree = gast.parse("def f(x):\n    return 1.0 / 20 / (1 + x) + 2 * 3 - x / 0 + 1.0 / 6\n"
                      ).body[0]
    fold_constants(tree)
    text = _unparse(tree.body)
    assert "0.05 / (1 + x)" in text and "+ 6" in text and "x / 0" in text
    assert "1.0 / 6" in text        # 0.16666666666666666 would say less
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


# -- sink-negations (optimize/algebraic/signs.py) ----------------------------------------

def minus_paths(x, y):
    m = np.sum(x * 0.5)
    return np.sum(np.exp(x) * y) - np.log(np.sum(np.exp(y - m)))


def minus_broadcast(x, y):
    # y (rows,) is subtracted from every column of x (rows, cols), then added to again
    z = x - y[:, None]
    return np.sum(z * z) - np.sum(np.sum(x, axis=1) * y) + np.sum(np.tanh(y))


def minus_rows(x, y):
    lse = np.log(np.sum(np.exp(x), axis=1, keepdims=True))
    return np.sum((x - lse) * y)


@pytest.mark.parametrize("f, shapes", [
    (minus_paths, ((4,), (4,))), (minus_paths, ((3, 2), (3, 2))),
    (minus_paths, ((3, 2), (2,))),
    (minus_broadcast, ((3, 4), (3,))), (minus_broadcast, ((2, 5), (2,))),
    (minus_rows, ((3, 4), (3, 4))), (minus_rows, ((2, 3), (3,)))], ids=str)
def test_negations_carried_to_the_addition(f, shapes):
    rng = np.random.default_rng(sum(shapes[0]))
    args = (rng.normal(size=shapes[0]) * 0.5, rng.normal(size=shapes[1]) * 0.5)
    assert_grad_matches(f, args)


def test_a_negation_keeps_the_dtype_of_an_in_place_addition():
    # float32 x, float64 y: `dx = -e; dx += b` keeps float32, `b - e` would not
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(3, 4)).astype(np.float32), rng.normal(size=3)
    for f in (minus_broadcast, minus_paths):
        args = (x, y) if f is minus_broadcast else (x[0], y[:1] * np.ones(4))
        got = grad(f, wrt=(0, 1))(*args)
        want = grad(f, wrt=(0, 1))(*(a.astype(np.float64) for a in args))
        for g, w, a in zip(got, want, args):
            assert g.dtype == a.dtype
            np.testing.assert_allclose(g, w, rtol=2e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["softmax_xent", "mlp", "logreg", "elementwise", "gmm_em",
                                  "euler", "rnn", "while_series", "rnn_batched", "mlp_relu",
                                  "gmm_lse", "heat2d", "dict_mlp", "spectrum"])
def test_workload_operations_at_most_a_tenth_over_hand_written(name):
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benchmarks import count_ops
    from benchmarks.workloads import all_workloads
    workload = next(w for w in all_workloads() if w.name == name)
    hand, _ = count_ops.operations(count_ops.hand_tree(workload))
    ops, _ = count_ops.operations(count_ops.generated_tree(workload))
    assert ops <= 1.1 * hand, (name, ops, hand)


def log_weights(w, r):
    lp = w - np.log(np.sum(np.exp(w)))
    return np.sum(r * lp)


def row_sums(a, r):
    s = np.sum(r * np.exp(-2.0 * a), axis=1) - np.sum(a, axis=1)
    return np.sum(s * s)


@pytest.mark.parametrize("f, shapes, text", [
    (log_weights, ((3,), (4, 3)), "dw -= np.sum(dlp) / _sum * _exp"),
    (log_weights, ((5,), (5,)), "dw = dw - np.sum(dlp) / _sum * _exp"),
    (row_sums, ((3, 2), (3, 2)), "da = d_mul * -2.0 - unreduce(ds, a, 1)"),
    (row_sums, ((4, 3), (3,)), "da = d_mul * -2.0 - unreduce(ds, a, 1)")], ids=str)
def test_the_sign_moves_to_the_addition(f, shapes, text):
    rng = np.random.default_rng(sum(shapes[0]))
    args = (rng.normal(size=shapes[0]) * 0.5, rng.normal(size=shapes[1]) * 0.5)
    g = grad(f, wrt=0)
    g(*args)
    assert text in g.source and "= -" not in g.source.split("# backward")[1], g.source
    assert_grad_matches(f, args, wrt=(0,))


def sunk(source: str) -> str:
    from sgcompiler.optimize.algebraic import signs
    body = gast.parse(textwrap.dedent(source)).body
    fixed, into = signs._fixed_names(body, lambda call: True)
    gone = signs._into_readers(body, fixed, into, "np", set())
    return _unparse([s for k, s in enumerate(body) if k not in gone]).strip()


def test_a_negation_does_not_move_past_a_write_into_an_array():
    moves = "d_log = -np.sum(dlp)\ndz = d_log * 2"
    assert sunk(moves) == "dz = -(np.sum(dlp) * 2)"
    # dw shares dlp's array: after dw += g, np.sum(dlp) is another number
    kept = "dw = dlp\nd_log = -np.sum(dlp)\ndw += g\ndz = d_log * 2"
    assert sunk(kept) == kept
    # dlp rebound in between, or read twice: stays
    assert sunk("d_log = -np.sum(dlp)\ndlp = g\ndz = d_log * 2").startswith("d_log = -")
    assert sunk("d_log = -np.sum(dlp)\ndz = d_log * 2 + d_log").startswith("d_log = -")
    # not the second factor: -a * b moves, a * -b would need its own rule
    assert sunk("d_n = -a\ndz = b * d_n") == "d_n = -a\ndz = b * d_n"


def square_through_a_slice(w, b):
    # found by tests/shape_fuzz_wide.py (seed 628257444): the two contributions of
    # t1 @ t1 are one (dt1 = e; dt1 += dt1), and x = -e; x += x is not x = x - e
    t0 = w.dot(w)
    t1 = np.reshape(b, (4,))[1:-1]
    t2 = t0[:, -1] / -(1.0 + (t1 @ t1) * (t1 @ t1))
    return np.sum(t0) + np.mean(t2)


def test_a_contribution_added_to_itself():
    rng = np.random.default_rng(0)
    assert_grad_matches(square_through_a_slice, (rng.normal(size=(4, 4)) * 0.5,
                                                 rng.normal(size=4) * 0.5))


def shifted_sines(x, a, b):
    t = x + a - 3.0 * b
    return np.sum(np.sin(t))


@pytest.mark.parametrize("n, k", [(6, 4), (1, 5), (40, 3)])
def test_an_adjoint_moves_up_to_be_shared(n, k):
    """da = np.sum(dt, axis=0) is what db's statement sums inside it: da moves up and db
    reads it (gmm_lse's dlog_pi and dlog_sigma), one reduction instead of two."""
    rng = np.random.default_rng(n + k)
    x, a, b = rng.normal(size=(n, k)), rng.normal(size=k), rng.normal(size=k)
    source = checked_source(shifted_sines, (x, a, b), (1, 2))
    code = [line for line in source.splitlines() if not line.strip().startswith("#")]
    assert "db = -(da * 3.0)" in source, source
    assert sum(line.count("np.sum(") for line in code) == 1, source
