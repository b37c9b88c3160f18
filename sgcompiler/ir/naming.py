"""All naming conventions of generated code, in one place.

The adjoint of `x` is `dx`; a temporary holding `np.exp(...)` is `_exp`; the gradient of `f`
is `f_grad`. The `Namer` first reserves every name the user's function uses and adds a
numeric suffix on a clash (`dx_1`, `_exp2`), so generated names never shadow user names.
"""
from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import gast

_OP_NAMES = {
    gast.Add: "add", gast.Sub: "sub", gast.Mult: "mul", gast.Div: "div", gast.Pow: "pow",
    gast.MatMult: "matmul", gast.FloorDiv: "floordiv", gast.Mod: "mod",
    gast.USub: "neg", gast.UAdd: "pos", gast.Not: "not",
}


def unused_name(preferred: str, taken: set) -> str:
    """`preferred`, or `preferred2`, `preferred3`, ... : the first not in `taken`, which
    it joins."""
    name, k = preferred, 2
    while name in taken:
        name, k = f"{preferred}{k}", k + 1
    taken.add(name)
    return name


def op_name(op) -> str:
    return _OP_NAMES.get(type(op), type(op).__name__.lower())


def grad_function_name(name: str) -> str:
    return f"{name}_grad"


def jvp_function_name(name: str) -> str:
    """The forward-mode (tangent) function of `f`: `f_jvp(x, w, x_dot, w_dot)`."""
    return f"{name}_jvp"


TANGENT_SUFFIX = "_dot"      # the tangent of `x` is `x_dot`, of `_exp` `_exp_dot`


class Namer:
    """Hands out fresh, deterministic names that clash with nothing reserved."""

    def __init__(self, reserved=()):
        self._taken = set(reserved)
        self._adjoints: dict[str, str] = {}
        self._adjoint_of: dict[str, str] = {}     # the reverse of _adjoints, kept beside it
        self._tangents: dict[str, str] = {}
        self._versions: dict[str, str] = {}     # z_1 -> z
        self._next_number: dict = {}    # (stem, first) -> where its next search starts

    def reserve(self, names) -> None:
        self._taken.update(names)

    def fresh(self, base: str) -> str:
        """`base` itself if free, else `base2`, `base3`, ... (for temporaries: `_exp2`)."""
        if base not in self._taken:
            self._taken.add(base)
            return base
        sep = "_" if base[-1].isdigit() else ""
        return self._numbered(base + sep, 2)

    def _numbered(self, stem: str, first: int) -> str:
        """The first of stem2, stem3, ... (from `first`) not taken, which it takes. Where
        the last search for this stem ended is kept (names are only ever taken, so every
        number before it is still taken): a name made n times costs n steps, not n**2."""
        i = self._next_number.get((stem, first), first)
        while f"{stem}{i}" in self._taken:
            i += 1
        self._next_number[stem, first] = i + 1
        name = f"{stem}{i}"
        self._taken.add(name)
        return name

    def temp(self, hint: str) -> str:
        """A temporary named after what it holds: `_exp`, `_mul`, `_getitem`."""
        return self.fresh("_" + hint.strip("_"))

    def version(self, name: str) -> str:
        """A new name for a re-assigned variable: `z` -> `z_1`, `z_2`."""
        new = self._numbered(name + "_", 1)
        self._versions[new] = self._versions.get(name, name)
        return new

    def user_name(self, name: str) -> str:
        """The user's name of a re-assigned variable's version (`z` for `z_1`)."""
        return self._versions.get(name, name)

    def variable_of(self, adjoint: str):
        """The variable whose adjoint is named `adjoint`, or None."""
        return self._adjoint_of.get(adjoint)

    def adjoints(self) -> Mapping[str, str]:
        """adjoint name -> variable, for every adjoint named so far (a read-only view:
        the reverse pass asks for it once per statement, so it is not rebuilt each time)."""
        return MappingProxyType(self._adjoint_of)

    def adjoint(self, name: str) -> str:
        """The adjoint of `name`: `dx` for `x`, `d_exp` for `_exp`; stable per name."""
        if name not in self._adjoints:
            self._adjoints[name] = self.fresh("d" + name)
            self._adjoint_of[self._adjoints[name]] = name
        return self._adjoints[name]

    def tangent(self, name: str) -> str:
        """The tangent of `name`: `x_dot` for `x`, `_exp_dot` for `_exp`; stable per name."""
        if name not in self._tangents:
            self._tangents[name] = self.fresh(name + TANGENT_SUFFIX)
        return self._tangents[name]

    def tangents(self) -> dict:
        """tangent name -> variable, for every tangent named so far."""
        return {name: var for var, name in self._tangents.items()}
