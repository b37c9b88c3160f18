"""Kepler's equation E = M + e sin(E) solved by fixed-point iteration until the step is
below 1e-12 (20 to 110 iterations at e = 0.8, by the mean anomaly M): a `while` loop whose trip count depends on
the data, as a user writes it.

The hand-written gradient backpropagates through the iterations the loop ran (what reverse
mode computes, not the implicit-function derivative of the converged E): the iterates
and their sines are kept in the forward, the cosines computed in the backward.
"""
import math

from . import Workload


def kepler(M, e):
    E = M
    step = 1.0
    while abs(step) > 1e-12:
        E_next = M + e * math.sin(E)
        step = E_next - E
        E = E_next
    return E


def kepler_hand(M, e):
    Es, sines = [], []
    E = M
    step = 1.0
    while abs(step) > 1e-12:
        s = math.sin(E)
        Es.append(E)
        sines.append(s)
        E_next = M + e * s
        step = E_next - E
        E = E_next
    dE, dM, de = 1.0, 0.0, 0.0
    for i in range(len(Es) - 1, -1, -1):
        dM += dE
        de += dE * sines[i]
        dE = dE * e * math.cos(Es[i])
    return dM + dE, de          # (E starts as M)


def make(sizes, rng):
    return (float(rng.uniform(0.0, math.pi)), sizes["e"])


WORKLOAD = Workload(
    name="kepler", title="Kepler's equation by fixed-point iteration (e=0.8)",
    fn=kepler, wrt=("M", "e"), hand=kepler_hand, make=make,
    sizes={"full": {"e": 0.8}, "smoke": {"e": 0.3}}, kind="scalar-loop", jit=False)
