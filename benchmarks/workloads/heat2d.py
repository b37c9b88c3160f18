"""The residual of one implicit step of the 2-D heat equation, written with slices whose
bounds come from the grid's shape (a 256 x 256 grid, a diffusivity field)."""
import numpy as np

from . import Workload


def heat2d(u, kappa, u_prev):
    n, m = u.shape
    lap = (u[2:n, 1:m - 1] + u[0:n - 2, 1:m - 1] + u[1:n - 1, 2:m] + u[1:n - 1, 0:m - 2]
           - 4.0 * u[1:n - 1, 1:m - 1])
    r = u[1:n - 1, 1:m - 1] - u_prev[1:n - 1, 1:m - 1] - kappa * lap
    return 0.5 * np.sum(r * r)


def heat2d_hand(u, kappa, u_prev):
    inner = u[1:-1, 1:-1]
    lap = u[2:, 1:-1] + u[:-2, 1:-1]
    lap += u[1:-1, 2:]
    lap += u[1:-1, :-2]
    lap -= 4.0 * inner
    r = inner - u_prev[1:-1, 1:-1]
    r -= kappa * lap
    dkappa = -(r * lap)
    dlap = -(kappa * r)
    du = np.zeros_like(u)
    du[1:-1, 1:-1] += r
    du[2:, 1:-1] += dlap
    du[:-2, 1:-1] += dlap
    du[1:-1, 2:] += dlap
    du[1:-1, :-2] += dlap
    dlap *= 4.0
    du[1:-1, 1:-1] -= dlap
    return du, dkappa


def make(sizes, rng):
    n = sizes["grid"]
    u = rng.normal(size=(n, n))
    kappa = rng.uniform(0.05, 0.2, size=(n - 2, n - 2))
    u_prev = u + 0.1 * rng.normal(size=(n, n))
    return u, kappa, u_prev


def for_torch(torch):
    def heat2d_torch(u, kappa, u_prev):
        n, m = u.shape
        lap = (u[2:n, 1:m - 1] + u[0:n - 2, 1:m - 1] + u[1:n - 1, 2:m] + u[1:n - 1, 0:m - 2]
               - 4.0 * u[1:n - 1, 1:m - 1])
        r = u[1:n - 1, 1:m - 1] - u_prev[1:n - 1, 1:m - 1] - kappa * lap
        return 0.5 * torch.sum(r * r)
    return heat2d_torch


WORKLOAD = Workload(
    name="heat2d", title="2-D heat-equation residual with computed slices (256 x 256)",
    fn=heat2d, wrt=("u", "kappa"), hand=heat2d_hand, make=make,
    sizes={"full": {"grid": 256}, "smoke": {"grid": 5}}, torch=for_torch)
