"""`explain`: what each stop_gradient cut, why a gradient is zero, likely mistakes, the
tape; on the samples and on small functions built for each reason (specimens_explain.py).

Every row is also checked numerically: an argument explain calls structurally zero has a
zero gradient from the generated code, and by finite differences unless stop_gradient is
the reason (it is the identity when it runs); every other argument has the gradient finite
differences give.
"""
import ast
import dataclasses
import inspect
import pathlib
import re
import sys
import warnings

import numpy as np
import pytest

import specimens_explain as s
from gradcheck import assert_grad_matches, numeric_grad
from sgcompiler import ZeroGradientWarning, grad, stop_gradient
from sgcompiler.explain import explain

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "samples"))
import adversarial_training  # noqa: E402
import em_gmm  # noqa: E402
import rbm_contrastive_divergence as rbm  # noqa: E402
import stable_softmax  # noqa: E402


def line_of(fn, text):
    """The file line of `fn` on which `text` first appears."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def vec(seed=0, n=3):
    return np.random.default_rng(seed).normal(size=n) + 0.1   # away from 0 and .5 steps


# (function, wrt, arguments, {param: (reason, text in its message)}, operations flagged
# as piecewise constant)
ROWS = [
    (s.only_in_stop, ("x", "b"), lambda: (vec(1), vec(2)),
     {"b": ("stopped", "b is only used inside stop_gradient (line {stop_gradient})")}, ()),
    (s.stop_of_a_chain, ("x", "b"), lambda: (vec(1), vec(2)),
     {"b": ("stopped", "b is only used inside stop_gradient (line {stop_gradient})")}, ()),
    (s.through_argmax, ("x", "w"), lambda: (vec(1), np.array([0.1, -0.3, 0.9])),
     {"w": ("no derivative", "w reaches the result only through np.argmax (line "
                             "{np.argmax}), which has no derivative")}, ()),
    (s.overwritten, ("x", "w"), lambda: (vec(1), vec(2)),
     {"x": ("overwritten", "x is overwritten at line {np.ones} before it is read")}, ()),
    (s.unused, ("x", "w"), lambda: (vec(1), vec(2)),
     {"x": ("unread", "x does not reach the result")}, ()),
    (s.unreached, ("x", "w"), lambda: (vec(1), vec(2)),
     {"x": ("unreached", "x does not reach the result (it is read at line {x * 2.0}")}, ()),
    (s.through_round, ("x", "w"), lambda: (vec(1), vec(2)),
     {"x": ("no derivative", "only through np.round (line {np.round}), which is piecewise "
                             "constant")}, ("np.round",)),
    (s.through_floor, ("x", "w"), lambda: (vec(1), vec(2)),
     {"x": ("no derivative", "only through np.floor")}, ("np.floor",)),
    (s.through_sign, ("x", "w"), lambda: (vec(1), vec(2)),
     {"x": ("no derivative", "only through np.sign")}, ("np.sign",)),
    (s.through_comparison, ("x", "w"), lambda: (vec(1), vec(2)),
     {"x": ("no derivative", "only through a comparison")}, ("a comparison",)),
    (s.through_integer_cast, ("x", "w"), lambda: (vec(1) * 3, vec(2)), {},
     ("an integer cast",)),
    (s.through_int, ("x", "w"), lambda: (1.7, 0.3),
     {"x": ("no derivative", "only through int (line")}, ("int",)),
    (s.through_floor_division, ("x", "w"), lambda: (vec(1) * 3, vec(2)),
     {"x": ("no derivative", "only through '//'")}, ("'//'",)),
    (s.straight_through, ("x", "w"), lambda: (vec(1) * 3, vec(2)), {}, ()),
    (s.round_under_stop, ("x", "w"), lambda: (vec(1) * 3, vec(2)), {}, ()),
    (s.relu_by_where, ("x", "w"), lambda: (vec(1), vec(2)), {}, ()),
    (s.round_on_one_path, ("x", "w"), lambda: (vec(1) * 3, vec(2)), {}, ("np.round",)),
    (s.through_helper, ("x", "w"), lambda: (vec(1), vec(2)),
     {"w": ("helper", "w reaches the result only through argmax_helper (line "
                      "{argmax_helper(x, w)}), in which it gets no gradient (v reaches the "
                      "result only through np.argmax")}, ()),
    (s.through_stopping_helper, ("x", "w"), lambda: (vec(1), vec(2)),
     {"x": ("helper", "in which it gets no gradient (u is only used inside stop_gradient")},
     ()),
    (s.stop_in_a_branch, ("x", "w"), lambda: (vec(1), vec(2), 1.0),
     {"x": ("stopped", "x is only used inside stop_gradient (line {stop_gradient})")}, ()),
    (s.two_cuts, ("x", "b"), lambda: (vec(1), vec(2)),
     {"b": ("several", "b reaches the result only through stop_gradient (line "
                       "{stop_gradient}) and np.argmax")}, ()),
    (s.stop_of_a_constant, ("x", "w"), lambda: (vec(1), vec(2)), {}, ()),
    (s.through_shape, ("x", "w"), lambda: (vec(1), vec(2)),
     {"x": ("no derivative", "x reaches the result only through the attribute .shape")}, ()),
    (s.recurrence, ("h", "w"), lambda: (vec(1), vec(2)), {}, ()),
    (s.stop_in_a_loop, ("h", "w"), lambda: (vec(1), vec(2)),
     {"w": ("stopped", "w is only used inside stop_gradient")}, ()),
]


def expected_text(fn, text):
    """`text` with each {marker} replaced by the line of fn where the marker appears."""
    out = text
    while "{" in out:
        start = out.index("{")
        end = out.index("}", start)
        out = out[:start] + str(line_of(fn, out[start + 1:end])) + out[end + 1:]
    return out


@pytest.mark.parametrize("fn, wrt, make, zeros, flat", ROWS, ids=[r[0].__name__ for r in ROWS])
def test_explain_says_why(fn, wrt, make, zeros, flat):
    found = explain(fn, wrt)
    said = {z.param: z for z in found.zero_gradients()}
    assert set(said) == set(zeros), found.text
    for param, (reason, text) in zeros.items():
        assert said[param].reason == reason, said[param]
        assert expected_text(fn, text) in said[param].message, said[param].message
        assert said[param].chain or reason == "unread"
        assert f"zero gradient: {said[param].message}" in " ".join(found.text.split())
    assert tuple(f.operation for f in found.function.flat) == flat, found.text
    for f in found.function.flat:
        assert "straight-through estimator" in f.message
        assert f"likely mistake, line {f.line.number}" in found.text


@pytest.mark.parametrize("fn, wrt, make, zeros, flat", ROWS, ids=[r[0].__name__ for r in ROWS])
def test_what_explain_says_is_what_the_gradient_is(fn, wrt, make, zeros, flat):
    args = make()
    params = list(inspect.signature(fn).parameters)
    positions = [params.index(w) for w in wrt]
    grads = grad(fn, wrt=tuple(wrt))(*args)
    for w, i, g in zip(wrt, positions, grads):
        if w in zeros:
            assert np.all(np.asarray(g) == 0.0), (w, g)
            if "stop_gradient" not in zeros[w][1]:     # (the identity when it runs)
                assert np.allclose(numeric_grad(fn, args, i), 0.0), w
        elif not flat and fn is not s.straight_through:     # (see below)
            assert_grad_matches(fn, args, wrt=[i])
            assert np.any(np.asarray(numeric_grad(fn, args, i)) != 0.0), w


def test_the_straight_through_estimator_passes_the_gradient_on():
    x, w = vec(1) * 3, vec(2)
    assert np.array_equal(grad(s.straight_through)(x, w), w)     # as if np.round(x) were x


def test_stop_gradient_reports_what_it_cut():
    found = explain(s.stop_of_a_chain, ("x", "b")).function
    (stop,) = found.stops
    line = line_of(s.stop_of_a_chain, "stop_gradient")
    assert stop.line.number == line and stop.expression == "stop_gradient(m + 1.0)"
    assert stop.statements == 2 and stop.lines == (line - 1, line)
    assert stop.variables == (("b", None), ("m", line - 1))


def test_a_stop_of_a_constant_cuts_nothing():
    text = explain(s.stop_of_a_constant, ("x", "w")).text
    assert "cuts nothing" in text


def test_the_tape_summary_lists_what_each_loop_saves():
    found = explain(s.recurrence, ("h", "w"))
    (loop,) = found.tape
    assert loop.line == line_of(s.recurrence, "for i")
    assert [(v.name, v.line) for v in loop.saved] == \
        [("h", line_of(s.recurrence, "np.tanh"))]
    assert f"the loop at line {loop.line} saves 1 value per iteration" in found.text
    # and it is what the generated code does
    assert grad(s.recurrence, wrt=("h", "w")).source.count("_tape.append(") == 1


def test_the_tape_summary_covers_what_helpers_save():
    # it read the function's own code only: what its helpers' forwards push was not shown
    found = explain(s.through_recurrences, ("h", "w"))
    assert found.tape == ()
    helpers = {t.name: t for t in found.helper_tapes}
    assert set(helpers) == {"recurrence", "_twice_recurrent"}
    (loop,) = helpers["recurrence"].loops
    assert helpers["recurrence"].wrt == ("h", "w")
    assert loop.line == line_of(s.recurrence, "for i")
    assert [(v.name, v.line) for v in loop.saved] == [("h", line_of(s.recurrence, "np.tanh"))]
    (outer,) = helpers["_twice_recurrent"].loops
    assert outer.line == line_of(s._twice_recurrent, "for i")
    assert {v.line for v in outer.saved} <= {line_of(s._twice_recurrent, "s = s"),
                                            line_of(s._twice_recurrent, "h = h * w")}
    text = found.text
    assert "nothing is saved per loop iteration" not in text
    assert f"in recurrence (specimens_explain.py:{line_of(s.recurrence, 'def ')}), " \
           "differentiated for h, w:" in text
    assert f"    the loop at line {loop.line} saves 1 value per iteration" in text
    # and it is what the generated code does: each piece's forward pushes as many
    source = grad(s.through_recurrences, wrt=("h", "w")).source
    pushes = sum(len(t.saved) for h in found.helper_tapes for t in h.loops)
    assert source.count("_tape.append(") == pushes


def test_straight_line_code_saves_nothing():
    assert explain(s.through_round, ("x", "w")).tape == ()


def test_the_data_form_is_plain():
    found = grad(s.through_helper, wrt=(0, 1)).explain(format="data")
    data = found.as_dict()
    assert data["function"]["zeros"][0]["param"] == "w"
    assert data["function"]["helpers"][0]["name"] == "argmax_helper"
    assert dataclasses.is_dataclass(found.function.helpers[0].zeros[0])


def test_grad_explain_returns_the_text_the_command_line_prints():
    g = grad(s.two_cuts, wrt=(0, 1))
    assert g.explain() == explain(s.two_cuts, ("x", "b")).text
    with pytest.raises(ValueError, match="format"):
        g.explain(format="html")


# --- warn_zero ------------------------------------------------------------------------------

def test_warn_zero_warns_once_with_the_reason():
    g = grad(s.only_in_stop, wrt=(0, 1), warn_zero=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g(vec(1), vec(2))
        g(vec(1), vec(2))
        g(vec(1, 4), vec(2, 4))         # new shapes: compiled again, but warned already
    zero = [w for w in caught if issubclass(w.category, ZeroGradientWarning)]
    assert len(zero) == 1
    assert "'b' is structurally zero: b is only used inside stop_gradient" in \
        str(zero[0].message)
    assert zero[0].filename == __file__


def test_no_warning_without_warn_zero_or_for_a_real_gradient(monkeypatch):
    monkeypatch.delenv("SGCOMPILER_WARN_ZERO", raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        grad(s.only_in_stop, wrt=(0, 1))(vec(1), vec(2))
        grad(s.recurrence, wrt=(0, 1), warn_zero=True)(vec(1), vec(2))


def test_the_environment_variable_turns_warn_zero_on(monkeypatch):
    monkeypatch.setenv("SGCOMPILER_WARN_ZERO", "1")
    with pytest.warns(ZeroGradientWarning, match="np.argmax"):
        grad(s.through_argmax, wrt=(0, 1))(vec(1), vec(2))


# --- the samples ----------------------------------------------------------------------------

def test_stable_softmax_the_max_is_cut():
    fn = stable_softmax.softmax_loss_stable
    found = explain(fn, ("x",))
    (stop,) = found.function.stops
    assert stop.expression == "stop_gradient(np.max(x))"
    assert stop.line.number == line_of(fn, "stop_gradient") and stop.statements == 1
    assert found.function.zeros == () and found.function.flat == ()
    # the statement it cut, np.max, has no adjoint code: no argmax mask
    assert "d_max" not in grad(fn).source and "d_max" in \
        grad(stable_softmax.softmax_loss_max).source
    assert explain(stable_softmax.softmax_loss_max, ("x",)).function.stops == ()


def test_em_the_e_step_is_cut():
    fn = em_gmm.em_objective
    found = explain(fn, em_gmm.PARAMS).function
    (stop,) = found.stops
    assert stop.calls == (("responsibilities", line_of(fn, "r = stop_gradient")),)
    assert found.zeros == ()
    assert [h.name for h in found.helpers] == ["log_joint"]
    assert "responsibilities_backward" not in grad(fn, wrt=em_gmm.PARAMS).source
    without = explain(em_gmm.em_objective_without_stop, em_gmm.PARAMS).function
    assert "responsibilities" in [h.name for h in without.helpers]


def test_rbm_the_gibbs_chain_is_cut():
    fn = rbm.cd_loss
    found = explain(fn, rbm.PARAMS).function
    (stop,) = found.stops
    last_step = line_of(fn, "p_v = sigmoid")
    assert ("p_v", last_step) in stop.variables
    assert ("sigmoid", last_step) in stop.calls
    assert [loop.number for loop in stop.loops] == [line_of(fn, "for _ in range(k)")]
    assert "nothing in the loop at line" in explain(fn, rbm.PARAMS).text
    assert found.zeros == () and found.flat == ()
    # without stop_gradient the sampling (a comparison) is on the path to the result
    flagged = explain(rbm.cd_loss_without_stop, rbm.PARAMS).function.flat
    assert [f.operation for f in flagged] == ["a comparison"]
    assert flagged[0].line.number == line_of(rbm.cd_loss_without_stop, "h = (rng.random")


def test_adversarial_training_the_attack_is_cut():
    fn = adversarial_training.adversarial_loss
    found = explain(fn, ("params",)).function
    (stop,) = found.stops
    assert stop.expression == "stop_gradient(fgsm(params, x, y, eps))"
    assert stop.calls == (("fgsm", line_of(fn, "x_adv = stop_gradient")),)
    assert "fgsm" not in [h.name for h in found.helpers]
    assert found.zeros == ()


def test_each_sample_points_at_its_explain_command():
    # every sample, read as text (some need optional packages to import)
    samples = sorted((ROOT / "samples").glob("*.py"))
    assert len(samples) >= 8
    for path in samples:
        doc = ast.get_docstring(ast.parse(path.read_text()))
        see = re.search(r"See the code:  sgcompiler samples/(\S+)", doc)
        assert see, path.name
        assert f"sgcompiler explain samples/{see.group(1)}" in doc, path.name


def test_the_readme_shows_the_stable_softmax_explanation():
    text = explain(stable_softmax.softmax_loss_stable, ("x",)).text
    assert text in (ROOT / "README.md").read_text()


# --- the command line -----------------------------------------------------------------------

SOFTMAX = "samples/stable_softmax.py:softmax_loss_stable"


def run_cli(capsys, monkeypatch, *args):
    from sgcompiler import cli
    monkeypatch.chdir(ROOT)
    capsys.readouterr()
    try:
        code = cli.main(list(args))
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_explain_in_process(capsys, monkeypatch):
    code, out, err = run_cli(capsys, monkeypatch, "explain", SOFTMAX)
    assert code == 0, err
    assert out == explain(stable_softmax.softmax_loss_stable, ("x",)).text


def test_cli_explain_takes_wrt_and_shapes(capsys, monkeypatch):
    code, out, err = run_cli(capsys, monkeypatch, "explain",
                             "tests/specimens_explain.py:recurrence", "--wrt", "h,w",
                             "--shapes", "h=3,w=3")
    assert code == 0, err
    assert "with respect to h, w" in out and "saves 1 value per iteration" in out


def test_cli_explain_errors_are_one_line(capsys, monkeypatch):
    code, out, err = run_cli(capsys, monkeypatch, "explain", "samples/nothing.py:f")
    assert code == 1 and err.strip().count("\n") == 0 and "no such file" in err
    code, out, err = run_cli(capsys, monkeypatch, "explain", SOFTMAX, "--wrt", "q")
    assert code == 1 and "not a parameter" in err


def test_cli_plain_target_still_prints_the_code(capsys, monkeypatch):
    code, out, err = run_cli(capsys, monkeypatch, SOFTMAX)
    assert code == 0 and out == grad(stable_softmax.softmax_loss_stable).source + "\n" \
        or out.startswith("# gradient of softmax_loss_stable")


def test_cli_help_lists_the_subcommand(capsys, monkeypatch):
    code, out, _ = run_cli(capsys, monkeypatch, "--help")
    assert code == 0 and "sgcompiler explain" in out
    code, out, _ = run_cli(capsys, monkeypatch, "explain", "--help")
    assert code == 0 and "stop_gradient" in out and "--shapes" in out


def test_cli_explain_as_a_subprocess():
    import os
    import subprocess
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("SGCOMPILER_TRACEBACK", None)
    out = subprocess.run([sys.executable, "-m", "sgcompiler", "explain",
                          "samples/em_gmm.py:em_objective", "--wrt", "mu,logits,var"],
                         capture_output=True, text=True, env=env, cwd=str(ROOT))
    assert out.returncode == 0, out.stderr
    assert out.stdout == explain(em_gmm.em_objective, em_gmm.PARAMS).text
    assert "the call to responsibilities" in out.stdout


def test_warn_zero_survives_pickling():
    import pickle
    g = pickle.loads(pickle.dumps(grad(s.only_in_stop, wrt=(0, 1), warn_zero=True)))
    with pytest.warns(ZeroGradientWarning):
        g(vec(1), vec(2))


SAMPLES = [(stable_softmax.softmax_loss_stable, ("x",)), (em_gmm.em_objective, em_gmm.PARAMS),
           (rbm.cd_loss, rbm.PARAMS), (adversarial_training.adversarial_loss, ("params",))]


@pytest.mark.parametrize("fn, wrt", [(r[0], r[1]) for r in ROWS] + SAMPLES,
                         ids=[r[0].__name__ for r in ROWS] + [f.__name__ for f, _ in SAMPLES])
def test_what_a_stop_cut_has_no_adjoint_in_the_generated_code(fn, wrt):
    """The facts are the compiler's: no variable a stop_gradient cut gets an adjoint, and
    no user function whose call it cut gets a backward function."""
    source = grad(fn, wrt=tuple(wrt)).source
    for stop in explain(fn, wrt).function.stops:
        for name, _ in stop.variables:
            assert f" d{name} = " not in source and f" d{name} += " not in source, name
        for name, _ in stop.calls:
            assert f"{name}_backward" not in source, name


# --- analysis/why.py on the activity analysis's own facts -----------------------------------

def _activity(fn, wrt):
    from sgcompiler.pipeline import analyse
    return analyse(fn, wrt).activity


def test_why_a_stop_cut_is_the_difference_the_stop_makes():
    from sgcompiler.analysis.why import stop_cuts
    act = _activity(s.stop_of_a_chain, ("x", "b"))
    (cut,) = stop_cuts(act)
    cut_names = {act.flows[j].target for j in cut.cut}
    assert cut_names == {"m", "_add"} and not cut_names & act.active
    assert cut.names == ("_add", "b", "m")


def test_why_records_how_each_name_became_varied():
    from sgcompiler.analysis.why import CUT, zero_gradient
    act = _activity(s.through_argmax, ("x", "w"))
    assert set(act.varied_by) | set(act.wrt) == set(act.varied)
    zero = zero_gradient(act, "w")
    assert zero.reason == CUT and act.flows[zero.cuts[0].index].what == "np.argmax"
    assert zero_gradient(act, "x") is None


def partly_stopped_loop(x, w):
    acc = 0.0
    for k in range(3):
        acc = acc + np.sum(x * w)
        c = stop_gradient(np.sin(x) * w)
        acc = acc + np.sum(c)
    return acc


def test_a_loop_still_active_is_not_said_to_be_cut():
    (stop,) = explain(partly_stopped_loop, ("x", "w")).function.stops
    assert stop.statements >= 1 and stop.loops == ()


_SOFTMAX_GRAD = grad(s.softmax_weighted)


def through_a_gradient(x):
    return np.sum(_SOFTMAX_GRAD(x) ** 2)


def _quoted_lines_are_the_users(text, module):
    """Each `line N: ...` of the text quotes line N of the user's file."""
    lines = pathlib.Path(module.__file__).read_text().splitlines()
    quoted = re.findall(r"line (\d+): (.+)", text)
    assert quoted
    for number, said in quoted:
        assert said.strip() in lines[int(number) - 1], (number, said)


def test_explaining_a_gradient_of_a_gradient_quotes_the_users_lines():
    # it quoted the generated code: its file "<sgcompiler f_grad ...>", its lines and
    # its temporaries ("stop_gradient(_max)", "_max (line 4)")
    found = grad(through_a_gradient).explain(format="data")
    (inner,) = found.function.helpers
    first = line_of(s.softmax_weighted, "def ")
    assert inner.where == f"specimens_explain.py:{first}"
    (stop,) = inner.stops
    assert stop.line == dataclasses.replace(stop.line, number=first + 1,
                                            text="z = x - stop_gradient(np.max(x))")
    assert stop.expression == "stop_gradient(np.max(x))"
    assert all(not name.startswith("_") for name, _ in stop.variables)
    text = grad(through_a_gradient).explain()
    assert "<sgcompiler" not in text and "_max" not in text
    _quoted_lines_are_the_users(text, s)
    second = grad(grad(s.scalar_with_stop))
    x = 0.7
    np.testing.assert_allclose(second(x), -np.sin(x) * np.cos(x) + 6 * x, rtol=1e-10)
    text = second.explain()
    assert "<sgcompiler" not in text
    assert f"line {line_of(s.scalar_with_stop, 'c = ')}: stop_gradient(np.cos(x))" in text
    _quoted_lines_are_the_users(text, s)
