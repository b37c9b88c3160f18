"""Random programs whose parameters are parameter trees passed through user helper
functions (a standalone script, not a pytest test).

Each program is a module with 1-3 helpers and a loss `f(params, x, y)`: `params` is a
nested dict/list/tuple of arrays and Python floats; helpers take the tree, a subtree
(`params["l1"]`, `params["layers"]`, a layer tuple) and arrays, read leaves, loop over
layers, call other helpers, return tuples, use stop_gradient on an argument, elementwise
ops, tanh/exp/log1p(exp), matmul, reductions with axis, broadcasting; with --extended the
loss also builds lists, tuples and np.array / np.stack from a mix of constants and leaves
(nested too),
passes such a list to a helper, writes rows of a hidden array through an index with
duplicates (`=` and `+=`), loops over a dict subtree's keys or items in a helper, and over
its layers joined to more layers (`layers + [layers[0]]`, `layers + layers`). Hidden arrays are
(N, D); a second argument set has other N, D (and Din), same structure.

Variants (each on a fresh function object from exec'ing the source again):
  S   grad wrt params (specialised), against finite differences over every leaf
  G   S with api.MAX_SHAPES = 0 (code for any shape)
  L   S with buffers._LARGE = 0
  V   value_and_grad wrt (params, x): value and both gradients
  R   one grad object called on argument set A, then B (other shapes), then A again
  W   grad wrt (0, "y"): tree and plain array
Every call checks the arguments are unchanged and that the gradient has the tree's
structure (keys, lengths, list vs tuple, float for a float leaf, shapes).

    PYTHONPATH=$PWD python3 tests/tree_fuzz.py --count 300 --minutes 20
    PYTHONPATH=$PWD python3 tests/tree_fuzz.py --seed 7 --show
"""
from __future__ import annotations

import argparse
import collections
import copy
import linecache
import os
import random
import re
import time
import traceback

import numpy as np

from gradcheck import leaves, replace_leaf, settled_reference
import sgcompiler
from sgcompiler import SGCompilerError, api
from sgcompiler.optimize.memory import buffers

ORIGINAL_LARGE = buffers._LARGE
ORIGINAL_MAX_SHAPES = api.MAX_SHAPES

ACTS = ["np.tanh({h})", "np.log1p(np.exp({h}))", "np.exp(-{h} * {h})", "{h} * {h} * 0.5",
        "np.sin({h})", "{h} / (1.0 + {h} * {h})", "1.0 / (1.0 + np.exp(-{h}))", "{h}"]


class Gen:
    """Builds the tree schema, the helpers and the loss, as source text."""

    def __init__(self, rng: random.Random, avoid=False, extended=False):
        self.r = rng
        self.extended = extended    # also list literals and writes through duplicates
        self.avoid = avoid       # steer clear of the crashes already found
        self.helpers = []        # source of helper functions
        self.n = 0

    def name(self, base):
        self.n += 1
        return f"{base}{self.n}"

    def act(self, h):
        return self.r.choice(ACTS).format(h=h)

    def mix(self, h, vec=None, mat=None, s=None, col=None):
        """An expression of shape (N, D) from h (N, D) and leaves: vec (D,), mat (D, D),
        s a float leaf, col (1, D)."""
        r = self.r
        opts = [f"{self.act(h)}",
                f"{h} - np.mean({h}, axis=0)",
                f"{h} / (1.0 + np.sum({h} * {h}, axis=1, keepdims=True))",
                f"{h} + np.sum({h}, axis=0) * 0.1",
                f"{h} * np.mean({h}, axis=1)[:, None]"]
        if self.avoid and (vec or mat or s or col):
            opts = []           # every helper reads a leaf of its tree
        if vec:
            opts += [f"{h} * {vec}", f"{h} + {vec}", f"np.tanh({h} + {vec})",
                     f"{h} * np.exp(-{vec} * {vec})"]
        if mat:
            opts += [f"{h} @ {mat}", f"np.tanh({h} @ {mat})", f"({mat} @ {h}.T).T",
                     f"{h} @ {mat}.T * 0.5"]
        if mat and vec:
            opts += [f"{self.act(f'{h} @ {mat} + {vec}')}"]
        if s:
            opts += [f"{h} * {s}", f"{h} + {s} * {s}", f"np.tanh({s} * {h})"]
        if col:
            opts += [f"{h} * {col}", f"{h} - {col}"]
        return r.choice(opts)

    # ---- tree schema ---------------------------------------------------------
    def schema(self):
        """The tree: a description from which make_args builds arrays for given dims."""
        r = self.r
        sc = {"inp": "dict" if self.avoid else r.choice(["dict", "tuple", "list"])}
        comps = r.sample(["l1", "layers", "nest", "ps", "s0"], r.randint(1, 4))
        if self.avoid:          # list/tuple subtrees only where no helper gets one
            comps = [c for c in comps if c != "ps"]
        for c in comps:
            sc[c] = True
        if "layers" in sc:
            sc["layers"] = (r.randint(1, 3), r.choice(["tuple", "list"]))
        if "ps" in sc:
            sc["ps"] = r.choice(["tuple", "list"])
        sc["top"] = r.choice(["dict", "dict", "dict", "tuple", "list"])
        return sc

    # leaf access text for the loss function
    def acc(self, sc, key):
        if sc["top"] == "dict":
            return f'params["{key}"]'
        keys = self.top_keys(sc)
        return f"params[{keys.index(key)}]"

    @staticmethod
    def top_keys(sc):
        return [k for k in ["inp", "l1", "layers", "nest", "ps", "s0"] if k in sc]

    # ---- helpers ---------------------------------------------------------------
    def inp_helper(self, sc):
        """maps x (N, Din) to (N, D) with the input layer (W, b)."""
        name = self.name("embed")
        if sc["inp"] == "dict":
            W, b = 'p["W"]', 'p["b"]'
        else:
            W, b = "p[0]", "p[1]"
        r = self.r
        body = []
        if r.random() < 0.25:
            body.append(f"    W = stop_gradient({W})")
            W = "W"
        body.append(f"    z = x @ {W} + {b}")
        body.append(f"    return {self.act('z')}")
        self.helpers.append(f"def {name}(p, x):\n" + "\n".join(body) + "\n")
        return name

    def layer_helper(self, sc):
        """one layer of "layers": (M (D, D), v (D,))"""
        name = self.name("layer")
        r = self.r
        body = []
        if r.random() < 0.5:
            body.append("    M, v = layer")
            M, v = "M", "v"
        else:
            M, v = "layer[0]", "layer[1]"
        if r.random() < 0.15:
            body.append(f"    M2 = stop_gradient({M})")
            M = "M2"
        body.append(f"    z = {self.mix('h', vec=v, mat=M)}")
        if r.random() < 0.5:
            body.append(f"    z = {self.act(f'z @ {M} + {v}')}")
        body.append(f"    return {r.choice(['z', 'h + 0.5 * z', 'z * 0.9'])}")
        self.helpers.append(f"def {name}(layer, h):\n" + "\n".join(body) + "\n")
        return name

    def stack_helper(self, sc, layer_fn):
        name = self.name("stack")
        r = self.r
        body = []
        if r.random() < 0.5:
            body.append("    for layer in layers:")
            body.append(f"        h = {layer_fn}(layer, h)" if layer_fn else
                        f"        h = {self.mix('h', vec='layer[1]', mat='layer[0]')}")
        else:
            body.append("    for M, v in layers:")
            body.append(f"        h = {self.mix('h', vec='v', mat='M')}")
        body.append("    return h")
        self.helpers.append(f"def {name}(layers, h):\n" + "\n".join(body) + "\n")
        return name

    def l1_helper(self, sc):
        """l1: {"W": (D, D), "b": (D,), "s": float}; may return a tuple."""
        name = self.name("block")
        r = self.r
        body = ["    z = " + self.mix("h", vec="q['b']", mat="q['W']", s="q['s']")]
        if r.random() < 0.5:
            body.append("    z = " + self.mix("z", vec="q['b']", s="q['s']"))
        tup = r.random() < 0.5
        if tup:
            ax = r.choice(["axis=0", "axis=1", "axis=-1", "axis=(0, 1)", ""])
            if self.avoid:
                ax = r.choice(["axis=0", "axis=(0, 1)", ""])
            red = r.choice(["np.sum", "np.mean", "np.max"])
            if red == "np.max":
                red = "np.sum"
            extra = f"{red}(z * z{', ' + ax if ax else ''})"
            body.append(f"    return z, {extra}")
        else:
            body.append("    return z")
        self.helpers.append(f"def {name}(q, h):\n" + "\n".join(body) + "\n")
        return name, tup

    def nest_helper(self, sc):
        """nest: {"a": {"b": (D,), "c": float}, "d": (1, D)}"""
        name = self.name("nested")
        r = self.r
        body = []
        if r.random() < 0.5:
            body.append('    a = t["a"]')
            b, c = 'a["b"]', 'a["c"]'
        else:
            b, c = 't["a"]["b"]', 't["a"]["c"]'
        if r.random() < 0.2:
            body.append(f"    cc = stop_gradient({c})")
            c = "cc"
        body.append("    z = " + self.mix("h", vec=b, s=c, col="t['d']"))
        body.append("    return " + self.mix("z", vec=b, col="t['d']"))
        self.helpers.append(f"def {name}(t, h):\n" + "\n".join(body) + "\n")
        return name

    def ps_helper(self, sc):
        """ps: (v (D,), s float)"""
        name = self.name("scale")
        body = []
        if self.r.random() < 0.5:
            body.append("    v, s = ps")
            v, s = "v", "s"
        else:
            v, s = "ps[0]", "ps[1]"
        body.append(f"    return {self.mix('h', vec=v, s=s)}")
        self.helpers.append(f"def {name}(ps, h):\n" + "\n".join(body) + "\n")
        return name

    def float_leaves(self, sc):
        """The text of each float leaf, and of each (D,) vector leaf, as the loss reads it."""
        floats, vecs = [], []
        if "l1" in sc:
            floats.append(self.acc(sc, "l1") + "['s']")
            vecs.append(self.acc(sc, "l1") + "['b']")
        if "nest" in sc:
            floats.append(self.acc(sc, "nest") + "['a']['c']")
            vecs.append(self.acc(sc, "nest") + "['a']['b']")
        if "ps" in sc:
            floats.append(self.acc(sc, "ps") + "[1]")
            vecs.append(self.acc(sc, "ps") + "[0]")
        if "s0" in sc:
            floats.append(self.acc(sc, "s0"))
        return floats, vecs

    def mixed_lines(self, sc):
        """Lines of the loss that build lists, tuples and np.array from a mix of constants
        and leaves (nested too), pass such a list to a helper, or write rows of h through
        an index with duplicates."""
        r = self.r
        floats, vecs = self.float_leaves(sc)
        lines = []
        if floats and r.random() < 0.3:
            items = [r.choice(floats + ["0.5", "2", "-1.0"]) for _ in range(r.randint(2, 4))]
            items[r.randrange(len(items))] = r.choice(floats)
            weights = ", ".join(str(1.0 + k) for k in range(len(items)))
            form = r.choice(["np.sum(np.array([{i}]) * np.array([{w}]))",
                             "np.sum(np.array([[{i}], [{w}]]) ** 2)",
                             "[{i}][{k}] * [{i}][0]", "np.sum(({i},)) * 0.5"])
            lines.append("extra = extra + " + form.format(i=", ".join(items), w=weights,
                                                          k=len(items) - 1))
        if (floats or vecs) and r.random() < 0.3:
            name = self.name("pick")
            leaf = r.choice(floats + vecs)
            k = r.randint(1, 2)
            items = ["0.5"] * k + [leaf] + r.choice([[], ["2.0"]])
            items = f"[{', '.join(items)}]" if r.random() < 0.5 else f"({', '.join(items)},)"
            self.helpers.append(f"def {name}(items, h):\n"
                                f"    return h * items[{k}] + items[0]\n")
            lines.append(f"h = {name}({items}, h)")
        if vecs and r.random() < 0.3:
            lines.append("h = np.stack([np.ones_like(h[0]), h[0], " + r.choice(vecs) +
                         "])[1:].sum(axis=0) * 0.5 + h")
        if r.random() < 0.3:
            lines.append("hd = h * 1.0")
            op = r.choice(["=", "+=", "-=", "*="])
            index = r.choice(["np.array([0, 0, -1])", "[-1, -1]", "[0, -1, 0]"])
            lines.append(f"hd[{index}] {op} np.tanh(h[-1]) * 0.5")
            lines.append("h = h + hd * 0.5")
        lines += self.keyed_lines(sc)
        return lines

    def keyed_lines(self, sc):
        """A helper that loops over a dict subtree's keys or items, and one that loops over
        the layers joined again from two slices (list + list of a parameter tree)."""
        r = self.r
        lines = []
        if "l1" in sc and r.random() < 0.3:
            name = self.name("keyed")
            loop = r.choice(["for k in q.keys():\n        s = s + np.sum(np.tanh(q[k])) * 0.1",
                             "for k, v in q.items():\n        s = s + np.sum(v * v) * 0.05"])
            self.helpers.append(f"def {name}(q, h):\n    s = 0.0\n    {loop}\n"
                                "    return h * (1.0 + s)\n")
            lines.append(f"h = {name}({self.acc(sc, 'l1')}, h)")
        if "layers" in sc and r.random() < 0.3:
            name = self.name("rejoined")
            joined = r.choice(["layers + [layers[0]]", "[layers[-1]] + [layers[0]]",
                               "layers + layers"])
            if sc["layers"][1] == "tuple":
                joined = joined.replace("[layers[0]]", "(layers[0],)").replace(
                    "[layers[-1]]", "(layers[-1],)")
            self.helpers.append(f"def {name}(layers, h):\n"
                                f"    for M, v in {joined}:\n"
                                "        h = np.tanh(h @ M * 0.5 + v)\n    return h\n")
            lines.append(f"h = {name}({self.acc(sc, 'layers')}, h)")
        return lines

    def whole_helper(self, sc, calls):
        """takes the whole tree and calls other helpers with subtrees."""
        name = self.name("net")
        body = []
        for line in calls:
            body.append("    " + line)
        body.append("    return h, extra")
        self.helpers.append(f"def {name}(params, h):\n    extra = 0.0\n" + "\n".join(body) + "\n")
        return name

    def program(self):
        r = self.r
        sc = self.schema()
        calls = []           # lines of the loss body, in terms of h, extra
        emb = self.inp_helper(sc)
        first = f"h = {emb}({self.acc(sc, 'inp')}, x)"
        twice = None
        if "l1" in sc:
            blk, tup = self.l1_helper(sc)
            a = self.acc(sc, "l1")
            if tup:
                calls.append(f"h, e = {blk}({a}, h)")
                calls.append(f"extra = extra + np.sum(e) * 0.1")
            else:
                calls.append(f"h = {blk}({a}, h)")
            twice = (blk, a, tup)
        if "layers" in sc:
            a = self.acc(sc, "layers")
            k = r.random()
            if self.avoid:      # the loop in the loss itself
                calls.append(f"for M, v in {a}:")
                calls.append("    h = " + self.mix("h", vec="v", mat="M"))
            elif k < 0.4:
                lf = self.layer_helper(sc)
                calls.append(f"for layer in {a}:")
                calls.append(f"    h = {lf}(layer, h)")
            elif k < 0.8:
                lf = self.layer_helper(sc) if r.random() < 0.6 else None
                st = self.stack_helper(sc, lf)
                calls.append(f"h = {st}({a}, h)")
            else:
                lf = self.layer_helper(sc)
                calls.append(f"h = {lf}({a}[0], h)")
                if sc["layers"][0] > 1:
                    calls.append(f"h = {lf}({a}[-1], h)")
        if "nest" in sc:
            nf = self.nest_helper(sc)
            calls.append(f"h = {nf}({self.acc(sc, 'nest')}, h)")
        if "ps" in sc:
            pf = self.ps_helper(sc)
            calls.append(f"h = {pf}({self.acc(sc, 'ps')}, h)")
        if "s0" in sc:
            calls.append(f"h = h * {self.acc(sc, 's0')}")
        if twice and r.random() < 0.4:
            blk, a, tup = twice
            calls.append(f"h2 = {blk}({a}, h)" + ("[0]" if tup else ""))
            calls.append("h = h + 0.5 * h2")
        if self.extended:
            calls += self.mixed_lines(sc)
        r.shuffle(calls) if False else None
        body = ["    " + first]
        if calls and r.random() < 0.35 and not (self.avoid and any(c.startswith("for") for c in calls)):
            wh = self.whole_helper(sc, calls)
            body.append(f"    h, extra = {wh}(params, h)")
        else:
            body.append("    extra = 0.0")
            body += ["    " + c for c in calls]
        # y is a plain array (N, D)
        ends = ["np.sum(h * y)", "np.mean((h - y) ** 2)", "np.sum(np.log1p(np.exp(h)) * y)",
                "np.sum(np.tanh(h) @ y.T)", "np.sum(np.mean(h, axis=0) * np.sum(y, axis=0))",
                "np.sum(h * h) * 0.1 + np.sum(y * h)",
                "np.sum(np.max(h, axis=1) * 0.0 + np.sum(h * y, axis=1))"]
        body.append(f"    return {r.choice(ends)} + extra")
        src = "\n".join(self.helpers) + "\ndef f(params, x, y):\n" + "\n".join(body) + "\n"
        return src, sc


def make_args(sc, seed, dims):
    N, Din, D = dims
    g = np.random.default_rng(seed)

    def a(*shape):
        return g.normal(size=shape) * 0.6

    def fl():
        return float(g.normal() * 0.6 + 0.3)
    parts = {}
    parts["inp"] = {"W": a(Din, D), "b": a(D)} if sc["inp"] == "dict" else \
        (a(Din, D), a(D)) if sc["inp"] == "tuple" else [a(Din, D), a(D)]
    if "l1" in sc:
        parts["l1"] = {"W": a(D, D), "b": a(D), "s": fl()}
    if "layers" in sc:
        n, kind = sc["layers"]
        mk = tuple if kind == "tuple" else list
        parts["layers"] = [mk([a(D, D) * 0.7, a(D)]) for _ in range(n)]
    if "nest" in sc:
        parts["nest"] = {"a": {"b": a(D), "c": fl()}, "d": a(1, D)}
    if "ps" in sc:
        parts["ps"] = (a(D), fl()) if sc["ps"] == "tuple" else [a(D), fl()]
    if "s0" in sc:
        parts["s0"] = fl()
    keys = Gen.top_keys(sc)
    if sc["top"] == "dict":
        params = {k: parts[k] for k in keys}
    elif sc["top"] == "tuple":
        params = tuple(parts[k] for k in keys)
    else:
        params = [parts[k] for k in keys]
    return [params, a(N, Din), a(N, D)]


AVOID = [False]
EXTENDED = [False]


def make_program(seed, extended=None):
    """The program of `seed` and two argument sets; `extended` (default: --extended) adds
    the loss lines of Gen.mixed_lines."""
    rng = random.Random(seed)
    gen = Gen(rng, AVOID[0], EXTENDED[0] if extended is None else extended)
    src, sc = gen.program()
    dims_a = (rng.randint(2, 4), rng.randint(1, 3), rng.randint(2, 4))
    while True:
        dims_b = (rng.randint(1, 5), rng.randint(1, 4), rng.randint(1, 5))
        if dims_b != dims_a:
            break
    return src, make_args(sc, seed, dims_a), make_args(sc, seed + 10 ** 6, dims_b)


# ---------------------------------------------------------------- trees

def structure(tree):
    if isinstance(tree, dict):
        return ("dict", tuple((k, structure(v)) for k, v in tree.items()))
    if isinstance(tree, (list, tuple)):
        return (type(tree).__name__, tuple(structure(v) for v in tree))
    if isinstance(tree, float):
        return "float"
    if isinstance(tree, np.ndarray):
        return ("array", tree.shape)
    return type(tree).__name__


def same_values(a, b):
    if structure(a) != structure(b):
        return False
    return all(np.array_equal(x, y) for (_, x), (_, y) in zip(leaves(a), leaves(b)))


# ---------------------------------------------------------------- checking

class Freezer:
    def __init__(self):
        self.values, self.replaying, self.pos = [], False, 0

    def __call__(self, v):
        if not self.replaying:
            self.values.append(copy.deepcopy(v))
            return v
        rec = self.values[self.pos]
        self.pos += 1
        return copy.deepcopy(rec)


_counter = [0]


def load(source, stop):
    _counter[0] += 1
    filename = f"<tree program {_counter[0]}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    ns = {"np": np, "stop_gradient": stop, "__name__": f"treeprog{_counter[0]}"}
    exec(compile(source, filename, "exec"), ns)
    return ns["f"]


class Reference:
    def __init__(self, source, args):
        self.fr = Freezer()
        self.f = load(source, self.fr)
        with np.errstate(all="ignore"):
            self.value = float(self.f(*copy.deepcopy(args)))
        self.fr.replaying = True
        self.args = args

    def __call__(self, args):
        self.fr.pos = 0
        with np.errstate(all="ignore"):
            return float(self.f(*copy.deepcopy(args)))

    def grad_leafwise(self, i, eps):
        """finite-difference gradient of argument i: a dict path -> array/float."""
        out = {}
        tree = self.args[i]
        for path, leaf in leaves(tree):
            if isinstance(leaf, float):
                p, m = list(self.args), list(self.args)
                p[i] = replace_leaf(tree, path, leaf + eps)
                m[i] = replace_leaf(tree, path, leaf - eps)
                out[path] = (self(p) - self(m)) / (2 * eps)
                continue
            g = np.zeros_like(leaf)
            for k in range(leaf.size):
                st = np.zeros_like(leaf)
                st.flat[k] = eps
                p, m = list(self.args), list(self.args)
                p[i] = replace_leaf(tree, path, leaf + st)
                m[i] = replace_leaf(tree, path, leaf - st)
                g.flat[k] = (self(p) - self(m)) / (2 * eps)
            out[path] = g
        return out


def close(got, expected, rtol=1e-4, atol=1e-6):
    got = np.asarray(got, dtype=float)
    expected = np.asarray(expected, dtype=float)
    if got.shape != expected.shape:
        return False
    scale = max(1.0, float(np.max(np.abs(expected))) if expected.size else 1.0)
    return bool(np.all(np.abs(got - expected) <= atol * scale + rtol * np.abs(expected)))


class Finding(Exception):
    def __init__(self, kind, detail):
        super().__init__(detail)
        self.kind, self.detail = kind, detail


class Checker:
    def __init__(self, source, args):
        self.ref = Reference(source, args)
        self.args = args
        self.cache = {}
        self.oracle = collections.Counter()
        if not np.isfinite(self.ref.value) or abs(self.ref.value) > 1e6:
            raise ValueError("bad value")

    def expected(self, i):
        """(finite-difference gradient wrt args[i], whether it can be trusted); see
        gradcheck.settled_reference. self.oracle counts how each one was settled."""
        if i not in self.cache:
            e, how = settled_reference(
                lambda eps: self.ref.grad_leafwise(i, eps),
                lambda g1, g2: all(close(g1[p], g2[p], rtol=1e-3, atol=1e-5) for p in g1),
                lambda g1, g2: all(close(g1[p], g2[p]) for p in g1))
            self.cache[i] = (e, how != "unstable")
            self.oracle[how] += 1
        return self.cache[i]

    def compare(self, g, i, label):
        """g: gradient wrt args[i]. Raises Finding; returns False if unstable."""
        a = self.args[i]
        if structure(g) != structure(a):
            raise Finding("wrong structure", f"{label}: {structure(g)} vs {structure(a)}")
        e, stable = self.expected(i)
        bad = []
        for path, leaf in leaves(g):
            if not close(leaf, e[path]):
                bad.append(f"{label}{list(path)}: got {np.array2string(np.asarray(leaf), precision=5)}"
                           f" expected {np.array2string(np.asarray(e[path]), precision=5)}")
        if bad:
            if not stable:
                return False
            raise Finding("wrong gradient", "; ".join(bad))
        return True


def run_call(fn, args):
    call_args = copy.deepcopy(args)
    with np.errstate(all="ignore"):
        out = fn(*call_args)
    for a, b in zip(call_args, args):
        if not same_values(a, b):
            raise Finding("mutated argument", "the gradient call changed an argument")
    return out


VARIANTS = ["S", "G", "L", "V", "R", "W"]


def run_variant(variant, source, chk_a, chk_b):
    f = load(source, sgcompiler.stop_gradient)
    api.MAX_SHAPES = 0 if variant == "G" else ORIGINAL_MAX_SHAPES
    buffers._LARGE = 0 if variant == "L" else ORIGINAL_LARGE
    try:
        ok = True
        if variant in ("S", "G", "L"):
            g = run_call(sgcompiler.grad(f), chk_a.args)
            ok = chk_a.compare(g, 0, "params")
        elif variant == "V":
            v, (g, gx) = run_call(sgcompiler.value_and_grad(f, wrt=(0, 1)), chk_a.args)
            if not close(v, chk_a.ref.value, rtol=1e-9, atol=1e-12):
                raise Finding("wrong value", f"value {v!r}, expected {chk_a.ref.value!r}")
            ok = chk_a.compare(g, 0, "params") & chk_a.compare(gx, 1, "x")
        elif variant == "R":
            fn = sgcompiler.grad(f)
            ok = chk_a.compare(run_call(fn, chk_a.args), 0, "A params")
            ok &= chk_b.compare(run_call(fn, chk_b.args), 0, "B params")
            ok &= chk_a.compare(run_call(fn, chk_a.args), 0, "A again params")
        elif variant == "W":
            g, gy = run_call(sgcompiler.grad(f, wrt=(0, "y")), chk_b.args)
            ok = chk_b.compare(g, 0, "params") & chk_b.compare(gy, 2, "y")
        return ok
    finally:
        api.MAX_SHAPES = ORIGINAL_MAX_SHAPES
        buffers._LARGE = ORIGINAL_LARGE


def check(source, args_a, args_b, variants=VARIANTS, oracle=None):
    """{variant: ("ok"|"refused"|"finding"|"unstable", detail)}; `oracle`, a Counter when
    given, counts how each finite-difference reference was settled."""
    chk_a, chk_b = Checker(source, args_a), Checker(source, args_b)
    results = {}
    for variant in variants:
        try:
            ok = run_variant(variant, source, chk_a, chk_b)
            results[variant] = ("ok", "") if ok else ("unstable", "")
        except Finding as exc:
            results[variant] = ("finding", f"{exc.kind}: {exc.detail}")
        except SGCompilerError as exc:
            results[variant] = ("refused", str(exc))
        except Exception as exc:
            tb = traceback.extract_tb(exc.__traceback__)
            where = tb[-1]
            results[variant] = ("finding", f"exception {type(exc).__name__}: {exc} "
                                f"[at {os.path.basename(where.filename)}:{where.lineno}]")
    if oracle is not None:
        oracle.update(chk_a.oracle)
        oracle.update(chk_b.oracle)
    return results


def normalise(msg):
    msg = msg.split("\n")[0]
    msg = re.sub(r"<tree program \d+>", "<P>", msg)
    msg = re.sub(r"line \d+", "line N", msg)
    msg = re.sub(r":\d+\]", ":N]", msg)
    msg = re.sub(r"_old\d+", "_old", msg)
    msg = re.sub(r"after \d+ dimensions.*", "after D dimensions ...", msg)
    msg = re.sub(r"got \[.*", "got ...", msg)
    msg = re.sub(r"\b(embed|layer|stack|block|nested|scale|net)\d+(_[0-9a-f]{4})?", r"\1K", msg)
    msg = re.sub(r"-?\d+\.\d+(e[-+]?\d+)?", "F", msg)
    msg = re.sub(r"\(\d+(, \d+)*,?\)", "(SHAPE)", msg)
    return msg[:200]


def signature(detail):
    if detail.startswith("wrong gradient"):
        return "wrong gradient"
    return normalise(detail)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--count", type=int, default=200)
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--seed", type=int)
    p.add_argument("--show", action="store_true")
    p.add_argument("--minutes", type=float, default=1e9)
    p.add_argument("--avoid", action="store_true", help="steer clear of the known crashes")
    p.add_argument("--extended", action="store_true",
                   help="also list literals and writes through duplicate indices")
    opts = p.parse_args()
    AVOID[0] = opts.avoid
    EXTENDED[0] = opts.extended
    if opts.seed is not None:
        src, a, b = make_program(opts.seed)
        print(src)
        if opts.show:
            print(a, b, sep="\n")
            return
        for k, v in check(src, a, b).items():
            print(k, v)
        return
    counts = collections.Counter()
    refusals = collections.Counter()
    oracle = collections.Counter()
    findings = collections.defaultdict(list)
    start, done = time.time(), 0
    for seed in range(opts.start, opts.start + opts.count):
        if time.time() - start > opts.minutes * 60:
            break
        src, a, b = make_program(seed)
        try:
            res = check(src, a, b, oracle=oracle)
        except Exception:
            counts["reference failed"] += 1
            continue
        done += 1
        for variant, (status, detail) in res.items():
            counts[(variant, status)] += 1
            if status == "refused":
                refusals[normalise(detail)] += 1
            elif status == "finding":
                sig = signature(detail)
                findings[sig].append((seed, variant))
                if len(findings[sig]) <= 2:
                    print(f"seed {seed} {variant}: {detail[:400]}", flush=True)
    print(f"\n{done} programs in {time.time() - start:.0f} s")
    for k in sorted(counts, key=str):
        print(k, counts[k])
    print("references settled by finite differences:", dict(oracle))
    print("\nrefusals:")
    for m, c in refusals.most_common():
        print(f"  {c:5d}  {m}")
    print("\nfindings:")
    for sig, where in findings.items():
        print(f"  {len(where):5d}  {sig}  e.g. {where[:6]}")


if __name__ == "__main__":
    main()
