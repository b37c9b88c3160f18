"""gast tree -> standard library ast tree, as `gast.gast_to_ast` makes it, about five times
as fast: codegen converts the whole gradient before `ast.unparse` prints it, and
resolve each callee's text; gast's converter (a NodeTransformer that builds every node
through its constructor) was most of codegen's time on a long function.

The tree made is the one gast makes, field for field and attribute for attribute
(tests/test_ast_tree.py compares them): a node becomes the ast node of the same class
name, with the fields it has converted and the location attributes it has copied, except
    Name in `arguments`   ast.arg (its annotation and type comment kept)
    Name elsewhere        ast.Name(id, ctx)
    Assign                ast.Assign(targets, value): no type comment
    ExceptHandler         its name a string
    FunctionDef, ClassDef before Python 3.12: no type_params
A node whose class ast does not have becomes None, as in gast.
"""
from __future__ import annotations

import ast
import sys

_MISSING = object()
# the types of field values that are never converted (_value returns them as they are)
_SCALARS = frozenset({int, str, type(None), float, bool, complex, bytes})
# (class of a gast node, class of its ast node) -> the locations _located copies
_COPIED: dict = {}


def to_ast(node):
    """The ast tree of gast tree `node` (a node, a list of them, or anything else, which
    is returned as it is)."""
    return _value(node)


def _value(value):
    if isinstance(value, ast.AST):
        return _convert(value)
    if isinstance(value, list):
        return [_value(item) for item in value]
    return value


def _convert(node):
    convert = _CONVERTERS.get(type(node))
    if convert is None:
        convert = _CONVERTERS[type(node)] = _converter(type(node))
    return convert(node)


def _converter(cls):
    """The function that converts a node of class `cls`."""
    name = cls.__name__
    special = _SPECIAL.get(name)
    if special is not None:
        return special
    target = getattr(ast, name, None)
    if target is None:
        return lambda node: None        # (not part of the ast: gast drops it too)
    return _generic(target)


def _generic(target):
    def convert(node):
        new = target.__new__(target)
        fields = node.__dict__
        for field in node._fields:
            if field in fields:
                value = fields[field]
                # (_value, without its call for the numbers and strings most fields hold)
                setattr(new, field, value if type(value) in _SCALARS else _value(value))
        for attribute in node._attributes:
            found = fields.get(attribute, _MISSING)
            if found is _MISSING:
                found = getattr(type(node), attribute, _MISSING)
            if found is not _MISSING:
                setattr(new, attribute, found)
        return new
    return convert


def _located(new, node):
    """ast.copy_location(new, node), without the exceptions of missing locations."""
    fields, cls = node.__dict__, type(node)
    copied = _COPIED.get((cls, type(new)))
    if copied is None:
        copied = _COPIED[cls, type(new)] = tuple(
            attribute for attribute in ("lineno", "col_offset", "end_lineno", "end_col_offset")
            if attribute in node._attributes and attribute in new._attributes)
    for attribute in copied:
        found = fields.get(attribute, _MISSING)
        if found is _MISSING:
            found = getattr(cls, attribute, _MISSING)
        # (the end_ ones are copied even when None, as copy_location does)
        if found is not _MISSING and (found is not None or attribute.startswith("end_")):
            setattr(new, attribute, found)
    return new


def _name(node):
    return _located(ast.Name(_value(node.id), _value(node.ctx)), node)


def _arg(node):
    if node is None:
        return None
    return _located(ast.arg(_value(node.id), _value(node.annotation),
                            _value(node.type_comment)), node)


def _arguments(node):
    return ast.arguments([_arg(a) for a in node.posonlyargs], [_arg(a) for a in node.args],
                         _arg(node.vararg), [_arg(a) for a in node.kwonlyargs],
                         _value(node.kw_defaults), _arg(node.kwarg), _value(node.defaults))


def _assign(node):
    return _located(ast.Assign(_value(node.targets), _value(node.value)), node)


def _except_handler(node):
    if not node.name:
        return _generic(ast.ExceptHandler)(node)
    return _located(ast.ExceptHandler(_value(node.type), node.name.id, _value(node.body)),
                    node)


def _function(target):
    def convert(node):
        return _located(target(_value(node.name), _value(node.args), _value(node.body),
                               _value(node.decorator_list), _value(node.returns),
                               _value(node.type_comment)), node)
    return convert


def _class(node):
    return _located(ast.ClassDef(_value(node.name), _value(node.bases),
                                 _value(node.keywords), _value(node.body),
                                 _value(node.decorator_list)), node)


_SPECIAL = {"Name": _name, "arguments": _arguments, "Assign": _assign,
            "ExceptHandler": _except_handler}
if sys.version_info < (3, 12):
    _SPECIAL.update(FunctionDef=_function(ast.FunctionDef),
                    AsyncFunctionDef=_function(ast.AsyncFunctionDef), ClassDef=_class)
_CONVERTERS: dict = {}

__all__ = ["to_ast"]
