"""Library functions that get no derivative rule are refused with what to do instead:
scipy.integrate.odeint (a compiled solver; integrate with a loop of steps, which is
differentiated, shown here against finite differences). (scipy.stats.multivariate_normal.cdf
has a rule now: tests/test_mvn_cdf.py.)"""
import numpy as np
import pytest

from gradcheck import assert_grad_matches
from sgcompiler import SGCompilerError, grad

scipy_integrate = pytest.importorskip("scipy.integrate", reason="SciPy is an optional extra")


def decay(y, t, k):
    return -k * y + np.sin(t)


def solved(k):
    return np.sum(scipy_integrate.odeint(decay, np.ones(2), np.linspace(0.0, 1.0, 5),
                                         args=(k,)))


def stepped(k, steps=200):
    """The same integral as a loop of Runge-Kutta steps: differentiated."""
    y, h = np.ones(2), 1.0 / steps
    total = np.sum(y)
    for i in range(steps):
        t = i * h
        a = decay(y, t, k)
        b = decay(y + 0.5 * h * a, t + 0.5 * h, k)
        c = decay(y + 0.5 * h * b, t + 0.5 * h, k)
        d = decay(y + h * c, t + h, k)
        y = y + h / 6.0 * (a + 2.0 * b + 2.0 * c + d)
        if (i + 1) % (steps // 4) == 0:
            total = total + np.sum(y)
    return total


def test_odeint_is_refused_pointing_at_a_loop():
    line = solved.__code__.co_firstlineno + 1
    with pytest.raises(SGCompilerError, match=rf"test_refused_solvers.py:{line}\).*"
                                              "scipy.integrate.odeint has no derivative rule.*"
                                              "loop of fixed steps"):
        grad(solved)(0.5)
    # what the message suggests works, and gives odeint's value
    assert abs(stepped(0.5) - solved(0.5)) < 1e-6
    assert_grad_matches(stepped, [np.array([0.5, 1.5])[0]])
