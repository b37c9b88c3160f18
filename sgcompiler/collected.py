"""`grad` (and `hessian`, `jacobian`) of a function that itself takes *args or **kwargs
(`def f(*ws)`): the gradient of a copy of it made for each call's number of arguments and keyword names
(frontend/forms/varargs.collected_copy), whose collected arguments are parameters of
their own, so `wrt` positions mean what they mean in the call:

    grad(f, wrt=(0, 2))(a, b, c)    # f(*ws): the gradient of f_star3(ws_0, ws_1, ws_2)
"""
from __future__ import annotations

import functools

from .errors import SGCompilerError
from .frontend.forms.varargs import collected_copy


class CollectedGradient:
    """The gradient of `fn`, which has *args/**kwargs. Call it like `fn`."""

    def __init__(self, fn, wrt, make, suffix: str = "grad"):
        """`make(copy, wrt)` makes the GradientFunction of a copy of `fn` (or its Hessian,
        its Jacobian: whatever is called like it; `suffix` names the result)."""
        self.primal = fn
        self._wrt = wrt
        self._make = make
        self._made = {}         # (number of arguments, keyword names) -> (gradient, names)
        self._last = None
        functools.update_wrapper(self, fn)
        self.__name__ = f"{fn.__name__}_{suffix}"

    def __call__(self, *args, **kwargs):
        gradient, renamed = self.for_call(len(args), tuple(kwargs))
        return gradient(*args, **{renamed.get(k, k): v for k, v in kwargs.items()})

    def for_call(self, count: int, names: tuple):
        """(the gradient of the copy for `count` positional arguments and keywords
        `names`, the copy's parameter for each keyword collected in **kwargs): also what
        a call of this gradient inside a differentiated function calls
        (frontend/transforms.py)."""
        key = (count, tuple(names))
        found = self._made.get(key)
        if found is None:
            copy, renamed = collected_copy(self.primal, count, tuple(names))
            found = self._made[key] = (self._make(copy, _renamed(self._wrt, renamed)),
                                       renamed)
        self._last = found
        return found

    def _made_last(self):
        if self._last is None:
            raise SGCompilerError(f"{self.primal.__name__} collects its arguments in *args "
                                  "or **kwargs, so its code is made for each call's "
                                  "arguments: call the gradient before reading its code")
        return self._last[0]

    @property
    def source(self) -> str:
        """The generated code of the last call's copy of the function."""
        return self._made_last().source

    def explain(self, format: str = "text"):
        """Why the gradient of the last call is what it is (GradientFunction.explain)."""
        return self._made_last().explain(format)


def _renamed(wrt, renamed: dict):
    """`wrt` with the names of keyword arguments that **kwargs collects renamed to the
    copy's parameters for them (positions mean the same in the copy)."""
    if isinstance(wrt, (tuple, list)):
        return type(wrt)(renamed.get(w, w) if isinstance(w, str) else w for w in wrt)
    return renamed.get(wrt, wrt) if isinstance(wrt, str) else wrt
