"""Counters that the adjoint sweep walks back instead of taping (reverse.py, `_Undo`).

`n = n + 1.0` on a variable that only ever holds whole numbers is undone exactly by
`n = n - 1.0`, so the primal loop does not push `n` each trip. Each case is checked
against finite differences, and the generated code says whether the counter was taped.
"""
import numpy as np
import pytest

from gradcheck import assert_grad_matches
from sgcompiler import grad


def series(x):
    term, total, n = 1.0, 1.0, 1.0
    while abs(term) > 1e-16 * abs(total):
        term = term * x / n
        total = total + term
        n = n + 1.0
    return total


def int_steps(x):
    k = 0
    y = x
    for _ in range(6):
        k = k + 2
        y = y * np.sin(x * k)
    return np.sum(y)


def counting_down(x):
    n = 10.0
    y = 0.0
    while n > 0.0:
        y = y + np.sum(x ** 2) / n
        n = n - 2.0
    return y


def skipping_and_breaking(x):
    n = 1.0
    y = x
    for i in range(8):
        if i % 3 == 0:
            n = n + 1.0
        if i == 6:
            break
        y = np.tanh(y * n)
    return np.sum(y)


def reset_inside(x):
    y = x
    for _ in range(3):
        m = 0.0
        for _ in range(4):
            m = m + 1.0
            y = y + np.sin(y) / m
    return np.sum(y)


def helper_with_counter(x):
    n = 1.0
    for _ in range(3):
        x = x * n
        n = n + 1.0
    return x


def through_a_helper(x):
    return np.sum(helper_with_counter(np.sin(x)))


@pytest.mark.parametrize("f, x", [
    (series, 2.5), (int_steps, np.linspace(0.1, 0.5, 4)), (counting_down, np.ones((2, 3))),
    (skipping_and_breaking, np.array([0.3, -0.2])), (reset_inside, np.array([0.5, 1.0])),
    (through_a_helper, np.array([0.2, 0.4, 0.6])),
])
def test_counters_are_walked_back(f, x):
    assert_grad_matches(f, [x])
    g = grad(f)
    g(x)
    assert "_tape.append(n)" not in g.source and "_tape.append(k)" not in g.source


def test_the_series_restores_n_by_subtracting():
    g = grad(series)
    g(2.5)
    assert "n = n - 1.0" in g.source


def fractional(x):
    n = 1.0
    y = x
    for _ in range(5):
        n = n + 0.1             # (n + 0.1) - 0.1 need not be n
        y = y * n
    return y


def assigned_otherwise(x, start):
    n = start                   # any float: not known to be whole
    y = x
    for _ in range(5):
        n = n + 1.0
        y = y / n
    return y


def huge_step(x):
    n = 1.0
    y = x
    for _ in range(5):
        n = n + 1e17            # beyond 2 ** 53 every step rounds
        y = y / n
    return y


@pytest.mark.parametrize("f, args", [(fractional, [1.5]), (assigned_otherwise, [1.5, 0.3]),
                                     (huge_step, [1.5])])
def test_other_counters_are_taped(f, args):
    assert_grad_matches(f, args, wrt=[0])
    g = grad(f)
    g(*args)
    assert "_tape.append(n)" in g.source
