"""The recipes: function -> generated gradient function (reverse mode), and function ->
generated tangent function (forward mode, `compile_jvp`). Every pass that runs, in order:

    front end   parse, check, resolve, normalize                  (frontend/)
    analysis    activity, shapes (concrete shapes when specialised) (analysis/)
    reverse     tighten; plan (the reverser's first run: what the adjoint sweep reads);
                sweeps (its second run: primal sweep saving that, then adjoint sweep)
    optimize    the OPTIMIZATIONS below, in that order              (optimize/)
    back end    codegen, load                                      (backend/)

Forward mode shares the front end, the analyses, the optimizations and the back end:

    front end, activity, shapes                                      (as above)
    forward     the tangent pass: each statement, then its tangent   (forward/)
    optimize    the same OPTIMIZATIONS, codegen, load

A user function called with active arguments gets a forward and a backward function of its
own (a "piece"), made by the same recipe (`_compile_piece`); in forward mode, a tangent
function of its own (`jvp_piece`). `dump_stage` prints the code
after any of these steps (`sgcompiler FILE:f --stage NAME`).

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
import inspect
import sys
import textwrap
import threading
import types
import weakref
from dataclasses import dataclass

import gast
import numpy

from . import rules
from .backend.codegen import to_source
from .backend.loader import bind, compile_source
from .backend.jit import NOT_FOR_NUMBA, check_backend, for_numba, jitted
from .backend.namespace import to_namespace
from .errors import SGCompilerError
from .analysis.activity import activity
from .analysis.shapes import shapes
from .analysis.sizes import WEAK
from .analysis.summaries import SUMMARIES
from .analysis.unknown import header_note, unknown_shapes
from .frontend import front_end
from .frontend import depends
from .frontend.complex_values import may_hold_complex
from .frontend.depends import LOCK, Depends, function_reads, note, recording
from .frontend.resolve import local_names
from .frontend.source import function_name
from .optimize.algebra import fill_numbers, fold_algebra, quiet_reciprocals
from .optimize.batching import batch_outer_products
from .optimize.buffers import reuse_buffers
from .optimize.code_shapes import code_shapes
from .optimize.cleanup import (coalesce_copies, drop_dead, drop_lonely_comments,
                               free_after_last_use, is_temporary, propagate_copies,
                               pure_assign, pure_names, runtime_helpers, tidy,
                               while_condition)
from .optimize.factoring import factor_sums
from .optimize.hoisting import hoist_row_products
from .optimize.nest import nest_single_uses
from .optimize.reread import for_rereading, gradient_only
from .reverse.sweeps import plan_sweeps, reverse, reverse_piece
from .reverse.tighten import tighten
from .runtime.namespace import bound_extra, check_uses, current_extra
from .forward.batch import NotBatchable
from .forward.tangents import forward

PYTHON_NUMBER = WEAK     # the dtype of a Python number (in `arrays`: a leaf of a tree)


@dataclass(frozen=True)
class CallKind:
    """What a call's arguments tell the compiler (see compile_gradient's arguments)."""

    scalars: frozenset = frozenset()    # parameters that are Python numbers
    trees: frozenset = frozenset()      # parameters that are dicts, lists or tuples
    arrays: tuple = ()                  # (parameter or tree path, shape, dtype)
    # an argument is an array of another library (dask): the code writes into no array
    # (no `out=`, no `+=`), for any shape, as code made to be read again does
    lazy: bool = False
    namespace: bool = False             # arrays of another library (runtime/namespace.py)


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
    # code made with `namespace=True`: the NumPy names it reaches through xp, with lines
    namespace_uses: tuple | None = None
    backend: str = "numpy"           # "numba": bind gives numba's compiled function

    def bind(self, fn, xp=None):
        """The gradient function for `fn` (same code object, its own closure cells);
        code made with `namespace=True` is bound to the array namespace `xp`, code made
        for numba is numba's compiled function."""
        if self.namespace_uses is not None:
            check_uses(self.namespace_uses, xp, function_name(fn))
            return bind(self.code, fn, bound_extra(self.extra, xp))
        function = bind(self.code, fn, self.extra)
        if self.backend == "numba":
            return jitted(function, f"the gradient of {fn.__name__}")
        return function

    def checker(self, fn, extra=()):
        """() -> whether the function `bind(fn)` made is still right (see depends.py),
        and the reads `extra` (what `fn` itself was made from) still hold."""
        return self.depends.checker(fn, function_reads(fn) + tuple(extra))


_CACHE: dict = {}
_CACHE_SIZE = 1024      # compiled gradients kept (the oldest go first)


def compile_gradient(fn, wrt: tuple[str, ...], scalars: frozenset = frozenset(),
                     trees: frozenset = frozenset(), value: bool = True,
                     arrays: tuple = (), rereadable: bool = False,
                     namespace: bool = False, backend: str = "numpy") -> Compiled:
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
        rereadable: code for the compiler to differentiate again (optimize/reread.py),
            for any shape, it and the pieces it calls; with `value=False` it returns the
            gradient alone (checking at run time that the result is a scalar).
        namespace: code for arrays of another array library (runtime/namespace.py): for
            any shape, reaching NumPy through `xp`; `Compiled.bind` takes the namespace.
        backend: "numba": code numba can compile (backend/jit.py: no `del`, no batched
            per-trip products); `Compiled.bind` then gives numba's compiled function.
    Raises:
        SGCompilerError: for anything that cannot be differentiated correctly.
    """
    # the rules version: a rule registered later takes effect for gradients compiled later
    key = (fn.__code__, wrt, scalars, trees, value, arrays, id(fn.__globals__),
           rules.version(), rereadable, namespace, check_backend(backend))
    return deep(fn, _compile_cached, key, fn, wrt, scalars, trees, value, arrays, rereadable,
                namespace, backend)


def _compile_cached(key, fn, wrt, scalars, trees, value, arrays, rereadable,
                    namespace=False, backend="numpy") -> Compiled:
    with LOCK:      # one compilation at a time: a piece is published before it is done
        compiled = _CACHE.get(key)
        # the code is right for `fn` only while its names mean what they meant
        if compiled is not None and compiled.depends.holds_for(fn):
            compiled.depends.replay(fn)
            return compiled
        with recording() as seen:
            compiled = _compile(fn, wrt, scalars, trees, value, arrays, rereadable=rereadable,
                                namespace=namespace, backend=backend)
        return _kept(_CACHE, key, dataclasses.replace(compiled, depends=Depends.of(seen, fn)))


def _kept(cache: dict, key, compiled):
    """`compiled`, stored under `key` as the newest entry of `cache` (the oldest goes when
    the cache is full)."""
    cache.pop(key, None)
    if len(cache) >= _CACHE_SIZE:
        del cache[next(iter(cache))]
    cache[key] = compiled
    return compiled


def _complex_values(fn, arrays, rereadable=False, batch=None):
    """Complex mode (rules/registry.py) for compiling `fn` when it may hold complex values
    (frontend/complex_values.py), or when the code that calls it does."""
    on = rules.complex_mode() or may_hold_complex(fn, arrays)
    if on and rereadable:
        code = fn.__code__
        raise SGCompilerError(f"{function_name(fn)} ({code.co_filename}:"
                              f"{code.co_firstlineno}): computes with complex values, and "
                              "sgcompiler cannot yet differentiate the gradient of such code "
                              "again (grad of grad, hessian) or call it inside a "
                              "differentiated function; use first derivatives (grad, jvp, "
                              "vjp) of it")
    if on and batch is not None:
        raise NotBatchable("complex values")
    return rules.complex_values(on)


def _compile(fn, wrt, scalars, trees, value, arrays=(), trace=None,
             rereadable=False, namespace=False, backend="numpy") -> Compiled:
    with _complex_values(fn, arrays, rereadable):
        return _compile_now(fn, wrt, scalars, trees, value, arrays, trace, rereadable,
                            namespace, backend)


def _compile_now(fn, wrt, scalars, trees, value, arrays, trace, rereadable,
                 namespace=False, backend="numpy") -> Compiled:
    trace = trace or _Trace()
    wanted, pieces = value, (_rereadable_piece if rereadable else
                             _namespace_piece if namespace else piece)
    src, resolution, norm = _front(fn, trace)
    specialised = {p: (shape, dtype) for p, shape, dtype in arrays}
    act = activity(norm, resolution, wrt, specialised, scalars, SUMMARIES)
    trace("activity", act)
    shape_facts = shapes(norm, resolution, scalars, trees, specialised, SUMMARIES)
    trace("shapes", shape_facts)
    # (read from the normal form now: the sweeps reuse its statements, and the
    # optimizations rewrite them)
    shapes_note = _shapes_note(norm, resolution, shape_facts, act, specialised)
    # (a complex result is refused by the caller, which therefore needs the value)
    value = value or not shape_facts.is_scalar(norm.returned) or rules.complex_mode()
    norm = tighten(norm, resolution, act, shape_facts)
    trace("tighten", norm)
    plan = plan_sweeps(norm, resolution, act, shape_facts, pieces, keep_stops=rereadable)
    trace("plan", plan)
    gradient = reverse(norm, resolution, act, shape_facts, wrt, plan, pieces, value)
    trace("reverse", gradient.tree)
    facts = dict(shape_facts.concrete)
    facts.update({p: ((), WEAK) for p in scalars if p not in facts})   # Python numbers
    known = _specialisation(gradient.linker, src, shape_facts, norm, specialised, facts)
    optimize(gradient.tree, known, trace, skip=NOT_FOR_NUMBA if backend == "numba" else ())
    if backend == "numba":
        for_numba(gradient.tree)
    if rereadable:
        for_rereading(gradient.tree, norm.namer, gradient.linker)
        if value and not wanted:
            gradient_only(gradient.tree, gradient.linker)
            value = False
    uses = None
    if namespace:
        uses = to_namespace(gradient.tree, src.lookup, gradient.linker,
                            f"{_title(src)} ({src.short_filename}:{src.firstlineno})")
        trace("namespace", gradient.tree)
    header = (f"gradient of {_title(src)} ({src.short_filename}:{src.firstlineno}) "
              f"with respect to {', '.join(wrt)}, generated by sgcompiler{shapes_note}")
    source = to_source(gradient.tree, header)
    trace("codegen", source)
    extra = {**src.introduced, **gradient.linker.names}
    free = set(extra) | set(fn.__code__.co_freevars)
    code = compile_source(source, _filename(src, "grad", rereadable and source), free)
    text = "\n\n".join([source] + [p.source for p in _pieces_of(gradient.linker)])
    return Compiled(text, code[gradient.tree.name], extra, wrt, value,
                    shape_facts.shape(norm.returned), namespace_uses=uses, backend=backend)


@dataclass(frozen=True)
class Analysed:
    """What the front end and the activity analysis made of a function (for explain)."""

    source: object          # frontend FunctionSource
    resolution: object
    norm: object            # the normal form
    activity: object        # analysis.activity.Activity


def analyse(fn, wrt: tuple[str, ...], scalars: frozenset = frozenset(),
            arrays: tuple = ()) -> Analysed:
    """The front end and the activity analysis, run as `compile_gradient` runs them.

    Raises:
        SGCompilerError: for anything that cannot be differentiated correctly.
    """
    with _complex_values(fn, arrays):
        src, resolution, norm = _front(fn)
        specialised = {p: (shape, dtype) for p, shape, dtype in arrays}
        act = activity(norm, resolution, wrt, specialised, scalars, SUMMARIES)
    return Analysed(src, resolution, norm, act)


def gradient_tree(fn, wrt: tuple[str, ...], scalars: frozenset = frozenset(),
                  arrays: tuple = (), trees: frozenset = frozenset()) -> gast.FunctionDef:
    """The gradient's tree after the last optimization: the code codegen prints."""
    kept = {}
    _compile(fn, wrt, scalars, trees, False, arrays,
             lambda stage, made: kept.__setitem__(stage, made))
    return kept[OPTIMIZATIONS[-1][0]]


@dataclass(frozen=True)
class Specialisation:
    """What the optimizations know about the code they rewrite, worked out once."""

    arrays: dict            # parameter -> (shape, dtype) the code is specialised for ({}: any)
    facts: dict             # name -> (shape, dtype) the shapes pass found for the primal
    np_name: str | None     # numpy's name in the generated code (when specialised)
    small: object           # name -> whether it holds a number (nothing worth freeing)
    helpers: dict           # names of runtime helpers in the code -> the helpers
    user_names: frozenset   # the user's own names: never folded away
    pure: frozenset         # names whose calls only compute a value (helpers, namespaces)
    # whether loop-invariant products move out of loops (tangent code, whose values
    # need not match the primal's to the last bit: optimize/hoisting.py)
    hoist: bool = False


def _specialisation(linker, src, shape_facts, norm, arrays, facts,
                    hoist=False) -> Specialisation:
    np_name = linker.name_for("np", numpy) if arrays else None
    return Specialisation(arrays, facts, np_name, _small(shape_facts, norm.namer),
                          runtime_helpers(linker.names), frozenset(local_names(src.tree)),
                          pure_names(linker.names, norm.body, src.lookup), hoist)


def _shapes_note(norm, resolution, shape_facts, act, specialised) -> str:
    """For code specialised for shapes, the header's lines (each after a newline) that say
    what it is specialised for and which values' shapes are not known, and why."""
    if not specialised:
        return ""
    note = header_note(specialised, unknown_shapes(norm, resolution, shape_facts,
                                                   act.active))
    return "".join("\n" + line for line in textwrap.wrap(note, 88))


def _fold_algebra(tree, known, run):
    run["shapes"] = code_shapes(tree, known.arrays, known.np_name, known.helpers, known.facts)
    run["reciprocals"] = fold_algebra(tree.body, run["shapes"](), known.np_name)


# (name, step, only for code specialised for shapes): every optimization, in order. `run`
# carries what one step leaves for a later one (the shape oracle, the reciprocals).
OPTIMIZATIONS = (
    ("coalesce-copies", lambda tree, k, run: coalesce_copies(tree, k.user_names), False),
    ("propagate-copies", lambda tree, k, run: propagate_copies(tree, k.user_names), False),
    ("tidy", lambda tree, k, run: tidy(tree, k.helpers), False),
    ("fill-numbers", lambda tree, k, run: fill_numbers(tree, k.helpers, k.np_name, k.facts),
     True),
    ("drop-dead", lambda tree, k, run: drop_dead(tree, k.pure), False),
    ("nest", lambda tree, k, run: nest_single_uses(
        tree, is_temporary, k.small, lambda stmt: pure_assign(stmt, k.pure)), False),
    ("while-condition", lambda tree, k, run: while_condition(tree), False),
    ("fold-algebra", _fold_algebra, True),
    ("factor-sums", lambda tree, k, run: factor_sums(tree.body, run["shapes"](), k.np_name),
     True),
    ("hoist-row-products", lambda tree, k, run: k.hoist and hoist_row_products(
        tree, run["shapes"](), k.np_name, lambda name: name not in k.user_names), True),
    ("reuse-buffers", lambda tree, k, run: reuse_buffers(run["shapes"]), True),
    ("quiet-reciprocals", lambda tree, k, run: quiet_reciprocals(
        tree.body, run["reciprocals"], k.np_name), True),
    ("batch-outer-products", lambda tree, k, run: batch_outer_products(tree, k.np_name),
     True),
    ("drop-lonely-comments", lambda tree, k, run: drop_lonely_comments(tree), False),
    ("free-after-last-use", lambda tree, k, run: free_after_last_use(tree, k.small), False),
)


def optimize(tree: gast.FunctionDef, known: Specialisation, trace=None,
             skip=()) -> gast.FunctionDef:
    """Run every optimization on `tree` in place (those for known shapes only when the
    code is specialised; none named in `skip`) and return it."""
    trace = trace or _Trace()
    run = {}
    for name, step, specialised_only in OPTIMIZATIONS:
        if specialised_only and not known.arrays or name in skip:
            continue
        step(tree, known, run)
        trace(name, tree)
    return tree


_DEEP_LIMIT = 60_000            # frames: about 4 per level of nesting, so ~15000 levels
_DEEP_STACK = 512 * 2 ** 20     # bytes of stack for the thread that compiles deep code
_DEEP_LOCK = threading.Lock()
_DEEP_RUNNING = [0, None]       # deep compilations running, the recursion limit before


def deep(fn, work, *args, **kwargs):
    """`work(*args)`; when it runs out of recursion (the passes walk expressions
    recursively, and CPython compiles `x*x*...*x` 2000 terms long), once more on a thread
    with a large stack under a higher recursion limit. Deeper than that is refused.

    Raises:
        SGCompilerError: for an expression nested too deeply even so.
    """
    if threading.current_thread().name == "sgcompiler-deep" or LOCK._is_owned():
        # (on the worker already; or inside a compilation this thread holds the lock
        # for: the outermost call retries, since a worker would wait for the lock)
        return work(*args, **kwargs)
    try:
        return work(*args, **kwargs)
    except RecursionError:
        pass
    outcome = {}
    reading = depends.recordings()

    def run():
        depends.record_into(reading)    # the reads count for the caller's recordings
        try:
            outcome["value"] = work(*args, **kwargs)
        except BaseException as exc:        # (re-raised in the caller's thread)
            outcome["error"] = exc
    with _DEEP_LOCK:
        if not _DEEP_RUNNING[0]:
            _DEEP_RUNNING[1] = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_DEEP_LIMIT, _DEEP_RUNNING[1]))
        _DEEP_RUNNING[0] += 1
        size = threading.stack_size(_DEEP_STACK)
        try:
            thread = threading.Thread(target=run, name="sgcompiler-deep")
            thread.start()
        finally:
            threading.stack_size(size)
    try:
        thread.join()
    finally:
        with _DEEP_LOCK:
            _DEEP_RUNNING[0] -= 1
            if not _DEEP_RUNNING[0]:
                sys.setrecursionlimit(_DEEP_RUNNING[1])
    error = outcome.get("error")
    if isinstance(error, RecursionError):
        raise _too_deep(fn) from None
    if error is not None:
        raise error
    return outcome["value"]


def _too_deep(fn) -> SGCompilerError:
    """An error at the most deeply nested expression of `fn` (found without recursion)."""
    src = parse_source_text(fn)
    deepest, line = 0, None
    todo = [(node, 1) for node in ast.iter_child_nodes(src)] if src is not None else []
    while todo:
        node, depth = todo.pop()
        if depth > deepest and hasattr(node, "lineno"):
            deepest, line = depth, node.lineno
        todo.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    where = f"{fn.__code__.co_filename.rsplit('/', 1)[-1]}:" \
            f"{fn.__code__.co_firstlineno + (line or 1) - 1}"
    return SGCompilerError(f"{fn.__name__} ({where}): an expression nested {deepest} levels "
                           "deep is too deep for sgcompiler; split it into several "
                           "statements")


def parse_source_text(fn):
    """`fn`'s source as a stdlib ast Module (its first line is line 1), or None."""
    try:
        return ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError, RecursionError, MemoryError):
        return None


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


def _title(src) -> str:
    """How a header names the function: `Model.loss with self bound` for a method bound
    to its object (printed as Model_loss_grad(w)), else its name."""
    if src.qualname != src.name and "<" not in src.qualname and \
            src.qualname.replace(".", "_") == src.name:
        return f"{src.qualname} with self bound"
    return src.name


def _filename(src, kind, text=None) -> str:
    """The name generated code is registered under in linecache. Code made to be read
    again has its text's digest in it: inspect finds a function's source by that name,
    and the code for other shapes must not take its place."""
    if not text:
        return f"<sgcompiler {src.qualname}_{kind}>"
    return f"<sgcompiler {src.qualname}_{kind} {hashlib.sha1(text.encode()).hexdigest()[:8]}>"


_PIECE_SHAPES = 8      # sets of argument shapes a user function gets pieces of its own for


def piece(fn, active: tuple[str, ...], arrays: tuple = (), trees=frozenset(),
          rereadable: bool = False, namespace: bool = False) -> Piece:
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
        if rereadable or namespace:
            arrays = ()         # code for any shape (optimize/reread.py; no out= buffers)
        key = (active, arrays, trees, id(fn.__globals__), rules.version(), rereadable) + \
            (("namespace",) if namespace else ())
        found = _found_piece(mine, key, fn)
        if found is not None:
            return found
        # a piece already made for these shapes is found above even past the limit: the
        # primal and adjoint sweeps of one call site ask for it separately, and must get
        # the same forward/backward pair
        if arrays and sum(1 for k in mine if k[0] != "jvp" and k[1]) >= _PIECE_SHAPES:
            arrays = ()         # (a recursion whose shapes change on every call, say)
            key = (active, arrays, trees, id(fn.__globals__), rules.version(), rereadable) + \
                (("namespace",) if namespace else ())
            found = _found_piece(mine, key, fn)
            if found is not None:
                return found
        name = function_name(fn)
        if rereadable:
            name = f"{name}_plain"
        if namespace:
            name = f"{name}_xp"
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
                _compile_piece(fn, active, made, arrays, trees, rereadable, namespace)
        except BaseException:
            del mine[key]
            raise
        made.depends = Depends.of(seen, fn)
        return made


def _rereadable_piece(fn, active, arrays=(), trees=frozenset()) -> Piece:
    """The pieces code made to be read again calls: made to be read again too."""
    return piece(fn, active, arrays, trees, rereadable=True)


def _namespace_piece(fn, active, arrays=(), trees=frozenset()) -> Piece:
    """The pieces code for arrays of another library calls: NumPy reached through the
    namespace of the gradient that is running (runtime/namespace.py: CURRENT)."""
    return piece(fn, active, arrays, trees, namespace=True)


def _compile_piece(fn, active, made, arrays=(), trees=frozenset(), rereadable=False,
                   namespace=False):
    with _complex_values(fn, arrays, rereadable):
        _compile_piece_now(fn, active, made, arrays, trees, rereadable, namespace)


def _compile_piece_now(fn, active, made, arrays, trees, rereadable, namespace=False):
    pieces = _rereadable_piece if rereadable else _namespace_piece if namespace else piece
    src, resolution, norm = _front(fn)
    specialised = {p: (shape, dtype) for p, shape, dtype in arrays}
    act = activity(norm, resolution, active, specialised, callees=SUMMARIES)
    shape_facts = shapes(norm, resolution, trees=trees, arrays=specialised, callees=SUMMARIES)
    names = (norm.namer.fresh(made.forward_name), norm.namer.fresh(made.backward_name))
    norm = tighten(norm, resolution, act, shape_facts)
    plan = plan_sweeps(norm, resolution, act, shape_facts, pieces, piece=True,
                       keep_stops=rereadable)
    trees = reverse_piece(norm, resolution, act, shape_facts, active, names, plan, pieces)
    np_name = trees.linker.name_for("np", numpy) if specialised else None
    helpers, user_names = runtime_helpers(trees.linker.names), frozenset(local_names(src.tree))
    pure = pure_names(trees.linker.names, norm.body, src.lookup)
    # the backward first: its saved values have the primal's shapes, its seed the
    # result's; what it no longer reads, the forward need not save (or compute)
    seed = trees.backward.args.args[0].id
    facts = dict(shape_facts.concrete)
    if norm.returned in facts:
        facts[seed] = facts[norm.returned]
    seeded = {seed: facts[seed]} if specialised and seed in facts else {}
    optimize(trees.backward, Specialisation(seeded, facts, np_name, _nothing_small, helpers,
                                            user_names, pure))
    _drop_unread_saved(trees.forward, trees.backward)
    # the forward function's parameters are the user function's: their shapes are known
    optimize(trees.forward, Specialisation(specialised, shape_facts.concrete, np_name,
                                           _nothing_small, helpers, user_names, pure))
    if rereadable:
        for_rereading(trees.forward, norm.namer, trees.linker)
        for_rereading(trees.backward, norm.namer, trees.linker)
    if namespace:
        where = f"{_title(src)} ({src.short_filename}:{src.firstlineno})"
        for tree in (trees.forward, trees.backward):
            to_namespace(tree, src.lookup, trees.linker, where)
    module = gast.Module(body=[trees.forward, trees.backward], type_ignores=[])
    shapes_text = ", ".join(f"{_path_text(p)} {shape}" for p, shape, _ in arrays)
    header = (f"forward and backward of {_title(src)} ({src.short_filename}:{src.firstlineno}) "
              f"for {', '.join(active)}{' with ' + shapes_text if arrays else ''}, generated "
              "by sgcompiler")
    source = to_source(module, header)
    extra = {**src.introduced, **trees.linker.names}
    codes = compile_source(source, _filename(src, "pieces", rereadable and source),
                           set(extra) | set(fn.__code__.co_freevars))
    if namespace:       # (the namespace of whichever gradient calls it)
        extra = current_extra(extra)
    made.forward_cell.cell_contents = bind(codes[names[0]], fn, extra)
    made.backward_cell.cell_contents = bind(codes[names[1]], fn, extra)
    made.source = source
    made.pieces = tuple(trees.linker.pieces)


def _nothing_small(name) -> bool:
    return False


def _front(fn, trace=None):
    front = front_end(fn, trace=trace)
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
    """name -> whether it holds a number (a scalar variable, or its adjoint or tangent)."""
    derived = {**namer.adjoints(), **namer.tangents()}
    return lambda name: shape_facts.is_scalar(derived.get(name, name))


# every step `dump_stage` can show, in the order they run ("grad": the final text,
# with the pieces of the user functions it calls)
STAGES = ("parse", "resolve", "normalize", "activity", "shapes", "tighten", "plan", "reverse",
          *(name for name, _, _ in OPTIMIZATIONS), "codegen", "grad")


FORWARD_STAGES = ("parse", "resolve", "normalize", "activity", "shapes", "forward",
                  *(name for name, _, _ in OPTIMIZATIONS), "codegen", "jvp")


def dump_stage(fn, wrt: tuple[str, ...], stage: str, scalars=frozenset(), arrays=(),
               mode: str = "reverse") -> str:
    """The text after one step of the recipe (a name in STAGES, or in FORWARD_STAGES for
    mode="forward"), for debugging: the code, or what an analysis found. For arguments of
    any shape, or for the `scalars` and `arrays` given as to `compile_gradient`; a step
    that does not run for them (an optimization for known shapes) shows nothing."""
    if mode == "forward":
        return deep(fn, _dump_forward, fn, wrt, stage, scalars, arrays)
    return deep(fn, _dump_stage, fn, wrt, stage, scalars, arrays)


def _dump_stage(fn, wrt, stage, scalars, arrays) -> str:
    if stage == "grad":
        return compile_gradient(fn, wrt, scalars, value=False, arrays=arrays).source
    if stage not in STAGES:
        raise ValueError(f"no stage {stage!r}; the stages are {', '.join(STAGES)}")
    trace = _Trace(stage)
    with LOCK:          # one compilation at a time (the callee summaries are shared)
        _compile(fn, wrt, scalars, frozenset(), False, arrays, trace)
    return trace.text if trace.text is not None else \
        f"# stage {stage} does not run for this function and these arguments\n"


class _Trace:
    """Called by the steps with what each made; keeps the text of one stage (none: keeps
    nothing, and makes no text)."""

    def __init__(self, stage=None):
        self.stage, self.text = stage, None

    def __call__(self, stage, made):
        if stage == self.stage:
            self.text = _TEXTS.get(stage, _tree_text)(made)


def _tree_text(tree) -> str:
    """A function's code, comments included (without codegen's header line)."""
    return to_source(tree, "").split("\n", 1)[1]


def _body_text(body) -> str:
    return "\n".join(ast.unparse(gast.gast_to_ast(s)) for s in body) + "\n"


def _resolution_text(resolution) -> str:
    return "".join(f"{name}: {callee.kind}\n" for name, callee in
                   sorted(resolution.callees.items()))


def _activity_text(act) -> str:
    return (f"varied: {', '.join(sorted(act.varied))}\n"
            f"useful: {', '.join(sorted(act.useful))}\n"
            f"active: {', '.join(sorted(act.active))}\n")


def _shapes_text(facts) -> str:
    lines = []
    for name in sorted(facts.classes):
        found = facts.concrete.get(name)
        shape = f"  {found[0]} {found[1]}" if found else ""
        lines.append(f"{name}: {facts.kinds.get(name, '')} {facts.classes[name]}{shape}")
    return "\n".join(lines) + "\n"


def _plan_text(plan) -> str:
    return (f"the adjoint sweep reads: {', '.join(sorted(plan.reads)) or 'nothing saved'}\n"
            f"loops planned: {len(plan.loop_reverses)}\n")


def _dump_forward(fn, wrt, stage, scalars, arrays):
    if stage in ("jvp", "grad"):
        return compile_jvp(fn, wrt, scalars, arrays=arrays).source
    if stage not in FORWARD_STAGES:
        raise ValueError(f"no stage {stage!r} in forward mode; the stages are "
                         f"{', '.join(FORWARD_STAGES)}")
    trace = _Trace(stage)
    _compile_jvp(fn, wrt, scalars, frozenset(), arrays, trace)
    return trace.text if trace.text is not None else \
        f"# stage {stage} does not run for this function and these arguments\n"


# --- forward mode -------------------------------------------------------------------------


@dataclass(frozen=True)
class CompiledJvp:
    """A compiled tangent function: f_jvp(<f's parameters>, <one tangent per wrt>)."""

    source: str
    code: object
    extra: dict
    wrt: tuple[str, ...]
    tangent_params: dict        # wrt parameter -> its tangent parameter's name
    own_source: str = ""        # this function's text alone (source adds its pieces')
    pieces: tuple = ()          # the tangent pieces it calls
    depends: Depends = Depends(())   # what the names it was compiled from referred to
    backend: str = "numpy"      # "numba": bind gives numba's compiled function
    # fn -> what bind gave for it, with backend="numba" (numba compiles once per function)
    jitted: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)

    def bind(self, fn):
        if self.backend == "numba" and self.jitted.get(id(fn), (None,))[0] is fn:
            return self.jitted[id(fn)][1]
        function = bind(self.code, fn, self.extra)
        if fn.__defaults__:     # the tangents come after the defaults: None for them too
            function.__defaults__ = fn.__defaults__ + (None,) * len(self.tangent_params)
        if self.backend == "numba":
            function = jitted(function, f"the tangent of {fn.__name__}")
            self.jitted[id(fn)] = (fn, function)
        return function


_JVP_CACHE: dict = {}
_NOT_BATCHED: set = set()       # keys of compile_jvp(batch=...) whose code cannot batch


def compile_jvp(fn, wrt: tuple[str, ...], scalars: frozenset = frozenset(),
                trees: frozenset = frozenset(), arrays: tuple = (),
                batch: int | None = None, backend: str = "numpy") -> CompiledJvp:
    """Compile the tangent (forward-mode) function of `fn` for tangents of the parameters
    `wrt`; the other arguments are as for `compile_gradient`. With `batch`, each tangent
    holds that many directions along a leading axis (forward/batch.py).

    Raises:
        SGCompilerError: for anything that cannot be differentiated correctly.
        NotBatchable: with `batch`, when the tangents cannot all run at once.
    """
    key = (fn.__code__, wrt, scalars, trees, arrays, id(fn.__globals__), rules.version(),
           batch, check_backend(backend))
    if key in _NOT_BATCHED:
        raise NotBatchable("refused before")
    return deep(fn, _compile_jvp_cached, key, fn, wrt, scalars, trees, arrays, batch, backend)


def _compile_jvp_cached(key, fn, wrt, scalars, trees, arrays, batch,
                        backend="numpy") -> CompiledJvp:
    with LOCK:      # as compile_gradient: valid while its names mean the same
        compiled = _JVP_CACHE.get(key)
        if compiled is not None and compiled.depends.holds_for(fn):
            compiled.depends.replay(fn)
            return compiled
        with recording() as seen:
            try:
                compiled = _compile_jvp(fn, wrt, scalars, trees, arrays, batch=batch,
                                        backend=backend)
            except NotBatchable:
                # (a stale refusal only costs speed: the caller runs one jvp per column)
                if len(_NOT_BATCHED) >= _CACHE_SIZE:
                    _NOT_BATCHED.clear()
                _NOT_BATCHED.add(key)
                raise
        return _kept(_JVP_CACHE, key,
                     dataclasses.replace(compiled, depends=Depends.of(seen, fn)))


def _compile_jvp(fn, wrt, scalars, trees, arrays, trace=None, name=None,
                 named=None, batch=None, backend="numpy") -> CompiledJvp:
    with _complex_values(fn, arrays, batch=batch):
        return _compile_jvp_now(fn, wrt, scalars, trees, arrays, trace, name, named, batch,
                                backend)


def _compile_jvp_now(fn, wrt, scalars, trees, arrays, trace, name, named,
                     batch, backend) -> CompiledJvp:
    trace = trace or _Trace()
    src, resolution, norm = _front(fn, trace)
    specialised = {p: (shape, dtype) for p, shape, dtype in arrays}
    act = activity(norm, resolution, wrt, specialised, scalars, SUMMARIES)
    trace("activity", act)
    if batch is not None:       # (batched tangents need every rank, numbers' too)
        specialised.update({p: ((), WEAK) for p in scalars if p not in specialised})
    shape_facts = shapes(norm, resolution, scalars, trees, specialised, SUMMARIES)
    trace("shapes", shape_facts)
    shapes_note = _shapes_note(norm, resolution, shape_facts, act, specialised)
    code = forward(norm, resolution, act, shape_facts, wrt, jvp_piece,
                   name and norm.namer.fresh(name), named, batch)
    trace("forward", code.tree)
    facts = dict(shape_facts.concrete)
    facts.update({p: ((), WEAK) for p in scalars if p not in facts})
    if batch is None:   # a tangent has its primal's shape (jvp checks), maybe not its dtype
        facts.update({t: (specialised[p][0], None) for p, t in code.tangent_params.items()
                      if p in specialised and isinstance(p, str) and p not in scalars})
    optimize(code.tree, _specialisation(code.linker, src, shape_facts, norm, specialised,
                                        facts, hoist=True), trace,
             skip=NOT_FOR_NUMBA if backend == "numba" else ())
    if backend == "numba":
        for_numba(code.tree)
    shapes_text = ", ".join(f"{_path_text(p)} {shape}" for p, shape, _ in arrays)
    header = (f"tangent of {_title(src)} ({src.short_filename}:{src.firstlineno}) with respect "
              f"to {', '.join(wrt)}{' for ' + shapes_text if arrays else ''}, generated by "
              f"sgcompiler{shapes_note}")
    source = to_source(code.tree, header)
    trace("codegen", source)
    extra = {**src.introduced, **code.linker.names}
    compiled = compile_source(source, f"<sgcompiler {src.qualname}_jvp {id(code)}>",
                              set(extra) | set(fn.__code__.co_freevars))
    text = "\n\n".join([source] + [p.source for p in _pieces_of(code.linker)])
    return CompiledJvp(text, compiled[code.tree.name], extra, tuple(wrt), code.tangent_params,
                       source, tuple(code.linker.pieces), backend=backend)


@dataclass
class JvpPiece:
    """The tangent function of a user function called with active arguments (the cell is
    filled once compiled: a recursive call refers to it first)."""

    name: str
    cell: object
    tangent_params: dict
    source: str = ""
    pieces: tuple = ()
    depends: Depends | None = None      # None while it is being compiled


def _found_piece(mine, key, fn):
    """The piece of `fn` cached under `key` if it may serve: one being compiled (a
    recursive call, on this thread), or one whose names still mean what they meant."""
    found = mine.get(key)
    if found is not None and found.depends is None:
        return found
    if found is not None and found.depends.holds_for(fn):
        found.depends.replay(fn)
        return found
    return None


def jvp_piece(fn, active: tuple[str, ...], arrays: tuple = (), trees=frozenset()) -> JvpPiece:
    """The (cached) tangent function of user function `fn` for `active` parameters.

    Raises:
        SGCompilerError: for anything in `fn` that cannot be differentiated.
    """
    with LOCK:      # as piece: per function object, valid while its names mean the same
        mine = _PIECES.get(fn)
        if mine is None:
            mine = _PIECES[fn] = {}
        key = ("jvp", active, arrays, trees, id(fn.__globals__), rules.version())
        found = _found_piece(mine, key, fn)
        if found is not None:
            return found
        name = function_name(fn)
        if arrays:
            digest = hashlib.sha1(repr((active, arrays)).encode()).hexdigest()[:4]
            name = f"{name}_{digest}"
        made = JvpPiece(f"{name}_jvp", types.CellType(), {})
        mine[key] = made
        try:
            with recording() as seen:
                for read in function_reads(fn):     # its code and defaults are bound in
                    note(*read)
                compiled = _compile_jvp(fn, active, frozenset(), trees, arrays,
                                        name=made.name, named=made.tangent_params)
        except BaseException:
            del mine[key]
            raise
        made.cell.cell_contents = compiled.bind(fn)
        made.source, made.pieces = compiled.own_source, compiled.pieces
        made.depends = Depends.of(seen, fn)
        return made


_TEXTS = {"parse": lambda src: _tree_text(src.tree), "resolve": _resolution_text,
          "normalize": lambda norm: _body_text(norm.body), "activity": _activity_text,
          "shapes": _shapes_text, "tighten": lambda norm: _body_text(norm.body),
          "plan": _plan_text, "codegen": lambda text: text}
