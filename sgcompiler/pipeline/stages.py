"""`dump_stage`: the text after any step of either recipe (`sgcompiler FILE:f --stage
NAME`, with `--mode forward` for pipeline/forward_mode.py's): the code, or what an analysis
found. STAGES and FORWARD_STAGES list every step, in the order they run.
"""
from __future__ import annotations

from .deep_code import deep
from ..frontend import SOURCE_STAGES
from ..frontend.depends import LOCK
from . import OPTIMIZATIONS, _compile, compile_gradient
from .forward_mode import _compile_jvp, compile_jvp
from .trace import _Trace


# every step `dump_stage` can show, in the order they run ("grad": the final text, with
# the pieces of the user functions it calls). The last three steps run only for code of
# another kind, which `--stage` asks for: "numba" for backend="numba", "reread" for
# code made to be read again (grad of grad), "namespace" for arrays of other libraries.
FRONT_END_STAGES = (*SOURCE_STAGES, "resolve", "normalize")
STAGES = (*FRONT_END_STAGES, "activity", "shapes", "tighten", "plan", "reverse",
          *(name for name, _, _ in OPTIMIZATIONS), "numba", "reread", "namespace", "codegen",
          "grad")
FORWARD_STAGES = (*FRONT_END_STAGES, "activity", "shapes", "forward",
                  *(name for name, _, _ in OPTIMIZATIONS), "numba", "codegen", "jvp")
# the code of another kind a stage is shown for (as compile_gradient's arguments)
_KIND = {"numba": {"backend": "numba"}, "reread": {"rereadable": True},
         "namespace": {"namespace": True}}


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
    kind = _KIND.get(stage, {})
    if "backend" not in kind and kind:
        arrays = ()     # (code for any shape, as grad of grad and other libraries get it)
    trace = _Trace(stage)
    with LOCK:          # one compilation at a time (the callee summaries are shared)
        _compile(fn, wrt, scalars, frozenset(), False, arrays, trace, **kind)
    return trace.text if trace.text is not None else \
        f"# stage {stage} does not run for this function and these arguments\n"


def _dump_forward(fn, wrt, stage, scalars, arrays):
    if stage in ("jvp", "grad"):
        return compile_jvp(fn, wrt, scalars, arrays=arrays).source
    if stage not in FORWARD_STAGES:
        raise ValueError(f"no stage {stage!r} in forward mode; the stages are "
                         f"{', '.join(FORWARD_STAGES)}")
    trace = _Trace(stage)
    _compile_jvp(fn, wrt, scalars, frozenset(), arrays, trace,
                 backend="numba" if stage == "numba" else "numpy")
    return trace.text if trace.text is not None else \
        f"# stage {stage} does not run for this function and these arguments\n"
