"""Generated code that reads like hand-written backprop (issue 19): the reading view
without `del`, and a callee's results named after the variables they end in."""
import ast
import pathlib
import sys

import numpy as np

from gradcheck import assert_grad_matches
from sgcompiler import grad
from sgcompiler.backend.reading import NOTE, reading_view

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "samples"))
import em_gmm  # noqa: E402
import rbm_contrastive_divergence as rbm  # noqa: E402
import stable_softmax  # noqa: E402


def test_the_reading_view_leaves_out_del_and_only_del():
    source = grad(stable_softmax.softmax_loss_stable).source
    view = reading_view(source)
    assert "del " in source and "del " not in view
    assert NOTE in view and view.count(NOTE) == source.count("\ndef ")
    kept = [line for line in source.splitlines() if not line.lstrip().startswith("del ")]
    assert [line for line in view.splitlines() if line + "\n" != NOTE] == kept
    ast.parse(view)


def test_a_block_of_frees_only_gets_pass():
    source = ("# header\ndef f_grad(x):\n    if x:\n        del a\n    else:\n        y = 1\n"
              "    for i in r:\n        del b, c\n    return y\n")
    view = reading_view(source)
    ast.parse(view)
    assert "    if x:\n        pass\n    else:\n        y = 1\n" in view
    assert "    for i in r:\n        pass\n    return y" in view


def test_every_sample_reads_as_valid_python():
    for fn, wrt in ((rbm.cd_loss, rbm.PARAMS), (em_gmm.em_objective, em_gmm.PARAMS),
                    (stable_softmax.softmax_loss_stable, ("x",))):
        view = reading_view(grad(fn, wrt=wrt).source)
        ast.parse(view)
        assert "del " not in view


def test_cli_reading_flag(capsys, monkeypatch):
    from sgcompiler import cli
    monkeypatch.chdir(ROOT)
    assert cli.main(["samples/stable_softmax.py:softmax_loss_stable", "--reading"]) == 0
    out = capsys.readouterr().out
    assert out == reading_view(grad(stable_softmax.softmax_loss_stable).source + "\n") \
        or out == reading_view(grad(stable_softmax.softmax_loss_stable).source)


def test_a_callees_results_are_named_where_they_are_bound():
    source = grad(em_gmm.em_objective, wrt=em_gmm.PARAMS).source
    assert "dmu, dlogits, dvar = log_joint_for_mu_logits_var_backward(" in source
    assert "_dmu_log_joint" not in source


def helper(a, b):
    return np.sin(a) * b


def result_read_by_its_own_call(x, w):
    # x's adjoint is both an argument of the second backward call and what it returns
    return np.sum(helper(helper(x, w), w))


def results_accumulated(x, w):
    return np.sum(helper(x, w)) + np.sum(helper(x, w * 2.0))


def test_named_results_keep_the_gradient():
    rng = np.random.default_rng(3)
    for f in (result_read_by_its_own_call, results_accumulated):
        for shape in ((3,), (2, 3), ()):
            x, w = rng.normal(size=shape), rng.normal(size=shape)
            assert_grad_matches(f, (x, w), wrt=[0, 1])
