"""The derivative rules of SciPy functions, one module per SciPy package:

    scipy_special.py   scipy.special        scipy_linalg.py   scipy.linalg
    scipy_stats.py     scipy.stats          scipy_signal.py   scipy.signal

Imported the first time a SciPy module is seen in sys.modules (registry._load_optional), so
SciPy stays optional: these modules, and the runtime modules of the same names, are the
only ones of sgcompiler that import SciPy.
"""
from . import scipy_linalg, scipy_signal, scipy_special, scipy_stats  # noqa: F401
