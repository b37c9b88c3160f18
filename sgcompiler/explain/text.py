"""An explanation as text, printed from its facts (report.py, tape.py)."""
from __future__ import annotations

import textwrap

WIDTH = 92


def explanation_text(report, tape, helper_tapes=()) -> str:
    """The text `sgcompiler explain` prints and `grad(f).explain()` returns."""
    out = []
    _function(report, out, top=True)
    out.append("")
    out.append("tape (what the primal sweep saves for the adjoint sweep):")
    if not tape and not helper_tapes:
        out.append("  nothing is saved per loop iteration")
    _loops(tape, out, "  ")
    for helper in helper_tapes:
        out.extend(_wrap(f"in {helper.name} ({helper.where}), differentiated for "
                         f"{', '.join(helper.wrt)}:", "  ", "    "))
        _loops(helper.loops, out, "    ")
    return "\n".join(out) + "\n"


def _loops(tape, out, margin):
    for loop in tape:
        n = len(loop.saved)
        out.append(f"{margin}the loop at line {loop.line} saves {n} value{'s' * (n != 1)} "
                   "per iteration:")
        lines = {}
        for saved in loop.saved:
            lines.setdefault(saved.line, []).append(saved.name)
        for line, names in lines.items():
            mine = [n for n in names if not n.startswith("_")]
            made = [n for n in names if n.startswith("_")]
            if made:
                mine.append(f"{len(made)} temporar{'ies' if len(made) > 1 else 'y'} of that "
                            f"line ({', '.join(made)})")
            out.append(f"{margin}  line {line}: {', '.join(mine)}")


def _function(report, out, top):
    title = "gradient of" if top else "differentiated through:"
    header = f"{title} {report.name} ({report.where}) with respect to {', '.join(report.wrt)}"
    quiet = not top and not (report.stops or report.zeros or report.flat)
    if quiet:
        header += ": nothing cut, every argument gets a gradient"
    out.extend(_wrap(header, "", "    "))
    if not report.stops and not quiet:
        out.append("  no stop_gradient")
    for stop in report.stops:
        out.append(f"  line {stop.line.number}: {stop.expression}")
        for line in _stop_lines(stop):
            out.extend(_wrap(line, "    ", "      "))
    for zero in report.zeros:
        out.extend(_wrap(f"zero gradient: {zero.message}", "  ", " " * 17))
        out.extend(f"    line {line.number}: {line.text}" for line in zero.chain)
    for flat in report.flat:
        out.append(f"  likely mistake, line {flat.line.number}: {flat.line.text}")
        out.extend(_wrap(flat.message, "    ", "    "))
    if not report.zeros and not report.flat and (top or report.stops):
        out.extend(_wrap("every wrt argument gets a gradient; no active value goes through a "
                         "piecewise-constant operation", "  ", "    "))
    for helper in report.helpers:
        inner = []
        _function(helper, inner, top=False)
        out.extend("  " + line for line in inner)


def _wrap(text, first, rest) -> list:
    return textwrap.wrap(text, WIDTH, initial_indent=first, subsequent_indent=rest,
                         break_long_words=False, break_on_hyphens=False)


def _stop_lines(stop) -> list:
    if not stop.statements and not stop.variables:
        if stop.varied:
            verb = "gets" if len(stop.varied) == 1 else "get"
            return [f"cuts nothing: {', '.join(stop.varied)} still {verb} a gradient through "
                    "other uses"]
        return ["cuts nothing: its argument does not depend on the wrt arguments"]
    n = stop.statements
    lines = ", ".join(str(line) for line in stop.lines)
    said = [f"makes {n} statement{'s' * (n != 1)} inactive (line{'s' * (len(stop.lines) > 1)}"
            f" {lines}): no adjoint code is generated for {'them' if n > 1 else 'it'}"
            if n else "makes no statement inactive"]
    if stop.variables:
        names = ", ".join(f"{name} (line {line})" if line else f"{name} (an argument)"
                          for name, line in stop.variables)
        said.append(f"variables without an adjoint: {names}")
    for name, line in stop.calls:
        said.append(f"the call to {name} (line {line}) is not differentiated")
    for loop in stop.loops:
        said.append(f"with it, nothing in the loop at line {loop.number} is active: no "
                    "adjoint code is generated for the whole loop")
    return said
