"""The recipe in pipeline.py: every step it runs can be printed, in the order it runs."""
import ast

import numpy as np
import pytest

from sgcompiler import cli, pipeline, stop_gradient
from sgcompiler.pipeline import forward_mode as pipeline_forward, stages
from sgcompiler.analysis.summaries import SUMMARIES
from sgcompiler.analysis.activity import activity
from sgcompiler.frontend import SOURCE_STAGES, front_end


def helper(u, c):
    return np.tanh(u) * c


def looped(x, w):
    z = x - stop_gradient(np.max(x))
    s = 0.0
    for i in range(3):
        s = s + np.sum(helper(z * w, 2.0)) * i
    return s


CODE = {*SOURCE_STAGES, "reverse", "numba", "reread", "namespace", "codegen",
        "grad"} | {n for n, _, _ in pipeline.OPTIMIZATIONS}
ARRAYS = (("x", (4,), np.dtype("float64")), ("w", (4,), np.dtype("float64")))


def test_stages_name_every_step_in_order():
    steps = [n for n, _, _ in pipeline.OPTIMIZATIONS]
    front = (*SOURCE_STAGES, "resolve", "normalize")
    assert stages.STAGES[:len(front) + 5] == (*front, "activity", "shapes", "tighten",
                                               "plan", "reverse")
    assert list(stages.STAGES[len(front) + 5:-5]) == steps
    assert stages.STAGES[-5:] == ("numba", "reread", "namespace", "codegen", "grad")
    assert len(set(stages.STAGES)) == len(stages.STAGES)


def _traced(compile_, *kinds):
    """The names of the steps that report what they made, over compilations of `kinds`."""
    seen = []
    for kind in kinds:
        compile_(lambda stage, made: seen.append(stage), **kind)
    return set(seen)


def test_every_step_the_recipe_runs_is_a_stage_and_every_stage_runs():
    """A stage name no step reports, or a step no stage names, would be a --stage that
    prints nothing or a pass that --stage cannot show."""
    def compile_(trace, **kind):
        arrays = () if kind.get("rereadable") or kind.get("namespace") else ARRAYS
        pipeline._compile(looped, ("x", "w"), frozenset(), frozenset(), False, arrays,
                          trace, **kind)
    traced = _traced(compile_, {}, {"backend": "numba"}, {"rereadable": True},
                     {"namespace": True})
    assert traced == set(stages.STAGES) - {"grad"}


def test_every_step_of_forward_mode_is_a_stage():
    def compile_(trace, **kind):
        pipeline_forward._compile_jvp(looped, ("x", "w"), frozenset(), frozenset(), ARRAYS,
                                      trace, **kind)
    traced = _traced(compile_, {}, {"backend": "numba"})
    assert traced == set(stages.FORWARD_STAGES) - {"jvp"}


@pytest.mark.parametrize("stage", ["transforms", "fields", "numba", "reread", "namespace"])
def test_the_new_stages_show_their_step(stage):
    text = stages.dump_stage(looped, ("x", "w"), stage, arrays=ARRAYS)
    assert "does not run" not in text
    ast.parse(text)
    if stage == "numba":
        assert "del " not in text
    if stage == "namespace":
        code = "\n".join(line.split("#")[0] for line in text.splitlines())
        assert "xp." in code and "np." not in code.replace("xp.", "")


def test_the_parse_stage_is_the_code_before_the_rewrites():
    def made(x):
        with np.errstate(all="ignore"):
            y = np.log(x)
        return np.sum(y)
    assert "errstate" in stages.dump_stage(made, ("x",), "parse")
    assert "errstate" not in stages.dump_stage(made, ("x",), "contexts")


@pytest.mark.parametrize("stage", stages.STAGES)
def test_every_stage_prints(stage):
    text = stages.dump_stage(looped, ("x", "w"), stage, arrays=ARRAYS)
    assert text.strip()
    if stage in CODE:
        ast.parse(text)         # valid Python


def test_the_stages_show_the_code_changing():
    before = stages.dump_stage(looped, ("x",), "reverse", arrays=ARRAYS)
    after = stages.dump_stage(looped, ("x",), "free-after-last-use", arrays=ARRAYS)
    assert "_stop_gradient = _max" in before and "_stop_gradient" not in after
    final = stages.dump_stage(looped, ("x",), "grad", arrays=ARRAYS)
    assert stages.dump_stage(looped, ("x",), "codegen", arrays=ARRAYS) in final
    assert "active:" in stages.dump_stage(looped, ("x",), "activity")
    assert "the adjoint sweep reads" in stages.dump_stage(looped, ("x",), "plan")


def test_a_step_that_does_not_run_says_so():
    # the buffer pass runs only for code specialised for shapes
    text = stages.dump_stage(looped, ("x",), "reuse-buffers")
    assert "does not run" in text


def test_the_cli_prints_any_stage(capsys, tmp_path):
    path = tmp_path / "model.py"
    path.write_text("import numpy as np\n\ndef f(x):\n    y = np.sin(x) * x\n"
                    "    return np.sum(y)\n")
    for stage in ("normalize", "tighten", "reverse", "drop-dead", "codegen"):
        assert cli.main([f"{path}:f", "--stage", stage, "--shapes", "x=3"]) in (0, None)
        out = capsys.readouterr().out
        ast.parse(out)
        assert "np.sin" in out


def test_the_front_end_is_one_call():
    front = front_end(looped)
    act = activity(front.norm, front.resolution, ("x",), callees=SUMMARIES)
    assert "z" in act.active and "_max" not in act.active


def test_the_garbage_collector_is_paused_only_while_compiling():
    import gc

    seen = []

    def f(x):
        return np.sum(np.sin(x) * x)

    def bad(x):
        return np.sum(undefined_name_here(x))  # noqa: F821

    real = pipeline._compile_cached

    def spy(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)
    assert gc.isenabled()
    pipeline._compile_cached, before = spy, pipeline._compile_cached
    try:
        pipeline.compile_gradient(f, ("x",), frozenset(), value=False)
        with pytest.raises(Exception):
            pipeline.compile_gradient(bad, ("x",), frozenset(), value=False)
    finally:
        pipeline._compile_cached = before
    assert seen == [False, False] and gc.isenabled()     # resumed after an error too
    gc.disable()
    try:                # a collector the caller turned off stays off
        pipeline.compile_gradient(lambda x: np.sum(x * x), ("x",), frozenset(), value=False)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_passes_walk_meets_gast_walks_nodes_in_its_order():
    import inspect

    import gast

    from sgcompiler.ir.blocks import nodes, walk
    from sgcompiler.frontend.forms import sugar
    tree = gast.parse(inspect.getsource(sugar))     # every kind of statement and field
    tree.body[0].decorator_list = []                # an empty list among the fields
    want = [id(n) for n in gast.walk(tree)]
    assert [id(n) for n in walk(tree)] == want and len(want) > 1000
    # nodes: the same nodes, but the contexts and operators (read through their node)
    leaves = (gast.expr_context, gast.operator, gast.unaryop, gast.cmpop, gast.boolop)
    kept = [id(n) for n in gast.walk(tree) if not isinstance(n, leaves)]
    assert sorted(id(n) for n in nodes(tree)) == sorted(kept) and len(kept) < len(want)
    assert any(isinstance(n, gast.Name) and n.annotation is not None
               for n in gast.walk(gast.parse("def f(x: int): pass")))
    assert any(isinstance(n, gast.Attribute) for n in nodes(gast.parse("def f(x: a.b): pass")))
    # the children are found before a node is handed out, as gast.walk finds them
    seen = []
    for node in walk(gast.parse("a = b + c")):
        seen.append(type(node).__name__)
        if isinstance(node, gast.BinOp):
            node.left = gast.Constant(value=1, kind=None)
    assert "Name" in seen[seen.index("BinOp"):]
