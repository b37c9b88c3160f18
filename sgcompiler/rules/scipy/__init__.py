"""The derivative rules of SciPy functions, one module per SciPy package:

    special.py   scipy.special        linalg.py   scipy.linalg
    stats.py     scipy.stats          signal.py   scipy.signal

Imported the first time a SciPy module is seen in sys.modules (registry._load_optional), so
SciPy stays optional: these modules, and the runtime modules of the same names, are the
only ones of sgcompiler that import SciPy.
"""
from . import linalg, signal, special, stats  # noqa: F401
