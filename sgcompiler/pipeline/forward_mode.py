"""The forward-mode recipe: function -> generated tangent function (`compile_jvp`), and
the tangent function of a user function called with active arguments (`jvp_piece`).
It shares the reverse recipe's front end, analyses, OPTIMIZATIONS and back end; only the
transformation differs:

    front end   parse, check, resolve, normalize                  (frontend/)
    analysis    activity, shapes                                  (analysis/)
    forward     the tangent pass: each statement, then its tangent (forward/)
    optimize    pipeline.OPTIMIZATIONS, in that order             (optimize/)
    back end    codegen, load                                     (backend/)
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import types

from .. import rules
from ..backend.codegen import Origins, to_source
from ..backend.loader import compile_source
from ..backend.jit import NOT_FOR_NUMBA, check_backend, for_numba
from .compiled import (_CACHE_SIZE, _JVP_CACHE, _NOT_BATCHED, _PIECES, CompiledJvp, JvpPiece,
                       _found_piece, _kept, _path_text, _pieces_of, _refers_to, _title,
                       active_suffix, for_trees)
from .deep_code import deep
from ..analysis.activity import activity, described
from ..analysis.shapes import shapes
from ..analysis.sizes import WEAK
from ..analysis.summaries import SUMMARIES
from ..frontend import sharing
from ..frontend.depends import LOCK, Depends, function_reads, note, recording
from ..frontend.source import function_name
from ..forward.batch import NotBatchable
from ..forward.tangents import forward
from ..optimize.known.specialisation import _specialisation
from . import _complex_values, _front, _shapes_note, optimize
from .trace import _Trace


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
        raise NotBatchable("refused before", repeated=True)
    return deep(fn, _compile_jvp_cached, key, fn, wrt, scalars, trees, arrays, batch, backend)


def _compile_jvp_cached(key, fn, wrt, scalars, trees, arrays, batch,
                        backend="numpy") -> CompiledJvp:
    with LOCK:      # as compile_gradient: valid while its names mean the same
        compiled = _JVP_CACHE.get(key)
        if compiled is not None and compiled.depends.holds_for(fn):
            compiled.depends.replay(fn)
            return dataclasses.replace(compiled, pinned=compiled.depends.objects(fn))
        with recording() as seen, sharing():
            try:
                compiled = _compile_jvp(fn, wrt, scalars, trees, arrays, batch=batch,
                                        backend=backend)
            except NotBatchable:
                # (a stale refusal only costs speed: the caller runs one jvp per column)
                if len(_NOT_BATCHED) >= _CACHE_SIZE:
                    _NOT_BATCHED.clear()
                _NOT_BATCHED.add(key)
                raise
        kept = _kept(_JVP_CACHE, key, compiled, seen, fn)
        return dataclasses.replace(kept, pinned=tuple(seen.values()))


def _compile_jvp(fn, wrt, scalars, trees, arrays, trace=None, name=None,
                 named=None, batch=None, backend="numpy", seeded=True) -> CompiledJvp:
    with _complex_values(fn, arrays, batch=batch):
        return _compile_jvp_now(fn, wrt, scalars, trees, arrays, trace, name, named, batch,
                                backend, seeded)


def _compile_jvp_now(fn, wrt, scalars, trees, arrays, trace, name, named,
                     batch, backend, seeded=True) -> CompiledJvp:
    trace = trace or _Trace()
    src, resolution, norm = _front(fn, trace)
    specialised = {p: (shape, dtype) for p, shape, dtype in arrays}
    statements = described(norm, resolution)     # (what both analyses read)
    act = activity(norm, resolution, wrt, specialised, scalars, SUMMARIES, statements)
    trace("activity", act)
    if batch is not None:       # (batched tangents need every rank, numbers' too)
        specialised.update({p: ((), WEAK) for p in scalars if p not in specialised})
    shape_facts = shapes(norm, resolution, scalars, trees, specialised, SUMMARIES,
                         statements)
    trace("shapes", shape_facts)
    shapes_note = _shapes_note(norm, resolution, shape_facts, act, specialised)
    pieces = functools.partial(jvp_piece, backend="numba") if backend == "numba" else \
        jvp_piece
    code = forward(norm, resolution, act, shape_facts, wrt, pieces,
                   name and norm.namer.fresh(name), named, batch, seeded)
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
        for_numba(code.tree, _refers_to(src, code.linker), facts, shape_facts.ints)
        trace("numba", code.tree)
    shapes_text = ", ".join(f"{_path_text(p)} {shape}" for p, shape, _ in arrays)
    header = (f"tangent of {_title(src)} ({src.short_filename}:{src.firstlineno}) with respect "
              f"to {', '.join(wrt)}{' for ' + shapes_text if arrays else ''}, generated by "
              f"sgcompiler{shapes_note}")
    origins = Origins()     # (the user's line of each line: a refusal names it, backend/located)
    source = to_source(code.tree, header, origins)
    trace("codegen", source)
    extra = {**src.introduced, **code.linker.names}
    compiled = compile_source(source, f"<sgcompiler {src.qualname}_jvp {id(code)}>",
                              set(extra) | set(fn.__code__.co_freevars),
                              (src.filename, origins))
    text = "\n\n".join([source] + [p.source for p in _pieces_of(code.linker)])
    return CompiledJvp(text, compiled[code.tree.name], extra, tuple(wrt), code.tangent_params,
                       source, tuple(code.linker.pieces), backend=backend)


def jvp_piece(fn, active: tuple[str, ...], arrays: tuple = (), trees=frozenset(),
              batch: int | None = None, numbers=frozenset(), backend="numpy") -> JvpPiece:
    """The (cached) tangent function of user function `fn` for `active` parameters; with
    `batch`, for tangents that hold that many directions along a leading axis (any
    directions: the caller's batched tangents); `numbers`: the parameters it is passed
    Python numbers for; `backend="numba"`: compiled by numba, or NumPy code where numba
    cannot compile it, whatever becomes of its callers' (as `piece`'s).

    Raises:
        SGCompilerError: for anything in `fn` that cannot be differentiated.
        NotBatchable: with `batch`, when its tangents cannot all run at once.
    """
    fn = for_trees(fn, trees)
    with LOCK:      # as piece: per function object, valid while its names mean the same
        mine = _PIECES.get(fn)
        if mine is None:
            mine = _PIECES[fn] = {}
        key = ("jvp", active, arrays, trees, id(fn.__globals__), rules.version(), batch,
               numbers) + (("numba",) if backend == "numba" else ())
        found = _found_piece(mine, key, fn)
        if found is not None:
            return found
        name = function_name(fn) + active_suffix(fn, active) + \
            ("_nb" if backend == "numba" else "")
        if arrays:
            digest = hashlib.sha1(repr((active, arrays)).encode()).hexdigest()[:4]
            name = f"{name}_{digest}"
        made = JvpPiece(f"{name}_jvp", types.CellType(), {})
        mine[key] = made
        try:
            with recording() as seen, sharing():
                for read in function_reads(fn):     # its code and defaults are bound in
                    note(*read)
                compiled = _compile_jvp(fn, active, frozenset(numbers), trees, arrays,
                                        name=made.name, named=made.tangent_params,
                                        batch=batch, seeded=False, backend=backend)
        except BaseException:
            del mine[key]
            raise
        made.cell.cell_contents = compiled.bind(fn)
        made.source, made.pieces = compiled.own_source, compiled.pieces
        made.depends = Depends.of(seen, fn)
        return made
