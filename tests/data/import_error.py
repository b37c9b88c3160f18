import numpy as np

raise RuntimeError("broken at import")


def f(x):
    return np.sum(x)
