"""The derivative rules of NumPy's functions, a module per family (runtime/numpy/ holds
their helpers, file for file):

    elementwise.py     ufuncs and operators         reductions.py  sums, norms, cumsum
    linalg.py          products, linear algebra     shapes.py      shapes, indexing
    decompositions.py  svd, qr, eig, lstsq          signal.py      convolve, np.gradient
    fft.py             np.fft transforms
"""
from . import decompositions, elementwise, fft, linalg, reductions, shapes, signal  # noqa: F401
