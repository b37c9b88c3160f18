"""Shape facts: which variables provably have the same shape, and which are scalars.

Used to drop `unbroadcast` where no broadcasting can have happened, so the generated code
reads `dx = dz * e` rather than `dx = unbroadcast(dz * e, x)`:

    z = x - m        (m scalar)  ->  z has x's shape
    e = np.exp(z)                ->  e has x's shape
    t = np.sum(e)                ->  t is a scalar

Each variable gets a class: SCALAR (shape ()), or a representative variable whose shape it
provably shares. A variable assigned twice with different classes gets a class of its own.
`scalars` names arguments known to be Python numbers (the caller specialises on them).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

import operator
from collections import Counter

import gast
import numpy

from .activity import described
from .broadcast_classes import Broadcasts
from ..ir.blocks import nodes
from .ops import (APPEND, CALL, COPY, INDEX, NONDIFFERENTIABLE, RULE, SETITEM, STOPPED,
                  target_of)
from .ops import CONTAINER as BUILD
from .sizes import WEAK, concrete_shapes, unwritten_leaves
from ..runtime import TREE_HELPERS

SCALAR = "<scalar>"
REDUCED = "<reduced "   # <reduced (axes)>class: a keepdims reduction of that class
ARRAY, CONTAINER, EITHER = "array", "container", "either"


@dataclass(frozen=True)
class Shapes:
    classes: dict      # name -> SCALAR or representative name
    kinds: dict        # name -> ARRAY (a number or array), CONTAINER (list, tuple, dict)
    #                    or EITHER (either: an element of a container, a call's result)
    ints: frozenset = frozenset()   # names that always hold Python ints (loop indexes)
    concrete: dict = field(default_factory=dict)   # name -> (shape, dtype), see sizes.py
    # (parameter, key, ...) -> (shape, dtype): arrays of parameter trees the function never
    # writes or rebinds (a call passes them on to the callee's code)
    leaves: dict = field(default_factory=dict)
    broadcasts: object = None   # broadcast_classes.Broadcasts: classes of broadcasts
    # names that hold np.arange(...) (assigned once, read only as an index): ints that are
    # all different, so an index with one of them picks no element twice
    distinct: frozenset = frozenset()

    def kind(self, name) -> str:
        kind = self.kinds.get(name, ARRAY)
        if kind == EITHER and name in self.concrete:
            return ARRAY    # (a call's result whose shape is known: a number or an array)
        return kind

    def of(self, name) -> str:
        known = self.concrete.get(name)
        if known is not None:
            return SCALAR if known[0] == () else concrete_class(known[0])
        return self.classes.get(name, name)

    def shape(self, name):
        """The concrete shape of `name` (a tuple), or None when it is not known."""
        known = self.concrete.get(name)
        return None if known is None else known[0]

    def dtype(self, name):
        """The floating dtype of `name` when it is certain, else None."""
        known = self.concrete.get(name)
        return None if known is None or known[1] is WEAK else known[1]

    def same(self, a, b) -> bool:
        return self.of(a) == self.of(b)

    def is_scalar(self, name) -> bool:
        return self.of(name) == SCALAR

    def broadcast(self, classes):
        """The class of the broadcast of whole arrays of `classes`, or None."""
        return self.broadcasts.class_of(classes) if self.broadcasts else None


def concrete_class(shape) -> str:
    """The shape class of every variable of this concrete shape."""
    return f"<shape {tuple(shape)}>"


def class_shape(cls):
    """The concrete shape a class stands for, or None (a class of unknown shape)."""
    if cls == SCALAR:
        return ()
    if isinstance(cls, str) and cls.startswith("<shape "):
        return ast.literal_eval(cls[len("<shape "):-1])
    return None


def shapes(norm, resolution, scalars=frozenset(), trees=frozenset(), arrays=None,
           callees=None, statements=None) -> Shapes:
    """Shape classes and kinds of every variable of `norm`. `trees` names parameters
    that are containers (parameter trees); `arrays` maps parameters to the (shape, dtype)
    of the arrays the gradient is specialised for; `callees` (summaries.Callees) tells
    what user functions return and which of their parameters are dicts; `statements`,
    what activity.described gives (made here when not given)."""
    if statements is None:
        statements = described(norm, resolution)
    shape_names = frozenset(
        target_of(stmt) for stmt, _ in statements if isinstance(stmt.value, gast.Attribute)
        and stmt.value.attr == "shape")
    classes = {p: (SCALAR if p in scalars else p) for p in norm.params}
    targets = [target_of(stmt) for stmt, _ in statements]   # (found once, read each sweep)
    counts = Counter(targets)
    # a name assigned once follows its inputs; one assigned more often (or a parameter that
    # is assigned) keeps one class only while every assignment agrees
    multiple = {n for n, c in counts.items() if c > 1 or n in classes}
    conflicted = set()
    # Loops can carry a value around to an earlier statement, so repeat to a fixed point;
    # it comes quickly, since a class only ever changes to "a class of its own".
    while True:
        before, known = dict(classes), len(conflicted)
        broadcasts = Broadcasts()      # (made again each time: the classes may change)
        for (stmt, op), target in zip(statements, targets):
            cls = _class_of(stmt, op, classes, shape_names, conflicted, broadcasts)
            if cls is None and target not in multiple and op.kind == RULE and \
                    op.rule.elementwise:
                broadcasts.register([_atom_class(a, classes, conflicted)
                                     for a in op.args.values()], target)
            # a name assigned more than once, one of whose values has no class, has a shape
            # that may change from one assignment to the next (`s = b[2]`, then
            # `s = np.sin(s) + v` in a loop): a class of its own is not a class it shares
            if target in conflicted or target in multiple and (
                    cls is None or target in before and before[target] != cls):
                conflicted.add(target)
                classes[target] = target
            else:
                classes[target] = target if cls is None else cls
        if classes == before and len(conflicted) == known:
            break
    kinds = _kinds(norm, statements, trees, callees, resolution)
    ints = _ints(norm.body, statements, resolution)
    concrete = {}
    if arrays or scalars:
        known_scalars = {n for n, c in classes.items() if c == SCALAR}
        # Python numbers are shapes too: a loop over scalars alone gets its shapes known
        # (x * j of a range index j), not unbroadcast at run time
        given = {**{p: ((), WEAK) for p in scalars if p in norm.params}, **dict(arrays or {})}
        # (the lists np.array may stack: those no other statement can change)
        reads = Counter(n.id for stmt in norm.body for n in nodes(stmt)
                        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)) \
            if any(isinstance(stmt.value, gast.List) for stmt, _ in statements) else {}
        concrete = concrete_shapes(statements, given, known_scalars, ints,
                                   callees.call_result if callees else None,
                                   _callee_finder(resolution), None,
                                   _number_finder(norm, resolution),
                                   frozenset(n for n, k in reads.items() if k == 1))
        # only plain values, not containers (an item of one is known only as an array of
        # a parameter tree)
        concrete = {n: v for n, v in concrete.items() if kinds.get(n, ARRAY) != CONTAINER}
    assigned = set(targets)
    leaves = unwritten_leaves(arrays or {}, assigned)
    distinct = _distinct_ints(norm, statements, counts, resolution) if concrete else \
        frozenset()
    return Shapes(classes, kinds, ints, concrete, leaves, broadcasts, distinct)


def _distinct_ints(norm, statements, counts, resolution) -> frozenset:
    """Names assigned once, from np.arange(n) or np.arange(k, n) with k a constant >= 0
    (ints that are all different and none negative: a negative one would pick the element
    a positive one picks), and read only inside an index (`z[_arange, y]`): never
    written, rebound, passed on or aliased."""
    callee_of = _callee_finder(resolution)
    found = {target_of(stmt) for stmt, op in statements
             if op.kind == NONDIFFERENTIABLE and isinstance(stmt.value, gast.Call) and
             callee_of(stmt.value) is numpy.arange and _counts_up(stmt.value) and
             counts[target_of(stmt)] == 1 and target_of(stmt) not in norm.params}
    if not found:
        return frozenset()
    # (counted, not matched by node: the normal form may share one Name node between
    # statements)
    reads, in_index = Counter(), Counter()
    for node in (n for stmt in norm.body for n in nodes(stmt)):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            reads[node.id] += 1
        elif isinstance(node, gast.Subscript):
            parts = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
            in_index.update(p.id for p in parts if isinstance(p, gast.Name))
    return frozenset(n for n in found if reads[n] == in_index[n])


def _counts_up(call) -> bool:
    """np.arange(n), or np.arange(k, n) with k an int constant >= 0."""
    if call.keywords or not 1 <= len(call.args) <= 2:
        return False
    start = call.args[0] if len(call.args) == 2 else None
    return start is None or isinstance(start, gast.Constant) and \
        type(start.value) is int and start.value >= 0


def _callee_finder(resolution):
    """call node -> the object it calls, or None (a method of a local value, say)."""
    def callee_of(call):
        if not isinstance(call.func, (gast.Name, gast.Attribute)):
            return None
        try:
            return resolution.callee(call.func).obj
        except KeyError:
            return None
    return callee_of


_CONSTANT_MODULES = ("numpy", "math")


def _number_finder(norm, resolution):
    """node -> whether it is a number constant of numpy or math (`np.pi`, `math.e`):
    modules whose constants never change, so the code may rely on them."""
    function = getattr(norm.fn, "function", None)
    names = dict(getattr(function, "__globals__", {}))

    def is_number(node):
        if not (isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name)
                and node.value.id in resolution.global_roots):
            return False
        module = names.get(node.value.id)
        if getattr(module, "__name__", None) not in _CONSTANT_MODULES:
            return False
        value = getattr(module, node.attr, None)
        return type(value) in (float, int)
    return is_number


def _atom_class(node, classes, conflicted=frozenset()):
    """The class of an operand. A name whose assignments disagree has a class of its own
    that names no one shape: `s = x` then `s = s * 0.5 + v` in a loop makes `s` grow from
    x's shape to v's, so what is computed from it shares no class with it."""
    if isinstance(node, gast.Constant):
        return SCALAR if isinstance(node.value, (int, float, bool)) else None
    if isinstance(node, gast.Name):
        return None if node.id in conflicted else classes.get(node.id, node.id)
    return None


def _class_of(stmt, op, classes, shape_names, conflicted=frozenset(), broadcasts=None):
    rhs = stmt.value
    if op.kind == SETITEM:
        return classes.get(op.inputs[0][1], op.inputs[0][1])
    if op.kind in (COPY, STOPPED):
        atom = rhs if op.kind == COPY else (rhs.args[0] if rhs.args else None)
        return _atom_class(atom, classes, conflicted) if atom is not None else None
    if isinstance(rhs, gast.Constant):
        return _atom_class(rhs, classes, conflicted)
    if _is_python_number(rhs, op, shape_names):
        return SCALAR
    if op.kind != RULE:
        return None
    rule = op.rule
    if rule.elementwise:
        return _broadcast([_atom_class(a, classes, conflicted) for a in op.args.values()],
                          broadcasts)
    if rule.reduction:
        axis = op.args.get("axis")
        keepdims = op.args.get("keepdims")
        no_axis = axis is None or (isinstance(axis, gast.Constant) and axis.value is None)
        kept = isinstance(keepdims, gast.Constant) and keepdims.value
        if no_axis and not kept:
            return SCALAR
        source = _atom_class(op.args.get(rule.params[0]), classes, conflicted)
        axes = _axes(axis)
        if kept and source not in (None, SCALAR) and axes is not None:
            # keepdims: the result broadcasts back against its input (sums along other
            # axes do not broadcast against each other: each class names its axes)
            return _reduced(axes, source)
    if rule.name in ("float", "math.exp") or rule.name.startswith("math."):
        return SCALAR
    return None


def _axes(axis):
    """The axes a constant `axis` argument names, as a sorted tuple (None: not known)."""
    if axis is None or isinstance(axis, gast.Constant) and axis.value is None:
        return ("all",)
    if isinstance(axis, gast.Constant) and type(axis.value) is int:
        return (axis.value,)
    if isinstance(axis, gast.Tuple) and all(isinstance(e, gast.Constant) and
                                           type(e.value) is int for e in axis.elts):
        return tuple(sorted({e.value for e in axis.elts}))
    return None


def _reduced(axes, source):
    """The class of a keepdims reduction along `axes` of an array of class `source`."""
    if source.startswith(REDUCED):
        before, source = _unreduced(source)
        axes = ("all",) if "all" in before + axes else tuple(sorted(set(before + axes)))
    return f"{REDUCED}{axes}>{source}"


def _unreduced(c):
    """(axes, source class) of a keepdims reduction's class."""
    axes, source = c[len(REDUCED):].split(">", 1)
    return ast.literal_eval(axes), source


def _is_python_number(rhs, op, shape_names):
    """len(x), int(...), x.shape[0]: Python numbers, whatever x is."""
    if isinstance(rhs, gast.Call) and isinstance(rhs.func, gast.Name) and \
            rhs.func.id in ("len", "int", "float") and op.kind in (NONDIFFERENTIABLE, RULE):
        return True
    return isinstance(rhs, gast.Subscript) and isinstance(rhs.value, gast.Name) and \
        rhs.value.id in shape_names and isinstance(rhs.slice, gast.Constant)


def _broadcast(classes, broadcasts=None):
    """The class of an elementwise result, if all array operands share one class (a
    class and its keepdims reductions count as one), or if they are all classes of whole
    arrays whose broadcast has a class already (`broadcasts`, see broadcast_classes.py)."""
    if any(c is None for c in classes):
        return None
    arrays = {c for c in classes if c != SCALAR}
    full = {c for c in arrays if not c.startswith(REDUCED)}
    if len(full) == 1 and all(_unreduced(c)[1] == next(iter(full)) for c in arrays - full):
        return next(iter(full))
    if not arrays:
        return SCALAR
    if len(arrays) == 1:
        return arrays.pop()
    return broadcasts.class_of(arrays) if broadcasts is not None and full == arrays \
        else None


def _kinds(norm, statements, trees, callees, resolution):
    # a parameter used as a dict (params["W1"], params.items(), or passed on to a function
    # that does so) is a container whatever the caller said
    keyed = callees.keyed_params(norm.fn.function) if callees and \
        norm.fn.function is not None else set()
    kinds = {p: (CONTAINER if p in trees or p in keyed else ARRAY) for p in norm.params}
    while True:
        before = dict(kinds)
        seen = set()
        for stmt, op in statements:
            target = target_of(stmt)
            kind = _tree_helper_kind(stmt, resolution, kinds) or _kind_of(op, kinds)
            if target in seen and kinds.get(target) != kind:
                kind = EITHER
            if target in norm.params and target not in seen:
                kind = kind if kind == kinds[target] else EITHER
            seen.add(target)
            kinds[target] = kind
        if kinds == before:
            return kinds


def _tree_helper_kind(stmt, resolution, kinds):
    """The kind of what a runtime helper that builds adjoints of trees returns (in
    generated code read again): that of the argument TREE_HELPERS names, an array for an
    array, else a container (code for a tree is right for an array too, not the other
    way round); None for other statements."""
    call = stmt.value
    if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Name) and call.args):
        return None
    callee = resolution.callees.get(call.func.id)
    position = next((k for h, k in TREE_HELPERS if callee is not None and callee.obj is h),
                    None)
    if position is None:
        return None
    like = call.args[position] if position < len(call.args) else None
    return ARRAY if isinstance(like, gast.Name) and kinds.get(like.id) == ARRAY \
        else CONTAINER


def _kind_of(op, kinds):
    if op.kind == SETITEM:
        return kinds.get(op.inputs[0][1], ARRAY)
    if op.kind in (BUILD, APPEND) or (op.kind == RULE and op.rule.multiple_results):
        return CONTAINER
    if op.kind == RULE and op.rule.name == "field":     # a record's field: it may be one
        return EITHER
    if op.kind == RULE and op.rule.primitive is numpy.gradient:    # (a tuple for axes)
        return EITHER
    if op.kind == RULE and op.rule.primitive in (operator.add, operator.mul):
        return _joined_kind(op, kinds)
    if op.kind == INDEX:
        return ARRAY if kinds.get(op.inputs[0][1], ARRAY) == ARRAY else EITHER \
            if op.inputs else ARRAY
    if op.kind == RULE and op.rule.name == "copied" and op.inputs:   # (code read again)
        return kinds.get(op.inputs[0][1], ARRAY)
    if op.kind in (COPY, STOPPED) and op.reads:
        return kinds.get(op.reads[0], ARRAY)
    if op.kind == CALL:
        return EITHER
    return ARRAY


def _joined_kind(op, kinds):
    """a + b and a * n: lists joined or repeated where an operand is one (EITHER where
    the other may be an array: then `+` is NumPy's), else NumPy's arithmetic."""
    found = [CONTAINER if isinstance(a, gast.Constant) and isinstance(a.value, tuple) else
             kinds.get(a.id, ARRAY) if isinstance(a, gast.Name) else ARRAY
             for a in op.args.values()]
    if CONTAINER not in found or len(found) != 2:
        return ARRAY
    if op.rule.primitive is operator.add:
        return CONTAINER if found == [CONTAINER, CONTAINER] else \
            EITHER if EITHER in found else ARRAY
    return CONTAINER if any(isinstance(a, gast.Constant) and type(a.value) is int
                            for a in op.args.values()) else EITHER


def _ints(body, statements, resolution):
    """Names that only ever hold Python ints: indexes of loops over range(), len(...),
    and integer arithmetic on those (so x[i] can be written back with dx[i] += g)."""
    ranges = {target_of(stmt) for stmt, op in statements if isinstance(stmt.value, gast.Call)
              and _builtin(stmt.value, resolution, range)}
    candidates = {}
    for stmt, op in statements:
        candidates.setdefault(target_of(stmt), []).append(stmt)
    loops = _for_targets(body)
    ints = {t for t, it in loops if (isinstance(it, gast.Name) and it.id in ranges) or
            (isinstance(it, gast.Call) and _builtin(it, resolution, range))}
    changed = True
    while changed:
        changed = False
        for name, stmts in candidates.items():
            if name in ints or name in {t for t, _ in loops}:
                continue
            if all(_is_int_expr(stmt.value, ints, resolution) for stmt in stmts):
                ints.add(name)
                changed = True
    return frozenset(ints)


def _for_targets(body):
    out = []
    for stmt in body:
        if isinstance(stmt, gast.For):
            out.append((stmt.target.id, stmt.iter))
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            out += _for_targets(stmt.body) + _for_targets(stmt.orelse)
    return out


def _builtin(call, resolution, obj):
    callee = resolution.callees.get(getattr(call.func, "id", None))
    return callee is not None and callee.obj is obj


def _is_int_expr(rhs, ints, resolution):
    def atom(a):
        return (isinstance(a, gast.Constant) and type(a.value) is int) or \
            (isinstance(a, gast.Name) and a.id in ints)
    if atom(rhs):
        return True
    if isinstance(rhs, gast.BinOp) and isinstance(rhs.op, (gast.Add, gast.Sub, gast.Mult,
                                                           gast.FloorDiv, gast.Mod)):
        return atom(rhs.left) and atom(rhs.right)
    if isinstance(rhs, gast.Call) and not rhs.keywords:
        return _builtin(rhs, resolution, len) or _builtin(rhs, resolution, int)
    return False


