"""What the recipes (pipeline/__init__.py, pipeline/forward_mode.py) make, and the caches that keep it:
compiled gradients and tangents, the pieces (forward/backward pairs, tangent functions)
of the user functions they call, and how their headers and linecache entries are named.
"""
from __future__ import annotations

import dataclasses
import hashlib
import weakref
from dataclasses import dataclass

from ..backend.jit import jitted
from ..backend.loader import bind
from ..frontend.depends import Depends, function_reads
from ..frontend.source import function_name
from ..runtime.namespace import bound_extra, check_uses


@dataclass(frozen=True)
class CallKind:
    """What a call's arguments tell the compiler (see compile_gradient's arguments)."""

    scalars: frozenset = frozenset()    # parameters that are Python numbers
    trees: frozenset = frozenset()      # parameters that are dicts, lists or tuples
    arrays: tuple = ()                  # (parameter or tree path, shape, dtype)
    # an argument is an array of another library (dask): the code writes into no array
    # (no `out=`, no `+=`), for any shape, as code made to be read again does
    lazy: bool = False
    namespace: bool = False             # arrays of another library (runtime/namespace.py)


@dataclass(frozen=True)
class Compiled:
    """A compiled gradient: its text and code, ready to bind to a function's closure."""

    source: str
    code: object
    extra: dict           # names inlined rules use -> objects
    wrt: tuple[str, ...]
    returns_value: bool = True   # the function returns (value, gradient), else gradient
    result_shape: tuple | None = None   # the primal result's shape, when the compiler knows it
    depends: Depends = Depends(())   # what the names it was compiled from referred to
    # code made with `namespace=True`: the NumPy names it reaches through xp, with lines
    namespace_uses: tuple | None = None
    backend: str = "numpy"           # "numba": bind gives numba's compiled function
    # what `depends` holds weakly, held by the copy a caller gets (not the cache's): see
    # Depends.objects
    pinned: tuple = dataclasses.field(default=(), compare=False, repr=False)

    def bind(self, fn, xp=None):
        """The gradient function for `fn` (same code object, its own closure cells);
        code made with `namespace=True` is bound to the array namespace `xp`, code made
        for numba is numba's compiled function."""
        if self.namespace_uses is not None:
            check_uses(self.namespace_uses, xp, function_name(fn))
            return bind(self.code, fn, bound_extra(self.extra, xp))
        function = bind(self.code, fn, self.extra)
        if self.backend == "numba":
            return jitted(function, f"the gradient of {fn.__name__}")
        return function

    def checker(self, fn, extra=()):
        """() -> whether the function `bind(fn)` made is still right (see depends.py),
        and the reads `extra` (what `fn` itself was made from) still hold."""
        return self.depends.checker(fn, function_reads(fn) + tuple(extra))


_CACHE: dict = {}


_CACHE_SIZE = 1024      # compiled gradients kept (the oldest go first)


def _kept(cache: dict, key, compiled, seen: dict, fn):
    """`compiled`, made for `fn` with the reads `seen`, stored under `key` as the newest
    entry of `cache` (the oldest goes when the cache is full). The entry holds what it
    read weakly and goes when any of it is collected: its code is then no longer right,
    and it holds what its pieces are bound to (a method's instance, in their cells)."""
    compiled = dataclasses.replace(compiled, depends=Depends.of(seen, fn, _forget(cache, key)))
    cache.pop(key, None)
    if len(cache) >= _CACHE_SIZE:
        try:
            cache.pop(next(iter(cache)), None)
        except RuntimeError:    # (an entry forgotten meanwhile, by the collector)
            pass
    cache[key] = compiled
    return compiled


def _forget(cache: dict, key):
    """What a weak reference calls when its object is collected: the entry under `key`
    that holds it goes (the collector may call it at any point, hence no lock)."""
    def gone(ref):
        entry = cache.get(key)
        if entry is not None and entry.depends.holds(ref):
            cache.pop(key, None)
    return gone


@dataclass
class Piece:
    """The forward and backward functions of a user function called with active
    arguments; the cells are filled once compiled (a recursive call refers to them first)."""

    forward_name: str
    backward_name: str
    forward_cell: object
    backward_cell: object
    source: str = ""
    pieces: tuple = ()
    depends: Depends | None = None      # None while it is being compiled


# user function -> {(active, arrays, trees, ...): Piece}; a function that is gone has none
_PIECES = weakref.WeakKeyDictionary()


def _title(src) -> str:
    """How a header names the function: `Model.loss with self bound` for a method bound
    to its object (printed as Model_loss_grad(w)), else its name."""
    if src.qualname != src.name and "<" not in src.qualname and \
            src.qualname.replace(".", "_") == src.name:
        return f"{src.qualname} with self bound"
    return src.name


def _refers_to(src, linker):
    """name -> what it refers to in generated code: a name the compiler linked in, else
    what the user's function finds (None where it finds nothing)."""
    def refers_to(name):
        if name in linker.names:
            return linker.names[name]
        return src.lookup(name)[1]
    return refers_to


def _filename(src, kind, text=None) -> str:
    """The name generated code is registered under in linecache. Code made to be read
    again has its text's digest in it: inspect finds a function's source by that name,
    and the code for other shapes must not take its place."""
    if not text:
        return f"<sgcompiler {src.qualname}_{kind}>"
    return f"<sgcompiler {src.qualname}_{kind} {hashlib.sha1(text.encode()).hexdigest()[:8]}>"


def active_suffix(fn, active) -> str:
    """What a piece's name adds to its function's for the parameters it differentiates
    (`inner_for_a` where inner(a, b) is differentiated for a alone), so the pieces of one
    function called with different active parameters are told apart; nothing when all
    of them are, or for generated code (grad of grad: its names say enough)."""
    code = fn.__code__
    params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    if set(params) <= set(active) or code.co_filename.startswith("<sgcompiler"):
        return ""
    return "_for_" + "_".join(a for a in params if a in active) if active else "_for_none"


_PIECE_SHAPES = 8      # sets of argument shapes a user function gets pieces of its own for


def _path_text(path) -> str:
    """`x`, or `params['W1']` for an array of a parameter tree."""
    if isinstance(path, str):
        return path
    return path[0] + "".join(f"[{k!r}]" for k in path[1:])


def _pieces_of(linker):
    """Every piece the code calls, directly or through other pieces, each once."""
    seen, order, todo = set(), [], list(linker.pieces)
    while todo:
        p = todo.pop(0)
        if id(p) not in seen:
            seen.add(id(p))
            order.append(p)
            todo.extend(p.pieces)
    return order


@dataclass(frozen=True)
class CompiledJvp:
    """A compiled tangent function: f_jvp(<f's parameters>, <one tangent per wrt>)."""

    source: str
    code: object
    extra: dict
    wrt: tuple[str, ...]
    tangent_params: dict        # wrt parameter -> its tangent parameter's name
    own_source: str = ""        # this function's text alone (source adds its pieces')
    pieces: tuple = ()          # the tangent pieces it calls
    depends: Depends = Depends(())   # what the names it was compiled from referred to
    backend: str = "numpy"      # "numba": bind gives numba's compiled function
    # fn -> what bind gave for it, with backend="numba" (numba compiles once per function)
    jitted: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)
    pinned: tuple = dataclasses.field(default=(), compare=False, repr=False)   # as Compiled's

    def bind(self, fn):
        if self.backend == "numba" and self.jitted.get(id(fn), (None,))[0] is fn:
            return self.jitted[id(fn)][1]
        function = bind(self.code, fn, self.extra)
        if fn.__defaults__:     # the tangents come after the defaults: None for them too
            function.__defaults__ = fn.__defaults__ + (None,) * len(self.tangent_params)
        if self.backend == "numba":
            function = jitted(function, f"the tangent of {fn.__name__}")
            self.jitted[id(fn)] = (fn, function)
        return function


_JVP_CACHE: dict = {}


_NOT_BATCHED: set = set()       # keys of compile_jvp(batch=...) whose code cannot batch


@dataclass
class JvpPiece:
    """The tangent function of a user function called with active arguments (the cell is
    filled once compiled: a recursive call refers to it first)."""

    name: str
    cell: object
    tangent_params: dict
    source: str = ""
    pieces: tuple = ()
    depends: Depends | None = None      # None while it is being compiled


def _found_piece(mine, key, fn):
    """The piece of `fn` cached under `key` if it may serve: one being compiled (a
    recursive call, on this thread), or one whose names still mean what they meant."""
    found = mine.get(key)
    if found is not None and found.depends is None:
        return found
    if found is not None and found.depends.holds_for(fn):
        found.depends.replay(fn)
        return found
    return None


def for_trees(fn, trees):
    """`fn`, or, when it is a gradient's generated code (grad(g) called inside the function)
    made for arrays and the caller passes parameter trees, that code made for them."""
    remake = getattr(fn, "sgcompiler_for_trees", None)
    return fn if remake is None or not trees else remake(frozenset(trees))
