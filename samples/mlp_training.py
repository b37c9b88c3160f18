"""A small MLP trained with minibatch SGD; the parameters are a dict of arrays.

`grad(loss)(params, x, y)` with `params` a dict returns a dict with the same keys, each
gradient shaped like its parameter, so the update is one line per parameter:
`params[k] -= lr * g[k]`. The loss is softmax cross-entropy with the stable log-softmax
(`z - stop_gradient(max z) - log sum exp(...)`).

The data are three interleaved spirals in the plane, made with NumPy; a linear classifier
gets about a third of them right.

Run:  python samples/mlp_training.py
See the code:  sgcompiler samples/mlp_training.py:loss
Explain it:  sgcompiler explain samples/mlp_training.py:loss
"""
import numpy as np

from sgcompiler import grad, stop_gradient


def loss(params, x, y):
    """Mean softmax cross-entropy of a 2-64-3 tanh network; y is one-hot, shape (n, 3)."""
    h = np.tanh(x @ params["W1"] + params["b1"])
    z = h @ params["W2"] + params["b2"]
    z = z - stop_gradient(np.max(z, axis=1, keepdims=True))
    log_p = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(np.sum(y * log_p, axis=1))


def predict(params, x):
    h = np.tanh(x @ params["W1"] + params["b1"])
    return np.argmax(h @ params["W2"] + params["b2"], axis=1)


def spirals(rng, n_per_class=100, classes=3, noise=0.2):
    """Points on `classes` interleaved spiral arms; returns x (n, 2) and labels (n,)."""
    r = np.tile(np.linspace(0.05, 1.0, n_per_class), classes)
    labels = np.repeat(np.arange(classes), n_per_class)
    t = labels * 2 * np.pi / classes + 4.0 * r + rng.normal(scale=noise, size=r.size)
    return np.stack([r * np.cos(t), r * np.sin(t)], axis=1), labels


def init_params(rng, hidden=64, classes=3):
    return {"W1": rng.normal(size=(2, hidden)), "b1": np.zeros(hidden),
            "W2": rng.normal(size=(hidden, classes)) / np.sqrt(hidden),
            "b2": np.zeros(classes)}


def train(x, labels, epochs=40, batch=20, lr=0.5, seed=0, report=None):
    """Minibatch SGD; returns the parameters and the mean training loss of each epoch."""
    rng = np.random.default_rng(seed)
    params = init_params(rng, classes=labels.max() + 1)
    y = np.eye(labels.max() + 1)[labels]
    dloss = grad(loss)
    losses = []
    for epoch in range(epochs):
        order = rng.permutation(len(x))
        for start in range(0, len(x), batch):
            i = order[start:start + batch]
            g = dloss(params, x[i], y[i])              # a dict shaped like params
            for k in params:
                params[k] = params[k] - lr * g[k]
        losses.append(float(loss(params, x, y)))
        if report:
            report(epoch + 1, losses[-1], float(np.mean(predict(params, x) == labels)))
    return params, losses


def main():
    rng = np.random.default_rng(0)
    x, labels = spirals(rng)
    x_test, labels_test = spirals(rng)
    print(f"MLP 2-64-3 (tanh), softmax cross-entropy, SGD; three spirals, {len(x)} points")
    print("parameters: " + ", ".join(f"{k} {v.shape}" for k, v in init_params(rng).items()))
    params, _ = train(x, labels, report=lambda e, l, a: print(
        f"  epoch {e:2d}   loss {l:.4f}   training accuracy {a:.3f}"))
    g = grad(loss)(params, x, np.eye(3)[labels])
    print("the gradient is a dict with the same structure: "
          + ", ".join(f"{k} {v.shape}" for k, v in g.items()))
    print(f"final accuracy: training {np.mean(predict(params, x) == labels):.3f}, "
          f"test {np.mean(predict(params, x_test) == labels_test):.3f}")


if __name__ == "__main__":
    main()
