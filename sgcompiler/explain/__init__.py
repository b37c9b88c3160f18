"""Explanations: why a gradient is what it is, printed from the compiler's own facts.

    sgcompiler explain samples/stable_softmax.py:softmax_loss_stable
    grad(f).explain()                 the same text
    grad(f).explain(format="data")    an Explanation: plain dataclasses (asdict works)

For the function and each user function it differentiates through: what each
stop_gradient cut (report.py, from analysis/why.py and the activity analysis's facts), the
wrt arguments whose gradient is structurally zero and why, the active values that go
through a piecewise-constant operation (likely mistakes), and what the primal sweep saves
per loop iteration (tape.py, read from the generated code).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from ..pipeline import analyse, gradient_tree, piece_forward_tree
from ..frontend import front_end
from .report import (FlatReport, FunctionReport, Line, StopReport, ZeroReport, called,
                     function_report)
from .tape import HelperTape, LoopTape, Saved, tape_summary
from .text import explanation_text


@dataclass(frozen=True)
class Explanation:
    """Everything `explain` says, as data; `text` is what it prints."""

    function: FunctionReport
    tape: tuple             # LoopTape, for the loops of the function itself
    helper_tapes: tuple = ()    # HelperTape of each helper whose forward saves in a loop

    @property
    def text(self) -> str:
        return explanation_text(self.function, self.tape, self.helper_tapes)

    def zero_gradients(self) -> tuple:
        """ZeroReport of each wrt argument of the function whose gradient is zero."""
        return self.function.zeros

    def as_dict(self) -> dict:
        return asdict(self)


class ZeroGradientWarning(UserWarning):
    """grad(f, warn_zero=True): a returned gradient is structurally zero."""


def explain(fn, wrt: tuple[str, ...], scalars: frozenset = frozenset(),
            arrays: tuple = (), trees: frozenset = frozenset()) -> Explanation:
    """Explain the gradient of `fn` with respect to `wrt` (for `scalars`, `arrays` and
    `trees` as `compile_gradient` takes them).

    Raises:
        SGCompilerError: for anything that cannot be differentiated (as grad would).
    """
    report = function_report(fn, wrt, scalars, arrays)
    namer = front_end(fn).norm.namer
    tape = tape_summary(gradient_tree(fn, tuple(wrt), scalars, arrays, trees),
                        namer.user_name)
    return Explanation(report, tape, _helper_tapes(fn, tuple(wrt), scalars, arrays))


def _helper_tapes(fn, wrt, scalars, arrays) -> tuple:
    """A HelperTape for each user function the gradient goes through (each once) whose
    forward function saves values in a loop: read from its piece's code, as it runs."""
    out, seen = [], {(fn.__code__, wrt)}
    pending = [(c, a) for _, c, a in called(analyse(fn, wrt, scalars, arrays).activity)]
    while pending:
        callee, active = pending.pop(0)
        if (callee.__code__, active) in seen:
            continue
        seen.add((callee.__code__, active))
        tree = piece_forward_tree(callee, active)
        front = front_end(callee)
        loops = tape_summary(tree, front.norm.namer.user_name) if tree is not None else ()
        if loops:
            src = front.source
            out.append(HelperTape(src.name, f"{src.short_filename}:{src.firstlineno}",
                                  active, loops))
        pending.extend((c, a) for _, c, a in called(analyse(callee, active).activity))
    return tuple(out)


def zero_gradients(fn, wrt: tuple[str, ...], scalars: frozenset = frozenset(),
                   arrays: tuple = ()) -> tuple:
    """ZeroReport of each of `wrt` whose gradient is structurally zero (no tape: cheap)."""
    return function_report(fn, wrt, scalars, arrays).zeros


__all__ = ["Explanation", "FlatReport", "FunctionReport", "HelperTape", "Line", "LoopTape",
           "Saved",
           "StopReport", "ZeroGradientWarning", "ZeroReport", "explain", "zero_gradients"]
