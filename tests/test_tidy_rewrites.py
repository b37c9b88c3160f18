"""tidy (optimize/tidy/cleanup.py) rewrites each of its forms, alone and nested, and leaves
a tree none applies to as it is: it skips its transformer when no node matches a rewrite
(issue 18's compile time), which must never skip one that applies."""
import ast

import gast

from sgcompiler.ir.ast_tree import to_ast
from sgcompiler.optimize.tidy.cleanup import tidy


def _helper(g, x, keep=None, axis=0):
    return g


def _tidied(source, helpers=None):
    tree = gast.parse(source).body[0]
    tidy(tree, helpers or {})
    return ast.unparse(to_ast(tree)).splitlines()[1:]


def test_each_rewrite():
    assert _tidied("def f(a, b):\n    c = a + -b") == ["    c = a - b"]
    assert _tidied("def f(a, b):\n    a += -b") == ["    a -= b"]
    assert _tidied("def f(d, x):\n    c = d * x + d * x") == ["    c = d * x * 2"]
    assert _tidied("def f(g, x):\n    c = h(g, x, None, 0)", {"h": _helper}) == \
        ["    c = h(g, x)"]


def test_nested_rewrites():
    # (the outer sum's operands become the same tree only once the inner ones are tidied)
    assert _tidied("def f(a, b):\n    c = (a + -b) + (a - b)") == ["    c = (a - b) * 2"]
    assert _tidied("def f(g, x):\n    c = np.sin(h(g, x, None) + -x)", {"h": _helper}) == \
        ["    c = np.sin(h(g, x) - x)"]


def test_nothing_to_tidy():
    lines = ["    c = a + b * 2.0", "    a += b", "    d = h(a, b, 1)", "    e = d - -a"]
    assert _tidied("def f(a, b):\n" + "\n".join(lines), {"h": _helper}) == lines
