"""Why the activity analysis found what it found: worked out from its own facts.

    stop_cuts(act)        what each stop_gradient cut: the statements that would be active
                          without it (and are not), found by the same reachability with
                          that one stop_gradient read as a copy
    zero_gradient(act, p) why a wrt parameter gets no gradient: it is never read, or its
                          values never reach the result, or every way they do goes through
                          an operation without a derivative (the cuts, with the chain of
                          statements from p to each)
    flat_spots(act)       active paths through a piecewise-constant operation (np.round, a
                          comparison, an integer cast): a derivative that is zero almost
                          everywhere, most likely a mistake

Nothing here is a second analysis: it reads `Activity.flows` and reaches over them with
`activity.reach`, the function that computed `varied` and `useful`.
"""
from __future__ import annotations

from dataclasses import dataclass

from .activity import Activity, reach
from .ops import CALL, STOPPED


@dataclass(frozen=True)
class StopCut:
    """One stop_gradient call and what it made inactive."""

    index: int              # of its statement in Activity.flows
    line: int | None
    target: str             # the name its result is bound to
    cut: tuple              # indexes in flows of the statements it made inactive
    calls: tuple            # indexes of the user-function calls among them
    names: tuple            # every name it made inactive (parameters too), sorted


@dataclass(frozen=True)
class Cut:
    """Where a gradient stops on its way from a parameter to the result."""

    index: int              # the statement (in Activity.flows)
    read: str               # the varied name it reads without a derivative
    chain: tuple            # indexes of the statements from the parameter to `read`


@dataclass(frozen=True)
class ZeroGradient:
    """Why a wrt parameter's gradient is structurally zero."""

    param: str
    reason: str             # UNREAD, OVERWRITTEN, UNREACHED or CUT
    cuts: tuple = ()        # Cut, for reason CUT
    lines: tuple = ()       # the statements that show it (where it is overwritten or read)


UNREAD, OVERWRITTEN, UNREACHED, CUT = "unread", "overwritten", "unreached", "cut"


def stop_cuts(act: Activity) -> tuple:
    """What each stop_gradient call of the function made inactive."""
    found = []
    for k, flow in enumerate(act.flows):
        if flow.kind != STOPPED:
            continue
        inputs = [f.inputs if j != k else f.reads for j, f in enumerate(act.flows)]
        varied = reach(set(act.wrt), [(f.target, ins) for f, ins in zip(act.flows, inputs)])
        useful = reach({act.returned}, [(i, [f.target]) for f, ins in zip(act.flows, inputs)
                                        for i in ins])
        lost = (varied & useful) - act.active
        cut = tuple(j for j, f in enumerate(act.flows) if f.target in lost and j != k)
        calls = tuple(j for j in cut if act.flows[j].kind == CALL)
        found.append(StopCut(k, flow.line, flow.target, cut, calls,
                             tuple(sorted(lost - {flow.target}))))
    return tuple(found)


def zero_gradient(act: Activity, param: str, user_name=lambda name: name,
                  cut_calls=None) -> ZeroGradient | None:
    """Why `param` gets no gradient (None: it gets one). `user_name` gives the user's
    name of a versioned one (`x` for `x_1`); `cut_calls` maps the index of a call's
    statement to the parameters of the called function that get no gradient there."""
    inputs = _inputs(act, cut_calls or {})
    useful = reach({act.returned}, [(i, [f.target]) for f, ins in zip(act.flows, inputs)
                                    for i in ins])
    if param in useful:
        return None
    readers = [k for k, f in enumerate(act.flows) if param in f.reads]
    if not readers and param != act.returned:
        over = [k for k, f in enumerate(act.flows) if user_name(f.target) == param]
        return ZeroGradient(param, OVERWRITTEN if over else UNREAD, lines=tuple(over[:1]))
    raw = reach({act.returned}, [(r, [f.target]) for f in act.flows for r in f.reads])
    if param not in raw:
        return ZeroGradient(param, UNREACHED, lines=tuple(readers[:1]))
    return ZeroGradient(param, CUT, cuts=_cuts(act, param, inputs, raw))


def _inputs(act, cut_calls):
    """The names each statement passes a gradient from, less those of the call
    arguments whose parameters get no gradient in the called function."""
    out = []
    for k, f in enumerate(act.flows):
        zero = cut_calls.get(k, ())
        out.append(tuple(n for n, p in zip(f.inputs, f.params) if p not in zero))
    return out


def _cuts(act, param, inputs, raw) -> tuple:
    """The first statements without a derivative on each way from `param` to the result."""
    by = {}
    varied = reach({param}, [(f.target, ins) for f, ins in zip(act.flows, inputs)], by)
    cuts = []
    for k, (f, ins) in enumerate(zip(act.flows, inputs)):
        if f.target not in raw:
            continue
        read = next((r for r in f.reads if r in varied and r not in ins), None)
        if read is not None:
            cuts.append(Cut(k, read, _chain(by, read)))
    return tuple(cuts)


def _chain(by, name) -> tuple:
    """Indexes of the statements that made `name` varied, from the parameter on."""
    chain, seen = [], set()
    while name in by and name not in seen:
        seen.add(name)
        name, k = by[name]
        chain.append(k)
    return tuple(reversed(chain))


def flat_spots(act: Activity) -> tuple:
    """Indexes of the piecewise-constant statements that read a varied value and whose
    result the result depends on differentiably (not only through stop_gradient)."""
    return tuple(k for k, f in enumerate(act.flows) if f.flat and f.target in act.useful
                 and any(r in act.varied for r in f.reads))


__all__ = ["CUT", "Cut", "OVERWRITTEN", "StopCut", "UNREACHED", "UNREAD", "ZeroGradient",
           "flat_spots", "stop_cuts", "zero_gradient"]
