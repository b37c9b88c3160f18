"""The NumPy (and SciPy) rules end to end: compiled gradients against finite differences."""
import numpy as np
import pytest

import specimens_numpy as S
from gradcheck import assert_grad_matches
from sgcompiler import SGCompilerError, grad


def _float_positions(args):
    return [i for i, a in enumerate(args) if isinstance(a, float)
            or (isinstance(a, np.ndarray) and a.dtype.kind == "f")]


@pytest.mark.parametrize("f, make", S.ROWS, ids=[r[0].__name__ for r in S.ROWS])
def test_matches_finite_differences(f, make):
    args = make(np.random.default_rng(0))
    assert_grad_matches(f, args, wrt=_float_positions(args), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f, make", S.ROWS, ids=[r[0].__name__ for r in S.ROWS])
def test_float32_arguments_get_float32_gradients(f, make):
    args = [a.astype(np.float32) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a
            for a in make(np.random.default_rng(0))]
    for i in _float_positions(args):
        g = grad(f, wrt=i)(*args)
        assert type(g) is float if type(args[i]) is float else g.dtype == np.float32


if S.SCIPY_MISSING:
    def test_scipy_specimens():
        pytest.skip(S.SCIPY_MISSING)


# Specimens whose generated code computes in float32 throughout. (Elsewhere a Python-float
# seed can meet np.sum, which makes an np.float64; the API still returns float32.)
@pytest.mark.parametrize("f", [S.elementwise, S.statistics, S.norms, S.einsum_forms, S.shapes],
                         ids=lambda f: f.__name__)
def test_float32_stays_float32_inside_the_generated_code(f):
    from sgcompiler.pipeline import compile_gradient
    make = dict((r[0], r[1]) for r in S.ROWS)[f]
    args = [a.astype(np.float32) for a in make(np.random.default_rng(0))]
    first = f.__code__.co_varnames[0]
    _, g = compile_gradient(f, (first,)).bind(f)(*args)
    assert g.dtype == np.float32, f"{f.__name__}: gradient computed in {g.dtype}"


def sum_where(x, m):
    return np.sum(x, where=m)


def test_an_argument_the_rule_does_not_take_is_refused_with_its_location():
    with pytest.raises(SGCompilerError, match=r"test_numpy_coverage.py:\d+\): np.sum is called "
                                              r"with arguments its derivative rule does not "
                                              r"take .*where"):
        grad(sum_where)(np.ones(3), np.ones(3, dtype=bool))


def pad_linear_ramp(x):
    return np.sum(np.pad(x, 2, mode="linear_ramp") ** 2)


def test_pad_modes_that_compute_values_are_refused():
    # when compiled, with the line (it raised NotImplementedError in the generated code)
    line = pad_linear_ramp.__code__.co_firstlineno + 1
    with pytest.raises(SGCompilerError, match=rf"\.py:{line}\): the gradient of np.pad with "
                                              "mode='linear_ramp' is not supported"):
        grad(pad_linear_ramp)(np.ones(3))


def test_integer_arguments_and_complex_pseudo_inverses_are_refused():
    with pytest.raises(TypeError, match="dtype int64; convert it with .astype"):
        grad(S.norms)(np.arange(12).reshape(3, 4))
    # (cholesky, svd, qr and eigh of complex matrices: tests/test_complex_decompositions.py)
    with pytest.raises(TypeError, match="np.linalg.pinv has no derivative rule for complex"):
        grad(lambda a: np.real(np.sum(np.linalg.pinv(a))))(np.eye(3, dtype=complex) * 2.0)
    # the norms take complex values (rules/complex_numbers.py)
    rng = np.random.default_rng(3)
    assert_grad_matches(S.norms, [rng.normal(size=(3, 4)) + 1j * rng.normal(size=(3, 4))])
