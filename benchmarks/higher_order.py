"""Benchmarks of the reverse-mode half of issue 14: a gradient inside a loss, a Jacobian.

    python benchmarks/higher_order.py            full sizes, a markdown table
    python benchmarks/higher_order.py --smoke    tiny sizes, correctness only (the tests)

Workloads:
- **input-gradient penalty** (a physics-informed / gradient-penalty loss): a one-hidden-
  layer network u(X) = tanh(X @ W1) @ w2 over a batch, and the loss
  mean((u - y)^2) + lam * mean(|du/dX|^2), whose du/dX is `grad(...)` called inside the
  loss; differentiated with respect to (W1, w2): grad of (a function calling) grad.
- **Jacobian of a 50-output function**: f(x) = tanh(A @ x) * (B @ x ** 2), x of 200,
  `jacobian(f)` in reverse mode (one generated backward call per output).

Each is checked against autograd and JAX when they are installed (and, in --smoke, against
finite differences), and timed side by side with the forward pass, autograd and JAX
(eager, and under jax.jit; float64 on the CPU) (benchmarks.timing.interleaved: ratios of
medians measured in the same run). `--no-jax` leaves JAX out (importing it takes seconds).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import timing  # noqa: E402
from benchmarks.systems import jax_cpu  # noqa: E402
from sgcompiler import grad, jacobian  # noqa: E402

try:
    import autograd
    import autograd.numpy as anp
except ImportError:       # optional
    autograd = anp = None


# --- the input-gradient penalty ---------------------------------------------------------

def network_sum(W1, w2, X):
    return np.sum(np.tanh(X @ W1) @ w2)


def penalised_loss(W1, w2, X, y, lam):
    u = np.tanh(X @ W1) @ w2
    dX = grad(network_sum, wrt=2)(W1, w2, X)     # du_i/dX_i, row by row
    return np.mean((u - y) ** 2) + lam * np.mean(np.sum(dX ** 2, axis=1))


def _autograd_penalised_loss():
    def network_sum_ag(W1, w2, X):
        return anp.sum(anp.dot(anp.tanh(anp.dot(X, W1)), w2))

    def loss(W1, w2, X, y, lam):
        u = anp.dot(anp.tanh(anp.dot(X, W1)), w2)
        dX = autograd.grad(network_sum_ag, 2)(W1, w2, X)
        return anp.mean((u - y) ** 2) + lam * anp.mean(anp.sum(dX ** 2, axis=1))
    return loss


def _jax_penalised_loss(jax, jnp):
    def network_sum_jax(W1, w2, X):
        return jnp.sum(jnp.tanh(X @ W1) @ w2)

    def loss(W1, w2, X, y, lam):
        u = jnp.tanh(X @ W1) @ w2
        dX = jax.grad(network_sum_jax, argnums=2)(W1, w2, X)
        return jnp.mean((u - y) ** 2) + lam * jnp.mean(jnp.sum(dX ** 2, axis=1))
    return loss


def penalty_data(n, d, h, rng):
    return (rng.normal(size=(d, h)) / np.sqrt(d), rng.normal(size=h) / np.sqrt(h),
            rng.normal(size=(n, d)), rng.normal(size=n), 0.1)


# --- the Jacobian of a 50-output function --------------------------------------------------

A_ROWS = 50


def fifty(x, A, B):
    return np.tanh(A @ x) * (B @ x ** 2)


def jacobian_data(d, rng):
    return rng.normal(size=d), rng.normal(size=(A_ROWS, d)) / np.sqrt(d), \
        rng.normal(size=(A_ROWS, d)) / d


def _autograd_fifty(x, A, B):
    return anp.tanh(anp.dot(A, x)) * anp.dot(B, x ** 2)


def _add_jax(calls, name, fn, args, jax):
    """'JAX eager NAME' and 'JAX jit NAME': fn(*args) as it is and under jax.jit, results
    blocked on (the arrays are arguments, so XLA cannot fold the work into a constant)."""
    jitted = jax.jit(fn)
    for label, call in ((f"JAX eager {name}", fn), (f"JAX jit {name}", jitted)):
        calls[label] = (lambda c=call: jax.tree_util.tree_map(
            np.asarray, jax.block_until_ready(c(*args))))


# --- running -----------------------------------------------------------------------------

def contenders(smoke: bool, jx=None):
    """(workload title, {contender: call}, (sgcompiler's, the others to compare)) for each;
    JAX's contenders when jx is (jax, jax.numpy)."""
    rng = np.random.default_rng(0)
    n, d, h = (8, 3, 4) if smoke else (2000, 20, 64)
    W1, w2, X, y, lam = penalty_data(n, d, h, rng)
    sg_grad = grad(penalised_loss, wrt=(0, 1))
    penalty = {"forward pass": lambda: penalised_loss(W1, w2, X, y, lam),
               "sgcompiler grad": lambda: sg_grad(W1, w2, X, y, lam)}
    if autograd is not None:
        ag_grad = autograd.grad(_autograd_penalised_loss(), (0, 1))
        penalty["autograd grad"] = lambda: ag_grad(W1, w2, X, y, lam)
    if jx is not None:
        jax, jnp = jx
        jargs = [jnp.asarray(a) for a in (W1, w2, X, y)] + [lam]
        _add_jax(penalty, "grad", jax.grad(_jax_penalised_loss(jax, jnp), argnums=(0, 1)),
                 jargs, jax)
    x, A, B = jacobian_data(6 if smoke else 200, rng)
    sg_jac = jacobian(fifty)
    jac = {"forward pass": lambda: fifty(x, A, B), "sgcompiler jacobian": lambda: sg_jac(x, A, B)}
    if autograd is not None:
        ag_jac = autograd.jacobian(_autograd_fifty)
        jac["autograd jacobian"] = lambda: ag_jac(x, A, B)
    if jx is not None:
        jax, jnp = jx

        def fifty_jax(x, A, B):
            return jnp.tanh(A @ x) * (B @ x ** 2)
        _add_jax(jac, "jacrev", jax.jacrev(fifty_jax), [jnp.asarray(a) for a in (x, A, B)],
                 jax)
    return [(f"input-gradient penalty loss, grad wrt (W1, w2) ({n}x{d}, {h} hidden)",
             penalty, ("sgcompiler grad", *[k for k in penalty if k.startswith(("autograd",
                                                                              "JAX"))])),
            (f"Jacobian of a {A_ROWS}-output function of {x.size} inputs", jac,
             ("sgcompiler jacobian", *[k for k in jac if k.startswith(("autograd", "JAX"))]))]


def check(calls, names) -> str:
    """'' when sgcompiler's result (names[0]) equals each other system's (names[1:])."""
    ours = calls[names[0]]()
    ours = ours if isinstance(ours, tuple) else (ours,)
    for name in names[1:]:
        theirs = calls[name]()
        theirs = theirs if isinstance(theirs, tuple) else (theirs,)
        for a, b in zip(ours, theirs):
            if not np.allclose(a, b, rtol=1e-8, atol=1e-10):
                return f"{names[0]} differs from {name} by {np.max(np.abs(a - b)):.3g}"
    return ""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--budget", type=float, default=20.0, help="seconds per workload")
    parser.add_argument("--no-jax", action="store_true", help="no JAX contenders")
    parser.add_argument("--threads", type=int, default=1,
                        help="BLAS threads (default 1: the ratios are of work, not of cores)")
    args = parser.parse_args(argv)
    threads = timing.limit_threads(args.threads)
    jx = None if args.smoke or args.no_jax else jax_cpu()
    status = 0
    lines = ["| workload | contender | median time | x forward | x sgcompiler |",
             "| --- | --- | --- | --- | --- |"]
    for title, calls, pair in contenders(args.smoke, jx):
        problem = check(calls, pair)
        if problem:
            print(f"WRONG: {title}: {problem}")
            status = 1
        if args.smoke:
            continue
        samples = timing.interleaved(calls, args.budget)
        median = {k: float(np.median(v)) for k, v in samples.items()}
        for name, t in median.items():
            lines.append(f"| {title} | {name} | {t * 1e3:.3f} ms | "
                         f"{t / median['forward pass']:.2f} | {t / median[pair[0]]:.2f} |")
    if not args.smoke:
        print("\n".join(lines))
        if autograd is None:
            print("\n(autograd is not installed: no comparison)")
        if jx is None:
            print("\n(no JAX contenders: JAX is not installed, or --no-jax)")
        print(f"\n({threads}; JAX's own threads are not limited)")
    return status


if __name__ == "__main__":
    sys.exit(main())
