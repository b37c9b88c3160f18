"""Python forms the front end rewrites to plainer ones (frontend/forms/statements.py, sugar.py,
varargs.py): generators, map, dict(...), d.get, dict comprehensions, starred unpacking,
*args/**kwargs forwarding, try blocks (tests/test_forms_rewritten.py). Each takes (x, w),
arrays that broadcast together."""
import numpy as np

from sgcompiler import stop_gradient

KEYS = ("a", "b")


def sum_of_generator(x, w):
    xs = [x, x * w, np.sin(x)]
    return np.sum(sum(v ** 2 for v in xs))


def generators_in_loop(x, w):
    total = 0.0
    for i in range(3):
        parts = [np.sum(x * w * (i + 1.0)), np.sum(np.cos(x))]
        total = total + sum(p * p for p in parts) + float(len(tuple(p for p in parts)))
    return total


def max_min_of_one_iterable(x, w):
    parts = [np.sum(x * w), np.sum(np.cos(x)), np.sum(x * x)]
    s = 0.0
    for i in range(2):
        s = s + max(p * (i + 1.0) for p in parts) + min(parts) * 2.0
    return s + max(np.ravel(x)) * min(np.ravel(w * x)) + max(len(parts), 2)


def tuples_and_lists(x, w):
    t = tuple(v * w for v in [x, np.sin(x)])
    rows = tuple(x * w)         # an array's rows (its numbers, for a vector)
    u = list((x, w * x))
    return np.sum(t[0] * t[1]) + np.sum(rows[0] * rows[-1]) + np.sum(u[0] * u[1] * len(rows))


def list_of_generator(x, w):
    return np.sum(np.sum(list(np.cos(v) * w for v in [x, x * x])))


def map_of_lambda(x, w):
    return np.sum(sum(list(map(lambda t: np.tanh(t * w), [x, 2.0 * x]))))


def map_of_function_in_loop(x, w):
    s = 0.0
    for v in map(np.sin, [x, x * w]):
        s = s + np.sum(v * stop_gradient(v))
    return s


def map_of_two(x, w):
    return np.sum(sum(map(lambda a, b: a * b, [x, w], [np.exp(x), x])))


def dict_of_keywords(x, w):
    d = dict(a=x, b=np.sin(x * w))
    return np.sum(d["a"] * d["b"])


def dict_of_pairs(x, w):
    d = dict([("a", x), ("b", x * w)])
    return np.sum(d["a"] * d["b"])


def dict_of_zip(x, w):
    vals = [x, np.exp(x) * w]
    d = dict(zip(KEYS, vals))
    e = dict(zip(("u", "v"), (x * x, w)))
    return np.sum(d["a"] + d["b"] * e["u"] * e["v"])


def dict_of_zip_shorter(x, w):
    # zip stops at the shorter: d has the keys "a" and "b" only, as in Python
    vals = [x, np.exp(x) * w]
    d = dict(zip(("a", "b", "c"), vals))
    e = {k: v * 2.0 for k, v in zip(("a", "b", "c"), (x * x, w))}
    total = 0.0
    for i in range(2):
        f = dict(zip(("p", "q", "r"), [x * (i + 1.0)]))
        total = total + np.sum(f["p"] * w) + len(f)
    return np.sum(d["a"] + d["b"] * e["a"] * e["b"]) + len(d) * len(e) + total


def zipped_parameter(vs):
    d = dict(zip(("a", "b", "c"), vs))
    return np.sum(d["a"] * d["b"] + d.get("c", 0.0)) + len(d)


def dict_comprehension_with_if(x, w):
    d = {"a": x, "b": w, "c": x * w}
    e = {k: v * 2.0 for k, v in d.items() if k != "b"}
    total = np.sum(e["a"] * e["c"]) + len(e)
    for i in range(2):
        f = {k: np.sin(d[k]) * (i + 1.0) for k in ("a", "b", "c")
             if k in ("a", "c") and not k == "a"}
        total = total + np.sum(f["c"] * w) + len(f)
    return total


def _make_scaled(s):
    def scaled(t):
        return np.sin(t) * s
    return scaled


def factory_called_at_once(x, w):
    total = np.sum(_make_scaled(2.0)(x) * w)
    for i in range(2):
        total = total + np.sum(_make_scaled(w * (i + 1.0))(x) + _make_scaled(np.cos(w))(w))
    return total


def factory_called_at_once_stopped(x, w):
    def make(s, k=3.0):
        def inner(t):
            return t * s * k
        return inner
    return np.sum(_make_scaled(stop_gradient(w * x))(x)) + np.sum(make(w)(x))


def dict_get(x, w):
    d = {"a": x, "b": np.sin(x) * w}
    return np.sum(d.get("a") * d.get("c", 2.0) * d.get("b", x))


def dict_get_in_loop(x, w):
    d = {"a": x, "b": x * w}
    s = 0.0
    for k in ["a", "b", "c"]:
        s = s + np.sum(d.get(k, stop_gradient(x)) * x)
    return s


def dict_comprehensions(x, w):
    d = {"a": x, "b": np.sin(x) * w}
    e = {k: v * 2.0 for k, v in d.items()}
    f = {k: np.exp(e[k]) for k in KEYS}
    g = {k: v + 1.0 for k, v in zip(("p", "q"), [x, w])}
    return np.sum(f["a"] * f["b"] * g["p"] * g["q"])


def starred_assignment(x, w):
    xs = [x, x * w, np.sin(x), x * x]
    a, *rest, z = xs
    first, *others = (w, x)
    *init, last = xs
    return np.sum(a * rest[1] * z) + np.sum(rest[0] * others[0] * init[2] * last * first)


def starred_in_loop(x, w):
    s = 0.0
    for i in range(3):
        head, *tail = [x * i, w * x, np.cos(x)]
        s = s + np.sum(head * tail[0] + tail[1] * len(tail))
    return s


def three(a, b, c):
    return a * b + c


def starred_call(x, w):
    args = (x, np.sin(x), w)
    return np.sum(three(*args)) + np.sum(three(*[x, x, w])) + np.sum(three(x, *args[1:]))


def starred_display(x, w):
    a = [x, 2.0 * x]
    b = (np.sin(x) * w,)
    c = [*a, *b, x * x]
    return np.sum(c[0] * c[2] + c[3] * c[1])


def core(x, w, k=1.0):
    return np.sin(x * w) * k


def wrapper(*args, **kw):
    return core(*args, **kw)


def forwards_args(x, w):
    return np.sum(wrapper(x, w, k=2.0) + wrapper(w, x))


def mixed(a, *rest, scale=1.0):
    total = a * scale
    for r in rest:
        total = total + r
    return total


def forwards_mixed_in_loop(x, w):
    s = 0.0
    for i in range(2):
        s = s + np.sum(mixed(x, w, x * w, scale=3.0) * mixed(x) * stop_gradient(mixed(w)))
    return s


def try_that_reraises(x, w):
    try:
        y = np.log(x * x + 1.0)
    except FloatingPointError as exc:
        raise ValueError("x out of range") from exc
    else:
        y = y * w
    finally:
        print("finished")
    return np.sum(y)


def try_in_loop(x, w):
    s = 0.0
    for i in range(3):
        try:
            s = s + np.sum(np.tanh(x * w * i))
        except (ValueError, TypeError):
            print("failed at", i)
            raise
    return s


def dict_loops(x, w):
    d = {"a": x, "b": np.sin(x) * w}
    s = 0.0
    for k, v in d.items():
        s = s + np.sum(v * d[k])
    for v in d.values():
        s = s + np.sum(v * w)
    for k in d.keys():
        s = s + np.sum(d[k] * 3.0)
    for k in d:                 # the keys (it was indexed by position: a KeyError)
        s = s + np.sum(d[k] * x)
    return s


# refused, each with its line

def dict_filled_in_loop(x, w):
    out = {}
    for k, v in zip(KEYS, [x, w]):
        out[k] = v * 2.0
    return np.sum(out["a"] * out["b"])


def try_returning_constant(x, w):
    try:
        return np.sum(np.log(x))
    except ValueError:
        return 0.0


def dict_comprehension_of_argument(x, d):
    e = {k: v * x for k, v in d.items()}
    return np.sum(e["a"])


def starred_of_unknown_length(x, xs):
    return np.sum(three(x, *xs))


def dict_comprehension_in_call(x, d):
    return sum(np.sum(v) for v in {k: v * x for k, v in d.items()}.values())


def comprehension_if_on_values(x, w):
    d = {"a": x, "b": w}
    e = {k: v for k, v in d.items() if np.sum(v) > 0}
    return np.sum(e["a"])


def generator_kept(x, w):
    g = (v * w for v in [x, x])
    s = 0.0
    for i in range(2):
        s = s + np.sum(sum(g))      # the second trip finds it exhausted
    return s


def generator_in_variable(x, w):
    g = (v * w for v in [x, np.sin(x)])
    w = w * 2.0                     # read when g is consumed: Python's generator sees it
    total = np.sum(sum(g))
    for i in range(2):
        h = (np.sum(np.cos(v) * (i + 1.0)) for v in (x, x * w))
        total = total + max(h)
    parts = (np.sum(u * w) for u in [x * x])
    return total + np.sum([p * 3.0 for p in parts])


def generator_in_variable_stopped(x, w):
    k = (v * stop_gradient(w * x) for v in [x, x * x])
    total = 0.0
    for item in k:
        total = total + np.sum(item)
    return total


def lambda_to_library(x, w):
    return np.sum(np.apply_along_axis(lambda r, k: np.sum(r * w * k), 0, x, 2.0))


def starred_assignment_of_argument(xs, w):
    a, *middle, b = xs
    return np.sum(a * b * w)


# the functions with stop_gradient above, with the stopped values as constants c
def map_of_function_in_loop_reference(x, w, c):
    return np.sum(np.sin(x) * c[0]) + np.sum(np.sin(x * w) * c[1])


def dict_get_in_loop_reference(x, w, c):
    return np.sum(x * x) + np.sum(x * w * x) + np.sum(c * x)


def generator_in_variable_stopped_reference(x, w, c):
    return np.sum(x * c) + np.sum(x * x * c)


def factory_called_at_once_stopped_reference(x, w, c):
    return np.sum(np.sin(x) * c) + np.sum(x * w * 3.0)


def forwards_mixed_in_loop_reference(x, w, c):
    return 2.0 * np.sum((x * 3.0 + w + x * w) * x * c)


STOPPED = {map_of_function_in_loop: (map_of_function_in_loop_reference,
                                     lambda x, w: (np.sin(x), np.sin(x * w))),
           dict_get_in_loop: (dict_get_in_loop_reference, lambda x, w: x),
           forwards_mixed_in_loop: (forwards_mixed_in_loop_reference, lambda x, w: w),
           generator_in_variable_stopped: (generator_in_variable_stopped_reference,
                                           lambda x, w: w * x),
           factory_called_at_once_stopped: (factory_called_at_once_stopped_reference,
                                            lambda x, w: w * x)}


def max_min_second_order(x):
    return max([np.sum(x ** 3), np.sum(x)]) + min(np.sin(v) * v for v in [x[0], x[1]])
