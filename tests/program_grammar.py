"""A grammar of small random NumPy programs, for the property-based gradient test.

`write_program(choices)` returns the source text of `def f(x, y):` where x is a float64
array of shape (3,) and y is such an array or a Python float. The body is built from
assignments (names reused and overwritten), arithmetic, NumPy elementwise calls on safe
domains, reductions, indexing, augmented assignment, conditional expressions, if/elif/else
on data, for and while loops (with break/continue), lists built by append or a
comprehension, writes into a copied array, stop_gradient, and calls of the helper functions
below; it returns a scalar. The extended grammar (EXTENDED) adds lists, tuples and
np.array / np.stack / np.concatenate / np.hstack of a mix of constants and values (nested
too), writes through indices with duplicates, *args, closures and lambdas.

Every decision goes through `Choices.below(n)`, so the same grammar is driven by hypothesis
(tests/test_random_programs.py, which shrinks a failure to a small program) or by
random.Random (the long run in tests/program_check.py). Options are listed simplest first,
because hypothesis shrinks each choice towards 0.

Typing keeps every program runnable: each expression is asked for as an ARRAY (shape (3,))
or a SCALAR; a name keeps its kind inside loops; after a branch or loop only names with the
same kind on every path stay readable. Arrays that are written in place (`buf[1] = ...`) are
only read inside arithmetic, never aliased, which the compiler (rightly) refuses.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

import numpy as np

ARRAY, SCALAR = "array", "scalar"
N = 3                                   # the length of x (and of y when it is an array)
LOCALS = ("a", "b", "c", "d")
BUFFERS = ("buf", "buf2")               # the only names written into in place
CONSTANTS = ("0.5", "2.0", "1.5", "0.3", "-0.7", "3.0", "0.1")


# --- helpers the generated programs call: user functions the compiler differentiates too ---

def helper_tanh(u, v):
    return np.tanh(u) * v


def helper_loop(u, n):
    s = u
    for k in range(n):
        s = np.sin(s) * 0.5 + u * k
    return s


def helper_pair(u, v):
    return u * v, u - np.cos(v)


def helper_rec(u, depth):
    if depth <= 0:
        return np.cos(u)
    return u * 0.5 + helper_rec(np.sin(u), depth - 1)


def helper_branch(u, v):
    if np.sum(u) > 0.0:
        return u * v
    return u + np.square(v)


def helper_scale(u, scale=2.0):
    return scale * np.tanh(u)


def helper_star(*args):
    """Forwards *args to another helper (issue 13, 3: refused, never a zero gradient)."""
    return helper_tanh(args[0], *args[1:])


def make_helper(act, scale):
    """A factory: the helper it returns is a closure over a function and a float."""
    def scaled(u):
        return scale * act(u)
    return scaled


def helper_soft(u):
    return np.log1p(np.exp(u))


# helpers that take a dict or a list (the "containers" extra): loops over the keys, items
# and elements of their parameter, lists joined, repeated, sliced and unpacked there
def helper_keys(d, u):
    s = 0.0 * u
    for k in d.keys():
        s = s + d[k] * u
    return s


def helper_items(d, u):
    s = u
    for k, v in d.items():
        s = s * 0.5 + v
    return s


def helper_dict_loop(d, u):
    """`for k in d` over a dict: refused with DICT_LOOP_REFUSAL (d[0], d[1], ... before)."""
    s = 0.0 * u
    for k in d:
        s = s + d[k] * u
    return s


def helper_each(a, u):
    s = u
    for v in a:
        s = np.sin(s) * v
    return s


def helper_join(a, u):
    return [np.sin(u)] + a


def helper_join_tuple(t, u):
    return t + (u * 0.5,)


def helper_repeat(a, n):
    return a * n


# a helper whose tuple the caller reads with an index that picks one element twice (the
# "picks" extra); at second order such a read of a saved tuple's array kept one pick only
def helper_two(u, v):
    return np.sin(u) * v, u * u


def helper_slice(a, u):
    b = a[1:]
    first, *rest = a
    b.append(first * u)
    return b[0] * rest[-1] + b[-1]


helper_closure = make_helper(np.sin, 1.5)
helper_lambda = lambda u: u * np.tanh(u)     # noqa: E731  (a lambda, on purpose)

def helper_clobber(r):
    """Writes into its argument (a procedure: no return)."""
    r[0] = 2.0


# what refuses an in-place change of a constant after its use (the "constants" extra),
# which marks the line with LATE
LATE = "# late: refused"
LATE_WRITE_REFUSALS = ("in place after the result was computed from it",
                       "is written in place later but may share memory")

HELPERS = {f.__name__: f for f in (helper_tanh, helper_loop, helper_pair, helper_rec,
                                   helper_branch, helper_scale, helper_star, helper_soft,
                                   helper_keys, helper_items, helper_dict_loop, helper_each,
                                   helper_join, helper_join_tuple, helper_repeat,
                                   helper_slice, helper_two)}
HELPERS.update(helper_closure=helper_closure, helper_lambda=helper_lambda,
               helper_clobber=helper_clobber)

# what the factory programs' names refer to, changed between calls of one gradient:
# `make(act, k)` builds f (act and k are closure cells, k also a default of `inner`), and
# `glob` is a module-level name rebound between two calls
ACTS = (np.sin, np.tanh, helper_soft, np.sin)
KS = (2.0, 0.5, 2.0, -1.5)
GLOBS = (np.cos, helper_soft)
# the one refusal a program that calls helper_star may get (and must get, if it needs a
# gradient through it)
STAR_REFUSAL = "collects arguments in *args"
DICT_LOOP_REFUSAL = "this loop runs over a dict"      # helper_dict_loop given a dict


class Choices:
    """Where every random decision comes from: `below(n)` is an int in range(n)."""

    def __init__(self, below):
        self.below = below

    def pick(self, options):
        return options[self.below(len(options))]

    def maybe(self, percent: int) -> bool:
        """True with about this probability; False when shrunk."""
        return self.below(100) >= 100 - percent


@dataclass(frozen=True)
class Var:
    kind: str
    buffer: bool = False        # written in place: read only inside arithmetic
    fresh: bool = False         # a value no other name refers to: `+=` may work in place


def _join(*envs):
    """The names readable after paths that end in these environments."""
    first = envs[0]
    joined = {}
    for name, var in first.items():
        others = [e.get(name) for e in envs[1:]]
        if all(o is not None and (o.kind, o.buffer) == (var.kind, var.buffer) for o in others):
            joined[name] = Var(var.kind, var.buffer, all(o.fresh for o in others + [var]))
    return joined


def is_fresh(text: str) -> bool:
    """Whether an array expression surely makes a new array (not a name, a view, or
    stop_gradient of one): only then may `name += ...` on it work in place unseen."""
    return _fresh(ast.parse(text, mode="eval").body)


def _fresh(node) -> bool:
    if isinstance(node, (ast.BinOp, ast.UnaryOp)):
        return True
    if isinstance(node, ast.IfExp):
        return _fresh(node.body) and _fresh(node.orelse)
    if isinstance(node, ast.Subscript):
        return isinstance(node.value, ast.Call) and _fresh(node.value)
    if isinstance(node, ast.Call):
        return ast.unparse(node.func) not in ("stop_gradient", "np.asarray")
    return False


# constructs that trigger known, open bugs (tests/test_fuzz_regressions.py); a long run can
# leave them out to look for new bugs: program_check.py --avoid NAME ...
AVOIDABLE = {
    "early_return": "return inside if/loops (inplace_after_return_in_loop)",
    "star_args": "a helper that forwards *args: refused with STAR_REFUSAL where a gradient "
                 "must flow through it (issue 13, 3; it was a zero gradient)",
}
# The productions that only the extended grammar draws (write_program(extended=True)):
# the fixed regression set keeps the grammar it was drawn from.
EXTENDED = ("array_literal", "list_literal", "star_args", "closure", "lambda")


# productions a run can add (write_program(extras=...), program_check.py --extras ...);
# without them the grammar draws exactly the programs it always drew
EXTRAS = {
    "deep": "expressions nested hundreds of levels deep (chains of *, + and unary -, "
            "nested calls), as CPython compiles them",
    "odd_comments": "comments and docstrings holding a character str.splitlines() takes "
                    "as a line break, followed by code that would change the result",
    "scopes": "loops and comprehensions whose target is the name of what they read "
              "(for v in v, [v for v in v + x], nested and tuple targets, if clauses), "
              "and a dict built by writes into new keys",
    "containers": "dicts (int or str keys) and lists built in f and passed to helpers "
                  "that loop over their keys, items or elements, join, repeat, slice or "
                  "unpack them (helper_dict_loop's `for k in d` is refused as expected)",
    "growing": "a value that starts as a number and grows to an array by broadcasting "
               "in a loop (s = y; for v in [...]: s = np.sin(s) * 0.5 + v)",
    "picks": "an array taken out of a helper's tuple and read with an index that picks "
             "one element twice (p = helper_two(u, v); np.sum(p[0][[0, 0]] * p[1][[0, 0]]))",
    "constants": "a constant array the result is computed from, changed in place: "
                 "before its first use (s.fill, s.sort, out=s, a helper writing into it) "
                 "or after it by a write into itself (followed: must be right), or after "
                 "it through an alias, a method or a helper (refused as expected), and "
                 "labels picked as z[np.arange(n), k]",
    "sigmoids": "the sigmoid 1 / (1 + np.exp(-z)) and the cross-entropy y log p + (1 - y) "
                "log(1 - p) of it (reverse/shortcuts.py), at the top level or in a loop, "
                "with labels that are values or y, rebound after the sum or before it",
}
# every line break of str.splitlines() but \n and \r (which Python takes as line breaks)
LINE_BREAKS = ("\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


class _Writer:
    def __init__(self, choices: Choices, y_kind: str, avoid=frozenset(), extended=False,
                 extras=()):
        self.c = choices
        self.avoid = avoid
        self.extended = extended
        self.extras = [{"deep": self.deep_assign, "odd_comments": self.odd_comment,
                        "scopes": self.scopes, "containers": self.containers,
                        "growing": self.growing, "picks": self.picks,
                        "sigmoids": self.sigmoids, "constants": self.constants}[e]
                       for e in sorted(extras)]
        self.env = {"x": Var(ARRAY), "y": Var(y_kind)}
        self.ints = []          # loop counters in scope (all < N)
        self.lines = []
        self.level = 1
        self.loops = 0          # enclosing loops: break/continue allowed
        self.nesting = 0        # enclosing compound statements
        self.fixed = set()      # names whose kind a loop body must keep
        self.lists = 0
        self.captured = False   # in a factory: act, inner and glob may be called

    # --- output ---

    def emit(self, text):
        self.lines.append("    " * self.level + text)

    def block(self, header, count, body=None):
        self.emit(header)
        self.level += 1
        self.nesting += 1
        start = len(self.lines)
        if body:
            body()
        for _ in range(count):
            self.statement()
        if len(self.lines) == start:
            self.emit("pass")
        self.level -= 1
        self.nesting -= 1

    # --- expressions ---

    def names(self, kind, bare):
        return [n for n, v in self.env.items() if v.kind == kind and not (bare and v.buffer)]

    def leaf(self, kind, bare=False):
        """A name or constant; `bare` means where the leaf alone would alias a value."""
        if kind == ARRAY:
            names = self.names(ARRAY, bare)
            if not bare:
                return self.c.pick(names)
            buffers = [n for n, v in self.env.items() if v.buffer]
            return self.c.pick(names + [f"({b} * 0.5)" for b in buffers])
        options = self.names(SCALAR, bare) + list(CONSTANTS[:3])
        options += [f"{a}[{k}]" for a in self.names(ARRAY, False) for k in ("0", "2", "-1")]
        options += [f"{a}[{i}]" for a in self.names(ARRAY, False) for i in self.ints]
        options += [f"(0.5 * {i})" for i in self.ints]
        return self.c.pick(options)

    def value(self, kind, depth, bare=False):
        if kind is None:
            kind = self.c.pick([ARRAY, SCALAR])
        return (self.array if kind == ARRAY else self.scalar)(depth, bare)

    def kinds_for(self, kind):
        """Operand kinds whose broadcast is `kind`."""
        if kind == SCALAR:
            return SCALAR, SCALAR
        return self.c.pick([(ARRAY, ARRAY), (ARRAY, SCALAR), (SCALAR, ARRAY)])

    def new_form(self, kind, d):
        """One of the EXTENDED productions, or None when it is avoided."""
        name = self.c.pick(EXTENDED)
        if name in self.avoid:
            return None
        if name in ("array_literal", "list_literal") and self.c.maybe(50):
            # nested lists, tuples, ints, np.stack / np.concatenate / np.hstack of them
            return self.built_array(d) if kind == ARRAY else self.built_scalar(d)
        if name in ("array_literal", "list_literal"):
            items = ", ".join(self.element(d) for _ in range(N))
            literal = f"np.array([{items}])" if name == "array_literal" else f"[{items}]"
            if kind == ARRAY:
                return literal if name == "array_literal" else f"np.asarray({literal})"
            return f"{literal}[{self.c.pick(['0', '1', '2', '-1'] + self.ints)}]"
        if name == "star_args":
            left, right = self.kinds_for(kind)
            return f"helper_star({self.value(left, d, True)}, {self.value(right, d, True)})"
        return f"helper_{name}({self.value(kind, d, True)})"

    def element(self, d):
        """A scalar for a list or array literal: a constant as often as an expression."""
        return self.c.pick(CONSTANTS) if self.c.maybe(50) else self.scalar(d, True)

    def array(self, depth, bare=False):
        if depth <= 0:
            return self.leaf(ARRAY, bare)
        d = depth - 1
        form = self.c.below(15 if self.extended or self.captured else 13)
        if form >= 13:
            if self.captured:
                return self.captured_call(ARRAY, d)
            return self.new_form(ARRAY, d) or self.leaf(ARRAY, bare)
        if form == 0:
            return self.leaf(ARRAY, bare)
        if form == 1:
            return self.arithmetic(ARRAY, d)
        if form == 2:
            return self.smooth(ARRAY, d)
        if form == 3:
            return self.divide(ARRAY, d)
        if form == 4:
            return self.power(ARRAY, d)
        if form == 5:
            return f"(-{self.array(d)})"
        if form == 6:
            f = self.c.pick(["np.maximum", "np.minimum"])
            return f"{f}({self.array(d)}, {self.value(None, d)})"
        if form == 7:
            return (f"np.where({self.array(d)} > {self.value(None, 0)}, "
                    f"{self.value(None, d)}, {self.value(None, d)})")
        if form == 8:
            return f"({self.array(d, True)} if {self.cond(d)} else {self.array(d, True)})"
        if form == 9:
            return self.helper(ARRAY, d)
        if form == 10:
            return f"stop_gradient({self.array(d, True)})"
        if form == 11:
            index = self.c.pick(["[::-1]", "[[2, 0, 1]]", "[[0, 0, 1]]"])
            return f"({self.array(d, True)}){index}"     # a view: never of a buffer
        return self.c.pick([f"np.abs({self.array(d)})",
                            f"np.clip({self.array(d)}, -0.5, 0.8)"])

    def number_item(self, d):
        """A number for a list literal: a constant (int or float) as often as not."""
        if self.c.maybe(50):
            return self.scalar(d, True)
        return self.c.pick(list(CONSTANTS) + ["1", "-2"])

    def elements(self, d, n=N):
        items = [self.number_item(d) for _ in range(n)]
        if all(e in ("1", "-2") for e in items):
            items[0] = "0.5"        # an int array would refuse `a += 0.5` at run time
        return ", ".join(items)

    def built_array(self, d):
        """An array of shape (3,) built from a list or tuple of constants and values."""
        form = self.c.below(8)
        if form == 0:
            return f"np.array([{self.elements(d)}])"
        if form == 1:
            return f"np.array(({self.elements(d)}))"
        if form == 2:       # nested: a row of constants and a row of values, summed
            rows = ", ".join(f"[{self.elements(d)}]" for _ in range(1 + self.c.below(3)))
            return f"np.sum(np.array([{rows}]), axis=0)"
        if form == 3:
            return f"np.array([[{self.elements(d)}], [{self.elements(d)}]])[{self.c.below(2)}]"
        if form == 4:
            parts = [self.c.pick(["np.ones(3)", "np.zeros(3)", f"[{self.elements(d)}]",
                                  self.array(d, True)]) for _ in range(2)]
            parts.insert(self.c.below(3), self.array(d, True))
            return f"np.sum(np.stack([{', '.join(parts)}]), axis=0)"
        if form == 5:
            first = self.c.pick(["[0.5]", f"[{self.number_item(d)}]"])
            return f"np.concatenate([{first}, ({self.array(d)})[1:]])"
        if form == 6:
            return f"np.hstack([{self.elements(d)}])"
        return f"np.array([{self.elements(d)}]) * " \
               f"np.array([{self.number_item(0)}, 1.0, {self.number_item(0)}])"

    def scalar(self, depth, bare=False):
        if depth <= 0:
            return self.leaf(SCALAR, bare)
        d = depth - 1
        form = self.c.below(15 if self.extended or self.captured else 13)
        if form >= 13:
            if self.captured:
                return self.captured_call(SCALAR, d)
            return self.new_form(SCALAR, d) or self.leaf(SCALAR, bare)
        if form == 0:
            return self.leaf(SCALAR, bare)
        if form == 1:
            return self.arithmetic(SCALAR, d)
        if form == 2:
            return self.smooth(SCALAR, d)
        if form == 3:
            return self.divide(SCALAR, d)
        if form == 4:
            return self.power(SCALAR, d)
        if form == 5:
            return f"(-{self.scalar(d)})"
        if form in (6, 7):
            return self.reduce(d)
        if form == 8:
            return f"({self.scalar(d, True)} if {self.cond(d)} else {self.scalar(d, True)})"
        if form == 9:
            return self.helper(SCALAR, d)
        if form == 10:
            return f"stop_gradient({self.scalar(d, True)})"
        if form == 11:
            a = self.array(d)
            return self.c.pick([f"np.dot({a}, {self.array(d)})", f"({a} @ {self.array(d)})",
                                f"float({self.scalar(d)})"])
        f = self.c.pick(["max", "min", "abs"])
        if f == "abs":
            return f"abs({self.scalar(d)})"
        return f"{f}({self.scalar(d)}, {self.scalar(d)})"

    def built_scalar(self, d):
        """A number read from, or reduced over, a list or tuple of constants and values."""
        n = 2 + self.c.below(3)
        form = self.c.below(7)
        if form == 0:
            return f"[{self.elements(d, n)}][{self.c.below(n)}]"
        if form == 1:
            return f"({self.elements(d, n)},)[{self.c.below(n)}]"
        if form == 2:
            return f"np.sum([{self.elements(d, n)}])"
        if form == 3:
            return f"sum([{self.elements(d, n)}])"
        if form == 4:
            return f"np.sum([v * 3.0 for v in {self.array(d)}])"
        if form == 5:
            return f"np.sum(np.array([[{self.elements(d, 2)}], [{self.elements(d, 2)}]]) * " \
                   f"np.array([[1.0, 2.0], [3.0, 4.0]]))"
        return f"[[{self.elements(d, 2)}], [{self.elements(d, 2)}]][{self.c.below(2)}]" \
               f"[{self.c.below(2)}]"

    def reduce(self, d):
        a = self.array(d)
        v = self.array(d, True)      # sliced: never a view of an array written later
        return self.c.pick([f"np.sum({a})", f"np.mean({a})", f"({a}).sum()", f"({a})[1]",
                            f"np.max({a})", f"np.min({a})", f"np.prod({a})",
                            f"np.sum(({v})[1:] * ({v})[:-1])", f"np.sum(({v})[:2])",
                            f"({a}).mean()"])

    def arithmetic(self, kind, d):
        left, right = self.kinds_for(kind)
        op = self.c.pick(["+", "-", "*"])
        return f"({self.value(left, d)} {op} {self.value(right, d)})"

    def smooth(self, kind, d):
        e = self.value(kind, d)
        return self.c.pick([f"np.sin({e})", f"np.cos({e})", f"np.tanh({e})",
                            f"np.exp(np.tanh({e}))", f"np.log(1.0 + np.square({e}))",
                            f"np.log1p({e} ** 2)", f"np.sqrt(1.0 + {e} ** 2)",
                            f"np.square({e})", f"np.expm1(np.sin({e}))",
                            f"np.log1p(np.exp({e}))"])

    def divide(self, kind, d):
        form = self.c.below(5)
        if form == 0:
            return f"({self.value(kind, d)} / 3.0)"
        if form == 1:
            return f"(2.0 / (1.0 + np.square({self.value(kind, d)})))"
        top, bottom = self.kinds_for(kind)
        num, den = self.value(top, d), self.value(bottom, d)
        return [f"({num} / (1.0 + {den} * {den}))", f"({num} / (2.0 + np.cos({den})))",
                f"({num} / (1.5 + np.tanh({den})))"][form - 2]

    def power(self, kind, d):
        base, exponent = self.kinds_for(kind)
        e = self.value(kind, d)
        return self.c.pick([f"({e} ** 2)", f"({e} ** 3)", f"np.power({e}, 2)",
                            f"((1.0 + np.square({e})) ** 0.5)",
                            f"((1.0 + np.square({e})) ** -1.5)",
                            f"(1.5 ** np.tanh({e}))",
                            f"((1.0 + np.square({self.value(base, d)})) ** "
                            f"np.tanh({self.value(exponent, d)}))"])

    def helper(self, kind, d):
        left, right = self.kinds_for(kind)
        u, v = self.value(left, d, True), self.value(right, d, True)
        w = self.value(kind, d, True)
        return self.c.pick([
            f"helper_tanh({u}, {v})", f"helper_scale({w})",
            f"helper_scale({w}, scale={self.scalar(d)})",
            f"helper_loop({w}, {self.c.pick(['1', '2', '3'] + self.ints)})",
            f"helper_rec({w}, {self.c.pick(['0', '1', '2', '3'])})",
            f"helper_branch({u}, {v})", f"helper_pair({u}, {v})[0]"])

    def captured_call(self, kind, d):
        """A call of a name whose meaning changes between calls (factory programs)."""
        e = self.value(kind, d, True)       # act may be a user function: never a buffer
        form = self.c.below(6)
        if form == 5:
            left, right = self.kinds_for(kind)
            return f"helper_star({self.value(left, d, True)}, {self.value(right, d, True)})"
        return [f"act({e})", f"inner({e})", f"inner({e}, s=0.5)", f"glob({e})",
                f"(k * act({e}))"][form]

    def cond(self, d):
        d = min(d, 1)
        options = [f"{self.scalar(d)} > {self.c.pick(CONSTANTS)}",
                   f"np.sum({self.array(d)}) > {self.c.pick(CONSTANTS)}",
                   f"{self.scalar(d)} < {self.scalar(d)}"]
        options += [f"{i} > 0" for i in self.ints] + [f"{i} == 1" for i in self.ints]
        return self.c.pick(options)

    # --- statements ---

    def target(self):
        """A name to assign and the kind it must get (None: free to choose)."""
        new = [n for n in LOCALS if n not in self.env][:1]
        existing = [n for n in LOCALS if n in self.env]
        name = self.c.pick(new + existing + ["x", "y"] if self.c.maybe(10)
                           else (new + existing or ["x"]))
        if name in ("x", "y") or name in self.fixed:
            return name, self.env[name].kind
        return name, None

    def bind(self, name, kind, text):
        """Record `name = text`; in a loop, keep a fresh value fresh for the next pass."""
        fresh = is_fresh(text)
        if not fresh:
            shared = [n for n in ast_names(text) | {name}
                      if n in self.env and self.env[n].fresh]
            if set(shared) & self.fixed:
                # a later pass of the loop may update it in place, before this runs again
                text = f"np.copy({text})" if kind == ARRAY else f"({text} + 0.0)"
                fresh = True
            else:       # the value may be shared: no name in it may be updated in place
                for other in shared:
                    self.env[other] = Var(self.env[other].kind, self.env[other].buffer, False)
        self.env[name] = Var(kind, False, fresh)
        return text

    def assign(self, d):
        name, kind = self.target()
        kind = kind or self.c.pick([ARRAY, SCALAR])
        text = self.bind(name, kind, self.value(kind, d, True))
        self.emit(f"{name} = {text}")

    def augassign(self, d):
        names = [n for n, v in self.env.items() if not v.buffer]
        name = self.c.pick(names)
        var = self.env[name]
        op = self.c.pick(["+", "*", "-", "/"])
        other = SCALAR if var.kind == SCALAR else self.c.pick([ARRAY, SCALAR])
        e = self.value(other, d)
        if op == "/":
            e = f"(1.0 + np.square({e}))"
        if not var.fresh:
            # on a shared array, `+=` works in place and changes the other names too (and
            # the compiler cannot tell x[0] or a loop element from a view)
            self.emit(f"{name} = {name} {op} {e}")
            self.env[name] = Var(var.kind, False, True)
        else:
            self.emit(f"{name} {op}= {e}")

    def tuple_assign(self, d):
        first, k1 = self.target()
        second = self.c.pick([n for n in LOCALS if n != first])
        k2 = self.env[second].kind if second in self.fixed else None
        k1, k2 = k1 or self.c.pick([ARRAY, SCALAR]), k2 or self.c.pick([ARRAY, SCALAR])
        if first in self.env and second in self.env and self.c.maybe(30) and \
                not self.env[first].buffer and not self.env[second].buffer and \
                (self.env[first] == self.env[second] or
                 not {first, second} & (self.fixed | {"x", "y"})):
            self.emit(f"{first}, {second} = {second}, {first}")     # a swap
            self.env[first], self.env[second] = self.env[second], self.env[first]
            return
        left, right = self.value(k1, d, True), self.value(k2, d, True)
        left = self.bind(first, k1, left)
        right = self.bind(second, k2, right)
        self.emit(f"{first}, {second} = {left}, {right}")

    def fill_buffer(self, d):
        name = self.c.pick(BUFFERS)
        source = self.c.pick(["x.copy()", f"({self.array(d)}).copy()", "np.zeros_like(x)",
                              f"np.copy({self.array(d)})"])
        self.emit(f"{name} = {source}")
        self.env[name] = Var(ARRAY, buffer=True, fresh=True)

    def write_buffer(self, d):
        buffers = [n for n, v in self.env.items() if v.buffer]
        if not buffers:
            return self.fill_buffer(d)
        name = self.c.pick(buffers)
        index = self.c.pick(["0", "2", "-1", "1"] + self.ints)
        form = self.c.below(6 if self.extended else 4)     # (4, 5: duplicate indices)
        if form == 3:
            self.emit(f"{name}[1:] = ({self.array(d, True)})[:2]")
        elif form == 4:     # duplicate indices: NumPy keeps one write, += adds once
            index = self.c.pick(["[0, 0, 1]", "np.array([2, 2, 0])", "[1, -2, 1]"])
            op = self.c.pick(["=", "+=", "-=", "*="])
            self.emit(f"{name}[{index}] {op} {self.value(None, d, True)}")
        elif form == 5:
            self.emit(f"{name}[{self.c.pick(['[2, 2]', '[0, -3]'])}] = {self.scalar(d)}")
        else:
            self.emit(f"{name}[{index}] {['=', '+=', '*='][form]} {self.scalar(d)}")

    def branch(self, d):
        before = dict(self.env)
        ends = []
        self.block(f"if {self.cond(d)}:", self.count())
        ends.append(self.env)
        while True:
            self.env = dict(before)
            if not self.c.maybe(30):
                break
            self.block(f"elif {self.cond(d)}:", self.count())
            ends.append(self.env)
        if self.c.maybe(50):
            self.env = dict(before)
            self.block("else:", self.count())
        ends.append(self.env)
        self.env = _join(before, *ends)

    def loop(self, header, count, body=None):
        before = dict(self.env)
        fixed = self.fixed
        self.fixed = fixed | set(before)
        self.loops += 1
        self.block(header, count, body)
        self.loops -= 1
        self.fixed = fixed
        self.env = _join(before, self.env)

    def fresh_name(self, names):
        """A loop variable or counter name, reused by loop depth."""
        return names[self.loops % len(names)]

    def for_range(self, d):
        i = self.fresh_name("ijk")
        k = self.c.pick(["3", "2", "1", "len(x)"])

        def enter():
            self.ints.append(i)
            if self.c.maybe(40):
                self.exit_loop(d)
        self.loop(f"for {i} in range({k}):", self.count(), enter)
        self.ints.remove(i)

    def exit_loop(self, d):
        jump = self.c.pick(["break", "continue"])
        self.emit(f"if {self.cond(d)}:")
        self.emit(f"    {jump}")

    def for_each(self, d):
        v = self.fresh_name("vw")
        source = self.c.pick(self.names(ARRAY, True) + ["x[::-1]"])
        for name in ast_names(source):  # the loop reads it as it goes: no in-place update
            self.env[name] = Var(ARRAY, False, False)

        def enter():
            self.env[v] = Var(SCALAR)
        self.loop(f"for {v} in {source}:", self.count(), enter)
        self.env.pop(v, None)

    def while_loop(self, d):
        n = self.fresh_name("nm")
        self.emit(f"{n} = 0")

        def enter():
            self.emit(f"{n} += 1")
            if self.c.maybe(40):
                self.exit_loop(d)
        self.loop(f"while {n} < {self.c.pick(['3', '2'])}:", self.count(), enter)

    def build_list(self, d):
        name = f"lst{self.lists}"
        self.lists += 1
        kind = self.c.pick([ARRAY, SCALAR])
        i = self.fresh_name("ijk")
        self.ints.append(i)
        if self.c.maybe(50):
            self.emit(f"{name} = [{self.value(kind, d, True)} for {i} in range(3)]")
        else:
            self.emit(f"{name} = []")
            self.emit(f"for {i} in range(3):")
            self.emit(f"    {name}.append({self.value(kind, d, True)})")
        self.ints.remove(i)
        target, fixed_kind = self.target()
        if fixed_kind not in (None, kind):
            target = f"{target}_"
        total = self.c.pick([f"sum({name})", f"{name}[0] * {name}[-1]", f"sum({name}) * 0.5"])
        self.emit(f"{target} = {total}")
        self.env[target] = Var(kind, False, True)

    def pair(self, d):
        kind = self.c.pick([ARRAY, SCALAR])
        first, k1 = self.target()
        second = self.c.pick([n for n in LOCALS if n != first])
        k2 = self.env[second].kind if second in self.fixed else None
        if k1 not in (None, kind) or k2 not in (None, kind):
            return self.assign(d)
        left, right = self.kinds_for(kind)
        self.emit(f"{first}, {second} = helper_pair({self.value(left, d, True)}, "
                  f"{self.value(right, d, True)})")
        self.env[first] = self.env[second] = Var(kind, False, True)

    def early_return(self, d):
        self.emit(f"if {self.cond(d)}:")
        self.emit(f"    return {self.result(d)}")

    def deep_assign(self, d):
        """`name = ` a chain or nesting hundreds of levels deep, with a bounded value."""
        name, kind = self.target()
        kind = kind or self.c.pick([ARRAY, SCALAR])
        e = self.leaf(kind)
        form = self.c.below(4)
        # deep enough that the compiler's recursive walks need more than Python's default
        # recursion limit (about 4 frames a level; CPython allows 200 nested parentheses)
        n = self.c.pick([300, 400] if form < 3 else [190, 150])
        if form == 0:
            factors = [f"(1.0 + 0.01 * np.sin({e}))", "1.001", "0.999"]
            text = " * ".join(factors[k % 3] for k in range(n))
        elif form == 1:
            text = " + ".join(f"{(-1) ** k * (k % 7 + 1) * 0.005:.3f} * np.tanh({e})"
                              for k in range(n))
        elif form == 2:
            text = "-" * n + f"np.sin({e})"
        else:
            text = "".join(("np.sin(", "np.tanh(")[k % 2] for k in range(n)) + e + ")" * n
        self.env[name] = Var(kind, False, True)
        self.emit(f"{name} = {text}")

    def scopes(self, d):
        """A loop or comprehension whose target reuses the name of the array it reads."""
        name = f"sc{self.lists}"
        self.lists += 1
        self.emit(f"{name} = {self.array(d, True)}")
        form = self.c.below(6)
        if form == 5:       # a dict built by writes into new keys, in a loop
            table = f"d{name}"
            self.emit(f"{table} = {{}}")
            self.emit(f"for k{name} in range(3):")
            self.emit(f"    {table}[k{name}] = {name}[k{name}] * {name}[2 - k{name}]")
            total = f"{table}[0] + {table}[2] * {table}[1]"
        elif form < 2:
            acc = f"acc{name}"
            self.emit(f"{acc} = 0.0")
            header = (f"for {name} in {name}:" if form == 0
                      else f"for k{name}, {name} in enumerate({name}):")
            self.emit(header)
            step = f"{name} * {name}" if form == 0 else f"{name} * k{name}"
            self.emit(f"    {acc} = {acc} * 0.5 + {step}")
            total = f"{acc} + {name}"
        elif form == 2:
            total = f"sum([{name} * 2.0 for {name} in {name} + x])"
        elif form == 3:     # the inner first iterable is read in the outer comprehension
            total = (f"sum([sum([w * {name} for {name} in {name} if {name} > w]) "
                     f"for w in {name}])")
        else:
            total = f"sum([a * {name} for a, {name} in zip({name}, x[::-1])])"
        target, fixed_kind = self.target()
        if fixed_kind not in (None, SCALAR):
            target = f"{target}_"
        self.emit(f"{target} = {total}")
        self.env[target] = Var(SCALAR, False, True)

    def containers(self, d):
        """A dict or list of active values passed to a helper that reads it as a whole."""
        kind = self.c.pick([ARRAY, SCALAR])
        items = [self.value(kind, d, True) for _ in range(1 + self.c.below(3))]
        form = self.c.below(8)
        if form < 3:
            keys = self.c.pick([range(len(items)), range(len(items))[::-1],
                                ["'a'", "'b'", "'c'"]])
            table = "{" + ", ".join(f"{k}: {v}" for k, v in zip(keys, items)) + "}"
            helper = ("helper_keys", "helper_items", "helper_dict_loop")[form]
            total = f"{helper}({table}, {self.value(kind, d, True)})"
        elif form == 3:
            total = f"helper_each([{', '.join(items)}], {self.value(kind, d, True)})"
        elif form == 4:
            joined = f"helper_join([{', '.join(items)}], {self.value(kind, d, True)})"
            total = f"sum({joined}) * {joined}[0]" if self.c.maybe(30) else f"sum({joined})"
        elif form == 5:
            if self.c.maybe(40):    # (only the joined item active: its tangent's place)
                items = [f"stop_gradient({item})" for item in items]
            joined = f"helper_join_tuple(({', '.join(items)},), {self.value(kind, d, True)})"
            total = f"{joined}[0] * {joined}[-1]" if self.c.maybe(50) else f"sum({joined})"
        elif form == 6:
            n = self.c.pick(["2", "3"])
            rep = f"helper_repeat([{', '.join(items)}], {n})"
            total = f"{rep}[0] * {rep}[-1]" if self.c.maybe(50) else f"sum({rep})"
        else:
            items = items + [self.value(kind, d, True) for _ in range(3 - len(items))]
            total = f"helper_slice([{', '.join(items)}], {self.value(kind, d, True)})"
        target, fixed_kind = self.target()
        if fixed_kind not in (None, kind):
            target = f"{target}_"
        self.emit(f"{target} = {total}")
        self.env[target] = Var(kind, False, True)

    def picks(self, d):
        """A helper's pair, whose arrays are read with an index that picks one element
        twice: their adjoints must add both picks up (at every order)."""
        u = self.value(ARRAY, d, True)
        v = self.value(self.c.pick([ARRAY, SCALAR]), d, True)
        index = self.c.pick(["[0, 0]", "[1, 0, 1]", "np.array([2, 2])", "[-1, 0, -1]"])
        pair, target = f"pair{len(self.lines)}", f"picked{len(self.lines)}"
        first = self.c.pick(["0", "1"])
        self.emit(f"{pair} = helper_two({u}, {v})")
        self.emit(f"{target} = np.sum({pair}[{first}][{index}] * {pair}[1][{index}])")
        self.env[target] = Var(SCALAR, False, True)

    def constants(self, d):
        """A constant array s that the result is computed from, changed in place before
        its first use or by a write into itself after it (which the analysis follows), or
        after its use through an alias, a method or a helper (LATE_WRITE_REFUSALS); then
        a pick of labels by np.arange, whose adjoint adds each pick once."""
        n = len(self.lines)
        s, u = f"cs{n}", self.value(ARRAY, d, True)
        self.emit(f"{s} = np.array([{self.c.pick(['1.5', '-0.5'])}, 2.0, 0.25])")
        before = self.c.pick(["", f"{s}.fill(0.75)", f"{s}.sort()",
                              f"np.multiply({s}, 2.0, out={s})", f"helper_clobber({s})"])
        if before:
            self.emit(before)
        self.emit(f"use{n} = np.sum({u} * {s})")
        # (a refused change only one time in ten: a program with one is refused whole,
        # and a program draws this production several times)
        after = self.c.pick([f"al{n} = {s}  {LATE}|al{n}[0] = 5.0", f"{s}.fill(0.5)  {LATE}",
                             f"helper_clobber({s})  {LATE}"]) if self.c.maybe(10) else \
            self.c.pick(["", f"{s}[1] = 3.0", f"{s}[0] += 1.0"])
        for line in after.split("|") if after else ():
            self.emit(line)
        self.emit(f"use{n} = use{n} + np.sum({u} * {s})")
        rows = f"rows{n}"
        self.emit(f"{rows} = np.arange({N})")
        self.emit(f"lab{n} = np.array([{', '.join(self.c.pick(['0', '1', '2']) for _ in range(N))}])")
        z = f"np.outer({u}, {s})"
        self.emit(f"use{n} = use{n} + np.sum(np.sin({z})[{rows}, lab{n}])")
        self.env[f"use{n}"] = Var(SCALAR, False, True)

    def sigmoids(self, d):
        """A sigmoid and its cross-entropy (the shortcuts' patterns), once or in a loop
        whose trips rebind the labels before or after the sum."""
        n = len(self.lines)
        u = self.value(ARRAY, d, True)
        labels = self.c.pick(["y", self.value(self.c.pick([ARRAY, SCALAR]), d, True)])
        lab, p, total = f"lab{n}", f"sg{n}", f"ce{n}"
        self.emit(f"{lab} = np.tanh({labels}) * 0.4 + 0.5")
        form = self.c.pick([f"{lab} * np.log({p}) + (1.0 - {lab}) * np.log(1.0 - {p})",
                            f"np.log(1.0 - {p}) * (1.0 - {lab}) + np.log({p}) * {lab}",
                            f"np.log({p}) * {lab} + np.sum(np.log(1.0 - {p}))"])
        sigmoid = f"1.0 / (1.0 + np.exp(-(np.tanh({u}) * {{scale}})))"
        if self.c.below(2):
            self.emit(f"{p} = " + sigmoid.format(scale="2.0"))
            self.emit(f"{total} = np.sum({form})")
        else:
            k = f"k{n}"
            rebind = self.c.pick(["", f"{lab} = {lab} * 0.5 + 0.25"])
            after = self.c.pick([True, False])
            self.emit(f"{total} = 0.0")
            self.emit(f"for {k} in range(2):")
            if rebind and not after:
                self.emit(f"    {rebind}")
            self.emit(f"    {p} = " + sigmoid.format(scale=f"({k} + 1.0)"))
            self.emit(f"    {total} = {total} + np.sum({form})")
            if rebind and after:
                self.emit(f"    {rebind}")
        self.env[total] = Var(SCALAR, False, True)

    def growing(self, d):
        """A name that holds a number, then an array: a loop adds arrays to a function of
        it, so it takes their shape on the first trip."""
        start = self.value(SCALAR, d, True)
        items = [self.value(ARRAY, d, True) for _ in range(1 + self.c.below(2))]
        target = f"grow{len(self.lines)}"
        v = f"part{len(self.lines)}"
        step = self.c.pick([f"np.sin({target}) * 0.5 + {v}", f"{target} * 0.5 + {v}",
                            f"{v} - np.tanh({target})"])
        self.emit(f"{target} = {start}")
        self.emit(f"for {v} in [{', '.join(items)}]:")
        self.emit(f"    {target} = {step}")
        self.env[target] = Var(ARRAY)

    def odd_comment(self, d):
        """An assignment whose comment holds a line break character of str.splitlines()
        and, after it, code that would change the result if it became a line."""
        ch = self.c.pick(LINE_BREAKS)
        self.assign(d)
        name = self.lines[-1].split(" = ")[0].strip()
        hidden = self.c.pick([f"{name} = 0.0 * {name}", "return 0.0", f"{name} = {name} + 1"])
        self.lines[-1] += f"  # note{ch}{'    ' * self.level}{hidden}"

    def count(self):
        return 1 + self.c.below(3)

    def statement(self):
        d = self.c.below(4)
        compound = self.nesting < 2
        form = self.c.below(13 + len(self.extras) if compound else 6)
        if form == 11 and "early_return" in self.avoid:
            form = 0
        ([self.assign, self.augassign, self.tuple_assign, self.write_buffer, self.fill_buffer,
          self.pair, self.branch, self.for_range, self.while_loop, self.build_list,
          self.for_each, self.early_return, self.assign] + self.extras)[form](d)

    def result(self, d):
        terms = []
        for name, var in sorted(self.env.items()):
            if name in ("x", "y") or not self.c.maybe(60):
                continue
            terms.append(f"np.sum({name})" if var.kind == ARRAY else name)
        if not terms:
            terms.append(self.c.pick([f"np.sum({self.array(d)})", self.scalar(d)]))
        return " + ".join(terms)


def ast_names(text: str) -> set:
    return {n.id for n in ast.walk(ast.parse(text, mode="eval")) if isinstance(n, ast.Name)}


def write_program(choices: Choices, avoid=frozenset(), extended=False,
                  extras=()) -> tuple[str, bool]:
    """The source of a random `def f(x, y):` and whether y is a Python float; `avoid`
    names constructs (keys of AVOIDABLE) to leave out; `extended` adds the EXTENDED
    productions (the fixed set is drawn without them, so it stays what it was), `extras`
    the EXTRAS (keys) named."""
    y_float = choices.maybe(25)
    writer = _Writer(choices, SCALAR if y_float else ARRAY, frozenset(avoid), extended,
                     extras)
    if "odd_comments" in extras and choices.maybe(50):
        writer.emit(f'"""doc{choices.pick(LINE_BREAKS)}    return 0.0"""')
    for _ in range(1 + choices.below(6)):
        writer.statement()
    for extra in writer.extras:     # each at least once, where the result may read it
        extra(choices.below(4))
    writer.emit(f"return {writer.result(choices.below(3))}")
    return "def f(x, y):\n" + "\n".join(writer.lines) + "\n", y_float


def write_factory_program(choices: Choices) -> tuple[str, bool]:
    """The source of `make(act, k)`, which returns a random `def f(x, y):` whose body may
    call `act` and `inner` (closures over the factory's arguments; `inner` takes k as a
    default) and `glob` (a module-level name), and whether y is a Python float."""
    y_float = choices.maybe(25)
    writer = _Writer(choices, SCALAR if y_float else ARRAY)
    writer.captured = True
    writer.level = 2
    for _ in range(1 + choices.below(5)):
        writer.statement()
    writer.emit(f"return {writer.result(choices.below(3))}")
    return ("def make(act, k):\n"
            "    def inner(u, s=k):\n"
            "        return act(u) * s\n\n"
            "    def f(x, y):\n" + "\n".join(writer.lines) + "\n"
            "    return f\n"), y_float
