"""Parameter trees (dicts, lists, tuples and records of arrays and floats) for jacobian: the unit
directions of a tree, one per element of its leaves, and the Jacobian's columns put back
into one block per leaf.

    leaves({"W": (3, 2) array, "b": (2,) array})       -> [("W", ...), ("b", ...)], 8 elements
    unit_trees(tree)                                   -> 8 trees: one 1.0, zeros elsewhere
    blocks(columns (out.shape + (8,)), tree, out.shape) -> {"W": out.shape + (3, 2), "b": ...}
"""
from __future__ import annotations

import numpy as np

from .records import is_record, rebuild, record_items
from .runtime.batched_rules import BatchMismatch


def is_tree(value) -> bool:
    return type(value) in (dict, list, tuple) or is_record(value)


class _Field:
    """A record's field on a leaf's path: a derivative of the record may hold it as a
    record, a dict by field name or a tuple by position."""

    def __init__(self, name, index):
        self.name, self.index = name, index


def _container(value) -> bool:
    return isinstance(value, (dict, list, tuple)) or is_record(value)


def _child(value, key):
    """The part of a derivative at one key of a leaf's path (0.0 for a key a dict lacks)."""
    if isinstance(key, _Field):
        if isinstance(value, dict):
            return value.get(key.name, 0.0)
        return value[key.index] if isinstance(value, (list, tuple)) and not is_record(value) \
            else getattr(value, key.name)
    return value.get(key, 0.0) if isinstance(value, dict) else value[key]


def leaves(tree, path=()):
    """(path, leaf) for every array or number of a tree, in its order."""
    if is_record(tree):
        for i, (k, v) in enumerate(record_items(tree)):
            yield from leaves(v, path + (_Field(k, i),))
    elif isinstance(tree, dict):
        for k, v in tree.items():
            yield from leaves(v, path + (k,))
    elif isinstance(tree, (list, tuple)):
        for i, v in enumerate(tree):
            yield from leaves(v, path + (i,))
    else:
        yield path, tree


def _rebuilt(tree, values):
    """The tree with its leaves replaced, in order, by `values` (an iterator)."""
    if is_record(tree):
        return rebuild(tree, {k: _rebuilt(v, values) for k, v in record_items(tree)})
    if isinstance(tree, dict):
        return {k: _rebuilt(v, values) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        items = [_rebuilt(v, values) for v in tree]
        return tuple(items) if isinstance(tree, tuple) else items
    return next(values)


def unit_trees(tree):
    """A tree of tangents for each element of the tree's leaves: 1.0 there, 0 elsewhere."""
    found = [leaf for _, leaf in leaves(tree)]
    for index, leaf in enumerate(found):
        for k in range(int(np.size(leaf))):
            values = []
            for j, other in enumerate(found):
                zero = np.zeros(np.shape(other), dtype=np.result_type(other, float))
                if j == index:
                    zero.reshape(-1)[k] = 1.0
                values.append(float(zero) if isinstance(other, float) else zero)
            yield _rebuilt(tree, iter(values))


def unit_batch(tree):
    """Every unit direction of a tree at once: each leaf's tangent with a leading axis of
    all the tree's elements, 1.0 at its own elements' directions (a batched tangent,
    forward/batch.py), and their number."""
    found = [leaf for _, leaf in leaves(tree)]
    size = sum(int(np.size(leaf)) for leaf in found)
    start, values = 0, []
    for leaf in found:
        n = int(np.size(leaf))
        basis = np.zeros((size, n), dtype=np.result_type(leaf, float))
        basis[start + np.arange(n), np.arange(n)] = 1.0
        values.append(basis.reshape((size,) + np.shape(leaf)))
        start += n
    return _rebuilt(tree, iter(values)), size


def batched_rows(t, like, size):
    """A batched tangent `t` of a tree of `like`'s structure (dict keys in any order, a
    key it lacks or a plain 0.0 for a part that is zero, a leaf's tangent of fewer axes
    broadcast to it) as
    a (size, elements) matrix: row k the flat tangent in direction k. BatchMismatch where
    a part does not fit its leaf."""
    rows = []
    for path, leaf in leaves(like):
        value = t
        for key in path:
            if not _container(value):
                if not (np.ndim(value) == 0 and value == 0):
                    raise BatchMismatch(f"a batched tangent has {value!r} where the "
                                        "tree has a container")
                break
            value = _child(value, key)
        value = np.asarray(value, dtype=np.result_type(leaf, float))
        shape = np.shape(leaf)
        if np.ndim(value) == 0:
            if value != 0:
                raise BatchMismatch("a batched tangent without its axis of directions")
            value = np.zeros((size,) + shape, dtype=value.dtype)
        elif np.shape(value)[0] != size or np.ndim(value) - 1 > len(shape):
            raise BatchMismatch(f"a batched tangent of shape {np.shape(value)} for a leaf "
                                f"of shape {shape}, {size} directions")
        else:
            value = np.reshape(value, value.shape[:1] + (1,) * (len(shape) + 1 -
                                                               value.ndim) + value.shape[1:])
            value = np.broadcast_to(value, (size,) + shape)
        rows.append(value.reshape(size, -1))
    return np.concatenate(rows, axis=1) if rows else np.zeros((size, 0))


def blocks(columns, tree, shape):
    """columns (shape + (number of elements,)) cut into one block per leaf of `tree`, of
    shape + the leaf's shape, in the tree's structure."""
    found, start, parts = [leaf for _, leaf in leaves(tree)], 0, []
    for leaf in found:
        size = int(np.size(leaf))
        parts.append(columns[..., start:start + size].reshape(shape + np.shape(leaf)))
        start += size
    return _rebuilt(tree, iter(parts))


def like_tree(tree, like):
    """`tree` (a gradient or tangent of `like`'s structure: dict keys in any order, a key
    it lacks or a plain 0.0 for a part that is zero) in `like`'s structure and order, each
    leaf of its leaf's shape and a float dtype."""
    parts = []
    for path, leaf in leaves(like):
        value = tree
        for key in path:
            if not _container(value):
                assert np.ndim(value) == 0 and value == 0, \
                    f"a tree's derivative has {value!r} where {like!r} has a container"
                break
            value = _child(value, key)
        dtype = np.result_type(leaf, float)
        part = np.array(np.broadcast_to(np.asarray(value, dtype=dtype), np.shape(leaf)))
        parts.append(float(part) if isinstance(leaf, float) else part)
    return _rebuilt(like, iter(parts))


def flat(tree) -> np.ndarray:
    """A tree (a tangent or a gradient of the tree's structure) as one vector."""
    return np.concatenate([np.ravel(np.asarray(leaf, dtype=float)) for _, leaf in leaves(tree)]
                          or [np.zeros(0)])


def tree_jacobian_fwd(jvp, f, args, position, out):
    """The Jacobian of f's array output in the tree args[position]: one jvp per element
    of its leaves, one block per leaf."""
    x = args[position]
    columns = []
    for e in unit_trees(x):
        tangents = [None] * len(args)
        tangents[position] = e
        columns.append(np.asarray(jvp(f, tuple(args), tuple(tangents))[1], dtype=float))
    stacked = np.stack(columns, axis=-1) if columns else np.zeros(np.shape(out) + (0,))
    return blocks(stacked, x, np.shape(out))


def tree_jacobian_rev(gradient, args, position, out):
    """The same from one gradient (a tree) per output element: `gradient(*args, weights)`
    is the gradient of sum(f(*args) * weights) in args[position]."""
    out = np.asarray(out)
    rows = []
    for k in range(out.size):
        weights = np.zeros(out.size)
        weights[k] = 1.0
        rows.append(flat(gradient(*args, weights.reshape(out.shape))))
    size = sum(int(np.size(leaf)) for _, leaf in leaves(args[position]))
    stacked = np.stack(rows) if rows else np.zeros((0, size))
    return blocks(stacked.reshape(out.shape + (size,)), args[position], out.shape)


def nested_blocks(matrix, tree):
    """A (n, n) matrix over the elements of a tree's leaves as a tree of trees of blocks:
    H[i][j] of shape leaf_i.shape + leaf_j.shape (the Hessian of a tree)."""
    found, start, rows = [leaf for _, leaf in leaves(tree)], 0, []
    for leaf in found:
        size = int(np.size(leaf))
        rows.append(blocks(matrix[start:start + size].reshape(np.shape(leaf) + (-1,)),
                           tree, np.shape(leaf)))
        start += size
    return _rebuilt(tree, iter(rows))
