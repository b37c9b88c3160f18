"""The recipe in pipeline.py: every step it runs can be printed, in the order it runs."""
import ast

import numpy as np
import pytest

from sgcompiler import cli, pipeline, stages, stop_gradient
from sgcompiler.analysis.summaries import SUMMARIES
from sgcompiler.analysis.activity import activity
from sgcompiler.frontend import front_end


def helper(u, c):
    return np.tanh(u) * c


def looped(x, w):
    z = x - stop_gradient(np.max(x))
    s = 0.0
    for i in range(3):
        s = s + np.sum(helper(z * w, 2.0)) * i
    return s


CODE = {"parse", "reverse", "codegen", "grad"} | {n for n, _, _ in pipeline.OPTIMIZATIONS}
ARRAYS = (("x", (4,), np.dtype("float64")), ("w", (4,), np.dtype("float64")))


def test_stages_name_every_step_in_order():
    steps = [n for n, _, _ in pipeline.OPTIMIZATIONS]
    assert stages.STAGES[:8] == ("parse", "resolve", "normalize", "activity", "shapes",
                                   "tighten", "plan", "reverse")
    assert list(stages.STAGES[8:-2]) == steps
    assert stages.STAGES[-2:] == ("codegen", "grad")
    assert len(set(stages.STAGES)) == len(stages.STAGES)


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
