"""A binary restricted Boltzmann machine trained with contrastive divergence (CD-k).

An RBM with visible units v, hidden units h, weights W and biases b (visible), c (hidden)
has the free energy  F(v) = -v.b - sum_j softplus(c_j + (v W)_j),  and the gradient of the
log-likelihood of the data is  -dF(data) + E_model[dF(v)]. CD-k estimates the expectation
under the model with the end of a k-step Gibbs chain started at the data, and treats those
negative samples as constants: the loss

    cd_loss = mean F(data) - mean F(stop_gradient(negative samples))

has exactly the textbook CD update (positive minus negative statistics) as its gradient.
The Gibbs chain is a loop inside `cd_loss`; because its result is under stop_gradient,
sgcompiler generates no adjoint code for it. (The chain's last step uses the probabilities
p(v | h) rather than a sample, as is usual; without stop_gradient the gradient would flow
into them and would no longer be the CD update.)

The data set is "bars and stripes": 4 x 4 images in which every row, or every column, is
all on or all off.

Run:  python samples/rbm_contrastive_divergence.py
See the code:  sgcompiler samples/rbm_contrastive_divergence.py:cd_loss --wrt W,b,c
Explain it:  sgcompiler explain samples/rbm_contrastive_divergence.py:cd_loss --wrt W,b,c"""
import numpy as np

from sgcompiler import grad, stop_gradient

PARAMS = ("W", "b", "c")


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def softplus(z):
    """log(1 + exp(z)), written so that it does not overflow for large z."""
    return np.maximum(z, 0.0) + np.log1p(np.exp(-np.abs(z)))


def free_energy(v, W, b, c):
    """F(v) for each row of v: -log sum_h exp(-E(v, h)) up to a constant."""
    return -(v @ b) - np.sum(softplus(v @ W + c), axis=1)


def cd_loss(W, b, c, v_data, k, rng):
    """The CD-k loss: its gradient is the contrastive-divergence update (with a minus sign)."""
    v = v_data
    for _ in range(k):                       # the Gibbs chain, started at the data
        p_h = sigmoid(v @ W + c)
        h = (rng.random(p_h.shape) < p_h) * 1.0
        p_v = sigmoid(h @ W.T + b)
        v = (rng.random(p_v.shape) < p_v) * 1.0
    v_neg = stop_gradient(p_v)               # negative samples: constants to the compiler
    return np.mean(free_energy(v_data, W, b, c)) - np.mean(free_energy(v_neg, W, b, c))


def cd_loss_without_stop(W, b, c, v_data, k, rng):
    """The same loss with the gradient flowing into the chain's last step (not CD)."""
    v = v_data
    for _ in range(k):
        p_h = sigmoid(v @ W + c)
        h = (rng.random(p_h.shape) < p_h) * 1.0
        p_v = sigmoid(h @ W.T + b)
        v = (rng.random(p_v.shape) < p_v) * 1.0
    return np.mean(free_energy(v_data, W, b, c)) - np.mean(free_energy(p_v, W, b, c))


# --- plain NumPy: the data, the textbook update, and the reconstruction error ---------------

def bars_and_stripes(size=4):
    """Every size x size image whose rows (or columns) are each all on or all off, flattened."""
    rows = (np.arange(2 ** size)[:, None] >> np.arange(size)) & 1
    horizontal = np.repeat(rows[:, :, None], size, axis=2)      # each row constant
    vertical = np.transpose(horizontal, (0, 2, 1))               # each column constant
    images = np.concatenate([horizontal, vertical]).reshape(-1, size * size)
    return np.unique(images, axis=0).astype(float)              # all-off/all-on appear twice


def textbook_cd_update(W, b, c, v_data, k, rng):
    """The CD-k update as usually written: <v h>_data - <v h>_model, the same Gibbs chain."""
    v = v_data
    for _ in range(k):
        p_h = 1.0 / (1.0 + np.exp(-(v @ W + c)))
        h = (rng.random(p_h.shape) < p_h) * 1.0
        p_v = 1.0 / (1.0 + np.exp(-(h @ W.T + b)))
        v = (rng.random(p_v.shape) < p_v) * 1.0
    h_data = 1.0 / (1.0 + np.exp(-(v_data @ W + c)))
    h_model = 1.0 / (1.0 + np.exp(-(p_v @ W + c)))
    n = len(v_data)
    return (v_data.T @ h_data / n - p_v.T @ h_model / n,
            np.mean(v_data, axis=0) - np.mean(p_v, axis=0),
            np.mean(h_data, axis=0) - np.mean(h_model, axis=0))


def reconstruction_error(W, b, c, v):
    """Mean squared difference between v and p(v | p(h | v)): the usual progress measure."""
    p_h = 1.0 / (1.0 + np.exp(-(v @ W + c)))
    p_v = 1.0 / (1.0 + np.exp(-(p_h @ W.T + b)))
    return float(np.mean((v - p_v) ** 2))


def compare_with_textbook(W, b, c, v, k, seed, loss=cd_loss):
    """Largest difference between -grad(loss) and the textbook update, same random numbers."""
    ours = grad(loss, wrt=PARAMS)(W, b, c, v, k, np.random.default_rng(seed))
    book = textbook_cd_update(W, b, c, v, k, np.random.default_rng(seed))
    return max(float(np.max(np.abs(-g - u))) for g, u in zip(ours, book))


def train(data, hidden=16, k=1, epochs=30, batch=10, lr=0.1, seed=0, report=None):
    """Minibatch gradient descent on cd_loss; returns (W, b, c) and the error per epoch."""
    rng = np.random.default_rng(seed)
    W = rng.normal(scale=0.1, size=(data.shape[1], hidden))
    b, c = np.zeros(data.shape[1]), np.zeros(hidden)
    dloss = grad(cd_loss, wrt=PARAMS)
    errors = [reconstruction_error(W, b, c, data)]
    for epoch in range(epochs):
        order = rng.permutation(len(data))
        for start in range(0, len(data), batch):
            v = data[order[start:start + batch]]
            gW, gb, gc = dloss(W, b, c, v, k, rng)
            W, b, c = W - lr * gW, b - lr * gb, c - lr * gc
        errors.append(reconstruction_error(W, b, c, data))
        if report:
            report(epoch + 1, errors[-1], float(cd_loss(W, b, c, data, k, rng)))
    return (W, b, c), errors


def main():
    patterns = bars_and_stripes()
    data = np.repeat(patterns, 10, axis=0)
    print(f"RBM, 16 visible and 16 hidden units, trained with CD-1 on bars and stripes "
          f"({len(patterns)} patterns, {len(data)} examples)")
    rng = np.random.default_rng(1)
    W, b, c = rng.normal(size=(16, 16)), rng.normal(size=16), rng.normal(size=16)
    print()
    print("sgcompiler's gradient vs the textbook CD update (positive minus negative statistics),")
    print("same Gibbs chain: max |difference|")
    for k in (1, 5):
        print(f"  CD-{k}, negative samples under stop_gradient  "
              f"{compare_with_textbook(W, b, c, patterns, k, seed=2):.1e}")
    print(f"  CD-1, without stop_gradient                  "
          f"{compare_with_textbook(W, b, c, patterns, 1, 2, cd_loss_without_stop):.1e}"
          "  (not the CD update)")
    print()
    print("training: epoch, reconstruction error, CD loss (free-energy gap)")
    (W, b, c), errors = train(data, report=lambda e, err, gap: print(
        f"  epoch {e:2d}   reconstruction error {err:.4f}   CD loss {gap:+.3f}"))
    print(f"reconstruction error fell from {errors[0]:.4f} to {errors[-1]:.4f}")


if __name__ == "__main__":
    main()
