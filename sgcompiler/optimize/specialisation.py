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

from ..frontend.resolve import local_names
from ..ir.builders import store
from .cleanup import pure_names, runtime_helpers


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
    # need not match the primal's to the last bit: optimize/hoisting.py)
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
    read = {n.id for stmt in backward.body if stmt is not unpack for n in gast.walk(stmt)
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
