import numpy as np
def inner(x):
    return np.exp(x) - 1.0
def outer_helper(x):
    s = 0.0
    for i in range(2):
        s = s + inner(x * i)
    return s + inner(x)
