"""The benchmark workloads: each a plain NumPy function, its hand-written gradient, and data.

A workload module defines one `WORKLOAD = Workload(...)`. The function is written the way a
user would write it (NumPy, `stop_gradient`, Python loops); the hand-written gradient is the
best code a compiler could emit for `grad` of it: the same primal arithmetic, backprop written
out by hand, in-place updates into arrays it allocated itself, and nothing the gradient does
not need (in particular not the loss value).

The other systems are optional. autograd and JAX run the very same function with `np`
(and `math`) rebound to their NumPy and `stop_gradient` to theirs; PyTorch needs its own
spelling (`dim=`, `keepdim=`), so a workload may give a `torch` factory.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class Workload:
    """One benchmark: `fn(*make(sizes, rng))` is a scalar; `hand` returns its gradient."""

    name: str
    title: str                  # one line for the results table
    fn: Callable                # the NumPy function, as a user writes it
    wrt: tuple                  # parameter names differentiated (a tuple -> tuple of grads)
    hand: Callable              # hand-written gradient: same arguments, same result as grad
    make: Callable              # make(sizes: dict, rng) -> tuple of arguments
    sizes: dict                 # {"full": {...}, "smoke": {...}}
    kind: str = "array"         # "array" or "scalar-loop" (overhead-bound, Python floats)
    torch: Callable | None = None   # torch(module) -> the function written for PyTorch
    jit: bool = True            # False: jax.jit cannot trace it (data-dependent Python loop)
    slow: dict = field(default_factory=dict)   # contender -> why the default run skips it
    #   (it takes too long); `run.py --slow` includes it
    reference: Callable | None = None   # its ordinary derivative is the gradient (for the
    #   finite-difference check of `hand`, where stop_gradient changes the derivative of fn)


# Workloads sgcompiler cannot compile yet, and why. Kept honest by
# tests/test_benchmarks_smoke.py: a listed workload that compiles fails the test, so remove
# it here as soon as the compiler supports it.
PENDING: dict[str, str] = {}

# Workloads written in other styles than the first eight (issue 18): np.dot, state made
# inside the loss, np.maximum(0, x), scipy.special.logsumexp, slices with computed bounds,
# a dict of parameters. Their targets are tighter: median sgc/hand <= 1.05, worst <= 1.2.
OTHER_STYLES = ("rnn_batched", "mlp_relu", "gmm_lse", "heat2d", "dict_mlp")


def all_workloads() -> list[Workload]:
    """Every workload, in table order."""
    from . import (dict_mlp, elementwise, euler, gmm_em, gmm_lse, heat2d, logreg, mlp,
                   mlp_relu, rnn, rnn_batched, softmax_xent, spectrum, while_series)
    found = [m.WORKLOAD for m in (softmax_xent, mlp, logreg, elementwise, gmm_em, euler, rnn,
                                  while_series, rnn_batched, mlp_relu, gmm_lse, heat2d,
                                  dict_mlp, spectrum)]
    # (the mixture with scipy.special.logsumexp needs SciPy, an optional extra)
    return [w for w in found if w.name != "gmm_lse" or gmm_lse.logsumexp is not None]
