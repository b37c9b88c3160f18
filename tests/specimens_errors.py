"""Functions the compiler must refuse, each with a clear, located message."""
import math

import numpy as np


def generator(x):
    yield x


async def coroutine(x):
    return x


def uses_global(x):
    global STATE
    STATE = x
    return x


def uses_try(x):
    try:
        return np.sum(x)
    except ValueError:
        return 0.0


def uses_with(x):
    with open("f") as fh:
        fh.read()
    return np.sum(x)


def uses_del(x):
    y = x * 2
    del y
    return np.sum(x)


def uses_eval(x):
    return eval("x")


def nested_def(x):
    def inner(y):
        return y
    h = inner
    return np.sum(h(x))


def uses_lambda(x):
    f = lambda *y: y[0] * 2.0  # noqa: E731
    return np.sum(f(x))


def lambda_to_numpy(x):
    # (with extra arguments for the function; without them it works)
    return np.sum(np.apply_along_axis(lambda r, k: r * k, 0, x, 2.0))


def class_def(x):
    class A:
        pass
    return np.sum(x)


def unknown_function(x):
    return np.sum(math.gamma(x[0]) * x)


def no_rule_for_active(x):
    return np.sum(np.unwrap(x))


def attribute_write(x, obj):
    obj.value = x
    return np.sum(x)


def star_args(x):
    def inner(*ts):
        return ts[0] * 2.0
    return np.sum(inner(x))


def method_of_object(x, model):
    return np.sum(model.forward(x))


def and_or_active(x):
    y = x or 1.0
    return y


def returns_none(x):
    x = x * 2


def mutate_argument(x):
    x[0] = 1.0
    return np.sum(x * x)


def zip_outside_loop(x, y):
    pairs = list(zip(x, y))
    return pairs[0][0]


W3 = np.arange(9.0).reshape(3, 3) / 10


def symmetrize(a):
    return (a + a.T) / 2


def scaled_sin(a, b=1.0):
    return np.sin(a) * b


def sym(*args):
    return scaled_sin(symmetrize(args[0]), *args[1:])


def through_star_args(x):
    return np.sum(sym(x) * W3)


def forward_kwargs(**kwargs):
    return scaled_sin(**kwargs)


def through_kwargs(x):
    return np.sum(forward_kwargs(a=x) * W3)


def first_of(*cs):
    return cs[0] * 2.0


def star_args_without_gradient(x, c):
    return np.sum(x * first_of(c))      # c is not differentiated: nothing flows there
