"""What code with checkpointed loops calls (frontend/forms/checkpoint.py)."""
from __future__ import annotations

import math


def checkpoint_every(trips, policy="sqrt") -> int:
    """How many trips of a loop of `trips` trips each segment runs: about sqrt(trips)."""
    return max(1, math.isqrt(max(int(trips), 0)))
