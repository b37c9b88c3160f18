"""The recipe: function -> generated gradient function. One call per pass, in order.

    parse -> check -> resolve -> normalize -> activity -> shapes -> reverse -> optimize
          -> codegen -> load

`compile_gradient` is cached on (code object, wrt, scalar arguments, parameter trees, the
shapes and dtypes of array arguments, rules version), so each function is compiled once per
way it is differentiated and kind of arguments (and again after a user registers a
derivative rule). Code compiled for known shapes (analysis/sizes.py) needs fewer run-time
helpers and writes into arrays that die (optimize/buffers.py).

A cached gradient is used only while every name its compilation read still refers to the
same object (frontend/depends.py: closure cells, globals, module attributes, callees' code
and defaults); pieces of user functions are kept per function object, since they are bound
to its cells and defaults. Compilation holds one re-entrant lock.
"""
from __future__ import annotations

import ast
import dataclasses
import hashlib
import types
import weakref
from dataclasses import dataclass

import gast
import numpy

from . import rules
from .backend.codegen import to_source
from .backend.loader import bind, compile_source
from .analysis.activity import activity
from .analysis.shapes import shapes
from .analysis.sizes import WEAK
from .analysis.summaries import SUMMARIES
from .frontend import front_end
from .frontend.depends import LOCK, Depends, function_reads, note, recording
from .frontend.resolve import local_names
from .optimize.cleanup import optimize, runtime_helpers
from .reverse.sweeps import reverse, reverse_piece

STAGES = ("normalize", "activity", "grad")


@dataclass(frozen=True)
class Compiled:
    """A compiled gradient: its text and code, ready to bind to a function's closure."""

    source: str
    code: object
    extra: dict           # names inlined rules use -> objects
    wrt: tuple[str, ...]
    returns_value: bool = True   # the function returns (value, gradient), else gradient
    result_shape: tuple | None = None   # the primal result's shape, when the compiler knows it
    depends: Depends = Depends(())   # what the names it was compiled from referred to

    def bind(self, fn):
        """The gradient function for `fn` (same code object, its own closure cells)."""
        return bind(self.code, fn, self.extra)

    def checker(self, fn):
        """() -> whether the function `bind(fn)` made is still right (see depends.py)."""
        return self.depends.checker(fn, function_reads(fn))


_CACHE: dict = {}
_CACHE_SIZE = 1024      # compiled gradients kept (the oldest go first)


def compile_gradient(fn, wrt: tuple[str, ...], scalars: frozenset = frozenset(),
                     trees: frozenset = frozenset(), value: bool = True,
                     arrays: tuple = ()) -> Compiled:
    """Compile the gradient of `fn` with respect to the parameters named in `wrt`.

    Args:
        fn: a plain Python function whose source is available.
        wrt: parameter names to differentiate with respect to.
        scalars: parameters known to be Python numbers (lets the compiler drop shape work).
        trees: parameters that are dicts, lists or tuples (parameter trees).
        value: False asks for the gradient alone (the loss value is then not computed
            when nothing else needs it); granted only when the result is provably a
            scalar, since otherwise the caller must check it (`returns_value` says).
        arrays: (parameter, shape, dtype) of the arrays the code is specialised for: it
            is then only valid for arguments of exactly those shapes and dtypes.
    Raises:
        SGCompilerError: for anything that cannot be differentiated correctly.
    """
    # the rules version: a rule registered later takes effect for gradients compiled later
    key = (fn.__code__, wrt, scalars, trees, value, arrays, id(fn.__globals__),
           rules.version())
    with LOCK:      # one compilation at a time: a piece is published before it is done
        compiled = _CACHE.get(key)
        # the code is right for `fn` only while its names mean what they meant
        if compiled is not None and compiled.depends.holds_for(fn):
            compiled.depends.replay(fn)
            return compiled
        with recording() as seen:
            compiled = _compile(fn, wrt, scalars, trees, value, arrays)
        compiled = dataclasses.replace(compiled, depends=Depends.of(seen, fn))
        _CACHE.pop(key, None)
        if len(_CACHE) >= _CACHE_SIZE:
            del _CACHE[next(iter(_CACHE))]
        _CACHE[key] = compiled
        return compiled


def _compile(fn, wrt, scalars, trees, value, arrays=()) -> Compiled:
    src, resolution, norm = _front(fn)
    specialised = {p: (shape, dtype) for p, shape, dtype in arrays}
    act = activity(norm, resolution, wrt, specialised, scalars, SUMMARIES)
    shape_facts = shapes(norm, resolution, scalars, trees, specialised, SUMMARIES)
    value = value or not shape_facts.is_scalar(norm.returned)
    gradient = reverse(norm, resolution, act, shape_facts, wrt, piece, value)
    np_name = gradient.linker.name_for("np", numpy) if specialised else None
    facts = dict(shape_facts.concrete)
    facts.update({p: ((), WEAK) for p in scalars if p not in facts})   # Python numbers
    optimize(gradient.tree, runtime_helpers(gradient.linker.names), local_names(src.tree),
             _small(shape_facts, norm.namer), specialised, np_name, facts)
    header = (f"gradient of {src.name} ({src.short_filename}:{src.firstlineno}) "
              f"with respect to {', '.join(wrt)}, generated by sgcompiler")
    source = to_source(gradient.tree, header)
    extra = dict(gradient.linker.names)
    free = set(extra) | set(fn.__code__.co_freevars)
    code = compile_source(source, f"<sgcompiler {src.qualname}_grad>", free)
    text = "\n\n".join([source] + [p.source for p in _pieces_of(gradient.linker)])
    return Compiled(text, code[gradient.tree.name], extra, wrt, value,
                    shape_facts.shape(norm.returned))


@dataclass
class Piece:
    """The forward and backward functions of a user function called with active
    arguments; the cells are filled once compiled (a recursive call refers to them first)."""

    forward_name: str
    backward_name: str
    forward_cell: object
    backward_cell: object
    source: str = ""
    pieces: tuple = ()
    depends: Depends | None = None      # None while it is being compiled


# user function -> {(active, arrays, trees, ...): Piece}; a function that is gone has none
_PIECES = weakref.WeakKeyDictionary()


_PIECE_SHAPES = 8      # sets of argument shapes a user function gets pieces of its own for


def piece(fn, active: tuple[str, ...], arrays: tuple = (), trees=frozenset()) -> Piece:
    """The (cached) forward/backward pair of user function `fn` for `active` parameters,
    specialised for `arrays` ((parameter, shape, dtype) of array arguments whose shapes the
    caller knows); `trees` are the parameters the caller passes dicts, lists or tuples.

    Raises:
        SGCompilerError: for anything in `fn` that cannot be differentiated.
    """
    with LOCK:
        # pieces are bound to `fn` (its closure cells and defaults): one set per function
        mine = _PIECES.get(fn)
        if mine is None:
            mine = _PIECES[fn] = {}
        if arrays and sum(1 for k in mine if k[1]) >= _PIECE_SHAPES:
            arrays = ()         # (a recursion whose shapes change on every call, say)
        key = (active, arrays, trees, id(fn.__globals__), rules.version())
        found = mine.get(key)
        if found is not None and found.depends is None:
            return found        # being compiled: a recursive call, on this thread
        if found is not None and found.depends.holds_for(fn):
            found.depends.replay(fn)
            return found
        name = fn.__name__
        if arrays:      # a name of its own, the same in every process: its code differs
            digest = hashlib.sha1(repr((active, arrays) + ((sorted(trees),) if trees else ())
                                       ).encode()).hexdigest()[:4]
            name = f"{name}_{digest}"
        made = Piece(f"{name}_forward", f"{name}_backward", types.CellType(),
                     types.CellType())
        mine[key] = made
        try:
            with recording() as seen:
                for read in function_reads(fn):     # its code and defaults are bound in
                    note(*read)
                _compile_piece(fn, active, made, arrays, trees)
        except BaseException:
            del mine[key]
            raise
        made.depends = Depends.of(seen, fn)
        return made


def _compile_piece(fn, active, made, arrays=(), trees=frozenset()):
    src, resolution, norm = _front(fn)
    specialised = {p: (shape, dtype) for p, shape, dtype in arrays}
    act = activity(norm, resolution, active, specialised, callees=SUMMARIES)
    shape_facts = shapes(norm, resolution, trees=trees, arrays=specialised, callees=SUMMARIES)
    names = (norm.namer.fresh(made.forward_name), norm.namer.fresh(made.backward_name))
    trees = reverse_piece(norm, resolution, act, shape_facts, active, names, piece)
    np_name = trees.linker.name_for("np", numpy) if specialised else None
    helpers, user_names = runtime_helpers(trees.linker.names), local_names(src.tree)
    # the forward function's parameters are the user function's: their shapes are known
    # the backward first: its saved values have the primal's shapes, its seed the
    # result's; what it no longer reads, the forward need not save (or compute)
    seed = trees.backward.args.args[0].id
    facts = dict(shape_facts.concrete)
    if norm.returned in facts:
        facts[seed] = facts[norm.returned]
    optimize(trees.backward, helpers, user_names, arrays={seed: facts[seed]} if specialised
             and seed in facts else None, np_name=np_name, facts=facts)
    _drop_unread_saved(trees.forward, trees.backward)
    optimize(trees.forward, helpers, user_names, arrays=specialised, np_name=np_name,
             facts=shape_facts.concrete)
    module = gast.Module(body=[trees.forward, trees.backward], type_ignores=[])
    shapes_text = ", ".join(f"{_path_text(p)} {shape}" for p, shape, _ in arrays)
    header = (f"forward and backward of {src.name} ({src.short_filename}:{src.firstlineno}) "
              f"for {', '.join(active)}{' with ' + shapes_text if arrays else ''}, generated "
              "by sgcompiler")
    source = to_source(module, header)
    extra = dict(trees.linker.names)
    codes = compile_source(source, f"<sgcompiler {src.qualname}_pieces>",
                           set(extra) | set(fn.__code__.co_freevars))
    made.forward_cell.cell_contents = bind(codes[names[0]], fn, extra)
    made.backward_cell.cell_contents = bind(codes[names[1]], fn, extra)
    made.source = source
    made.pieces = tuple(trees.linker.pieces)


def _front(fn):
    front = front_end(fn)
    return front.source, front.resolution, front.norm


def _drop_unread_saved(forward, backward):
    """Values the forward function saves that the optimized backward no longer reads
    (an operand it read only for its shape, say) are not saved."""
    saved = backward.args.args[1].id
    unpack = next((s for s in backward.body if isinstance(s, gast.Assign) and
                   isinstance(s.targets[0], gast.Tuple) and isinstance(s.value, gast.Name)
                   and s.value.id == saved), None)
    last = forward.body[-1] if forward.body else None
    if unpack is None or not isinstance(last, gast.Return) or \
            not isinstance(last.value, gast.Tuple) or len(last.value.elts) != 2 or \
            not isinstance(last.value.elts[1], gast.Tuple):
        return
    pack = last.value.elts[1]
    names = [e.id for e in unpack.targets[0].elts]
    if len(pack.elts) != len(names):
        return
    read = {n.id for stmt in backward.body if stmt is not unpack for n in gast.walk(stmt)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}
    keep = [k for k, name in enumerate(names) if name in read]
    unpack.targets[0].elts = [unpack.targets[0].elts[k] for k in keep]
    pack.elts = [pack.elts[k] for k in keep]
    if not keep:
        backward.body.remove(unpack)


def _path_text(path) -> str:
    """`x`, or `params['W1']` for an array of a parameter tree."""
    if isinstance(path, str):
        return path
    return path[0] + "".join(f"[{k!r}]" for k in path[1:])


def _pieces_of(linker):
    """Every piece the code calls, directly or through other pieces, each once."""
    seen, order, todo = set(), [], list(linker.pieces)
    while todo:
        p = todo.pop(0)
        if id(p) not in seen:
            seen.add(id(p))
            order.append(p)
            todo.extend(p.pieces)
    return order


def _small(shape_facts, namer):
    """name -> whether it holds a number (a scalar variable, or the adjoint of one)."""
    adjoints = namer.adjoints()
    return lambda name: shape_facts.is_scalar(adjoints.get(name, name))


def dump_stage(fn, wrt: tuple[str, ...], stage: str, scalars=frozenset(), arrays=()) -> str:
    """The text of one stage, for debugging: 'normalize', 'activity' or 'grad' (the code
    `grad` compiles, for arguments of any shape or for the `scalars` and `arrays` given as
    to `compile_gradient`)."""
    if stage == "grad":
        return compile_gradient(fn, wrt, scalars, value=False, arrays=arrays).source
    with LOCK:          # the callee summaries it fills are shared
        return _dump(fn, wrt, stage)


def _dump(fn, wrt, stage):
    _, resolution, norm = _front(fn)
    body = "\n".join(ast.unparse(gast.gast_to_ast(s)) for s in norm.body)
    if stage == "normalize":
        return body + "\n"
    act = activity(norm, resolution, wrt, callees=SUMMARIES)
    return (f"varied: {', '.join(sorted(act.varied))}\n"
            f"useful: {', '.join(sorted(act.useful))}\n"
            f"active: {', '.join(sorted(act.active))}\n")
