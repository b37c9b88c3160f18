"""The front end: a function object in, its normal form out.

    source.py     function -> gast tree with real file names and line numbers
    lambdas.py    a lambda found by its code object; lifted.py: functions made from source
    check.py      refuse what cannot be differentiated, all at once
    transforms.py grad(g)(x) inside the function: a call of g's generated gradient
    forms/        Python as people write it, in its plainer forms (forms/__init__.py):
                  with-blocks, starred unpacking, try, generators, map, dict forms,
                  *args helpers, factories, nested defs and lambdas, record fields,
                  squared magnitudes (complex mode), checkpointed loops run in segments
                  (when asked for)
    namespaces.py xp = array_namespace(x): dropped, xp read as NumPy (NumPy 2's names)
    resolve.py    what every called name refers to (a rule, stop_gradient, a user function)
    normalize.py  A-normal form: one primitive operation per assignment
    lower.py      structured jumps (break, continue, return) in the normal form
    iteration.py  normal forms of `for` over sequences, enumerate, zip, comprehensions

`front_end(fn)` runs them in that order; it is the only place that does. Within one
compilation (`sharing()`), the front end an analysis of a callee made (`read_front_end`,
analysis/summaries.py) is handed to the compilation of that callee's piece, which would
otherwise make it again: a helper's front end is made once, not twice.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

from .. import rules
from ..errors import SGCompilerError
from .check import check
from .depends import note, recording
from .forms.checkpoint import checkpoint_loops
from .forms.contexts import unwrap_contexts
from .forms.factories import inline_factories
from .forms.fields import read_fields
from .forms.generators import inline_generators
from .forms.library_calls import rewrite_library_calls
from .forms.nested import lift_nested
from .forms.powers import squared_magnitudes
from .namespaces import read_namespaces
from .normalize import Normalized, normalize
from .resolve import Resolution, resolve
from .source import PARSES, FunctionSource, parse_function, parse_to_rewrite, source_uses
from .forms.statements import rewrite_statements
from .forms.sugar import rewrite_expressions
from .forms.varargs import specialise_varargs
from .transforms import inline_transforms


# (name, step): the rewrites between parse and check, in order; each takes and gives a
# FunctionSource, and `--stage NAME` prints the code after it
REWRITES = (
    ("transforms", inline_transforms),        # grad(g)(x): a call of g's gradient
    ("contexts", unwrap_contexts),            # with np.errstate(...): its body
    ("namespaces", read_namespaces),          # xp = array_namespace(x): dropped
    ("statements", rewrite_statements),       # a, *rest = xs; try that only raises
    ("generators", inline_generators),        # g = (... for v in xs): moved to its use
    ("expressions", rewrite_expressions),     # sum(generator), map, *displays, partials
    ("varargs", specialise_varargs),          # helpers with *args, **kwargs
    ("factories", inline_factories),          # g = make(s): the def it makes
    ("library_calls", rewrite_library_calls),  # np.apply_along_axis(f, ...): a loop
    ("nested", lift_nested),                  # nested defs and lambdas lifted
    ("fields", read_fields),                  # p.w of a local value: field(p, 'w')
    ("powers", squared_magnitudes),           # np.abs(z) ** 2 (complex mode): abs_squared(z)
)
# the steps that make code (a FunctionSource): parse, the rewrites, checkpointed loops
SOURCE_STAGES = ("parse", *(name for name, _ in REWRITES), "checkpoint")


@dataclass(frozen=True)
class FrontEnd:
    """A function as every later stage reads it."""

    source: FunctionSource
    resolution: Resolution      # what each called name is
    norm: Normalized            # its normal form (later passes may rewrite its body)


def front_end(fn, checked: bool = True, trace=None, checkpoint=None,
              marks: bool = False) -> FrontEnd:
    """Parse, check, resolve and normalize `fn`. `checked=False` skips the check, for an
    analysis that only reads a callee (a callee that is differentiated is checked when it
    is compiled). `trace(stage, made)`, if given, sees what each step made.
    `checkpoint` ("sqrt" or trips per segment) runs its outermost loops in segments;
    `marks`, the loops marked `with sgcompiler.checkpoint():` (else they run plain).

    Raises:
        SGCompilerError: for anything the front end cannot read or differentiate.
    """
    if trace is None and checkpoint is None:
        kept = _taken(fn, checked, marks)
        if kept is not None:
            return kept
    return _front_end(fn, checked, trace, checkpoint, marks)


def _front_end(fn, checked, trace, checkpoint, marks, refusals=None) -> FrontEnd:
    """`refusals`: a list that gets check's refusal (if any) instead of it being raised."""
    trace = trace or (lambda stage, made: None)
    src = parse_to_rewrite(fn)
    trace("parse", src)
    for name, rewrite in REWRITES:
        src = rewrite(src)
        trace(name, src)
    src = checkpoint_loops(src, checkpoint, marks)  # only when asked for: loops in segments
    trace("checkpoint", src)
    if checked:
        check(src)
    elif refusals is not None:
        try:
            check(src)
        except SGCompilerError as exc:
            refusals.append(exc)
    resolution = resolve(src)
    trace("resolve", resolution)
    norm = normalize(src, resolution)
    trace("normalize", norm)
    return FrontEnd(src, resolution, norm)


# (id of the function, rules version) -> _Kept, while a compilation is sharing
_KEPT: dict = {}
_SHARING = PARSES.sharing      # (one count for both)


@dataclass(frozen=True)
class _Kept:
    fn: object              # the function (the key holds its id only)
    front: FrontEnd         # made with checked=False, marks=False, no checkpoint
    refusal: object         # the SGCompilerError check(front.source) raised, or None
    reads: tuple            # the recorded reads (kind, holder, key, value) it made


@contextmanager
def sharing():
    """A compilation: the front ends `read_front_end` makes inside it are kept for it (and
    forgotten when the outermost compilation ends)."""
    _SHARING[0] += 1
    try:
        yield
    finally:
        _SHARING[0] -= 1
        if not _SHARING[0]:
            _KEPT.clear()
            PARSES.clear()


def read_front_end(fn) -> FrontEnd:
    """`front_end(fn, checked=False)`, for an analysis that only reads it (its statements,
    names and namer stay as they are): inside `sharing()`, one kept for the compilation of
    `fn` itself, which takes it (front_end), and for other analyses until then.

    Raises:
        SGCompilerError: for anything the front end cannot read.
    """
    if not _SHARING[0]:
        return _front_end(fn, False, None, None, False)
    key = (id(fn), rules.version())
    kept = _KEPT.get(key)
    if kept is not None and kept.fn is fn:
        _replay(kept.reads)
        return kept.front
    refusals = []
    with recording() as seen:
        front = _front_end(fn, False, None, None, False, refusals)
    _KEPT[key] = _Kept(fn, front, refusals[0] if refusals else None, tuple(seen.values()))
    return front


def _taken(fn, checked, marks):
    """The front end kept for `fn` (read_front_end), handed over once: the caller may
    rewrite it. None when there is none, or when it was made otherwise than asked (loops
    marked for checkpointing, which are read plain there)."""
    key = (id(fn), rules.version())
    kept = _KEPT.get(key)
    if kept is None or kept.fn is not fn or marks and kept.front.source.checkpointed:
        return None
    del _KEPT[key]
    _replay(kept.reads)
    if checked and kept.refusal is not None:
        raise kept.refusal
    return kept.front


def _replay(reads):
    """What making a kept front end read, read again by whoever uses it (the recordings
    of its cached code)."""
    for read in reads:
        note(*read)


__all__ = ["REWRITES", "SOURCE_STAGES", "FrontEnd", "front_end", "parse_function",
           "read_front_end", "sharing", "source_uses"]
