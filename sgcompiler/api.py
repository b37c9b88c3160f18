"""The decorators users call: `grad` and `value_and_grad` (vjp is in reverse_api.py,
jvp, jacobian, hessian and hvp in derivatives.py).

They choose what to differentiate with respect to, compile on first use (cached), check the
arguments and the scalar output, and give gradients the type and shape of their arguments.
"""
from __future__ import annotations

import functools
import inspect
import os
import sys
import warnings

import numpy as np

from . import rules
from .backend.located import located
from .arguments import (_SCALAR_TYPES, _TREES, _all_leaves, _check_scalar, _check_tree,
                        _complex_kinds, _decided_by_kind, _like_tree, _plain_float,
                        _refuse_subclasses, _tree_arrays, _tree_kind, _unaliased, wrt_names)
from .backend.jit import check_backend
from .frontend.forms.checkpoint import check_policy
from .data_kinds import all_leaves, check_sparse, has_foreign, is_sparse
from .errors import RuntimeRefusal, SGCompilerError
from .explain import ZeroGradientWarning, explain, zero_gradients
from .fast_calls import MISS, numpy_fast_call
from .frontend.depends import recording
from .collected import CollectedGradient
from .frontend.forms.objects import as_function, with_default_functions
from .frontend.forms.varargs import collects_arguments
from .frontend.source import function_name
from .records import is_record, is_record_type
from .pipeline.compiled import CallKind
from .pipeline import PYTHON_NUMBER, compile_gradient
from .reverse_api import with_aux
from .runtime.namespace import failing_clearly, namespace_of


def grad(fn=None, wrt=0, has_aux=False, warn_zero=None, backend="numpy", checkpoint=None):
    """The gradient of a scalar function `fn`, as a function with the same parameters.

    Usable as `@grad`, `grad(f, wrt="w")` or `@grad(wrt=(0, "w"))`. `fn` may itself be a
    gradient (`grad(grad(f))`: its generated code is compiled again), and may call
    `grad(g)(...)` inside itself.

    Args:
        fn: a Python function that returns a scalar.
        wrt: a parameter position or name, or a tuple of them (then the gradient is a tuple).
        has_aux: `fn` returns `(loss, aux)`; the gradient is of `loss`, and the function
            returns `(gradient, aux)`.
        warn_zero: warn (ZeroGradientWarning, once) when a gradient it returns is
            structurally zero, with the reason; None: when SGCOMPILER_WARN_ZERO=1 is set.
        backend: "numpy" (the generated code as it reads), or "numba": the same code
            compiled by numba (the `jit` extra), for loops over scalars and small arrays;
            where numba cannot compile it, the NumPy code runs and a JitFallbackWarning
            says why, once.
        checkpoint: None, or "sqrt": the outermost `for` loops run in segments of about
            sqrt(n) trips (`while` loops in segments of 1, 2, 3, ... trips); only each
            segment's first state is kept, and the adjoint sweep runs the segment again
            to tape its trips (memory about sqrt(n) trips' worth, for about one more
            forward run); or an int, the trips per segment.
    Returns:
        A `GradientFunction`; `.source` is the generated code, `.primal` the original,
        `.explain()` why the gradient is what it is.
    Raises:
        SGCompilerError: (when first called or when `.source` is read) for code that
            cannot be differentiated.
    """
    if fn is None:
        return functools.partial(grad, wrt=wrt, has_aux=has_aux, warn_zero=warn_zero,
                                 backend=backend, checkpoint=checkpoint)
    make = functools.partial(_gradient_function, with_value=False, has_aux=has_aux,
                             warn_zero=warn_zero, backend=backend, checkpoint=checkpoint)
    return CollectedGradient(fn, wrt, make) if collects_arguments(fn) else make(fn, wrt)


grad.sgcompiler_transform_maker = True      # grad(g)(x) inside a differentiated function


def value_and_grad(fn=None, wrt=0, has_aux=False, warn_zero=None, backend="numpy",
                   checkpoint=None):
    """Like `grad`, but the function returns `(value, gradient)`; the primal runs once.
    With `has_aux=True`, `fn` returns `(loss, aux)` and this `((loss, aux), gradient)`."""
    if fn is None:
        return functools.partial(value_and_grad, wrt=wrt, has_aux=has_aux,
                                 warn_zero=warn_zero, backend=backend,
                                 checkpoint=checkpoint)
    make = functools.partial(_gradient_function, with_value=True, has_aux=has_aux,
                             warn_zero=warn_zero, backend=backend, checkpoint=checkpoint)
    return CollectedGradient(fn, wrt, make) if collects_arguments(fn) else make(fn, wrt)


value_and_grad.sgcompiler_transform_maker = True


_MISS = MISS            # a fast path's answer where the call takes the full path


def _fast_call(found, kinds, entry, values, single, with_value, version):
    """For code numba compiled, called with Python floats and ints alone (`kinds`, their
    types) and differentiated for floats: args -> what the full path returns, calling
    numba's compiled entry for those types straight (the dispatcher's typing of each
    argument and the full path's checks cost several times a short loop's gradient), or
    _MISS where the full path must run (other types, a rule registered, a name the code
    read that means something else now, a result not all floats, an error). None where
    there is no such entry (`entry`: numba's, for `kinds`). The checks of the rules'
    version, of the names the code was compiled from (found[3]) and of what numba took
    as constants (found[0].current) are written into it, not called (three calls were a
    third of its 1 us)."""
    if entry is None or not all(type(v) is float for v in values):
        return None
    n = len(values)
    params = [f"a{i}" for i in range(len(kinds))]
    counts, mode = rules.version_parts()
    env = {"counts": counts, "mode": mode.get, "v0": version[0], "v1": version[1],
           "entry": entry, "MISS": _MISS, "number": _number}
    tests = []
    for test, prefix in ((found[3], "c_"), (found[0].current, "n_")):
        parts = getattr(test, "parts", None)
        if parts is None:
            env[f"{prefix}test"] = test
            tests.append(f"{prefix}test()")
        else:
            body, objects = parts(prefix)
            env.update(objects)
            tests.append(f"({body})")
    types_ = " or ".join(f"type({a}) is not {k.__name__}" for a, k in zip(params, kinds))
    text = (f"def fast(args):\n    try:\n        {', '.join(params)}, = args\n"
            f"    except ValueError:\n        return MISS\n"
            f"    if {types_ or 'False'} or counts[0] != v0 or mode() != v1:\n"
            f"        return MISS\n"
            f"    try:\n        if not ({' and '.join(tests)}):\n            return MISS\n"
            f"    except (ValueError, KeyError, AttributeError):\n        return MISS\n"
            f"    try:\n        out = entry(*args)\n    except Exception:\n"
            f"        return MISS\n")
    if found[1]:        # (result, gradients)
        text += ("    if type(out) is not tuple or len(out) != 2:\n        return MISS\n"
                 "    result, g = out\n    if type(result) is not float:\n"
                 "        return MISS\n")
    else:
        text += "    g = out\n"
    # each gradient a float, as _like_tree makes it of a 0-d float64 array (np.copy's)
    if single or n == 1:
        text += ("    if type(g) is not float:\n        g = number(g)\n"
                 "        if g is MISS:\n            return MISS\n")
    else:
        # (unrolled: a list comprehension and `MISS in g` cost 0.2 us of a 1 us path;
        # numba's tuple of floats is returned as it is)
        names = [f"g{i}" for i in range(n)]
        text += (f"    if type(g) is not tuple or len(g) != {n}:\n        return MISS\n"
                 f"    {', '.join(names)} = g\n"
                 f"    if {' or '.join(f'type({v}) is not float' for v in names)}:\n" +
                 "".join(f"        {v} = {v} if type({v}) is float else number({v})\n"
                         f"        if {v} is MISS:\n            return MISS\n"
                         for v in names) +
                 f"        g = ({', '.join(names)},)\n")
    grads = "(g,)" if n == 1 and not single else "g"
    text += f"    return {'(result, ' + grads + ')' if with_value else grads}\n"
    exec(compile(text, "<sgcompiler fast path>", "exec"), env)
    return env["fast"]


def _number(g):
    """The float a float64 number or 0-d array `g` holds (as _like_tree gives it for a
    float argument), else _MISS."""
    if (type(g) is np.ndarray and g.ndim == 0 or type(g) is np.float64) and \
            g.dtype == np.float64:
        return float(g)
    return _MISS


def _gradient_function(fn, wrt, **options):
    return GradientFunction(fn, wrt, **options)


class GradientFunction:
    """A compiled gradient of `primal`. Call it like `primal`."""

    sgcompiler_transform = True     # resolve differentiates calls of it (as_function)

    def __init__(self, fn, wrt, with_value: bool, has_aux: bool = False, warn_zero=None,
                 backend: str = "numpy", checkpoint=None):
        self.backend = check_backend(backend)
        self.checkpoint = check_policy(checkpoint)
        self._inner = fn if isinstance(fn, GradientFunction) else None
        if self.checkpoint is not None and (has_aux or self._inner is not None or
                                            self.backend != "numpy"):
            raise SGCompilerError(f"{getattr(fn, '__name__', fn)}: checkpoint= is not "
                                  "supported yet with has_aux=True, backend='numba' or for "
                                  "a gradient of a gradient; compile without checkpoint=")
        if self._inner is not None:     # grad of grad: the inner gradient's own code
            fn = self._inner.as_function()
        # a bound method, a callable object, a functools.partial: a function made from it
        fn = as_function(fn) or fn
        if inspect.isfunction(fn):      # act=np.tanh: calls of act are calls of np.tanh
            fn = with_default_functions(fn)
        if not inspect.isfunction(fn):
            raise SGCompilerError(f"sgcompiler differentiates Python functions; got "
                                  f"{type(fn).__name__} {fn!r}")
        self.primal = fn
        self.with_value = with_value
        self.has_aux = has_aux
        self._aux_source = None     # the generated pair of a has_aux call
        self._wrt_given = wrt
        self._signature = inspect.signature(fn)
        self._params = list(self._signature.parameters)
        self._tuple = isinstance(wrt, (tuple, list))
        self.wrt = wrt_names(fn, wrt if self._tuple else (wrt,))
        self._positions = tuple(self._params.index(w) for w in self.wrt)
        self._single = not self._tuple and len(self.wrt) == 1
        self._last_position = max(self._positions)
        self._compiled = {}      # argument types -> (function, returns value, plain, check)
        # argument types of `_compiled` whose parameter trees passed _check_tree, where the
        # types (dicts, lists and tuples of NumPy arrays and floats) decide that it passes
        self._trees_checked = set()
        # backend="numba", Python numbers alone: the last call's kinds' fast path, and by
        # kinds the (numba entry, fast path) made so far (None where none); see _fast_call
        self._fast, self._fasts = None, {}
        self._plain = {}     # (scalars, trees, rules' version) -> as_function's function
        self._version = rules.version()     # of the rules the functions were compiled with
        self._last = CallKind()      # what the code of the last call was compiled for
        self._shaped = 0         # how many sets of argument shapes have code of their own
        self._warn_given = warn_zero
        if warn_zero is None:
            warn_zero = os.environ.get("SGCOMPILER_WARN_ZERO", "") not in ("", "0")
        self._warn_zero = bool(warn_zero)     # until it has warned
        functools.update_wrapper(self, fn)
        self.__name__ = f"{function_name(fn)}_grad"

    @property
    def source(self) -> str:
        """The generated gradient code: for the arguments of the last call, or, before any
        call, for arguments that are arrays."""
        if self._aux_source is not None:
            return self._aux_source
        return self._last_compiled().source

    def _last_compiled(self):
        """The `Compiled` of the last call's code (what `.source` shows; the line profiler,
        benchmarks/profile_lines.py, times it)."""
        last = self._last
        return compile_gradient(self._primal_for(last.scalars, last.trees), self.wrt,
                                last.scalars, last.trees, self.with_value,
                                last.arrays, rereadable=last.lazy,
                                namespace=last.namespace, backend=self.backend,
                                checkpoint=self.checkpoint)

    def explain(self, format: str = "text"):
        """Why the gradient is what it is: what each stop_gradient cut, which arguments
        get a structurally zero gradient and why, likely mistakes, the tape per loop
        iteration; for the arguments of the last call (before any call: arrays).

        Args:
            format: "text" (what `sgcompiler explain` prints) or "data" (an
                `explain.Explanation` of plain dataclasses; `.as_dict()`).
        Raises:
            SGCompilerError: for code that cannot be differentiated.
        """
        if format not in ("text", "data"):
            raise ValueError(f"format must be 'text' or 'data', not {format!r}")
        last = self._last
        found = explain(self._primal_for(last.scalars, last.trees), self.wrt, last.scalars,
                        last.arrays, last.trees)
        return found.text if format == "text" else found

    def _warn_if_zero(self, primal, scalars, arrays):
        """Warn once for each wrt argument whose gradient is structurally zero."""
        self._warn_zero = False
        for zero in zero_gradients(primal, self.wrt, scalars, arrays):
            warnings.warn(f"{self.primal.__name__}: the gradient with respect to "
                          f"'{zero.param}' is structurally zero: {zero.message} (see "
                          f"grad({self.primal.__name__}).explain())", ZeroGradientWarning,
                          stacklevel=4)

    def as_function(self, scalars: frozenset = frozenset(), trees: frozenset = frozenset()):
        """The generated gradient as a plain Python function, for any shape, whose code
        the compiler reads again (grad of grad; this gradient called inside a function
        that is differentiated). `scalars` and `trees` name the parameters that are
        Python numbers and parameter trees.

        Raises:
            SGCompilerError: for code that cannot be differentiated.
        """
        if self.has_aux:
            raise SGCompilerError(f"{self.primal.__name__}: a gradient made with "
                                  "has_aux=True cannot be differentiated again or called "
                                  "inside a differentiated function yet; use it without "
                                  "has_aux there")
        if self.checkpoint is not None:
            raise SGCompilerError(f"{self.primal.__name__}: a gradient made with "
                                  "checkpoint= cannot be differentiated again or called "
                                  "inside a differentiated function yet; use one without "
                                  "checkpoint= there")
        primal = self._primal_for(scalars, trees)
        compiled = compile_gradient(primal, self.wrt, scalars, trees, self.with_value,
                                    rereadable=True)
        function = compiled.bind(primal)
        function.__qualname__ = f"{primal.__qualname__}_grad"
        # called inside a differentiated function, its caller may pass a parameter tree
        # where this code expects an array: pipeline.piece asks for the code for trees
        function.sgcompiler_for_trees = functools.partial(self._as_function_for, scalars)
        # (extra) -> a check that this code is still right (hessian keeps its tangent code)
        function.sgcompiler_checker = functools.partial(compiled.checker, primal)
        return function

    def _as_function_for(self, scalars, trees):
        """as_function(scalars, trees), the same function for the same kinds (the primal and
        adjoint sweeps of one call site must find the same piece of it)."""
        key = (scalars, frozenset(trees), rules.version())
        found = self._plain.get(key)
        if found is None:
            found = self._plain[key] = self.as_function(scalars, key[1])
        return found

    def _primal_for(self, scalars, trees):
        """The function this differentiates, for arguments of these kinds (the inner
        gradient's code for them, in grad of grad)."""
        if self._inner is None:
            return self.primal
        return self._inner.as_function(scalars, trees)

    def __reduce__(self):
        """Pickled by reference to the primal and the options; the other process compiles
        its own code (generated functions and their cells cannot be pickled)."""
        if self._inner is not None:     # grad of grad: the inner gradient, pickled too
            return _rebuild, (self._inner, self._wrt_given, self.with_value,
                              self._warn_given, self.has_aux, self.backend, self.checkpoint)
        module = sys.modules.get(self.primal.__module__)
        found = module
        for part in self.primal.__qualname__.split("."):
            found = getattr(found, part, None)
        if found is self:       # `@grad def f`: the module's name f is this object
            return self.primal.__qualname__
        return _rebuild, (self.primal, self._wrt_given, self.with_value, self._warn_given,
                          self.has_aux, self.backend, self.checkpoint)

    def __repr__(self):
        return f"<gradient of {function_name(self.primal)} with respect to {', '.join(self.wrt)}>"

    def __call__(self, *args, **kwargs):
        fast = self._fast
        if fast is not None and not kwargs:
            out = fast(args)
            if out is not _MISS:
                return out
        if self.has_aux:
            return self._call_with_aux(args, kwargs)
        if self._version != rules.version():    # a rule was registered: compile again
            self._compiled.clear()
            self._version = rules.version()
        kinds = tuple([(a.shape, a.dtype) if type(a) is np.ndarray else
                       _tree_kind(a) if type(a) in _TREES else type(a) for a in args])
        # floats and float arrays of the types, shapes and dtypes of an earlier call passed
        # its checks (parameter trees are checked on every call: their leaves may differ)
        found = None if kwargs else self._compiled.get(kinds)
        if found is not None and not found[3]():
            # a name the code was compiled from refers to something else now (a helper
            # redefined, np.exp patched, a closure's function rebound): compile again
            self._compiled.clear()
            found = None
        values = self._wrt_values(args, kwargs)
        if kwargs:
            _refuse_subclasses(self.primal.__name__, kwargs.items())
        if found is not None and not found[2] and kinds in self._trees_checked:
            pass    # parameter trees whose kinds (the key) decide their checks: passed
        elif found is None or not found[2]:
            plain, decided = True, not kwargs
            for name, value in zip(self.wrt, values):
                if not _plain_float(value):
                    _check_tree(self.primal.__name__, name, value, foreign=self._inner is None)
                    plain = False
                    decided = decided and _decided_by_kind(value)
            found = found or self._valid(self._compiled.get(kinds))
            if found is None:
                found = self._specialise(args, kinds, plain, has_foreign((args, kwargs)),
                                         self._sparse_params(args, kwargs), kwargs)
                if not found[1] and self._has_trees(args) and \
                        not hasattr(found[0], "__wrapped__"):   # (xp code: see below)
                    self._primal_runs(kinds, args, kwargs)
            if not plain and decided and self._compiled.get(kinds) is found:
                self._trees_checked.add(kinds)
        primal = None
        try:
            out = self._run(found, values, args, kwargs)
        except Exception as exc:
            if hasattr(found[0], "__wrapped__"):
                # arrays of another library: the primal (NumPy's functions on them) says
                # nothing about the generated code, which computes with their namespace
                raise
            primal = self._primal_error(exc, args, kwargs)
            if primal is None and isinstance(exc, RuntimeRefusal):
                raise located(exc) from None    # with the line whose gradient refused
            if primal is None:
                raise
        if primal is not None:
            raise primal from None
        if self.backend == "numba" and not kwargs:
            entry = getattr(found[0], "entry_for", lambda kinds: None)(kinds)
            if self._fasts.get(kinds, (_MISS,))[0] is not entry:
                self._fasts[kinds] = entry, _fast_call(found, kinds, entry, values,
                                                       self._single, self.with_value,
                                                       self._version)
            self._fast = self._fasts[kinds][1]
        elif self.backend == "numpy" and not kwargs:
            self._fast = self._numpy_fast(found, kinds, values, len(args))
        return out

    def _numpy_fast(self, found, kinds, values, n):
        """The fast path of NumPy code for arguments of `kinds` (fast_calls.py), made once
        per entry; None where the full path's checks of these arguments are made on
        every call (trees whose kind does not decide them) or it has none."""
        if hasattr(found[0], "__wrapped__") or self._compiled.get(kinds) is not found or \
                n <= self._last_position or not (found[2] or kinds in self._trees_checked):
            return None
        made = self._fasts.get(kinds)
        if made is None or made[0] is not found:
            made = self._fasts[kinds] = found, numpy_fast_call(
                found, kinds, self._positions, self._single, self.with_value,
                (rules.version, self._version), self.primal.__name__,
                not found[2] and self._has_trees(values))
        return made[1]

    def _run(self, found, values, args, kwargs):
        function, returns_value, plain, _ = found
        if returns_value:
            result, grads = function(*args, **kwargs)
            if type(result) not in _SCALAR_TYPES and not (type(result) is np.ndarray
                                                          and result.size == 1
                                                          and result.dtype.kind != "c"):
                _check_scalar(self.primal.__name__, result)
        else:           # the result is a scalar by construction and is not wanted
            grads = function(*args, **kwargs)
        if self._single:
            grads = _like_tree(grads, values[0])
        else:
            several = grads if len(self.wrt) > 1 else (grads,)
            grads = tuple(_like_tree(g, v) for g, v in zip(several, values))
        if not plain and self._has_trees(values):
            grads = _unaliased(grads, args, kwargs)
        return (result, grads) if self.with_value else grads

    def _call_with_aux(self, args, kwargs):
        """`fn` returns (loss, aux): its generated forward and backward pair
        (reverse_api.with_aux)."""
        values = self._wrt_values(args, kwargs)
        for name, value in zip(self.wrt, values):
            _check_tree(self.primal.__name__, name, value)
        types_ = {p: type(a) for p, a in zip(self._params, args)}
        primal = self._primal_for(
            frozenset(p for p, t in types_.items() if t in (float, int)),
            frozenset(p for p, t in types_.items() if issubclass(t, (dict, list, tuple))))
        (loss, aux), grads, self._aux_source = with_aux(primal, self.wrt, args, kwargs)
        _check_scalar(self.primal.__name__, loss)
        if self._single:
            grads = _like_tree(grads[0], values[0])
        else:
            grads = tuple(_like_tree(g, v) for g, v in zip(grads, values))
        return ((loss, aux), grads) if self.with_value else (grads, aux)

    def _primal_runs(self, kinds, args, kwargs):
        """Run the primal once for arguments of a new kind with parameter trees, when the
        gradient does not compute the value: a tree used as an array may raise in the
        primal (`[1.0, 2.0] * 2.0`) where the gradient, which needs only other values,
        would not; the user must see that error, not a gradient."""
        try:
            self.primal(*args, **kwargs)
        except Exception:
            del self._compiled[kinds]
            raise

    def _primal_error(self, exc, args, kwargs):
        """When the gradient failed: the primal's own error for these arguments, if it
        fails differently (the gradient may not compute the value, or fail later in the
        same mistake: `{"a": 1.0} + 2.0`), or the non-scalar error when the primal returns
        no scalar. None when the primal runs and returns a scalar, or fails the same way
        (then the generated line, which tracebacks show, is the better place)."""
        try:
            result = self.primal(*args, **kwargs)
        except Exception as primal:
            if type(primal) is type(exc) and str(primal) == str(exc):
                return None
            return primal
        try:        # a result that is not a scalar: the gradient's seed did not fit it
            _check_scalar(self.primal.__name__, result)
        except TypeError as not_scalar:
            return not_scalar
        return None

    def _specialise(self, args, kinds, plain, lazy=False, sparse=frozenset(), kwargs=None):
        """Compile for arguments like these: Python numbers are known scalars, dicts, lists
        and tuples are parameter trees, and arrays have the shapes and dtypes they have
        (up to MAX_SHAPES different sets of shapes; then code for any shape). With `lazy`
        (an argument is a dask array, say): code for any shape that writes into no array
        (no `out=` buffer, no `+=`), which another library may not support or would
        compute eagerly; the code made to be read again is just that. `sparse` names
        the parameters that are scipy.sparse data, which the function may use only in
        matrix products (analysis/sparse.py)."""
        _refuse_subclasses(self.primal.__name__, zip(self._params, args))
        types_ = [type(a) for a in args]
        scalars = frozenset(p for p, t in zip(self._params, types_) if t in (float, int))
        trees = frozenset(p for p, t in zip(self._params, types_)
                          if issubclass(t, (dict, list, tuple)) or is_record_type(t))
        arrays = ()
        xp = namespace_of(_all_leaves(args + tuple((kwargs or {}).values())))
        lazy = lazy and xp is None      # (arrays of an array-API library: xp code below)
        if xp is None and self._shaped < MAX_SHAPES and not lazy:
            # arrays, and the arrays in parameter trees: ((param, key, ...), shape, dtype)
            arrays = tuple((p, np.shape(a), np.result_type(a)) for p, a in zip(self._params, args)
                           if type(a) is np.ndarray or isinstance(a, np.floating))
            arrays += tuple(((p,) + path, a.shape, a.dtype) if type(a) is np.ndarray
                            else ((p,) + path, (), PYTHON_NUMBER)
                            for p, tree in zip(self._params, args) if type(tree) in _TREES
                            for path, a in _tree_arrays(tree, numbers=True)
                            if type(a) is not np.ndarray or a.ndim)
            self._shaped += bool(arrays)
        if xp is None:      # (xp code is for any shape: no out= buffers)
            arrays += _complex_kinds(self._params, args, arrays)
        with recording() as seen:       # grad of grad: what the inner gradient's code read
            primal = self._primal_for(scalars, trees)
        inner = tuple(seen.values())
        if sparse:
            check_sparse(primal, sparse)
        # arrays of another library: code for any shape, NumPy reached through xp
        compiled = compile_gradient(primal, self.wrt, scalars, trees, self.with_value, arrays,
                                    rereadable=lazy, namespace=xp is not None,
                                    backend=self.backend, checkpoint=self.checkpoint)
        self._last = CallKind(scalars, trees, arrays, lazy=lazy, namespace=xp is not None)
        if self._warn_zero:
            self._warn_if_zero(primal, scalars, arrays)
        function = compiled.bind(primal, xp)
        if xp is not None:
            function = failing_clearly(function, xp, self.primal.__name__)
        self._compiled[kinds] = (function, compiled.returns_value, plain,
                                 compiled.checker(primal, inner))
        return self._compiled[kinds]

    def _valid(self, found):
        """`found` (an entry of `_compiled`) if its code is still right, else None."""
        if found is not None and not found[3]():
            self._compiled.clear()
            return None
        return found

    def _sparse_params(self, args, kwargs) -> frozenset:
        """The parameters passed scipy.sparse data; sparse data inside a parameter tree is
        refused (a wrt argument that is sparse, by _check_argument)."""
        if not any(is_sparse(a) or type(a) in _TREES for a in (*args, *kwargs.values())):
            return frozenset()
        bound = self._signature.bind_partial(*args, **kwargs).arguments
        found = set()
        for name, value in bound.items():
            if is_sparse(value):
                found.add(name)
            elif type(value) in _TREES and any(is_sparse(v) for v in all_leaves(value)):
                raise TypeError(f"{self.primal.__name__}: argument '{name}' holds "
                                "scipy.sparse data inside a dict, list or tuple; pass it as "
                                "an argument of its own (used in matrix products: X @ w)")
        return frozenset(found)

    @staticmethod
    def _has_trees(values):
        return any(isinstance(v, (dict, list, tuple)) or is_record(v) for v in values)

    def _wrt_values(self, args, kwargs):
        if not kwargs and len(args) > self._last_position:
            return [args[p] for p in self._positions]
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{self.primal.__name__}(): {exc}") from None
        bound.apply_defaults()
        return [bound.arguments[w] for w in self.wrt]


def _rebuild(fn, wrt, with_value, warn_zero=None, has_aux=False, backend="numpy",
             checkpoint=None):
    """A GradientFunction again, from what `GradientFunction.__reduce__` kept."""
    return GradientFunction(fn, wrt, with_value, has_aux, warn_zero, backend, checkpoint)


MAX_SHAPES = 16     # sets of argument shapes a gradient gets specialised code for


