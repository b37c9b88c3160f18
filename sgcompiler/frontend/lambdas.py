"""A lambda's source, found by its code object, as a def (part of parsing, source.py).

`inspect` gives a lambda the lines of the statement it sits in, which may hold several
lambdas. The one that made the function is the lambda on its first line whose body holds
the source positions of every instruction of its code (Python 3.11's `co_positions`), the
innermost one if they nest. It becomes a def named after where it was defined:

    loss = lambda x: np.sum(x ** 2)        # line 12
    ->  def loss_lambda_12(x):
            return np.sum(x ** 2)

Names: `<name>_lambda_<line>` when assigned to a name, `<function>_lambda_<line>` inside a
function, `lambda_<line>` otherwise (`_2`, `_3` ... for later lambdas on the same line
that are not assigned to a name).
"""
from __future__ import annotations

import copy
import functools
import linecache
import os

import gast

from ..errors import SGCompilerError, SourceUnavailable
from ..ir.blocks import walk


def is_lambda(fn) -> bool:
    return getattr(fn, "__name__", None) == "<lambda>"


def lambda_name(fn) -> str:
    """The name of the def lambda `fn` becomes (`loss_lambda_12`; `lambda_12` when its
    source cannot be found: parsing it says why)."""
    try:
        return _located(fn.__code__, fn.__qualname__)[1]
    except SGCompilerError:
        return f"lambda_{fn.__code__.co_firstlineno}"


def lambda_def(fn) -> gast.FunctionDef:
    """The def equivalent of lambda `fn`, with the file's line numbers (a new tree).

    Raises:
        SGCompilerError: when the lambda cannot be told apart in its source.
    """
    node, name = _located(fn.__code__, fn.__qualname__)
    node = copy.deepcopy(node)
    tree = gast.FunctionDef(name=name, args=node.args,
                            body=[gast.Return(value=node.body)], decorator_list=[],
                            returns=None, type_comment=None, type_params=[])
    gast.copy_location(tree, node)
    tree.end_lineno, tree.end_col_offset = node.end_lineno, node.end_col_offset
    gast.copy_location(tree.body[0], node.body)
    return tree


@functools.lru_cache(maxsize=256)
def _located(code, qualname):
    """The Lambda node that made `code` (shared: copy it before changing it), its name."""
    lines = linecache.getlines(code.co_filename)
    where = f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}"
    if not lines:
        raise SourceUnavailable(
            f"lambda ({where}): its source code is not available; sgcompiler reads the "
            "source, so define the lambda in a file (not in an interactive prompt or exec)")
    try:
        module = gast.parse("".join(lines))
    except SyntaxError:
        raise SourceUnavailable(f"lambda ({where}): the source file cannot be parsed, so the "
                              "lambda's source cannot be found; define the function with def "
                              "in a file") from None
    on_line = [n for n in walk(module)
               if isinstance(n, gast.Lambda) and n.lineno == code.co_firstlineno]
    on_line.sort(key=lambda n: n.col_offset)
    found = [n for n in on_line if _holds(n.body, code) and _same_parameters(n, code)]
    if not found:
        raise SourceUnavailable(
            f"lambda ({where}): no lambda in the source at line {code.co_firstlineno} "
            "matches this function (was the file edited after it was imported?); define "
            "the function with def, or import the file again")
    # nested lambdas: the innermost whose body still holds every instruction
    node = min(found, key=lambda n: _span(n.body))
    return node, _name(module, node, on_line.index(node), qualname)


def _positions(code):
    """(line, col) start and end of each instruction that has a source span."""
    for line, end_line, col, end_col in code.co_positions():
        if None in (line, end_line, col, end_col) or (line, col) == (end_line, end_col):
            continue
        yield (line, col), (end_line, end_col)


def _span(node):
    return (node.end_lineno - node.lineno, node.end_col_offset - node.col_offset)


def _holds(body, code) -> bool:
    start, end = (body.lineno, body.col_offset), (body.end_lineno, body.end_col_offset)
    positions = list(_positions(code))
    return bool(positions) and all(start <= a and b <= end for a, b in positions)


def _same_parameters(node, code) -> bool:
    args = node.args
    names = [a.id for a in args.posonlyargs + args.args + args.kwonlyargs]
    count = code.co_argcount + code.co_kwonlyargcount
    return names == list(code.co_varnames[:count])


def _name(module, node, index, qualname) -> str:
    """`loss_lambda_12`: after the name it is assigned to or the function it is in."""
    for parent in walk(module):
        if isinstance(parent, gast.Assign) and parent.value is node and \
                len(parent.targets) == 1 and isinstance(parent.targets[0], gast.Name):
            return f"{parent.targets[0].id}_lambda_{node.lineno}"
    outer = [p for p in qualname.split(".")[:-1] if p != "<locals>"]
    prefix = outer[-1] + "_" if outer and outer[-1].isidentifier() else ""
    suffix = f"_{index + 1}" if index else ""
    return f"{prefix}lambda_{node.lineno}{suffix}"
