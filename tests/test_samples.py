"""The claims each sample in samples/ makes, checked with numbers at a reduced size.

Each sample's `main()` prints a report; these tests call the same functions the report is
built from, with smaller data, and assert what the report says: gradients that agree,
likelihoods that never decrease, accuracies that improve, and no adjoint code where
stop_gradient says there should be none.
"""
import inspect
import pathlib
import re
import sys

import numpy as np
import pytest

from gradcheck import assert_tree_grad_matches, numeric_grad
from sgcompiler import grad
from sgcompiler.cli import main as cli_main

SAMPLES = pathlib.Path(__file__).resolve().parent.parent / "samples"
sys.path.insert(0, str(SAMPLES))

import adversarial_training  # noqa: E402
import em_gmm  # noqa: E402
import mlp_training  # noqa: E402
import rbm_contrastive_divergence as rbm  # noqa: E402
import scipy_minimize  # noqa: E402
import spectrum_fit  # noqa: E402
import stable_softmax  # noqa: E402


def adjoint_lines(source):
    """Lines of the differentiated function (the user's numbering) that got adjoint code,
    from the '# line N:' comments of the first generated function (not its helpers')."""
    first = source.split("\n\n\n")[0]
    return {int(n) for n in re.findall(r"# line (\d+):", first)}


def line_of(fn, text):
    """The line number, in fn's file, of the first line of fn that contains `text`."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def lines_between(fn, start_text, end_text):
    return set(range(line_of(fn, start_text), line_of(fn, end_text) + 1))


# --- stable_softmax --------------------------------------------------------------------------

def test_stable_softmax_agrees_overflows_and_skips_the_max():
    r = np.random.default_rng(0)
    x, w = r.normal(size=6), r.normal(size=6)
    g = stable_softmax.gradients(x, w)
    for name, value in g.items():
        f = getattr(stable_softmax, name)
        np.testing.assert_allclose(value, numeric_grad(f, [x, w], 0), rtol=1e-6, atol=1e-9,
                                   err_msg=name)
    assert np.max(np.abs(g["softmax_loss_stable"] - g["softmax_loss_naive"])) < 1e-12
    assert np.max(np.abs(g["softmax_loss_max"] - g["softmax_loss_naive"])) < 1e-12
    g = stable_softmax.gradients(x + 1000.0, w)
    assert not np.all(np.isfinite(g["softmax_loss_naive"]))
    assert np.all(np.isfinite(g["softmax_loss_stable"]))
    np.testing.assert_allclose(g["softmax_loss_stable"],
                               stable_softmax.gradients(x, w)["softmax_loss_stable"],
                               atol=1e-12)
    for name, value in g.items():           # agreeing with each other is not enough
        if name != "softmax_loss_naive":
            f = getattr(stable_softmax, name)
            np.testing.assert_allclose(value, numeric_grad(f, [x + 1000.0, w], 0),
                                       rtol=1e-5, atol=1e-7, err_msg=f"{name} near 1000")
    source = grad(stable_softmax.softmax_loss_stable).source
    assert "choose_grad" not in source and "d_max" not in source
    assert "choose_grad" in grad(stable_softmax.softmax_loss_max).source


# --- em_gmm ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def em_data():
    x, _ = em_gmm.make_data(np.random.default_rng(0), n=200)
    return x


def test_em_fisher_identity(em_data):
    r = np.random.default_rng(1)
    theta = (r.normal(size=3), r.normal(size=3), r.uniform(0.5, 2.0, size=3))
    diff = em_gmm.fisher_check(theta, em_data)
    assert diff["em_objective"] < 1e-8
    assert diff["em_objective_without_stop"] > 1e-2


def test_em_objective_gradient_is_the_log_likelihood_gradient(em_data):
    """Fisher's identity against finite differences of log L (no compiled code on that side)."""
    r = np.random.default_rng(2)
    theta = [r.normal(size=3), r.normal(size=3), r.uniform(0.5, 2.0, size=3)]
    ours = grad(em_gmm.em_objective, wrt=em_gmm.PARAMS)(*theta, em_data)
    for i, g in enumerate(ours):
        expected = numeric_grad(em_gmm.log_likelihood, theta + [em_data], i)
        np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-6)


def test_em_step_has_no_adjoint_code():
    source = grad(em_gmm.em_objective, wrt=em_gmm.PARAMS).source
    assert line_of(em_gmm.em_objective, "stop_gradient") not in adjoint_lines(source)
    # (its pieces are named after what they differentiate: responsibilities_for_mu_...)
    assert "def responsibilities" not in source
    assert "responsibilities_for_mu_logits_var_backward" in \
        grad(em_gmm.em_objective_without_stop, wrt=em_gmm.PARAMS).source


def test_em_with_gradient_m_step_never_decreases_and_matches_closed_form(em_data):
    start = em_gmm.initial_guess(em_data)
    closed, _ = em_gmm.fit(start, em_data, em_gmm.closed_form_m_step)
    fitted, ll = em_gmm.fit(start, em_data, em_gmm.gradient_m_step)
    assert np.min(np.diff(ll)) >= -1e-9
    assert ll[-1] > ll[0] + 10
    assert np.max(np.abs(fitted[0] - closed[0])) < 1e-3
    np.testing.assert_allclose(fitted[2], closed[2], atol=1e-3)


# --- rbm_contrastive_divergence ----------------------------------------------------------------

@pytest.fixture(scope="module")
def rbm_point():
    r = np.random.default_rng(1)
    return r.normal(size=(16, 8)), r.normal(size=16), r.normal(size=8)


def test_bars_and_stripes():
    data = rbm.bars_and_stripes(4)
    assert data.shape == (30, 16)
    for image in data.reshape(-1, 4, 4):
        assert np.all(image == image[:, :1]) or np.all(image == image[:1, :])


@pytest.mark.parametrize("k", [1, 3])
def test_rbm_gradient_is_the_textbook_cd_update(rbm_point, k):
    W, b, c = rbm_point
    assert rbm.compare_with_textbook(W, b, c, rbm.bars_and_stripes(), k, seed=3) < 1e-10


def test_rbm_gradient_without_stop_gradient_is_not_cd(rbm_point):
    W, b, c = rbm_point
    assert rbm.compare_with_textbook(W, b, c, rbm.bars_and_stripes(), 1, seed=3,
                                     loss=rbm.cd_loss_without_stop) > 1e-3


def test_rbm_gibbs_chain_has_no_adjoint_code():
    source = grad(rbm.cd_loss, wrt=rbm.PARAMS).source
    assert adjoint_lines(source) == {line_of(rbm.cd_loss, "return")}
    assert "sigmoid_backward" not in source
    chain = lines_between(rbm.cd_loss, "for _ in range(k)", "v_neg = stop_gradient")
    assert not chain & adjoint_lines(source)


def test_rbm_reconstruction_error_falls():
    data = np.repeat(rbm.bars_and_stripes(), 5, axis=0)
    _, errors = rbm.train(data, epochs=15)
    assert errors[-1] < 0.5 * errors[0]
    assert errors[-1] < errors[len(errors) // 2] < errors[0]


# --- adversarial_training ----------------------------------------------------------------------

def test_adversarial_loss_gradient_holds_the_attack_constant():
    r = np.random.default_rng(0)
    params = adversarial_training.init_params(r, hidden=6)
    x, y = adversarial_training.two_moons(r, 12)
    eps = adversarial_training.EPS
    x_adv = adversarial_training.fgsm(params, x, y, eps)
    assert np.allclose(np.abs(x_adv - x), eps)

    def fixed_attack(params):
        return 0.5 * adversarial_training.loss(params, x, y) \
            + 0.5 * adversarial_training.loss(params, x_adv, y)

    g = grad(adversarial_training.adversarial_loss)(params, x, y, eps)
    g_fixed = grad(fixed_attack)(params)
    for k in params:
        np.testing.assert_allclose(g[k], g_fixed[k], rtol=1e-12, atol=1e-14)
    assert_tree_grad_matches(fixed_attack, [params], 0)


def test_attack_has_no_adjoint_code():
    r = np.random.default_rng(0)
    params = adversarial_training.init_params(r, hidden=4)
    x, y = adversarial_training.two_moons(r, 5)
    g = grad(adversarial_training.adversarial_loss)
    g(params, x, y, 0.1)
    source = g.source
    assert "fgsm_backward" not in source and "fgsm_forward" not in source
    assert "fgsm(params, x, y, eps)" in source
    assert line_of(adversarial_training.adversarial_loss, "x_adv =") \
        not in adjoint_lines(source)


def test_adversarial_training_is_more_robust():
    r = np.random.default_rng(0)
    x, y = adversarial_training.two_moons(r, 500)
    x_test, y_test = adversarial_training.two_moons(r, 300)
    models = adversarial_training.train(
        [adversarial_training.plain_loss, adversarial_training.adversarial_loss], x, y,
        epochs=20)
    eps = adversarial_training.EPS
    plain = models["plain_loss"]
    robust = models["adversarial_loss"]
    assert adversarial_training.accuracy(plain, x_test, y_test) > 0.95
    assert adversarial_training.accuracy(robust, x_test, y_test) > 0.9
    plain_adv = adversarial_training.adversarial_accuracy(plain, x_test, y_test, eps)
    robust_adv = adversarial_training.adversarial_accuracy(robust, x_test, y_test, eps)
    assert robust_adv > plain_adv + 0.08, (plain_adv, robust_adv)


def test_cli_prints_the_code_that_runs_for_dict_parameters(capsys):
    target = f"{SAMPLES / 'adversarial_training.py'}:adversarial_loss"
    assert cli_main([target]) == 0
    out = capsys.readouterr().out
    assert "dparams = dparams + _dparams_loss2" not in out
    assert "add_trees(dparams" in out


# --- scipy_minimize ----------------------------------------------------------------------------

def test_scipy_sample_gradients_are_exact():
    x = np.random.default_rng(0).normal(size=5)
    _, g = scipy_minimize.value_and_grad(scipy_minimize.rosenbrock)(x)
    expected = np.zeros(5)
    expected[:-1] = -400 * x[:-1] * (x[1:] - x[:-1] ** 2) - 2 * (1 - x[:-1])
    expected[1:] += 200 * (x[1:] - x[:-1] ** 2)
    np.testing.assert_allclose(g, expected, rtol=1e-12)
    X, y = scipy_minimize.make_classification(np.random.default_rng(1), n=40, d=5)
    w = np.random.default_rng(2).normal(size=5)
    _, g = scipy_minimize.value_and_grad(scipy_minimize.logistic_loss)(w, X, y, 0.1)
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    np.testing.assert_allclose(g, X.T @ (p - y) / len(y) + 0.1 * w, rtol=1e-10)


def test_scipy_minimize_with_sgcompiler_gradients():
    pytest.importorskip("scipy")
    x0 = np.full(6, -1.0)
    x0[::2] = -1.2
    results = scipy_minimize.compare(scipy_minimize.rosenbrock, x0)
    ours, fd = results["sgcompiler"][0], results["finite differences"][0]
    assert ours.success and np.max(np.abs(ours.x - 1.0)) < 1e-5
    assert ours.nfev * 4 < fd.nfev
    assert np.max(np.abs(ours.x - 1.0)) <= np.max(np.abs(fd.x - 1.0))

    X, y = scipy_minimize.make_classification(np.random.default_rng(0), n=200, d=8)
    w_star = scipy_minimize.newton_minimiser(X, y, 1e-2)
    results = scipy_minimize.compare(scipy_minimize.logistic_loss, np.zeros(8), (X, y, 1e-2))
    ours, fd = results["sgcompiler"][0], results["finite differences"][0]
    assert ours.success and np.max(np.abs(ours.x - w_star)) < 1e-3
    assert ours.nfev * 4 < fd.nfev


# --- mlp_training ------------------------------------------------------------------------------

def test_mlp_gradient_is_a_dict_like_params():
    r = np.random.default_rng(0)
    params = mlp_training.init_params(r, hidden=5)
    x, labels = mlp_training.spirals(r, n_per_class=4)
    y = np.eye(3)[labels]
    g = grad(mlp_training.loss)(params, x, y)
    assert isinstance(g, dict) and list(g) == list(params)
    assert all(g[k].shape == params[k].shape for k in params)
    assert_tree_grad_matches(mlp_training.loss, [params, x, y], 0)


def test_mlp_training_learns_the_spirals():
    x, labels = mlp_training.spirals(np.random.default_rng(0), n_per_class=50)
    params, losses = mlp_training.train(x, labels, epochs=25)
    assert losses[-1] < 0.5 * losses[0]
    assert np.mean(mlp_training.predict(params, x) == labels) > 0.85


# --- optional pictures ------------------------------------------------------------------------

def test_plots_are_drawn_with_matplotlib(tmp_path):
    pytest.importorskip("matplotlib")
    x, _ = em_gmm.make_data(np.random.default_rng(0), n=50)
    em_gmm.plot(tmp_path / "em.png", x, em_gmm.initial_guess(x))
    r = np.random.default_rng(0)
    x, y = adversarial_training.two_moons(r, 20)
    models = {"plain_loss": adversarial_training.init_params(r, hidden=3),
              "adversarial_loss": adversarial_training.init_params(r, hidden=3)}
    adversarial_training.plot(tmp_path / "adv.png", models, x, y, 0.1)
    assert (tmp_path / "em.png").stat().st_size > 1000
    assert (tmp_path / "adv.png").stat().st_size > 1000


def test_plots_without_matplotlib_say_how_to_install_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)      # import matplotlib fails
    x, _ = em_gmm.make_data(np.random.default_rng(0), n=50)
    em_gmm.plot(tmp_path / "em.png", x, em_gmm.initial_guess(x))
    assert "pip install matplotlib" in capsys.readouterr().out
    assert not (tmp_path / "em.png").exists()


def test_readme_excerpt_is_the_generated_code():
    readme = (SAMPLES.parent / "README.md").read_text()
    section = readme[readme.index("## Samples"):]
    excerpt = section[section.index("```python\n") + 10:]
    excerpt = excerpt[:excerpt.index("```")]
    assert excerpt in grad(stable_softmax.softmax_loss_stable).source


# --- every sample's loss compiles from the command line ----------------------------------------

@pytest.mark.parametrize("target, wrt", [
    ("stable_softmax.py:softmax_loss_stable", None),
    ("em_gmm.py:em_objective", "mu,logits,var"),
    ("rbm_contrastive_divergence.py:cd_loss", "W,b,c"),
    ("adversarial_training.py:adversarial_loss", None),
    ("scipy_minimize.py:logistic_loss", None),
    ("mlp_training.py:loss", None),
])
def test_command_line_prints_each_loss(capsys, target, wrt):
    args = [str(SAMPLES / target)] + (["--wrt", wrt] if wrt else [])
    assert cli_main(args) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"# gradient of {target.split(':')[1]} ")
    assert "# backward" in out


def test_spectrum_fit_gradient_matches_finite_differences_in_both_directions():
    signal, _ = spectrum_fit.noisy_signal(n=16)
    weights = np.linspace(1.0, 2.0, 9)
    c = np.random.default_rng(3).normal(size=5) + 1j * np.random.default_rng(4).normal(size=5)
    g = grad(spectrum_fit.spectrum_loss)(c, signal, weights)
    assert g.dtype == complex
    np.testing.assert_allclose(g, numeric_grad(spectrum_fit.spectrum_loss,
                                               [c, signal, weights], 0), atol=1e-7)
    g_signal = grad(spectrum_fit.spectrum_loss, wrt=1)(c, signal, weights)
    assert g_signal.dtype == float
    np.testing.assert_allclose(g_signal, numeric_grad(spectrum_fit.spectrum_loss,
                                                      [c, signal, weights], 1), atol=1e-7)


def test_spectrum_fit_descends_to_the_tones():
    signal, clean = spectrum_fit.noisy_signal(n=32)
    c, losses = spectrum_fit.fit(signal, np.ones(17), steps=60)
    assert all(b <= a + 1e-12 for a, b in zip(losses, losses[1:]))    # steps along conj(g)
    assert losses[-1] < 0.1 * losses[0]
    assert set(np.flatnonzero(np.abs(c) > 0.5)) == {3, 5}
    model = np.fft.irfft(c, n=signal.size, norm="ortho")
    assert np.linalg.norm(model - clean) < np.linalg.norm(signal - clean)
