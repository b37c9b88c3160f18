"""The generated code of the samples, pinned as text. Review diffs like code;
`pytest --update-golden` rewrites them."""
import pathlib
import sys

import pytest

from sgcompiler import grad
from sgcompiler.pipeline.forward_mode import compile_jvp
import specimens_calls as C
import specimens_control as L
import specimens_stop as S
import specimens_late_forms as F

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "samples"))
import em_gmm  # noqa: E402
import mlp_training  # noqa: E402
import rbm_contrastive_divergence  # noqa: E402
import scipy_minimize  # noqa: E402
import spectrum_fit  # noqa: E402
import stable_softmax  # noqa: E402

GOLDEN = pathlib.Path(__file__).resolve().parent / "golden"

CASES = {
    "softmax_loss_stable": (stable_softmax.softmax_loss_stable, 0),
    "softmax_loss_naive": (stable_softmax.softmax_loss_naive, 0),
    "softmax_loss_max": (stable_softmax.softmax_loss_max, 0),
    "rnn_loop": (L.rnn, (1, 2)),
    "while_with_break": (L.while_with_break, 0),
    "newton_while": (L.newton_sqrt, 0),
    "helper_call_in_loop": (C.helper_in_loop, 0),
    "writes_in_loop": (L.cumulative_writes, 0),
    "dict_parameters": (C.mlp, 0),
    "em_objective": (em_gmm.em_objective, em_gmm.PARAMS),
    "cd_loss": (rbm_contrastive_divergence.cd_loss, rbm_contrastive_divergence.PARAMS),
    "logistic_loss": (scipy_minimize.logistic_loss, 0),
    "mlp_training_loss": (mlp_training.loss, 0),
    "spectrum_loss": (spectrum_fit.spectrum_loss, 0),
    "one_helper_three_ways": (F.one_helper_three_ways, (0, 1)),
    # adversarial_training.adversarial_loss is left out until the code compiled without
    # arguments is the code that runs for its dict parameter (see tests/test_samples.py)
}


def _compare(name, source, update_golden):
    """`source` against tests/golden/NAME.py (written anew with --update-golden)."""
    path = GOLDEN / f"{name}.py"
    if update_golden or not path.exists():
        path.write_text(source)
        if not update_golden:
            pytest.fail(f"{path} did not exist; written now, review and commit it")
    assert source == path.read_text(), f"generated code of {name} changed; review the " \
                                       "diff and run pytest --update-golden if it is better"


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name, update_golden):
    f, wrt = CASES[name]
    source = grad(f, wrt=wrt).source
    _compare(name, source, update_golden)


# forward mode: the tangent function (what `sgcompiler FILE.py:f --mode forward` prints)
FORWARD_CASES = {
    "jvp_softmax_loss_stable": (stable_softmax.softmax_loss_stable, ("x",)),  # chain, stop
    "jvp_stop_in_loop": (S.in_loop, ("x",)),
    "jvp_while_with_break": (L.while_with_break, ("x",)),
    "jvp_newton_while": (L.newton_sqrt, ("a",)),
    "jvp_branch_in_loop": (L.loop_index_in_branch, ("x",)),
    "jvp_branches": (L.conditional_defined, ("x",)),
    "jvp_helper_call_in_loop": (C.helper_in_loop, ("W", "x", "b")),
    "jvp_dict_parameters": (C.mlp, ("params",)),
}


@pytest.mark.parametrize("name", sorted(FORWARD_CASES))
def test_golden_forward(name, update_golden):
    f, wrt = FORWARD_CASES[name]
    source = compile_jvp(f, wrt).source
    _compare(name, source, update_golden)


# checkpointed loops: grad(f, checkpoint="sqrt"), the loop in segments and each segment's
# forward and backward (what `sgcompiler FILE.py:f --checkpoint sqrt` prints)
CHECKPOINT_CASES = {
    "checkpointed_rnn_loop": (L.rnn, (1, 2)),
    "checkpointed_euler": (L.euler, 0),
}


@pytest.mark.parametrize("name", sorted(CHECKPOINT_CASES))
def test_golden_checkpointed(name, update_golden):
    f, wrt = CHECKPOINT_CASES[name]
    source = grad(f, wrt=wrt, checkpoint="sqrt").source
    _compare(name, source, update_golden)
