"""Loops, branches, lists and their combinations, for the gradient table."""
import numpy as np



def rnn(x, W, U):
    h = np.zeros(W.shape[0])
    for t in range(x.shape[0]):
        h = np.tanh(W @ h + U @ x[t])
    return np.sum(h)


def euler(k, y0):
    y = y0
    dt = 0.01
    for i in range(100):
        y = y + dt * (-k * y + np.sin(y))
    return y


def newton_sqrt(a):
    x = a
    while abs(x * x - a) > 1e-12:
        x = 0.5 * (x + a / x)
    return x


def range_forms(x):
    s = 0.0
    for i in range(1, len(x), 2):
        s = s + x[i] * x[i - 1]
    for j in range(len(x) - 1, -1, -1):
        s = s * 0.9 + x[j]
    n = int(np.sum(x > 0)) + 1
    for k in range(n):
        s = s + np.sum(x) * k
    return s


def over_rows(M):
    total = 0.0
    for row in M:
        total = total + np.sum(row ** 2) * np.max(row)
    return total


def enumerate_zip_reversed(xs, ys):
    out = []
    for i, v in enumerate(xs):
        out.append(v * (i + 1))
    tot = 0.0
    for a, b in zip(out, ys):
        tot = tot + a * b
    for v in reversed(xs):
        tot = tot * 0.5 + v
    return tot


def break_continue_else(x):
    s = 0.0
    for i in range(len(x)):
        if x[i] < -1.0:
            break
        if x[i] < 0:
            continue
        s = s + x[i] * x[i]
    else:
        s = s * 2.0
    return s


def nested_break_in_if(X):
    total = 0.0
    for i in range(X.shape[0]):
        if np.sum(X[i]) > -10.0:
            for j in range(X.shape[1]):
                if X[i, j] > 1.5:
                    break
                total = total + X[i, j] ** 2
        total = total * 1.1
    return total


def while_with_break(x):
    s = x
    n = 0
    while True:
        s = np.sin(s) + 0.5 * s
        n += 1
        if n >= 7:
            break
    return np.sum(s)


def while_else(x):
    i = 0
    acc = x
    while i < 3:
        acc = acc * x
        i += 1
    else:
        acc = acc + 1.0
    return np.sum(acc)


def return_in_loop(x):
    for i in range(5):
        if np.sum(x) > 3.0:
            return np.sum(x * x)
        x = x * 1.5
    return np.sum(x)


def list_build_and_stack(x):
    hs = []
    h = x
    for i in range(4):
        h = np.tanh(h * 1.3 + 0.1 * i)
        hs.append(h)
    return np.sum(np.array(hs) * 1.0) + sum(hs).sum()


def comprehension(xs):
    squares = [v ** 2 for v in xs]
    evens = [squares[i] * xs[i] for i in range(len(xs)) if i % 2 == 0]
    return sum(squares) + sum(evens)


def tuple_values(x, y):
    pair = (x * y, x + y)
    a, b = pair
    c = pair[0] * pair[1]
    return np.sum(a * b + c)


def loop_index_in_branch(x):
    s = 0.0
    for i in range(len(x)):
        if i % 2 == 0:
            s = s + x[i] ** 2
        elif i % 3 == 0:
            s = s - np.exp(x[i])
        else:
            s = s * x[i]
    return s


def loop_var_after_loop(x):
    for i in range(3):
        x = x * 2.0
    return np.sum(x) * i


def conditional_defined(x, flag):
    if flag:
        z = x * 3.0
    else:
        z = np.sin(x)
    if flag:
        w = z * x
    else:
        w = z
    return np.sum(w)


def build_by_writes(x):
    out = np.zeros(len(x))
    for i in range(len(x)):
        out[i] = x[i] ** 2 + (out[i - 1] if i > 0 else 0.0)
    return np.sum(out * out)


def overwrite_slices(x, w):
    y = x * 1.0
    y[0] = w * 3.0
    y[1:3] = y[1:3] * w
    y[:, 0] += w
    return np.sum(np.sin(y))


def cumulative_writes(x):
    s = np.zeros_like(x)
    s[0] = x[0]
    for i in range(1, len(x)):
        s[i] = s[i - 1] * 0.5 + x[i]
    return np.sum(s ** 2)


def write_in_branch_loop(x):
    y = x.copy()
    for i in range(len(x)):
        if x[i] > 0:
            y[i] = np.exp(x[i]) * y[i - 1]
        else:
            y[i] += 1.0
    return np.sum(y * x)


def inner_loop_rebinds_needed_index(x):
    # the second loop does nothing differentiable, but its inner loop rebinds j, which
    # the first loop's adjoint reads: it must be replayed to restore j (found by fuzzing)
    for j in range(3):
        x = x + x[j] * 0.5
    for i in range(2):
        lst = []
        for j in range(3):
            lst.append(np.abs(x))
    return x[-1]


ROWS = [
    (inner_loop_rebinds_needed_index, lambda r: [r.normal(size=(3,))]),
    (build_by_writes, lambda r: [r.normal(size=(5,))]),
    (overwrite_slices, lambda r: [r.normal(size=(4, 3)), 0.7]),
    (overwrite_slices, lambda r: [r.normal(size=(4, 3)), r.normal(size=(1,))]),
    (cumulative_writes, lambda r: [r.normal(size=(5,))]),
    (write_in_branch_loop, lambda r: [r.normal(size=(6,))]),
    (rnn, lambda r: [r.normal(size=(4, 3)), 0.5 * r.normal(size=(5, 5)), r.normal(size=(5, 3))]),
    (euler, lambda r: [0.7, 1.3]),
    (newton_sqrt, lambda r: [2.0]),
    (newton_sqrt, lambda r: [9.0]),
    (range_forms, lambda r: [r.normal(size=(6,))]),
    (over_rows, lambda r: [r.normal(size=(3, 4))]),
    (enumerate_zip_reversed, lambda r: [r.normal(size=(4,)), r.normal(size=(3,))]),
    (break_continue_else, lambda r: [np.array([0.5, -0.2, 1.0, -2.0, 3.0])]),
    (break_continue_else, lambda r: [np.array([0.5, -0.2, 1.0, 2.0])]),
    (nested_break_in_if, lambda r: [r.normal(size=(3, 4))]),
    (while_with_break, lambda r: [r.normal(size=(3,))]),
    (while_else, lambda r: [r.normal(size=(3,))]),
    (return_in_loop, lambda r: [r.normal(size=(3,))]),
    (return_in_loop, lambda r: [r.normal(size=(3,)) + 2.0]),
    (list_build_and_stack, lambda r: [r.normal(size=(3,))]),
    (comprehension, lambda r: [r.normal(size=(5,))]),
    (tuple_values, lambda r: [r.normal(size=(3,)), r.normal(size=(2, 3))]),
    (loop_index_in_branch, lambda r: [r.normal(size=(7,))]),
    (loop_var_after_loop, lambda r: [r.normal(size=(3,))]),
    (conditional_defined, lambda r: [r.normal(size=(3,)), True]),
    (conditional_defined, lambda r: [r.normal(size=(3,)), False]),
]
