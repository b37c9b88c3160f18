"""What the optimizations know about the code they rewrite (`Specialisation`), worked out
once per generated function by the recipes (pipeline/__init__.py, pipeline/forward_mode.py) and passed to
every step of pipeline.OPTIMIZATIONS; and a step of a piece's recipe: values a forward
function saves that its optimized backward no longer reads are not saved, and constants
(`_arg = (1, 1)`) are made again in the backward rather than saved.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import gast
import numpy

from ...frontend.resolve import local_names
from ...ir.builders import load, store
from ..tidy.cleanup import pure_names, runtime_helpers
from ...ir.blocks import walk


@dataclass(frozen=True)
class Specialisation:
    """What the optimizations know about the code they rewrite, worked out once."""

    arrays: dict            # parameter -> (shape, dtype) the code is specialised for ({}: any)
    facts: dict             # name -> (shape, dtype) the shapes pass found for the primal
    np_name: str | None     # numpy's name in the generated code (when specialised)
    small: object           # name -> whether it holds a number (nothing worth freeing)
    helpers: dict           # names of runtime helpers in the code -> the helpers
    user_names: frozenset   # the user's own names: never folded away
    pure: frozenset         # names whose calls only compute a value (helpers, namespaces)
    # whether loop-invariant products move out of loops (tangent code, whose values
    # need not match the primal's to the last bit: optimize/loops/hoisting.py)
    hoist: bool = False


def _specialisation(linker, src, shape_facts, norm, arrays, facts,
                    hoist=False) -> Specialisation:
    np_name = linker.name_for("np", numpy) if arrays else None
    return Specialisation(arrays, facts, np_name, _small(shape_facts, norm.namer),
                          runtime_helpers(linker.names), frozenset(local_names(src.tree)),
                          pure_names(linker.names, norm.body, src.lookup), hoist)


def _nothing_small(name) -> bool:
    return False


def _drop_unread_saved(forward, backward):
    """Values the forward function saves that the optimized backward no longer reads
    (an operand it read only for its shape, say) are not saved."""
    unpack, pack, names = _saved_tuple(forward, backward)
    if pack is None:
        return
    read = {n.id for stmt in backward.body if stmt is not unpack for n in walk(stmt)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}
    keep = [k for k, name in enumerate(names) if name in read]
    unpack.targets[0].elts = [unpack.targets[0].elts[k] for k in keep]
    pack.elts = [pack.elts[k] for k in keep]
    if not keep:
        backward.body.remove(unpack)


def _saved_tuple(forward, backward):
    """(the backward's `a, b = _saved`, the forward's returned `(a, b)`, the names), or
    (None, None, None) when the two do not have that shape."""
    saved = backward.args.args[1].id
    unpack = next((s for s in backward.body if isinstance(s, gast.Assign) and
                   isinstance(s.targets[0], gast.Tuple) and isinstance(s.value, gast.Name)
                   and s.value.id == saved), None)
    last = forward.body[-1] if forward.body else None
    if unpack is None or not isinstance(last, gast.Return) or \
            not isinstance(last.value, gast.Tuple) or len(last.value.elts) != 2 or \
            not isinstance(last.value.elts[1], gast.Tuple):
        return None, None, None
    pack = last.value.elts[1]
    names = [e.id for e in unpack.targets[0].elts]
    if len(pack.elts) != len(names):
        return None, None, None
    return unpack, pack, names


def _remake_constants(forward, backward):
    """A saved value the forward assigns once from a constant (`_arg = (1, 1)`, the bands
    of solve_banded) is assigned again at the top of the backward instead of saved: read
    again for grad of grad, a value taken out of the saved tuple depends on the
    differentiated arguments, and an integer that seems to is refused."""
    unpack, pack, names = _saved_tuple(forward, backward)
    if pack is None:
        return
    stores = [n.id for n in gast.walk(forward) if isinstance(n, gast.Name)
              and isinstance(n.ctx, gast.Store)]
    made = {s.targets[0].id: s.value for s in forward.body if isinstance(s, gast.Assign)
            and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
            and _is_constant(s.value) and stores.count(s.targets[0].id) == 1}
    remade = [k for k, e in enumerate(pack.elts) if isinstance(e, gast.Name) and e.id in made]
    if not remade:
        return
    at = backward.body.index(unpack)
    backward.body[at:at] = [gast.Assign(targets=[store(names[k])], type_comment=None,
                                        value=copy.deepcopy(made[pack.elts[k].id]))
                            for k in remade]
    keep = [k for k in range(len(names)) if k not in remade]
    unpack.targets[0].elts = [unpack.targets[0].elts[k] for k in keep]
    pack.elts = [pack.elts[k] for k in keep]
    if not keep:
        backward.body.remove(unpack)


def _stop_constants(forward, backward, stop: str):
    """For code to be read again: a saved value the forward computes from no parameter
    (`xp = np.array([...])`, a global's slice) is `stop_gradient(...)` in the backward, so
    that taken out of the saved tuple it does not seem to depend on the differentiated
    arguments (np.interp's xp, which has no gradient, was refused). Only values free of
    every parameter: one free of the first order's arguments alone may depend on an
    argument the next order differentiates. `stop` is stop_gradient's name in the code."""
    unpack, pack, names = _saved_tuple(forward, backward)
    if pack is None:
        return
    free = _parameter_free(forward)
    stopped = [names[k] for k, e in enumerate(pack.elts)
               if isinstance(e, gast.Name) and e.id in free]
    at = backward.body.index(unpack) + 1
    backward.body[at:at] = [gast.Assign(targets=[store(n)], type_comment=None,
                                        value=gast.Call(func=load(stop), args=[load(n)],
                                                        keywords=[]))
                            for n in stopped]


def _parameter_free(forward) -> set:
    """The names the forward assigns once, at its top level, from values that read no
    parameter (nor any name it assigns elsewhere)."""
    stores = [n.id for n in gast.walk(forward) if isinstance(n, gast.Name)
              and isinstance(n.ctx, gast.Store)]
    assigned = set(stores) | {a.id for a in forward.args.args}
    changed = _changed_in_place(forward) | _shared(forward)
    free = set()
    for stmt in forward.body:
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], gast.Name) and stores.count(stmt.targets[0].id) == 1 \
                and stmt.targets[0].id not in changed:
            read = {n.id for n in gast.walk(stmt.value) if isinstance(n, gast.Name)}
            if all(r in free or r not in assigned for r in read):
                free.add(stmt.targets[0].id)
    return free


_MUTABLE = (gast.List, gast.Dict, gast.Set, gast.ListComp, gast.DictComp, gast.SetComp)


def _shared(tree) -> set:
    """Names of lists, dicts and sets that are read other than as the argument of a
    library call (np.array(_arg)): an alias, or a function given them, may change them."""
    mutable = {s.targets[0].id for s in gast.walk(tree) if isinstance(s, gast.Assign)
               and isinstance(s.targets[0], gast.Name) and isinstance(s.value, _MUTABLE)}
    local = {n.id for n in gast.walk(tree) if isinstance(n, gast.Name)
             and not isinstance(n.ctx, gast.Load)} | {a.id for a in tree.args.args}
    passed = {id(a) for c in gast.walk(tree) if isinstance(c, gast.Call)
              and _module_function(c.func, local) for a in c.args}
    return {n.id for n in gast.walk(tree) if isinstance(n, gast.Name) and n.id in mutable
            and isinstance(n.ctx, gast.Load) and id(n) not in passed}
_READ_ONLY = frozenset({"shape", "ndim", "dtype", "size", "T", "real", "imag"})


def _changed_in_place(tree) -> set:
    """Names the code may change without assigning them: a method called on them
    (`_tape.append`), an element written (`a[i] = v`, `a[i] += v`), an `out=` buffer, or
    the first argument of an add_at."""
    changed = set()
    for node in gast.walk(tree):
        if isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name) and \
                node.attr not in _READ_ONLY:
            changed.add(node.value.id)
        elif isinstance(node, gast.Subscript) and not isinstance(node.ctx, gast.Load):
            changed.update(n.id for n in gast.walk(node.value) if isinstance(n, gast.Name))
        elif isinstance(node, gast.Call):
            outs = [k.value for k in node.keywords if k.arg == "out"]
            if node.args and "at" in _called_name(node.func):
                outs.append(node.args[0])
            changed.update(n.id for o in outs for n in gast.walk(o) if isinstance(n, gast.Name))
    return changed


def _module_function(func, local) -> bool:
    """Whether `func` is a module's function (np.array, scipy.linalg.solve), not a
    method of a local value or a function of the user's."""
    if not isinstance(func, gast.Attribute):
        return False
    while isinstance(func, gast.Attribute):
        func = func.value
    return isinstance(func, gast.Name) and func.id not in local


def _called_name(func) -> str:
    return func.attr if isinstance(func, gast.Attribute) else \
        func.id if isinstance(func, gast.Name) else ""


def _is_constant(node) -> bool:
    """A number, string, bool or None, or a tuple of them (`-1` included)."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        node = node.operand
    if isinstance(node, gast.Tuple):
        return all(_is_constant(e) for e in node.elts)
    return isinstance(node, gast.Constant)


def _small(shape_facts, namer):
    """name -> whether it holds a number (a scalar variable, or its adjoint or tangent)."""
    derived = {**namer.adjoints(), **namer.tangents()}
    return lambda name: shape_facts.is_scalar(derived.get(name, name))
