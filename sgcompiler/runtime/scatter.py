"""`np.add.at` for array libraries whose add has none (the array API standard has no
scatter-add), made of the standard's operations: part of runtime/namespace.NumPyNames,
which binds NumPy's names to a library's namespace for the runtime helpers (repeat_grad,
take_grad, add_at, ...) and generated code."""
from __future__ import annotations

import math


class StandardAdd:
    """np.add for a library whose add has no `.at` (the array API standard has no
    scatter-add): the library's add, and `add.at(out, index, values)` as NumPy's (values
    at repeated places add up), made of the standard's operations: the flat place of each
    value (indexing a grid of places), then one-hot rows times the values, a block at a
    time. That is (size of out) x (number of values) operations: fine for gradients of
    moderate size, slow for large ones (pass NumPy or CuPy arrays there)."""

    _BLOCK = 2 ** 20        # one-hot entries made at a time

    def __init__(self, names):
        self.names = names

    def __call__(self, *args, **kwargs):
        return self.names.xp.add(*args, **kwargs)

    def at(self, out, index, values):
        xp = self.names.xp
        parts = index if isinstance(index, tuple) else (index,)
        if all(isinstance(p, (int, slice)) or p is Ellipsis for p in parts):
            # a basic index picks each place once: the standard's own assignment
            where = parts if Ellipsis in parts else parts + (Ellipsis,)
            out[where] = out[where] + values
            return
        shape = tuple(out.shape)
        n = math.prod(shape)
        places = _places(xp, xp.reshape(xp.arange(n), shape), index, self.names)
        flat = xp.reshape(places, (-1,))
        values = xp.asarray(values) if not isinstance(values, self.names.ndarray) \
            else values
        values = xp.reshape(xp.broadcast_to(xp.astype(values, out.dtype), places.shape),
                            (-1,))
        every = xp.reshape(xp.arange(n), (n, 1))
        step = max(1, self._BLOCK // max(n, 1))
        total = xp.zeros((n,), dtype=out.dtype)
        m = flat.shape[0]
        for start in range(0, m, step):
            part = slice(start, min(start + step, m))   # (the standard: stops in bounds)
            hit = every == xp.reshape(flat[part], (1, -1))
            total = total + xp.astype(hit, out.dtype) @ values[part]
        out[...] = out + xp.reshape(total, shape)


def _places(xp, grid, index, names):
    """grid[index] for NumPy's index forms the helpers use: one integer array among
    slices (the slices, then xp.take along the array's axis, where NumPy leaves it), or
    integer arrays and integers only (the standard's integer-array indexing)."""
    parts = index if isinstance(index, tuple) else (index,)
    arrays = [k for k, p in enumerate(parts) if isinstance(p, names.ndarray)]
    if len(arrays) == 1 and all(isinstance(p, slice) for k, p in enumerate(parts)
                                if k != arrays[0]):
        k = arrays[0]
        if any(p != slice(None) for j, p in enumerate(parts) if j != k):
            grid = grid[tuple(slice(None) if j == k else p for j, p in enumerate(parts)) +
                        (Ellipsis,)]
        return xp.take(grid, parts[k], axis=k) if parts[k].ndim == 1 else \
            _taken(xp, grid, parts[k], k)
    if all(isinstance(p, (int, names.ndarray)) for p in parts):
        return grid[parts]
    raise names.missing("add.at with this index")


def _taken(xp, grid, indices, axis):
    """grid taken at an integer array of more axes than one, along `axis`."""
    flat = xp.take(grid, xp.reshape(indices, (-1,)), axis=axis)
    return xp.reshape(flat, tuple(grid.shape[:axis]) + tuple(indices.shape) +
                      tuple(grid.shape[axis + 1:]))
