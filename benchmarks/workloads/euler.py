"""A damped pendulum integrated by 1000 explicit Euler steps on Python floats."""
import math

from . import Workload


def pendulum(k, c, theta0, omega0, dt, steps):
    theta, omega = theta0, omega0
    for _ in range(steps):
        alpha = -k * math.sin(theta) - c * omega
        theta = theta + dt * omega
        omega = omega + dt * alpha
    return theta * theta + omega * omega


def pendulum_hand(k, c, theta0, omega0, dt, steps):
    thetas, omegas, sines = [], [], []
    theta, omega = theta0, omega0
    for _ in range(steps):
        s = math.sin(theta)
        thetas.append(theta)
        omegas.append(omega)
        sines.append(s)
        alpha = -k * s - c * omega
        theta = theta + dt * omega
        omega = omega + dt * alpha
    dtheta, domega = 2.0 * theta, 2.0 * omega
    dk = dc = 0.0
    for i in range(steps - 1, -1, -1):
        dalpha = dt * domega
        dk -= dalpha * sines[i]
        dc -= dalpha * omegas[i]
        dtheta, domega = (dtheta - dalpha * k * math.cos(thetas[i]),
                          domega + dt * dtheta - c * dalpha)
    return dk, dc


def make(sizes, rng):
    return (float(rng.uniform(1.0, 2.0)), float(rng.uniform(0.05, 0.2)),
            float(rng.uniform(0.5, 1.0)), 0.0, 0.01, sizes["steps"])


def for_torch(torch):
    def pendulum_torch(k, c, theta0, omega0, dt, steps):
        theta, omega = theta0, omega0
        for _ in range(steps):
            alpha = -k * torch.sin(theta) - c * omega
            theta = theta + dt * omega
            omega = omega + dt * alpha
        return theta * theta + omega * omega
    return pendulum_torch


WORKLOAD = Workload(
    name="euler", title="pendulum, 1000 Euler steps on Python floats",
    fn=pendulum, wrt=("k", "c"), hand=pendulum_hand, make=make,
    sizes={"full": {"steps": 1000}, "smoke": {"steps": 7}}, kind="scalar-loop",
    torch=for_torch,
    slow={"jax": "about 10 s per call; --slow adds it",
          "jax jit": "XLA compiles the 1000 unrolled steps in about a minute; --slow adds it"})
