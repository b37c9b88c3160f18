"""vjp and the reverse-mode Jacobian: a function's generated forward and backward pair.

    out, f_vjp = vjp(f, x, w)       f_forward(x, w) -> (out, saved), made by the compiler
    dx, dw = f_vjp(cotangent)       f_backward(cotangent, saved): generated code too

The pair is the one a call of `f` inside a differentiated function gets (pipeline.piece), so
`out` may be any value (an array, a tuple, a dict, a parameter tree) and `f_vjp.source` is
readable code. `grad(f, has_aux=True)` (with_aux) and `jacobian(f, mode="rev")` use it.
"""
from __future__ import annotations

import inspect

import numpy as np

from .backend.located import located
from .data_kinds import foreign
from .errors import RuntimeRefusal, SGCompilerError
from .frontend.forms.checkpoint import check_policy
from .pipeline import piece
from .records import is_record, rebuild, record_items
from .runtime.namespace import is_foreign, like_array
from .tree_blocks import leaves


def vjp(fn, *primals, checkpoint=None):
    """The value of `fn(*primals)` and a function that pulls a cotangent back.

    Args:
        fn: a Python function (or a gradient made by `grad`: reverse over reverse).
        primals: its positional arguments: floats, float arrays, or parameter trees (dicts,
            lists, tuples, records: NamedTuples, dataclasses, registered types) of them;
            each gets a gradient, a record's of its own type.
        checkpoint: None, "sqrt" or trips per segment: `fn`'s outermost loops run in
            segments, as with grad(f, checkpoint=...).
    Returns:
        `(out, f_vjp)`: `f_vjp(cotangent)`, with a cotangent of `out`'s structure and
        shapes, returns one gradient per primal, as a tuple, each shaped like its primal.
        `f_vjp.source` is the generated forward and backward code.
    Raises:
        SGCompilerError: for code that cannot be differentiated.
        TypeError: for a primal that cannot be differentiated (an int, a bool, a string).
    """
    fn = plain_function(fn)
    params = list(inspect.signature(fn).parameters)
    if len(primals) > len(params):
        raise TypeError(f"vjp: {fn.__name__} takes {len(params)} arguments, got "
                        f"{len(primals)}")
    for name, value in zip(params, primals):
        check_primal(fn.__name__, name, value)
    forward, backward, made = pair(fn, tuple(params[:len(primals)]), primals, {},
                                   check_policy(checkpoint))
    out, saved = forward(*primals)
    return out, VJPFunction(fn, backward, saved, out, primals, made.source)


class VJPFunction:
    """`f_vjp` of `vjp`: call it with a cotangent of the output."""

    def __init__(self, fn, backward, saved, out, primals, source):
        self._fn, self._backward, self._saved = fn, backward, saved
        self._out, self._primals, self.source = out, primals, source

    def __repr__(self):
        return f"<vjp of {self._fn.__qualname__}>"

    def __call__(self, cotangent):
        problem = structure_problem(cotangent, self._out)
        if problem:
            raise TypeError(f"vjp of {self._fn.__name__}: the cotangent must have the "
                            f"structure and shapes of the output: {problem}")
        try:
            grads = self._backward(cotangent, unspent(self._saved))
        except RuntimeRefusal as exc:
            raise located(exc) from None        # with the line whose gradient refused
        return tuple(like_tree(g, p) for g, p in zip(grads, self._primals))


vjp.sgcompiler_refused_inside = (
    "vjp(g, x)[1](c) is grad(gc)(x, c) for a module-level def gc(x, c): "
    "return np.sum(g(x) * c), which can be differentiated")


def pair(fn, active, args, kwargs, checkpoint=None):
    """(forward, backward, Piece) of `fn` for the `active` parameters, specialised for the
    shapes of the array arguments and the parameter trees among `args`/`kwargs`."""
    bound = inspect.signature(fn).bind(*args, **kwargs)
    arrays = tuple((p, np.shape(v), np.result_type(v)) for p, v in bound.arguments.items()
                   if type(v) is np.ndarray and (v.ndim or v.dtype.kind == "c")
                   or type(v) is complex or isinstance(v, np.complexfloating))
    # complex leaves of parameter trees: the code for them is complex mode's
    arrays += tuple(((p,) + path, np.shape(leaf), np.result_type(leaf))
                    for p, v in bound.arguments.items() if isinstance(v, (dict, list, tuple))
                    for path, leaf in _leaves(v) if np.iscomplexobj(leaf))
    trees = frozenset(p for p, v in bound.arguments.items()
                      if isinstance(v, (dict, list, tuple)) or is_record(v))
    made = piece(fn, active, arrays, trees, checkpoint=checkpoint)
    return made.forward_cell.cell_contents, made.backward_cell.cell_contents, made


def _leaves(tree):
    """(path, leaf) of the NumPy arrays and numbers and the complex numbers in a dict, list
    or tuple."""
    return ((path, leaf) for path, leaf in leaves(tree)
            if isinstance(leaf, (np.ndarray, np.generic, complex)))


def with_aux(fn, wrt, args, kwargs):
    """((loss, aux), gradients of loss for `wrt`, the generated code) for a function that
    returns (loss, aux): its pair, seeded with 1 for the loss and zeros for aux.

    Raises:
        TypeError: when `fn` does not return a pair.
    """
    forward, backward, made = pair(fn, wrt, args, kwargs)
    out, saved = forward(*args, **kwargs)
    if not isinstance(out, tuple) or len(out) != 2:
        raise TypeError(f"{fn.__name__} must return (loss, aux) with has_aux=True, got "
                        f"{type(out).__name__}")
    return out, backward((1.0, zeros_like_tree(out[1])), saved), made.source


def zeros_like_tree(tree):
    """A zero cotangent for `tree` (0.0 for what is not a float array)."""
    if isinstance(tree, dict):
        return {k: zeros_like_tree(v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        items = [zeros_like_tree(v) for v in tree]
        return type(tree)(*items) if hasattr(tree, "_fields") else type(tree)(items)
    if isinstance(tree, np.ndarray) and tree.dtype.kind == "f":
        return np.zeros_like(tree)
    return 0.0


def jacobian_rev(fn, wrt, args, kwargs):
    """The Jacobian of `fn` at `args` with respect to the parameter names `wrt`: one
    backward call per element of the output, stacked into out.shape + x.shape."""
    for name in wrt:
        value = inspect.signature(fn).bind(*args, **kwargs).arguments.get(name)
        check_primal(fn.__name__, name, value)
        if isinstance(value, (dict, list, tuple)):
            raise TypeError(f"jacobian: '{name}' is a parameter tree; take the Jacobian "
                            "with respect to an array, or use vjp")
    forward, backward, _ = pair(fn, wrt, args, kwargs)
    out, saved = forward(*args, **kwargs)
    if isinstance(out, (dict, list, tuple)) or not np.issubdtype(np.result_type(out),
                                                                 np.floating):
        raise TypeError(f"jacobian: {fn.__name__} must return a float or a float array, "
                        f"got {type(out).__name__}; use vjp for other outputs")
    shape = np.shape(out)
    bound = inspect.signature(fn).bind(*args, **kwargs).arguments
    rows = [[] for _ in wrt]
    for k in range(int(np.prod(shape, dtype=int))):
        seed = np.zeros(shape, dtype=np.result_type(out))
        seed.flat[k] = 1.0
        try:
            grads = backward(seed if shape else float(seed), unspent(saved))
        except RuntimeRefusal as exc:
            raise located(exc) from None        # with the line whose gradient refused
        for row, g, name in zip(rows, grads, wrt):
            g = like_tree(g, bound[name])
            # (a row computed from dask data stays lazy, as the output is)
            row.append(g.astype(float) if foreign(g) else np.asarray(g, dtype=float))
    return tuple(np.reshape(np.stack(row) if row else np.array(row),
                            shape + np.shape(bound[name]))
                 for row, name in zip(rows, wrt))


def unspent(saved):
    """A copy of a forward function's saved values that one backward call may use up: the
    backward pops its tapes (lists), so each call gets lists of its own (the arrays in them
    are shared; nothing writes into them)."""
    if isinstance(saved, list):
        return [unspent(v) for v in saved]
    if type(saved) is tuple:
        return tuple(unspent(v) for v in saved)
    return saved


def plain_function(fn):
    """`fn`, or the generated code of a gradient made by grad (to differentiate it)."""
    if getattr(type(fn), "sgcompiler_transform", False):
        return fn.as_function()
    if not inspect.isfunction(fn):
        raise SGCompilerError(f"sgcompiler differentiates Python functions; got "
                              f"{type(fn).__name__} {fn!r}")
    return fn


def check_primal(fname, name, value):
    """Refuse a value that cannot be differentiated with respect to (TypeError)."""
    if isinstance(value, dict):
        for k, v in value.items():
            check_primal(fname, f"{name}[{k!r}]", v)
    elif is_record(value):     # a dataclass, a NamedTuple, a registered type
        for k, v in record_items(value):
            check_primal(fname, f"{name}.{k}", v)
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            check_primal(fname, f"{name}[{i}]", v)
    elif isinstance(value, bool) or not (
            isinstance(value, (float, complex)) or isinstance(
                value, (np.ndarray, np.floating, np.complexfloating)) and value.dtype.kind in "fc"):
        # data of another library (dask) is read, not differentiated: every primal of vjp
        # gets a gradient, which would be as large as the data
        data = "; data of another library (a dask array) can be read from a global or a " \
            "closure, or take grad(f, wrt=...) of the parameters" if foreign(value) else ""
        raise TypeError(f"{fname}: cannot differentiate with respect to '{name}' of type "
                        f"{type(value).__name__}; pass a float, a NumPy float array, or a "
                        f"dict, list or tuple of them{data}")


def structure_problem(a, b) -> str | None:
    """How `a` differs from `b` in structure or shapes (None: it does not)."""
    if isinstance(b, dict):
        if not isinstance(a, dict) or set(a) != set(b):
            return f"expected a dict with keys {sorted(map(str, b))}, got {_kind(a)}"
        return next((p for k in b for p in [structure_problem(a[k], b[k])] if p), None)
    if isinstance(b, (list, tuple)):
        if not isinstance(a, (list, tuple)) or len(a) != len(b):
            return f"expected a {type(b).__name__} of {len(b)}, got {_kind(a)}"
        return next((p for x, y in zip(a, b) for p in [structure_problem(x, y)] if p), None)
    if np.shape(a) != np.shape(b):
        return f"expected shape {np.shape(b)}, got {np.shape(a)}"
    return None


def _kind(value) -> str:
    if isinstance(value, (dict, list, tuple)):
        return f"a {type(value).__name__} of {len(value)}"
    return f"a value of shape {np.shape(value)}"


def like_tree(g, x):
    """The gradient `g` with the structure, types and shapes of the argument `x` (a plain
    0.0 stands for zeros of any structure)."""
    zero = type(g) is float and g == 0.0
    if is_record(x):           # its adjoint: {field: ...}, as field(x, name) makes it
        return rebuild(x, {k: like_tree(0.0 if zero else g.get(k, 0.0), v)
                           for k, v in record_items(x)})
    if isinstance(x, dict):
        return {k: like_tree(0.0 if zero else g.get(k, 0.0), v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        items = [like_tree(0.0 if zero else g[i], v) for i, v in enumerate(x)]
        if hasattr(x, "_fields"):          # a namedtuple
            return type(x)(*items)
        return tuple(items) if isinstance(x, tuple) else items
    return like_leaf(g, x)


def like_leaf(g, x):
    """The gradient `g` with the type, shape and dtype of its argument `x` (a number or
    an array): a new array unless `g` is already exactly that. A `g` of another array
    library (a dask array, computed from dask data) stays one, uncomputed: the caller
    computes it (with the other gradients, in one graph).

    Raises:
        TypeError: for a complex `g` of a real `x`: complex values met code compiled for
            real ones (frontend/complex_values.py did not see where they come from), whose
            rules may not hold for them.
    """
    if type(g) is np.ndarray and type(x) is np.ndarray and g.shape == x.shape and \
            g.dtype == x.dtype and g.flags.writeable:
        return g        # (the common case, as the last test below answers it)
    if is_foreign(x):       # an array of another library (runtime/namespace.py)
        return like_array(g, x)
    if type(g) is not float and np.iscomplexobj(g) and not (
            type(x) is complex or np.iscomplexobj(x)):
        raise TypeError("complex values appeared in code that sgcompiler compiled for real "
                        "values (it did not see where they come from), so its gradient may "
                        "be wrong; make them visibly complex where they are made "
                        "(np.asarray(..., dtype=complex), or pass them as an argument)")
    if hasattr(type(g), "__array_function__") and not isinstance(g, (np.ndarray, np.generic)):
        return _lazy_like(g, x)
    if type(x) is float:
        return float(g)
    if type(x) is complex:
        return complex(g)
    if isinstance(x, np.generic):
        return x.dtype.type(g)
    if type(g) is np.ndarray and g.shape == x.shape and g.dtype == x.dtype \
            and g.flags.writeable:
        return g
    return np.array(np.broadcast_to(np.asarray(g, dtype=x.dtype), x.shape))


def _lazy_like(g, x):
    """An array `g` of another library with the dtype and shape of argument `x` (a Python
    float's gradient is a 0-d array of it, float64), by that library's own operations."""
    dtype = np.result_type(x) if not isinstance(x, float) else np.dtype(np.float64)
    if g.dtype != dtype:
        g = g.astype(dtype)
    if tuple(g.shape) != np.shape(x):
        g = np.broadcast_to(g, np.shape(x))
    return g
