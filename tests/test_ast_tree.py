"""ir/ast_tree.to_ast makes the tree gast.gast_to_ast makes (field for field, location
attribute for attribute), on the package's own source, the samples, the golden files
and a few forms the compiler never writes but a tree may hold; to_printable makes it with
the changes `_prepared` below makes, in the same pass."""
import ast
import pathlib

import gast
import numpy as np
import pytest

from sgcompiler import pipeline
from sgcompiler.ir.ast_tree import to_ast, to_printable
from specimens_control import ROWS

ROOT = pathlib.Path(__file__).resolve().parents[1]
FILES = sorted([*ROOT.glob("sgcompiler/**/*.py"), *ROOT.glob("samples/*.py"),
                *ROOT.glob("tests/golden/*.py"), *ROOT.glob("tests/specimens_*.py")])

FORMS = """
def f(a, /, b: int = 1, *args, c, d=2, **kw) -> float:  # type: ignore
    x = y = a  # type: int
    async def g(): pass
    class C(B, metaclass=M):
        z: int = 3
    try:
        pass
    except ValueError as exc:
        raise
    except Exception:
        pass
    finally:
        del x
    lambda q, *r, s=1, **t: q
    return [v async for v in w if v], {k: v for k, v in u}, x[1:2, ..., None], -1.5j, b'x'
"""


def _prepared(root):
    """What to_printable changes, made on a tree gast.gast_to_ast made, in a walk of its
    own: negative number constants become negations, statements without a line get line
    0, tuple targets become names that print them bare."""
    for node in list(ast.walk(root)):
        if isinstance(node, ast.stmt) and not hasattr(node, "lineno"):
            node.lineno = 0
        for field, value in ast.iter_fields(node):
            if isinstance(value, list):
                value[:] = [_negation(item) for item in value]
            elif isinstance(value, ast.Constant):
                setattr(node, field, _negation(value))
    for node in ast.walk(root):
        if isinstance(node, ast.Assign):
            node.targets = [_bare(target) for target in node.targets]
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            node.target = _bare(node.target)
    return root


def _negation(node):
    if isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value < 0:
        return ast.UnaryOp(op=ast.USub(), operand=ast.Constant(-node.value))
    return node


def _bare(target):
    if not isinstance(target, ast.Tuple) or not target.elts:
        return target
    text = ", ".join(ast.unparse(element) for element in target.elts)
    return ast.Name(id=text + ("," if len(target.elts) == 1 else ""), ctx=ast.Store())


def _same(tree, printed=True):
    want, got = gast.gast_to_ast(tree), to_ast(tree)
    assert ast.dump(got, include_attributes=True) == ast.dump(want, include_attributes=True)
    if printed:         # (as codegen prints it: ast.unparse needs statements' lines)
        want, got = _prepared(want), to_printable(tree)
        assert ast.dump(got, include_attributes=True) == \
            ast.dump(want, include_attributes=True)
        assert ast.unparse(got) == ast.unparse(want)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_trees_of_files_are_gasts(path):
    _same(gast.parse(path.read_text()))


def test_forms_the_compiler_does_not_write():
    _same(gast.parse(FORMS))


def test_nodes_built_without_locations_and_lists():
    stmt = gast.Assign(targets=[gast.Name("y", gast.Store(), None, None)],
                       value=gast.Call(gast.Name("f", gast.Load(), None, None),
                                       [gast.Constant(-2.0, None)], []))
    _same(stmt, printed=False)
    printed = ast.unparse(to_printable(gast.BinOp(gast.Constant(-2.0, None), gast.Pow(),
                                                  gast.Constant(2, None))))
    assert printed == "(-2.0) ** 2" and eval(printed) == 4.0
    assert [ast.dump(s) for s in to_ast([stmt, stmt])] == \
        [ast.dump(gast.gast_to_ast(stmt))] * 2
    assert to_ast("text") == "text"


def test_generated_gradients_are_gasts():
    # generated trees mix nodes with the user's locations and nodes built without any
    trees = [pipeline.gradient_tree(fn, (fn.__code__.co_varnames[0],)) for fn, _ in ROWS]
    trees.append(pipeline.gradient_tree(ROWS[6][0], ("x",), arrays=(
        ("x", (4, 3), np.dtype("float64")), ("W", (5, 5), np.dtype("float64")),
        ("U", (5, 3), np.dtype("float64")))))
    for tree in trees:
        _same(tree)
