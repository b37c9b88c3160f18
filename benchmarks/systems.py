"""The contenders: sgcompiler, the hand-written gradient, and the optional other AD systems.

Each `prepare_*` returns a zero-argument callable that computes the gradient of a workload on
fixed arguments, and a function that converts its result to NumPy arrays (for the
correctness check against the hand-written gradient). An optional system that is not
installed is simply absent; nothing here is needed to install or test sgcompiler.

autograd and JAX run the workload's own function with `np`, `math` and `stop_gradient`
rebound in a copy of its globals, so all systems differentiate the same source.
"""
from __future__ import annotations

import importlib.util
import inspect
import time
import types

import numpy as np

OPTIONAL = ("autograd", "jax", "torch")


def installed(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def parameters(fn) -> list[str]:
    return list(inspect.signature(fn).parameters)


def positions(workload) -> tuple[int, ...]:
    names = parameters(workload.fn)
    return tuple(names.index(w) for w in workload.wrt)


def as_tuple(grads) -> tuple:
    return grads if isinstance(grads, tuple) else (grads,)


def rebind(fn, **names):
    """`fn` with some of its global names bound to other objects (in a copy of globals)."""
    env = dict(fn.__globals__)
    env.update({k: v for k, v in names.items() if k in fn.__code__.co_names})
    return types.FunctionType(fn.__code__, env, fn.__name__, fn.__defaults__, fn.__closure__)


# --- sgcompiler and the hand-written gradient ------------------------------------------------


def prepare_sgcompiler(workload, args):
    """The public API as a user calls it; compile on the first call (outside the timings)."""
    from sgcompiler import grad
    gradient = grad(workload.fn, wrt=workload.wrt)
    gradient(*args)
    return (lambda: gradient(*args)), as_tuple


def compile_seconds(workload, args, repeats: int = 5) -> list[float]:
    """Seconds to compile the gradient from scratch (all passes, empty caches), each time, as
    the first call of `grad(fn)` compiles it: for these arguments' types, shapes and dtypes,
    gradient only."""
    from sgcompiler import pipeline
    names = parameters(workload.fn)
    scalars = frozenset(p for p, a in zip(names, args) if type(a) is float or type(a) is int)
    arrays = tuple((p, np.shape(a), np.result_type(a)) for p, a in zip(names, args)
                   if type(a) is np.ndarray or isinstance(a, np.floating))
    out = []
    for _ in range(repeats):
        pipeline._CACHE.clear()
        pipeline._PIECES.clear()
        start = time.perf_counter()
        pipeline.compile_gradient(workload.fn, tuple(workload.wrt), scalars, value=False,
                                  arrays=arrays).bind(workload.fn)
        out.append(time.perf_counter() - start)
    return out


# --- optional systems ----------------------------------------------------------------------


def prepare_autograd(workload, args):
    import autograd
    import autograd.numpy as anp
    from autograd.tracer import getval
    fn = rebind(workload.fn, np=anp, math=anp, stop_gradient=getval)
    pos = positions(workload)
    g = autograd.grad(fn, argnum=pos if len(pos) > 1 else pos[0])
    return (lambda: g(*args)), lambda r: tuple(np.asarray(x) for x in as_tuple(r))


def jax_cpu():
    """(jax, jax.numpy) set up for float64 on the CPU, or None when JAX is not installed."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
    return jax, jnp


def _jax():
    return jax_cpu()[0]


def _jax_setup(workload, args):
    jax = _jax()
    import jax.numpy as jnp
    fn = rebind(workload.fn, np=jnp, math=jnp, stop_gradient=jax.lax.stop_gradient)
    jargs = tuple(jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args)
    g = jax.grad(fn, argnums=positions(workload))
    return jax, g, jargs


def _from_jax(result):
    return tuple(np.asarray(x) for x in result)


def prepare_jax_eager(workload, args):
    jax, g, jargs = _jax_setup(workload, args)
    return (lambda: jax.block_until_ready(g(*jargs))), _from_jax


def prepare_jax_jit(workload, args):
    """Returns (call, convert, compile seconds); raises if the function cannot be traced."""
    jax, g, jargs = _jax_setup(workload, args)
    static = tuple(i for i, a in enumerate(args) if type(a) is int)
    jitted = jax.jit(g, static_argnums=static)
    start = time.perf_counter()
    jax.block_until_ready(jitted(*jargs))
    compile_s = time.perf_counter() - start
    return (lambda: jax.block_until_ready(jitted(*jargs))), _from_jax, compile_s


def prepare_torch(workload, args):
    import torch
    fn = workload.torch(torch)
    names = parameters(workload.fn)
    targs = []
    for name, a in zip(names, args):
        if isinstance(a, (np.ndarray, float)):
            targs.append(torch.tensor(a, dtype=torch.float64,
                                      requires_grad=name in workload.wrt))
        else:
            targs.append(a)
    inputs = [targs[i] for i in positions(workload)]

    def call():
        return torch.autograd.grad(fn(*targs), inputs)
    return call, lambda r: tuple(x.detach().numpy() for x in r)


def thread_facts(others=()) -> dict:
    """Thread counts of the libraries in use (for the results file)."""
    facts = {}
    try:
        from threadpoolctl import threadpool_info
        for pool in threadpool_info():
            extra = ", ".join(str(pool[k]) for k in ("architecture", "threading_layer")
                              if pool.get(k))
            facts[f"{pool.get('internal_api')} {pool.get('version') or ''}"
                  f"{f' ({extra})' if extra else ''}"] = pool.get("num_threads")
    except ImportError:
        facts["threadpoolctl"] = "not installed"
    if "torch" in others:
        import torch
        facts["torch threads"] = torch.get_num_threads()
    return facts
