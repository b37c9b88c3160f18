"""What the optimizations know about the code they rewrite (`Specialisation`), worked out
once per generated function by the recipes (pipeline/__init__.py, pipeline/forward_mode.py) and passed to
every step of pipeline.OPTIMIZATIONS; and a step of a piece's recipe: values a forward
function saves that its optimized backward no longer reads are not saved.
"""
from __future__ import annotations

from dataclasses import dataclass

import gast
import numpy

from ..frontend.resolve import local_names
from .cleanup import pure_names, runtime_helpers
from ..ir.blocks import walk


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
    saved = backward.args.args[1].id
    unpack = next((s for s in backward.body if isinstance(s, gast.Assign) and
                   isinstance(s.targets[0], gast.Tuple) and isinstance(s.value, gast.Name)
                   and s.value.id == saved), None)
    last = forward.body[-1] if forward.body else None
    if unpack is None or not isinstance(last, gast.Return) or \
            not isinstance(last.value, gast.Tuple) or len(last.value.elts) != 2 or \
            not isinstance(last.value.elts[1], gast.Tuple):
        return
    pack = last.value.elts[1]
    names = [e.id for e in unpack.targets[0].elts]
    if len(pack.elts) != len(names):
        return
    read = {n.id for stmt in backward.body if stmt is not unpack for n in walk(stmt)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}
    keep = [k for k, name in enumerate(names) if name in read]
    unpack.targets[0].elts = [unpack.targets[0].elts[k] for k in keep]
    pack.elts = [pack.elts[k] for k in keep]
    if not keep:
        backward.body.remove(unpack)


def _small(shape_facts, namer):
    """name -> whether it holds a number (a scalar variable, or its adjoint or tangent)."""
    derived = {**namer.adjoints(), **namer.tangents()}
    return lambda name: shape_facts.is_scalar(derived.get(name, name))
