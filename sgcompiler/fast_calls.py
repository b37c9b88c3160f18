"""The fast path of a call of NumPy code through `grad` (api.py): for arguments of the kind
of the last call, a function written for that kind does the full path's work in straight
lines.

The full path computes the key of the call (the arguments' types, shapes, dtypes and the
structure of their parameter trees), looks it up, checks the code is still right, runs
it, gives each gradient its argument's structure, type and shape, and copies the arrays of
tree gradients that share memory with an argument or with each other. On a dict of four
parameters that is about 25 µs a call, 4 % of a 0.7 ms gradient (dict_mlp). The function
made here checks the same facts of one kind, key by key and leaf by leaf:

    def fast(args):
        if len(args) != 3:
            return MISS
        a0, a1, a2 = args
        if type(a0) is not dict or len(a0) != 2 or tuple(a0) != k0:
            return MISS
        l0 = a0['W']
        if type(l0) is not ndarray or l0.shape != s0 or l0.dtype != d0:
            return MISS
        ...
        if version() != v0 or not check():
            return MISS
        try:
            g = function(*args)
            ... (the gradients shaped like the arguments, their memory their own)
        except Exception:
            return MISS

and answers MISS (the full path runs, and decides and reports as always) for anything
else: other kinds, a rule registered, a name the code read that means something else
now, an error, a gradient that is not a fresh array of its own or a view of arguments
(then the full path's checks are made on what the code returned).
"""
from __future__ import annotations

import numpy as np

from .arguments import _SCALAR_TYPES, _check_scalar, _like_tree, _unaliased
from .reverse_api import like_leaf

MISS = object()         # the fast path's answer where the call takes the full path
_NUMBERS = (float, int)     # argument types whose type alone is their kind
_CONTAINERS = (dict, list, tuple)


def numpy_fast_call(found, kinds, positions, single, with_value, versions, fname,
                    unalias):
    """args -> what the full path (api.GradientFunction.__call__) returns for arguments
    of `kinds`, or MISS; None where this kind has no fast path (a kind not written here).

    Args:
        found: the call's entry (function, returns value, plain, checker).
        kinds: its key (api.py's `kinds`).
        positions: the positions of the wrt arguments; `single`, `with_value`: as the
            GradientFunction's.
        versions: (() -> the rules' version now, the version the code was compiled with).
        unalias: whether the full path unaliases the gradients (parameter trees).
    """
    writer = _Writer()
    names = [f"a{i}" for i in range(len(kinds))]
    lines = [f"    if len(args) != {len(kinds)}:", "        return MISS",
             f"    {', '.join(names)}{',' if len(names) == 1 else ''} = args"]
    for name, kind in zip(names, kinds):
        if not writer.argument(name, kind, lines):
            return None
    lines += ["    if version() != v0 or not check():", "        return MISS", "    try:"]
    body = ["out = function(*args)", "walked = False"]
    if found[1]:        # (value, gradients)
        body += ["result, g = out",
                 "if type(result) not in SCALARS and not (type(result) is ndarray and "
                 "result.size == 1 and result.dtype.kind != 'c'):",
                 "    check_scalar(fname, result)"]
    else:
        body.append("g = out")
    wrt = [(names[p], kinds[p]) for p in positions]
    if single:
        body += writer.shaped("grads", "g", *wrt[0])
    else:
        body += [f"several = {'g' if len(wrt) > 1 else '(g,)'}",
                 f"if type(several) is not tuple or len(several) != {len(wrt)}:",
                 "    raise TypeError('not one gradient for each argument')"]
        for k, (name, kind) in enumerate(wrt):
            body += writer.shaped(f"r{k}", f"several[{k}]", name, kind)
        body.append(f"grads = ({''.join(f'r{k}, ' for k in range(len(wrt)))})")
    if unalias:
        body += writer.unaliasing()
    body.append("return (result, grads)" if with_value else "return grads")
    lines += ["        " + line for line in body]
    lines += ["    except Exception:", "        return MISS"]
    text = "def fast(args):\n" + "\n".join(lines) + "\n"
    env = dict(writer.constants, MISS=MISS, ndarray=np.ndarray, version=versions[0],
               v0=versions[1], check=found[3], function=found[0], SCALARS=_SCALAR_TYPES,
               check_scalar=_check_scalar, fname=fname, like=like_leaf,
               like_tree=_like_tree, unaliased=_unaliased)
    exec(compile(text, "<sgcompiler fast path>", "exec"), env)
    return env["fast"]


class _Writer:
    """The checks of a kind and the shaping of a gradient like its argument, as lines."""

    def __init__(self):
        self.constants = {}     # name in the fast path -> a key's value (shapes, dtypes)
        self.arrays = []        # the names of every array argument and tree leaf
        self.leaves = []        # (name, "array" or "float") of each gradient leaf shaped
        self.kinds = {}         # array name -> the names of its shape and dtype
        self.tree_leaves = {}   # (tree's name, key) -> the leaf's name
        self.count = 0

    def _constant(self, prefix, value):
        name = f"{prefix}{len(self.constants)}"
        self.constants[name] = value
        return name

    def argument(self, name, kind, lines) -> bool:
        """Append the checks that the argument `name` is of `kind`; False where the kind
        is not one written here."""
        if type(kind) is type:
            if kind not in _NUMBERS:
                return False
            lines += [f"    if type({name}) is not {kind.__name__}:", "        return MISS"]
            return True
        if _is_array_kind(kind):
            lines += [f"    if {self._array_test(name, kind)}:", "        return MISS"]
            self.arrays.append(name)
            return True
        return self._tree(name, kind, lines)

    def _array_test(self, name, kind):
        shape, dtype = self._constant("s", kind[0]), self._constant("d", kind[1])
        self.kinds[name] = shape, dtype
        # (`is` first: NumPy's dtypes of its own types are one object each)
        return f"type({name}) is not ndarray or {name}.shape != {shape} or " \
               f"{name}.dtype is not {dtype} and {name}.dtype != {dtype}"

    def _tree(self, name, kind, lines) -> bool:
        """A parameter tree's checks, down to its leaves (arrays and floats, each named)."""
        container = kind[0]
        if container not in _CONTAINERS:
            return False
        items = kind[1:]
        test = f"type({name}) is not {container.__name__} or len({name}) != {len(items)}"
        if container is dict:
            if not all(type(k) in (str, int) for k, _ in items):
                return False        # (keys written as literals: str and int keys only)
            keys = self._constant("k", tuple(k for k, _ in items))
            test += f" or tuple({name}) != {keys}"
        lines += [f"    if {test}:", "        return MISS"]
        for j, item in enumerate(items):
            key, sub = item if container is dict else (j, item)
            self.count += 1
            leaf = f"l{self.count - 1}"
            lines.append(f"    {leaf} = {name}[{key!r}]")
            self.tree_leaves[(name, key)] = leaf
            if type(sub) is type:
                if sub is not float:
                    return False
                lines += [f"    if type({leaf}) is not float:", "        return MISS"]
            elif _is_array_kind(sub):
                lines += [f"    if {self._array_test(leaf, sub)}:", "        return MISS"]
                self.arrays.append(leaf)
            elif not self._tree(leaf, sub, lines):
                return False
        return True

    def _leaf(self, kind) -> str:
        q = f"q{len(self.leaves)}"
        self.leaves.append((q, "array" if _is_array_kind(kind) else "float"))
        return q

    def _like(self, q, g, x, kind) -> list:
        """`q = like(g, x)`, with like_leaf's first test (an array of x's shape and dtype,
        writeable: g itself) written out for an array x."""
        if not _is_array_kind(kind):
            return [f"{q} = like({g}, {x})"]
        shape, dtype = self.kinds[x]
        return [f"{q} = {g}",
                f"if not (type({q}) is ndarray and {q}.shape == {shape} and "
                f"{q}.dtype is {dtype} and {q}.flags.writeable):",
                f"    {q} = like({q}, {x})"]

    def shaped(self, out, g, name, kind) -> list:
        """Lines that set `out` to the gradient `g` shaped like the argument `name` of
        `kind` (as _like_tree does): a leaf, a dict of leaves; else by _like_tree, and
        then `walked` (its leaves are not named here)."""
        if type(kind) is type or _is_array_kind(kind):
            q = self._leaf(kind)
            return self._like(q, g, name, kind) + [f"{out} = {q}"]
        generic = [f"{out} = like_tree({g}, {name})", "walked = True"]
        if kind[0] is not dict or not all(sub is float or _is_array_kind(sub)
                                          for _, sub in kind[1:]):
            return generic
        lines = [f"if type({g}) is dict:"]
        parts = []
        for key, sub in kind[1:]:
            q = self._leaf(sub)
            lines += ["    " + line for line in self._like(
                q, f"{g}.get({key!r}, 0.0)", self.tree_leaves[(name, key)], sub)]
            parts.append(f"{key!r}: {q}")
        lines.append(f"    {out} = {{{', '.join(parts)}}}")
        return lines + ["else:"] + ["    " + line for line in generic]

    def unaliasing(self) -> list:
        """Lines that keep the gradients `grads` when every leaf is an array of its own (or
        a float) and no argument is a view (what _unaliased keeps as it is), and else give
        them to _unaliased."""
        tests = ["not walked"] + [f"{a}.base is None" for a in self.arrays]
        tests += [f"type({q}) is ndarray and {q}.base is None" if kind == "array" else
                  f"type({q}) is float" for q, kind in self.leaves]
        mine = [f"id({q})" for q, kind in self.leaves if kind == "array"]
        if mine:
            tests.append(f"len({{{', '.join(mine)}}}) == {len(mine)}")
        if mine and self.arrays:
            tests.append(f"{{{', '.join(mine)}}}.isdisjoint("
                         f"{{{', '.join(f'id({a})' for a in self.arrays)}}})")
        return [f"if not ({' and '.join(tests)}):", "    grads = unaliased(grads, args, {})"]


def _is_array_kind(kind) -> bool:
    """Whether `kind` is an array's (shape, dtype)."""
    return type(kind) is tuple and len(kind) == 2 and type(kind[0]) is tuple and \
        isinstance(kind[1], np.dtype)
