"""An elementwise-heavy function of two 1e6-element arrays (memory-bandwidth bound)."""
import numpy as np

from . import Workload


def elementwise(x, y):
    a = np.sin(x) * np.exp(-y * y)
    b = np.tanh(x * y)
    c = np.sqrt(x * x + y * y + 1.0)
    return np.sum(a * b + c)


def elementwise_hand(x, y):
    e = y * y
    np.negative(e, out=e)
    np.exp(e, out=e)                  # exp(-y^2)
    a = np.sin(x)
    a *= e                            # a
    t = x * y
    np.tanh(t, out=t)                 # b
    c = x * x
    c += y * y
    c += 1.0
    np.sqrt(c, out=c)                 # c
    u = t * t
    np.subtract(1.0, u, out=u)
    u *= a                            # d sum / d(x*y) = a (1 - b^2)
    dx = np.cos(x)
    dx *= e
    dx *= t                           # b e cos(x)
    tmp = u * y
    dx += tmp
    np.divide(x, c, out=tmp)
    dx += tmp
    dy = a * t
    dy *= y
    dy *= -2.0                        # -2 y a b
    np.multiply(u, x, out=tmp)
    dy += tmp
    np.divide(y, c, out=tmp)
    dy += tmp
    return dx, dy


def make(sizes, rng):
    n = sizes["n"]
    return rng.normal(size=n), rng.normal(size=n)


def for_torch(torch):
    def elementwise_torch(x, y):
        a = torch.sin(x) * torch.exp(-y * y)
        b = torch.tanh(x * y)
        c = torch.sqrt(x * x + y * y + 1.0)
        return torch.sum(a * b + c)
    return elementwise_torch


WORKLOAD = Workload(
    name="elementwise", title="elementwise-heavy, two 1e6 arrays",
    fn=elementwise, wrt=("x", "y"), hand=elementwise_hand, make=make,
    sizes={"full": {"n": 1_000_000}, "smoke": {"n": 11}}, torch=for_torch)
