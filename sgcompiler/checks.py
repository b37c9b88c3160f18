"""check_grads: sgcompiler's derivatives of a function, to any order, against finite
differences in random directions (as autograd.test_util.check_grads does).

Order 1 checks the gradient of f itself when f returns one float (grad(f) and jvp(f), as
a user calls them), else of s0(args) = <u, f(args)>, for a random cotangent u of f's
output. Order k checks the gradient of s(k-1)(args) = <grad s(k-2)(args), v>, for random
directions v: a function that sgcompiler writes as Python text and compiles, so every
order is the compiler applied to its own output:

    def f_d1(x, w):
        _g = _grad(x, w)
        return np.sum(_g[0] * _v0) + np.sum(_g[1] * _v1)
"""
from __future__ import annotations

import inspect
import re

import numpy as np

from . import api
from .backend.loader import function_from_text
from .reverse_api import check_primal, plain_function
from .tree_blocks import leaves


def check_grads(f, args, order: int = 2, modes=("fwd", "rev"), eps: float = 1e-6,
                rtol: float = 1e-5, atol: float = 1e-6, directions: int = 2,
                seed: int = 0) -> None:
    """Check every derivative of `f` at `args` up to `order` against central differences.

    Each argument that is a float, a float array or a parameter tree of them is checked,
    in `directions` random directions per order, in reverse mode ("rev": the gradient,
    `grad`) and forward mode ("fwd": `jvp`), each order through the code of the order
    below.

    Args:
        f: a Python function (any output: an array, a tuple, a parameter tree).
        args: its positional arguments.
        order: the highest order to check (1: the gradient; 2: the gradient of the
            gradient, ...).
        modes: "rev" and/or "fwd".
        eps, rtol, atol: the finite-difference step and the tolerances.
    Returns:
        None.
    Raises:
        AssertionError: naming the argument, the order, the mode and the largest error.
        SGCompilerError: for code that cannot be differentiated.
    """
    args = tuple(args)
    primal = plain_function(f)
    params = list(inspect.signature(primal).parameters)[:len(args)]
    positions = [i for i, a in enumerate(args) if _differentiable(a)]
    if not positions:
        raise TypeError(f"check_grads: none of the arguments of {primal.__name__} is a float, "
                        "a float array or a parameter tree of them")
    for i in positions:
        check_primal(primal.__name__, params[i], args[i])
    rng = np.random.default_rng(seed)
    jvp = getattr(api, "jvp", None)
    modes = [m for m in modes if m == "rev" or (m == "fwd" and jvp is not None)]
    out = primal(*args)
    # a function of one float value is checked as it is (grad(f) and jvp(f) themselves,
    # as a user calls them); any other output is contracted with a random cotangent
    scalar = primal if _is_float_number(out) else _contracted(primal, params, out, rng)
    for k in range(1, order + 1):
        for i in positions:
            for mode in modes:
                worst = max((_error(scalar, args, i, mode, rng, eps, jvp, rtol, atol)
                             for _ in range(directions)), key=lambda e: e[0] - e[1])
                _judge(primal.__name__, k, mode, i, params[i], *worst)
        if k < order:
            scalar = _directional(scalar, params, positions, args, rng, k)
    return None


def _judge(name, k, mode, i, param, error, tolerance, analytic, numeric):
    if error > tolerance:
        raise AssertionError(
            f"check_grads({name}): the order-{k} derivative ({mode} mode) with respect to "
            f"argument {i} ('{param}') is wrong: largest error {error:.3g} > "
            f"{tolerance:.3g} (sgcompiler {analytic:.10g}, finite differences "
            f"{numeric:.10g})")


def _error(scalar, args, i, mode, rng, eps, jvp, rtol, atol):
    """(error, tolerance, analytic, numeric) of the derivative of `scalar` along a random
    direction of argument i."""
    v = _random_like(rng, args[i])
    if mode == "rev":
        analytic = _inner(api.grad(scalar, wrt=i)(*args), v)
    else:
        tangents = tuple(v if j == i else None for j in range(len(args)))
        analytic = float(jvp(scalar, args, tangents)[1])
    plus = [_step(a, v, eps) if j == i else a for j, a in enumerate(args)]
    minus = [_step(a, v, -eps) if j == i else a for j, a in enumerate(args)]
    numeric = float((scalar(*plus) - scalar(*minus)) / (2 * eps))
    return abs(analytic - numeric), atol + rtol * abs(numeric), analytic, numeric


def _is_float_number(out) -> bool:
    return isinstance(out, (float, np.floating)) or \
        isinstance(out, np.ndarray) and out.shape == () and out.dtype.kind == "f"


def _contracted(primal, params, out, rng):
    """s0(args) = <u, f(args)> for a random u shaped like each float leaf of the output."""
    namespace = {"np": np, "_f": primal, "__name__": __name__}
    terms = []
    for k, (path, leaf) in enumerate(leaves(out)):
        if _differentiable(leaf):
            namespace[f"_u{k}"] = _random_like(rng, leaf)
            terms.append(f"np.sum(_u{k} * _out{_path_text(path)})")
    if not terms:
        raise TypeError(f"check_grads: {primal.__name__} returns no float value")
    # (a name that is not an identifier, a lambda's "<lambda>", gives "f")
    name = f"{primal.__name__ if primal.__name__.isidentifier() else 'f'}_d0"
    text = (f"def {name}({', '.join(params)}):\n    _out = _f({', '.join(params)})\n"
            f"    return {' + '.join(terms)}\n")
    return function_from_text(text, name, namespace, "check_grads")


def _directional(scalar, params, positions, args, rng, k):
    """s_k(args) = <grad s_(k-1)(args), v>, for random directions v of each argument."""
    scalars = frozenset(params[i] for i in positions if type(args[i]) is float)
    trees = frozenset(p for p, a in zip(params, args) if isinstance(a, (dict, list, tuple)))
    wrt = positions[0] if len(positions) == 1 else tuple(positions)
    namespace = {"np": np, "__name__": __name__,
                 "_grad": api.grad(scalar, wrt=wrt).as_function(scalars, trees)}
    terms = []
    probe = None
    if any(_is_record(args[i]) for i in positions):
        # a record's gradient, as the code reads it, is keyed as the function reads the
        # record (by field: {'w': ...}, by position: a list): read that from one run
        probe = namespace["_grad"](*args)
        probe = (probe,) if len(positions) == 1 else probe
    for n, i in enumerate(positions):
        tree = probe[n] if probe is not None and _is_record(args[i]) else args[i]
        for m, (path, leaf) in enumerate(leaves(tree)):
            namespace[f"_v{n}_{m}"] = _random_like(rng, leaf)
            terms.append(f"np.sum(_g[{n}]{_path_text(path)} * _v{n}_{m})")
    base = scalar.__name__ if scalar.__name__.isidentifier() else "f"    # ("<lambda>")
    name = f"{re.sub(r'_d[0-9]+$', '', base)}_d{k}"
    got = "_g = (_grad" if len(positions) == 1 else "_g = _grad"
    close = ",)" if len(positions) == 1 else ""
    text = (f"def {name}({', '.join(params)}):\n    {got}({', '.join(params)}){close}\n"
            f"    return {' + '.join(terms)}\n")
    return function_from_text(text, name, namespace, "check_grads")


check_grads.sgcompiler_refused_inside = "call it outside the differentiated function"


def _differentiable(value) -> bool:
    if isinstance(value, (dict, list, tuple)):
        return bool(value) and all(_differentiable(v) for v in
                                   (value.values() if isinstance(value, dict) else value))
    return (type(value) is float or isinstance(value, (np.ndarray, np.floating))
            and value.dtype.kind == "f")


def _is_record(value) -> bool:
    """A NamedTuple (a tuple with fields): its adjoint may be keyed by field name."""
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def _path_text(path) -> str:
    return "".join(f"[{key!r}]" for key in path)


def _map(fn, *trees):
    first = trees[0]
    if isinstance(first, dict):
        return {k: _map(fn, *(t[k] for t in trees)) for k in first}
    if isinstance(first, (list, tuple)):
        items = [_map(fn, *items) for items in zip(*trees)]
        return type(first)(*items) if hasattr(first, "_fields") else type(first)(items)
    return fn(*trees)


def _random_like(rng, tree):
    return _map(lambda a: float(rng.normal()) if type(a) is float else
                np.asarray(rng.normal(size=np.shape(a)), dtype=np.result_type(a)), tree)


def _step(tree, direction, eps):
    return _map(lambda a, d: a + eps * d, tree, direction)


def _inner(a, b) -> float:
    if isinstance(b, (dict, list, tuple)):
        keys = b.keys() if isinstance(b, dict) else range(len(b))
        return sum(_inner(a[k], b[k]) for k in keys)
    return float(np.sum(np.asarray(a, dtype=float) * b))
