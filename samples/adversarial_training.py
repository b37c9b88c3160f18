"""Adversarial training of a small classifier, with the attack under stop_gradient.

The fast gradient sign method (FGSM) perturbs each input by eps in the direction that
increases the loss the most (in the max-norm):  x_adv = x + eps * sign(d loss / d x).
Here d loss / d x is itself computed by sgcompiler (`grad(loss, wrt="x")`).

Adversarial training (Goodfellow et al., 2015) minimises
    0.5 * loss(params, x, y) + 0.5 * loss(params, stop_gradient(x_adv), y):
the attack is recomputed for the current parameters at every step, but it is a constant of
the training loss: no gradient flows back through the attack (and so through the input
gradient inside it). sgcompiler generates no adjoint code for it at all; the generated
gradient simply calls `fgsm`.

The data are two interleaved half-moons in the plane, made with NumPy. The sample trains one
classifier normally and one adversarially, on the same minibatches, and compares their
accuracy on adversarial examples crafted against each of them.

Run:  python samples/adversarial_training.py [--plot boundary.png]   (--plot needs matplotlib)
See the code:  sgcompiler samples/adversarial_training.py:adversarial_loss
Explain it:  sgcompiler explain samples/adversarial_training.py:adversarial_loss"""
import sys

import numpy as np

from sgcompiler import grad, stop_gradient, value_and_grad

EPS = 0.25


def logits(params, x):
    """A 2-32-32-1 tanh network; params is a dict of arrays."""
    h = np.tanh(x @ params["W1"] + params["b1"])
    h = np.tanh(h @ params["W2"] + params["b2"])
    return h @ params["w3"] + params["b3"]


def loss(params, x, y):
    """Mean logistic loss (binary cross-entropy of the logits), y in {0, 1}."""
    z = logits(params, x)
    return np.mean(np.maximum(z, 0.0) + np.log1p(np.exp(-np.abs(z))) - y * z)


input_gradient = grad(loss, wrt="x")


def fgsm(params, x, y, eps):
    """The fast gradient sign attack on the inputs x."""
    return x + eps * np.sign(input_gradient(params, x, y))


def adversarial_loss(params, x, y, eps):
    """Half clean loss, half loss on adversarial examples; the attack is a constant."""
    x_adv = stop_gradient(fgsm(params, x, y, eps))
    return 0.5 * loss(params, x, y) + 0.5 * loss(params, x_adv, y)


def plain_loss(params, x, y, eps):
    """Ordinary training (eps unused; the same signature as adversarial_loss)."""
    return loss(params, x, y)


# --- plain NumPy: data, training loop, evaluation --------------------------------------------

def two_moons(rng, n, noise=0.1):
    """n points on two interleaved half circles, labels 0 (upper) and 1 (lower)."""
    t = rng.uniform(0.0, np.pi, n)
    y = (rng.random(n) < 0.5) * 1.0
    upper = np.stack([np.cos(t), np.sin(t)], axis=1)
    lower = np.stack([1.0 - np.cos(t), 0.5 - np.sin(t)], axis=1)
    x = np.where(y[:, None] == 0.0, upper, lower)
    return x + rng.normal(scale=noise, size=x.shape), y


def init_params(rng, hidden=32):
    return {"W1": rng.normal(size=(2, hidden)), "b1": np.zeros(hidden),
            "W2": rng.normal(size=(hidden, hidden)) / np.sqrt(hidden), "b2": np.zeros(hidden),
            "w3": rng.normal(size=hidden) / np.sqrt(hidden), "b3": 0.0}


def accuracy(params, x, y):
    return float(np.mean((logits(params, x) > 0.0) == (y > 0.5)))


def adversarial_accuracy(params, x, y, eps):
    """Accuracy on FGSM examples crafted against this very model (white box)."""
    return accuracy(params, fgsm(params, x, y, eps), y)


def train(losses, x, y, eps=EPS, epochs=30, batch=25, lr=0.03, momentum=0.9, seed=0,
          report=None):
    """SGD with momentum, one model per loss in `losses`, all on the same minibatches.

    Returns {loss name: params}. `report(epoch, {name: (mean loss, train accuracy)})` is
    called after each epoch.
    """
    rng = np.random.default_rng(seed)
    start = init_params(rng)
    models = {f.__name__: (value_and_grad(f), dict(start), {k: 0.0 for k in start})
              for f in losses}
    for epoch in range(epochs):
        order = rng.permutation(len(x))
        totals = dict.fromkeys(models, 0.0)
        for s in range(0, len(x), batch):
            i = order[s:s + batch]
            for name, (step, params, velocity) in models.items():
                value, g = step(params, x[i], y[i], eps)
                totals[name] += value * len(i) / len(x)
                for k in params:
                    velocity[k] = momentum * velocity[k] - lr * g[k]
                    params[k] = params[k] + velocity[k]
        if report:
            report(epoch + 1, {name: (totals[name], accuracy(m[1], x, y))
                               for name, m in models.items()})
    return {name: m[1] for name, m in models.items()}


def plot(path, models, x, y, eps):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("--plot needs matplotlib (python3 -m pip install matplotlib); no plot drawn")
        return
    gx, gy = np.meshgrid(np.linspace(-1.6, 2.6, 300), np.linspace(-1.1, 1.6, 200))
    grid = np.stack([gx.ravel(), gy.ravel()], axis=1)
    fig, axes = plt.subplots(1, len(models), figsize=(6 * len(models), 4))
    for ax, (name, params) in zip(axes, models.items()):
        z = logits(params, grid).reshape(gx.shape)
        ax.contourf(gx, gy, z > 0, levels=1, colors=["#dde8f5", "#f5e0dd"])
        ax.contour(gx, gy, z, levels=[0.0], colors="k")
        ax.scatter(*x.T, c=y, cmap="coolwarm", s=8)
        label = {"plain_loss": "plain training"}.get(name, "adversarial training")
        ax.set_title(f"{label}: accuracy on FGSM examples (eps={eps}) "
                     f"{adversarial_accuracy(params, x, y, eps):.0%}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"plot written to {path}")


def main(argv):
    rng = np.random.default_rng(0)
    x, y = two_moons(rng, 500)
    x_test, y_test = two_moons(rng, 500)
    print(f"two moons: {len(x)} training and {len(x_test)} test points; "
          f"FGSM attack with eps = {EPS}")
    print("training a plain and an adversarially trained classifier (same minibatches)")
    print("  epoch   plain: loss  accuracy   adversarial: loss  accuracy")

    def report(epoch, stats):
        (l0, a0), (l1, a1) = stats["plain_loss"], stats["adversarial_loss"]
        print(f"  {epoch:5d}   {l0:11.4f}  {a0:8.3f}   {l1:17.4f}  {a1:8.3f}")

    models = train([plain_loss, adversarial_loss], x, y, report=report)
    print()
    print("test accuracy                       clean   on FGSM examples")
    for name, params in models.items():
        print(f"  {name:32s}  {accuracy(params, x_test, y_test):5.3f}   "
              f"{adversarial_accuracy(params, x_test, y_test, EPS):5.3f}")
    print()
    gradient = grad(adversarial_loss)
    gradient(models["adversarial_loss"], x[:5], y[:5], EPS)      # compile for dict params
    source = gradient.source
    print("the generated gradient of adversarial_loss calls fgsm in its forward sweep and has")
    print(f"no adjoint code for the attack (fgsm_backward generated: {'fgsm_backward' in source}):")
    print(source[:source.index("\n\n")])
    print()
    if "--plot" in argv:
        plot(argv[argv.index("--plot") + 1], models, x_test, y_test, EPS)


if __name__ == "__main__":
    main(sys.argv[1:])
