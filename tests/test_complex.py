"""Complex values: complex arguments and complex intermediates of a real loss, and the FFTs.

The convention (README, "Complex numbers"): the gradient of a real f with respect to
z = x + iy is df/dx - i df/dy, as JAX and autograd return it. Every check here compares
with finite differences taken separately along the real and the imaginary direction
(gradcheck.numeric_grad), and along a random complex direction.
"""
import numpy as np
import pytest

from gradcheck import assert_grad_matches, numeric_grad
from sgcompiler import grad, jvp, value_and_grad, vjp

R = np.random.default_rng(16)
# a complex adjoint reaching a real value would be cast with this warning: it must not be
pytestmark = pytest.mark.filterwarnings("error::numpy.exceptions.ComplexWarning")


def cn(*shape):
    return R.normal(size=shape) + 1j * R.normal(size=shape)


def away_from_zero(*shape):
    return R.uniform(0.5, 2.0, size=shape) * np.exp(1j * R.uniform(-3.0, 3.0, size=shape))


# --- specimens ----------------------------------------------------------------------------

def abs_squared(z):
    return np.sum(np.abs(z) ** 2)


def product_abs(z, w):
    return np.sum(np.abs(z * w + 1.0) ** 2)


def product_abs_cubed(z, w):
    return np.sum(np.abs(z * w + 1.0) ** 3)


def parts(z):
    return np.sum(np.real(z) * np.imag(z) + np.angle(z) + np.conj(z).real ** 3)


def methods(z):
    return np.sum(z.real ** 2 - z.imag * z.conj().imag + np.angle(z, deg=True))


def holomorphic(z):
    return np.sum(np.real(np.exp(z) * np.conj(z)) + np.abs(np.log(z)) + np.imag(np.sqrt(z)))


def quotient(z, w):
    return np.mean(np.abs(z / (w + 3.0)) ** 2) + np.real(np.sum(z ** 3))


def products(z, a):
    return np.real(np.vdot(z, z @ a)) + np.abs(np.sum(np.dot(z, a)))


def unit_circle(x):
    return np.sum(np.abs(np.exp(1j * x) + x) ** 2)


def cast_up(x):
    return np.sum(np.abs(x.astype(np.complex128) * (1.0 + 2.0j)) ** 3)


PHASES = np.exp(1j * np.linspace(0.0, 3.0, 4))


def global_phases(x):
    return np.sum(np.real(x * PHASES) ** 2)


def spectrum(x):
    return np.fft.rfft(x)


def through_a_helper(x):
    return np.sum(np.abs(spectrum(x)) ** 2 * np.arange(4.0))


def loop(z):
    s = 0.0 * z
    for k in range(3):
        s = s * z + (k + 1.0)
    return np.sum(np.abs(s))


def written_into(x, z):
    buffer = z * 1.0
    buffer[1] = x[0] * 2.0
    return np.sum(np.abs(buffer) ** 2)


def signs(z):
    return np.sum(np.real(np.sign(z) * np.conj(z[::-1])))


SETTINGS = {"phases": np.exp(1j * np.arange(3.0))}


def settings_in_a_dict(x):
    return np.sum(np.abs(x + SETTINGS["phases"]) ** 2)


def joined(z, x):
    a = np.concatenate([z, x])
    b = np.reshape(a, (2, 3)).T
    return np.sum(np.abs(b @ np.ones(2)) ** 2) + np.sum(np.imag(b) * np.real(b))


def looped_helper(z, w):
    s = 0.0
    for i in range(3):
        s = s + np.sum(np.abs(conj_affine(z, w[i])) ** 2)
    return s


def conj_affine(z, w):
    return z * w + np.conj(z)


def rotate_until(z):
    k = 0
    while np.sum(np.abs(z)) < 50.0 and k < 5:
        z = z * (1.5 + 0.5j)
        k += 1
    return np.sum(np.real(z))


def mean_mixed(z, x):
    return np.real(np.mean(z * x)) + np.sum(np.imag(z) * x)


CASES = [
    (abs_squared, lambda: [cn(3)], (0,)),
    (abs_squared, lambda: [cn(2, 3)], (0,)),
    (product_abs, lambda: [cn(2, 3), R.normal(size=3)], (0, 1)),
    (product_abs, lambda: [cn(3), cn(2, 1)], (0, 1)),
    (parts, lambda: [away_from_zero(2, 3)], (0,)),
    (methods, lambda: [away_from_zero(4)], (0,)),
    (holomorphic, lambda: [away_from_zero(3)], (0,)),
    (quotient, lambda: [cn(2, 3), cn(3)], (0, 1)),
    (quotient, lambda: [cn(2, 3), R.normal(size=(2, 1))], (0, 1)),
    (products, lambda: [cn(3), cn(3, 3)], (0, 1)),
    (products, lambda: [cn(3), R.normal(size=(3, 3))], (0, 1)),
    (unit_circle, lambda: [R.normal(size=5)], (0,)),
    (cast_up, lambda: [R.normal(size=(2, 2))], (0,)),
    (global_phases, lambda: [R.normal(size=4)], (0,)),
    (through_a_helper, lambda: [R.normal(size=6)], (0,)),
    (loop, lambda: [cn(3)], (0,)),
    (written_into, lambda: [R.normal(size=2), cn(3)], (0, 1)),
    (mean_mixed, lambda: [cn(2, 3), R.normal(size=3)], (0, 1)),
    (signs, lambda: [away_from_zero(4)], (0,)),
    (joined, lambda: [cn(3), R.normal(size=3)], (0, 1)),
    (looped_helper, lambda: [cn(3), R.normal(size=(3, 3))], (0, 1)),
    (rotate_until, lambda: [cn(3)], (0,)),
    (settings_in_a_dict, lambda: [R.normal(size=3)], (0,)),
]


@pytest.mark.parametrize("f, make, wrt", CASES,
                         ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)])
def test_gradients_match_finite_differences_in_both_directions(f, make, wrt):
    args = make()
    assert_grad_matches(f, args, wrt=wrt)


def test_the_convention_is_df_dx_minus_i_df_dy():
    z = np.array([1.0 + 2.0j, -0.5 + 0.25j])
    # |z|^2 = x^2 + y^2: df/dx = 2x, df/dy = 2y, so the gradient is 2x - 2iy = 2 conj(z)
    np.testing.assert_allclose(grad(abs_squared)(z), 2.0 * np.conj(z))
    np.testing.assert_allclose(grad(abs_squared)(z), numeric_grad(abs_squared, [z], 0),
                               atol=1e-7)
    # Im(z) = y: df/dx = 0, df/dy = 1
    np.testing.assert_allclose(grad(lambda z: np.sum(np.imag(z)))(z), [-1j, -1j])


def test_a_complex_scalar_argument():
    z = 0.3 - 0.7j
    got = grad(lambda z: np.abs(z * z + 1.0))(z)
    assert type(got) is complex
    np.testing.assert_allclose(got, numeric_grad(lambda z: np.abs(z * z + 1.0), [z], 0))
    z64 = np.complex64(0.3 - 0.7j)
    got = grad(lambda z: np.abs(z * z + 1.0))(z64)
    assert type(got) is np.complex64


def test_value_and_grad_and_float32_precision():
    z = cn(3).astype(np.complex64)
    value, g = value_and_grad(abs_squared)(z)
    assert np.isclose(value, abs_squared(z))
    assert g.dtype == np.complex64
    np.testing.assert_allclose(g, 2.0 * np.conj(z), rtol=1e-6)


def test_real_code_is_compiled_as_before():
    # a function with no complex values keeps its real rules (np.sign, no real_like)
    g = grad(lambda x: np.sum(np.abs(x) * 2.0))
    g(np.ones(3))
    assert "np.sign" in g.source and "real_like" not in g.source


def test_complex_code_reads_the_complex_rules():
    g = grad(product_abs_cubed)     # (np.abs(...) ** 2 is abs_squared: test_abs_squared.py)
    g(cn(3), R.normal(size=3))
    assert "np.conj(complex_sign(" in g.source
    assert "real_like(" in g.source      # w is real: its adjoint is the real part


# --- the FFTs, through the compiler ------------------------------------------------------

def fft_loss(x, norm, n):
    return np.sum(np.abs(np.fft.fft(x, n=n, norm=norm)) ** 2 * np.arange(n or x.shape[-1]))


def ifft_axis0(z, norm):
    return np.sum(np.abs(np.fft.ifft(z, axis=0, norm=norm)) ** 3)


def real_round_trip(x, norm):
    spectrum = np.fft.rfft(x, norm=norm) * (1.0 + np.arange(x.shape[-1] // 2 + 1))
    return np.sum(np.fft.irfft(spectrum, n=x.shape[-1], norm=norm) ** 2)


def irfft_padded(z, norm):
    return np.sum(np.sin(np.fft.irfft(z, n=9, norm=norm)))


def two_d(z, norm):
    return np.sum(np.abs(np.fft.fft2(z, s=(4, 3), norm=norm)) ** 2) + \
        np.sum(np.abs(np.fft.ifft2(z, norm=norm) + z) ** 3)


def n_d(x, norm):
    out = np.fft.fftn(x, axes=(0, 2), norm=norm)
    return np.sum(np.real(out) ** 2) + np.sum(np.imag(np.fft.ifftn(out, s=(2, 5),
                                                                   axes=(1, 2))) ** 3)


NORMS = [None, "backward", "ortho", "forward"]


@pytest.mark.parametrize("norm", NORMS)
def test_fft_gradients_for_every_norm(norm):
    x = R.normal(size=(2, 6))
    assert_grad_matches(lambda x: fft_loss(x, norm, None), [x])
    assert_grad_matches(lambda x: fft_loss(x, norm, 8), [x[0]])
    assert_grad_matches(lambda x: fft_loss(x, norm, 4), [x[1]])
    assert_grad_matches(lambda z: ifft_axis0(z, norm), [cn(3, 2)])
    assert_grad_matches(lambda x: real_round_trip(x, norm), [R.normal(size=(2, 7))])
    assert_grad_matches(lambda x: real_round_trip(x, norm), [R.normal(size=6)])
    assert_grad_matches(lambda z: irfft_padded(z, norm), [cn(2, 4)])
    assert_grad_matches(lambda z: two_d(z, norm), [cn(3, 4)])
    assert_grad_matches(lambda x: n_d(x, norm), [R.normal(size=(2, 3, 4))])


def signal_fit(x, target):
    return np.sum((np.abs(np.fft.rfft(x)) - target) ** 2)


def test_forward_mode_through_complex_code():
    x, t = R.normal(size=5), R.normal(size=5)
    eps = 1e-6
    for f in (unit_circle, cast_up, through_a_helper):
        arg, direction = (x[:4], t[:4]) if f is cast_up else (x, t)
        if f is cast_up:
            arg, direction = arg.reshape(2, 2), direction.reshape(2, 2)
        if f is through_a_helper:
            arg, direction = R.normal(size=6), R.normal(size=6)
        value, tangent = jvp(f, (arg,), (direction,))
        numeric = (f(arg + eps * direction) - f(arg - eps * direction)) / (2 * eps)
        np.testing.assert_allclose(tangent, numeric, rtol=1e-5, atol=1e-7)
    z, dz = away_from_zero(2, 3), cn(2, 3)
    for f in (abs_squared, parts, methods, holomorphic):
        value, tangent = jvp(f, (z,), (dz,))
        numeric = (f(z + eps * dz) - f(z - eps * dz)) / (2 * eps)
        np.testing.assert_allclose(value, f(z))
        np.testing.assert_allclose(tangent, numeric, rtol=1e-5, atol=1e-7)


def test_vjp_of_a_complex_function():
    z = cn(4)
    out, pull = vjp(lambda z: np.fft.fft(z) * 2.0, z)
    g = cn(4)
    # the pairing Re(g * dw): the vjp is the transpose (not the adjoint) of the Jacobian
    (got,) = pull(g)
    eps = 1e-6
    for direction in (R.normal(size=4), 1j * R.normal(size=4)):
        change = (np.fft.fft(z + eps * direction) - np.fft.fft(z - eps * direction)) * 2.0
        np.testing.assert_allclose(np.real(np.sum(got * direction)),
                                   np.real(np.sum(g * change)) / (2 * eps), rtol=1e-6)


# --- what is refused -------------------------------------------------------------------

def complex_result(z):
    return np.sum(z * z)


def pseudo_inverse_of_complex(z):
    return np.sum(np.abs(np.linalg.pinv(z)))


def max_of_complex(z):
    return np.sum(np.maximum(np.abs(z), 0.5) * np.real(z))


def test_a_complex_loss_is_refused():
    with pytest.raises(TypeError, match="returned a complex value"):
        grad(complex_result)(cn(3))


def test_a_rule_without_complex_support_refuses_complex_operands():
    with pytest.raises(TypeError, match="np.linalg.pinv has no derivative rule for complex"):
        grad(pseudo_inverse_of_complex)(cn(3, 3))
    # on real values in the same complex code the rule is used as usual
    assert_grad_matches(max_of_complex, [cn(2, 3)])


def documented(x):
    """A real model: no complex numbers here (the word in a docstring changes nothing)."""
    return np.sum(np.tanh(x) ** 2)


def test_a_real_function_stays_real_code():
    assert "real_like" not in grad(documented).source


def test_vjp_of_a_tree_with_complex_leaves():
    tree = {"z": away_from_zero(3), "x": R.normal(size=3)}
    out, pull = vjp(lambda p: np.sum(np.abs(p["z"]) * p["x"]), tree)
    (g,) = pull(1.0)
    np.testing.assert_allclose(g["z"], tree["x"] * np.conj(tree["z"]) / np.abs(tree["z"]))
    np.testing.assert_allclose(g["x"], np.abs(tree["z"]))


def kinds_sample(z, x):
    a = np.abs(z)
    b = a * x
    c = b * z
    s = np.fft.rfft(x)
    return np.sum(np.real(c)) + np.sum(np.abs(s))


def test_which_values_may_be_complex():
    from sgcompiler import pipeline, rules
    from sgcompiler.analysis.complex_kinds import maybe_complex
    analysed = pipeline.analyse(kinds_sample, ("z", "x"))
    with rules.complex_values(True):
        found = maybe_complex(analysed.norm, analysed.resolution,
                              {"x": ((3,), np.dtype(float))})
    assert {"z", "c", "s"} <= found
    assert not {"x", "a", "b"} & found
    # an argument of unknown dtype may be complex, and so is what is computed from it
    with rules.complex_values(True):
        assert {"x", "b"} <= maybe_complex(analysed.norm, analysed.resolution, {})
    # no guard on the real statements: b = a * x gets plain adjoint code
    g = grad(kinds_sample, wrt=(0, 1))
    g(cn(3), R.normal(size=3))
    assert "da = real_like(" not in g.source and "db = real_like(dc * z, b)" in g.source
    # nor on a real value's contribution that is real whatever the arguments (rfft_grad's)
    assert "dx = rfft_grad(" in g.source
    assert_grad_matches(kinds_sample, [cn(3), R.normal(size=3)])


class _Box:
    pass


HIDDEN = _Box()
HIDDEN.inner = _Box()
HIDDEN.inner.inner = _Box()
HIDDEN.inner.inner.kernel = np.array([1 + 1j, 2 - 1j, 0.5j])


def hidden_kernel(x):
    return np.sum(np.abs(x * HIDDEN.inner.inner.kernel))


def test_complex_values_the_compiler_did_not_see_are_refused():
    # three attributes deep: compiled as real code, whose np.abs rule would be wrong for
    # complex values; the complex adjoint that reaches the real x gives it away
    with pytest.raises(TypeError, match="complex values appeared in code that sgcompiler "
                                        "compiled for real values"):
        grad(hidden_kernel)(np.ones(3))


def _complex_rows():
    """The first complex-mode row of each primitive in the rule table (rule_cases.py)."""
    from rule_cases import CASES
    seen, rows = set(), []
    for case in CASES:
        if case.complex_mode and id(case.prim) not in seen:
            seen.add(id(case.prim))
            rows.append(case)
    return rows


COMPLEX_ROWS = _complex_rows()


@pytest.fixture(scope="module")
def compiled_rows(tmp_path_factory):
    """A module with one loss per row, Re(sum(w * prim(...))), the primitive bound to a
    module-level name P<k> (the compiler reads the file)."""
    import importlib.util
    import sys
    lines = ["import numpy as np\n"]
    for k, case in enumerate(COMPLEX_ROWS):
        args = ", ".join(f"a{i}" for i in range(len(case.makers)))
        kws = "".join(f", {n}={v!r}" for n, v in case.kw.items())
        pair = "np.sum(out[0] * w[0] + np.sum(out[1] * w[1]))"
        if set(case.unused) & {0, 1}:       # a result whose adjoint the row leaves out
            pair = " + ".join(f"np.sum(out[{i}] * w[{i}])" for i in (0, 1)
                              if i not in case.unused)
        lines.append(f"def f{k}({args}, w):\n    out = P{k}({args}{kws})\n"
                     "    if isinstance(out, tuple):\n"
                     f"        return np.real({pair})\n"
                     "    return np.real(np.sum(out * w))\n")
    path = tmp_path_factory.mktemp("complex_rows") / "complex_rows.py"
    path.write_text("\n\n".join(lines))
    spec = importlib.util.spec_from_file_location("complex_rows", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["complex_rows"] = module
    spec.loader.exec_module(module)
    for k, case in enumerate(COMPLEX_ROWS):
        setattr(module, f"P{k}", case.prim)
    yield module
    del sys.modules["complex_rows"]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("k", range(len(COMPLEX_ROWS)), ids=[c.id for c in COMPLEX_ROWS])
def test_complex_rules_through_the_compiler(compiled_rows, k):
    import zlib
    case = COMPLEX_ROWS[k]
    r = np.random.default_rng(zlib.crc32(case.id.encode()))
    values = [m(r) for m in case.makers]
    out = case.prim(*values, **case.kw)

    def like(o):
        return r.normal(size=np.shape(o)) + (1j * r.normal(size=np.shape(o))
                                             if np.iscomplexobj(o) else 0.0)
    w = tuple(like(o) for o in out) if isinstance(out, tuple) else like(out)
    f = getattr(compiled_rows, f"f{k}")
    for i, value in enumerate(values):
        if isinstance(value, np.ndarray) and value.dtype.kind in "fc" and i not in case.fixed:
            # (the loss reads np.real or the like: complex mode comes from the argument,
            # or from the primitive's own name when it is a complex one)
            assert_grad_matches(f, values + [w], wrt=(i,), rtol=max(case.rtol, 1e-5) * 10,
                                atol=1e-6)
