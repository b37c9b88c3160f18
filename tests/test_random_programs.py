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

A second test draws 6 programs that may also hold the productions in
program_grammar.EXTRAS (expressions nested hundreds of levels deep, comments holding line
break characters); `program_check.py --extras deep odd_comments` runs them long.

Every bug this test has found has a minimal reproducer in test_fuzz_regressions.py.
"""
import os

import pytest
from hypothesis import HealthCheck, Phase, event, given, settings, strategies as st

from program_check import check_program
from program_grammar import EXTRAS, Choices, write_program

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
def programs_with_extras(draw):
    """(source, y is a Python float) of a random program that may also hold deep
    expressions and comments with line break characters (program_grammar.EXTRAS)."""
    return write_program(Choices(lambda n: draw(st.integers(0, n - 1))),
                         extras=tuple(EXTRAS))


@settings(max_examples=EXAMPLES or 6, derandomize=DEFAULT_RUN, deadline=None,
          database=None, print_blob=not DEFAULT_RUN,
          phases=(Phase.explicit, Phase.generate) if DEFAULT_RUN else tuple(Phase),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs_with_extras())
def test_gradient_of_random_program_with_deep_expressions_and_odd_comments(program):
    source, y_float = program
    outcome = check_program(source, y_float)
    event(f"program {outcome.status}")
    if outcome.status == "refused":
        pytest.fail(f"sgcompiler refused a program the grammar means to be supported:\n"
                    f"{source}\n{outcome.detail}")
    assert outcome.status != "failed", \
        f"y is a {'float' if y_float else 'array'}\n{ascii(source)}\n{outcome.detail}"
