"""Central finite differences, and the check every gradient test uses."""
import numpy as np

from sgcompiler import grad


def numeric_grad(f, args, i, eps=1e-6):
    """d f / d args[i] by central differences, element by element. For a complex argument
    z = x + iy, the real and imaginary parts are perturbed separately, and the result is
    df/dx - i df/dy: the convention sgcompiler's gradients follow (JAX's and autograd's)."""
    args = list(args)
    x = args[i]
    if np.iscomplexobj(x):
        return _numeric_complex_grad(f, args, i, eps)
    if isinstance(x, float):
        plus, minus = list(args), list(args)
        plus[i], minus[i] = x + eps, x - eps
        return (f(*plus) - f(*minus)) / (2 * eps)
    x = np.asarray(x, dtype=float)
    out = np.zeros_like(x)
    for k in range(x.size):
        step = np.zeros_like(x)
        step.flat[k] = eps
        plus, minus = list(args), list(args)
        plus[i], minus[i] = x + step, x - step
        out.flat[k] = (f(*plus) - f(*minus)) / (2 * eps)
    return out


def _numeric_complex_grad(f, args, i, eps):
    """df/dx - i df/dy for the complex argument args[i] = x + iy, element by element."""
    z = args[i]
    out = np.zeros(np.shape(z), dtype=complex)
    for k in range(int(np.size(z))):
        for direction, sign in ((1.0, 1.0), (1j, -1.0)):    # along x, then along y
            step = np.zeros(np.shape(z), dtype=complex)
            step.flat[k] = eps * direction
            plus, minus = list(args), list(args)
            plus[i], minus[i] = z + step, z - step
            if np.ndim(z) == 0 and not isinstance(z, np.ndarray):
                plus[i], minus[i] = type(z)(plus[i]), type(z)(minus[i])
            partial = (f(*plus) - f(*minus)) / (2 * eps)
            out.flat[k] += partial if sign > 0 else -1j * partial
    return out if np.ndim(z) else complex(out)


def directional_check(f, args, i, g, seed=0, eps=1e-6):
    """Compare <g, v> with (f(x + eps v) - f(x - eps v)) / 2 eps for a random v (for a
    complex argument, a v with random real and imaginary parts and <g, v> = Re(sum g v),
    which is what the gradient df/dx - i df/dy gives)."""
    rng = np.random.default_rng(seed)
    x = args[i]
    v = rng.normal(size=np.shape(x))
    if np.iscomplexobj(x):
        v = v + 1j * rng.normal(size=np.shape(x))
    plus, minus = list(args), list(args)
    plus[i], minus[i] = x + eps * v, x - eps * v
    numeric = (f(*plus) - f(*minus)) / (2 * eps)
    analytic = float(np.real(np.sum(np.asarray(g) * v)))
    return analytic, numeric


def assert_grad_matches(f, args, wrt=None, rtol=1e-5, atol=1e-7):
    """sgcompiler's gradient of f at args equals finite differences, for each wrt position."""
    positions = range(len(args)) if wrt is None else wrt
    for i in positions:
        g = grad(f, wrt=i)(*args)
        assert np.shape(g) == np.shape(args[i]), (np.shape(g), np.shape(args[i]))
        if isinstance(args[i], float):
            assert isinstance(g, float), type(g)
        assert np.iscomplexobj(g) == np.iscomplexobj(args[i]), (type(g), np.result_type(g))
        if np.size(args[i]) <= 30:
            expected = numeric_grad(f, args, i)
            np.testing.assert_allclose(g, expected, rtol=rtol, atol=atol,
                                       err_msg=f"{f.__name__}: gradient wrt argument {i}")
        analytic, numeric = directional_check(f, args, i, g)
        np.testing.assert_allclose(analytic, numeric, rtol=rtol, atol=atol,
                                   err_msg=f"{f.__name__}: directional check wrt {i}")


def leaves(tree, path=()):
    """(path, array) for each leaf of a nested dict/list/tuple of arrays."""
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield from leaves(v, path + (k,))
    elif isinstance(tree, (list, tuple)):
        for i, v in enumerate(tree):
            yield from leaves(v, path + (i,))
    else:
        yield path, tree


def replace_leaf(tree, path, value):
    """A copy of `tree` with the leaf at `path` replaced."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(tree, dict):
        out = dict(tree)
        out[head] = replace_leaf(tree[head], rest, value)
        return out
    items = list(tree)
    items[head] = replace_leaf(tree[head], rest, value)
    return tuple(items) if isinstance(tree, tuple) else items


def get_leaf(tree, path):
    for p in path:
        tree = tree[p]
    return tree


def assert_tree_grad_matches(f, args, i, rtol=1e-5, atol=1e-7):
    """sgcompiler's gradient wrt the parameter tree args[i] matches finite differences
    leaf by leaf, and has the tree's structure."""
    g = grad(f, wrt=i)(*args)
    tree = args[i]
    assert [p for p, _ in leaves(g)] == [p for p, _ in leaves(tree)]
    for path, leaf in leaves(tree):
        def f_leaf(value, path=path):
            new = list(args)
            new[i] = replace_leaf(tree, path, value)
            return f(*new)
        expected = numeric_grad(f_leaf, [leaf], 0)
        np.testing.assert_allclose(get_leaf(g, path), expected, rtol=rtol, atol=atol,
                                   err_msg=f"{f.__name__}: leaf {path}")


def checked_source(f, args, wrt=0, atol=1e-8):
    """The generated source of grad(f, wrt), after checking its gradients at `args`
    against finite differences."""
    g = grad(f, wrt=wrt)
    got = g(*args)
    positions = wrt if isinstance(wrt, tuple) else (wrt,)
    for i, value in zip(positions, got if isinstance(wrt, tuple) else (got,)):
        np.testing.assert_allclose(value, numeric_grad(f, args, i), rtol=1e-6, atol=atol)
    return g.source


def _combine(a, b, ca, cb):
    """ca * a + cb * b, leaf by leaf for dicts, lists and tuples."""
    if isinstance(a, dict):
        return {k: _combine(a[k], b[k], ca, cb) for k in a}
    if isinstance(a, (list, tuple)):
        return type(a)(_combine(x, y, ca, cb) for x, y in zip(a, b))
    out = ca * np.asarray(a, dtype=float) + cb * np.asarray(b, dtype=float)
    return float(out) if isinstance(a, float) else out


STEPS = (1e-6, 1e-5)               # the usual pair of central-difference steps
EXTRAPOLATED_STEPS = (1e-3, 2e-3)  # the fallback: Richardson at larger steps, error O(h^4)


def extrapolated(central, h):
    """(4 C(h) - C(2h)) / 3, the five-point stencil, from central differences C."""
    return _combine(central(h), central(2 * h), 4.0 / 3.0, -1.0 / 3.0)


def settled_reference(central, agree, agree_strictly):
    """The finite-difference gradient to compare a gradient with, and how it was settled.

    `central(step)` gives central differences with that step. The usual reference is the
    one with step 1e-6, trusted when step 1e-5 agrees with it (`agree`). When they disagree
    (rounding in a large or badly scaled function, or a kink near the point), a third
    opinion decides: Richardson-extrapolated differences at steps 1e-3 and 2e-3, whose
    truncation error is O(h^4) and whose rounding error is a thousand times smaller. When
    those two agree to the comparison's own tolerance (`agree_strictly`), the first is the
    reference; otherwise the function is not smooth enough here to check anything.
    These decisions look only at the primal, never at the gradient under test.

    Returns:
        (reference, how): how is "two steps", "extrapolated" or "unstable" (and then the
        reference must not be used).
    """
    fine, coarse = central(STEPS[0]), central(STEPS[1])
    if agree(fine, coarse):
        return fine, "two steps"
    first, second = (extrapolated(central, h) for h in EXTRAPOLATED_STEPS)
    if agree_strictly(first, second):
        return first, "extrapolated"
    return fine, "unstable"


def fd_hessian(f, x, *others, eps=1e-5):
    """The Hessian of scalar `f` at array `x` (its first argument; `others` are the rest),
    by central differences of sgcompiler's first-order gradient (which the rule and
    program tests check against f itself)."""
    g = grad(f)
    cols = []
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = eps
        e = e.reshape(x.shape)
        cols.append(((g(x + e, *others) - g(x - e, *others)) / (2 * eps)).ravel())
    return np.array(cols).T.reshape(x.shape + x.shape)


def assert_hessian_and_hvp_match(f, x, rng, tol=1e-5):
    """sgcompiler's hessian(f)(x), and hvp along a random direction, against fd_hessian."""
    from sgcompiler import hessian, hvp
    expected = fd_hessian(f, x)
    np.testing.assert_allclose(hessian(f)(x), expected, rtol=tol, atol=tol)
    v = rng.normal(size=x.shape)
    np.testing.assert_allclose(hvp(f, x, v), np.tensordot(expected, v, x.ndim),
                               rtol=tol, atol=tol)
