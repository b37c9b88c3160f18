"""np.abs(z) ** 2 and z.real ** 2 + z.imag ** 2 in complex mode: one operation,
abs_squared(z), whose adjoint is 2 g conj(z) (frontend/forms/powers.py), instead of the
path through np.abs (complex_sign, a division and two masks for z == 0). Checked against
finite differences in the real and imaginary directions, with broadcasting, at z == 0,
and in forward mode; real code keeps what it wrote."""
import numpy as np
import pytest

from gradcheck import assert_grad_matches
from sgcompiler import grad
from test_forward import check_jvp

R = np.random.default_rng(16)


def cnormal(*shape):
    return R.normal(size=shape) + 1j * R.normal(size=shape)


def numpy_abs(z, w):
    return np.sum(w * np.abs(z) ** 2)


def builtin_abs(z, w):
    return np.sum(abs(z) ** 2.0 * w)


def absolute_squared(z, w):
    return np.sum(np.square(np.absolute(z)) * w)


def parts(z, w):
    return np.sum(w * (z.imag ** 2 + z.real ** 2))


def nested(z, w):
    # the operand an expression: z * w + 1j
    return np.sum(np.abs(z * w + 1j) ** 2) + np.sum(np.abs(np.fft.fft(z)) ** 2 * w)


FORMS = [numpy_abs, builtin_abs, absolute_squared, parts, nested]


@pytest.mark.parametrize("f", FORMS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 3), (3,)), ((2, 3), (2, 1)),
                                    ((4,), ())])
def test_squared_magnitude_matches_finite_differences(f, shapes):
    z, w = cnormal(*shapes[0]), R.uniform(0.5, 1.5, size=shapes[1])
    if f is nested and shapes[1] == (2, 1):
        w = R.uniform(0.5, 1.5, size=(2, 3))
    assert_grad_matches(f, [z, w])
    check_jvp(f, (z, w), (cnormal(*shapes[0]), R.normal(size=np.shape(w))))
    g = grad(f)
    g(z, w)
    source = g.source
    assert "abs_squared(" in source and "complex_sign" not in source, source


def test_at_zero_and_for_real_arguments_of_complex_code():
    z = np.array([0.0, 1.0 - 2.0j, 0.0 + 0.5j])
    np.testing.assert_allclose(grad(numpy_abs)(z, np.ones(3)), 2.0 * np.conj(z))
    assert_grad_matches(numpy_abs, [z, np.ones(3)])

    def mixed(x, z):        # x real, in complex code: its gradient stays real
        return np.sum(np.abs(x) ** 2 * np.abs(z) ** 2) + np.abs(1j * x[0]) ** 2
    x = R.normal(size=3)
    assert not np.iscomplexobj(grad(mixed)(x, cnormal(3)))
    assert_grad_matches(mixed, [x, cnormal(3)])


def scalar(z):
    return abs(z) ** 2 + z.real ** 2 + z.imag ** 2


def test_a_python_complex_scalar():
    z = 0.3 - 1.2j
    g = grad(scalar)(z)
    assert isinstance(g, complex)
    np.testing.assert_allclose(g, 4.0 * np.conj(z))
    assert_grad_matches(scalar, [z])


def not_a_squared_magnitude(z, w):
    # other powers, and parts of different operands, stay as they are
    abs_squared = np.abs(z) ** 3
    return np.sum(abs_squared + w.real ** 2 + z.imag ** 2 + np.abs(z) ** 2.5)


def test_other_forms_are_left_alone():
    z, w = cnormal(3), cnormal(3)
    g = grad(not_a_squared_magnitude)
    g(z, w)
    assert "abs_squared(" not in g.source
    assert_grad_matches(not_a_squared_magnitude, [z, w])


def real_code(x):
    return np.sum(np.abs(x) ** 2)


def test_real_code_keeps_its_form():
    g = grad(real_code)
    g(R.normal(size=4))
    assert "abs_squared(" not in g.source
    assert_grad_matches(real_code, [R.normal(size=4)])


def second_order(z):
    return np.sum(np.abs(np.exp(z)) ** 2) ** 2


def test_grad_of_grad_through_abs_squared():
    z = cnormal(3)

    def first(z):
        return np.real(np.sum(grad(second_order)(z) * np.conj(z)))
    assert_grad_matches(first, [z], rtol=1e-4)


def local_name_clash(z, w):
    abs_squared = w * 2.0
    _abs_squared = np.abs(z) ** 2
    return np.sum(abs_squared * _abs_squared)


def test_a_local_named_abs_squared():
    z, w = cnormal(3), R.normal(size=3)
    g = grad(local_name_clash)
    g(z, w)
    assert "_abs_squared(" in g.source
    assert_grad_matches(local_name_clash, [z, w])
