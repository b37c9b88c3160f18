"""Logistic regression on more data than fits in memory: dask arrays, sgcompiler gradients,
scipy.optimize, a dask.distributed LocalCluster.

The data is never in memory at once: `make_data` describes a dask array of `rows` x 10
features, generated chunk by chunk from a seed wherever dask computes it (4e8 rows are 32
GB). The loss is written for NumPy; called with dask arrays, `value_and_grad(loss)` returns
the loss and its gradient *uncomputed* (dask arrays). `dask.compute(value, gradient)` then
runs them as one graph, one pass over the data per iteration, on the cluster's worker
processes, and returns two small NumPy results for `scipy.optimize.minimize` (L-BFGS-B).

dask is optional for sgcompiler; to run this sample:  python3 -m pip install "dask[array]"
distributed scipy

Run:  python samples/out_of_core.py                  4e6 rows (a quick look)
      python samples/out_of_core.py --rows 4e8       32 GB of features, on 2 workers
See the code:  sgcompiler samples/out_of_core.py:loss
Explain it:  sgcompiler explain samples/out_of_core.py:loss
"""
import argparse
import time

import numpy as np

from sgcompiler import value_and_grad

FEATURES = 10


def loss(w, X, y, lam):
    """Mean logistic loss of a linear classifier (labels y in {0, 1}) plus lam |w|^2 / 2."""
    z = X @ w
    return np.mean(np.logaddexp(0.0, z) - y * z) + 0.5 * lam * np.sum(w ** 2)


def make_data(rows, chunk, seed=0):
    """Features X (rows x FEATURES) and labels y from a noisy linear rule, as dask arrays
    that nothing computes until asked; and the rule's weights."""
    import dask.array as da
    truth = np.random.default_rng(seed).normal(size=FEATURES)
    state = da.random.RandomState(seed)
    X = state.normal(size=(rows, FEATURES), chunks=(chunk, FEATURES))
    noise = state.logistic(size=rows, chunks=chunk)
    y = (X @ truth + noise > 0).astype(float)
    return X, y, truth


def fit(X, y, lam=1e-3, maxiter=50):
    """Minimise `loss` over the data with L-BFGS-B; each step computes the value and the
    gradient in one dask computation. Returns (scipy result, the losses it saw)."""
    import dask
    from scipy.optimize import minimize
    value_grad = value_and_grad(loss)
    seen = []

    def fun(w):
        value, gradient = dask.compute(*value_grad(w, X, y, lam))
        seen.append(float(value))
        return float(value), np.asarray(gradient, dtype=float)
    result = minimize(fun, np.zeros(FEATURES), jac=True, method="L-BFGS-B",
                      options={"maxiter": maxiter})
    return result, seen


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=4e6)
    parser.add_argument("--chunk", type=float, default=1e6)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--maxiter", type=int, default=50)
    args = parser.parse_args(argv)
    from dask.distributed import Client, LocalCluster
    rows, chunk = int(args.rows), int(args.chunk)
    X, y, truth = make_data(rows, chunk)
    print(f"{rows:.0e} rows x {FEATURES} features ({rows * FEATURES * 8 / 1e9:.1f} GB), "
          f"{X.numblocks[0]} chunks, {args.workers} worker processes")
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster):
        start = time.perf_counter()
        result, seen = fit(X, y, maxiter=args.maxiter)
        seconds = time.perf_counter() - start
    cosine = result.x @ truth / np.linalg.norm(result.x) / np.linalg.norm(truth)
    print(f"L-BFGS-B: {result.nit} iterations, {len(seen)} passes over the data, "
          f"{seconds:.1f} s; loss {seen[0]:.4f} -> {result.fun:.4f}")
    print(f"cosine between the fitted and the true weights: {cosine:.4f}")
    return result


if __name__ == "__main__":
    main()
