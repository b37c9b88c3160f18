"""`dump_stage`: the text after any step of either recipe (`sgcompiler FILE:f --stage
NAME`, with `--mode forward` for pipeline_forward.py's): the code, or what an analysis
found. STAGES and FORWARD_STAGES list every step, in the order they run.
"""
from __future__ import annotations

from .deep import deep
from .frontend.depends import LOCK
from .pipeline import OPTIMIZATIONS, _compile, compile_gradient
from .pipeline_forward import _compile_jvp, compile_jvp
from .trace import _Trace


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
