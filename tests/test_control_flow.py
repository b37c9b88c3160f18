"""Loops, branches and lists against central finite differences."""
import numpy as np
import pytest

from gradcheck import assert_grad_matches
import specimens_control as S


@pytest.mark.parametrize("f, make", S.ROWS, ids=[f"{r[0].__name__}-{i}"
                                                 for i, r in enumerate(S.ROWS)])
def test_matches_finite_differences(f, make):
    args = make(np.random.default_rng(3))
    wrt = [i for i, a in enumerate(args) if not isinstance(a, (bool, int, np.integer))]
    assert_grad_matches(f, args, wrt=wrt)
