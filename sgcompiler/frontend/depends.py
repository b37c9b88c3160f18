"""What compiled code assumes about the names it was compiled against, checked cheaply.

Compiling reads what names refer to: `act` in a closure cell, `helper` and `np` in the
module's globals, `len` in builtins, `np.exp` as an attribute of a module, the code and
defaults of a user function. Code compiled for one meaning is wrong for another (the
derivative of sin after `act = np.exp`), so every such read is recorded while compiling
(`recording`), kept with what it produced (`Depends`), and checked by identity before it
is used again:

    with recording() as seen:            # FunctionSource.lookup and resolve call note()
        code = compile(...)
    depends = Depends.of(seen, fn)       # fn's own cells by position: reusable for
    depends.holds_for(other_fn)          #   another function with the same code
    check = depends.checker(fn)          # () -> bool, for every call (a few ns a name)

Compilation is serialised by one re-entrant lock (`LOCK`): a piece of code published in a
cache while it is being compiled is seen only by the thread compiling it.
"""
from __future__ import annotations

import builtins
import keyword
import threading
import types
import weakref

import gast

MISSING = object()          # "the name was not there": a later definition changes the code
CELL, ITEM, ATTR, OWN = "cell", "item", "attr", "own"
# a closure cell named by its function and position: a cell cannot be held weakly, its
# function can (FN_CELL reads are turned into CELL reads before they are checked)
FN_CELL = "fncell"

LOCK = threading.RLock()
_local = threading.local()


def _cell_of(kind, holder, key, value) -> tuple:
    """A read with an FN_CELL turned into the CELL read it names (holder None if the
    function has no such cell)."""
    if kind != FN_CELL:
        return kind, holder, key, value
    cells = holder.__closure__ or ()
    return CELL, cells[key] if key < len(cells) else None, None, value


def _get(kind, holder, key):
    """What a recorded read reads now (MISSING if nothing)."""
    if kind == FN_CELL:
        kind, holder, key, _ = _cell_of(kind, holder, key, None)
        if holder is None:
            return MISSING
    if kind == CELL:
        try:
            return holder.cell_contents
        except ValueError:          # an empty cell
            return MISSING
    if kind == ITEM:
        return holder.get(key, MISSING)
    return getattr(holder, key, MISSING)


def note(kind: str, holder, key, value) -> None:
    """Record that compiling read `value` (CELL: holder is a cell; FN_CELL: cell number
    `key` of function `holder`; ITEM: holder[key]; ATTR: getattr(holder, key)) in every
    recording in progress on this thread."""
    for seen in getattr(_local, "stack", ()):
        seen.setdefault((kind, id(holder), key), (kind, holder, key, value))


def note_name(globals_: dict, closure: dict, name: str, owner=None) -> None:
    """Record how `name` resolves from a function with these globals and closure cells
    (the order Python looks it up in), whether or not it is found; `owner` is the
    function the cells are of, if known (the read then names the cell by its position)."""
    if name in closure:
        cell = closure[name]
        cells = getattr(owner, "__closure__", None) or ()
        index = next((i for i, c in enumerate(cells) if c is cell), None)
        if index is None:
            note(CELL, cell, None, _get(CELL, cell, None))
        else:
            note(FN_CELL, owner, index, _get(CELL, cell, None))
        return
    note(ITEM, globals_, name, globals_.get(name, MISSING))
    if name not in globals_:
        note(ATTR, builtins, name, getattr(builtins, name, MISSING))


class recording:
    """A context in which every `note` is kept (nested recordings all see it)."""

    def __enter__(self) -> dict:
        self.seen = {}
        stack = getattr(_local, "stack", None)
        if stack is None:
            stack = _local.stack = []
        stack.append(self.seen)
        return self.seen

    def __exit__(self, *exc):
        # by identity (two recordings with nothing in them yet are equal dicts)
        stack = _local.stack
        del stack[next(i for i in range(len(stack) - 1, -1, -1) if stack[i] is self.seen)]
        return False


def recordings() -> list:
    """The recordings in progress on this thread (to hand to another that compiles for it)."""
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def record_into(stack: list) -> None:
    """Make this thread's reads go to `stack`, another thread's recordings (that thread
    waits for this one meanwhile)."""
    _local.stack = stack


class unrecorded:
    """A context whose reads are not recorded (a name chosen for readability only)."""

    def __enter__(self):
        self.saved = getattr(_local, "stack", [])
        _local.stack = []

    def __exit__(self, *exc):
        _local.stack = self.saved
        return False


class _Weak:
    """An object a cached compilation read, held weakly: a cache entry must not keep a
    user's instance (or a function, whose cells hold one) alive. Once it is gone, no
    object is it, so the read no longer holds."""

    __slots__ = ("ref",)

    def __init__(self, ref):
        self.ref = ref


_GONE = object()        # what a weakly held object that has been collected reads as


def _held(obj, gone=None):
    """`obj` as a cache entry keeps it: weakly where Python allows (a bound method by its
    function and object, since each attribute read makes a new one); `gone(ref)` is
    called when it is collected."""
    if isinstance(obj, types.BuiltinMethodType):
        return obj      # (also made anew on each read: a weak reference would die at once)
    try:
        if isinstance(obj, types.MethodType):
            return _Weak(weakref.WeakMethod(obj, gone))
        return _Weak(weakref.ref(obj, gone))
    except TypeError:   # (an object Python cannot refer to weakly, or bound to one)
        return obj


def _unheld(obj):
    """The object `_held` kept (`_GONE` once collected)."""
    if type(obj) is not _Weak:
        return obj
    found = obj.ref()
    return _GONE if found is None else found


class Depends:
    """The reads a compilation made, with `fn`'s own closure cells stored by position
    (so that another function with the same code can be checked against them). Holders
    and values are held weakly where they can be (`_held`): a compilation kept in a cache
    keeps alive nothing it read."""

    __slots__ = ("reads",)

    def __init__(self, reads: tuple):
        self.reads = reads

    @classmethod
    def of(cls, seen: dict, fn, gone=None) -> "Depends":
        """The reads in `seen` as seen from `fn`; `gone(ref)` is called when an object
        they hold weakly is collected (the reads can no longer hold: a cache forgets
        the entry, and with it what the entry's code is bound to)."""
        own = {id(c): i for i, c in enumerate(fn.__closure__ or ())}
        reads = []
        for kind, holder, key, value in seen.values():
            if kind == CELL and id(holder) in own:
                reads.append((OWN, own[id(holder)], None, _held(value, gone)))
            elif kind == FN_CELL and holder is fn:
                reads.append((OWN, key, None, _held(value, gone)))
            else:
                reads.append((kind, _held(holder, gone), key, _held(value, gone)))
        return cls(tuple(reads))

    def objects(self, fn) -> tuple:
        """What these reads hold weakly (as seen from `fn`), held strongly: kept by whoever
        uses the code until its checker holds them (a function the front end made
        while compiling is held by nothing else, and a collection in between would make
        the code stale at once)."""
        return tuple(part for read in self._absolute(fn) for part in (read[1], read[3]))

    def holds(self, ref) -> bool:
        """Whether weak reference `ref` is one these reads keep."""
        return any(type(part) is _Weak and part.ref is ref
                   for _, holder, _, value in self.reads for part in (holder, value))

    def _stored(self, fn):
        """The reads as `note` takes them, as seen from `fn`; a holder that is gone is
        None."""
        for kind, holder, key, value in self.reads:
            holder, value = _unheld(holder), _unheld(value)
            if kind == OWN:
                kind, holder, key = FN_CELL, fn, holder
            yield kind, None if holder is _GONE else holder, key, value

    def _absolute(self, fn):
        """The reads as seen from `fn`, with each cell itself; a holder that is gone (or
        a cell `fn` does not have) is None."""
        for kind, holder, key, value in self._stored(fn):
            if holder is None:
                yield kind, None, key, value
            else:
                yield _cell_of(kind, holder, key, value)

    def holds_for(self, fn) -> bool:
        """Every name still refers to what it did (as seen from `fn`)."""
        return all(holder is not None and _same(_get(kind, holder, key), value)
                   for kind, holder, key, value in self._absolute(fn))

    def replay(self, fn) -> None:
        """Record these reads (as seen from `fn`) in the recordings in progress: code that
        uses a cached result depends on what that result depended on."""
        if getattr(_local, "stack", None):
            for kind, holder, key, value in self._stored(fn):
                if holder is not None:
                    note(kind, holder, key, value)

    def checker(self, fn, extra=()):
        """A function of no arguments that tells, fast, whether these reads (as seen from
        `fn`) and the (kind, holder, key, value) reads in `extra` still hold. Its
        `parts(prefix)` gives the same test as an expression, with the objects it reads
        (named with `prefix`), for a caller to inline (api._fast_call): it raises
        ValueError, KeyError or AttributeError where the function returns False."""
        reads = list(self._absolute(fn)) + [_cell_of(*read) for read in extra]
        if any(holder is None for _, holder, _, _ in reads):
            return lambda: False
        body, env = _check_text(reads, "")
        # (an empty cell, a name or attribute that is gone: the code no longer holds)
        # the objects are defaults of the check: local variables, the fastest to read
        params = ", ".join(f"{name}={name}" for name in env)
        text = (f"def check({params}):\n    try:\n        return {body}\n"
                f"    except (ValueError, KeyError, AttributeError):\n        return False\n")
        exec(compile(text, "<sgcompiler check>", "exec"), env)
        check = env["check"]
        check.parts = lambda prefix: _check_text(reads, prefix)
        return check


def _check_text(reads, prefix):
    """(expression, the objects it names) that is true while `reads` hold."""
    tests, env = [], {}
    for i, (kind, holder, key, value) in enumerate(reads):
        if kind == ATTR and holder is builtins and value is MISSING:
            # a name not in builtins (a global the code does not define either): in
            # the dict a lookup of the name reads, not `hasattr`, whose
            # AttributeError took 1 us, half a fast call's path through grad
            kind, holder = ITEM, builtins.__dict__
        env[f"{prefix}h{i}"], env[f"{prefix}v{i}"] = holder, value
        tests.append(_test(kind, f"{prefix}h{i}", key, f"{prefix}v{i}", value))
    return " and ".join(tests) or "True", env


def _test(kind, holder, key, value, obj) -> str:
    """The fastest expression that tells whether one read still reads the same."""
    if kind == CELL:
        return f"{holder}.cell_contents is {value}"
    if kind == ITEM:
        return f"{key!r} not in {holder}" if obj is MISSING else \
            f"{holder}[{key!r}] is {value}"
    if obj is MISSING:
        return f"not hasattr({holder}, {key!r})"
    same = "==" if _method(obj) else "is"
    if key.isidentifier() and not keyword.iskeyword(key):
        return f"{holder}.{key} {same} {value}"
    return f"getattr({holder}, {key!r}) {same} {value}"


def _method(obj) -> bool:
    """A method bound to an object: each attribute read makes a new one (rng.normal)."""
    return isinstance(obj, (types.MethodType, types.BuiltinMethodType)) and \
        not isinstance(getattr(obj, "__self__", None), types.ModuleType)


def _same(now, then) -> bool:
    """Whether a read reads what it read: the same object (a bound method: the same
    function bound to the same object)."""
    return now is then or (_method(then) and now == then)


def function_reads(fn) -> tuple:
    """The reads code bound to `fn` depends on beyond its names: its code, defaults and
    keyword defaults (generated code is bound with them when it is made)."""
    return tuple((ATTR, fn, attr, getattr(fn, attr))
                 for attr in ("__code__", "__defaults__", "__kwdefaults__"))


class cached:
    """A cache of results computed from a function's code that depend on what its names
    refer to: a hit is checked with `Depends.holds_for` and replayed into the recordings
    in progress; a miss is computed in a recording of its own."""

    def __init__(self):
        self.entries: dict = {}

    def get(self, key, fn, default=None):
        with LOCK:
            found = self.entries.get(key)
            if found is None:
                return default
            value, depends = found
            if depends is not None and not depends.holds_for(fn):
                del self.entries[key]
                return default
            if depends is not None:
                depends.replay(fn)
            return value

    def put(self, key, value, depends=None):
        self.entries[key] = (value, depends)

    def __contains__(self, key):
        return key in self.entries


def module_level(fn, node, local):
    """The object a Name/Attribute chain rooted outside the function refers to, or None
    (the reads are recorded: code made from it depends on them)."""
    parts = []
    while isinstance(node, gast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, gast.Name) or node.id in local:
        return None
    found, obj = fn.lookup(node.id)
    for attr in reversed(parts):
        if not found:
            break
        holder, obj = obj, getattr(obj, attr, MISSING)
        note(ATTR, holder, attr, obj)
        found = obj is not MISSING
    return obj if found else None
