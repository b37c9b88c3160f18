"""A fixed set of programs from the extended productions of the three random-program
generators: lists, tuples and np.array / np.stack / np.concatenate built from a mix of
constants and active values (nested too), and writes through indices with duplicates
(`=`, `+=`, `-=`, `*=`); the tree fuzzer also passes such a list to a helper.

These productions found issue 13's bugs 1 and 5 and six more (see test_mixed_containers.py
and test_duplicate_indices.py). Their programs are kept apart from the generators' own
fixed sets, which stay as they were drawn. Long runs: `program_check.py --extended`,
`shape_fuzz_wide.py --extended`, `tree_fuzz.py --extended`.
"""
import random
import re

import pytest

import shape_fuzz_wide
import tree_fuzz
from program_check import check_program
from program_grammar import Choices, write_program
from test_random_programs import OPEN_BUGS      # constructs of bugs still open elsewhere

# why the wide fuzzer's extended programs may be refused: a list literal or a view keeps
# a reference to an array the program then writes into (the compiler refuses aliasing)
ACCEPTED_REFUSALS = [r"'\w+' is written in place, and this keeps a reference to it",
                     r"'\S+=' and the like change an array in place, and '\w+' refers to "
                     r"the same array"]


@pytest.mark.parametrize("seed", range(40))
def test_extended_random_program(seed):
    source, y_float = write_program(Choices(random.Random(10 ** 6 + seed).randrange),
                                    sorted(OPEN_BUGS), extended=True)
    outcome = check_program(source, y_float)
    # (a helper that forwards *args is refused where a gradient must flow: as expected)
    assert outcome.status in ("ok", "skipped", "refused as expected"), \
        f"{outcome.status}\n{source}\n{outcome.detail}"


@pytest.mark.parametrize("seed", range(20))
def test_extended_wide_shape_program(seed):
    source, args = shape_fuzz_wide.make_program(seed, extended=True)
    results = shape_fuzz_wide.check(source, args, wrt_seed=seed)
    bad = {v: detail for v, (status, detail) in results.items()
           if status in ("finding", "unstable") or status == "refused" and
           not any(re.search(p, detail) for p in ACCEPTED_REFUSALS)}
    assert not bad, f"{bad}\n{source}"


@pytest.mark.parametrize("seed", range(6))
def test_extended_tree_program(seed):
    source, args_a, args_b = tree_fuzz.make_program(seed, extended=True)
    results = tree_fuzz.check(source, args_a, args_b)
    bad = {v: detail for v, (status, detail) in results.items() if status != "ok"}
    assert not bad, f"{bad}\n{source}"
