"""Compiling deeply nested code: the recipes in pipeline/__init__.py and pipeline/forward_mode.py run
through `deep`, which retries a compilation that ran out of recursion on a thread with a
large stack, and refuses, at the deepest expression, code nested deeper than even that.
"""
from __future__ import annotations

import ast
import contextlib
import gc
import inspect
import sys
import textwrap
import threading

from ..errors import SGCompilerError
from ..frontend import depends
from ..frontend.depends import LOCK


_DEEP_LIMIT = 60_000            # frames: about 4 per level of nesting, so ~15000 levels
_DEEP_STACK = 512 * 2 ** 20     # bytes of stack for the thread that compiles deep code
_DEEP_LOCK = threading.Lock()
_DEEP_RUNNING = [0, None]       # deep compilations running, the recursion limit before


def deep(fn, work, *args, **kwargs):
    """`work(*args)`; when it runs out of recursion (the passes walk expressions
    recursively, and CPython compiles `x*x*...*x` 2000 terms long), once more on a thread
    with a large stack under a higher recursion limit. Deeper than that is refused.

    Raises:
        SGCompilerError: for an expression nested too deeply even so.
    """
    if threading.current_thread().name == "sgcompiler-deep" or LOCK._is_owned():
        # (on the worker already; or inside a compilation this thread holds the lock
        # for: the outermost call retries, since a worker would wait for the lock)
        return work(*args, **kwargs)
    with _collection_paused():
        return _deep(fn, work, *args, **kwargs)


@contextlib.contextmanager
def _collection_paused():
    """Python's cyclic garbage collector paused while a compilation runs (and resumed
    after, as it was): the passes make many small objects that live until the end, and
    each collection walks them all again, so compile time grew faster than the length of
    the function (at 2,000 statements a third of it went to collections)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _deep(fn, work, *args, **kwargs):
    try:
        return work(*args, **kwargs)
    except RecursionError:
        pass
    outcome = _on_a_large_stack(work, args, kwargs)
    error = outcome.get("error")
    if isinstance(error, RecursionError):
        raise _too_deep(fn) from None
    if error is not None:
        raise error
    return outcome["value"]


def _on_a_large_stack(work, args, kwargs) -> dict:
    """{"value": work(*args)} or {"error": what it raised}, run on a thread with a large
    stack under a higher recursion limit (restored when no such thread runs)."""
    outcome = {}
    reading = depends.recordings()

    def run():
        depends.record_into(reading)    # the reads count for the caller's recordings
        try:
            outcome["value"] = work(*args, **kwargs)
        except BaseException as exc:        # (re-raised in the caller's thread)
            outcome["error"] = exc
    with _DEEP_LOCK:
        if not _DEEP_RUNNING[0]:
            _DEEP_RUNNING[1] = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_DEEP_LIMIT, _DEEP_RUNNING[1]))
        _DEEP_RUNNING[0] += 1
        size = threading.stack_size(_DEEP_STACK)
        try:
            thread = threading.Thread(target=run, name="sgcompiler-deep")
            thread.start()
        finally:
            threading.stack_size(size)
    try:
        thread.join()
    finally:
        with _DEEP_LOCK:
            _DEEP_RUNNING[0] -= 1
            if not _DEEP_RUNNING[0]:
                sys.setrecursionlimit(_DEEP_RUNNING[1])
    return outcome


def _too_deep(fn) -> SGCompilerError:
    """An error at the most deeply nested expression of `fn` (found without recursion)."""
    src = parse_source_text(fn)
    deepest, line = 0, None
    todo = [(node, 1) for node in ast.iter_child_nodes(src)] if src is not None else []
    while todo:
        node, depth = todo.pop()
        if depth > deepest and hasattr(node, "lineno"):
            deepest, line = depth, node.lineno
        todo.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    where = f"{fn.__code__.co_filename.rsplit('/', 1)[-1]}:" \
            f"{fn.__code__.co_firstlineno + (line or 1) - 1}"
    return SGCompilerError(f"{fn.__name__} ({where}): an expression nested {deepest} levels "
                           "deep is too deep for sgcompiler; split it into several "
                           "statements")


def parse_source_text(fn):
    """`fn`'s source as a stdlib ast Module (its first line is line 1), or None."""
    try:
        return ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError, RecursionError, MemoryError):
        return None
