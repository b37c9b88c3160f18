"""Function object -> parsed gast tree, with real file names and line numbers.

The first stage of the pipeline. It also captures the namespace the function's names refer
to (its globals, closure cells and builtins), which `resolve` uses to tell what each called
name is.
"""
from __future__ import annotations

import builtins
import inspect
import io
import os
import textwrap
import tokenize
from dataclasses import dataclass, field

import gast

from ..errors import SGCompilerError, SourceUnavailable
from .depends import note_name
from .lifted import lifted_source
from .lambdas import is_lambda, lambda_def, lambda_name
from ..ir.blocks import walk_list


@dataclass(frozen=True)
class FunctionSource:
    """A user function as the compiler sees it."""

    name: str
    qualname: str
    filename: str
    firstlineno: int
    lines: tuple[str, ...]          # the whole file, to quote source lines in messages
    tree: gast.FunctionDef          # line numbers are the file's
    globals: dict = field(repr=False)
    closure: dict = field(repr=False)   # free variable name -> cell
    function: object = field(repr=False, default=None)
    # names the front end binds itself (frontend/transforms.py: grad(g) inside f) -> objects
    introduced: dict = field(repr=False, default_factory=dict)
    # loops marked `with sgcompiler.checkpoint(every):` (frontend/forms/contexts.py):
    # ((line of the loop, every), ...), run in segments by frontend/forms/checkpoint.py
    checkpointed: tuple = ()

    @property
    def short_filename(self) -> str:
        return os.path.basename(self.filename)

    def line_text(self, lineno: int | None) -> str:
        if lineno is None or not 1 <= lineno <= len(self.lines):
            return ""
        return self.lines[lineno - 1].strip()

    def lookup(self, name: str):
        """What `name` refers to from inside the function: (found, value). The read is
        recorded: code compiled from what it finds is valid while it finds the same (a
        name the compiler introduced is fixed: it was made from recorded reads)."""
        if name in self.introduced:
            return True, self.introduced[name]
        note_name(self.globals, self.closure, name, self.function)
        if name in self.closure:
            try:
                return True, self.closure[name].cell_contents
            except ValueError:      # an empty cell: assigned later in the outer function
                return False, None
        if name in self.globals:
            return True, self.globals[name]
        if hasattr(builtins, name):
            return True, getattr(builtins, name)
        return False, None


def _undecodable(fn) -> str | None:
    """Why the file of `fn` cannot be read as text, if it cannot (Python 3.11 runs a file
    with bytes in its comments that are not in its encoding, but cannot show its source)."""
    filename = fn.__code__.co_filename
    try:
        with open(filename, "rb") as file:
            data = file.read()
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        return (f"{fn.__name__} ({os.path.basename(filename)}:{line}): the file is not valid "
                f"{encoding} text (byte {data[exc.start]:#04x} on line {line}), so its source "
                "cannot be read; save it as UTF-8, or declare its encoding on its first line "
                "(# -*- coding: latin-1 -*-)")
    except (OSError, SyntaxError, LookupError):
        pass
    return None


def parse_function(fn) -> FunctionSource:
    """Parse `fn`'s source into a gast FunctionDef whose line numbers are the file's.

    Raises:
        SGCompilerError: when the source cannot be found or `fn` is not a plain function.
    """
    if not inspect.isfunction(fn):
        raise SGCompilerError(
            f"sgcompiler differentiates Python functions; got {type(fn).__name__} {fn!r}")
    lifted = lifted_source(fn)
    if lifted is not None:
        tree, filename = lifted
        lines = tuple(inspect.linecache.getlines(filename))
        return _source(fn, tree.name, fn.__qualname__, filename, tree.lineno, lines, tree)
    if is_lambda(fn):
        return _parse_lambda(fn)
    name = fn.__name__
    try:
        lines, firstlineno = inspect.getsourcelines(fn)
        filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
    except (OSError, TypeError) as exc:
        raise SourceUnavailable(_undecodable(fn) or
            f"{name}: its source code is not available ({exc}); sgcompiler reads the source, "
            "so define the function in a file (not in an interactive prompt or exec)") from None
    text = textwrap.dedent("".join(lines))
    # (blank lines first: the parser numbers the lines as the file does, with no walk
    # of the tree to move them)
    module = gast.parse("\n" * (firstlineno - 1) + text)
    tree = module.body[0]
    if not isinstance(tree, (gast.FunctionDef, gast.AsyncFunctionDef)):
        raise SGCompilerError(f"{name} ({filename}:{firstlineno}): expected a def")
    all_lines = tuple(inspect.linecache.getlines(filename)) or tuple(lines)
    return _source(fn, name, fn.__qualname__, filename, firstlineno, all_lines, tree)


def dict_uses(tree) -> tuple:
    """What the source as written says of names used as dicts (analysis/summaries.py's
    keyed_params reads it), in the order `walk` meets it: ("keyed", name) for
    `name['key']` and `name.items()` (`.keys()`, `.values()`), and ("call", name, args,
    keywords) for a call of a plain name, with the name of each argument (None for another
    expression) and (keyword, the name of its value or None) of each keyword. Plain data:
    the front end's rewrites may change the tree afterwards."""
    uses = []
    for node in walk_list(tree):
        if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) \
                and isinstance(node.slice, gast.Constant) \
                and isinstance(node.slice.value, str):
            uses.append(("keyed", node.value.id))
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
                and node.func.attr in ("items", "keys", "values") \
                and isinstance(node.func.value, gast.Name):
            uses.append(("keyed", node.func.value.id))
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Name):
            uses.append(("call", node.func.id,
                         tuple(a.id if isinstance(a, gast.Name) else None for a in node.args),
                         tuple((k.arg, k.value.id if isinstance(k.value, gast.Name) else None)
                               for k in node.keywords)))
    return tuple(uses)


class _Parses:
    """The parses of one compilation (frontend.sharing counts `sharing`): id of a function
    -> [function, FunctionSource, its dict_uses, whether its tree is still as parsed]. A
    tree as parsed is read by those that only read it, and handed once to the front end,
    which rewrites it."""

    def __init__(self):
        self.sharing = [0]
        self.made = {}

    def clear(self):
        self.made.clear()

    def entry(self, fn):
        found = self.made.get(id(fn))
        return found if found is not None and found[0] is fn else None

    def keep(self, fn, src, pristine):
        """Keep this compilation's parse of fn (none outside one: nothing would clear it)."""
        entry = [fn, src, dict_uses(src.tree), pristine]
        if self.sharing[0]:
            self.made[id(fn)] = entry
        return entry


PARSES = _Parses()


def source_uses(fn) -> tuple:
    """(parse_function(fn), dict_uses of its tree as parsed), from this compilation's parse
    of fn when there is one.

    Raises:
        SGCompilerError: when the source cannot be read.
    """
    entry = PARSES.entry(fn) or PARSES.keep(fn, parse_function(fn), True)
    return entry[1], entry[2]


def parsed_tree(fn) -> gast.FunctionDef:
    """parse_function(fn).tree, to read only: this compilation's parse while no one has
    rewritten it yet."""
    entry = PARSES.entry(fn)
    if entry is not None and entry[3]:
        return entry[1].tree
    src = parse_function(fn)
    if entry is None and PARSES.sharing[0]:
        PARSES.keep(fn, src, True)
    return src.tree


def parse_to_rewrite(fn) -> FunctionSource:
    """parse_function(fn), whose tree the caller may rewrite: this compilation's parse
    (then no longer handed to readers), or a new one."""
    entry = PARSES.entry(fn)
    if entry is not None and entry[3]:
        entry[3] = False
        return entry[1]
    src = parse_function(fn)
    if entry is None and PARSES.sharing[0]:
        PARSES.keep(fn, src, False)
    return src


def _parse_lambda(fn) -> FunctionSource:
    """A lambda, read as the def it is equivalent to (lambdas.py)."""
    tree = lambda_def(fn)
    filename = fn.__code__.co_filename
    qualname = ".".join(fn.__qualname__.split(".")[:-1] + [tree.name])
    return _source(fn, tree.name, qualname, filename, tree.lineno,
                   tuple(inspect.linecache.getlines(filename)), tree)


def _source(fn, name, qualname, filename, firstlineno, lines, tree) -> FunctionSource:
    closure = {}
    if fn.__closure__:
        closure = dict(zip(fn.__code__.co_freevars, fn.__closure__))
    return FunctionSource(name=name, qualname=qualname, filename=filename,
                          firstlineno=firstlineno, lines=lines, tree=tree,
                          globals=fn.__globals__, closure=closure, function=fn)


def function_name(fn) -> str:
    """A function's name as generated code spells it (a lambda's: `loss_lambda_12`)."""
    return lambda_name(fn) if is_lambda(fn) else fn.__name__
