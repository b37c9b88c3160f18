"""The recipe: function -> generated gradient function (reverse mode). Every pass that
runs, in order (`stages.STAGES` names each; `sgcompiler FILE:f --stage NAME` prints the
code after it):

    front end   parse, the REWRITES (frontend/__init__.py), check, resolve, normalize
    analysis    activity, shapes (concrete shapes when specialised) (analysis/)
    reverse     tighten; plan (the reverser's first run: what the adjoint sweep reads);
                reverse (its second run: primal sweep saving that, then adjoint sweep)
    optimize    the OPTIMIZATIONS below, in that order              (optimize/)
    kinds       numba (backend="numba"), reread (code made to be read again: grad of
                grad), namespace (arrays of another library: `xp.`), each only for its kind
    back end    codegen, load                                      (backend/)

Forward mode (pipeline/forward_mode.py) shares the front end, the analyses, the optimizations and
the back end; only the transformation differs.

A user function called with active arguments gets a forward and a backward function of its
own (a "piece", `piece`), made by the same recipe (`_compile_piece_now`); in forward mode, a
tangent function of its own (`pipeline.forward_mode.jvp_piece`).

`compile_gradient` is cached on (code object, wrt, scalar arguments, parameter trees, the
shapes and dtypes of array arguments, rules version), so each function is compiled once per
way it is differentiated and kind of arguments (and again after a user registers a
derivative rule); compiled.py keeps the caches. Code compiled for known shapes
(analysis/sizes.py) needs fewer run-time helpers and writes into arrays that die
(optimize/memory/buffers.py).

A cached gradient is used only while every name its compilation read still refers to the
same object (frontend/depends.py: closure cells, globals, module attributes, callees' code
and defaults); pieces of user functions are kept per function object, since they are bound
to its cells and defaults. Compilation holds one re-entrant lock, and runs through
deep_code.py (deeply nested code is retried on a thread with a large stack).
"""
from __future__ import annotations

import dataclasses
import hashlib
import textwrap
import types
from dataclasses import dataclass

import gast
import numpy

from .. import rules
from ..backend.codegen import Origins, to_source
from ..backend.loader import bind, compile_source
from ..backend.jit import NOT_FOR_NUMBA, check_backend, for_numba, jitted
from ..backend.namespace import to_namespace
from ..backend.reread import for_rereading, gradient_only
from .compiled import (_CACHE, _PIECE_SHAPES, _PIECES, Compiled, Piece, _filename, active_suffix,
                       _found_piece, _kept, _path_text, _pieces_of, _refers_to, _title, for_trees)
from .deep_code import deep
from ..errors import SGCompilerError
from ..analysis.activity import activity, described
from ..analysis.shapes import shapes
from ..analysis.sizes import WEAK
from ..analysis.summaries import SUMMARIES
from ..analysis.unknown import header_note, unknown_shapes
from ..frontend import front_end, sharing
from ..frontend.complex_values import may_hold_complex
from ..frontend.depends import LOCK, Depends, function_reads, note, recording
from ..frontend.resolve import local_names
from ..frontend.source import function_name
from ..optimize.algebraic.algebra import (fill_numbers, fold_algebra, fold_constants,
                                           quiet_reciprocals)
from ..optimize.algebraic.common import share_subexpressions
from ..optimize.algebraic.factoring import factor_sums
from ..optimize.algebraic.negations import fold_negated_sums
from ..optimize.algebraic.scalars import scale_products
from ..optimize.algebraic.seeds import fold_seeds
from ..optimize.algebraic.signs import sink_negations
from ..optimize.known.code_shapes import code_shapes
from ..optimize.known.specialisation import (Specialisation, _drop_unread_saved,
                                             _nothing_small, _remake_constants,
                                             _specialisation, _stop_constants)
from ..optimize.loops.batching import batch_outer_products
from ..optimize.loops.hoisting import hoist_row_products
from ..optimize.loops.nest import nest_single_uses
from ..optimize.loops.stacking import stack_tangent_products
from ..optimize.memory.broadcasts import drop_broadcasts
from ..optimize.memory.buffers import reuse_buffers
from ..optimize.memory.ties import split_ties
from ..optimize.tidy.cleanup import (coalesce_copies, drop_dead, drop_lonely_comments,
                                     free_after_last_use, is_temporary, propagate_copies,
                                     pure_assign, pure_names, runtime_helpers, tidy,
                                     while_condition)
from ..reverse.sweeps import plan_sweeps, reverse, reverse_piece
from ..reverse.tighten import tighten
from ..runtime.core import stop_gradient
from ..runtime.namespace import current_extra
from ..forward.batch import NotBatchable
from .trace import _Trace

PYTHON_NUMBER = WEAK     # the dtype of a Python number (in `arrays`: a leaf of a tree)


def compile_gradient(fn, wrt: tuple[str, ...], scalars: frozenset = frozenset(),
                     trees: frozenset = frozenset(), value: bool = True,
                     arrays: tuple = (), rereadable: bool = False,
                     namespace: bool = False, backend: str = "numpy",
                     checkpoint=None) -> Compiled:
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
        rereadable: code for the compiler to differentiate again (backend/reread.py),
            for any shape, it and the pieces it calls; with `value=False` it returns the
            gradient alone (checking at run time that the result is a scalar).
        namespace: code for arrays of another array library (runtime/namespace.py): for
            any shape, reaching NumPy through `xp`; `Compiled.bind` takes the namespace.
        backend: "numba": code numba can compile (backend/jit.py: no `del`, no batched
            per-trip products); `Compiled.bind` then gives numba's compiled function.
        checkpoint: "sqrt" (or trips per segment): its outermost loops run in segments,
            the adjoint sweep running each again from its first state
            (frontend/forms/checkpoint.py); code for NumPy arrays only.
    Raises:
        SGCompilerError: for anything that cannot be differentiated correctly.
    """
    # the rules version: a rule registered later takes effect for gradients compiled later
    key = (fn.__code__, wrt, scalars, trees, value, arrays, id(fn.__globals__),
           rules.version(), rereadable, namespace, check_backend(backend), checkpoint)
    if checkpoint is not None and (rereadable or namespace or backend != "numpy"):
        raise SGCompilerError(f"{function_name(fn)}: checkpoint= makes gradient code for "
                              "NumPy arrays, run by NumPy; it cannot yet be differentiated "
                              "again, run on arrays of another library or by numba; "
                              "compile without checkpoint= for that")
    return deep(fn, _compile_cached, key, fn, wrt, scalars, trees, value, arrays, rereadable,
                namespace, backend, checkpoint)


def _compile_cached(key, fn, wrt, scalars, trees, value, arrays, rereadable,
                    namespace=False, backend="numpy", checkpoint=None) -> Compiled:
    with LOCK:      # one compilation at a time: a piece is published before it is done
        compiled = _CACHE.get(key)
        # the code is right for `fn` only while its names mean what they meant
        if compiled is not None and compiled.depends.holds_for(fn):
            compiled.depends.replay(fn)
            return dataclasses.replace(compiled, pinned=compiled.depends.objects(fn))
        with recording() as seen, sharing():
            compiled = _compile(fn, wrt, scalars, trees, value, arrays, rereadable=rereadable,
                                namespace=namespace, backend=backend, checkpoint=checkpoint)
        kept = _kept(_CACHE, key, compiled, seen, fn)
        return dataclasses.replace(kept, pinned=tuple(seen.values()))


def _complex_values(fn, arrays, batch=None):
    """Complex mode (rules/registry.py) for compiling `fn` when it may hold complex values
    (frontend/complex_values.py), or when the code that calls it does. (Code compiled to be
    differentiated again needs nothing more: rules/complex_helpers.py has the rules of the
    helpers complex mode's gradients call.)"""
    on = rules.complex_mode() or may_hold_complex(fn, arrays)
    if on and batch is not None:
        raise NotBatchable("complex values")
    return rules.complex_values(on)


def _compile(fn, wrt, scalars, trees, value, arrays=(), trace=None,
             rereadable=False, namespace=False, backend="numpy", checkpoint=None) -> Compiled:
    with _complex_values(fn, arrays):
        return _compile_now(fn, wrt, scalars, trees, value, arrays, trace, rereadable,
                            namespace, backend, checkpoint)


def _compile_now(fn, wrt, scalars, trees, value, arrays, trace, rereadable,
                 namespace=False, backend="numpy", checkpoint=None) -> Compiled:
    trace = trace or _Trace()
    wanted, pieces = value, (_rereadable_piece if rereadable else
                             _namespace_piece if namespace else
                             _numba_piece if backend == "numba" else piece)
    src, resolution, norm = _front(fn, trace, checkpoint,
                                   marks=not (rereadable or namespace or backend != "numpy"))
    specialised = {p: (shape, dtype) for p, shape, dtype in arrays}
    statements = described(norm, resolution)     # (what both analyses read)
    act = activity(norm, resolution, wrt, specialised, scalars, SUMMARIES, statements)
    trace("activity", act)
    shape_facts = shapes(norm, resolution, scalars, trees, specialised, SUMMARIES,
                         statements)
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
        for_numba(gradient.tree, _refers_to(src, gradient.linker), known.facts, shape_facts.ints,
                  lambda: gradient.linker.name_for("np", numpy))
        trace("numba", gradient.tree)
    if rereadable:
        for_rereading(gradient.tree, norm.namer, gradient.linker)
        if value and not wanted:
            gradient_only(gradient.tree, gradient.linker)
            value = False
        trace("reread", gradient.tree)
    uses = None
    if namespace:
        uses = to_namespace(gradient.tree, src.lookup, gradient.linker,
                            f"{_title(src)} ({src.short_filename}:{src.firstlineno})")
        trace("namespace", gradient.tree)
    header = (f"gradient of {_title(src)} ({src.short_filename}:{src.firstlineno}) "
              f"with respect to {', '.join(wrt)}, generated by sgcompiler{shapes_note}")
    # the user's line of each generated line: explain quotes the user in code read again,
    # and a refusal in the primal sweep (no `# line` comment above it) names its line
    origins = {} if rereadable else Origins()
    source = to_source(gradient.tree, header, origins)
    trace("codegen", source)
    extra = {**src.introduced, **gradient.linker.names}
    free = set(extra) | set(fn.__code__.co_freevars)
    code = compile_source(source, _filename(src, "grad", rereadable and source), free,
                          (src.filename, origins))
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
# carries what one step leaves for a later one (the shape oracle, the reciprocals). Where
# each step lives (optimize/): coalesce-copies, propagate-copies, tidy, drop-dead,
# while-condition, drop-lonely-comments, free-after-last-use: tidy/cleanup.py; nest,
# hoist-row-products, stack-tangent-products, batch-outer-products: loops/; drop-broadcasts,
# reuse-buffers: memory/; the others (fill-numbers, fold-seeds, fold-negations,
# fold-algebra, factor-sums, fold-constants, scale-products, common-subexpressions, sink-negations,
# quiet-reciprocals): algebraic/.
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
    ("fold-seeds", lambda tree, k, run: fold_seeds(tree, is_temporary, k.small, k.user_names),
     False),
    ("fold-negations", lambda tree, k, run: fold_negated_sums(
        tree, lambda stmt: pure_assign(stmt, k.pure)), False),
    ("fold-algebra", _fold_algebra, True),
    ("drop-broadcasts", lambda tree, k, run: drop_broadcasts(tree.body, run["shapes"](),
                                                            k.helpers), True),
    ("factor-sums", lambda tree, k, run: factor_sums(tree.body, run["shapes"](), k.np_name),
     True),
    ("fold-constants", lambda tree, k, run: fold_constants(tree), False),
    ("scale-products", lambda tree, k, run: scale_products(
        tree, lambda stmt: pure_assign(stmt, k.pure), k.helpers), False),
    ("common-subexpressions", lambda tree, k, run: share_subexpressions(
        tree, k.pure, k.np_name, k.user_names, k.helpers), False),
    ("sink-negations", lambda tree, k, run: sink_negations(
        tree.body, run["shapes"], k.np_name, k.helpers), True),
    ("hoist-row-products", lambda tree, k, run: k.hoist and hoist_row_products(
        tree, run["shapes"](), k.np_name, lambda name: name not in k.user_names), True),
    ("stack-tangent-products", lambda tree, k, run: k.hoist and stack_tangent_products(
        tree, run["shapes"](), k.np_name, k.facts), True),
    ("split-ties", lambda tree, k, run: split_ties(tree.body, run["shapes"](), k.helpers,
                                                       k.np_name),
     True),
    ("reuse-buffers", lambda tree, k, run: reuse_buffers(run["shapes"]), True),
    ("quiet-reciprocals", lambda tree, k, run: quiet_reciprocals(
        tree.body, run["reciprocals"], k.np_name), True),
    ("batch-outer-products", lambda tree, k, run: batch_outer_products(tree, k.np_name,
                                                                     run["shapes"]()),
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


def piece(fn, active: tuple[str, ...], arrays: tuple = (), trees=frozenset(),
          rereadable: bool = False, namespace: bool = False, checkpoint=None,
          backend: str = "numpy") -> Piece:
    """The (cached) forward/backward pair of user function `fn` for `active` parameters,
    specialised for `arrays` ((parameter, shape, dtype) of array arguments whose shapes the
    caller knows); `trees` are the parameters the caller passes dicts, lists or tuples;
    `checkpoint` runs `fn`'s own outermost loops in segments (vjp(..., checkpoint=));
    `backend="numba"`: code numba can compile, each function of the pair compiled by
    numba on its first call, or run as NumPy code, after one warning, where numba
    cannot compile it (backend/jit.py), whatever becomes of its callers'.

    Raises:
        SGCompilerError: for anything in `fn` that cannot be differentiated.
    """
    fn = for_trees(fn, trees)
    with LOCK:
        # pieces are bound to `fn` (its closure cells and defaults): one set per function
        mine = _PIECES.get(fn)
        if mine is None:
            mine = _PIECES[fn] = {}
        if rereadable or namespace:
            arrays = ()         # code for any shape (backend/reread.py; no out= buffers)
        key = (active, arrays, trees, id(fn.__globals__), rules.version(), rereadable) + \
            (("namespace",) if namespace else ()) + \
            (("checkpoint", checkpoint) if checkpoint is not None else ()) + \
            (("numba",) if backend == "numba" else ())
        found = _found_piece(mine, key, fn)
        if found is not None:
            return found
        # a piece already made for these shapes is found above even past the limit: the
        # primal and adjoint sweeps of one call site ask for it separately, and must get
        # the same forward/backward pair
        if arrays and sum(1 for k in mine if k[0] != "jvp" and k[1]) >= _PIECE_SHAPES:
            arrays = ()         # (a recursion whose shapes change on every call, say)
            key = (active, arrays, trees, id(fn.__globals__), rules.version(), rereadable) + \
                (("namespace",) if namespace else ()) + \
                (("numba",) if backend == "numba" else ())
            found = _found_piece(mine, key, fn)
            if found is not None:
                return found
        name = function_name(fn) + active_suffix(fn, active)
        if rereadable:
            name = f"{name}_plain"
        if namespace:
            name = f"{name}_xp"
        if backend == "numba":
            name = f"{name}_nb"
        if arrays:      # a name of its own, the same in every process: its code differs
            digest = hashlib.sha1(repr((active, arrays) + ((sorted(trees),) if trees else ())
                                       ).encode()).hexdigest()[:4]
            name = f"{name}_{digest}"
        made = Piece(f"{name}_forward", f"{name}_backward", types.CellType(),
                     types.CellType())
        mine[key] = made
        try:
            with recording() as seen, sharing():
                for read in function_reads(fn):     # its code and defaults are bound in
                    note(*read)
                _compile_piece(fn, active, made, arrays, trees, rereadable, namespace,
                               checkpoint, backend=backend)
        except BaseException:
            del mine[key]
            raise
        made.depends = Depends.of(seen, fn)
        return made


def _numba_piece(fn, active, arrays=(), trees=frozenset()) -> Piece:
    """The pieces code for numba calls: code numba can compile, compiled by it."""
    return piece(fn, active, arrays, trees, backend="numba")


def _rereadable_piece(fn, active, arrays=(), trees=frozenset()) -> Piece:
    """The pieces code made to be read again calls: made to be read again too."""
    return piece(fn, active, arrays, trees, rereadable=True)


def _namespace_piece(fn, active, arrays=(), trees=frozenset()) -> Piece:
    """The pieces code for arrays of another library calls: NumPy reached through the
    namespace of the gradient that is running (runtime/namespace.py: CURRENT)."""
    return piece(fn, active, arrays, trees, namespace=True)


def piece_forward_tree(fn, active: tuple[str, ...]):
    """The tree of the forward function (after the last optimization) of the piece of
    user function `fn` for `active` made last, made again as it was (for explain/: what
    its primal sweep saves), or None when none has been made."""
    with LOCK:
        made = [(k, p) for k, p in (_PIECES.get(fn) or {}).items()
                if k[0] == active and len(k) == 6 and not k[5] and p.depends is not None]
        if not made:
            return None
        (_, arrays, trees, *_), found = made[-1]
        kept = {}
        again = Piece(found.forward_name, found.backward_name, types.CellType(),
                      types.CellType())
        with recording():
            _compile_piece(fn, active, again, arrays, trees, kept=kept)
        return kept["forward"]


def _compile_piece(fn, active, made, arrays=(), trees=frozenset(), rereadable=False,
                   namespace=False, checkpoint=None, kept=None, backend="numpy"):
    with _complex_values(fn, arrays):
        _compile_piece_now(fn, active, made, arrays, trees, rereadable, namespace,
                           checkpoint, kept, backend)


def _compile_piece_now(fn, active, made, arrays, trees, rereadable, namespace=False,
                       checkpoint=None, kept=None, backend="numpy"):
    numba = backend == "numba"
    pieces = _rereadable_piece if rereadable else _namespace_piece if namespace else \
        _numba_piece if numba else piece
    src, resolution, norm = _front(fn, checkpoint=checkpoint,
                                   marks=not (rereadable or namespace or numba))
    specialised = {p: (shape, dtype) for p, shape, dtype in arrays}
    statements = described(norm, resolution)     # (what both analyses read)
    act = activity(norm, resolution, active, specialised, callees=SUMMARIES,
                   statements=statements)
    shape_facts = shapes(norm, resolution, trees=trees, arrays=specialised, callees=SUMMARIES,
                         statements=statements)
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
    skip = NOT_FOR_NUMBA if numba else ()
    optimize(trees.backward, Specialisation(seeded, facts, np_name, _nothing_small, helpers,
                                            user_names, pure), skip=skip)
    _drop_unread_saved(trees.forward, trees.backward)
    _remake_constants(trees.forward, trees.backward)
    # the forward function's parameters are the user function's: their shapes are known
    optimize(trees.forward, Specialisation(specialised, shape_facts.concrete, np_name,
                                           _nothing_small, helpers, user_names, pure),
             skip=skip)
    if numba:
        for tree in (trees.forward, trees.backward):
            for_numba(tree, _refers_to(src, trees.linker), facts, shape_facts.ints,
                      lambda: trees.linker.name_for("np", numpy))
    if kept is not None:
        kept["forward"] = trees.forward
    if rereadable:
        _stop_constants(trees.forward, trees.backward,
                        trees.linker.name_for("stop_gradient", stop_gradient))
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
    origins = {} if rereadable else Origins()
    source = to_source(module, header, origins)
    extra = {**src.introduced, **trees.linker.names}
    codes = compile_source(source, _filename(src, "pieces", rereadable and source),
                           set(extra) | set(fn.__code__.co_freevars),
                           (src.filename, origins))
    if namespace:       # (the namespace of whichever gradient calls it)
        extra = current_extra(extra)
    made.forward_cell.cell_contents = bind(codes[names[0]], fn, extra)
    made.backward_cell.cell_contents = bind(codes[names[1]], fn, extra)
    if numba:
        for cell, half in ((made.forward_cell, "forward"), (made.backward_cell, "backward")):
            cell.cell_contents = jitted(cell.cell_contents, f"the {half} of {_title(src)}")
    made.source = source
    made.pieces = tuple(trees.linker.pieces)


def _front(fn, trace=None, checkpoint=None, marks=False):
    """`marks`: run the loops marked `with sgcompiler.checkpoint():` in segments (reverse
    mode's NumPy code; code of other kinds runs them plain, as checkpoint= refuses)."""
    front = front_end(fn, trace=trace, checkpoint=checkpoint, marks=marks)
    return front.source, front.resolution, front.norm


