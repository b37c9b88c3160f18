"""Python as people write it: lambdas, nested functions, functions passed to helpers,
methods, callable objects, partials (tests/test_python_forms.py)."""
import functools

import numpy as np

from sgcompiler import stop_gradient

square_sum = lambda x: np.sum(x ** 2)  # noqa: E731
PAIR = [lambda x: np.sum(np.sin(x)), lambda x: np.sum(x ** 3)]; cube = lambda y: np.sum(y * y * y)  # noqa: E702,E501,E731
TABLE = {"exp": lambda x: np.sum(np.exp(x)), "tanh": lambda x: np.sum(np.tanh(x) * x)}
NESTED = lambda x: np.sum((lambda t: t * 3.0)(x) * x)  # noqa: E731
triple = lambda t: t * 3.0  # noqa: E731


def calls_module_lambda(x):
    return np.sum(triple(x) * np.sin(x))


def module_lambda_in_loop(x):
    s = 0.0
    for i in range(3):
        s = s + np.sum(triple(x) * x * i)
    return s


def apply(g, x):
    return g(x)


def twice(g, x):
    return g(g(x))


def local_lambda(x, w):
    act = lambda t: np.tanh(t * w)  # noqa: E731
    return np.sum(act(x) * act(2.0 * x))


def local_def(x, w):
    def layer(t):
        z = t * w
        return np.sin(z) + z
    return np.sum(layer(x) ** 2)


def nested_calls_nested(x, w):
    def inner(t):
        return t * w
    def outer(t):
        return np.exp(inner(t))
    return np.sum(outer(x))


def local_in_loop(x, w):
    g = lambda t: np.sin(t) * w  # noqa: E731
    s = 0.0
    for i in range(3):
        s = s + np.sum(g(x) * (i + 1.0))
    return s


def lambda_to_helper(x, w):
    return np.sum(apply(lambda t: t * w, x)) + np.sum(twice(np.sin, x))


def def_to_helper_in_loop(x, w):
    def act(t):
        return np.tanh(t + w)
    s = 0.0
    for i in range(2):
        s = s + np.sum(apply(act, x) * i) + np.sum(apply(np.exp, x))
    return s


def local_with_stop(x):
    g = lambda t: t * stop_gradient(t)  # noqa: E731
    return np.sum(g(x))


def local_with_stop_reference(x, c):
    return np.sum(x * c)


def helper_with_stop(x):
    return np.sum(apply(lambda t: np.sin(t) * stop_gradient(np.cos(t)), x))


def helper_with_stop_reference(x, c):
    return np.sum(np.sin(x) * c)


class Model:
    def __init__(self, data, scale):
        self.data = data
        self.scale = scale

    def predict(self, w):
        return np.tanh(self.data @ w)

    def loss(self, w):
        return np.sum(self.predict(w) ** 2) * self.scale


class Quadratic:
    def __init__(self, a):
        self.a = a

    def __call__(self, x):
        return np.sum(self.a * x ** 2)


MODEL = Model(np.arange(6.0).reshape(2, 3) / 6, 3.0)


def calls_method(w):
    s = 0.0
    for i in range(2):
        s = s + MODEL.loss(w) * (i + 1.0)
    return s


def scaled(a, x, k=1.0):
    return np.sum(a * np.sin(x) * k)


PARTIAL = functools.partial(scaled, 2.0, k=3.0)


def calls_partial(x):
    return PARTIAL(x) * 2.0


def default_callable(x, act=np.tanh):
    return np.sum(act(x) * x)


def layer(x, w, act=np.sin):
    return act(x * w)


def calls_default_callable(x, w):
    s = 0.0
    for i in range(2):
        s = s + np.sum(layer(x, w) * (i + 1.0)) + np.sum(layer(x, w, np.exp))
    return s


def make_loss(act, scale):
    def loss(x, w):
        return np.sum(apply(act, x * w)) * scale
    return loss


class Shifted:
    """A callable object whose method reads a closure variable."""
    offset = 0.5

    def __call__(self, x):
        return np.sum(np.sin(x + self.offset) * x)


def dict_display(x):
    d = {"a": x, "b": np.sin(x) * 2.0, "c": 3.0}
    return np.sum(d["a"] * d["b"]) + d["c"]


def make_params(x):
    return {"w": x * 2.0, "b": np.tanh(x)}


def dict_from_helper(x):
    p = make_params(x)
    s = 0.0
    for i in range(3):
        q = {"v": p["w"] * i, "u": stop_gradient(p["b"])}
        s = s + np.sum(q["v"] * q["u"] + p["b"])
    return s


def dict_from_helper_reference(x, c):
    s = 0.0
    for i in range(3):
        s = s + np.sum(x * 2.0 * i * c + np.tanh(x))
    return s


def statements(x):
    assert x.ndim == 1, "a vector"
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.log(x * x)
    print(f"y sums to {np.sum(y):.3f}")
    return np.sum(y * x)


QUADRATIC = Quadratic(np.array([1.0, 2.0, 3.0]))


def calls_object(x):
    return QUADRATIC(x) * 2.0 + np.sum(x)


def apply_scaled(g, x, k=2.0, *, shift=0.0):
    return g(x) * k + shift


def helper_with_defaults(x, w):
    # the captured w must not land in k's place
    return np.sum(apply_scaled(lambda t: t * w, x)) + np.sum(apply_scaled(np.sin, x, 3.0))


class WithDefaults:
    def __init__(self, a):
        self.a = a

    def loss(self, x, k=2.0, *, p=3.0):
        return np.sum(self.a * x ** p) * k


def make_with_default(scale):
    def loss(x, k=scale):
        return np.sum(np.sin(x) * k)
    return loss


def nested_defaults(x, w):
    # defaults, keyword-only parameters and defaults read from the enclosing function
    # (evaluated where the function is defined, as Python does)
    def layer(t, scale=2.0, *, shift=w * 0.5):
        return np.sin(t * scale) + shift
    act = lambda t, k=3.0: np.tanh(t * k)  # noqa: E731
    w = w * 2.0                 # after the definition: the default keeps the old w
    s = 0.0
    for i in range(2):
        s = s + np.sum(layer(x) * layer(x, 0.5) * layer(x, shift=w) * act(x) *
                       act(x, k=stop_gradient(w)))
    return s


def nested_defaults_reference(x, w, c):
    w2 = w * 2.0
    s = 0.0
    for i in range(2):
        s = s + np.sum((np.sin(x * 2.0) + w * 0.5) * (np.sin(x * 0.5) + w * 0.5) *
                       (np.sin(x * 2.0) + w2) * np.tanh(x * 3.0) * np.tanh(x * c))
    return s


def passes_local_with_defaults(x, w):
    def scaled(t, k=2.0):
        return t * k
    return np.sum(apply(scaled, x))


colsum = functools.partial(np.sum, axis=0)
two_to = functools.partial(np.power, 2.0)
_A = np.array([1.0, 2.0, 0.5])
times_a = functools.partial(np.multiply, _A)


def numpy_partials(x, w):
    s = 0.0
    for i in range(2):
        s = s + np.sum(colsum(x * w) ** 2) + np.sum(two_to(x) * stop_gradient(times_a(x)))
    return s


def numpy_partials_reference(x, w, c):
    return 2.0 * (np.sum(np.sum(x * w, axis=0) ** 2) + np.sum(2.0 ** x * c))


def local_partials(x, w):
    p = functools.partial(np.sum, axis=0)
    q = functools.partial(np.multiply, w)
    r = functools.partial(scaled, k=2.0)
    s = 0.0
    for i in range(2):
        s = s + np.sum(p(x) ** 2) + np.sum(q(x) * p(x, keepdims=True)) + np.sum(r(w, x))
    return s


def make_layer(scale, shift=0.5):
    def layer(t):
        return np.tanh(t * scale) + shift
    return layer


OFFSET = 1.0


def make_offset(k):
    def offset(t):
        return t * k + OFFSET
    return offset


def closures_made_inside(x, w):
    def make(s):
        def inner(t):
            return t * s * w
        return inner
    double = make(2.0)
    layer = make_layer(w, shift=stop_gradient(w))
    w = w * 3.0                 # double reads w when called (3w), layer was made with w
    s = 0.0
    for i in range(2):
        s = s + np.sum(double(x) * layer(x))
    return s


def closures_made_inside_reference(x, w, c):
    s = 0.0
    for i in range(2):
        s = s + np.sum(x * 2.0 * (3.0 * w) * (np.tanh(x * w) + c))
    return s


def factory_reading_a_shadowed_global(x):
    OFFSET = 2.0                # the factory's OFFSET is the module's, not this one
    f = make_offset(OFFSET)
    return np.sum(f(x))
