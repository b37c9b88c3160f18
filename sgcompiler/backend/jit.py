"""The numba backend: generated code compiled by numba (`grad(f, backend="numba")`).

numba is an optional extra (`pip install 'sgcompiler[jit]'`) and this is the only module
that imports it. The generated NumPy code stays the readable reference; for numba it
differs in three ways only, made here on the final tree (`for_numba`):

    del _tape                            (gone: numba refuses `del`; it frees on return)
    np.multiply(d, 2, out=d)     ->      np.multiply(d, 2, d)      (numba's spelling)
    _tape.append(x)              ->      _tape_x.append(x)         (backend/numba_tapes.py;
                                         _tape_x[_n_x] = x; _n_x += 1 in a counted loop)

and the pipeline leaves out the optimizations whose code numba cannot type (`NOT_FOR_NUMBA`:
per-trip values gathered into one `np.array` for a single matrix product, numba loops
need no such batching; the ties of max's mask halved through a boolean mask of two
axes, `d[x == 0] *= 0.5`, which numba's lowering rejects).

Each generated function is compiled on its own: the gradient and the forward and backward
of each helper it calls (pipeline.piece(backend="numba")), numba code calling the others
through their dispatchers. Where numba cannot compile one (a runtime helper it has no
version of, a tape of mixed types, an argument type it does not know), that function's
NumPy code runs instead, calling the others as they are, and a `JitFallbackWarning` says
once, for that function, why (its callers, which numba code cannot make call NumPy code,
fall back too, each saying so).
"""
from __future__ import annotations

import copy
import re
import types
import warnings

import gast
import numpy as np

from .numba_factors import save_factors
from .numba_tapes import split_tapes

try:
    import numba
    from numba.core.errors import NumbaError
except ImportError:         # the extra is not installed: every function falls back
    numba = None
    NumbaError = ()

BACKENDS = ("numpy", "numba")


def _numbers_alone():
    """numba's versions of the runtime helpers the code calls where shapes are not known
    (the result of a helper, say), for the case numba's types tell apart at compile
    time, numbers: `unbroadcast(g, x)` of a number `x` is `g` summed, `unreduce(g, x)` of
    a number `g` (over all axes) is `g` filled into `x`'s shape, `add_trees(a, b)` of
    numbers their sum (a 0.0 stands for zero there: the same number). For any other
    types they have none, numba cannot compile the call and the NumPy code runs."""
    from numba.core import types as nt
    from numba.extending import overload

    from ..runtime.core import add_trees, unbroadcast, unreduce

    @overload(unbroadcast)
    def _unbroadcast(g, x):
        if isinstance(x, nt.Number) and isinstance(g, nt.Number):
            return lambda g, x: g
        if isinstance(x, nt.Number) and isinstance(g, nt.Array):
            return lambda g, x: np.sum(g)
        return None

    @overload(unreduce)
    def _unreduce(g, x, axis=None, keepdims=False):
        # a number `g` (a sum's adjoint) over a float array: filled in, writable (the
        # NumPy code's read-only broadcast is not written into)
        whole = axis is None or isinstance(axis, (nt.NoneType, nt.Omitted))
        if whole and isinstance(g, nt.Number) and isinstance(x, nt.Array) and \
                isinstance(x.dtype, nt.Float):
            return lambda g, x, axis=None, keepdims=False: np.full(x.shape, g, x.dtype)
        if whole and isinstance(g, nt.Number) and isinstance(x, nt.Number):
            return lambda g, x, axis=None, keepdims=False: g
        return None

    @overload(add_trees)
    def _add_trees(a, b):
        if isinstance(a, nt.Number) and isinstance(b, nt.Number):
            def numbers(a, b):
                if a == 0.0:
                    return b
                if b == 0.0:
                    return a
                return a + b
            return numbers
        return None
NOT_FOR_NUMBA = frozenset({"batch-outer-products", "free-after-last-use", "split-ties"})


class JitFallbackWarning(UserWarning):
    """A generated function runs as NumPy code, not numba-compiled code (the message says
    why); given once per function."""


def check_backend(backend) -> str:
    """`backend` if it is one sgcompiler has, else a ValueError that lists them."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(map(repr, BACKENDS))}, "
                         f"not {backend!r}")
    return backend


def for_numba(tree, refers_to=lambda name: None, facts=None, ints=frozenset(),
              numpy_name=None):
    """Rewrite the final tree in place into what numba compiles: no `del` statements,
    ufunc outputs passed by position, a tape per saved name, an array for a counted
    loop's tape of numbers (backend/numba_tapes.py; `refers_to(name)`: what a free name
    of the code refers to; `facts`: name -> (shape, dtype) of the primal's values;
    `ints`: names that only hold ints; `numpy_name()`: a name for NumPy in the code,
    linked in: without it tapes stay lists). Returns it."""
    for block in _blocks(tree.body):
        if block:       # (an empty `else` stays empty; an emptied block holds a `pass`)
            block[:] = [stmt for stmt in block if not isinstance(stmt, gast.Delete)] \
                or [gast.Pass()]
    for node in gast.walk(tree):
        if isinstance(node, gast.Call) and [k.arg for k in node.keywords] == ["out"]:
            node.args.append(node.keywords[0].value)
            node.keywords = []
    _outer_products(tree, refers_to)
    split_tapes(tree, refers_to, facts, ints, numpy_name)
    save_factors(tree, refers_to)
    return tree


def _outer_products(tree, refers_to):
    """`np.outer(a, b)` spelled as NumPy defines it, `np.multiply(np.ravel(a)[:, None],
    np.ravel(b))` (the same numbers): numba's np.outer took 10 s to compile, half of the
    RNN's gradient's 40."""
    for node in gast.walk(tree):
        # (the attribute first: looking up the receiver of every method call, the
        # code's own `_tape` in `_tape.append`, recorded it as a global the code
        # depends on, two more tests on every call)
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
                node.func.attr == "outer" and _numpy_function(node.func, refers_to) and \
                len(node.args) == 2 and not node.keywords:
            a, b = (gast.Call(func=gast.Attribute(value=copy.deepcopy(node.func.value),
                                                  attr="ravel", ctx=gast.Load()),
                              args=[arg], keywords=[]) for arg in node.args)
            column = gast.Subscript(value=a, slice=gast.Tuple(elts=[
                gast.Slice(lower=None, upper=None, step=None),
                gast.Constant(value=None, kind=None)], ctx=gast.Load()), ctx=gast.Load())
            node.func = gast.Attribute(value=copy.deepcopy(node.func.value),
                                       attr="multiply", ctx=gast.Load())
            node.args = [column, b]


def _numpy_function(func, refers_to):
    """'outer' for `np.outer` where `np` is NumPy, else None."""
    if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and \
            refers_to(func.value.id) is np:
        return func.attr
    return None


def _blocks(body):
    yield body
    for stmt in body:
        for field in ("body", "orelse"):
            if isinstance(getattr(stmt, field, None), list) and \
                    not isinstance(stmt, gast.FunctionDef):
                yield from _blocks(getattr(stmt, field))


def jitted(function, title: str):
    """`function` (generated code) compiled by numba on its first call for each kind of
    arguments, or `function` itself, after one warning, where numba cannot compile it."""
    if numba is None:
        return _Fallback(function, title, "numba is not installed (pip install "
                                          "'sgcompiler[jit]' installs it)")
    return _Jitted(function, title)


class _Fallback:
    """The NumPy code, with the warning given on its first call."""

    def __init__(self, function, title, why):
        self.function, self.title, self.why = function, title, why
        self.__name__ = function.__name__
        self.warned = False

    def __call__(self, *args, **kwargs):
        if not self.warned:
            self.warned = True
            _warn(self.title, self.why)
        return self.function(*args, **kwargs)


# the numba type of a Python number of these types (an int too large for it: OverflowError)
_NUMBA_TYPES = {float: "float64", int: "int64"}


class _Jitted:
    """numba's dispatcher for `function`, until it fails to compile for some arguments;
    then the NumPy code for good. The generated functions it calls that are compiled by
    numba too (the pieces of the helpers it calls: `_Jitted` in its cells) it calls as
    numba code, through their dispatchers; the NumPy code calls them as they are, so
    each falls back on its own."""

    def __init__(self, function, title):
        self.function, self.title = function, title
        self.__name__ = function.__name__
        self._dispatcher = None     # made on the first call (the cells are filled then)
        self.fallen_back = False
        self.warned = False         # (that NumPy code passed it what numba cannot take)
        # () -> whether what numba took as constants when it made the dispatcher still
        # holds (see _frozen)
        self.current = lambda: True

    @property
    def dispatcher(self):
        if self._dispatcher is not None and not self.current():
            self._dispatcher = None     # a global or cell it read means something else
        if self._dispatcher is None:
            # error_model="numpy": x / 0.0 is inf (with NumPy's warning rules), as in the
            # NumPy code, not a ZeroDivisionError
            function = _calling_numba(self.function)
            self._dispatcher = numba.njit(error_model="numpy")(function)
            self.current = _checker(self._frozen())
        return self._dispatcher

    def _frozen(self):
        """What numba reads once, when it compiles, and keeps as constants in the code it
        makes (where the NumPy code reads it on every call): (holder, key, value) of the
        module globals the code names and of its cells (key None), and of the functions
        it calls."""
        function = self.function
        reads = [(function.__globals__, name, function.__globals__[name])
                 for name in function.__code__.co_names if name in function.__globals__]
        for cell in function.__closure__ or ():
            reads.append((cell, None, _contents(cell)))
            if isinstance(_contents(cell), _Jitted):
                reads.extend(cell.cell_contents._frozen())
        return reads

    def callees(self):
        """The `_Jitted` functions this one's code calls (by name)."""
        names = self.function.__code__.co_freevars
        return {name: cell.cell_contents for name, cell in
                zip(names, self.function.__closure__ or ())
                if isinstance(_contents(cell), _Jitted)}

    def entry_for(self, kinds):
        """numba's compiled entry for arguments of exactly the Python types `kinds` (float
        and int only), which skips the dispatcher's typing of each argument, or None
        where there is none (not compiled for them, or fallen back)."""
        if self.fallen_back or self._dispatcher is None or not self.current() or \
                not all(k in _NUMBA_TYPES for k in kinds):
            return None
        compiled = self._dispatcher.overloads.get(
            tuple(getattr(numba.types, _NUMBA_TYPES[k]) for k in kinds))
        return None if compiled is None else compiled.entry_point

    def __call__(self, *args, **kwargs):
        if self.fallen_back:
            return self.function(*args, **kwargs)
        try:
            return self.dispatcher(*args, **kwargs)     # (made again when not current)
        except NumbaError as exc:       # compiling failed; nothing of the call ran
            # (numba code cannot call NumPy code: a callee that numba cannot compile
            # leaves its callers to NumPy too)
            named = [name for name in self.callees()
                     if re.search(rf"<function (\S*\.)?{name} at ", str(exc))]
            why = (f"numba cannot compile {named[0]}, which it calls" if named else
                   f"numba cannot compile it: {_reason(exc)}")
            return self._fall_back(why, args, kwargs)
        except TypeError as exc:
            # numba cannot take an argument (nothing of the call ran): what numba code
            # returned to NumPy code that calls it, a list of the values a helper saved
            # that starts with None, say, which it gives back. This call runs as NumPy
            # code; numba code still calls it as numba code
            if not self.warned:
                self.warned = True
                _warn(self.title, f"numba cannot take the arguments NumPy code passes it "
                                  f"({_reason(exc)}), so it runs as NumPy code when NumPy "
                                  f"code calls it")
            return self.function(*args, **kwargs)
        except Exception as exc:
            # numba's own error while compiling (an IndexError in its lowering of
            # np.zeros_like of a float, say), not one of the compiled code's: nothing
            # of the call ran
            if not _while_compiling(exc):
                raise
            return self._fall_back(f"numba failed to compile it ({type(exc).__name__}: "
                                   f"{_reason(exc)})", args, kwargs)

    def _fall_back(self, why, args, kwargs):
        self.fallen_back = True
        if not self.warned:
            self.warned = True
            _warn(self.title, why)
        return self.function(*args, **kwargs)


def _while_compiling(exc) -> bool:
    """Whether `exc` came out of numba's compilation for a call (its traceback passes
    through the dispatcher's `_compile_for_args`), not out of the compiled code, which
    the dispatcher calls after compiling."""
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_name == "_compile_for_args" and "numba" in code.co_filename:
            return True
        tb = tb.tb_next
    return False


def _checker(reads):
    """A function of no arguments that tells, fast, whether each (holder, key, value) of
    `reads` still holds: the same object (`is`) under that name, or in that cell. Its
    `parts(prefix)` gives the test as an expression and the objects it names (with
    `prefix`), to inline: it raises ValueError (an empty cell) where the function returns
    False."""
    body, env = _check_text(reads, "")
    params = ", ".join(f"{name}={name}" for name in env)
    text = (f"def current({params}):\n    try:\n        return {body}\n"
            f"    except ValueError:\n        return False\n")
    exec(compile(text, "<sgcompiler numba check>", "exec"), env)
    current = env["current"]
    current.parts = lambda prefix: _check_text(reads, prefix)
    return current


def _check_text(reads, prefix):
    tests, env = [], {f"{prefix}M": object()}
    for i, (holder, key, value) in enumerate(reads):
        env[f"{prefix}h{i}"], env[f"{prefix}v{i}"] = holder, value
        tests.append(f"{prefix}h{i}.cell_contents is {prefix}v{i}" if key is None else
                     f"{prefix}h{i}.get({key!r}, {prefix}M) is {prefix}v{i}")
    return " and ".join(tests) or "True", env


def _contents(cell):
    try:
        return cell.cell_contents
    except ValueError:          # (an empty cell)
        return None


def _calling_numba(function):
    """`function` with each `_Jitted` its cells hold replaced by that one's dispatcher
    (numba calls numba's dispatchers, not Python objects)."""
    cells = tuple(types.CellType(c.cell_contents.dispatcher)
                  if isinstance(_contents(c), _Jitted) else c
                  for c in function.__closure__ or ())
    made = types.FunctionType(function.__code__, function.__globals__, function.__name__,
                              function.__defaults__, cells)
    made.__kwdefaults__ = function.__kwdefaults__
    return made


def _reason(exc) -> str:
    """The first informative line of numba's message, without its terminal colours."""
    text = str(exc)
    for code in ("\x1b[0m", "\x1b[1m"):
        text = text.replace(code, "")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    useful = [line for line in lines if not line.startswith(("Failed in ", "During:"))]
    if len(useful) > 1 and useful[0].endswith("found for signature:"):
        useful[0] = f"{useful[0]} {useful[1]}"     # (the signature is the next line)
    return (useful or lines or [type(exc).__name__])[0][:300]


def _warn(title, why):
    warnings.warn(f"{title}: runs as NumPy code, not compiled by numba: {why}",
                  JitFallbackWarning, stacklevel=4)


if numba is not None:
    _numbers_alone()
