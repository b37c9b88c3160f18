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

import gast

MISSING = object()          # "the name was not there": a later definition changes the code
CELL, ITEM, ATTR, OWN = "cell", "item", "attr", "own"

LOCK = threading.RLock()
_local = threading.local()


def _get(kind, holder, key):
    """What a recorded read reads now (MISSING if nothing)."""
    if kind == CELL:
        try:
            return holder.cell_contents
        except ValueError:          # an empty cell
            return MISSING
    if kind == ITEM:
        return holder.get(key, MISSING)
    return getattr(holder, key, MISSING)


def note(kind: str, holder, key, value) -> None:
    """Record that compiling read `value` (CELL: holder is a cell; ITEM: holder[key];
    ATTR: getattr(holder, key)) in every recording in progress on this thread."""
    for seen in getattr(_local, "stack", ()):
        seen.setdefault((kind, id(holder), key), (kind, holder, key, value))


def note_name(globals_: dict, closure: dict, name: str) -> None:
    """Record how `name` resolves from a function with these globals and closure cells
    (the order Python looks it up in), whether or not it is found."""
    if name in closure:
        cell = closure[name]
        note(CELL, cell, None, _get(CELL, cell, None))
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


class Depends:
    """The reads a compilation made, with `fn`'s own closure cells stored by position
    (so that another function with the same code can be checked against them)."""

    __slots__ = ("reads",)

    def __init__(self, reads: tuple):
        self.reads = reads

    @classmethod
    def of(cls, seen: dict, fn) -> "Depends":
        own = {id(c): i for i, c in enumerate(fn.__closure__ or ())}
        reads = []
        for kind, holder, key, value in seen.values():
            if kind == CELL and id(holder) in own:
                reads.append((OWN, own[id(holder)], None, value))
            else:
                reads.append((kind, holder, key, value))
        return cls(tuple(reads))

    def _absolute(self, fn):
        cells = fn.__closure__ or ()
        for kind, holder, key, value in self.reads:
            if kind == OWN:
                if holder >= len(cells):
                    yield CELL, None, None, value
                    continue
                kind, holder = CELL, cells[holder]
            yield kind, holder, key, value

    def holds_for(self, fn) -> bool:
        """Every name still refers to what it did (as seen from `fn`)."""
        return all(holder is not None and _same(_get(kind, holder, key), value)
                   for kind, holder, key, value in self._absolute(fn))

    def replay(self, fn) -> None:
        """Record these reads (as seen from `fn`) in the recordings in progress: code that
        uses a cached result depends on what that result depended on."""
        if getattr(_local, "stack", None):
            for kind, holder, key, value in self._absolute(fn):
                if holder is not None:
                    note(kind, holder, key, value)

    def checker(self, fn, extra=()):
        """A function of no arguments that tells, fast, whether these reads (as seen from
        `fn`) and the (kind, holder, key, value) reads in `extra` still hold."""
        reads = list(self._absolute(fn)) + list(extra)
        if any(holder is None for _, holder, _, _ in reads):
            return lambda: False
        tests, env = [], {}
        for i, (kind, holder, key, value) in enumerate(reads):
            env[f"h{i}"], env[f"v{i}"] = holder, value
            tests.append(_test(kind, f"h{i}", key, f"v{i}", value))
        body = " and ".join(tests) or "True"
        # (an empty cell, a name or attribute that is gone: the code no longer holds)
        # the objects are defaults of the check: local variables, the fastest to read
        params = ", ".join(f"{name}={name}" for name in env)
        text = (f"def check({params}):\n    try:\n        return {body}\n"
                f"    except (ValueError, KeyError, AttributeError):\n        return False\n")
        exec(compile(text, "<sgcompiler check>", "exec"), env)
        return env["check"]


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
