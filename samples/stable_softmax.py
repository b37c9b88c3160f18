"""The numerically stable softmax: why `x - stop_gradient(max(x))` is the right way.

Softmax is shift-invariant, so subtracting max(x) changes nothing mathematically but stops
exp() from overflowing. Because the shift does not change the value, its gradient is zero
too, so there is no need to differentiate through max at all: stop_gradient says so, and
sgcompiler then generates no adjoint code for the max (no argmax mask, no tie handling).

Run:  python samples/stable_softmax.py
See the code:  sgcompiler samples/stable_softmax.py:softmax_loss_stable
Explain it:  sgcompiler explain samples/stable_softmax.py:softmax_loss_stable"""
import numpy as np

from sgcompiler import grad, stop_gradient


def softmax_loss_naive(x, w):
    e = np.exp(x)
    s = e / np.sum(e)
    return np.sum(s * w)


def softmax_loss_stable(x, w):
    z = x - stop_gradient(np.max(x))
    e = np.exp(z)
    s = e / np.sum(e)
    return np.sum(s * w)


def softmax_loss_max(x, w):
    z = x - np.max(x)
    e = np.exp(z)
    s = e / np.sum(e)
    return np.sum(s * w)


LOSSES = (softmax_loss_naive, softmax_loss_stable, softmax_loss_max)


def gradients(x, w):
    """d loss / d x of each version, as {name: gradient}."""
    with np.errstate(over="ignore", invalid="ignore"):
        return {f.__name__: grad(f)(x, w) for f in LOSSES}


def main():
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=6), rng.normal(size=6)
    g = gradients(x, w)
    print("moderate inputs: largest difference between the three gradients")
    print(f"  stable vs naive: {np.max(np.abs(g['softmax_loss_stable'] - g['softmax_loss_naive'])):.2e}")
    print(f"  max    vs naive: {np.max(np.abs(g['softmax_loss_max'] - g['softmax_loss_naive'])):.2e}")
    big = x + 1000.0
    g = gradients(big, w)
    print("inputs around 1000: are the gradients finite?")
    for name, value in g.items():
        print(f"  {name:22s} {'finite' if np.all(np.isfinite(value)) else 'NOT finite (overflow)'}")
    print()
    print("generated gradient of softmax_loss_stable (note: no adjoint code for the max):")
    print(grad(softmax_loss_stable).source)
    print("generated gradient of softmax_loss_max (differentiates through np.max):")
    print(grad(softmax_loss_max).source)


if __name__ == "__main__":
    main()
