"""Small functions whose gradients are zero, or cut, for each reason `explain` gives
(tests/test_explain.py holds the table of what it should say about each)."""
import numpy as np

from sgcompiler import stop_gradient


def only_in_stop(x, b):
    return np.sum(x * stop_gradient(b))


def stop_of_a_chain(x, b):
    m = b * 2.0
    c = stop_gradient(m + 1.0)
    return np.sum(x * c)


def through_argmax(x, w):
    return np.sum(x) * np.argmax(w)


def overwritten(x, w):
    x = np.ones(3)
    return np.sum(x * w)


def unused(x, w):
    return np.sum(w ** 2)


def unreached(x, w):
    y = x * 2.0
    z = np.sum(w)
    print_me = y          # (kept, but never returned)
    return z


def through_round(x, w):
    return np.sum(np.round(x) * w)


def through_floor(x, w):
    return np.sum(np.floor(x) * w)


def through_sign(x, w):
    return np.sum(np.sign(x) * w)


def through_comparison(x, w):
    return np.sum((x > 0.0) * w)


def through_integer_cast(x, w):
    return np.sum(x.astype(int) * w)


def through_int(x, w):
    return int(x) * w


def through_floor_division(x, w):
    return np.sum((x // 1.0) * w)


def straight_through(x, w):
    q = x + stop_gradient(np.round(x) - x)
    return np.sum(q * w)


def round_under_stop(x, w):
    return np.sum(x * stop_gradient(np.round(x)) * w)


def relu_by_where(x, w):
    return np.sum(np.where(x > 0.0, x, 0.0) * w)


def round_on_one_path(x, w):
    return np.sum(x * w) + np.sum(np.round(x))


def argmax_helper(u, v):
    return np.sum(u * 2.0) + np.argmax(v)


def through_helper(x, w):
    return argmax_helper(x, w)


def stopping_helper(u):
    return np.sum(stop_gradient(u) ** 2)


def through_stopping_helper(x, w):
    return stopping_helper(x) * np.sum(w)


def stop_in_a_branch(x, w, flag):
    if flag > 0.0:
        y = np.sum(stop_gradient(x) * w)
    else:
        y = np.sum(w * 2.0)
    return y


def two_cuts(x, b):
    return np.sum(x) + np.sum(stop_gradient(b)) + np.argmax(b)


def stop_of_a_constant(x, w):
    return np.sum(x * stop_gradient(np.ones(3)) * w)


def through_shape(x, w):
    return np.sum(w) * x.shape[0]


def recurrence(h, w):
    for i in range(3):
        h = np.tanh(h * w)
    return np.sum(h)


def through_recurrences(h, w):
    # a helper whose loop saves on its tape, called twice, and one called through it
    a = recurrence(h, w)
    b = recurrence(h * 2.0, w)
    return a * b + _twice_recurrent(h, w)


def _twice_recurrent(h, w):
    s = 0.0
    for i in range(2):
        s = s + recurrence(h * (i + 1.0), w) * np.sum(np.sin(h * w))
        h = h * w
    return s


def stop_in_a_loop(h, w):
    for i in range(3):
        h = h * stop_gradient(w)
    return np.sum(h)


def softmax_weighted(x):
    z = x - stop_gradient(np.max(x))
    e = np.exp(z)
    return np.sum(e * x) / np.sum(e)


def scalar_with_stop(x):
    c = stop_gradient(np.cos(x))
    return np.sin(x) * c + x ** 3
