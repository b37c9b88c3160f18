"""The printed code is the same on every supported Python version: Python 3.10's
`ast.unparse` puts parentheses around tuple targets (`(a, b) = f(x)`) where 3.11 does not."""
import gast

from sgcompiler.backend.codegen import to_source

SOURCE = """\
def f(x, y, z):
    a, b = divmod(x, y)
    (c, d), e = ((a, b), z)
    h, = [x]
    p = q = (a, b)
    for i, v in enumerate(y):
        a, *rest = (i, v, v)
    return ([s for s, t in zip(x, y)], p, q)
"""


def test_tuple_targets_print_without_parentheses():
    assert to_source(gast.parse(SOURCE), "header") == "# header\n" + SOURCE


def test_negative_constants_in_a_tuple_target_keep_their_meaning():
    source = "def f(t):\n    t[-1], t[0] = ((-2.0) ** 2, 1)\n    return t\n"
    printed = to_source(gast.parse(source), "h")
    assert printed == "# h\n" + source
