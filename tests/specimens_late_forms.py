"""Specimens for the forms of issue 15 that were refused until its third session: dict
comprehensions over a dict argument (and with an `if` on the values), `grad` of a function
that itself takes *args/**kwargs, a local function with defaults passed to a helper, and
lambdas given to np.apply_along_axis and np.vectorize. Each takes (x, w)."""
import numpy as np

from sgcompiler import stop_gradient


def scaled_params(x, w):
    params = {"a": x, "b": w}
    return doubled_sum(params, x)


def doubled_sum(params, x):
    out = {k: v * x for k, v in params.items()}
    return np.sum(out["a"] * out["b"])


def params_if_on_values(x, w):
    return kept_positive({"a": x, "b": w, "c": x * w})


def kept_positive(params):
    kept = {k: np.sin(v) * 2 for k, v in params.items() if np.sum(v) > 0}
    return sum(np.sum(v) for v in kept.values()) + len(kept)


def params_comprehension_in_loop(x, w):
    params = {"a": x, "b": w}
    total = 0.0
    for i in range(3):
        params = {k: v * 0.5 + i * v ** 2 for k, v in params.items()}
        total = total + np.sum(params["a"] * params["b"])
    return total


def params_comprehension_stopped(x, w):
    params = {"a": x, "b": w}
    out = {k: v * stop_gradient(v) for k, v in params.items()}
    return np.sum(out["a"] + out["b"])


def collected(*ws):
    return sum(np.sum(w ** 2 * ws[0]) for w in ws)


def named_and_collected(x, *ws, scale=1.5, **kw):
    total = np.sum(np.sin(x) * scale)
    for w in ws:
        total = total + np.sum(np.cos(w) * x)
    return total + np.sum(kw["b"] * x ** 2)


def collected_stopped(*ws):
    return np.sum(ws[0] * stop_gradient(ws[1] * ws[0]) + ws[1])


def collected_stopped_reference(a, b, c):
    return np.sum(a * c + b)


def calls_twice(g, x):
    s = 0.0
    for i in range(2):
        s = s + np.sum(g(x) * g(x * 0.5, scale=0.5 + i))
    return s


def local_defaults_to_helper(x, w):
    # a default read from the enclosing function (evaluated where the function is
    # defined, so the later w is not the default's), a keyword-only one, a captured w
    def layer(t, scale=2.0, *, shift=w * 0.5):
        return np.sin(t * scale * w) + shift
    w = w * 2.0
    return calls_twice(layer, x) + np.sum(w)


def lambda_defaults_to_helper(x, w):
    return calls_twice(lambda t, scale=1.5: np.cos(t * scale) * w, x)


def apply_once(g, x):
    return g(x)


def local_defaults_stopped(x, w):
    def layer(t, k=stop_gradient(w)):
        return np.tanh(t * k)
    return np.sum(apply_once(layer, x) * w)


def local_alias(x, w):
    # a local name bound once to a module-level function, then called
    act = np.tanh
    mul = np.multiply
    s = 0.0
    for i in range(2):
        s = s + np.sum(act(x * (i + 1)) * mul(x, w))
    return s


def enumerate_zip(x, w):
    s = 0.0
    for i, (a, b) in enumerate(zip(x, w)):
        s = s + np.sum(a * b) * (i + 1)
    for j, pair in enumerate(zip(x, w)):
        s = s + np.sum(pair[0] * stop_gradient(pair[1])) * j
    return s


def enumerate_zip_stopped_reference(x, w, c):
    s = 0.0
    for i, (a, b) in enumerate(zip(x, w)):
        s = s + np.sum(a * b) * (i + 1)
    for j, (a, b) in enumerate(zip(x, c)):
        s = s + np.sum(a * b) * j
    return s


def along_rows(x, w):
    # a lambda reading an active variable, a number per row and a row per row
    norms = np.apply_along_axis(lambda r: np.sum(r ** 2 * w), -1, x)
    scaled = np.apply_along_axis(lambda r: np.sin(r) * w, np.ndim(x) - 1, x)
    return np.sum(norms) + np.sum(scaled ** 2)


def _row_energy(r):
    return np.sum(np.cos(r)) * r[0]


def along_first_axis_in_loop(x, w):
    s = 0.0
    for i in range(2):
        s = s + np.sum(np.apply_along_axis(_row_energy, 0, x * w + i))
    return s


def vectorized_branch(x, w):
    # the function runs on each element: a branch on its value is fine
    step = np.vectorize(lambda t: t * t if t > 0 else np.sin(t))
    return np.sum(step(x * w)) + np.sum(np.vectorize(lambda t: np.exp(t) * 0.5)(x))


def along_stopped(x, w):
    return np.sum(np.apply_along_axis(lambda r: r * stop_gradient(r), -1, x * w))


def _scaled_sine(a, b):
    return np.sin(a) * b


def one_helper_three_ways(x, w):
    # one helper, differentiated for a, for a and b, for b: three pieces, three names
    return np.sum(_scaled_sine(x, 2.0) + _scaled_sine(x, w) + _scaled_sine(3.0, w))
