"""stop_gradient: recognised by identity, a constant to the compiler, no adjoint code."""
import sys

import numpy as np

from sgcompiler import grad
import specimens_stop as S

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent / "samples"))
import stable_softmax  # noqa: E402

X = np.array([0.3, -1.2, 2.0, 0.7])


def test_alias_and_module_attribute_are_constants():
    assert np.allclose(grad(S.alias)(X), X)                       # d/dx sum(x * c) = c
    assert np.allclose(grad(S.module_attribute)(X), np.exp(X))
    assert np.allclose(grad(S.full_module_name)(X), X * X)


def test_reused_stopped_value():
    m = X * X
    assert np.allclose(grad(S.reused)(X), m + 1.0)


def test_whole_output_stopped_gives_zero_and_no_adjoint_code():
    g = grad(S.everything)
    assert np.array_equal(g(X), np.zeros_like(X))
    assert "# backward" not in g.source
    assert isinstance(grad(S.everything)(1.5), float)


def test_nothing_that_only_feeds_the_stop_gets_an_adjoint():
    w = np.array([1.0, 2.0, -1.0, 0.5])
    g = grad(S.chain_only_feeds_stop)
    assert np.allclose(g(X, w), w)
    backward = g.source.split("# backward")[1]
    assert "tanh" not in backward and "np.exp" not in backward and "da" not in backward


def test_stop_inside_a_loop():
    # y_{k+1} = y_k * c_k + x with c_k = stop(y_k): dy_{k+1}/dx = c_k dy_k/dx + 1
    y, dy = X.copy(), np.ones_like(X)
    for _ in range(3):
        c = y.copy()
        y, dy = y * c + X, dy * c + 1.0
    assert np.allclose(grad(S.in_loop)(X), dy)


def test_shadowing_user_function_is_differentiated():
    assert np.allclose(grad(S.own_stop_gradient)(X), 2 * X)


def test_stable_softmax_sample_claims():
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=8), rng.normal(size=8)
    g = stable_softmax.gradients(x, w)
    naive = g["softmax_loss_naive"]
    assert np.max(np.abs(g["softmax_loss_stable"] - naive)) < 1e-12
    assert np.max(np.abs(g["softmax_loss_max"] - naive)) < 1e-12
    big = stable_softmax.gradients(x + 1000.0, w)
    assert not np.all(np.isfinite(big["softmax_loss_naive"]))
    assert np.all(np.isfinite(big["softmax_loss_stable"]))
    assert np.all(np.isfinite(big["softmax_loss_max"]))
    stable = grad(stable_softmax.softmax_loss_stable).source
    with_max = grad(stable_softmax.softmax_loss_max).source
    for marker in ("choose_grad", "argmax", "==", "d_max"):
        assert marker not in stable
    assert "choose_grad" in with_max and "d_max" in with_max
