"""Wide random straight-line programs over broadcasting shapes (a standalone script, not a
pytest test).

Like test_shape_programs.py, over parameters x (4, 3), w (3,), b (4, 1), s (1, 3) and a
float c, but with a wider grammar: np.mean/max/min/prod/sum with int, negative and tuple
axes and keepdims (function and method forms), np.broadcast_to, reshape/ravel/.T,
basic slicing, np.where with a comparison, np.maximum/np.minimum, abs, np.clip,
np.log1p(np.exp(.)), -a * b, a / -b, augmented assignment, np.dot/@/.dot with 1-d and 2-d,
np.outer, np.concatenate/np.stack, the float parameter, stop_gradient of a subexpression;
with --extended also lists, tuples and np.array of a mix of constants and values (nested
too), np.stack and np.concatenate of constant and computed arrays, and writes (`=`, `+=`,
`-=`, `*=`) through an index that names one row twice.

The generator runs each statement on the values at the test point, so it knows every
shape, and it redraws a statement whose max/min/abs/maximum/where/clip operands come within
1e-3 of a kink there, or whose values are huge.

Each program is checked in these variants (each on a fresh function object, so nothing is
shared through the compile cache):
  S   grad, specialised for the shapes, wrt all five parameters, against finite differences
  G   grad with api.MAX_SHAPES = 0 (code for any shape), against finite differences and S
  L   S with buffers._LARGE = 0 (every array counts as large)
  LG  G with buffers._LARGE = 0
  V   value_and_grad (specialised) with a random wrt (position, name or tuple): value and
      gradients
Every call also checks that the arguments are unchanged, and that the gradients have the
types and shapes of the arguments.

    PYTHONPATH=$PWD python3 tests/shape_fuzz_wide.py --count 3000 --start 0 --out /tmp/fz
    PYTHONPATH=$PWD python3 tests/shape_fuzz_wide.py --seed 17 --show   # one program
"""
from __future__ import annotations

import argparse
import collections
import json
import linecache
import os
import random
import re
import time
import traceback

import numpy as np

from gradcheck import numeric_grad, settled_reference
import sgcompiler
from sgcompiler import SGCompilerError, api
from sgcompiler.optimize.memory import buffers

PARAMS = {"x": (4, 3), "w": (3,), "b": (4, 1), "s": (1, 3), "c": ()}
NAMES = list(PARAMS)
KINK = 1e-3
MAX_ABS = 1e3
MAX_SIZE = 150
ORIGINAL_LARGE = buffers._LARGE
ORIGINAL_MAX_SHAPES = api.MAX_SHAPES


class Reject(Exception):
    pass


# ---------------------------------------------------------------- generation

def _value_ok(v):
    a = np.asarray(v)
    if a.dtype.kind not in "fc" and a.dtype.kind != "b":
        return True
    if a.dtype.kind == "b":
        return True
    return 0 < a.size <= MAX_SIZE and np.all(np.isfinite(a)) and (a.size == 0 or np.max(np.abs(a)) < MAX_ABS)


def _gap(v, axis, largest):
    """Smallest gap between the two largest (smallest) values of each reduced slice."""
    a = np.asarray(v, dtype=float)
    if a.ndim == 0:
        return np.inf
    axes = tuple(range(a.ndim)) if axis is None else \
        tuple(ax % a.ndim for ax in (axis if isinstance(axis, tuple) else (axis,)))
    rest = [i for i in range(a.ndim) if i not in axes]
    moved = np.transpose(a, rest + list(axes))
    k = int(np.prod([a.shape[i] for i in axes]))
    flat = np.sort(moved.reshape(-1, k), axis=1)
    if k < 2:
        return np.inf
    if largest:
        return float(np.min(flat[:, -1] - flat[:, -2]))
    return float(np.min(flat[:, 1] - flat[:, 0]))


def _shape_axes(nd):
    if nd == 0:
        return [None]
    out = [None] + list(range(nd)) + [-k for k in range(1, nd + 1)]
    if nd >= 2:
        out += [(0, 1), (-1, 0), (-2, -1), (0,), (-1,), (1, 0)]
    if nd == 1:
        out += [(0,), (-1,)]
    if nd == 3:
        out += [(0, 2), (1, 2), (-1, -3), (0, 1, 2)]
    return out


def _reshape_targets(shape):
    n = int(np.prod(shape))
    cand = [(n,), (-1,), (1, n), (n, 1), (1, -1), (-1, 1)]
    for p in range(2, n):
        if n % p == 0:
            cand.append((p, n // p))
            cand.append((p, -1))
    if n == 12:
        cand += [(2, 2, 3), (3, 1, 4)]
    if n == 1:
        cand += [()]
    return cand


INDEXES = {
    0: [],
    1: ["[1:]", "[:2]", "[0]", "[-1]", "[None, :]", "[..., None]", "[:, None]", "[::-1]",
        "[::2]", "[1:-1]"],
    2: ["[1:, :]", "[:, 0]", "[0]", "[-1, :]", "[None, :]", "[..., None]", "[:, None]",
        "[1:3, 1:]", "[:, ::-1]", "[0, 1]", "[:, -1]", "[..., 0]", "[:2]", "[:, 1:]",
        "[::2, :]"],
    3: ["[0]", "[:, 1:]", "[..., 0]", "[:, :, -1]", "[1:]"],
}

UNARY = ["np.sin({a})", "np.tanh({a})", "np.exp(-{a} * {a})", "{a} ** 2", "-{a}",
         "np.sqrt(1.0 + {a} * {a})", "np.log1p(np.exp({a}))", "-{a} * {a} * 0.5",
         "np.cos({a})", "np.square({a})", "1.0 / (1.0 + np.exp(-{a}))", "{a} * {a} * {a}"]
WITH_C = ["c * {a}", "{a} + c", "{a} * np.sin(c)", "c ** 2 - {a}", "({a} - c) / (1.0 + c * c)",
          "np.exp(c) * {a}", "{a} * c * c", "{a} / (2.0 + np.cos(c))", "-c * {a}",
          "np.maximum(c, 0.0) * {a}"]


class Generator:
    def __init__(self, rng: random.Random, args, extended=False):
        self.rng = rng
        self.extended = extended    # also list literals and writes through duplicates
        self.env = {"np": np, "stop_gradient": lambda v: v}
        for n, a in zip(NAMES, args):
            self.env[n] = np.copy(a) if isinstance(a, np.ndarray) else a
        self.lines = []
        self.temps = []           # names of temporaries
        self.fresh = set()        # temporaries that hold a fresh array of their own
        self.kinks = 0            # statements redrawn for a kink

    # values --------------------------------------------------------------
    def ev(self, src):
        with np.errstate(all="raise"):
            try:
                v = eval(src, self.env)
            except Reject:
                raise
            except Exception as exc:
                raise Reject(f"{type(exc).__name__}: {exc}")
        if not _value_ok(v):
            raise Reject("value")
        return v

    def kink(self, margin):
        if not margin >= KINK:
            self.kinks += 1
            raise Reject("kink")

    def names(self):
        return NAMES + self.temps

    def pick_name(self):
        r = self.rng
        if self.temps and r.random() < 0.55:
            return r.choice(self.temps)
        return r.choice(NAMES)

    @staticmethod
    def par(src):
        return src if re.fullmatch(r"[A-Za-z_][A-Za-z_0-9]*", src) else f"({src})"

    # expressions ------------------------------------------------------------
    def atom(self, depth):
        if depth <= 0 or self.rng.random() < 0.45:
            n = self.pick_name()
            return n, self.ev(n)
        return self.expr(depth - 1)

    def array_atom(self, depth, tries=6):
        for _ in range(tries):
            a, va = self.atom(depth)
            if np.ndim(va) >= 1:
                return a, va
        raise Reject("no array")

    def expr(self, depth):
        r = self.rng
        kinds = ["binary", "maxmin", "unary", "withc", "reduce", "broadcast_to", "reshape",
                 "index", "where", "dot", "outer", "join", "stop", "abs", "clip"]
        weights = [16, 6, 10, 6, 14, 3, 7, 8, 5, 7, 2, 4, 4, 2, 2]
        if self.extended:
            kinds, weights = kinds + ["literal", "view"], weights + [5, 3]
        if ARRANGE[0]:
            kinds, weights = kinds + ["arrange"], weights + [6]
        kind = r.choices(kinds, weights=weights)[0]
        return getattr(self, "e_" + kind)(depth)

    def e_binary(self, depth):
        a, va = self.atom(depth)
        for _ in range(6):
            b, vb = self.atom(depth)
            try:
                np.broadcast_shapes(np.shape(va), np.shape(vb))
                break
            except ValueError:
                continue
        else:
            raise Reject("broadcast")
        pa, pb = self.par(a), self.par(b)
        form = self.rng.choice(["{a} + {b}", "{a} - {b}", "{a} * {b}", "-{a} * {b}",
                                "{a} / (1.5 + {b} * {b})", "{a} / -(1.0 + {b} * {b})",
                                "{a} / -{b}", "{a} * {b} - {b}"])
        if form == "{a} / -{b}":
            self.kink(np.min(np.abs(vb)) / 0.2)        # |b| >= 0.2e-3*... keep away from 0
            if np.min(np.abs(vb)) < 0.3:
                raise Reject("small divisor")
        src = form.format(a=pa, b=pb)
        return src, self.ev(src)

    def e_maxmin(self, depth):
        a, va = self.atom(depth)
        b, vb = self.atom(depth)
        if self.rng.random() < 0.2:
            b, vb = self.rng.choice(["0.0", "0.25", "-0.3"]), None
            vb = float(b)
        try:
            np.broadcast_shapes(np.shape(va), np.shape(vb))
        except ValueError:
            raise Reject("broadcast")
        self.kink(np.min(np.abs(np.asarray(va) - np.asarray(vb))))
        fn = self.rng.choice(["np.maximum", "np.minimum"])
        src = f"{fn}({a}, {b})"
        return src, self.ev(src)

    def e_unary(self, depth):
        a, va = self.atom(depth)
        src = self.rng.choice(UNARY).format(a=self.par(a))
        return src, self.ev(src)

    def e_withc(self, depth):
        a, va = self.atom(depth)
        src = self.rng.choice(WITH_C).format(a=self.par(a))
        return src, self.ev(src)

    def e_abs(self, depth):
        a, va = self.atom(depth)
        self.kink(np.min(np.abs(va)))
        src = self.rng.choice(["np.abs({a})", "abs({a})", "np.absolute({a})"]).format(a=a)
        return src, self.ev(src)

    def e_clip(self, depth):
        a, va = self.atom(depth)
        lo, hi = -0.5, 0.4
        self.kink(min(np.min(np.abs(va - lo)), np.min(np.abs(va - hi))))
        src = f"np.clip({a}, {lo}, {hi})"
        return src, self.ev(src)

    def e_reduce(self, depth):
        r = self.rng
        a, va = self.atom(depth)
        nd = np.ndim(va)
        fn = r.choices(["sum", "mean", "max", "min", "prod"], weights=[3, 3, 2, 2, 2])[0]
        axis = r.choice(_shape_axes(nd))
        keep = r.random() < 0.5
        if fn in ("max", "min"):
            self.kink(_gap(va, axis, fn == "max"))
        if fn == "prod" and np.size(va) > 12:
            raise Reject("prod of many")
        kw = []
        if axis is not None or r.random() < 0.3:
            kw.append(f"axis={axis}" if r.random() < 0.8 or nd == 0 else str(axis))
        if keep or r.random() < 0.2:
            kw.append(f"keepdims={keep}")
        if kw and not kw[0].startswith("axis=") and len(kw) > 1:
            kw = [f"axis={axis}"] + kw[1:]
        if r.random() < 0.3 and nd >= 1:
            src = f"{self.par(a)}.{fn}({', '.join(kw)})"
        else:
            src = f"np.{fn}({', '.join([a] + kw)})"
        return src, self.ev(src)

    def e_broadcast_to(self, depth):
        a, va = self.atom(depth)
        shape = np.shape(va)
        cands = [t for t in [(4, 3), (2, 3), (3,), (4, 1), (1, 3), (2, 4, 3), (3, 3), (3, 4), (4, 4)]
                 if _bcast_to(shape, t)]
        if not cands:
            raise Reject("broadcast_to")
        t = self.rng.choice(cands)
        src = f"np.broadcast_to({a}, {t})"
        return src, self.ev(src)

    def e_arrange(self, depth):
        """(--arrange) what joins, reorders and reshapes arrays, whose result's shape the
        compiler works out from the arguments' (analysis/sizes.py: _evaluated, _larger)."""
        a, va = self.array_atom(depth)
        nd = np.ndim(va)
        forms = ["np.expand_dims({a}, 0)", "np.squeeze(np.expand_dims({a}, -1), axis=-1)",
                 "np.cumsum({a}, axis=-1)", "np.roll({a}, 1, axis=0)", "np.sort({a}, axis=0)",
                 "np.atleast_3d({a})", "np.concatenate([{a}, {a} * 0.5], axis=0)",
                 "np.stack([{a}, np.sin({a})], axis=-1)", "np.cumprod(0.5 + 0.1 * {a}, axis=0)",
                 "np.einsum('{sub}->{sub}', {a})"]
        if np.shape(va)[-1] >= 2:
            forms += ["np.diff({a}, axis=-1)"]
        if nd <= 2:
            forms += ["np.vstack([{a}, {a}])", "np.hstack([{a}, 2.0 * {a}])",
                      "np.column_stack([{a}, {a}])"]
        if nd == 1:
            forms += ["np.diag({a})", "np.outer({a}, np.cos({a}))"]
        if nd == 2:
            forms += ["np.triu({a})", "np.tril({a}, -1)", "np.diagonal({a})", "np.trace({a})",
                      "np.moveaxis({a}, 0, -1)", "np.diag({a})", "np.einsum('ij->ji', {a})",
                      "np.einsum('ij,ij->i', {a}, {a})"]
        if nd == 2 and np.shape(va)[0] == np.shape(va)[1]:
            forms += ["np.linalg.solve({a} + 4.0 * np.eye({n}), np.ones({n}))",
                      "np.linalg.inv({a} + 4.0 * np.eye({n}))"]
        if nd >= 2:
            forms += ["np.swapaxes({a}, 0, -1)", "np.dstack([{a}, {a}])"]
        form = self.rng.choice(forms)
        src = form.format(a=a, sub="abcd"[:nd], n=np.shape(va)[0])
        return src, self.ev(src)

    def e_view(self, depth):
        """(extended) a function that returns a view of its argument, as broadcast_to and
        reshape do: a write into the argument later changes it."""
        a, va = self.atom(depth)
        forms = ["np.flip({a})", "np.atleast_2d({a})", "np.real({a})", "{pa}.conj()",
                 "np.ascontiguousarray({a})"]
        if np.ndim(va) >= 2:
            forms += ["np.fliplr({a})", "np.rot90({a})", "np.swapaxes({a}, 0, 1)"]
        src = self.rng.choice(forms).format(a=a, pa=self.par(a))
        return src, self.ev(src)

    def e_reshape(self, depth):
        r = self.rng
        a, va = self.atom(depth)
        pa = self.par(a)
        form = r.choice(["reshape", "npreshape", "ravel", "npravel", "T", "transpose",
                         "reshape_star", "flatten"])
        if form in ("reshape", "npreshape", "reshape_star"):
            t = r.choice(_reshape_targets(np.shape(va)))
            if form == "reshape":
                src = f"{pa}.reshape({t})"
            elif form == "npreshape":
                src = f"np.reshape({a}, {t})"
            else:
                src = f"{pa}.reshape{t}" if len(t) > 1 else f"{pa}.reshape({t[0] if t else '()'})"
        elif form == "ravel":
            src = f"{pa}.ravel()"
        elif form == "npravel":
            src = f"np.ravel({a})"
        elif form == "T":
            src = f"{pa}.T"
        elif form == "transpose":
            src = f"np.transpose({a})"
        else:
            src = f"{pa}.flatten()"
        return src, self.ev(src)

    def e_index(self, depth):
        a, va = self.atom(depth)
        nd = np.ndim(va)
        if nd == 0 or nd > 3:
            raise Reject("index")
        src = f"{self.par(a)}{self.rng.choice(INDEXES[nd])}"
        return src, self.ev(src)

    def e_where(self, depth):
        r = self.rng
        p, vp = self.atom(depth)
        if r.random() < 0.4:
            q = r.choice(["0.0", "0.2", "-0.1"])
            vq = float(q)
        else:
            q, vq = self.atom(depth)
        try:
            np.broadcast_shapes(np.shape(vp), np.shape(vq))
        except ValueError:
            raise Reject("broadcast")
        self.kink(np.min(np.abs(np.asarray(vp) - np.asarray(vq))))
        op = r.choice([">", "<", ">=", "<="])
        e1, v1 = self.atom(depth)
        if r.random() < 0.3:
            e2 = r.choice(["0.0", "1.0"])
        else:
            e2, _ = self.atom(depth)
        src = f"np.where({self.par(p)} {op} {self.par(q)}, {e1}, {e2})"
        return src, self.ev(src)

    def e_dot(self, depth):
        r = self.rng
        a, va = self.array_atom(depth)
        if np.ndim(va) > 2:
            raise Reject("dot of 3-d")
        if r.random() < 0.5:       # a on the left
            cands = [n for n in self.names() if 1 <= np.ndim(self.env[n]) <= 2
                     and np.shape(self.env[n])[0] == np.shape(va)[-1]]
            if not cands:
                raise Reject("dot")
            b = r.choice(cands)
        else:                       # a on the right
            cands = [n for n in self.names() if 1 <= np.ndim(self.env[n]) <= 2
                     and np.shape(self.env[n])[-1] == np.shape(va)[0]]
            if not cands:
                raise Reject("dot")
            a, b = r.choice(cands), a
        form = r.choice(["{a} @ {b}", "np.dot({a}, {b})", "{pa}.dot({b})", "np.matmul({a}, {b})"])
        src = form.format(a=self.par(a), b=self.par(b), pa=self.par(a))
        return src, self.ev(src)

    def e_outer(self, depth):
        a, va = self.atom(depth)
        b, vb = self.atom(depth)
        if np.size(va) * np.size(vb) > MAX_SIZE:
            raise Reject("outer")
        src = f"np.outer({a}, {b})"
        return src, self.ev(src)

    def e_join(self, depth):
        r = self.rng
        a, va = self.array_atom(depth)
        sa = np.shape(va)
        if r.random() < 0.5:   # stack: same shape
            cands = [n for n in self.names() if np.shape(self.env[n]) == sa]
            b = r.choice(cands or [a])
            axis = r.choice(list(range(-len(sa) - 1, len(sa) + 1)))
            pair = [a, b] if r.random() < 0.5 else [b, a]
            src = f"np.stack([{pair[0]}, {pair[1]}], axis={axis})"
        else:
            axis = r.choice(list(range(-len(sa), len(sa))))
            ax = axis % len(sa)
            cands = [n for n in self.names() if np.ndim(self.env[n]) == len(sa) and all(
                d1 == d2 for i, (d1, d2) in enumerate(zip(np.shape(self.env[n]), sa)) if i != ax)]
            b = r.choice(cands or [a])
            pair = [a, b] if r.random() < 0.5 else [b, a]
            brackets = "[{}, {}]" if r.random() < 0.6 else "({}, {})"
            kw = f", axis={axis}" if axis != 0 or r.random() < 0.5 else ""
            src = f"np.concatenate({brackets.format(*pair)}{kw})"
        return src, self.ev(src)

    def number(self):
        """A constant (int or float) or one element of a value, for a list literal."""
        r = self.rng
        if r.random() < 0.4:
            return r.choice(["0.5", "1.0", "-2.0", "3", "0"])
        n = self.pick_name()
        shape = np.shape(self.env[n])
        if not shape:
            return n
        return f"{n}[{', '.join(str(r.randrange(d)) for d in shape)}]"

    def numbers(self, k):
        items = [self.number() for _ in range(k)]
        if all(re.fullmatch(r"-?\d+", e) for e in items):
            items[0] = "0.5"
        return ", ".join(items)

    def e_literal(self, depth):
        """np.array / a list / a tuple of a mix of constants and values, nested too, and
        np.stack / np.concatenate of constant and computed arrays."""
        r = self.rng
        form = r.choice(["flat", "tuple", "nested", "list_index", "nested_index", "reduce",
                         "stack", "concatenate"])
        k = r.randint(1, 4)
        if form == "flat":
            src = f"np.array([{self.numbers(k)}])"
        elif form == "tuple":
            src = f"np.array(({self.numbers(k)},))"
        elif form == "nested":
            rows = ", ".join(f"[{self.numbers(k)}]" for _ in range(r.randint(1, 3)))
            src = f"np.array([{rows}])"
        elif form == "list_index":
            src = f"[{self.numbers(k)}][{r.randrange(k)}]"
        elif form == "nested_index":
            src = f"[[{self.numbers(k)}], [{self.numbers(k)}]][{r.randrange(2)}][{r.randrange(k)}]"
        elif form == "reduce":
            src = f"{r.choice(['np.sum', 'sum', 'np.prod'])}([{self.numbers(k)}])"
        else:
            a, va = self.array_atom(depth)
            shape = np.shape(va)
            parts = [a] + [r.choice([f"np.ones({shape})", f"np.full({shape}, 0.5)",
                                     f"np.zeros({shape})", a]) for _ in range(r.randint(1, 2))]
            r.shuffle(parts)
            if form == "stack":
                src = f"np.stack([{', '.join(parts)}], axis={r.randrange(len(shape) + 1)})"
            else:
                src = f"np.concatenate([{', '.join(parts)}])"
        return src, self.ev(src)

    def duplicate_write(self, name):
        """`t[idx] = e` or `t[idx] op= e` with an index that names one row twice."""
        r = self.rng
        vt = self.env[name]
        if not isinstance(vt, np.ndarray) or vt.ndim == 0 or not vt.flags.writeable:
            raise Reject("duplicate write")
        n = vt.shape[0]
        rows = [r.randrange(n) for _ in range(r.randint(1, 3))]
        rows.insert(r.randrange(len(rows) + 1), r.choice(rows) - r.choice([0, n]))
        index = r.choice([f"np.array({rows})", f"{rows}"])
        if vt.ndim > 1 and r.random() < 0.3:
            index = f"{index}, {r.randrange(vt.shape[1])}"
        e, ve = self.atom(r.choice([0, 1, 1, 2]))
        target = np.shape(vt[eval(f"np.s_[{index}]", {"np": np})])
        try:
            if np.broadcast_shapes(np.shape(ve), target) != target:
                raise Reject("duplicate write shape")
        except ValueError:
            raise Reject("duplicate write shape")
        op = r.choice(["=", "=", "+=", "-=", "*="])
        self.exec_line(f"{name}[{index}] {op} {e}")

    def e_stop(self, depth):
        a, va = self.atom(depth + 1)
        src = f"stop_gradient({a})"
        return src, self.ev(src)

    # statements ---------------------------------------------------------------
    def statement(self):
        r = self.rng
        k = len(self.temps)
        name = f"t{k}"
        p = r.random()
        if p < 0.12 and self.fresh_candidates():
            return self.augment(r.choice(self.fresh_candidates()))
        if p < 0.16 and self.temps:
            return self.augment(r.choice(self.temps))        # maybe a view: Python mutates
        if self.extended and p < 0.22 and self.fresh_candidates():
            return self.duplicate_write(r.choice(self.fresh_candidates()))
        depth = r.choice([1, 1, 2, 2, 3])
        src, v = self.expr(depth)
        self.exec_line(f"{name} = {src}")
        self.temps.append(name)
        if _fresh_expr(src) and isinstance(v, np.ndarray) and v.flags.owndata:
            self.fresh.add(name)

    def fresh_candidates(self):
        return sorted(self.fresh)

    def augment(self, name):
        r = self.rng
        vt = self.env[name]
        e, ve = self.atom(r.choice([0, 1, 1, 2]))
        op = r.choice(["+=", "-=", "*=", "/="])
        if op == "/=":
            e, ve = f"(1.5 + {self.par(e)} ** 2)", self.ev(f"(1.5 + {self.par(e)} ** 2)")
        if isinstance(vt, np.ndarray):
            if np.broadcast_shapes(np.shape(vt), np.shape(ve)) != vt.shape:
                raise Reject("augment shape")
            if not vt.flags.writeable:
                raise Reject("read-only")
        with np.errstate(all="raise"):
            try:
                out = eval(f"_t {op[0]} _e", {"_t": vt, "_e": ve})
            except Exception as exc:
                raise Reject(str(exc))
        if not _value_ok(out):
            raise Reject("value")
        self.exec_line(f"{name} {op} {e}")
        if not isinstance(self.env[name], np.ndarray):
            self.fresh.discard(name)

    def exec_line(self, line):
        with np.errstate(all="raise"):
            exec(line.strip(), self.env)
        self.lines.append("    " + line)

    def program(self):
        r = self.rng
        n = r.randint(2, 8)
        tries = 0
        while len(self.lines) < n and tries < 200:
            tries += 1
            try:
                self.statement()
            except (Reject, ValueError, TypeError, IndexError):
                pass
        used = self.temps or ["x"]
        terms = []
        for t in r.sample(used, min(len(used), r.choice([1, 2, 2, 3]))):
            v = self.env[t]
            form = r.choice(["np.sum({t} * {t})", "np.sum(np.sin({t}))", "np.mean({t})",
                             "c * np.sum({t})", "np.sum({t}) ** 2", "{pt}.sum()",
                             "np.sum({t} * {t}) * 0.5"])
            if form == "{pt}.sum()" and not isinstance(v, np.ndarray):
                form = "np.sum({t})"
            terms.append(form.format(t=t, pt=self.par(t)))
        if len(used) == 1 and np.ndim(self.env[used[0]]) == 0 and r.random() < 0.5:
            terms = [used[0]]
        body = "\n".join(self.lines) if self.lines else "    pass"
        return "def f(x, w, b, s, c):\n" + body + "\n    return " + " + ".join(terms) + "\n"


def _bcast_to(shape, target):
    try:
        return np.broadcast_shapes(shape, target) == tuple(target)
    except ValueError:
        return False


def _fresh_expr(src):
    """The expression's outermost operation makes a new array (not a view, not a name)."""
    s = src.strip()
    if re.fullmatch(r"[A-Za-z_][A-Za-z_0-9]*", s):
        return False
    if s.startswith(("stop_gradient(", "np.broadcast_to(", "np.reshape(", "np.ravel(",
                     "np.transpose(")):
        return False
    if re.search(r"(\.T|\])$", s) or re.search(r"\.(reshape|ravel)\([^()]*\)$", s):
        return False
    return True


def make_args(seed):
    data = np.random.default_rng(seed)
    args = [data.normal(size=shape) * 0.7 for shape in PARAMS.values()]
    args[-1] = float(args[-1])
    return args


def make_program(seed, extended=None):
    """The program of `seed`; `extended` (default: --extended) adds the productions of
    lists of constants and values and of writes through duplicate indices."""
    args = make_args(seed)
    gen = Generator(random.Random(seed), args, EXTENDED[0] if extended is None else extended)
    return gen.program(), args


EXTENDED = [False]
ARRANGE = [False]          # --arrange: e_arrange too


# ---------------------------------------------------------------- checking

class Freezer:
    def __init__(self):
        self.values, self.replaying, self.pos = [], False, 0

    def __call__(self, v):
        if not self.replaying:
            self.values.append(np.copy(v))
            return v
        rec = self.values[self.pos]
        self.pos += 1
        return np.copy(rec) if isinstance(v, np.ndarray) else type(v)(rec)


_counter = [0]


def load(source, stop):
    _counter[0] += 1
    filename = f"<wide shape program {_counter[0]}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    ns = {"np": np, "stop_gradient": stop}
    exec(compile(source, filename, "exec"), ns)
    return ns["f"]


def copies(args):
    return [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]


class Reference:
    """The primal with stop_gradient values frozen at the point; finite differences."""

    def __init__(self, source, args):
        self.freezer = Freezer()
        self.f = load(source, self.freezer)
        with np.errstate(all="ignore"):
            self.value = self.f(*copies(args))
        self.freezer.replaying = True
        self.args = args

    def __call__(self, args):
        self.freezer.pos = 0
        with np.errstate(all="ignore"):
            return self.f(*copies(args))

    def grad(self, i, eps=1e-6):
        found = numeric_grad(lambda *a: self(list(a)), self.args, i, eps)
        return float(found) if isinstance(self.args[i], float) else found


def close(got, expected, rtol=1e-4, atol=1e-6, fscale=0.0):
    got = np.asarray(got, dtype=float)
    expected = np.asarray(expected, dtype=float)
    if got.shape != expected.shape:
        return False
    scale = max(1.0, float(np.max(np.abs(expected))) if expected.size else 1.0)
    return bool(np.all(np.abs(got - expected) <= atol * scale + rtol * np.abs(expected) + fscale))


VARIANTS = ["S", "G", "L", "LG", "V", "P"]
WRT_CHOICES = [0, "x", 1, "w", (0, 1), ("b", "s"), (4,), "c", (0, 1, 2, 3, 4), (3, "c"), 2, 3,
               (1, 4), ("x", "c")]


class Finding(Exception):
    def __init__(self, kind, detail):
        super().__init__(detail)
        self.kind, self.detail = kind, detail


def run_variant(variant, source, args, wrt=None):
    """The gradient(s) from sgcompiler in this variant (fresh function object)."""
    f = load(source, sgcompiler.stop_gradient)
    api.MAX_SHAPES = 0 if variant in ("G", "LG") else ORIGINAL_MAX_SHAPES
    buffers._LARGE = 0 if variant in ("L", "LG", "P") else ORIGINAL_LARGE
    try:
        if variant == "V":
            fn = sgcompiler.value_and_grad(f, wrt=wrt)
        elif variant == "P":
            fn = sgcompiler.grad(f, wrt=wrt)
        else:
            fn = sgcompiler.grad(f, wrt=tuple(range(5)))
        call_args = copies(args)
        with np.errstate(all="ignore"):
            out = fn(*call_args)
        for a, b in zip(call_args, args):
            if not np.array_equal(a, b):
                raise Finding("mutated argument", "the gradient call changed an argument")
        return out
    finally:
        api.MAX_SHAPES = ORIGINAL_MAX_SHAPES
        buffers._LARGE = ORIGINAL_LARGE


def wrt_positions(wrt):
    if isinstance(wrt, tuple):
        return [w if isinstance(w, int) else NAMES.index(w) for w in wrt], True
    return [wrt if isinstance(wrt, int) else NAMES.index(wrt)], False


def check(source, args, variants=VARIANTS, wrt_seed=0, oracle=None):
    """{variant: ("ok"|"refused"|"finding"|"unstable", detail)}

    "unstable": finite differences could not settle a reference for some parameter (see
    gradcheck.settled_reference), so that parameter was not checked. `oracle`, a Counter
    when given, counts how each parameter's reference was settled."""
    ref = Reference(source, args)
    expected = {}

    def exp(i):
        if i not in expected:
            e, how = settled_reference(
                lambda eps: ref.grad(i, eps),
                lambda g1, g2: close(g1, g2, rtol=1e-3, atol=1e-5),
                lambda g1, g2: close(g1, g2))
            expected[i] = (e, how != "unstable")
            if oracle is not None:
                oracle[how] += 1
        return expected[i]

    results = {}
    special = None
    rng = random.Random(wrt_seed)
    wrts = {"V": rng.choice(WRT_CHOICES), "P": rng.choice(WRT_CHOICES)}     # as in run 1
    for variant in variants:
        wrt = None
        if variant in ("V", "P"):
            wrt = wrts[variant]
        try:
            out = run_variant(variant, source, args, wrt)
            if variant == "V":
                value, grads = out
                positions, is_tuple = wrt_positions(wrt)
                if not is_tuple:
                    grads = (grads,)
                if not close(value, ref.value, rtol=1e-9, atol=1e-12):
                    raise Finding("wrong value", f"value {value!r}, expected {ref.value!r}")
            elif variant == "P":
                grads = out
                positions, is_tuple = wrt_positions(wrt)
                if not is_tuple:
                    grads = (grads,)
            else:
                grads, positions = out, list(range(5))
            if len(grads) != len(positions):
                raise Finding("wrong structure", f"{len(grads)} gradients for {positions}")
            bad, unstable = [], False
            for g, i in zip(grads, positions):
                a = args[i]
                if isinstance(a, float) and not isinstance(g, float):
                    bad.append(f"{NAMES[i]}: type {type(g).__name__}, not float")
                    continue
                if np.shape(g) != np.shape(a):
                    bad.append(f"{NAMES[i]}: shape {np.shape(g)}, expected {np.shape(a)}")
                    continue
                e, stable = exp(i)
                if not close(g, e, fscale=1e-8 * abs(float(ref.value))):   # rounding in f
                    if not stable:
                        unstable = True
                        continue
                    bad.append(f"{NAMES[i]}: got {np.array2string(np.asarray(g), precision=5)} "
                               f"expected {np.array2string(np.asarray(e), precision=5)}")
            if variant == "S":
                special = grads
            if variant == "G" and special is not None:
                for g, h, i in zip(grads, special, positions):
                    if np.shape(g) == np.shape(h) and not close(g, h, rtol=1e-8, atol=1e-10):
                        bad.append(f"{NAMES[i]}: generic differs from specialised")
            if bad:
                raise Finding("wrong gradient", "; ".join(bad))
            results[variant] = ("unstable", "") if unstable else ("ok", "")
        except Finding as exc:
            results[variant] = ("finding", f"{exc.kind}: {exc.detail}")
        except SGCompilerError as exc:
            results[variant] = ("refused", str(exc))
        except Exception as exc:
            tb = traceback.extract_tb(exc.__traceback__)
            where = tb[-1]
            results[variant] = ("finding", f"exception {type(exc).__name__}: {exc} "
                                f"[at {os.path.basename(where.filename)}:{where.lineno}]")
    return results


def normalise(msg):
    msg = msg.split("\n")[0]
    msg = re.sub(r"<wide shape program \d+>", "<P>", msg)
    msg = re.sub(r"line \d+", "line N", msg)
    msg = re.sub(r"\bt\d+\b", "tK", msg)
    msg = re.sub(r"got \[.*", "got ...", msg)
    msg = re.sub(r"-?\d+\.\d+(e[-+]?\d+)?", "F", msg)
    return msg[:220]


def signature(detail):
    if detail.startswith("wrong gradient"):
        return "wrong gradient"
    return normalise(detail)


def still_fails(source, args, variant, sig, wrt_seed=0):
    try:
        ref = Reference(source, args)
        if not np.isfinite(ref.value):
            return False
        res = check(source, args, variants=[variant], wrt_seed=wrt_seed)
    except Exception:
        return False
    status, detail = res[variant]
    return status == "finding" and signature(detail) == sig


def reduce_program(source, args, variant, sig, wrt_seed=0):
    """Drop statements and return terms while the same finding remains."""
    lines = source.splitlines()
    header, body, ret = lines[0], lines[1:-1], lines[-1]
    terms = ret.replace("    return ", "").split(" + ")
    changed = True
    while changed:
        changed = False
        for k in range(len(body)):
            trial = body[:k] + body[k + 1:]
            src = "\n".join([header] + (trial or ["    pass"]) + ["    return " + " + ".join(terms)]) + "\n"
            if still_fails(src, args, variant, sig, wrt_seed):
                body, changed = trial, True
                break
        if changed:
            continue
        for k in range(len(terms)):
            if len(terms) > 1:
                trial = terms[:k] + terms[k + 1:]
                src = "\n".join([header] + (body or ["    pass"]) + ["    return " + " + ".join(trial)]) + "\n"
                if still_fails(src, args, variant, sig, wrt_seed):
                    terms, changed = trial, True
                    break
    return "\n".join([header] + body + ["    return " + " + ".join(terms)]) + "\n"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--count", type=int, default=200)
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--out", default="/tmp/shape_fuzz_wide")
    p.add_argument("--seed", type=int)
    p.add_argument("--show", action="store_true")
    p.add_argument("--minutes", type=float, default=1e9)
    p.add_argument("--reduce", help="variant: reduce the program of --seed that fails in it")
    p.add_argument("--extended", action="store_true",
                   help="also list literals, view makers (np.flip, np.atleast_2d, ...) and "
                        "writes through duplicate indices")
    p.add_argument("--arrange", action="store_true",
                   help="also joins, reorders and reshapes (np.concatenate, np.stack, "
                        "np.cumsum, np.diff, np.triu, np.einsum, np.linalg.solve, ...)")
    opts = p.parse_args()
    EXTENDED[0] = opts.extended
    ARRANGE[0] = opts.arrange
    if opts.seed is not None:
        source, args = make_program(opts.seed)
        print(source)
        if opts.reduce:
            res = check(source, args, variants=[opts.reduce], wrt_seed=opts.seed)
            print(res)
            sig = signature(res[opts.reduce][1])
            small = reduce_program(source, args, opts.reduce, sig, opts.seed)
            print(small)
            print(check(small, args, variants=VARIANTS, wrt_seed=opts.seed))
            return
        if not opts.show:
            for k, v in check(source, args, wrt_seed=opts.seed).items():
                print(k, v)
        return
    os.makedirs(opts.out, exist_ok=True)
    counts = collections.Counter()
    refusals = collections.Counter()
    oracle = collections.Counter()
    findings = collections.defaultdict(list)
    start = time.time()
    done = 0
    log = open(os.path.join(opts.out, "log.jsonl"), "a")
    for seed in range(opts.start, opts.start + opts.count):
        if time.time() - start > opts.minutes * 60:
            break
        source, args = make_program(seed)
        try:
            res = check(source, args, wrt_seed=seed, oracle=oracle)
        except Exception as exc:      # the reference itself failed: a generator problem
            counts["reference failed"] += 1
            print(f"seed {seed}: reference failed {exc!r}", flush=True)
            continue
        done += 1
        for variant, (status, detail) in res.items():
            counts[(variant, status)] += 1
            if status == "refused":
                refusals[(variant, normalise(detail))] += 1
            if status == "finding":
                sig = (variant, signature(detail))
                findings[sig].append(seed)
                log.write(json.dumps({"seed": seed, "variant": variant, "detail": detail,
                                      "source": source}) + "\n")
                log.flush()
                if len(findings[sig]) <= 2:
                    print(f"seed {seed} {variant}: {detail[:300]}\n{source}", flush=True)
        if done % 100 == 0:
            print(f"[{done} programs, {time.time() - start:.0f}s]", flush=True)
    print(f"\n{done} programs in {time.time() - start:.0f}s")
    for v in VARIANTS:
        print(v, {s: counts[(v, s)] for s in ("ok", "unstable", "refused", "finding")})
    print("references settled by finite differences:", dict(oracle))
    print("\nrefusals:")
    for (v, m), n in sorted(refusals.items(), key=lambda t: -t[1]):
        print(f"  {n:5d} {v:2s} {m}")
    print("\nfindings:")
    for (v, sig), seeds in sorted(findings.items(), key=lambda t: -len(t[1])):
        print(f"  {len(seeds):5d} {v:2s} {sig}  seeds {seeds[:8]}")


if __name__ == "__main__":
    main()
