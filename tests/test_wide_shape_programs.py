"""A few programs of the wide broadcasting fuzzer (shape_fuzz_wide.py) on every test run.

Each program (reductions with axes and keepdims, broadcast_to, reshape/ravel/.T, slicing,
np.where, clip, softplus, negations, augmented assignment, products, concatenate/stack,
stop_gradient) is checked against finite differences in six variants: specialised,
code for any shape, both with every array counted as large, value_and_grad and a partial
`wrt`. A wrong value or gradient, a changed argument or an exception from the generated
code is a failure.

What is not checked is counted, printed at the end of the run, and allowed only where it
is expected: a refusal (SGCompilerError) only for the programs in KNOWN_REFUSALS, with
their message, in the fixed set, and only for a reason in ACCEPTED_REFUSALS in this run's
new programs; an "unstable" reference (finite differences that no step size settles,
see gradcheck.settled_reference) nowhere.

The fixed set is seeds 0-59; beside it, NEW programs are drawn from this run's seed
(fuzz_session.py). Run more with
`python3 tests/shape_fuzz_wide.py --count 3000 --start 0 --out /tmp/wide`.
"""
import collections
import re

import pytest

import fuzz_session
from shape_fuzz_wide import check, make_program

FIXED = range(60)
NEW = 12

# seed: (what the refusal says, why refusing is right). Each of these programs is refused
# in every variant, and nothing else is refused.
KNOWN_REFUSALS = {
    44: ("'+=' and the like change an array in place, and 't1' refers to the same array",
         "t1 = (t0[0, 1]).ravel() is a copy here (the element is a NumPy scalar), but "
         "ravel() of an array is a view, and the compiler cannot tell the two apart"),
    50: ("'+=' and the like change an array in place, and 's' refers to the same array",
         "t0 = np.transpose(s) is a view of the argument s, so t0 /= ... writes into it"),
}
# Refusals allowed in new programs: the generator writes augmented assignments into
# names that may be views of another name (the refusal above).
ACCEPTED_REFUSALS = [
    r"'\S+=' and the like change an array in place, and '\w+' refers to the same array",
]
MAX_REFUSED_FRACTION = 0.25        # of the new programs' variants


def _outcome(seed, label):
    source, args = make_program(seed)
    oracle = collections.Counter()
    results = check(source, args, wrt_seed=seed, oracle=oracle)
    for how, n in oracle.items():
        fuzz_session.count("wide shape", f"{label} references settled by {how}", n)
    for status, _ in results.values():
        fuzz_session.count("wide shape", f"{label} {status}")
    findings = {v: detail for v, (status, detail) in results.items() if status == "finding"}
    unstable = sorted(v for v, (status, _) in results.items() if status == "unstable")
    refused = {v: detail for v, (status, detail) in results.items() if status == "refused"}
    return source, findings, unstable, refused


@pytest.mark.parametrize("seed", FIXED)
def test_wide_shape_program(seed):
    source, findings, unstable, refused = _outcome(seed, "fixed:")
    assert not findings, f"{findings}\n{source}"
    assert not unstable, (f"variants {unstable}: finite differences settle no reference, "
                          f"so nothing was checked:\n{source}")
    if seed in KNOWN_REFUSALS:
        message, why = KNOWN_REFUSALS[seed]
        assert refused, (f"seed {seed} is no longer refused ({why}): remove it from "
                         f"KNOWN_REFUSALS\n{source}")
        wrong = {v: m for v, m in refused.items() if message not in m}
        assert not wrong and len(refused) == 6, (
            f"seed {seed} is refused for another reason or in only some variants "
            f"(expected {message!r} everywhere): {refused}\n{source}")
    else:
        assert not refused, (f"a new refusal, in a program that was checked before: "
                             f"{refused}\n{source}")


def test_wide_shape_programs_of_this_run():
    """NEW programs from this run's seed: no finding anywhere, refusals only for an
    accepted reason and not too many, no unstable reference."""
    problems, refusals, variants = [], 0, 0
    for seed in fuzz_session.program_seeds(NEW):
        how = fuzz_session.reproduce(
            seed, f"python3 tests/shape_fuzz_wide.py --seed {seed}",
            "test_wide_shape_programs.py::test_wide_shape_programs_of_this_run")
        source, findings, unstable, refused = _outcome(seed, "new:")
        variants += 6
        refusals += len(refused)
        if findings:
            problems.append(f"{how}\n{findings}\n{source}")
        if unstable:
            problems.append(f"{how}\nvariants {unstable}: no reference settled\n{source}")
        for variant, message in refused.items():
            if not any(re.search(p, message) for p in ACCEPTED_REFUSALS):
                problems.append(f"{how}\na refusal for a new reason in {variant}: "
                                f"{message}\n{source}")
    assert refusals <= MAX_REFUSED_FRACTION * variants, (
        f"{refusals} of {variants} variants refused (seeds from "
        f"{fuzz_session.ENV}={fuzz_session.FUZZ_SEED})")
    assert not problems, "\n\n".join(problems)
