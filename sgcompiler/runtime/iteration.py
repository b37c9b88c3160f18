"""What a loop over a parameter checks when it runs (frontend/forms/sugar.py puts the
check before the loop): the front end reads `for v in xs` by position (v = xs[i]), which
is Python's loop for a list, a tuple or an array, but not for a dict (Python gives its
keys), a set or a dict view (neither can be indexed). A parameter's type is known only
when the code runs, so the check is made then, and it names the loop's line.
"""
from __future__ import annotations

from collections.abc import Mapping, MappingView, Set

from ..errors import SGCompilerError


def by_position(items, where, text=""):
    """Refuse a loop over `items` read as items[0], items[1], ... when `items` is a dict,
    a set or a dict view. `where` is `f (file:line)`, `text` that line."""
    if isinstance(items, (Mapping, Set, MappingView)):
        kind = "a dict" if isinstance(items, Mapping) else \
            "a set" if isinstance(items, Set) else "a dict view"
        shown = f" [in: {text}]" if text else ""
        advice = "loop over d.keys(), d.values() or d.items() instead" \
            if isinstance(items, Mapping) else "loop over a list (sorted(s) or list(s)) instead"
        raise SGCompilerError(
            f"{where}: this loop runs over {kind}, which sgcompiler reads by position "
            f"(items[0], items[1], ...) and so not as Python iterates it; {advice}{shown}")
