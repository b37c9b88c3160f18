"""What kind of data an argument is, beyond NumPy's: an array of another library that
NumPy functions dispatch to (a dask array: `grad` then compiles code that writes into no
array, and keeps the gradient lazy), or scipy.sparse data (used only in matrix products;
analysis/sparse.py finds any other use). Used by api.py, told without importing dask or
SciPy.
"""
from __future__ import annotations

import numpy as np

from .analysis.sparse import sparse_misuse
from .errors import error_at
from .frontend import front_end
from .records import is_record, record_items


def foreign(value) -> bool:
    """Whether `value` is an array of another library that NumPy functions dispatch to
    (a dask array; `__array_function__`), not a NumPy array or scalar."""
    return hasattr(type(value), "__array_function__") and \
        not isinstance(value, (np.ndarray, np.generic))


def has_foreign(tree) -> bool:
    """Whether an array of another library is among the (nested) arguments `tree`."""
    if isinstance(tree, dict):
        return any(has_foreign(v) for v in tree.values())
    if isinstance(tree, (list, tuple)):
        return any(has_foreign(v) for v in tree)
    if is_record(tree):
        return any(has_foreign(v) for _, v in record_items(tree))
    return foreign(tree)


def is_sparse(value) -> bool:
    """Whether `value` is a scipy.sparse matrix or array (told without importing SciPy)."""
    return type(value).__module__.startswith("scipy.sparse") and hasattr(value, "nnz")


def all_leaves(tree):
    """Every leaf of a (nested) dict, list or tuple, whatever its type."""
    items = tree.values() if isinstance(tree, dict) else \
        tree if isinstance(tree, (list, tuple)) else None
    if items is None:
        yield tree
    for v in items or ():
        yield from all_leaves(v)


def check_sparse(fn, sparse: frozenset) -> None:
    """Refuse a use of sparse data other than in a matrix product (analysis/sparse.py).

    Args:
        fn: the function differentiated.
        sparse: the names of its parameters that are passed scipy.sparse data.
    Raises:
        SGCompilerError: at the first other use, with its line.
    """
    front = front_end(fn)
    found = sparse_misuse(front.norm.body, sparse)
    if found is None:
        return
    stmt, name = found
    raise error_at(stmt, front.source, (
        f"'{name}' holds scipy.sparse data (from argument "
        f"{', '.join(repr(p) for p in sorted(sparse))}), which sgcompiler differentiates "
        "through only in matrix products (X @ w, w @ X, X.T @ r) and reads of X.T and "
        "X.shape; used otherwise its semantics are not NumPy's (`*` of a sparse matrix "
        "is a matrix product, its sums are np.matrix); write it as a product, or pass "
        "X.toarray()"))
