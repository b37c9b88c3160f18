"""What `grad` checks of a call's arguments and gives back (api.py's helpers): which
parameters `wrt` picks, the parameter trees and their arrays, the refusals of arguments
that cannot be differentiated with respect to, the scalar-output check, and gradients
shaped and typed like their arguments. derivatives.py and cli.py use them too.
"""
from __future__ import annotations

import inspect
import math

import numpy as np

from .errors import SGCompilerError
from .records import is_record, rebuild, record_items
from .reverse_api import like_leaf
from .runtime.namespace import is_foreign, library_name, namespace_of


def wrt_names(fn, wrt) -> tuple[str, ...]:
    """The names of the parameters of `fn` that `wrt` (a tuple of positions and names)
    picks, in order; `grad` and the command line both use it.

    Raises:
        TypeError: for an item that is neither an int nor a str.
        SGCompilerError: for a position out of range, a name that is not a parameter, or a
            parameter picked twice.
    """
    name = fn.__name__
    params = list(inspect.signature(fn).parameters)
    names = []
    for w in wrt:
        if isinstance(w, bool) or not isinstance(w, (int, str)):
            raise TypeError(f"wrt must be a parameter position or name (or a tuple of them), "
                            f"got {w!r}")
        if isinstance(w, int):
            if not params:
                raise SGCompilerError(f"{name}: wrt={w} but {name} has no parameters to "
                                      "differentiate with respect to")
            if not 0 <= w < len(params):
                raise SGCompilerError(f"{name}: wrt={w} is not a parameter position of "
                                      f"{name}, whose {len(params)} parameters "
                                      f"({', '.join(params)}) are at positions 0 to "
                                      f"{len(params) - 1}")
            w = params[w]
        elif w not in params:
            raise SGCompilerError(f"{name}: wrt={w!r} is not a parameter of {name} "
                                  f"({', '.join(params)})")
        if w in names:
            raise SGCompilerError(f"{name}: wrt={tuple(wrt)!r} picks parameter '{w}' twice; "
                                  "name each parameter once")
        names.append(w)
    return tuple(names)


def dtype_refusal(dtype) -> str | None:
    """Why an array of `dtype` cannot be differentiated with respect to (None: it can);
    `grad` and the command line's --shapes both use it."""
    dtype = np.dtype(dtype)
    if dtype.kind in "fc":
        return None
    return f"an array of dtype {dtype}"


def _complex_kinds(params, args, arrays) -> tuple:
    """(parameter, shape, dtype) of the complex arguments `arrays` leaves out: code for
    complex values differs (complex mode, pipeline/__init__.py), so the compiler must know of them
    even when it does not specialise for shapes."""
    known = {entry[0] for entry in arrays}
    found = []
    for p, a in zip(params, args):
        leaves = _tree_arrays(a, (p,)) if type(a) in _TREES else [(p, a)]
        for path, leaf in leaves:
            if path not in known and (type(leaf) is complex or isinstance(
                    leaf, (np.ndarray, np.generic)) and leaf.dtype.kind == "c"):
                found.append((path, np.shape(leaf), np.result_type(leaf)))
    return tuple(found)


_SCALAR_TYPES = (float, np.float64, np.float32, int)


_TREES = (dict, list, tuple)


def _tree_kind(tree):
    """What code specialised for a parameter tree depends on: its structure, and the
    shapes and dtypes of its arrays."""
    t = type(tree)
    if t is np.ndarray:
        return tree.shape, tree.dtype
    if t is dict:
        return (dict,) + tuple((k, _tree_kind(v)) for k, v in tree.items())
    if t is list or t is tuple:
        return (t,) + tuple(_tree_kind(v) for v in tree)
    return t


def _tree_arrays(tree, path=(), numbers=False, records=False):
    """(path of keys and indexes, array) for the arrays in a (nested) dict, list or
    tuple (and its Python floats and ints, with `numbers`)."""
    if records and is_record(tree):     # (the compiler reads these as field(tree, k))
        for k, v in record_items(tree):
            yield from _tree_arrays(v, path + (k,), numbers, records)
    elif isinstance(tree, dict):
        for k, v in tree.items():
            yield from _tree_arrays(v, path + (k,), numbers, records)
    elif isinstance(tree, (list, tuple)):
        for i, v in enumerate(tree):
            yield from _tree_arrays(v, path + (i,), numbers, records)
    elif isinstance(tree, np.ndarray) or numbers and type(tree) in (float, int):
        yield path, tree


def _all_leaves(args):
    """The values in `args` that are not dicts, lists, tuples or records, nested."""
    for a in args:
        if type(a) in _TREES or is_record(a):
            yield from (v for _, v in _foreign_leaves(a))
        else:
            yield a


def _foreign_leaves(tree, path=()):
    """(path, array) for the arrays of other libraries in a parameter tree."""
    if is_record(tree):
        tree = dict(record_items(tree))
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield from _foreign_leaves(v, path + (k,))
    elif isinstance(tree, (list, tuple)):
        for i, v in enumerate(tree):
            yield from _foreign_leaves(v, path + (i,))
    elif is_foreign(tree):
        yield path, tree


def _plain_float(value) -> bool:
    """The common, valid case, checked fast: a float or a float64/float32 array."""
    t = type(value)
    return t is float or (t is np.ndarray and value.dtype.kind == "f")


def _decided_by_kind(tree) -> bool:
    """Whether `_tree_kind(tree)` decides what `_check_tree` says of it: dicts, lists and
    tuples themselves (not subclasses, records) down to NumPy arrays and floats, whose
    types and dtypes the kind holds."""
    t = type(tree)
    if t is np.ndarray or t is float:
        return True
    if t is dict:
        return all(_decided_by_kind(v) for v in tree.values())
    if t is list or t is tuple:
        return all(_decided_by_kind(v) for v in tree)
    return False


def _check_tree(fname, name, value, foreign=False):
    """Check a wrt argument, which may be a (nested) dict, list or tuple of arrays (of
    array-API libraries other than NumPy too, with `foreign`: grad takes them)."""
    if is_record(value):        # a NamedTuple, a dataclass, a registered type
        for key, item in record_items(value):
            _check_tree(fname, f"{name}.{key}", item, foreign)
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_tree(fname, f"{name}[{key!r}]", item, foreign)
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _check_tree(fname, f"{name}[{i}]", item, foreign)
    elif is_foreign(value) and not foreign:
        raise TypeError(f"{fname}: '{name}' is a {library_name(namespace_of([value]))} "
                        "array; grad and value_and_grad (without has_aux) take arrays of "
                        "array-API libraries, but this transformation takes NumPy arrays "
                        "only so far: pass np.asarray(...) of it")
    else:
        _check_argument(fname, name, value)


def _refuse_subclasses(fname, named_values):
    """Refuse arguments (wrt or not, in parameter trees too) that are ndarray subclasses:
    generated code computes with plain-array semantics, which a masked array (its mask)
    or np.matrix (`*` is a matrix product) do not have."""
    for name, value in named_values:
        for path, leaf in _tree_arrays(value, (name,)) if type(value) in _TREES else \
                [((name,), value)]:
            if isinstance(leaf, np.ndarray) and type(leaf) is not np.ndarray:
                where = path[0] + "".join(f"[{k!r}]" for k in path[1:])
                t = type(leaf)
                hint = next((h for c, h in _SUBCLASS_HINTS if isinstance(leaf, c)),
                            "generated code would treat it as a plain array")
                raise TypeError(f"{fname}: argument '{where}' is a {t.__module__}."
                                f"{t.__qualname__} (an ndarray subclass); sgcompiler "
                                f"differentiates plain arrays only: {hint}; pass "
                                "np.asarray(...) of it")


_SUBCLASS_HINTS = ((np.ma.MaskedArray, "its mask would be ignored (np.where(x.mask, 0.0, "
                                       "x.data) gives its masked entries no weight)"),
                   (np.matrix, "its `*` is a matrix product"))


def _check_argument(fname, name, value):
    if isinstance(value, bool) or isinstance(value, np.bool_):
        raise TypeError(f"{fname}: cannot differentiate with respect to '{name}', a bool")
    if isinstance(value, (float, int)) and not isinstance(value, bool):
        if isinstance(value, int):
            raise TypeError(f"{fname}: cannot differentiate with respect to '{name}', an "
                            f"int ({value}); pass a float such as {value}.0")
        return
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        refusal = dtype_refusal(value.dtype)
        if refusal is None:
            return
        raise TypeError(f"{fname}: cannot differentiate with respect to '{name}', "
                        f"{refusal}; convert it with .astype(float)")
    if type(value) is complex:
        return
    if is_foreign(value):       # an array of another array-API library (real floats only)
        xp = namespace_of([value])
        if xp.isdtype(value.dtype, "real floating"):
            return
        raise TypeError(f"{fname}: cannot differentiate with respect to '{name}', a "
                        f"{library_name(xp)} array of dtype {value.dtype}; sgcompiler takes "
                        f"real float arrays of {library_name(xp)}: convert it with "
                        f"{library_name(xp)}.astype(..., float64)")
    raise TypeError(f"{fname}: cannot differentiate with respect to '{name}' of type "
                    f"{type(value).__name__}; pass a float, a float array (NumPy's or of "
                    "an array-API library), or a dict, list or tuple of them")


def _check_scalar(fname, result):
    if isinstance(result, (tuple, list)):
        # (np.shape fails on a tuple of values of different shapes)
        shapes = ", ".join(str(np.shape(r)) if not isinstance(r, (tuple, list, dict))
                           else type(r).__name__ for r in result)
        what = f"a {type(result).__name__} of {len(result)} values of shapes ({shapes})"
    elif isinstance(result, dict) or _size(result) != 1:
        what = f"a value of shape {tuple(result.shape) if is_foreign(result) else np.shape(result)}" \
            if not isinstance(result, dict) else "a dict"
    elif not is_foreign(result) and np.iscomplexobj(result):
        raise TypeError(f"{fname} returned a complex value ({result!r}); sgcompiler "
                        "differentiates a real loss: return np.real(...), np.abs(...) ** 2 "
                        "or another real function of it")
    else:
        return
    raise TypeError(f"{fname} must return a scalar to be differentiated, but it returned "
                    f"{what}; reduce it to a scalar (e.g. np.sum) first")


def _size(value):
    return math.prod(tuple(value.shape) if is_foreign(value) else np.shape(value))


def _like_tree(g, x):
    """The gradient `g` with the structure, types and shapes of argument `x`."""
    t = type(x)
    if t is not float and t is not np.ndarray and is_record(x):
        # its adjoint: {field: ...} from field(x, name), or a list by position
        return rebuild(x, {name: _like_tree(_child(g, name, i), v)
                           for i, (name, v) in enumerate(record_items(x))})
    if isinstance(x, dict):
        return {k: _like_tree(0.0 if _zero(g) else g.get(k, 0.0), v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        items = [_like_tree(0.0 if _zero(g) else g[i], v) for i, v in enumerate(x)]
        if hasattr(x, "_fields"):          # a namedtuple
            return type(x)(*items)
        return tuple(items) if isinstance(x, tuple) else items
    return _like(g, x)


def _child(g, name, i):
    """The adjoint of a record's child `name` (at position `i`) in its adjoint `g`."""
    if _zero(g):
        return 0.0
    if isinstance(g, dict):
        return g.get(name, 0.0)
    return g[i]


def _leaves(tree):
    return (a for _, a in _tree_arrays(tree, records=True))


def _taken_leaves(tree, out):
    """Append the arrays of a tree to `out`: NumPy's containers and arrays walked here, on
    every call, without the generic walks' tests; anything else (records, arrays of other
    libraries) by those walks."""
    t = type(tree)
    if t is np.ndarray:
        out.append(tree)
    elif t is dict or t is list or t is tuple:
        for v in (tree.values() if t is dict else tree):
            _taken_leaves(v, out)
    elif t is not float and t is not int:
        out.extend(_leaves(tree))
        out.extend(v for _, v in _foreign_leaves(tree))


def _unaliased(grads, args, kwargs):
    """Tree gradients whose arrays share no memory with the arguments or each other, so
    updating one in place cannot change another (generated code may pass arrays on)."""
    taken = []
    _taken_leaves((args, kwargs), taken)
    # (the ids of what is taken, and what is not a NumPy array owning its memory: views,
    # arrays of other libraries; `taken` keeps them all alive, so their ids stay theirs)
    ids = {id(other) for other in taken}
    views = [other for other in taken if type(other) is not np.ndarray or
             other.base is not None]

    def fresh(leaf):
        if type(leaf) is np.ndarray and leaf.base is None:
            # an array that owns its memory overlaps only itself and views of it
            if id(leaf) in ids or views and any(np.may_share_memory(leaf, other)
                                                for other in views):
                leaf = leaf.copy()
        elif is_foreign(leaf):        # (the standard cannot tell views apart)
            if id(leaf) in ids:
                leaf = namespace_of([leaf]).asarray(leaf, copy=True)
        elif any(np.may_share_memory(leaf, other) for other in taken):
            leaf = leaf.copy()
        taken.append(leaf)
        ids.add(id(leaf))
        if type(leaf) is not np.ndarray or leaf.base is not None:
            views.append(leaf)
        return leaf

    def walk(tree):
        if type(tree) is np.ndarray:
            return fresh(tree)
        if is_record(tree):
            return rebuild(tree, {k: walk(v) for k, v in record_items(tree)})
        if isinstance(tree, dict):
            return {k: walk(v) for k, v in tree.items()}
        if isinstance(tree, (list, tuple)):
            items = [walk(v) for v in tree]
            if hasattr(tree, "_fields"):
                return type(tree)(*items)
            return tuple(items) if isinstance(tree, tuple) else items
        return fresh(tree) if isinstance(tree, np.ndarray) or is_foreign(tree) else tree
    return walk(grads)


def _zero(g):
    return type(g) is float and g == 0.0


_like = like_leaf        # the gradient of one number or array argument
