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
    return _PLAIN(node)


def to_printable(node):
    """to_ast(node), made in the same pass ready for `ast.unparse` to print as Python reads
    it back: a negative number constant becomes a negation (-2.0 as a constant prints as
    `-2.0`, so `(-2.0) ** 2` would print as `-2.0 ** 2`, which Python reads as
    -(2.0 ** 2)), a statement without a line gets line 0 (unparse reads the lines of
    statements), and tuple targets print bare on every Python version (see `_bare`)."""
    return _PRINTABLE(node)


def _converters(printable: bool):
    """The function that converts a value (to_ast's, or to_printable's): its converters by
    class are made on first use, and convert the children with it."""
    table: dict = {}

    def value(value):
        if isinstance(value, ast.AST):
            convert = table.get(type(value))
            if convert is None:
                convert = table[type(value)] = _converter(type(value), value_of, printable)
            return convert(value)
        if isinstance(value, list):
            return [value_of(item) for item in value]
        return value
    value_of = value
    return value


def _converter(cls, value, printable):
    """The function that converts a node of class `cls`, its children with `value`."""
    name = cls.__name__
    special = _SPECIAL.get(name)
    target = getattr(ast, name, None)
    if special is not None:
        convert = special(value)
    elif target is None:
        return lambda node: None        # (not part of the ast: gast drops it too)
    else:
        convert = _generic(target, value)
    if not printable:
        return convert
    if name == "Constant":
        return lambda node: _positive(convert(node))
    if name in _TARGET_HOLDERS:
        return lambda node: _bare_targets(_lined(convert(node)))
    if issubclass(cls, ast.stmt):
        return lambda node: _lined(convert(node))
    return convert


def _generic(target, value_of):
    def convert(node):
        new = target.__new__(target)
        fields = node.__dict__
        for field in node._fields:
            if field in fields:
                value = fields[field]
                # (value_of, without its call for the numbers and strings most fields hold)
                setattr(new, field, value if type(value) in _SCALARS else value_of(value))
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


def _name(value):
    return lambda node: _located(ast.Name(value(node.id), value(node.ctx)), node)


def _arg(node, value):
    if node is None:
        return None
    return _located(ast.arg(value(node.id), value(node.annotation),
                            value(node.type_comment)), node)


def _arguments(value):
    def convert(node):
        return ast.arguments([_arg(a, value) for a in node.posonlyargs],
                             [_arg(a, value) for a in node.args], _arg(node.vararg, value),
                             [_arg(a, value) for a in node.kwonlyargs],
                             value(node.kw_defaults), _arg(node.kwarg, value),
                             value(node.defaults))
    return convert


def _assign(value):
    return lambda node: _located(ast.Assign(value(node.targets), value(node.value)), node)


def _except_handler(value):
    generic = _generic(ast.ExceptHandler, value)

    def convert(node):
        if not node.name:
            return generic(node)
        return _located(ast.ExceptHandler(value(node.type), node.name.id, value(node.body)),
                        node)
    return convert


def _function(target):
    def made(value):
        def convert(node):
            return _located(target(value(node.name), value(node.args), value(node.body),
                                   value(node.decorator_list), value(node.returns),
                                   value(node.type_comment)), node)
        return convert
    return made


def _class(value):
    def convert(node):
        return _located(ast.ClassDef(value(node.name), value(node.bases),
                                     value(node.keywords), value(node.body),
                                     value(node.decorator_list)), node)
    return convert


def _lined(new):
    if not hasattr(new, "lineno"):
        new.lineno = 0
    return new


def _positive(new):
    value = new.value
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
        return ast.UnaryOp(op=ast.USub(), operand=ast.Constant(-value))
    return new


# what holds targets that may be tuples
_TARGET_HOLDERS = ("Assign", "For", "AsyncFor", "comprehension")


def _bare_targets(new):
    """Print the tuple targets of `new` (an assignment, a loop, a comprehension) without
    parentheses. Python 3.10's `ast.unparse` writes `(a, b) = ...` and `for (i, v) in`,
    3.11 and later `a, b = ...`; a name whose text is the bare tuple prints the same on
    both (the elements keep their own parentheses: `(a, b), c = ...`)."""
    if isinstance(new, ast.Assign):
        new.targets = [_bare(target) for target in new.targets]
    else:
        new.target = _bare(new.target)
    return new


def _bare(target):
    if not isinstance(target, ast.Tuple) or not target.elts:
        return target
    text = ", ".join(ast.unparse(element) for element in target.elts)
    if len(target.elts) == 1:
        text += ","
    return ast.Name(id=text, ctx=ast.Store())


# the classes converted otherwise than field for field: name -> (value -> converter)
_SPECIAL = {"Name": _name, "arguments": _arguments, "Assign": _assign,
            "ExceptHandler": _except_handler}
if sys.version_info < (3, 12):
    _SPECIAL.update(FunctionDef=_function(ast.FunctionDef),
                    AsyncFunctionDef=_function(ast.AsyncFunctionDef), ClassDef=_class)
_PLAIN, _PRINTABLE = _converters(False), _converters(True)

__all__ = ["to_ast", "to_printable"]
