"""What the fuzz tests share in one test session: the seed of this run's new programs, and
the counts of everything a fuzzer did not check (refusals, skipped points, unstable
references), which conftest.py prints at the end of the run.

Each run checks the fixed regression set of each fuzzer and, beside it, a few programs
drawn from a seed that changes every run (from the clock). The seed is printed in the
header and the summary of the run and in every failure message; set SGC_FUZZ_SEED to run
the same programs again:

    SGC_FUZZ_SEED=123456 python3 -m pytest tests/test_wide_shape_programs.py

Program k of a run has the seed `SGC_FUZZ_SEED + k` in its fuzzer's own script
(`python3 tests/shape_fuzz_wide.py --seed N`, `python3 tests/tree_fuzz.py --seed N`,
`python3 tests/program_check.py --extended --count 1 --start N`, which prints what was
wrong); each failure message says which, with the test to run again.
"""
from __future__ import annotations

import collections
import os
import time

ENV = "SGC_FUZZ_SEED"
FUZZ_SEED = int(os.environ.get(ENV) or time.time_ns() // 1000 % 10 ** 9)

# {fuzzer: Counter({"ok": n, "refused (known: ...)": n, ...})}, filled as the tests run
COUNTS: dict = collections.defaultdict(collections.Counter)


def program_seeds(count: int) -> list[int]:
    """The seeds of this run's new programs."""
    return [FUZZ_SEED + k for k in range(count)]


def reproduce(seed: int, script: str, test: str) -> str:
    """How to run one program of this run again (for a failure message): the test that
    draws it (`test`: file::name) with this run's seed, or the fuzzer's own script on
    it alone; both from the repository root."""
    return (f"program seed {seed} from {ENV}={FUZZ_SEED}; rerun it with "
            f"`{ENV}={FUZZ_SEED} python3 -m pytest -q tests/{test}` or "
            f"`PYTHONPATH=. {script}`")


def count(fuzzer: str, what: str, n: int = 1) -> None:
    COUNTS[fuzzer][what] += n


def summary() -> list[str]:
    lines = [f"fuzz seed of this run: {ENV}={FUZZ_SEED}"]
    for fuzzer in sorted(COUNTS):
        parts = ", ".join(f"{what} {n}" for what, n in sorted(COUNTS[fuzzer].items()))
        lines.append(f"  {fuzzer}: {parts}")
    return lines
