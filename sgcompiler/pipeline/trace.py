"""What `--stage NAME` prints (stages.py): the recipes call a `_Trace` with what each step
made, and it keeps the text of the one stage asked for (code, or what an analysis found).
"""
from __future__ import annotations

import ast

from ..backend.codegen import to_source
from ..frontend import SOURCE_STAGES
from ..ir.ast_tree import to_ast


class _Trace:
    """Called by the steps with what each made; keeps the text of one stage (none: keeps
    nothing, and makes no text)."""

    def __init__(self, stage=None):
        self.stage, self.text = stage, None

    def __call__(self, stage, made):
        if stage == self.stage:
            self.text = _TEXTS.get(stage, _tree_text)(made)


def _source_text(src) -> str:
    """The code of a FunctionSource (what parse and each front-end rewrite make)."""
    return _tree_text(src.tree)


def _tree_text(tree) -> str:
    """A function's code, comments included (without codegen's header line)."""
    return to_source(tree, "").split("\n", 1)[1]


def _body_text(body) -> str:
    return "\n".join(ast.unparse(to_ast(s)) for s in body) + "\n"


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


_TEXTS = {**{name: _source_text for name in SOURCE_STAGES},
          "resolve": _resolution_text, "normalize": lambda norm: _body_text(norm.body),
          "activity": _activity_text, "shapes": _shapes_text,
          "tighten": lambda norm: _body_text(norm.body), "plan": _plan_text,
          "codegen": lambda text: text}
