"""The facts of an explanation, as plain data: for a function and each user function it
differentiates through, what each stop_gradient cut, which wrt parameters get no gradient
and why, and which active values go through a piecewise-constant operation.

Everything comes from the activity analysis the compiler runs (pipeline.analyse) and what
analysis/why.py works out from its facts; nothing here decides activity again.
"""
from __future__ import annotations

import ast
import copy
import dataclasses
import linecache
import re
from dataclasses import dataclass

import gast

from ..analysis.ops import CALL, NONDIFFERENTIABLE, STOPPED
from ..analysis.why import (CUT, OVERWRITTEN, UNREACHED, flat_spots, stop_cuts,
                            zero_gradient)
from ..backend.loader import is_generated, user_line
from ..frontend.resolve import STOP, local_names
from ..ir.ast_tree import to_ast
from ..pipeline import analyse


@dataclass(frozen=True)
class Line:
    """A source line: its number in the user's file and its text."""

    number: int | None
    text: str


@dataclass(frozen=True)
class StopReport:
    """A stop_gradient call and what it made inactive."""

    line: Line
    expression: str             # the call as written: stop_gradient(np.max(x))
    statements: int             # how many statements it made inactive
    lines: tuple                # their line numbers, each once
    variables: tuple            # (variable, line): the user's variables that lost adjoints
                                # (line None: a parameter)
    calls: tuple                # (function, line): calls no longer differentiated
    varied: tuple               # the names it reads that depend on a wrt argument
    loops: tuple = ()           # Line of each loop it cut, which is left with no active
                                # statement: the whole loop gets no adjoint code


@dataclass(frozen=True)
class ZeroReport:
    """A wrt parameter whose gradient is structurally zero."""

    param: str
    reason: str                 # unread, overwritten, unreached, stopped, no derivative,
                                # helper, or several (the cuts differ)
    message: str                # one sentence, the reason
    chain: tuple                # Line: the statements that show it, in order


@dataclass(frozen=True)
class FlatReport:
    """An active value through an operation whose derivative is zero almost everywhere."""

    line: Line
    operation: str              # np.round, a comparison, x.astype() ...
    reads: tuple                # the varied names it reads
    message: str


@dataclass(frozen=True)
class FunctionReport:
    """The explanation of one function, differentiated with respect to `wrt`."""

    name: str
    where: str                  # file:line of its definition
    wrt: tuple
    stops: tuple                # StopReport
    zeros: tuple                # ZeroReport
    flat: tuple                 # FlatReport
    helpers: tuple              # FunctionReport of each user function it differentiates


def function_report(fn, wrt, scalars=frozenset(), arrays=(), _seen=None) -> FunctionReport:
    """The report of `fn` with respect to `wrt`, and of the user functions it calls with
    active arguments (each once; a recursive call is not followed again)."""
    seen = {} if _seen is None else _seen
    found, written = _in_users_lines(analyse(fn, tuple(wrt), scalars, arrays))
    src, norm, act = found.source, found.norm, found.activity
    key = (fn.__code__, tuple(wrt))
    seen[key] = None
    helpers, cut_calls = [], {}
    for k, callee, active in called(act):
        inner_key = (callee.__code__, active)
        if inner_key not in seen:
            seen[inner_key] = function_report(callee, active, _seen=seen)
            helpers.append(seen[inner_key])
        inner = seen[inner_key]
        if inner is not None:
            cut_calls[k] = {z.param: z for z in inner.zeros}
    mine = frozenset(local_names(src.tree)) | set(norm.params)
    if written:         # (the temporaries of generated code are not the user's names)
        mine = frozenset(n for n in mine if not n.startswith("_"))
    names = _Names(src, norm, mine)
    zeros = tuple(_zero_report(act, p, names, cut_calls) for p in wrt)
    report = FunctionReport(src.name, f"{src.short_filename}:{src.firstlineno}", tuple(wrt),
                            _stop_reports(act, found.resolution, names, written),
                            tuple(z for z in zeros if z is not None),
                            tuple(_flat_report(act, k, names) for k in flat_spots(act)),
                            tuple(helpers))
    seen[key] = report
    return report


def called(act):
    """(index of the flow, user function, its active parameters) for each call that the
    gradient differentiates through (a user function called with active arguments)."""
    for k, flow in enumerate(act.flows):
        if flow.kind != CALL or flow.target not in act.active or flow.callee is None:
            continue
        active = tuple(dict.fromkeys(p for p, n in zip(flow.params, flow.inputs)
                                     if n in act.active))
        if active and hasattr(flow.callee, "__code__"):
            yield k, flow.callee, active


class _Names:
    """The user's names and lines for the facts of one function."""

    def __init__(self, src, norm, mine):
        self.src, self.norm, self.mine = src, norm, mine

    def user(self, name) -> str:
        return self.norm.namer.user_name(name)

    def is_users(self, name) -> bool:
        return self.user(name) in self.mine

    def line(self, number) -> Line:
        return Line(number, self.src.line_text(number) if number else "")


def _stop_reports(act, resolution, names, written=False) -> tuple:
    expressions = _written_stops(names.src) if written else \
        _stop_expressions(names.src, resolution)
    loops = _loop_spans(names.src.tree)
    out = []
    for cut in stop_cuts(act):
        flows = [act.flows[j] for j in cut.cut]
        params = tuple((p, None) for p in cut.names if p in act.wrt)
        variables = params + tuple(dict.fromkeys((names.user(f.target), f.line) for f in flows
                                                 if names.is_users(f.target)))
        calls = tuple((act.flows[j].what, act.flows[j].line) for j in cut.calls)
        text = expressions.get(cut.line, [])
        expression = text.pop(0) if text else "stop_gradient(...)"
        varied = tuple(dict.fromkeys(names.user(r) for r in act.flows[cut.index].reads
                                     if r in act.varied))
        out.append(StopReport(names.line(cut.line), expression, len(flows),
                              tuple(dict.fromkeys(f.line for f in flows)), variables, calls,
                              varied, tuple(names.line(n) for n in
                                            _loops_left_inactive(act, flows, loops))))
    return tuple(out)


def _loop_spans(tree) -> tuple:
    """(first line, last line) of each `for` and `while` of the function."""
    return tuple((n.lineno, getattr(n, "end_lineno", None) or n.lineno)
                 for n in gast.walk(tree) if isinstance(n, (gast.For, gast.While)))


def _loops_left_inactive(act, cut_flows, loops) -> tuple:
    """The first lines of the loops holding one of `cut_flows` in which no statement is
    active: the cut left the whole loop without adjoint code."""
    active_lines = {f.line for f in act.flows if f.target in act.active and f.line}
    return tuple(first for first, last in loops
                 if any(f.line and first <= f.line <= last for f in cut_flows)
                 and not any(first <= line <= last for line in active_lines))


def _stop_expressions(src, resolution) -> dict:
    """line -> the stop_gradient calls written on it, as text, in the order they run."""
    found = {}
    for node in gast.walk(src.tree):
        if isinstance(node, gast.Call):
            try:
                stop = resolution.callee(node.func).kind == STOP
            except KeyError:
                stop = False
            if stop:
                found.setdefault(node.lineno, []).append(node)
    # a call inside another runs first
    return {line: [ast.unparse(to_ast(n)) for n in sorted(nodes, key=_calls_in)]
            for line, nodes in found.items()}


def _written_stops(src) -> dict:
    """line -> the stop_gradient calls the user wrote on it, as written (for generated
    code read as the user's lines: its own calls read `stop_gradient(_max)`)."""
    found = {}
    for number in range(1, len(src.lines) + 1):
        text, start = src.lines[number - 1], 0
        while (start := text.find("stop_gradient(", start)) >= 0:
            depth, end = 0, start + len("stop_gradient")
            for end in range(end, len(text)):
                depth += {"(": 1, ")": -1}.get(text[end], 0)
                if depth == 0:
                    break
            found.setdefault(number, []).append(text[start:end + 1])
            start = end + 1
    return found


_HEADER = re.compile(r"\(([^()]+):(\d+)\) (?:with respect to|for) ")


def _in_users_lines(found):
    """(found, whether it was translated): the analysis of code the compiler generated to
    be read again (grad of grad) in the lines of the user's source it came from
    (backend/loader.user_line), so that explain quotes what the user wrote."""
    src = found.source
    if not is_generated(src.filename):
        return found, False
    filename = user_line(src.filename, None)[0]

    def number(n):
        return user_line(src.filename, n)[1] if n else None

    header = _HEADER.search(src.lines[0]) if src.lines else None
    tree = copy.deepcopy(src.tree)
    for node in gast.walk(tree):
        if isinstance(node, gast.stmt):
            node.lineno = number(node.lineno) or 0
    for node in gast.walk(tree):
        if isinstance(node, gast.stmt):
            node.end_lineno = max((n.lineno for n in gast.walk(node)
                                   if isinstance(n, gast.stmt)), default=node.lineno)
    tree.lineno = int(header.group(2)) if header else 0
    lines = tuple(line.rstrip("\n") for line in linecache.getlines(filename))
    users = dataclasses.replace(src, filename=filename, lines=lines, tree=tree,
                                firstlineno=tree.lineno)
    flows = tuple(dataclasses.replace(f, line=number(f.line)) for f in found.activity.flows)
    return dataclasses.replace(found, source=users, activity=dataclasses.replace(
        found.activity, flows=flows)), True


def _calls_in(node) -> int:
    return sum(1 for n in gast.walk(node) if isinstance(n, gast.Call))


def _zero_report(act, param, names, cut_calls) -> ZeroReport | None:
    zero = zero_gradient(act, param, names.user,
                         {k: set(v) for k, v in cut_calls.items()})
    if zero is None:
        return None
    if zero.reason == OVERWRITTEN:
        flow = act.flows[zero.lines[0]]
        return ZeroReport(param, zero.reason, f"{param} is overwritten at line {flow.line} "
                          "before it is read", (names.line(flow.line),))
    if zero.reason == UNREACHED:
        flow = act.flows[zero.lines[0]]
        return ZeroReport(param, zero.reason, f"{param} does not reach the result (it is "
                          f"read at line {flow.line}, but the result does not depend on "
                          "what is made from it there)", (names.line(flow.line),))
    if zero.reason != CUT:
        return ZeroReport(param, zero.reason, f"{param} does not reach the result: it is "
                          "never used", ())
    return _cut_report(act, param, zero.cuts, names, cut_calls)


def _cut_report(act, param, cuts, names, cut_calls) -> ZeroReport:
    kinds, parts, chain = [], [], []
    for cut in cuts:
        flow = act.flows[cut.index]
        kind, part = _cut_text(flow, cut, cut_calls.get(cut.index, {}))
        if part not in parts:
            kinds.append(kind)
            parts.append(part)
        for j in cut.chain + (cut.index,):
            line = names.line(act.flows[j].line)
            if line not in chain:
                chain.append(line)
    kind = kinds[0] if len(set(kinds)) == 1 else "several"
    if kind == "stopped":
        lines = ", ".join(str(act.flows[c.index].line) for c in cuts)
        message = f"{param} is only used inside stop_gradient (line{'s' * (len(cuts) > 1)} " \
                  f"{lines})"
    else:
        message = f"{param} reaches the result only through " + " and ".join(parts)
    return ZeroReport(param, kind, message, tuple(chain))


def _cut_text(flow, cut, zero_params):
    """(reason, text) for one statement where a gradient stops."""
    at = f"(line {flow.line})"
    if flow.kind == STOPPED:
        return "stopped", f"stop_gradient {at}"
    if flow.kind == CALL and zero_params:
        inner = [zero_params[p] for p, n in zip(flow.params, flow.inputs)
                 if n == cut.read and p in zero_params]
        why = f" ({inner[0].message})" if inner else ""
        return "helper", f"{flow.what} {at}, in which it gets no gradient{why}"
    if flow.kind == NONDIFFERENTIABLE:
        if flow.flat:
            return "no derivative", f"{flow.what} {at}, which is piecewise constant " \
                                    "(its derivative is zero almost everywhere)"
        return "no derivative", f"{flow.what} {at}, which has no derivative"
    return "no derivative", f"{flow.what} {at}, whose derivative with respect to " \
                            f"{cut.read} is zero"


def _flat_report(act, k, names) -> FlatReport:
    flow = act.flows[k]
    reads = tuple(dict.fromkeys(names.user(r) for r in flow.reads if r in act.varied))
    x = reads[0]
    operation = flow.what
    if flow.what == "x.astype()":
        operation = "an integer cast"
        ste = f"{x} + stop_gradient({x}.astype(int) - {x})"
    elif flow.what.startswith("np.") or flow.what in ("round", "int"):
        ste = f"{x} + stop_gradient({flow.what}({x}) - {x})"
    else:
        ste = f"{x} + stop_gradient(<the {flow.what.removeprefix('a ')}> - {x}), or a " \
              "smooth surrogate (a sigmoid for a step)"
    message = f"{operation} of {', '.join(reads)} is piecewise constant: its derivative is " \
              "zero almost everywhere, so no gradient flows back through it. If one " \
              f"should, use the straight-through estimator {ste}; if not, wrap it in " \
              "stop_gradient to say so"
    return FlatReport(names.line(flow.line), operation, reads, message)
