"""Forward mode on random programs: jvp of each generated program (program_grammar.py)
against central differences along a random direction, and against the reverse-mode
gradient (jvp(f, (x, y), (vx, vy))[1] == grad(f)(x, y) . (vx, vy)); and the forward-mode
Jacobian in x (batched tangents where the code allows it, forward/batch.py) against
grad(f)(x, y).

The default run checks 60 programs from fixed seeds; SGCOMPILER_FUZZ_EXAMPLES=N checks N.
Nothing is skipped silently: a refusal fails (the grammar's programs are all meant to be
supported), a program with no smooth point of the two fails, and what each program did
(checked, points skipped as not smooth, Jacobian batched or per column) is counted in
fuzz_session and printed at the end of the run.
"""
import os
import random

import numpy as np
import pytest

import fuzz_session
import sgcompiler
from sgcompiler.derivatives import _kinds, _params
from sgcompiler.forward.batch import NotBatchable
from sgcompiler.pipeline.forward_mode import compile_jvp
from program_check import Freezer, NotSmooth, _evaluate, _primal, load, point
from program_grammar import Choices, write_program

COUNT = int(os.environ.get("SGCOMPILER_FUZZ_EXAMPLES", "0")) or 60
FUZZER = "forward programs"


def _directional(reference, freezer, x, y, vx, vy, step):
    plus = _evaluate(reference, freezer, x + step * vx, y + step * vy)
    minus = _evaluate(reference, freezer, x - step * vx, y - step * vy)
    return (plus - minus) / (2 * step)


def check_forward(source, y_float, seed):
    """'' when jvp agrees with finite differences and with grad at one point."""
    freezer = Freezer()
    reference = load(source, freezer, "reference")
    f = load(source, sgcompiler.stop_gradient, "program")
    x, y = point(seed, y_float)
    rng = np.random.default_rng(seed + 100)
    vx = rng.normal(size=x.shape)
    vy = float(rng.normal()) if y_float else rng.normal(size=np.shape(y))
    value = _primal(reference, freezer, x, y)
    fine, coarse = (_directional(reference, freezer, x, y, vx, vy, s) for s in (1e-6, 1e-5))
    scale = max(1.0, abs(value), abs(fine))
    if abs(fine - coarse) > 1e-5 * abs(fine) + 1e-6 * scale:
        raise NotSmooth("not smooth")
    with np.errstate(all="ignore"):
        out, out_dot = sgcompiler.jvp(f, (np.copy(x), y), (vx, vy))
        gx, gy = sgcompiler.grad(f, wrt=(0, 1))(np.copy(x), y)
    reverse = float(np.sum(gx * vx) + np.sum(np.asarray(gy) * vy))
    problems = []
    if not np.isclose(float(out), value, rtol=1e-9, atol=1e-12 * scale):
        problems.append(f"jvp value {out} != primal {value}")
    if abs(float(out_dot) - fine) > 1e-5 * abs(fine) + 1e-6 * scale:
        problems.append(f"jvp tangent {float(out_dot)} vs finite differences {fine}")
    if abs(float(out_dot) - reverse) > 1e-7 * abs(reverse) + 1e-9 * scale:
        problems.append(f"jvp tangent {float(out_dot)} vs grad . v {reverse}")
    with np.errstate(all="ignore"):
        jac = sgcompiler.jacobian(f, wrt=0, mode="fwd")(np.copy(x), y)
    fuzz_session.count(FUZZER, f"jacobian {'batched' if _batches(f, x, y) else 'per column'}")
    gscale = max(1.0, float(np.max(np.abs(gx))) if np.size(gx) else 1.0)
    if np.shape(jac) != np.shape(gx) or not np.allclose(jac, gx, rtol=1e-7, atol=1e-9 * gscale):
        problems.append(f"forward jacobian {jac} vs grad {gx}")
    return "; ".join(problems)


def _batches(f, x, y) -> bool:
    """Whether jacobian(f, wrt=0, mode="fwd") runs batched tangent code (it is cached)."""
    try:
        compile_jvp(f, ("x",), *_kinds(_params(f), (x, y)), batch=int(np.size(x)))
    except NotBatchable:
        return False
    return True


def _check_points(source, y_float, label="", refusal=None):
    """check_forward at both points; the number checked, or None when the program was
    refused with the message `refusal` (any other refusal fails)."""
    checked = 0
    for point_seed in (0, 1):
        try:
            problem = check_forward(source, y_float, point_seed)
        except NotSmooth:
            fuzz_session.count(FUZZER, f"{label}point skipped: not smooth")
            continue
        except sgcompiler.SGCompilerError as exc:
            if refusal is not None and refusal in str(exc):
                fuzz_session.count(FUZZER, f"{label}refused as expected")
                return None
            fuzz_session.count(FUZZER, f"{label}refused")
            pytest.fail(f"forward mode refused a program the grammar means to be "
                        f"supported: {str(exc).splitlines()[0]}\n{source}")
        assert not problem, f"{problem}\n{source}"
        checked += 1
        fuzz_session.count(FUZZER, f"{label}point checked")
    return checked


@pytest.mark.parametrize("seed", range(COUNT))
def test_jvp_of_random_program(seed):
    source, y_float = write_program(Choices(random.Random(10_000 + seed).randrange))
    assert _check_points(source, y_float), \
        f"neither point is smooth, so nothing was checked:\n{source}"


# The extended grammar with every extra, in forward mode (never drawn here before session
# 10: 17 of its first 200 programs crashed the batched Jacobian, `sum` of an empty
# comprehension's tangent, seeds 903012, 903018, ...). A dict looped over by key is
# refused as expected (helper_dict_loop); any other refusal fails.
EXTRAS = ("containers", "growing", "picks", "scopes", "sigmoids")
EXPECTED_REFUSAL = "this loop runs over a dict"


@pytest.mark.parametrize("seed", [903012, 903018, 903024, 903047, 903000, 903001, 903002,
                                  903003, 904182, 916056, 916088, 916124]
                         + fuzz_session.program_seeds(4))
def test_jvp_of_extended_random_program(seed):
    source, y_float = write_program(Choices(random.Random(seed).randrange), extended=True,
                                    extras=EXTRAS)
    # (a failure names the program seed: rerun with this run's SGC_FUZZ_SEED, printed in
    # the summary, and `-k extended`)
    _check_points(source, y_float, "extended: ", refusal=EXPECTED_REFUSAL)
