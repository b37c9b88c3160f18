"""EM for a Gaussian mixture: the E-step under stop_gradient, the M-step by gradient ascent.

EM maximises the marginal log-likelihood  log L(theta) = sum_n log sum_k pi_k N(x_n | mu_k, var_k)
by alternating two steps. The E-step computes the responsibilities r[n, k] = p(k | x_n, theta);
the M-step maximises the expected complete-data log-likelihood

    Q(theta) = sum_n sum_k r[n, k] * (log pi_k + log N(x_n | mu_k, var_k))

with r held fixed. "Held fixed" is exactly stop_gradient: `em_objective` computes r from its
own parameters, under stop_gradient, so sgcompiler generates no adjoint code for the E-step.

Fisher's identity says that the gradient of Q with r held fixed, at the point where r was
computed, equals the gradient of log L. This sample checks it numerically (with respect to
the means, the mixing weights through softmax logits, and the variances), shows that without
stop_gradient the two gradients differ, and then fits the mixture by EM whose M-step is
gradient ascent on Q: the log-likelihood never decreases, and the fit is the one closed-form
EM finds.

Run:  python samples/em_gmm.py [--plot em.png]     (--plot needs matplotlib)
See the code:  sgcompiler samples/em_gmm.py:em_objective --wrt mu,logits,var
Explain it:  sgcompiler explain samples/em_gmm.py:em_objective --wrt mu,logits,var"""
import sys

import numpy as np

from sgcompiler import grad, stop_gradient, value_and_grad

PARAMS = ("mu", "logits", "var")


def log_joint(mu, logits, var, x):
    """log pi_k + log N(x_n | mu_k, var_k), shape (n, k): the mixing weights are softmax(logits)."""
    log_pi = logits - np.log(np.sum(np.exp(logits)))
    d = x[:, None] - mu
    return log_pi - 0.5 * np.log(2.0 * np.pi * var) - 0.5 * d ** 2 / var


def responsibilities(mu, logits, var, x):
    """The E-step: r[n, k] = p(component k | x_n), a softmax of log_joint over k."""
    lj = log_joint(mu, logits, var, x)
    p = np.exp(lj - np.max(lj, axis=1, keepdims=True))
    return p / np.sum(p, axis=1, keepdims=True)


def log_likelihood(mu, logits, var, x):
    """log L: the marginal log-likelihood of the data x (shape (n,)) under the mixture."""
    lj = log_joint(mu, logits, var, x)
    m = stop_gradient(np.max(lj, axis=1, keepdims=True))
    return np.sum(m) + np.sum(np.log(np.sum(np.exp(lj - m), axis=1)))


def em_objective(mu, logits, var, x):
    """Q: the expected complete-data log-likelihood, the E-step under stop_gradient."""
    r = stop_gradient(responsibilities(mu, logits, var, x))
    return np.sum(r * log_joint(mu, logits, var, x))


def em_objective_without_stop(mu, logits, var, x):
    """The same Q, but the gradient also flows through the responsibilities (wrong for EM)."""
    r = responsibilities(mu, logits, var, x)
    return np.sum(r * log_joint(mu, logits, var, x))


def m_step_objective(mu, logits, var, x, r):
    """Q for given responsibilities r: the objective the M-step maximises."""
    return np.sum(r * log_joint(mu, logits, var, x))


# --- plain NumPy: data, closed-form EM, and EM with a gradient M-step ------------------------

def make_data(rng, n=600):
    """n points from a three-component mixture on the line, and the true (mu, pi, var)."""
    mu, pi, sd = np.array([-4.0, 0.0, 3.0]), np.array([0.3, 0.5, 0.2]), np.array([0.8, 1.0, 0.6])
    k = rng.choice(3, size=n, p=pi)
    return rng.normal(mu[k], sd[k]), (mu, pi, sd ** 2)


def closed_form_m_step(theta, x, r):
    """The textbook M-step: weighted means, log of the weights, weighted variances."""
    nk = r.sum(axis=0)
    mu = r.T @ x / nk
    var = np.sum(r * (x[:, None] - mu) ** 2, axis=0) / nk
    return mu, np.log(nk / nk.sum()), var


M_STEP = value_and_grad(m_step_objective, wrt=PARAMS)


def gradient_m_step(theta, x, r, steps=30):
    """The M-step as gradient ascent on Q (r fixed), with an adaptive step size.

    A step is taken only if it increases Q and keeps the variances positive, so every
    M-step increases Q, and therefore (the EM argument) never decreases log L.
    """
    q, g = M_STEP(*theta, x, r)
    lr = 1.0 / len(x)
    for _ in range(steps):
        while True:
            new = tuple(p + lr * gp for p, gp in zip(theta, g))
            if np.all(new[2] > 0):
                q_new, g_new = M_STEP(*new, x, r)
                if q_new >= q:
                    break
            lr /= 2.0
            if lr < 1e-15:              # no ascent step left: Q is at its maximum
                return theta
        theta, q, g = new, q_new, g_new
        lr *= 1.5
    return theta


def fit(theta, x, m_step, max_iter=500, tol=1e-10):
    """Run EM from theta until log L changes by less than tol; (theta, log L per iteration)."""
    history = [log_likelihood(*theta, x)]
    for _ in range(max_iter):
        theta = m_step(theta, x, responsibilities(*theta, x))
        history.append(log_likelihood(*theta, x))
        if abs(history[-1] - history[-2]) < tol:
            break
    return theta, np.array(history)


def initial_guess(x, k=3):
    """Means spread over the data, equal weights, the data's variance."""
    return np.quantile(x, np.linspace(0.2, 0.8, k)), np.zeros(k), np.full(k, np.var(x))


def fisher_check(theta, x):
    """Largest difference between grad log L and grad Q, with and without stop_gradient."""
    g_ll = grad(log_likelihood, wrt=PARAMS)(*theta, x)
    out = {}
    for f in (em_objective, em_objective_without_stop):
        g_q = grad(f, wrt=PARAMS)(*theta, x)
        out[f.__name__] = max(float(np.max(np.abs(a - b))) for a, b in zip(g_ll, g_q))
    return out


def plot(path, x, theta):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("--plot needs matplotlib (python3 -m pip install matplotlib); no plot drawn")
        return
    mu, logits, var = theta
    pi = np.exp(logits) / np.sum(np.exp(logits))
    grid = np.linspace(x.min() - 1, x.max() + 1, 400)
    parts = pi * np.exp(-0.5 * (grid[:, None] - mu) ** 2 / var) / np.sqrt(2 * np.pi * var)
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.hist(x, bins=60, density=True, color="0.85", label="data")
    ax.plot(grid, parts, "--", lw=1)
    ax.plot(grid, parts.sum(axis=1), "k", lw=2, label="mixture fitted by EM")
    ax.set_title("EM with a gradient-ascent M-step (E-step under stop_gradient)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot written to {path}")


def main(argv):
    rng = np.random.default_rng(0)
    x, (true_mu, true_pi, true_var) = make_data(rng)
    print(f"EM for a Gaussian mixture: {len(x)} points from 3 components, "
          f"true means {np.round(true_mu, 2)}")
    print()
    theta = (rng.normal(size=3), rng.normal(size=3), rng.uniform(0.5, 2.0, size=3))
    diff = fisher_check(theta, x)
    print("Fisher's identity at a random parameter point: max |grad Q - grad log L|")
    print(f"  responsibilities under stop_gradient  {diff['em_objective']:9.2e}  (equal)")
    print(f"  without stop_gradient                 {diff['em_objective_without_stop']:9.2e}"
          "  (not equal)")
    print()
    start = initial_guess(x)
    closed, closed_ll = fit(start, x, closed_form_m_step)
    fitted, ll = fit(start, x, gradient_m_step)
    print("fitting by EM: closed-form M-step vs gradient-ascent M-step on Q")
    print("  iteration   log L (closed form)   log L (gradient M-step)")
    for i in (0, 5, 10, 20, 40, 80):
        print(f"  {i:9d}   {closed_ll[min(i, len(closed_ll) - 1)]:19.6f}   "
              f"{ll[min(i, len(ll) - 1)]:23.6f}")
    print(f"  {'final':>9s}   {closed_ll[-1]:19.6f}   {ll[-1]:23.6f}")
    print(f"  iterations to converge: closed form {len(closed_ll) - 1}, gradient {len(ll) - 1}")
    print(f"  smallest change of log L between iterations: {np.min(np.diff(ll)):+.1e} "
          "(it never decreases)")
    order = np.argsort(fitted[0])
    print(f"  fitted means   {np.round(fitted[0][order], 4)}  (true {true_mu})")
    print(f"  fitted weights {np.round(np.exp(fitted[1]) / np.exp(fitted[1]).sum(), 4)}")
    print(f"  fitted vars    {np.round(fitted[2], 4)}")
    print(f"  max |means(gradient EM) - means(closed-form EM)| = "
          f"{np.max(np.abs(fitted[0] - closed[0])):.1e}")
    if "--plot" in argv:
        plot(argv[argv.index("--plot") + 1], x, fitted)


if __name__ == "__main__":
    main(sys.argv[1:])
