"""Parameter trees of more types: NamedTuples, dataclasses, and registered containers.

A record is a container whose children are attributes: `collections.namedtuple` and
`typing.NamedTuple` types, `@dataclass` types (frozen or not), and any type registered with
`register_tree`. The function reads them as attributes (`params.w`, compiled as
`field(params, 'w')`), and the gradient with respect to one is a record of the same type:

    @dataclasses.dataclass
    class Layer:
        w: np.ndarray
        b: np.ndarray

    grad(loss)(Layer(w, b), x)      # -> Layer(w=dloss/dw, b=dloss/db)

Records may sit in dicts, lists and tuples, and hold them, to any depth.
"""
from __future__ import annotations

import dataclasses

import numpy as np

_REGISTERED: dict = {}      # type -> (names of the children, make(obj, children))
# the leaves and containers of most trees, answered without the dataclass test (a wrapper
# asks about every leaf of its arguments on each call)
_PLAIN = frozenset({np.ndarray, float, int, dict, list, tuple, type(None)})


def register_tree(cls: type, fields, make=None) -> type:
    """Let values of `cls` be parameter trees: `fields` names the attributes that hold
    children (arrays, floats or other trees); `make(obj, children)` returns a new value of
    `cls` like `obj` with the children (a dict by field name) replaced; by default
    `cls(**children)`. Returns `cls`, so it can decorate a class with no arguments left.

    Raises:
        TypeError: when `cls` is not a class or `fields` is empty.
    """
    if not isinstance(cls, type):
        raise TypeError(f"register_tree: expected a class, got {cls!r}")
    fields = tuple(fields)
    if not fields or not all(isinstance(f, str) for f in fields):
        raise TypeError("register_tree: fields must name the attributes that hold children")
    _REGISTERED[cls] = (fields, make or (lambda obj, children: cls(**children)))
    return cls


def is_record_type(t: type) -> bool:
    if t in _REGISTERED:
        return True
    return t not in _PLAIN and ((issubclass(t, tuple) and hasattr(t, "_fields")) or
                                (dataclasses.is_dataclass(t) and isinstance(t, type)))


def is_record(obj) -> bool:
    return is_record_type(type(obj))


def record_fields(obj) -> tuple[str, ...]:
    t = type(obj)
    if t in _REGISTERED:
        return _REGISTERED[t][0]
    if isinstance(obj, tuple):
        return tuple(obj._fields)
    return tuple(f.name for f in dataclasses.fields(obj))


def record_items(obj):
    """(field name, child) of a record, in field order."""
    return [(name, getattr(obj, name)) for name in record_fields(obj)]


def rebuild(obj, children: dict):
    """A record of `obj`'s type like `obj`, with the children by field name replaced."""
    t = type(obj)
    if t in _REGISTERED:
        return _REGISTERED[t][1](obj, children)
    if isinstance(obj, tuple):
        return t(**children)
    return dataclasses.replace(obj, **children)
