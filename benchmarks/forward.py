"""Forward mode and second order against what they should cost, as ratios in one run.

    python benchmarks/forward.py            full sizes
    python benchmarks/forward.py --smoke    tiny sizes, correctness only (run by the tests;
                                            no JAX)
    python benchmarks/forward.py --no-jax   without the JAX columns
    python benchmarks/forward.py --no-autograd   without the autograd column

- jvp of the RNN (benchmarks/workloads/rnn.py) against the forward pass (target <= 2x);
- the Hessian of a 100-parameter logistic regression (hessian(): forward over reverse, one
  jvp of the generated gradient per column) against the hand-written X.T @ (s * X)
  (target <= 1.5x);
- hvp of the MLP loss (benchmarks/workloads/mlp.py) with respect to W1 against one gradient
  with respect to W1 (target <= 4x).

Each result is first checked: the jvp against finite differences, the Hessian against the
closed form, the hvp against finite differences of the gradient. When JAX is installed,
the same three are also timed with JAX (jax.jvp, jax.hessian, jvp of jax.grad; eager and
under jax.jit, float64 on the CPU), checked against sgcompiler's results, in the same run:
the JAX columns are the ratio of each to the same base (the forward pass, the hand-written
Hessian, one gradient). When autograd is installed, its column is timed the same way:
autograd.make_jvp (its forward mode), autograd.hessian and
autograd.hessian_tensor_product (reverse over reverse), on the workload's own function
with np bound to autograd.numpy; the last column is autograd's time over sgcompiler's.
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
from benchmarks.systems import jax_cpu, rebind  # noqa: E402
from benchmarks.workloads import mlp as mlp_workload, rnn as rnn_workload  # noqa: E402
from sgcompiler import grad, hessian, hvp, jvp  # noqa: E402

SIZES = {"full": {"rnn": {"hidden": 32, "inputs": 32, "steps": 50},
                  "logreg": (2000, 100),
                  "mlp": {"batch": 128, "inputs": 784, "hidden": 256, "outputs": 10}},
         "smoke": {"rnn": {"hidden": 3, "inputs": 2, "steps": 4}, "logreg": (20, 4),
                   "mlp": {"batch": 4, "inputs": 5, "hidden": 3, "outputs": 2}}}


def logistic(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.sum(y * np.log(p) + (1.0 - y) * np.log(1.0 - p)) / X.shape[0]


def logistic_hessian_hand(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    s = p * (1.0 - p) / X.shape[0]
    return X.T @ (s[:, None] * X)


def _autograd():
    """(autograd, autograd.numpy, getval), or None when autograd is not installed."""
    try:
        import autograd
        import autograd.numpy as anp
        from autograd.tracer import getval
    except ImportError:
        return None
    return autograd, anp, getval


def _as_autograd(fn, ag):
    """The workload function with np bound to autograd's (stop_gradient to getval)."""
    return rebind(fn, np=ag[1], stop_gradient=ag[2])


def _with_autograd(contenders, call, want, ag):
    """Add 'autograd' (call()) to the contenders, after checking that it gives `want`."""
    if ag is None:
        return contenders
    np.testing.assert_allclose(np.asarray(call(), dtype=float), want, rtol=1e-7, atol=1e-10,
                               err_msg="autograd")
    contenders["autograd"] = call
    return contenders


def _as_jax(fn, jax, jnp):
    """The workload function with np (and stop_gradient) bound to JAX's."""
    return rebind(fn, np=jnp, stop_gradient=jax.lax.stop_gradient)


def _with_jax(contenders, fn, jargs, want, jx):
    """Add 'JAX eager' (fn(*jargs)) and 'JAX jit' (jax.jit(fn)(*jargs): the arrays are
    arguments, so XLA cannot fold the work into a constant) to the contenders, after
    checking that each gives `want`."""
    if jx is None:
        return contenders
    jax = jx[0]
    jitted = jax.jit(fn)
    for name, call in (("JAX eager", fn), ("JAX jit", jitted)):
        got = np.asarray(jax.block_until_ready(call(*jargs)), dtype=float)
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-10, err_msg=name)
        contenders[name] = (lambda c=call: jax.block_until_ready(c(*jargs)))
    return contenders


def _rnn_case(sizes, rng, jx, ag):
    args = rnn_workload.make(sizes, rng)
    tangents = tuple(rng.normal(size=a.shape) for a in args[:3]) + (None, None, None)
    fn = rnn_workload.rnn
    _, out_dot = jvp(fn, args, tangents)
    eps = 1e-6
    plus = [a + eps * t if t is not None else a for a, t in zip(args, tangents)]
    minus = [a - eps * t if t is not None else a for a, t in zip(args, tangents)]
    assert np.isclose(out_dot, (fn(*plus) - fn(*minus)) / (2 * eps), rtol=1e-5)
    contenders = {"forward": lambda: fn(*args), "jvp": lambda: jvp(fn, args, tangents)}
    if jx is not None:
        jax, jnp = jx
        jfn = _as_jax(fn, jax, jnp)

        def jax_jvp(W, U, b, xs, h0, target, W_dot, U_dot, b_dot):
            def of_params(W, U, b):
                return jfn(W, U, b, xs, h0, target)
            return jax.jvp(of_params, (W, U, b), (W_dot, U_dot, b_dot))[1]
        jargs = [jnp.asarray(a) for a in args] + [jnp.asarray(t) for t in tangents[:3]]
        contenders = _with_jax(contenders, jax_jvp, jargs, out_dot, jx)
    if ag is not None:
        afn, rest = _as_autograd(fn, ag), args[3:]
        ag_jvp = ag[0].make_jvp(lambda params: afn(*params, *rest))
        contenders = _with_autograd(contenders, lambda: ag_jvp(args[:3])(tangents[:3])[1],
                                    out_dot, ag)
    return contenders


def _logreg_case(shape, rng, jx, ag):
    n, d = shape
    X = rng.normal(size=(n, d))
    y = (rng.random(n) > 0.5).astype(float)
    w = rng.normal(size=d) / np.sqrt(d)
    H = hessian(logistic)
    np.testing.assert_allclose(H(w, X, y), logistic_hessian_hand(w, X, y), rtol=1e-9,
                               atol=1e-12)
    contenders = {"hand X.T @ (s * X)": lambda: logistic_hessian_hand(w, X, y),
                  "hessian": lambda: H(w, X, y)}
    if jx is not None:
        jax, jnp = jx
        contenders = _with_jax(contenders, jax.hessian(_as_jax(logistic, jax, jnp)),
                               [jnp.asarray(a) for a in (w, X, y)], H(w, X, y), jx)
    if ag is not None:
        ag_hessian = ag[0].hessian(_as_autograd(logistic, ag))
        contenders = _with_autograd(contenders, lambda: ag_hessian(w, X, y), H(w, X, y), ag)
    return contenders


def _mlp_case(sizes, rng, jx, ag):
    W1, b1, W2, b2, X, Y = mlp_workload.make(sizes, rng)
    rest = (b1, W2, b2, X, Y)
    v = rng.normal(size=W1.shape)
    g = grad(mlp_workload.mlp)
    eps = 1e-6
    fd = (g(W1 + eps * v, *rest) - g(W1 - eps * v, *rest)) / (2 * eps)
    np.testing.assert_allclose(hvp(mlp_workload.mlp, W1, v, *rest), fd, rtol=1e-4,
                               atol=1e-7)
    contenders = {"gradient": lambda: g(W1, *rest),
                  "hvp": lambda: hvp(mlp_workload.mlp, W1, v, *rest)}
    if jx is not None:
        jax, jnp = jx
        jfn = _as_jax(mlp_workload.mlp, jax, jnp)

        def jax_hvp(W1, v, b1, W2, b2, X, Y):
            def g_of(W):
                return jax.grad(jfn)(W, b1, W2, b2, X, Y)
            return jax.jvp(g_of, (W1,), (v,))[1]
        jargs = [jnp.asarray(a) for a in (W1, v) + rest]
        contenders = _with_jax(contenders, jax_hvp, jargs, hvp(mlp_workload.mlp, W1, v, *rest),
                               jx)
    if ag is not None:       # (hessian_tensor_product takes the vector last)
        ag_hvp = ag[0].hessian_tensor_product(_as_autograd(mlp_workload.mlp, ag))
        contenders = _with_autograd(contenders, lambda: ag_hvp(W1, *rest, v),
                                    hvp(mlp_workload.mlp, W1, v, *rest), ag)
    return contenders


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--budget", type=float, default=3.0, help="seconds per workload")
    parser.add_argument("--no-jax", action="store_true", help="no JAX columns")
    parser.add_argument("--no-autograd", action="store_true", help="no autograd column")
    parser.add_argument("--threads", type=int, default=1,
                        help="BLAS threads (default 1: the ratios are of work, not of cores)")
    args = parser.parse_args(argv)
    threads = timing.limit_threads(args.threads)
    sizes = SIZES["smoke" if args.smoke else "full"]
    rng = np.random.default_rng(0)
    jx = None if args.smoke or args.no_jax else jax_cpu()     # (importing JAX takes seconds)
    ag = None if args.no_autograd else _autograd()        # (checked in --smoke too)
    cases = [("jvp of the RNN / forward pass", _rnn_case(sizes["rnn"], rng, jx, ag), 2.0),
             ("Hessian of logistic regression / hand-written", _logreg_case(
                 sizes["logreg"], rng, jx, ag), 1.5),
             ("hvp of the MLP loss / one gradient", _mlp_case(sizes["mlp"], rng, jx, ag), 4.0)]
    if args.smoke:
        print("forward-mode benchmarks: results checked")
        return 0
    print("| workload | ratio | target | autograd | JAX eager | JAX jit | autograd / sgc "
          "| times |\n|---|---|---|---|---|---|---|---|")
    for title, contenders, target in cases:
        base, ours = list(contenders)[:2]
        # sgcompiler against its base timed by themselves (a peer's call of tens of
        # milliseconds in between leaves the caches cold for the next sample, which costs
        # the tangent code, with more arrays, more than the base), then everyone together
        # for the peers' columns
        alone = timing.interleaved({k: contenders[k] for k in (base, ours)}, args.budget)
        ratio = timing.paired_ratio(alone[ours], alone[base])
        samples = timing.interleaved(contenders, args.budget) if len(contenders) > 2 \
            else alone
        others = [f"{timing.paired_ratio(samples[n], samples[base]):.2f}x" if n in samples
                  else "n/a" for n in ("autograd", "JAX eager", "JAX jit")]
        others.append(f"{timing.paired_ratio(samples['autograd'], samples[ours]):.2f}x"
                      if "autograd" in samples else "n/a")
        times = ", ".join(f"{n} {t * 1e3:.3g} ms" for n, t in timing.medians(samples).items())
        among = timing.paired_ratio(samples[ours], samples[base])
        print(f"| {title} | {ratio:.2f}x ({among:.2f}x among the others) | <= {target}x | "
              f"{' | '.join(others)} | {times} |")
    if jx is None:
        print("\n(no JAX columns: JAX is not installed, or --no-jax)")
    if ag is None:
        print("\n(no autograd column: autograd is not installed, or --no-autograd)")
    print(f"\n({threads}; JAX's own threads are not limited)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
