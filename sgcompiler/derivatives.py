"""Forward mode and what is built on it: `jvp`, `jacobian`, `hessian`, `hvp`.

    out, out_dot = jvp(f, (x, w), (x_dot, w_dot))   # f and its directional derivative
    J = jacobian(f, wrt=0)(x, w)                    # out.shape + x.shape
    H = hessian(f)(x)                               # forward over reverse: x.shape * 2
    Hv = hvp(f, x, v)                               # one jvp of the gradient

`jvp` runs a generated tangent function (pipeline.forward_mode.compile_jvp; `jvp_source` shows it).
The Hessian is the jacobian of the generated gradient: the compiler reads its own output.
`jacobian(mode="fwd")` and `hessian` run the tangent code once with all the unit directions
along a leading axis of each tangent (batched, forward/batch.py), or, where the code cannot
be batched, one jvp per column.
"""
from __future__ import annotations

import functools
import linecache
import math
import types
import warnings
import weakref

import numpy as np

from . import rules
from .analysis.sizes import WEAK
from .backend.located import located
from .errors import RuntimeRefusal
from .api import grad
from .arguments import _TREES, _check_tree, _tree_arrays, wrt_names
from .backend.jit import check_backend
from .collected import CollectedGradient
from .data_kinds import foreign
from .records import is_record_type
from .forward.batch import NotBatchable, PerColumnWarning
from .runtime.batched_rules import BatchMismatch
from .frontend.depends import function_reads
from .frontend.forms.checkpoint import check_policy
from .frontend.forms.objects import as_function
from .frontend.forms.varargs import collected_copy, collects_arguments
from .frontend.source import function_name
from .pipeline.forward_mode import compile_jvp
from .reverse_api import jacobian_rev, plain_function
from .tree_blocks import (batched_rows, blocks, flat, is_tree, leaves, like_tree, nested_blocks,
                          tree_jacobian_fwd, tree_jacobian_rev, unit_batch, unit_trees)


def jvp(f, primals, tangents, backend: str = "numpy", checkpoint=None):
    """f(*primals) and its derivative in the direction `tangents` (forward mode).

    Args:
        f: a Python function whose source is available.
        primals: a tuple of f's positional arguments (arrays, floats, parameter trees).
        tangents: a tuple of the same length and structure; None for an argument that is
            held constant.
        backend: "numpy", or "numba": the tangent code compiled by numba, as for `grad`
            (compiled once per function and kind of arguments).
        checkpoint: None, "sqrt" or trips per segment, accepted as `grad` accepts it (and
            checked the same way), with nothing to do: forward mode saves nothing per
            trip (each statement is followed by its tangent), so its memory does not grow
            with a loop's length and there is nothing to recompute.
    Returns:
        (out, out_dot): f's result and its tangent, with the result's structure.
    Raises:
        SGCompilerError: for code that cannot be differentiated.
    """
    check_policy(checkpoint)
    primals, tangents = tuple(primals), tuple(tangents)
    # the fast cache below is keyed by `f`: a plain function, or a bound method (its
    # entry goes with the method object, which is what holds the instance), but not a
    # callable object or a partial (an entry, whose code holds them, would keep them alive)
    keyed = f if isinstance(f, (types.FunctionType, types.MethodType)) else None
    key = None if keyed is None else _fast_key(keyed, primals, tangents)
    key = key and key + (backend,)
    found = _FAST.get(key) if key is not None else None
    # a bound method, a callable object, a functools.partial: a function made from it
    lifted = None if found is not None and found[0]() is keyed else as_function(f)
    f = lifted or f
    if found is None and collects_arguments(f):     # def f(*ws): a copy for len(primals)
        f = collected_copy(f, len(primals), ())[0]
    if found is not None and found[0]() is keyed and _still_right(found):
        function, names = found[1], found[2]      # (a tangent parameter per position)
        try:
            out, out_dot = function(*primals, **{n: t for n, t in zip(names, tangents)
                                                 if t is not None})
        except RuntimeRefusal as exc:
            raise located(exc) from None
        return out, _like_output(out_dot, out)
    if len(primals) != len(tangents):
        raise TypeError(f"jvp: {len(primals)} primals but {len(tangents)} tangents; give "
                        "one tangent per primal (None for a constant)")
    tangents = tuple(_integer_tangent(f, p, v, t) for p, v, t in
                     zip(_params(f), primals, tangents))
    if all(t is None for t in tangents):       # nothing moves: the tangent is zero
        out = f(*primals)
        return out, _like_output(0.0, out)
    compiled = _compiled(f, primals, tangents, check_backend(backend))
    function, tangent_names = compiled.bind(f), compiled.tangent_params
    given = {tangent_names[p]: _float_tree(t) for p, t in
             zip(_params(f), tangents) if t is not None}
    try:
        out, out_dot = function(*primals, **given)
    except RuntimeRefusal as exc:
        raise located(exc) from None            # with the line whose tangent refused
    if key is not None:
        if len(_FAST) >= _FAST_SIZE:
            _FAST.clear()
        names = tuple(tangent_names.get(p) for p in _params(f))
        # (the check is made at the first hit: most entries of a method bound in the
        # call itself, jvp(model.loss, ...), go at once)
        _FAST[key] = [weakref.ref(keyed, _forget_fast(key)), function, names, None,
                      (compiled, f)]
    return out, _like_output(out_dot, out)


jvp.sgcompiler_refused_inside = (
    "for a scalar function g, the tangent is np.sum(grad(g)(x) * t), which can be "
    "differentiated (grad(g) of a module-level g)")


# A repeated jvp of one function on arrays of the same types, shapes and dtypes finds
# its bound tangent function here, with the check that the names it was compiled from
# still mean what they meant (as GradientFunction does for grad).
_FAST: dict = {}
_FAST_SIZE = 256


def _still_right(entry) -> bool:
    """Whether a fast-cache entry's code is still right (its check made at the first)."""
    checker = entry[3]
    if checker is None:
        pending = entry[4]
        if pending is None:         # (made meanwhile, on another thread)
            return entry[3]()
        compiled, f = pending
        checker = entry[3] = compiled.depends.checker(f, function_reads(f))
        entry[4] = None
    return checker()


def _forget_fast(key):
    """What the weak reference to an entry's function calls when it is collected: the
    entry goes (a bound method's entry holds its instance, through its code's cells).
    It holds the cache itself: at exit, the module's names are gone before the objects."""
    cache = _FAST

    def gone(ref):
        if cache.get(key, (None,))[0] is ref:
            cache.pop(key, None)
    return gone


def _fast_key(f, primals, tangents):
    """The key of a call made only of float arrays and Python floats (their types,
    shapes and dtypes: what the code was specialised and checked for), or None."""
    if len(primals) != len(tangents) or not hasattr(f, "__code__"):
        return None
    # (a rule registered later, or complex mode, changes what a compile gives)
    key = [id(f), rules.version(), rules.complex_mode()]
    for p, t in zip(primals, tangents):
        for value in (p, t):
            if type(value) is np.ndarray and value.dtype.kind == "f":
                key.append((value.shape, value.dtype))
            elif type(value) is float or (value is None and value is t):
                key.append(type(value))
            else:
                return None
    return tuple(key)


def _integer_tangent(f, name, value, tangent):
    """A tangent given for an integer or bool argument (every primal gets one, as in
    JAX): it can only be zero, and then the argument is a constant (None)."""
    if tangent is None or is_tree(value):
        return tangent
    kind = np.asarray(value).dtype.kind if isinstance(value, (np.ndarray, np.generic)) \
        else "b" if isinstance(value, bool) else "i" if isinstance(value, int) else "f"
    if kind not in "biu":
        return tangent
    if np.any(np.asarray(tangent) != 0):
        raise TypeError(f"jvp: '{name}' of {f.__name__} is an integer or bool, so its "
                        "tangent must be zero (or None)")
    return None


def jvp_source(f, primals, tangents) -> str:
    """The generated tangent code `jvp(f, primals, tangents)` runs."""
    return _compiled(f, tuple(primals), tuple(tangents)).source


def _params(f):
    return f.__code__.co_varnames[:f.__code__.co_argcount]


def _compiled(f, primals, tangents, backend="numpy"):
    params = _params(f)
    if len(primals) > len(params):
        raise TypeError(f"jvp: {f.__name__} takes {len(params)} positional arguments, "
                        f"{len(primals)} primals given")
    wrt = tuple(p for p, t in zip(params, tangents) if t is not None)
    for p, value, t in zip(params, primals, tangents):
        if t is not None:
            _check_tree(f.__name__, p, value)
            _check_structure(f.__name__, p, value, t)
    if not wrt:
        raise TypeError("jvp: every tangent is None; give the tangent of at least one primal")
    scalars, trees, arrays = _kinds(params, primals)
    return compile_jvp(f, wrt, scalars, trees, arrays, backend=backend)


def _tangent_function(f, primals, tangents, backend="numpy"):
    compiled = _compiled(f, primals, tangents, backend)
    return compiled.bind(f), compiled.tangent_params


def _kinds(params, args):
    """What the code is specialised for: Python numbers, trees, array shapes and dtypes."""
    types_ = [type(a) for a in args]
    scalars = frozenset(p for p, t in zip(params, types_) if t in (float, int))
    trees = frozenset(p for p, t in zip(params, types_)
                      if issubclass(t, (dict, list, tuple)) or is_record_type(t))
    arrays = tuple((p, np.shape(a), np.result_type(a)) for p, a in zip(params, args)
                   if type(a) in (np.ndarray, complex)
                   or isinstance(a, (np.floating, np.complexfloating)))
    arrays += tuple(((p,) + path, a.shape, a.dtype) if type(a) is np.ndarray
                    else ((p,) + path, (), WEAK)
                    for p, tree in zip(params, args) if type(tree) in _TREES
                    for path, a in _tree_arrays(tree, numbers=True)
                    if type(a) is not np.ndarray or a.ndim)
    return scalars, trees, arrays


def _check_structure(fname, name, value, tangent):
    """A tangent must have its primal's structure and shapes."""
    if isinstance(value, dict):
        if not isinstance(tangent, dict) or set(tangent) != set(value):
            raise TypeError(f"jvp: the tangent of '{name}' must be a dict with the keys "
                            f"{sorted(value)}")
        for k in value:
            _check_structure(fname, f"{name}[{k!r}]", value[k], tangent[k])
    elif isinstance(value, (list, tuple)):
        if not isinstance(tangent, (list, tuple)) or len(tangent) != len(value):
            raise TypeError(f"jvp: the tangent of '{name}' must be a sequence of "
                            f"{len(value)} items")
        for i, (v, t) in enumerate(zip(value, tangent)):
            _check_structure(fname, f"{name}[{i}]", v, t)
    elif np.shape(tangent) != np.shape(value):
        raise TypeError(f"jvp: the tangent of '{name}' has shape {np.shape(tangent)} but "
                        f"'{name}' has shape {np.shape(value)}")
    elif np.iscomplexobj(tangent) and not np.iscomplexobj(value):
        raise TypeError(f"jvp: the tangent of '{name}' is complex but '{name}' is real; "
                        "give a real tangent (along a complex direction: one jvp for its "
                        "real part, one for its imaginary part)")


def _float_tree(t):
    if isinstance(t, dict):
        return {k: _float_tree(v) for k, v in t.items()}
    if isinstance(t, (list, tuple)) and not hasattr(t, "_fields"):
        return type(t)(_float_tree(v) for v in t)
    if isinstance(t, (int, np.integer)) and not isinstance(t, bool):
        return float(t)
    return t


def _like_output(t, out):
    """The tangent with the result's structure, shapes and float dtype (a zero tangent
    is 0.0 or a number at compile time)."""
    if isinstance(out, dict):
        return {k: _like_output(t[k] if isinstance(t, dict) else 0.0, v)
                for k, v in out.items()}
    if isinstance(out, (list, tuple)):
        items = [_like_output(t[i] if isinstance(t, (list, tuple)) else 0.0, v)
                 for i, v in enumerate(out)]
        if hasattr(out, "_fields"):
            return type(out)(*items)
        return tuple(items) if isinstance(out, tuple) else items
    if isinstance(out, float) and np.ndim(t) == 0:
        return float(t)
    dtype = np.result_type(out, float) if not isinstance(out, (float, int)) else float
    if foreign(t) or foreign(out):
        return _lazy_output(t, out, dtype)
    if type(t) is np.ndarray and t.shape == np.shape(out) and t.dtype == dtype:
        return t
    return np.array(np.broadcast_to(np.asarray(t, dtype=dtype), np.shape(out)))


def _lazy_output(t, out, dtype, shape=None):
    """A tangent of a result computed from another library's data (dask), kept in that
    library and uncomputed (the caller computes it with the result, in one graph); of
    `shape`, out's unless given (the batched tangents of the Jacobian)."""
    shape = np.shape(out) if shape is None else shape
    if not foreign(t):      # a number, or a NumPy tangent of a dask result
        t = np.zeros_like(out, dtype=dtype, shape=shape) + t
    if np.shape(t) != shape:
        t = np.broadcast_to(t, shape)
    return t if t.dtype == dtype else t.astype(dtype)


# --- Jacobians --------------------------------------------------------------------------


def jacobian(f, wrt=0, mode: str = "auto"):
    """The Jacobian of `f` (any array output) with respect to the argument(s) `wrt`.

    Args:
        f: a Python function of arrays and floats returning an array or a float.
        wrt: a parameter position or name, or a tuple of them (then a tuple of Jacobians).
        mode: "fwd" (one jvp per input element), "rev" (one gradient per output element),
            or "auto": "fwd" when the input has no more elements than the output.
    Returns:
        A function of f's arguments giving J of shape out.shape + x.shape.
    """
    if mode not in ("fwd", "rev", "auto"):
        raise ValueError(f"jacobian: mode must be 'fwd', 'rev' or 'auto', got {mode!r}")
    given, f = f, plain_function(f)     # (a gradient made by grad: its generated code)
    if collects_arguments(f):   # def f(*ws): the Jacobian of a copy for each call's arguments
        return CollectedGradient(f, wrt, lambda copy, w: jacobian(copy, w, mode), "jacobian")
    several = isinstance(wrt, (tuple, list))
    names = wrt_names(f, tuple(wrt) if several else (wrt,))

    def jac(*args):
        params = _params(f)
        out = f(*args)
        if given is not f and isinstance(out, (float, int, np.generic)):
            # a gradient's code returns the number 0.0 for a zero known at compile time
            # (the branch taken does not reach x); the gradient itself has x's shape
            out = _like_output(out, given(*args))
        found = []
        for name in names:
            x = args[params.index(name)]
            size = _size(x)
            chosen = mode if mode != "auto" else ("fwd" if size <= _size(out) else "rev")
            if is_tree(x):
                _check_tree(f.__name__, name, x)
                found.append(_tree_jacobian_fwd(f, args, params.index(name), out)
                             if chosen == "fwd" else tree_jacobian_rev(
                                 grad(_scalarised(f), wrt=params.index(name)), args,
                                 params.index(name), out))
                continue
            if isinstance(out, (list, tuple, dict)):    # (as _jacobian_rev refuses them)
                raise TypeError(f"jacobian: {f.__name__} must return a float or a float "
                                f"array, got {type(out).__name__}; use vjp for other outputs")
            found.append(_jacobian_fwd(f, args, params.index(name), np.shape(out))
                         if chosen == "fwd" else _jacobian_rev(f, args, params.index(name), out))
        return tuple(found) if several else found[0]
    jac.__name__ = f"{f.__name__}_jacobian"
    return _refusals_located(jac)


def _refusals_located(fn):
    """`fn`, raising a refusal of the generated code it runs (errors.RuntimeRefusal) as an
    SGCompilerError with the user's line (backend/located.py)."""
    @functools.wraps(fn)
    def located_refusals(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except RuntimeRefusal as exc:
            raise located(exc) from None
    return located_refusals


jacobian.sgcompiler_refused_inside = (
    "compute the rows as gradients, grad(gc)(x, c) for a module-level "
    "def gc(x, c): return np.sum(g(x) * c) and each unit vector c, or the Jacobian outside")


def _size(x) -> int:
    """The number of elements of an array, a number or a parameter tree's leaves."""
    # (from the shape: np.size of a dask array, a result computed from dask data, would
    # compute it)
    return sum(math.prod(np.shape(leaf)) for _, leaf in leaves(x)) if is_tree(x) else \
        math.prod(np.shape(x))


def _unit_directions(x):
    """Unit tangents for every element of x (an array or a float), in C order."""
    flat = np.asarray(x, dtype=np.result_type(x, float))
    for i in range(flat.size):
        e = np.zeros(flat.size, dtype=flat.dtype)
        e[i] = 1.0
        yield float(e[0]) if isinstance(x, float) else e.reshape(flat.shape)


def _jacobian_fwd(f, args, position, shape):
    """One jvp per column, or all at once (_batched_jacobian), of shape + x.shape (`shape`:
    the output's, which f's code may give as a number that broadcasts to it)."""
    x = args[position]
    _check_array(f, x)
    batched = _batched_jacobian(f, args, position, f"the jacobian of {function_name(f)}", 5,
                                shape)
    if batched is not None:
        return batched
    function, names = None, None
    columns = []
    for e in _unit_directions(x):
        tangents = [None] * len(args)
        tangents[position] = e
        if function is None:
            function, names = _tangent_function(f, tuple(args), tuple(tangents))
        out, out_dot = function(*args, **{names[_params(f)[position]]: e})
        columns.append(_broadcast_column(_like_output(out_dot, out), shape))
    stacked = _stacked(columns) if columns else np.zeros(shape + (0,))
    return stacked.reshape(shape + np.shape(x))


def _tree_jacobian_fwd(f, args, position, out):
    """The Jacobian of f's array output in the tree args[position], one block per leaf
    (out.shape + leaf.shape): one run of the tangent code with every unit direction of
    the tree's leaves at once, or (having said why, once, with a PerColumnWarning) one
    jvp per element."""
    x = args[position]

    def finish(out, out_dot, size):
        columns = _batched_columns(out, out_dot, size, np.shape(out), (size,))
        return None if columns is None else blocks(columns, x, np.shape(out))
    found = _batched_tree(f, args, position, f"the jacobian of {function_name(f)}", 5,
                          None, finish)
    return found if found is not None else tree_jacobian_fwd(jvp, f, args, position, out)


def _batched_tree(f, args, position, title, stacklevel, hessian_of, finish):
    """finish(out, out_dot, size) of one run of the tangent code (of f, or of f's gradient
    with `hessian_of`) whose tangent is a tree holding every unit direction of the tree
    args[position] at once; None (having said why, once, with a PerColumnWarning) where
    that code cannot be batched."""
    basis, size = unit_batch(args[position])
    if size == 0:
        return None
    found = _batched_code(f, args, position, title, stacklevel + 1, hessian_of)
    if found is None:
        return None
    function, tangent, _ = found
    try:
        out, out_dot = function(*args, **{tangent: basis})
        return finish(out, out_dot, size)
    except BatchMismatch as exc:    # (a rule's batched form did not fit these values)
        warnings.warn(f"{title} runs its tangent code once per column ({size} times; the "
                      f"same values, slower): {exc}", PerColumnWarning, stacklevel=stacklevel)
        return None


def _broadcast_column(column, shape):
    """A column of a Jacobian of `shape`: the tangent of a number the output broadcasts
    (a gradient zero at compile time: 0.0) broadcast to it."""
    return column if np.shape(column) == shape else np.broadcast_to(column, shape)


def _batched_jacobian(f, args, position, title, stacklevel, shape=None, hessian_of=None):
    """Every column at once: one run of tangent code whose tangents hold all the unit
    directions along a leading axis (forward/batch.py); None where the code cannot be
    batched (the caller then runs one jvp per column), which a PerColumnWarning says once
    for the code, with why (`title`: what is computed; `shape`: the output's, for a
    gradient whose code returns the number 0.0 where it is zero at compile time).
    With `hessian_of` (name, cache): the Jacobian of f's generated gradient with respect
    to `name`, the bound tangent code kept in `cache` by the kinds of the arguments, with
    the checks that what both were compiled from still holds (hessian's repeated call
    then costs the tangent code alone: no look-up of the gradient and its tangent)."""
    key = _hessian_key(args, position) if hessian_of is not None else None
    found = hessian_of[1].get(key) if key is not None else None
    if found is None or not all(check() for check in found[2]):
        found = _batched_code(f, args, position, title, stacklevel + 1, hessian_of)
        if found is None:
            return None
        if key is not None:
            hessian_of[1].clear()       # (the newest kinds only: one entry per hessian)
            hessian_of[1][key] = found
    function, tangent, _ = found
    x = args[position]
    size = int(np.size(x))
    basis = np.eye(size, dtype=np.result_type(x, float)).reshape((size,) + np.shape(x))
    try:
        out, out_dot = function(*args, **{tangent: basis})
    except BatchMismatch as exc:       # (a rule's batched form did not fit these values)
        if hessian_of is not None:
            hessian_of[1].clear()
        warnings.warn(f"{title} runs its tangent code once per column ({size} times; the "
                      f"same values, slower): {exc}", PerColumnWarning,
                      stacklevel=stacklevel)
        return None
    return _batched_columns(out, out_dot, size, np.shape(out) if shape is None else shape,
                            np.shape(x))


def _hessian_key(args, position):
    """The kinds of a hessian call whose tangent code may be kept (float arrays and
    Python numbers alone, with the rules' version and complex mode), or None."""
    key = [position, rules.version(), rules.complex_mode()]
    for value in args:
        if type(value) is np.ndarray:
            key.append((value.shape, value.dtype))
        elif type(value) in (float, int):
            key.append(type(value))
        else:
            return None
    return tuple(key) if type(args[position]) is np.ndarray else None


def _batched_code(f, args, position, title, stacklevel, hessian_of):
    """(the bound batched tangent function, its tangent parameter, the checks that it is
    still right) for f, or for f's gradient with `hessian_of`; None (having warned, once)
    where the code cannot be batched."""
    checks = ()
    if hessian_of is not None:
        user = f
        f = _gradient_function(f, hessian_of[0], args)
        checks = (f.sgcompiler_checker(function_reads(user)),)
    x, params = args[position], _params(f)
    size = sum(int(np.size(leaf)) for _, leaf in leaves(x)) if is_tree(x) else \
        int(np.size(x))
    if size == 0:
        return None
    scalars, trees, arrays = _kinds(params, args)
    try:
        compiled = compile_jvp(f, (params[position],), scalars, trees, arrays, batch=size)
    except NotBatchable as exc:
        if not exc.repeated:
            warnings.warn(f"{title} runs its tangent code once per column ({size} times; "
                          f"the same values, slower): the directions cannot all run at "
                          f"once: {exc.located or exc}", PerColumnWarning,
                          stacklevel=stacklevel)
        return None
    if hessian_of is not None:
        checks += (compiled.depends.checker(f, function_reads(f)),)
    return compiled.bind(f), compiled.tangent_params[params[position]], checks


def _batched_columns(out, out_dot, size, shape, x_shape):
    """The Jacobian of `shape` + x_shape from a batched run's out and out_dot (its
    directions first), or None where out is not an array or a number."""
    dtype = np.result_type(out, float)
    if foreign(out) or foreign(out_dot):        # from dask data: lazy, as out is
        out_dot = _lazy_output(out_dot, out, dtype, (size,) + shape)
    elif not isinstance(out, (np.ndarray, np.generic, float, int)) or isinstance(out, bool):
        return None
    else:
        out_dot = np.asarray(out_dot, dtype=dtype)
        if np.ndim(out_dot):    # (directions first, then ones for the axes out lacks)
            out_dot = out_dot.reshape(out_dot.shape[:1] + (1,) * (len(shape) - np.ndim(out))
                                      + out_dot.shape[1:])
        out_dot = np.broadcast_to(out_dot, (size,) + shape)
    return np.moveaxis(out_dot, 0, -1).reshape(shape + x_shape)


def _stacked(columns):
    """The columns of a Jacobian stacked along a last axis (in dask, lazily, when a column
    was computed from dask data)."""
    return np.stack([c if foreign(c) else np.asarray(c) for c in columns], axis=-1)


def _jacobian_rev(f, args, position, out):
    """One generated backward call per output element (vjp's forward/backward pair); of
    out.shape + x.shape where f's code gives a number that broadcasts to out (a gradient
    zero at compile time: 0.0)."""
    _check_array(f, args[position])
    found = jacobian_rev(f, (_params(f)[position],), args, {})[0]
    shape, inner = np.shape(out), np.shape(found)[:np.ndim(found) - np.ndim(args[position])]
    if inner == shape:
        return found
    found = np.reshape(found, (1,) * (len(shape) - len(inner)) + np.shape(found))
    return np.array(np.broadcast_to(found, shape + np.shape(args[position])))


_SCALARISED: dict = {}


def _scalarised(f):
    """def f_weighted(x, w, weights): return np.sum(f(x, w) * weights), with its source in
    linecache (the compiler reads source), calling f as a user function (the Jacobian of
    a parameter tree, tree_blocks.tree_jacobian_rev)."""
    found = _SCALARISED.get(f)
    if found is not None:
        return found
    params = list(_params(f))
    weights = "_weights"
    while weights in params:
        weights += "_"
    name = f"{function_name(f)}_weighted"
    text = (f"def {name}({', '.join(params + [weights])}):\n"
            f"    return _np.sum(_f({', '.join(params)}) * {weights})\n")
    filename = f"<sgcompiler {name} {id(f)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = {"_np": np, "_f": f}
    exec(compile(text, filename, "exec"), namespace)
    _SCALARISED[f] = namespace[name]
    return namespace[name]


def _check_array(f, x):
    if not (isinstance(x, float) or isinstance(x, np.ndarray) and x.dtype.kind == "f"):
        raise TypeError(f"{f.__name__}: jacobian and hessian differentiate with respect to "
                        f"a float or a float array, got {type(x).__name__}")


# --- second order: forward over reverse -------------------------------------------------


def hessian(f, wrt=0):
    """The Hessian of a scalar function `f` with respect to one argument: the Jacobian of
    its generated gradient, one jvp of the gradient code per column.

    Returns:
        A function of f's arguments giving H of shape x.shape + x.shape; for a parameter
        tree x (dicts, lists, tuples), a tree of trees: H[k1][k2] of shape
        leaf_k1.shape + leaf_k2.shape.
    """
    f = as_function(f) or f     # (a bound method: its parameters, without self)
    if collects_arguments(f):   # def f(*ws): the Hessian of a copy for each call's arguments
        return CollectedGradient(f, wrt, hessian, "hessian")
    (name,) = wrt_names(f, (wrt,))
    kept = {}       # the batched tangent code of the last kinds of arguments

    def hess(*args):
        position = _params(f).index(name)
        x = args[position]
        if is_tree(x):
            return _tree_hessian(f, name, args, position)
        _check_array(f, x)
        batched = _batched_jacobian(f, args, position, f"the hessian of {function_name(f)}",
                                    4, np.shape(x), (name, kept))
        if batched is not None:
            return batched
        gradient = _gradient_function(f, name, args)
        columns = []
        function, names = None, None
        for e in _unit_directions(x):
            tangents = [None] * len(args)
            tangents[position] = e
            if function is None:
                function, names = _tangent_function(gradient, tuple(args), tuple(tangents))
            g, g_dot = function(*args, **{names[name]: e})
            columns.append(_broadcast_column(_like_output(g_dot, g), np.shape(x)))
        stacked = _stacked(columns)
        return stacked.reshape(np.shape(x) + np.shape(x))
    hess.__name__ = f"{f.__name__}_hessian"
    return _refusals_located(hess)


hessian.sgcompiler_refused_inside = (
    "write the Hessian-vector products as grad(gv)(x, v) for a module-level "
    "def gv(x, v): return np.sum(grad(g)(x) * v)")


def _tree_hessian(f, name, args, position):
    """A tree of trees of blocks for a parameter tree x (dicts, lists, tuples): H[k1][k2]
    of shape leaf_k1.shape + leaf_k2.shape, as JAX's hessian gives it; one jvp of the
    generated gradient (a tree) per element of the leaves, read in x's order."""
    x = args[position]
    _check_tree(f.__name__, name, x)
    batched = _batched_tree_hessian(f, name, args, position)
    if batched is not None:
        return batched
    gradient = _gradient_function(f, name, args)
    columns = []
    for e in unit_trees(x):
        tangents = [None] * len(args)
        tangents[position] = e
        columns.append(flat(like_tree(jvp(gradient, tuple(args), tuple(tangents))[1], x)))
    return nested_blocks(np.stack(columns, axis=-1), x)


def _batched_tree_hessian(f, name, args, position):
    """The Hessian of a tree from one run of the tangent code of f's gradient, its
    tangent a tree whose leaves hold every unit direction of the whole tree along a
    leading axis; None (having said why, once, with a PerColumnWarning) where that code
    cannot be batched."""
    x = args[position]
    return _batched_tree(f, args, position, f"the hessian of {function_name(f)}", 6,
                         (name, {}), lambda out, out_dot, size:
                         nested_blocks(batched_rows(out_dot, x, size).T, x))


def hvp(f, x, v, *args, wrt=0):
    """The Hessian of f at x times v, without forming the Hessian: one jvp of the
    generated gradient. x is f's argument `wrt` (a position or a name; the first by
    default) and `args` are the others, in order: hvp(f, w, v, X, y, wrt="w") is
    H(f(X, w, y)) v for def f(X, w, y). x may be a parameter tree (a dict, list or
    tuple of arrays and floats); v and the result then have its structure."""
    if collects_arguments(f):   # def f(*ws): a copy for this call's number of arguments
        f = collected_copy(f, len(args) + 1, ())[0]
    (name,) = wrt_names(f, (wrt,))
    position = _params(f).index(name)
    args = tuple(args)
    primals = args[:position] + (x,) + args[position:]
    gradient = _gradient_function(f, name, primals)
    tangents = [None] * len(primals)
    tangents[position] = v
    out_dot = jvp(gradient, primals, tuple(tangents))[1]
    return like_tree(out_dot, x) if is_tree(x) else out_dot


hvp.sgcompiler_refused_inside = hessian.sgcompiler_refused_inside


def _gradient_function(f, name, args):
    """The generated gradient of f with respect to `name`, as code made for the compiler
    to read again (GradientFunction.as_function)."""
    scalars, trees, _ = _kinds(_params(f), args)
    return grad(f, wrt=name).as_function(scalars, trees)
