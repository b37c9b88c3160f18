"""np.convolve, np.correlate, np.gradient, the FFT shifts, np.partition, np.rollaxis and
np.i0 through the compiler in forward mode, and what their rules refuse. The reverse-mode
checks are the rows of rule_cases.py and the specimens of specimens_numpy.py."""
import numpy as np
import pytest

import specimens_numpy as S
from sgcompiler import SGCompilerError, grad
from test_forward import check_jvp

R = np.random.default_rng(3)


FORWARD = [(S.filters, [(6,), (3,)]), (S.gradient_axes, [(4, 5)]), (S.reorders, [(6,)])]


@pytest.mark.parametrize("f, shapes", FORWARD, ids=[f.__name__ for f, _ in FORWARD])
def test_forward_mode(f, shapes):
    primals = [R.normal(size=s) for s in shapes]
    check_jvp(f, primals, [R.normal(size=s) for s in shapes])


def spaced(x, h):
    return np.sum(np.gradient(x, h) ** 2)


def test_a_spacing_with_a_gradient_is_refused():
    # np.gradient's rule gives a gradient for f only; the spacing's would be silently lost
    with pytest.raises(SGCompilerError, match="np.gradient"):
        grad(spaced, wrt=1)(R.normal(size=5), 0.5)


def test_the_spacing_as_a_constant_is_fine():
    x = R.normal(size=5)
    g = grad(spaced)(x, 0.5)
    eps, d = 1e-6, R.normal(size=5)
    numeric = (spaced(x + eps * d, 0.5) - spaced(x - eps * d, 0.5)) / (2 * eps)
    np.testing.assert_allclose(np.sum(g * d), numeric, rtol=1e-6)
