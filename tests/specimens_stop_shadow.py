"""A user's own function that happens to be called stop_gradient (it is the identity here,
and must be differentiated like any other function)."""


def stop_gradient(x):
    return x * 1.0
