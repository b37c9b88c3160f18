"""Check sgcompiler's gradient of one generated program against finite differences.

`check_program(source, y_float)` loads the source twice: once with sgcompiler's
`stop_gradient` (the function that is differentiated) and once with a `Freezer`, which
records each stopped value at the point and replays it at the perturbed points, so the
finite-difference reference treats stopped values as constants, as the compiler does.

At each of two points it compares (a) the value from `value_and_grad` with the primal,
(b) the gradients' types and shapes with the arguments', and (c) the gradients with central
differences. A point is skipped, and the reason counted, when the primal fails there
(overflow, a domain error) or is huge, or when the function is not smooth there: central
differences with steps 1e-6 and 1e-5 disagree (a kink or a jump, e.g. a branch that flips)
and so do the extrapolated ones at larger steps that settle what rounding alone unsettled
(gradcheck.settled_reference), or the point sits exactly on a kink (the one-sided
differences disagree at both steps, while the central ones agree on their mean:
`on_a_kink`), or the stopped values cannot be replayed (control flow
changed). These decisions look only
at the primal, never at sgcompiler's gradient, so they cannot hide a wrong gradient at a
smooth point.

Run as a script for a long run that continues past failures and saves each one:

    PYTHONPATH=$PWD python3 tests/program_check.py --count 3000 --start 0 --out /tmp/fuzz
"""
from __future__ import annotations

import collections
import hashlib
import linecache
import traceback
import types
from dataclasses import dataclass, field

import numpy as np

import sgcompiler
from gradcheck import STEPS, settled_reference
from program_grammar import HELPERS, N
from sgcompiler.backend.loader import function_from_text

RTOL, ATOL = 1e-5, 1e-6        # atol is relative to the scale of the values involved
HUGE = 1e6


class NotSmooth(Exception):
    """The primal cannot be compared at this point (the reason is the message)."""


@dataclass
class Outcome:
    status: str                 # "ok", "skipped", "refused", "failed"
    detail: str = ""
    skips: list = field(default_factory=list)      # the reason for each skipped point
    settled: list = field(default_factory=list)    # how each point's reference was settled


class Freezer:
    """A stand-in for stop_gradient: records values at the point, replays them elsewhere."""

    def __init__(self):
        self.values = []
        self.replaying = False
        self.position = 0

    def __call__(self, value):
        if not self.replaying:
            self.values.append(np.copy(value))
            return value
        if self.position >= len(self.values):
            raise NotSmooth("stop_gradient called more often than at the point")
        recorded = self.values[self.position]
        self.position += 1
        if np.shape(recorded) != np.shape(value):
            raise NotSmooth("stop_gradient values changed shape")
        return np.copy(recorded) if isinstance(value, np.ndarray) else type(value)(recorded)

    def replay(self):
        self.replaying, self.position = True, 0

    def finish(self):
        if self.replaying and self.position != len(self.values):
            raise NotSmooth("stop_gradient called less often than at the point")


def load(source: str, stop_gradient, tag: str):
    """`f` from `source`, findable by inspect.getsource (registered in linecache)."""
    return load_namespace(source, stop_gradient, tag)["f"]


def load_namespace(source: str, stop_gradient, tag: str) -> dict:
    """The namespace `source` runs in (registered in linecache)."""
    digest = hashlib.sha1(source.encode()).hexdigest()[:16]
    filename = f"<fuzz {tag} {digest}>"
    # the lines as a file's would be read (split at \n only, not at U+2028 as splitlines)
    lines = [line + "\n" for line in source.split("\n")[:-1]]
    linecache.cache[filename] = (len(source), None, lines, filename)
    namespace = {"np": np, "stop_gradient": stop_gradient, **HELPERS}
    exec(compile(source, filename, "exec"), namespace)
    return namespace


def point(seed: int, y_float: bool):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.5, 1.5, N)
    y = float(rng.uniform(-1.5, 1.5)) if y_float else rng.uniform(-1.5, 1.5, N)
    return x, y


def _copy(v):
    return np.copy(v) if isinstance(v, np.ndarray) else v


def _guarded(run, why):
    """run(), where overflow, division by zero and invalid values raise NotSmooth(why)."""
    with np.errstate(over="raise", divide="raise", invalid="raise", under="ignore"):
        try:
            return run()
        except FloatingPointError as exc:
            raise NotSmooth(why) from exc


def _evaluate(reference, freezer, x, y):
    """The reference primal at (x, y), with stopped values replayed."""
    freezer.replay()
    value = _guarded(lambda: reference(_copy(x), _copy(y)), "primal fails near the point")
    freezer.finish()
    return float(value)


def finite_differences(reference, freezer, x, y, step):
    """Central differences of the reference in x and in y, element by element."""
    return differences(reference, freezer, x, y, step)[0]


def differences(reference, freezer, x, y, step, value=None):
    """Central differences of the reference in x and in y, element by element, and (given
    the value at the point) the second differences |f(+h) - 2 f + f(-h)| / h, the gap
    between the one-sided differences: about h |f''| where f is smooth, but the jump of
    the derivative, whatever the step, at a kink (where the central difference is the
    mean of the two one-sided derivatives, which no gradient has to be)."""
    grads, gaps = [], []
    for i, arg in enumerate((x, y)):
        flat = np.atleast_1d(np.array(arg, dtype=float))
        out, gap = np.zeros_like(flat), np.zeros_like(flat)
        for k in range(flat.size):
            shifted = []
            for sign in (1.0, -1.0):
                moved = flat.copy()
                moved[k] += sign * step
                new = moved.reshape(np.shape(arg)) if isinstance(arg, np.ndarray) \
                    else float(moved[0])
                args = (new, y) if i == 0 else (x, new)
                shifted.append(_evaluate(reference, freezer, *args))
            out[k] = (shifted[0] - shifted[1]) / (2 * step)
            if value is not None:
                gap[k] = abs(shifted[0] - 2.0 * value + shifted[1]) / step
        grads.append(out)
        gaps.append(gap)
    return grads, gaps


def on_a_kink(gaps, coarse_gaps, fine, scale) -> bool:
    """Whether the point sits on a kink in some coordinate: the one-sided differences
    disagree by more than the comparison's tolerance at step 1e-6, and no less than half
    as much as at step 1e-5 (on smooth ground the gap shrinks with the step, tenfold
    here; at a kink it stays). Central differences of both steps then agree on the mean
    of the two sides, which is no more the gradient than either side is."""
    for gap, coarse, central in zip(gaps, coarse_gaps, fine):
        if np.any((gap > RTOL * np.abs(central) + ATOL * scale) & (gap > 0.5 * coarse)):
            return True
    return False


def _primal(reference, freezer, x, y):
    freezer.values.clear()
    freezer.replaying = False
    value = _guarded(lambda: reference(_copy(x), _copy(y)), "primal fails at the point")
    if not np.isscalar(value) and np.shape(value) != ():
        raise AssertionError(f"the generated program returned shape {np.shape(value)}")
    value = float(value)
    if not np.isfinite(value) or abs(value) > HUGE:
        raise NotSmooth("primal value is not finite or huge")
    return value


def _close(a, b, scale):
    return np.all(np.abs(a - b) <= RTOL * np.abs(b) + ATOL * scale)


def check_point(gradient, reference, freezer, x, y, settled=None) -> str:
    """'' if the gradient at (x, y) is right; a description of the problem otherwise.

    Raises:
        NotSmooth: when the point cannot be used (the reason is the message).
    """
    value = _primal(reference, freezer, x, y)
    fine, gaps = differences(reference, freezer, x, y, STEPS[0], value)
    coarse, coarse_gaps = differences(reference, freezer, x, y, STEPS[1], value)
    scale = max(1.0, abs(value), *(float(np.max(np.abs(g))) for g in fine))
    if on_a_kink(gaps, coarse_gaps, fine, scale):
        raise NotSmooth("on a kink (the one-sided differences disagree at both steps)")

    def central(step):
        return {STEPS[0]: fine, STEPS[1]: coarse}.get(step) or \
            finite_differences(reference, freezer, x, y, step)

    def agree(a, b):
        return all(_close(p, q, scale) for p, q in zip(a, b))

    fine, how = settled_reference(central, agree, agree)
    if settled is not None:
        settled.append(how)
    if how == "unstable":
        raise NotSmooth("not smooth (finite differences disagree between step sizes)")
    xs, ys = _copy(x), _copy(y)
    with np.errstate(all="ignore"):
        got_value, (gx, gy) = gradient(xs, ys)
    problems = []
    if not isinstance(got_value, (float, int, np.number)) or \
            not np.isclose(float(got_value), value, rtol=1e-9, atol=1e-12 * scale):
        problems.append(f"value_and_grad value {got_value!r} != primal {value!r}")
    if not isinstance(gx, np.ndarray) or gx.shape != (N,):
        problems.append(f"gradient for x is {type(gx).__name__} {np.shape(gx)}")
    if isinstance(y, float) and not isinstance(gy, float):
        problems.append(f"gradient for the float y is {type(gy).__name__}")
    if isinstance(y, np.ndarray) and (not isinstance(gy, np.ndarray) or gy.shape != (N,)):
        problems.append(f"gradient for y is {type(gy).__name__} {np.shape(gy)}")
    for name, got, expected in (("x", gx, fine[0]), ("y", gy, fine[1])):
        got = np.atleast_1d(np.array(got, dtype=float))
        if got.shape != expected.shape or not _close(got, expected, scale):
            problems.append(f"d/d{name}: sgcompiler {got.tolist()} vs finite differences "
                            f"{expected.tolist()}")
    if problems:
        return (f"at x = {x.tolist()!r}, y = {np.asarray(y).tolist()!r}: "
                + "; ".join(problems))
    return ""


def check_program(source: str, y_float: bool, seeds=(0, 1)) -> Outcome:
    """Compile the gradient of the program in `source` and check it at two points."""
    freezer = Freezer()
    reference = load(source, freezer, "reference")
    f = load(source, sgcompiler.stop_gradient, "program")
    gradient = sgcompiler.value_and_grad(f, wrt=(0, 1))
    skips, settled, checked = [], [], 0
    for seed in seeds:
        x, y = point(seed, y_float)
        try:
            problem = check_point(gradient, reference, freezer, x, y, settled)
        except NotSmooth as exc:
            skips.append(str(exc))
            continue
        except sgcompiler.SGCompilerError as exc:
            if _star_refusal(source, exc):
                return Outcome("refused as expected", str(exc), skips, settled)
            return Outcome("refused", str(exc), skips, settled)
        except Exception:
            return Outcome("failed", "compiler or generated code raised:\n"
                           + traceback.format_exc(limit=-6), skips, settled)
        if problem:
            return Outcome("failed", problem, skips, settled)
        checked += 1
    return Outcome("ok" if checked else "skipped", "", skips, settled)


def _star_refusal(source, exc) -> bool:
    """A program that calls helper_star, refused for its *args, helper_dict_loop,
    refused for its loop over a dict, or that changes a constant in place after its use
    (the "constants" extra's LATE lines), refused for it (the right refusals)."""
    from program_grammar import DICT_LOOP_REFUSAL, LATE, LATE_WRITE_REFUSALS, STAR_REFUSAL
    return "helper_star(" in source and STAR_REFUSAL in str(exc) or \
        "helper_dict_loop(" in source and DICT_LOOP_REFUSAL in str(exc) or \
        LATE in source and any(r in str(exc) for r in LATE_WRITE_REFUSALS)


def check_factory_program(source: str, y_float: bool) -> Outcome:
    """Check a program of `write_factory_program`: for each (act, k) of the grammar's
    ACTS and KS a new closure `make(act, k)` (the same code each time) and a new gradient,
    called again after the module-level `glob` is rebound. Code compiled for an earlier
    meaning of a name shows as a wrong gradient. A refusal is right only for `*args`."""
    from program_grammar import ACTS, GLOBS, KS
    freezer = Freezer()
    reference = load_namespace(source, freezer, "reference")
    program = load_namespace(source, sgcompiler.stop_gradient, "program")
    skips, checked = [], 0
    for n, (act, k) in enumerate(zip(ACTS, KS)):
        gradient = sgcompiler.value_and_grad(program["make"](act, k), wrt=(0, 1))
        for m, glob in enumerate(GLOBS):
            reference["glob"] = program["glob"] = glob
            x, y = point(n * len(GLOBS) + m, y_float)
            try:
                problem = check_point(gradient, reference["make"](act, k), freezer, x, y)
            except NotSmooth as exc:
                skips.append(str(exc))
                continue
            except sgcompiler.SGCompilerError as exc:
                if _star_refusal(source, exc):
                    return Outcome("refused as expected", str(exc), skips)
                return Outcome("refused", str(exc), skips)
            except Exception:
                return Outcome("failed", "compiler or generated code raised:\n"
                               + traceback.format_exc(limit=-6), skips)
            if problem:
                return Outcome("failed", f"act={getattr(act, '__name__', act)}, k={k}, "
                               f"glob={glob.__name__}: {problem}", skips)
            checked += 1
    return Outcome("ok" if checked else "skipped", "", skips)


SECOND = """def f_d1(x, y):
    _gx, _gy = _grad(x, y)
    return np.sum(_gx * _vx) + np.sum(_gy * _vy)
"""


def check_program_second_order(source: str, y_float: bool, seeds=(0, 1)) -> Outcome:
    """Grad of grad: the gradient of s(x, y) = <grad f(x, y), v> (sgcompiler compiling
    its own gradient code again), against central differences of s, where s runs the
    first-order code with its stopped values replayed (stop_gradient is a constant at
    every order)."""
    freezer = Freezer()
    f = load(source, sgcompiler.stop_gradient, "program")
    try:
        plain = sgcompiler.grad(f, wrt=(0, 1)).as_function(
            scalars=frozenset({"y"}) if y_float else frozenset())
    except sgcompiler.SGCompilerError as exc:     # (refused at first order already)
        return Outcome("refused", str(exc))
    # the same first-order code, looking stop_gradient up in a namespace of its own
    replaying = types.FunctionType(plain.__code__, {**plain.__globals__,
                                                    "stop_gradient": freezer},
                                   plain.__name__, plain.__defaults__, plain.__closure__)
    skips, checked = [], 0
    for seed in seeds:
        x, y = point(seed, y_float)
        rng = np.random.default_rng(seed + 100)
        directions = {"np": np, "_vx": rng.normal(size=N),
                      "_vy": float(rng.normal()) if y_float else rng.normal(size=N)}
        s = function_from_text(SECOND, "f_d1", {**directions, "_grad": plain}, "fuzz")
        reference = function_from_text(SECOND, "f_d1", {**directions, "_grad": replaying},
                                       "fuzz")
        try:
            problem = check_point(sgcompiler.value_and_grad(s, wrt=(0, 1)), reference,
                                  freezer, x, y)
        except NotSmooth as exc:
            skips.append(str(exc))
            continue
        except sgcompiler.SGCompilerError as exc:
            return Outcome("refused", str(exc), skips)
        except Exception:
            return Outcome("failed", "compiler or generated code raised:\n"
                           + traceback.format_exc(limit=-6), skips)
        if problem:
            return Outcome("failed", "second order: " + problem, skips)
        checked += 1
    return Outcome("ok" if checked else "skipped", "", skips)


def check_program_hessian(source: str, y_float: bool, seeds=(0, 1)) -> Outcome:
    """hessian(f) with respect to x, batched (all columns in one run of the tangent code
    of the gradient, forward/batch.py) against one jvp of the gradient code per column,
    which checks the batched pass wherever it applies, and both against central
    differences of the first-order gradient code (which `check_program` checks against f),
    run with its stopped values replayed; `settled` notes which path ran and how the
    finite-difference reference was settled."""
    import warnings

    from sgcompiler import derivatives
    f = load(source, sgcompiler.stop_gradient, "hessian")
    paths, skips, checked = [], [], 0
    for seed in seeds:
        x, y = point(seed, y_float)
        saved = derivatives._batched_jacobian
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", sgcompiler.PerColumnWarning)
                H = sgcompiler.hessian(f, wrt=0)(x, y)
            derivatives._batched_jacobian = lambda *a: None
            columns = sgcompiler.hessian(f, wrt=0)(x, y)
        except sgcompiler.SGCompilerError as exc:
            return Outcome("refused", str(exc), skips, paths)
        except Exception:
            return Outcome("failed", "hessian raised:\n" + traceback.format_exc(limit=-6),
                           skips, paths)
        finally:
            derivatives._batched_jacobian = saved
        batched = not any(issubclass(c.category, sgcompiler.PerColumnWarning)
                          for c in caught)
        paths.append("hessian batched" if batched else "hessian per column")
        scale = max(1.0, float(np.max(np.abs(columns), initial=0.0)))
        if np.shape(H) != np.shape(x) * 2 or np.shape(columns) != np.shape(x) * 2 or \
                not np.allclose(H, columns, rtol=1e-9, atol=1e-9 * scale, equal_nan=True):
            return Outcome("failed", f"hessian at seed {seed}: batched {H!r}, one column at "
                           f"a time {columns!r}", settled=paths)
        try:
            reference, how = _hessian_reference(source, y_float, x, y)
        except NotSmooth as exc:
            skips.append(str(exc))
            continue
        except sgcompiler.SGCompilerError as exc:
            return Outcome("refused", str(exc), skips, paths)
        paths.append(how)
        scale = max(1.0, float(np.max(np.abs(reference), initial=0.0)))
        if not _close(H, reference, scale):
            return Outcome("failed", f"hessian at x = {x.tolist()!r}, y = "
                           f"{np.asarray(y).tolist()!r}: sgcompiler {H.tolist()} vs finite "
                           f"differences of the gradient {reference.tolist()}", skips, paths)
        checked += 1
    return Outcome("ok" if checked else "skipped", "", skips, paths)


def _hessian_reference(source: str, y_float: bool, x, y):
    """Central differences in x of the first-order gradient code for x, with its stopped
    values recorded at (x, y) and replayed at the moved points, settled as `check_point`
    settles its reference (two steps, or extrapolation, or NotSmooth)."""
    freezer = Freezer()
    f = load(source, sgcompiler.stop_gradient, "hessian reference")
    plain = sgcompiler.grad(f, wrt=0).as_function(
        scalars=frozenset({"y"}) if y_float else frozenset())
    replaying = types.FunctionType(plain.__code__, {**plain.__globals__,
                                                    "stop_gradient": freezer},
                                   plain.__name__, plain.__defaults__, plain.__closure__)

    def gradient(at):
        g = _guarded(lambda: replaying(_copy(at), _copy(y)), "gradient fails near the point")
        freezer.finish()
        g = np.array(g, dtype=float)
        if g.shape != np.shape(x) or not np.all(np.isfinite(g)) or np.max(np.abs(g)) > HUGE:
            raise NotSmooth("gradient is not finite, huge or of another shape")
        return g

    freezer.values.clear()
    freezer.replaying = False
    gradient(x)

    def central(step):
        columns = []
        for k in range(x.size):
            moved = []
            for sign in (1.0, -1.0):
                at = x.copy()
                at[k] += sign * step
                freezer.replay()
                moved.append(gradient(at))
            columns.append((moved[0] - moved[1]) / (2 * step))
        return np.array(columns).T        # H[i, k] = d(grad_i)/dx_k

    def agree(a, b):
        return _close(a, b, max(1.0, float(np.max(np.abs(b), initial=0.0))))

    reference, how = settled_reference(central, agree, agree)
    if how == "unstable":
        raise NotSmooth("gradient not smooth (its finite differences disagree between steps)")
    return reference, how


def main(argv=None):
    import argparse
    import json
    import pathlib
    import random
    import time

    from program_grammar import (AVOIDABLE, EXTRAS, Choices, write_factory_program,
                                 write_program)

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--out", default="/tmp/sgcompiler-fuzz")
    parser.add_argument("--avoid", nargs="*", default=[], choices=sorted(AVOIDABLE),
                        help="leave out constructs that trigger known bugs")
    parser.add_argument("--order", type=int, default=1, choices=(1, 2),
                        help="2: check grad of grad (check_program_second_order)")
    parser.add_argument("--hessian", action="store_true",
                        help="check hessian(f), batched, against one jvp per column "
                             "(check_program_hessian)")
    parser.add_argument("--extended", action="store_true",
                        help="draw the productions of program_grammar.EXTENDED too")
    parser.add_argument("--factory", action="store_true",
                        help="factory programs whose names change meaning between calls")
    parser.add_argument("--extras", nargs="*", default=[], choices=sorted(EXTRAS),
                        help="add productions: " + "; ".join(f"{k}: {v}"
                                                             for k, v in EXTRAS.items()))
    args = parser.parse_args(argv)
    check = check_program_hessian if args.hessian else \
        check_program if args.order == 1 else check_program_second_order
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    counts, skip_reasons, refusals = collections.Counter(), collections.Counter(), []
    settled = collections.Counter()
    started = time.time()
    for seed in range(args.start, args.start + args.count):
        choices = Choices(random.Random(seed).randrange)
        try:
            if args.factory:
                source, y_float = write_factory_program(choices)
                outcome = check_factory_program(source, y_float)
            else:
                source, y_float = write_program(choices, args.avoid, args.extended,
                                                args.extras)
                outcome = check(source, y_float)
        except Exception:
            outcome = Outcome("failed", "checking raised:\n" + traceback.format_exc())
        counts[outcome.status] += 1
        skip_reasons.update(outcome.skips)
        settled.update(outcome.settled)
        if outcome.status in ("failed", "refused"):
            saved = out / f"{outcome.status}-{seed}.txt"
            saved.write_text(f"# seed {seed}, y float: {y_float}\n{source}\n{outcome.detail}\n")
            if args.count <= 10:        # a rerun of a few seeds: show what was wrong
                print(f"seed {seed} {outcome.status} (saved in {saved}):\n{source}\n"
                      f"{outcome.detail}\n", flush=True)
        if outcome.status == "refused":
            refusals.append(outcome.detail.splitlines()[0])
    summary = {"programs": args.count, "start": args.start, "avoid": args.avoid,
               "extended": args.extended,
               "extras": args.extras,
               "counts": dict(counts),
               "skipped points": dict(skip_reasons),
               "references settled by": dict(settled), "seconds": round(time.time() - started)}
    (out / f"summary-{args.start}-{args.count}.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary, indent=1))
    for line in collections.Counter(refusals).most_common(20):
        print(*line)


if __name__ == "__main__":
    main()
