"""A few programs of the wide broadcasting fuzzer (shape_fuzz_wide.py) on every test run.

Each program (reductions with axes and keepdims, broadcast_to, reshape/ravel/.T, slicing,
np.where, clip, softplus, negations, augmented assignment, products, concatenate/stack,
stop_gradient) is checked against finite differences in six variants: specialised,
code for any shape, both with every array counted as large, value_and_grad and a partial
`wrt`. A refusal (SGCompilerError) is allowed; a wrong value or gradient, a changed
argument or an exception from the generated code is not. Run more with
`python3 tests/shape_fuzz_wide.py --count 3000 --start 0 --out /tmp/wide`.
"""
import pytest

from shape_fuzz_wide import check, make_program


@pytest.mark.parametrize("seed", range(60))
def test_wide_shape_program(seed):
    source, args = make_program(seed)
    results = check(source, args, wrt_seed=seed)
    findings = {v: detail for v, (status, detail) in results.items() if status == "finding"}
    assert not findings, f"{findings}\n{source}"
