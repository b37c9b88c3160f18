"""exp(x) by its Taylor series, summed in a while loop until the terms stop mattering.

The trip count depends on the data (about 100 iterations at x = 30), so the loop can not be
unrolled in advance; reverse mode must record how many iterations ran.
"""
from . import Workload


def exp_series(x):
    term = 1.0
    total = 1.0
    n = 1.0
    while abs(term) > 1e-16 * abs(total):
        term = term * x / n
        total = total + term
        n = n + 1.0
    return total


def exp_series_hand(x):
    terms = []
    term = 1.0
    total = 1.0
    n = 1.0
    while abs(term) > 1e-16 * abs(total):
        terms.append(term)
        term = term * x / n
        total = total + term
        n = n + 1.0
    dx = 0.0
    dterm = 0.0
    for i in range(len(terms) - 1, -1, -1):
        dterm += 1.0                    # total = total + term, d total = 1 throughout
        n = i + 1.0
        dx += dterm * terms[i] / n
        dterm = dterm * x / n
    return dx


def make(sizes, rng):
    return (float(sizes["x"] + rng.uniform(0.0, 0.1)),)


def for_torch(torch):
    def _value(t):
        return t.item() if torch.is_tensor(t) else t

    def exp_series_torch(x):
        term = 1.0
        total = 1.0
        n = 1.0
        while abs(_value(term)) > 1e-16 * abs(_value(total)):
            term = term * x / n
            total = total + term
            n = n + 1.0
        return total
    return exp_series_torch


WORKLOAD = Workload(
    name="while_series", title="exp(x) Taylor series in a while loop (x=30, ~100 trips)",
    fn=exp_series, wrt=("x",), hand=exp_series_hand, make=make,
    sizes={"full": {"x": 30.0}, "smoke": {"x": 2.0}}, kind="scalar-loop",
    torch=for_torch, jit=False)
