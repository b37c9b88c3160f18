"""What one run of the reverser reads and builds, declared in one place (and only there:
setting any other attribute is an AssertionError).

The reverser (sweeps.py) is made of the sweeps and three groups of helpers: adjoint
accumulation (state.py, adjoints.py), loops (loops.py) and calls of user functions
(calls.py). They share this state and no other: `SweepState` lists every field, what it
holds and who fills it, so a helper's reads and writes can be checked against it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import gast

from .. import rules
from ..analysis.activity import Activity
from ..analysis.complex_kinds import maybe_complex
from ..analysis.memory import (LOOPS, bound_before, index_rereads, reads_after_writes,
                               stable_names)
from ..analysis.ops import assignments, describe_stmt, is_setitem, target_of
from ..analysis.shapes import Shapes
from ..frontend.normalize import Normalized
from ..frontend.resolve import Resolution
from ..ir.builders import number
from ..ir.naming import Namer
from .loops import loop_targets
from .shortcuts import sigmoid_shortcuts


@dataclass(eq=False)
class SweepState:
    # --- given: the function, its analyses, and what the first run found
    norm: Normalized
    resolution: Resolution
    act: Activity
    shapes: Shapes
    linker: object              # inline.Linker: objects the generated code names
    needed: frozenset           # primal names the adjoint sweep reads (the first run's)
    names: dict                 # key -> generated name, the same in both runs
    loop_reverses: dict         # id(loop) -> whether it has adjoint code (the first run's)
    pieces: object              # pieces(fn, active, ...) -> a user function's pieces
    seed: gast.expr             # the adjoint of the result
    keep_stops: bool = False    # keep stop_gradient calls in the primal sweep (SweepPlan)
    learned: dict = None        # the first run's `facts()`, which the second run takes
    # --- facts about the function, worked out once (__post_init__)
    fn: object = field(init=False)              # its FunctionSource
    namer: Namer = field(init=False)
    primal_names: set = field(init=False)       # every name the primal sweep binds
    read_after_write: object = field(init=False)    # memory.reads_after_writes
    written_in_place: set = field(init=False)   # names written through an index
    stable: set = field(init=False)             # names that keep one value throughout
    rereads: dict = field(init=False)           # id(loop) -> {v: (x, id(`v = x[t]`))}:
    #                                             read again, not saved (index_rereads)
    reread_at: set = field(init=False)          # the ids of those statements
    counters: set = field(init=False)           # whole-number counters (walked back)
    bound: dict = field(init=False)             # memory.bound_before
    nested: set = field(init=False)             # id() of loops inside other loops
    call_results: set = field(init=False)       # names only ever assigned a call's result
    maybe_complex: frozenset = field(init=False)    # in complex mode: names that may hold
    #                                                 complex values (complex_kinds.py)
    shortcuts: dict = field(init=False)         # id(statement) -> shortcuts.Shortcut
    # --- built by the sweeps
    state: dict = field(init=False)             # var -> its adjoint's value, if nonzero
    owned: set = field(default_factory=set)     # adjoints in arrays this code allocated
    maybe_scalar: set = field(default_factory=set)  # adjoints that may be a plain 0.0
    reads: set = field(default_factory=set)     # primal names the adjoint sweep reads
    saved: dict = field(default_factory=dict)   # id(statement) -> slot, or the tape
    inits: list = field(default_factory=list)   # names set to None first
    uses_tape: bool = False
    comment_line: object = None                 # the source line of the last comment
    handoff: object = None                      # an owned adjoint a statement may reuse
    depth: int = 0                              # branches and loops the adjoint sweep is in
    described: dict = field(default_factory=dict)   # id(statement) -> (it, its Op)

    def __setattr__(self, name, value):
        # the helpers share these fields and no others: a new one is declared above
        assert name in _FIELDS, f"SweepState has no field {name!r}: declare it"
        object.__setattr__(self, name, value)

    def describe(self, stmt):
        """describe_stmt of a statement of the function, worked out once per run (a loop's
        statements are asked about by each loop around them, and by both sweeps)."""
        held = self.described.get(id(stmt))
        if held is None or held[0] is not stmt:
            held = self.described[id(stmt)] = (stmt, describe_stmt(stmt, self.resolution,
                                                                   self.fn))
        return held[1]

    def __post_init__(self):
        norm = self.norm
        body = norm.body
        self.fn, self.namer = norm.fn, norm.namer
        self.state = {norm.returned: self.seed}
        targets = [target_of(s) for s in assignments(body)]
        self.primal_names = set(norm.params) | set(targets) | loop_targets(body) | \
            {n for k, n in self.names.items() if k[0] == "saved"}
        self.written_in_place = {target_of(s) for s in assignments(body) if is_setitem(s)}
        self.stable = stable_names(norm)
        self.counters = whole_number_counters(norm)
        self.bound = bound_before(body, norm.params)
        self.nested = _nested_loops(body)
        self.call_results = _call_results(body)
        self.maybe_complex = maybe_complex(norm, self.resolution, self.shapes.concrete) \
            if rules.complex_mode() else frozenset()
        if self.learned is not None:    # (the same function: the first run's facts)
            for name, value in self.learned.items():
                setattr(self, name, value)
            return
        self.read_after_write = reads_after_writes(body)
        self.rereads = index_rereads(norm, self.stable, self.written_in_place, self.shapes)
        self.reread_at = {at for found in self.rereads.values() for _, at in found.values()}
        # (complex values: log and the sigmoid are holomorphic, but the rules guard them)
        self.shortcuts = {} if self.maybe_complex else sigmoid_shortcuts(
            norm, self.resolution, self.describe)

    def facts(self) -> dict:
        """What this run worked out about the function that no run changes (the second
        run of the reverser takes them from the first, rather than working them out
        again): each statement's Op, the reads after writes, the loops' rereads, the
        sigmoid shortcuts."""
        return {name: getattr(self, name) for name in _LEARNED}


_FIELDS = frozenset(SweepState.__dataclass_fields__)
_LEARNED = ("described", "read_after_write", "rereads", "reread_at", "shortcuts")


def _nested_loops(body) -> set:
    found = set()

    def walk(block, inside):
        for s in block:
            if isinstance(s, LOOPS):
                if inside:
                    found.add(id(s))
                walk(s.body, True)
            elif isinstance(s, gast.If):
                walk(s.body, inside)
                walk(s.orelse, inside)
    walk(body, False)
    return found


def _call_results(body) -> set:
    """Names only ever assigned a call's result (an array, as a rule)."""
    found = {}
    for stmt in assignments(body):
        found.setdefault(target_of(stmt), []).append(isinstance(stmt.value, gast.Call))
    return {n for n, calls in found.items() if all(calls)}


_COUNTER_LIMIT = 2 ** 20    # steps and starting values: far from 2 ** 53 after any run


def _whole(node):
    """The value of a constant whole number (int or integral float) of modest size."""
    value = number(node)
    if value is not None and float(value).is_integer() and abs(value) <= _COUNTER_LIMIT:
        return value
    return None


def step_of(stmt, target):
    """k for `target = target + k` (or `- k`, as -k), k a constant whole number."""
    value = stmt.value if isinstance(stmt, gast.Assign) else None
    if isinstance(value, gast.BinOp) and isinstance(value.op, (gast.Add, gast.Sub)) and \
            isinstance(value.left, gast.Name) and value.left.id == target:
        step = _whole(value.right)
        if step is not None:
            return step if isinstance(value.op, gast.Add) else -step
    return None


def whole_number_counters(norm) -> set:
    """The variables that only ever hold whole numbers of modest size: every
    assignment is a constant whole number or adds one to the variable itself. Adding and
    subtracting such numbers is exact (below 2 ** 53), so the adjoint sweep can undo
    `n = n + 1.0` by `n = n - 1.0` instead of keeping each old value on the tape."""
    found = {}
    for stmt in assignments(norm.body):
        target = target_of(stmt)
        ok = isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
            isinstance(stmt.targets[0], gast.Name) and \
            (_whole(stmt.value) is not None or step_of(stmt, target) is not None)
        found[target] = found.get(target, True) and ok
    excluded = set(norm.params) | loop_targets(norm.body)
    return {n for n, ok in found.items() if ok and n not in excluded}


