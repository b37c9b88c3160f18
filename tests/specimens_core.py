"""Small functions the core compiler must differentiate (straight-line code and branches)."""
import math

import numpy as np

import sgcompiler as sgc
from sgcompiler import stop_gradient
from sgcompiler import stop_gradient as sg


def arith(x, y):
    return np.sum(x * y + x / (1.0 + y * y) - x ** 2 * 0.5 + (-y) ** 3)


def broadcast_mix(x, y):
    z = x * y - y / 2.0 + x
    return np.sum(z * z)


def matmul_chain(W, x):
    h = np.tanh(W @ x)
    return np.sum(h * h)


def power_both(x, y):
    return np.sum(x ** y)


def keyword_default(x, scale=3.0, *, shift=0.5):
    return np.sum(np.sin(x * scale + shift))


def reassigned(x):
    z = x * 2.0
    z = np.sin(z)
    z = z * z + x
    z += x
    z *= 3.0
    z -= x / 2.0
    z /= 1.5
    return np.sum(z)


def unpacking(x, y):
    a, b = x * y, x + y
    a, b = b, a
    return np.sum(a * b ** 2)


def math_scalars(x):
    y = math.sin(x) * math.cos(x) + math.exp(x / 4.0) + math.tanh(x) + math.tan(x / 3.0)
    y = y + math.log(x * x + 1.0) + math.log1p(x * x) + math.sqrt(x * x + 2.0)
    return y + math.pow(x * x + 1.0, 1.5) + math.fabs(x) + math.pow(2.0, x)


def numpy_unary(x):
    a = np.exp(x) + np.log(x) + np.log1p(x) + np.expm1(x) + np.sin(x) + np.cos(x)
    b = np.tan(x / 4.0) + np.tanh(x) + np.sqrt(x) + np.square(x) + np.abs(x - 1.0)
    return np.sum(a * b)


def numpy_binary(x, y):
    a = np.power(x, 2.5) + np.maximum(x, y) + np.minimum(x, 0.5 * y)
    b = np.where(x > y, x * y, y / x) + np.clip(x, 0.7, 1.3)
    return np.sum(a * b)


def reductions(x):
    a = np.sum(x, axis=0) + np.mean(x, axis=0) + np.max(x, axis=0) + np.min(x, axis=0)
    b = np.prod(x, axis=1, keepdims=True) + x.sum(axis=1, keepdims=True)
    c = x.mean() + x.max() * x.min() + x.prod() + np.sum(x, axis=-1).sum()
    return np.sum(a * a) + np.sum(b * x) + c


def shapes_ops(x):
    t = np.transpose(x) @ x + x.T @ x
    r = np.reshape(x, (-1,)) + x.reshape(6)
    e = np.expand_dims(x, 0) * np.squeeze(np.expand_dims(x, 1))
    return np.sum(t) + np.dot(r, r) + np.sum(e * e) + np.sum(x.reshape(3, 2) @ x)


def dot_forms(x, M):
    return np.dot(x, M @ x) + x.dot(x) + np.sum(np.dot(M, M) * 0.1) + np.matmul(x, x)


def indexing(x):
    a = x[0] * x[1] + x[-1]
    b = x[1:3] * x[1:, 0][:, None]
    c = x[..., None][:, 0, 0] + x[:, -1]
    return np.sum(a) + np.sum(b) + np.sum(c * c) + x[1, 2] * x[2, 1]


def fancy_index(x, idx):
    return np.sum(x[idx] * x[idx])


def conditional_expr(x, y):
    z = x * y if np.sum(x) > 0 else x / y
    w = np.exp(z) if y > 1.0 else -z
    return np.sum(w)


def branches(x, n):
    y = x * 2.0
    if n > 1:
        y = y * y
        if n > 2:
            y = np.sin(y)
        else:
            z = y + 1.0
            y = z * x
    elif n < 0:
        return np.sum(x)
    else:
        y = -y
    return np.sum(y * x)


def nondiff_values(x):
    n = len(x)
    k = int(np.floor(x.shape[0] / 2))
    i = np.argmax(x)
    s = np.sign(x)
    m = x > 0
    scale = float(np.shape(x)[0]) + k + n // 2
    return np.sum(x * s) * scale + x[i] + np.sum(np.where(m, x, 0.0))


def stable_softmax(x, w):
    z = x - stop_gradient(np.max(x))
    e = np.exp(z)
    s = e / np.sum(e)
    return np.sum(s * w)


def stop_alias(x):
    return np.sum(x * sg(x))


def stop_module_attribute(x):
    return np.sum(x * sgc.stop_gradient(np.exp(x)))


def stop_reused(x):
    m = stop_gradient(x * x)
    return np.sum(m * x + m * m + x)


def stop_everything(x):
    return stop_gradient(np.sum(x * x))


def float_conversion(x):
    return float(np.sum(x * x)) * 2.0


ROWS = [
    (arith, lambda r: [r.normal(size=(2, 3)), r.normal(size=(2, 3))]),
    (broadcast_mix, lambda r: [r.normal(size=(2, 3)), r.normal(size=(3,))]),
    (broadcast_mix, lambda r: [r.normal(size=(2, 1)), r.normal(size=(1, 3))]),
    (broadcast_mix, lambda r: [r.normal(size=(4, 2, 3)), r.normal(size=(2, 1))]),
    (broadcast_mix, lambda r: [float(r.normal()), r.normal(size=(2, 3))]),
    (broadcast_mix, lambda r: [r.normal(size=(3,)), float(r.normal())]),
    (broadcast_mix, lambda r: [float(r.normal()), float(r.normal())]),
    (matmul_chain, lambda r: [r.normal(size=(3, 4)), r.normal(size=(4,))]),
    (matmul_chain, lambda r: [r.normal(size=(3, 4)), r.normal(size=(4, 2))]),
    (power_both, lambda r: [r.uniform(0.5, 2, size=(2, 3)), r.normal(size=(3,))]),
    (keyword_default, lambda r: [r.normal(size=(4,))]),
    (reassigned, lambda r: [r.normal(size=(3, 2))]),
    (unpacking, lambda r: [r.normal(size=(3,)), r.normal(size=(2, 3))]),
    (math_scalars, lambda r: [float(r.uniform(0.3, 1.5))]),
    (numpy_unary, lambda r: [r.uniform(0.2, 2.0, size=(2, 3))]),
    (numpy_binary, lambda r: [r.uniform(0.2, 2.0, size=(2, 3)), r.uniform(0.2, 2.0, size=(3,))]),
    (reductions, lambda r: [r.normal(size=(3, 4))]),
    (shapes_ops, lambda r: [r.normal(size=(2, 3))]),
    (dot_forms, lambda r: [r.normal(size=(3,)), r.normal(size=(3, 3))]),
    (indexing, lambda r: [r.normal(size=(3, 4))]),
    (conditional_expr, lambda r: [r.normal(size=(3,)) + 1.0, 2.0]),
    (conditional_expr, lambda r: [r.normal(size=(3,)) - 2.0, 0.5]),
    (nondiff_values, lambda r: [r.normal(size=(5,))]),
    (stable_softmax, lambda r: [r.normal(size=(6,)), r.normal(size=(6,))]),
    (stable_softmax, lambda r: [r.normal(size=(2, 3)), r.normal(size=(3,))]),
    (float_conversion, lambda r: [r.normal(size=(3,))]),
]
