import numpy as np


def gen(x):
    y = x * 2
    yield y


def many(x):
    global counter
    try:
        y = np.exp(x)
    except ValueError:
        y = x
    del y
    return x


def unknown(x):
    return np.sum(np.unwrap(x))


def vector(x):
    return x * 2.0


def good(x):
    return np.sum(x * x)
