"""Concrete shapes and dtypes, when the gradient is specialised for its arguments' shapes.

A gradient is compiled for the shapes and dtypes of the array arguments of the call (like a
JIT compiler specialises on them). From those, this pass works out the shape (and, where it
is certain, the floating dtype) of every variable it can:

    logits: (256, 1000) float64
    _max = np.max(logits, axis=1, keepdims=True)    ->  (256, 1)    float64
    z = logits - _max                               ->  (256, 1000) float64
    _sum = np.sum(z)                                ->  ()          float64

Only well-understood operations are followed: elementwise rules and arithmetic
(broadcasting), the common reductions with constant `axis`/`keepdims`, matrix products of
1-d and 2-d operands, `.T`, basic indexing with constants and loop indexes, copies,
element writes, arrays read from parameter trees with constant keys (`params["W1"]`), and
what a user function returns (worked out from its own code for the argument shapes, a few
calls deep). Anything else (a list, fancy indexing, a tuple a function returns) gives
"unknown", and so does a variable whose assignments disagree. The later passes then fall
back to the shape classes of `shapes.py` and to run-time helpers (`unbroadcast`), so an
unknown shape costs speed, never correctness.

dtype: a floating dtype when every array operand has that same dtype (Python numbers are
"weak" and do not change it, as in NumPy 2), otherwise None (unknown).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field as dfield

import gast
import numpy as np

from .ops import (CALL, CONTAINER, COPY, INDEX, NONDIFFERENTIABLE, RULE, SETITEM, STOPPED,
                  target_of)
from .shape_algebra import (NOT_CONSTANT, WEAK, _PENDING, _dot, _index, broadcast, constant,
                            matmul_shape, reduce_shape, same, same_dtype)
from .values import atom_value, int_value, made_shape, reshape_shape

_REDUCTIONS = {"np.sum", "np.mean", "np.max", "np.min", "np.amax", "np.amin", "np.prod",
               "np.std", "np.var", "np.nansum", "np.nanmean", "np.nanmax", "np.nanmin",
               "np.nanprod", "np.nanstd", "np.nanvar", "np.ptp", "scipy.special.logsumexp"}
_MATMUL = {"operator.matmul", "np.matmul", "np.dot"}
# runtime helpers whose result has the shape of one argument (unbroadcast(g, x): x's) and
# the dtype of others
_SHAPED_LIKE = {"unbroadcast": ("x", ("g_",)), "unreduce": ("x", ("g_",)),
                "matmul_grad_left": ("x", ("g_", "y")),
                "matmul_grad_right": ("y", ("g_", "x"))}


def concrete_shapes(statements, params: dict, scalars, ints, call_result=None,
                    callee_of=None, values=None, is_number=None,
                    read_once=frozenset()) -> dict:
    """name -> (shape, dtype) for every variable whose shape is certain.

    Args:
        statements: (assignment, Op) pairs of the normal form, in source order.
        params: parameter -> (shape, dtype) of the arguments it was specialised for
            (a Python number: shape (), dtype WEAK); (parameter, key, ...) -> the same
            for an array in a parameter tree (a dict, list or tuple).
        scalars: names the shape classes know to be scalars (shape (), whatever computes
            them: x.shape[0], len(x), a full reduction).
        ints: names that always hold Python ints (loop indexes).
        call_result: (user function, argument shapes) -> (shape, dtype) of its result,
            or None (summaries.Callees.call_result); without it, unknown.
        callee_of: call node -> the object it calls (None: not known), to follow len(x),
            np.zeros(shape) and the like.
        values: a dict this fills with name -> the int or tuple of ints (x.shape[1],
            len(x), tuples of them) each name assigned once holds (values.py).
        is_number: node -> whether it is a constant number of a module (`np.pi`).
        read_once: names read once in the whole function: a list display assigned to
            one of them can change in no other statement (`L.extend(v)`, `del L[0]`
            read L), so np.array(L) has the shape of its items stacked.
    """
    callee_of = callee_of or (lambda call: None)
    values = {} if values is None else values
    known = {p: v for p, v in params.items() if isinstance(p, str)}
    for name in ints:
        known[name] = ((), WEAK)
    assigned = {target_of(stmt) for stmt, _ in statements}
    counts = {}
    for stmt, _ in statements:
        counts[target_of(stmt)] = counts.get(target_of(stmt), 0) + 1
    leaves = _tree_leaves(statements, params, assigned, counts)
    trees = unwritten_leaves(params, assigned)     # for callees they are passed to
    # tuples of constants (`axis=(0, 1)` becomes `_axis = (0, 1)` in normal form)
    tuples = {target_of(stmt): constant(stmt.value, NOT_CONSTANT) for stmt, _ in statements
              if isinstance(stmt.value, gast.Tuple) and counts[target_of(stmt)] == 1}
    tuples = {n: v for n, v in tuples.items() if v is not NOT_CONSTANT}
    # the list and tuple displays np.array may stack (`_arg = [_sum, x[0], 1.5]`)
    displays = {target_of(stmt): stmt.value for stmt, op in statements
                if op.kind == CONTAINER and isinstance(stmt.value, (gast.List, gast.Tuple))
                and counts[target_of(stmt)] == 1
                and (isinstance(stmt.value, gast.Tuple) or target_of(stmt) in read_once)}
    bad = set()
    verify = False
    facts = _Facts(known, bad, assigned, ints, tuples, trees, call_result, callee_of, values,
                   is_number or (lambda node: False), displays)
    while True:
        changed = False
        for stmt, op in statements:
            target = target_of(stmt)
            if counts[target] == 1:
                changed |= _follow_value(stmt, op, facts)
            if target in bad or target in ints:
                continue
            found = leaves[target] if target in leaves else _evaluate(stmt, op, facts)
            if isinstance(found, Elements):
                if counts[target] == 1:
                    facts.items[target] = found
                found = None
            if found is _PENDING and not verify:
                continue
            if target in scalars and (found is None or found is _PENDING):
                found = ((), None)       # a scalar of a dtype not followed here
            if found is _PENDING or found is None or \
                    (target in known and known[target][0] != found[0]):
                bad.add(target)
                known.pop(target, None)
                changed = True
                continue
            if target in known and not same_dtype(known[target][1], found[1]):
                found = (found[0], None)     # assignments disagree on the dtype
            if not same(known.get(target), found):
                known[target] = found
                changed = True
        if not changed:
            if verify:
                return known
            verify = True       # a last sweep in which "not assigned yet" means unknown


def unwritten_leaves(params, assigned) -> dict:
    """(parameter, key, ...) -> (shape, dtype) of the arrays (and numbers) of parameter
    trees that the function never writes or rebinds."""
    return {p: v for p, v in params.items() if isinstance(p, tuple) and p[0] not in assigned}


def _tree_leaves(statements, params, assigned, counts) -> dict:
    """name -> (shape, dtype) for `w = params["W1"]` (and params["layer"]["W"]): names
    assigned once from an array of a parameter tree the function never writes or rebinds."""
    arrays = {p: v for p, v in params.items() if isinstance(p, tuple)}
    if not arrays:
        return {}
    prefixes = {path[:i] for path in arrays for i in range(1, len(path))}
    containers = {path[0]: path[:1] for path in arrays if path[0] not in assigned}
    out = {}
    changed = True
    while changed:
        changed = False
        for stmt, op in statements:
            target, rhs = target_of(stmt), stmt.value
            if op.kind != INDEX or counts.get(target) != 1 or target in containers or \
                    target in out or not isinstance(rhs.value, gast.Name) or \
                    rhs.value.id not in containers or not isinstance(rhs.slice, gast.Constant):
                continue
            key = rhs.slice.value
            if not (isinstance(key, str) or (type(key) is int and key >= 0)):
                continue
            path = containers[rhs.value.id] + (key,)
            if path in arrays:
                out[target] = arrays[path]
                changed = True
            elif path in prefixes:
                containers[target] = path
                changed = True
    return out


class Elements(tuple):
    """The (shape, dtype) of each item of a tuple a user function returns (what
    call_result gives for `return a, b`)."""


@dataclass
class _Facts:
    """What the sweeps of concrete_shapes know so far (shared by its helpers)."""
    known: dict
    bad: set
    assigned: set
    ints: frozenset
    tuples: dict
    trees: dict
    call_result: object
    callee_of: object
    values: dict
    is_number: object
    displays: dict                                # name -> its list or tuple display
    items: dict = dfield(default_factory=dict)    # name -> Elements of a call's tuple
    unsure: set = dfield(default_factory=set)     # names whose value changed: none


def _follow_value(stmt, op, facts) -> bool:
    """Update the int (or tuple of ints) the statement's target holds; True if it changed."""
    target = target_of(stmt)
    if target in facts.unsure:
        return False
    value = int_value(stmt, op, lambda n: (facts.known.get(n) or (None,))[0],
                      facts.values, facts.callee_of)
    before = facts.values.get(target)
    if value is None and before is None:
        return False
    if before is not None and value is not None and value == before:
        return False
    facts.values.pop(target, None)
    if before is not None:
        facts.unsure.add(target)      # a value seen to change is never trusted again
    else:
        facts.values[target] = value
    return True


def _evaluate(stmt, op, facts):
    """(shape, dtype) of the statement's result, None if unknown, _PENDING if it depends
    on a variable not evaluated yet."""
    rhs = stmt.value
    value = facts.values.get(target_of(stmt))
    if value is not None and not isinstance(value, tuple):
        return (), WEAK
    atom = _atoms(facts)
    if op.kind == SETITEM:
        return atom(stmt.targets[0].value)
    if op.kind == COPY:
        return atom(rhs)
    if op.kind == STOPPED:
        return atom(rhs.args[0]) if len(rhs.args) == 1 and not rhs.keywords else None
    if isinstance(rhs, gast.Constant):
        return atom(rhs)
    if op.kind == INDEX:
        if isinstance(rhs.value, gast.Name) and rhs.value.id in facts.items:
            i = constant(rhs.slice, NOT_CONSTANT)
            items = facts.items[rhs.value.id]
            return items[i] if type(i) is int and -len(items) <= i < len(items) else None
        return _index(atom(rhs.value), rhs.slice, facts.ints, facts.values, atom)
    if op.kind == NONDIFFERENTIABLE and isinstance(rhs, gast.Compare) and \
            len(rhs.comparators) == 1:
        found = broadcast([atom(rhs.left), atom(rhs.comparators[0])])
        return found if found in (None, _PENDING) else (found[0], None)
    if op.kind == CALL:
        return _call_result(op, atom, facts.trees, facts.call_result)
    made = made_shape(stmt, op, atom, facts.values, facts.callee_of)
    if made is not None or op.kind != RULE:
        return made
    found = _rule_result(op.rule, op.args, atom, facts)
    if found is None and isinstance(rhs, gast.Call) and \
            facts.callee_of(rhs) is op.rule.primitive:
        primitive = op.rule.primitive
        if id(primitive) in _BY_EVALUATION:
            return _evaluated(primitive, rhs, atom, facts)
        if primitive in (np.outer, np.einsum, np.broadcast_to, np.diag, np.linalg.solve,
                         np.linalg.inv):
            return _larger(primitive, rhs, atom, facts)
    return found


def _atoms(facts):
    """atom(node) -> (shape, dtype) of a constant, a module's number or a name; None if
    not known, _PENDING if not evaluated yet."""
    known, bad, assigned = facts.known, facts.bad, facts.assigned

    def atom(node):
        # (-2.0 is read as 2.0 here, not by calling atom again: a function that calls
        # itself through its closure is a reference cycle, left for the collector)
        if isinstance(node, gast.UnaryOp) and isinstance(node.operand, gast.Constant):
            node = node.operand
        if isinstance(node, gast.Constant):
            if isinstance(node.value, (bool, int, float)):
                return (), WEAK
            return None
        if facts.is_number(node):
            return (), WEAK
        if isinstance(node, gast.Name):
            if node.id in known:
                return known[node.id]
            if node.id in bad or node.id not in assigned:
                return None
            return _PENDING
        return None
    return atom


def _rule_result(rule, values, atom, facts):
    """(shape, dtype) of what a primitive with a rule gives, from its arguments'."""
    if rule.elementwise:
        operands = [v for v in values.values()
                    if not (isinstance(v, gast.Constant) and v.value is None)]
        return broadcast([atom(v) for v in operands])
    if rule.name in _REDUCTIONS:
        return _reduction(rule, values, atom, facts.tuples)
    if rule.name == "np.dot" and len(values) == 2:
        return _dot(*(atom(v) for v in values.values()))
    if rule.name in ("np.array", "np.asarray") and len(values) == 1:
        display = facts.displays.get(getattr(next(iter(values.values())), "id", None))
        return None if display is None else _stacked([atom(e) for e in display.elts])
    if rule.name in _MATMUL and len(values) == 2:
        return matmul_shape(*(atom(v) for v in values.values()))
    if rule.name == "np.reshape" and set(values) <= {"a", "shape", "newshape"} and \
            len(values) == 2:
        found = atom(values["a"])
        shape = values.get("shape", values.get("newshape"))
        return found if found is _PENDING else reshape_shape(found, shape, facts.values)
    if rule.name == "np.transpose" and set(values) == {"a"}:
        found = atom(values["a"])
        return found if found in (None, _PENDING) else (found[0][::-1], found[1])
    if rule.name.startswith("math.") or rule.name == "float":
        return (), WEAK
    if rule.name in _SHAPED_LIKE:     # helpers of generated gradient code, read again
        return _shaped_like(values, *_SHAPED_LIKE[rule.name], atom)
    if rule.primitive in (np.fft.rfft, np.fft.irfft):
        return _half_spectrum(rule.primitive, values, atom, facts.values)
    return None


class _NotKnown(Exception):
    """An argument whose stand-in cannot be made (`pending`: not evaluated yet)."""

    def __init__(self, pending=False):
        super().__init__()
        self.pending = pending


def _evaluated(primitive, call, atom, facts):
    """(shape, dtype) of what `primitive` (one of _BY_EVALUATION) gives, found by calling
    it on stand-ins: zero-stride arrays of its array arguments' shapes and dtypes (no
    memory), lists of them for list displays, and its constant arguments; None when an
    argument is not known (a Python number, whose dtype may be int or float, included)."""
    def stand_in(node):
        if isinstance(node, gast.Name) and node.id in facts.displays:
            return [stand_in(e) for e in facts.displays[node.id].elts]
        if isinstance(node, gast.Name) and node.id in facts.tuples:
            return facts.tuples[node.id]
        if isinstance(node, gast.Name):
            found = atom(node)
            if found is _PENDING or found is None or not isinstance(found[1], np.dtype):
                raise _NotKnown(found is _PENDING)
            return np.broadcast_to(np.zeros((), found[1]), found[0])
        value = constant(node, NOT_CONSTANT)
        if value is NOT_CONSTANT:
            raise _NotKnown()
        return value
    try:
        args = [stand_in(a) for a in call.args]
        kwargs = {k.arg: stand_in(k.value) for k in call.keywords if k.arg is not None}
    except _NotKnown as missing:
        return _PENDING if missing.pending else None
    if len(kwargs) != len(call.keywords):
        return None
    arrays = [a for given in args + list(kwargs.values())
              for a in (given if isinstance(given, list) else [given])
              if isinstance(a, np.ndarray)]
    if sum(a.size for a in arrays) > _STAND_IN_LIMIT:
        return None         # (the result would be made: as large as these)
    try:
        with np.errstate(all="ignore"):
            result = primitive(*args, **kwargs)
    except Exception:       # (what the call itself would raise, at run time)
        return None
    if not isinstance(result, (np.ndarray, np.generic)):
        return None
    return np.shape(result), result.dtype


_STAND_IN_LIMIT = 1 << 22          # elements: larger arguments' results are not made here

# NumPy functions whose result's shape and dtype follow from their arguments' shapes and
# dtypes and their constant options alone, and hold no more elements than their arguments
# together: _evaluated runs them on stand-ins to find out (np.diag of a vector, np.tile,
# np.outer, which may be much larger, are not here)
_BY_EVALUATION = frozenset(id(f) for f in (
    np.concatenate, np.stack, np.hstack, np.vstack, np.column_stack, np.dstack,
    np.expand_dims, np.squeeze, np.atleast_1d, np.atleast_2d, np.atleast_3d, np.cumsum,
    np.cumprod, np.sort, np.flip, np.fliplr, np.flipud, np.roll, np.diff, np.triu, np.tril,
    np.diagonal, np.trace, np.swapaxes, np.moveaxis, np.transpose, np.ravel, np.squeeze))


def _larger(primitive, call, atom, facts):
    """(shape, dtype) of np.outer(a, b), np.einsum(subscripts, *operands) with an
    explicit output ('ij,j->i'), np.broadcast_to(x, shape) of a constant shape, np.diag,
    and np.linalg.solve and inv of square 2-d matrices, worked out from the operands'
    (their results may be much larger than the operands, or fail on stand-ins: not run),
    or None."""
    if call.keywords or any(isinstance(a, gast.Starred) for a in call.args):
        return None
    if primitive is np.einsum:
        spec, operands = constant(call.args[0], None) if call.args else None, call.args[1:]
    else:
        spec, operands = None, call.args[:1 if primitive is np.broadcast_to else 2]
    found = [atom(a) for a in operands]
    if _PENDING in found:
        return _PENDING
    if None in found or not found:
        return None
    dtypes = {dtype for _, dtype in found}
    dtype = dtypes.pop() if len(dtypes) == 1 and isinstance(next(iter(dtypes)), np.dtype) \
        else None
    if primitive is np.outer and len(found) == 2:
        return (math.prod(found[0][0]), math.prod(found[1][0])), dtype
    if primitive is np.diag and len(call.args) == 1 and len(found[0][0]) in (1, 2):
        shape = found[0][0]
        return ((shape[0], shape[0]) if len(shape) == 1 else (min(shape),)), dtype
    if primitive is np.linalg.inv and len(found) == 1 and len(found[0][0]) == 2 and \
            found[0][0][0] == found[0][0][1]:
        return found[0][0], dtype if dtype in (np.dtype(np.float64),) else None
    if primitive is np.linalg.solve and len(found) == 2:
        (a, _), (b, _) = found
        if len(a) == 2 and a[0] == a[1] and len(b) in (1, 2) and b[0] == a[0]:
            return b, dtype if dtype in (np.dtype(np.float64),) else None
        return None
    if primitive is np.broadcast_to and len(call.args) == 2:
        shape = atom_value(call.args[1], facts.values)      # (ints from shapes too)
        shape = constant(call.args[1], NOT_CONSTANT) if shape is None else shape
        shape = facts.tuples.get(call.args[1].id, shape) \
            if isinstance(call.args[1], gast.Name) else shape
        shape = (shape,) if type(shape) is int else shape
        if not isinstance(shape, tuple) or not all(type(n) is int for n in shape):
            return None
        try:
            fits = np.broadcast_shapes(found[0][0], shape) == shape
        except ValueError:
            return None
        return (shape, dtype) if fits else None
    if primitive is np.einsum and isinstance(spec, str) and "->" in spec and \
            "." not in spec:
        inputs, output = spec.replace(" ", "").split("->")
        inputs = inputs.split(",")
        if len(inputs) != len(found):
            return None
        dims = {}
        for letters, (shape, _) in zip(inputs, found):
            if len(letters) != len(shape):
                return None
            for letter, n in zip(letters, shape):
                if dims.setdefault(letter, n) != n:
                    return None
        if not all(letter in dims for letter in output):
            return None
        return tuple(dims[letter] for letter in output), dtype
    return None


def _stacked(items):
    """(shape, dtype) of np.array of a list of items of these (shape, dtype)s: their
    common shape after one axis; the dtype where it is certain (the items' one, or
    float64 for float64 arrays among Python numbers), else None."""
    if _PENDING in items:
        return _PENDING
    if not items or None in items or len({shape for shape, _ in items}) != 1:
        return None
    dtypes = {dtype for _, dtype in items}
    typed = dtypes - {WEAK}
    if len(typed) != 1 or None in typed or WEAK in dtypes and typed != {np.dtype(np.float64)}:
        dtype = None
    else:
        dtype = typed.pop()
    return (len(items),) + items[0][0], dtype


def _half_spectrum(transform, values, atom, numbers):
    """(shape, dtype) of np.fft.rfft or np.fft.irfft over one axis: that axis becomes
    n // 2 + 1 (rfft) or n (irfft; 2 * (m - 1) by default), n a constant or a name whose
    int is known; the dtype is the one NumPy gives for the input's (complex128 from
    float64; NumPy 2 keeps float32's precision)."""
    if set(values) - {"a", "n", "axis", "norm"} or "a" not in values:
        return None
    found = atom(values["a"])
    if found in (None, _PENDING) or not found[0] or not isinstance(found[1], np.dtype):
        return found if found is _PENDING else None
    shape, dtype = list(found[0]), found[1]
    axis, n = constant(values.get("axis"), -1), values.get("n")
    n = numbers.get(n.id) if isinstance(n, gast.Name) else constant(n, None)
    if type(axis) is not int or not -len(shape) <= axis < len(shape) or \
            not (n is None or type(n) is int and n > 0):
        return None
    m = shape[axis]
    if transform is np.fft.rfft:
        shape[axis] = (m if n is None else n) // 2 + 1
    else:
        shape[axis] = 2 * (m - 1) if n is None else n
    if shape[axis] <= 0:
        return None
    return tuple(shape), transform(np.zeros(2, dtype)).dtype


def _shaped_like(values, param, typed, atom):
    """The shape of `param`, the dtype of the `typed` operands (None: not known)."""
    found = [atom(values[p]) if p in values else None for p in typed]
    shape = atom(values[param]) if param in values else None
    if any(f is _PENDING for f in found) or shape is _PENDING:
        return _PENDING
    if shape is None or any(f is None for f in found):
        return None
    dtypes = [f[1] for f in found]
    dtype = np.result_type(*dtypes) if all(isinstance(d, np.dtype) for d in dtypes) else None
    return shape[0], dtype


def _call_result(op, atom, trees, call_result):
    """(shape, dtype) of what a user function returns for arguments of the shapes known
    here (`call_result`: summaries.Callees.call_result), or None. `trees`: the caller's
    `unwritten_leaves`."""
    found = {p: atom(a) for p, a in op.args.items() if isinstance(a, gast.Name)}
    if any(f is _PENDING for f in found.values()):
        return _PENDING
    arrays = tuple((p, f[0], f[1]) for p, f in sorted(found.items())
                   if f is not None and f[0] != () and isinstance(f[1], np.dtype))
    arrays += tuple(sorted((((p,) + path[1:], v[0], v[1]) for p, a in op.args.items()
                            if isinstance(a, gast.Name)
                            for path, v in trees.items() if path[0] == a.id), key=repr))
    if not arrays or call_result is None:
        return None
    # (Python numbers passed too: `h(x, 3.0)`'s result then has the shape of h's x * s)
    numbers = tuple((p, (), WEAK) for p, a in sorted(op.args.items()) if
                    found.get(p) == ((), WEAK) or isinstance(a, gast.Constant) and
                    type(a.value) in (int, float))
    return call_result(op.rule, arrays + numbers)


def _reduction(rule, values, atom, tuples):
    if set(values) - {rule.params[0], "axis", "keepdims"}:
        return None         # ddof, where=, dtype=, out=: leave it to the run time
    axis = values.get("axis")
    axis = tuples[axis.id] if isinstance(axis, gast.Name) and axis.id in tuples \
        else constant(axis, None)
    return reduce_shape(atom(values.get(rule.params[0])), axis,
                        constant(values.get("keepdims"), False))


