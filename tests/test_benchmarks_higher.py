"""benchmarks/higher_order.py and benchmarks/forward.py in smoke mode: their workloads are
right (against finite differences or closed forms, and against autograd when it is
installed)."""
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import forward, higher_order  # noqa: E402
from gradcheck import numeric_grad  # noqa: E402
from sgcompiler import check_grads, jacobian  # noqa: E402


def test_smoke_run_agrees_with_autograd():
    assert higher_order.main(["--smoke"]) == 0


def test_forward_mode_smoke_run_checks_its_results():
    # (the jvp against differences, the Hessian against X.T @ (s * X), the hvp against
    # differences of the gradient, and autograd's answers against ours when installed)
    assert forward.main(["--smoke"]) == 0


def test_penalised_loss_against_finite_differences():
    W1, w2, X, y, lam = higher_order.penalty_data(5, 3, 4, np.random.default_rng(1))
    check_grads(higher_order.penalised_loss, (W1, w2, X, y, lam), order=1)


def test_fifty_output_jacobian_against_finite_differences():
    x, A, B = higher_order.jacobian_data(4, np.random.default_rng(2))
    J = jacobian(higher_order.fifty)(x, A, B)
    expected = np.array([numeric_grad(lambda x: higher_order.fifty(x, A, B)[k], [x], 0)
                         for k in range(higher_order.A_ROWS)])
    assert J.shape == (higher_order.A_ROWS, 4) and np.allclose(J, expected, atol=1e-6)
