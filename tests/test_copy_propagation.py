"""The optimizer's copy propagation: `a = b` where a is a temporary's adjoint, read later
in the same block before b changes, reads b instead. Source in, source out."""
import ast
import textwrap

import gast
import pytest

from sgcompiler.optimize.tidy.cleanup import propagate_copies


def propagated(src, user_names=()):
    tree = gast.parse(textwrap.dedent(src)).body[0]
    propagate_copies(tree, frozenset(user_names))
    return ast.unparse(gast.gast_to_ast(tree)).split("\n", 1)[1]


def body(src):
    return textwrap.indent(textwrap.dedent(src).strip(), "    ")


@pytest.mark.parametrize("before, after", [
    # read later, b unchanged: read b
    ("d_a = dx\ny = pop()\nz = d_a * 2\nreturn z", "y = pop()\nz = dx * 2\nreturn z"),
    # the last read may be in the statement that rebinds b (it reads first)
    ("d_a = dx\ndx = d_a * 2\nreturn dx", "dx = dx * 2\nreturn dx"),
    # a copy back with nothing in between does nothing
    ("d_a = dx\ny = pop()\ndx = d_a\nz = d_a + dx\nreturn z", "y = pop()\nz = dx + dx\nreturn z"),
    # b rebound before the last read: keep the copy
    ("d_a = dx\ndx = dx * 2\nz = d_a + dx\nreturn z", "d_a = dx\ndx = dx * 2\nz = d_a + dx\nreturn z"),
    # x += y rebinds a number: keep the copy
    ("d_a = dx\ndx += 1.0\nz = d_a\nreturn z", "d_a = dx\ndx += 1.0\nz = d_a\nreturn z"),
    # a assigned twice: keep
    ("d_a = dx\nz = d_a\nd_a = y\nreturn z + d_a", "d_a = dx\nz = d_a\nd_a = y\nreturn z + d_a"),
    # a read in a loop that also rebinds b: keep
    ("d_a = dx\nfor i in r:\n    dx = dx + d_a\nreturn dx",
     "d_a = dx\nfor i in r:\n    dx = dx + d_a\nreturn dx"),
    # a read in a branch that does not touch b: read b
    ("d_a = dx\nif c:\n    z = d_a\nelse:\n    z = 0.0\nreturn z",
     "if c:\n    z = dx\nelse:\n    z = 0.0\nreturn z"),
    # a names a user variable's adjoint: kept for the reader
    ("dk = d_neg\nreturn dk", "dk = d_neg\nreturn dk"),
    # b is a global (something else may rebind it): keep
    ("d_a = g\nreturn d_a", "d_a = g\nreturn d_a"),
    # copies of copies, one after the other: each goes (the block is rebuilt once)
    ("d_a = dx\nd_b = d_a\nd_c = d_b\nz = d_c * d_b\nreturn z", "z = dx * dx\nreturn z"),
    # a branch whose statements all go keeps a pass (a copy back goes, and a dead copy
    # stays for drop-dead)
    ("if c:\n    dx = dx\nreturn dx", "if c:\n    pass\nreturn dx"),
    ("if c:\n    d_a = dx\n    dx = d_a\nreturn dx", "if c:\n    d_a = dx\nreturn dx"),
])
def test_propagation(before, after):
    assert propagated(f"def f(dx, y, r, c):\n{body(before)}\n") == body(after)


def test_read_before_the_copy_keeps_it():
    # inside a loop, a read earlier in the body sees the previous trip's copy
    src = "def f(dx, r):\n    z = 0.0\n    for i in r:\n        z = z + d_a\n        d_a = dx\n" \
          "        dx = dx * 2\n    return z\n"
    assert "d_a = dx" in propagated(src)


def test_user_names_stay():
    assert propagated("def f(dx):\n    _t = dx\n    return _t\n", user_names={"_t"}) == \
        "    _t = dx\n    return _t"


# --- numbers nested into their one use, inside loops --------------------------------------------

from sgcompiler.optimize.loops.nest import nest_single_uses  # noqa: E402
from sgcompiler.optimize.tidy.cleanup import pure_assign, is_temporary, while_condition  # noqa: E402


def nested(src, numbers=("x", "y", "n")):
    tree = gast.parse(textwrap.dedent(src)).body[0]
    nest_single_uses(tree, is_temporary, lambda name: name in numbers,
                     lambda stmt: pure_assign(stmt, {}))
    while_condition(tree)
    return ast.unparse(gast.gast_to_ast(tree)).split("\n", 1)[1]


def loop(src):
    return "def f(x, y, n, t, c, v):\n    for i in n:\n" + \
        textwrap.indent(textwrap.dedent(src).strip(), "        ") + "\n    return y\n"


@pytest.mark.parametrize("before, after", [
    # past a tape push, into the next assignment
    ("_a = x * 2.0\nt.append(y)\ny = y + _a", "t.append(y)\ny = y + x * 2.0"),
    # chains of them: the comparison of a lowered while
    ("_b = abs(x)\n_c = _b > 1.0\ny = _c", "y = abs(x) > 1.0"),
    # not past a statement that rebinds what it reads
    ("_a = x * 2.0\nx = t.pop()\ny = _a", "_a = x * 2.0\nx = t.pop()\ny = _a"),
    # not into a branch (it would run on some trips only, after other code)
    ("_a = x * 2.0\nif c:\n    y = _a", "_a = x * 2.0\nif c:\n    y = _a"),
    # not an array (arrays keep one operation per statement)
    ("_a = v * 2.0\ny = _a", "_a = v * 2.0\ny = _a"),
    # not read twice
    ("_a = x * 2.0\ny = _a + _a", "_a = x * 2.0\ny = _a + _a"),
    # not a call with effects
    ("_a = g(x)\ny = _a", "_a = g(x)\ny = _a"),
])
def test_nesting(before, after):
    assert nested(loop(before)) == nested(loop(after)) == \
        "    for i in n:\n" + textwrap.indent(after, "        ") + "\n    return y"


def test_straight_line_code_keeps_its_statements():
    src = "def f(x):\n    _a = x * 2.0\n    y = _a + 1.0\n    return y\n"
    assert "_a = x * 2.0" in nested(src)


def test_lowered_while_is_a_while_again():
    src = "def f(x):\n    while True:\n        if x > 1.0:\n            x = x / 2.0\n" \
          "        else:\n            break\n    return x\n"
    assert nested(src) == "    while x > 1.0:\n        x = x / 2.0\n    return x"
