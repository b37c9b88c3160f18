"""What code with checkpointed loops calls (frontend/forms/checkpoint.py)."""
from __future__ import annotations

import math


def checkpoint_every(trips, policy="sqrt") -> int:
    """How many trips of a loop of `trips` trips each segment runs: about sqrt(trips)."""
    return max(1, math.isqrt(max(int(trips), 0)))


class checkpoint:
    """`with sgcompiler.checkpoint():` around one `for` or `while` loop: its gradient runs
    that loop in segments of about sqrt(n) trips (`checkpoint(k)`: k trips), as
    `grad(f, checkpoint=...)` does for every outermost loop (frontend/forms/contexts.py
    reads the block). Run as Python, it does nothing: the loop runs as written."""

    def __init__(self, every="sqrt"):
        self.every = every

    def __enter__(self):
        return None

    def __exit__(self, *exc_info):
        return False
