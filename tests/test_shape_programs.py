"""Random straight-line programs over arrays of different, broadcasting shapes.

The random-program test (test_random_programs.py) draws control flow over arrays of one
shape; this one draws what shape specialisation changes: operands of shapes (4, 3), (3,),
(4, 1), (1, 3) and scalars meeting in arithmetic, ufuncs, reductions with axis/keepdims,
matrix products and transposes, so that static sums (`np.sum(g, axis=0)` for a broadcast
operand), writes into dying arrays and moved factors all occur. Each program's gradient,
specialised for the shapes, is checked against central finite differences and against the
code compiled for any shape; and again with every array counted as large, so that the
writes into buffers inside expressions and into arrays that died earlier occur too.
"""
import linecache
import random

import numpy as np
import pytest

from gradcheck import numeric_grad
from sgcompiler import api, grad
from sgcompiler.optimize.memory import buffers

PARAMS = {"x": (4, 3), "w": (3,), "b": (4, 1), "s": (1, 3), "c": ()}
BINARY = ["{a} + {b}", "{a} - {b}", "{a} * {b}", "{a} / (1.5 + {b} * {b})"]
UNARY = ["np.sin({a})", "np.tanh({a})", "np.exp(-{a} * {a})", "{a} ** 2", "-{a}",
         "np.sqrt(1.0 + {a} * {a})", "np.log1p(np.exp({a}))", "-{a} * {a} * 0.5"]


def _program(rng: random.Random):
    shapes = dict(PARAMS)
    lines = []
    for k in range(rng.randint(3, 9)):
        name = f"t{k}"
        names = list(shapes)
        kind = rng.random()
        a = rng.choice(names)
        if kind < 0.45:
            b = rng.choice(names)
            try:
                shape = np.broadcast_shapes(shapes[a], shapes[b])
            except ValueError:
                continue
            expr = rng.choice(BINARY).format(a=a, b=b)
        elif kind < 0.7:
            expr, shape = rng.choice(UNARY).format(a=a), shapes[a]
        elif kind < 0.85 and shapes[a]:
            axis = rng.randrange(len(shapes[a]))
            keep = rng.random() < 0.5
            expr = f"np.sum({a}, axis={axis}, keepdims={keep})"
            shape = tuple(1 if i == axis else n for i, n in enumerate(shapes[a])) if keep \
                else tuple(n for i, n in enumerate(shapes[a]) if i != axis)
        elif kind < 0.95:
            b = rng.choice(names)
            sa, sb = shapes[a], shapes[b]
            if not (1 <= len(sa) <= 2 and 1 <= len(sb) <= 2 and sa[-1] == sb[0]):
                continue
            expr, shape = f"{a} @ {b}", sa[:-1] + sb[1:]
        elif shapes[a]:
            expr, shape = f"{a}.T", shapes[a][::-1]
        else:
            continue
        lines.append(f"    {name} = {expr}")
        shapes[name] = shape
    used = [n for n in shapes if n not in PARAMS] or ["x"]
    total = " + ".join(f"np.sum({n} * {n})" for n in rng.sample(used, min(3, len(used))))
    source = "def f(x, w, b, s, c):\n" + "\n".join(lines) + f"\n    return {total}\n"
    return source


def _load(source, index):
    filename = f"<shape program {index}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"np": np}
    exec(compile(source, filename, "exec"), namespace)
    return namespace["f"]


@pytest.mark.parametrize("large", [False, True], ids=["as is", "all arrays large"])
@pytest.mark.parametrize("index", range(150))
def test_shape_program(index, large, monkeypatch):
    rng = random.Random(7000 + index)
    source = _program(rng)
    f = _load(source, index)
    data = np.random.default_rng(index)
    args = [data.normal(size=shape) * 0.7 for shape in PARAMS.values()]
    args[-1] = float(args[-1])
    wrt = tuple(range(4))
    if large:       # write into buffers inside expressions and reuse dead ones, as for
        monkeypatch.setattr(buffers, "_LARGE", 0)      # arrays of 64 KiB and more
    specialised = grad(f, wrt=wrt)(*args)
    monkeypatch.setattr(api, "MAX_SHAPES", 0)
    generic = grad(f, wrt=wrt)(*args)
    for i, (got, other) in enumerate(zip(specialised, generic)):
        expected = numeric_grad(f, args, i)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6,
                                   err_msg=f"argument {i} of\n{source}")
        np.testing.assert_allclose(got, other, rtol=1e-9, atol=1e-12,
                                   err_msg=f"argument {i} of\n{source}")
        assert np.shape(got) == np.shape(args[i])
