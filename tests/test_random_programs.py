"""Property-based test: random small programs, sgcompiler's gradient vs finite differences.

Hypothesis builds the source of `def f(x, y):` from the grammar in program_grammar.py
(assignments, arithmetic, NumPy elementwise calls, reductions, indexing, if/elif/else,
for/while with break/continue, lists, writes into a copied array, stop_gradient, helper
calls), and program_check.py compares `value_and_grad(f, wrt=(0, 1))` with central
differences at two points. A failure prints the generated source and the point.

The default run checks 80 programs drawn with a fixed seed (derandomized, so CI is
deterministic) and, to stay fast, does not shrink a failure. For a larger run, with new
programs each time and shrinking, set SGCOMPILER_FUZZ_EXAMPLES:

    SGCOMPILER_FUZZ_EXAMPLES=2000 python3 -m pytest tests/test_random_programs.py \\
        --hypothesis-show-statistics

For a long run that goes on past failures and saves each one, use
`python3 tests/program_check.py --count N` (see its docstring).

Every bug this test has found has a minimal reproducer in test_fuzz_regressions.py.
"""
import os

import pytest
from hypothesis import HealthCheck, Phase, event, given, settings, strategies as st

from program_check import check_factory_program, check_program
from program_grammar import Choices, write_factory_program, write_program

EXAMPLES = int(os.environ.get("SGCOMPILER_FUZZ_EXAMPLES", "0"))
DEFAULT_RUN = not EXAMPLES


@st.composite
def programs(draw):
    """(source, y is a Python float) of a random program."""
    return write_program(Choices(lambda n: draw(st.integers(0, n - 1))))


@settings(max_examples=EXAMPLES or 80, derandomize=DEFAULT_RUN, deadline=None,
          database=None, print_blob=not DEFAULT_RUN,
          phases=(Phase.explicit, Phase.generate) if DEFAULT_RUN else tuple(Phase),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs())
def test_gradient_of_random_program_matches_finite_differences(program):
    source, y_float = program
    outcome = check_program(source, y_float)
    for reason in outcome.skips:
        event(f"point skipped: {reason}")
    event(f"program {outcome.status}")
    if outcome.status == "refused":
        pytest.fail(f"sgcompiler refused a program the grammar means to be supported:\n"
                    f"{source}\n{outcome.detail}")
    assert outcome.status != "failed", \
        f"y is a {'float' if y_float else 'array'}\n{source}\n{outcome.detail}"


@st.composite
def factory_programs(draw):
    """(source, y is a Python float) of a random `make(act, k)` program."""
    return write_factory_program(Choices(lambda n: draw(st.integers(0, n - 1))))


@settings(max_examples=EXAMPLES or 25, derandomize=DEFAULT_RUN, deadline=None,
          database=None, print_blob=not DEFAULT_RUN,
          phases=(Phase.explicit, Phase.generate) if DEFAULT_RUN else tuple(Phase),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(factory_programs())
def test_gradient_is_right_after_names_change_meaning(program):
    """Closures of one factory over different functions and defaults, and a module-level
    name rebound between calls of one gradient: each gradient against finite differences
    (a refusal is right only for a helper's *args, and must say so)."""
    source, y_float = program
    outcome = check_factory_program(source, y_float)
    event(f"program {outcome.status}")
    if outcome.status == "refused":
        pytest.fail(f"sgcompiler refused a program the grammar means to be supported:\n"
                    f"{source}\n{outcome.detail}")
    assert outcome.status != "failed", \
        f"y is a {'float' if y_float else 'array'}\n{source}\n{outcome.detail}"
