"""Gradient functions used from several threads, pickled, and sent to other processes."""
import importlib.util
import itertools
import multiprocessing
import pickle
import sys
import threading

import numpy as np
import pytest

from gradcheck import numeric_grad
from sgcompiler import grad, value_and_grad

import specimens_pickle as P

_count = itertools.count()
THREADS = 8


def fresh_module(tmp_path):
    """A module never compiled before: a loss that calls a user helper."""
    n = next(_count)
    path = tmp_path / f"threaded_{n}.py"
    path.write_text(f"import numpy as np\n\n"
                    f"def helper_{n}(x):\n    return np.sin(x) * 2.0\n\n"
                    f"def loss(x):\n    return np.sum(helper_{n}(x))\n")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def in_threads(call):
    """`call()` in THREADS threads that start together: their results, and any errors."""
    barrier = threading.Barrier(THREADS)
    results, errors = [None] * THREADS, []

    def work(k):
        try:
            barrier.wait()
            results[k] = call()
        except BaseException as exc:        # reported by the test, with the thread's number
            errors.append((k, repr(exc)))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results, errors


@pytest.fixture
def switch_often():
    """Threads switch every few bytecodes, so that a race shows on every run."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


@pytest.mark.parametrize("shared", [True, False], ids=["one-grad", "grad-each"])
def test_first_calls_from_many_threads(tmp_path, switch_often, shared):
    x = np.linspace(0.1, 0.9, 3)
    for _ in range(5):
        m = fresh_module(tmp_path)
        g = grad(m.loss)
        results, errors = in_threads(lambda: (g if shared else grad(m.loss))(x))
        assert not errors
        expected = numeric_grad(m.loss, (x,), 0)
        for r in results:
            np.testing.assert_allclose(r, expected, rtol=1e-6, atol=1e-8)


def test_recursive_helper_from_many_threads(switch_often):
    g = grad(P.power_loss)
    results, errors = in_threads(lambda: g(0.7, 5))
    assert not errors
    expected = numeric_grad(P.power_loss, (0.7, 5), 0)
    np.testing.assert_allclose(results, [expected] * THREADS, rtol=1e-6)


X, W = np.linspace(-0.5, 0.5, 4), np.linspace(1.0, 2.0, 4)


def expected():
    return numeric_grad(P.loss, (X, W), 0)


@pytest.mark.parametrize("make", [lambda: grad(P.loss), lambda: grad(P.loss, wrt=(0, "w")),
                                  lambda: value_and_grad(P.loss)],
                         ids=["grad", "wrt-tuple", "value_and_grad"])
def test_pickle_round_trip_before_and_after_a_call(make):
    g = make()
    first = g(X, W)
    for _ in range(2):                  # after a call, and after a round trip's call
        g = pickle.loads(pickle.dumps(g))
        again = g(X, W)
        assert repr(again) == repr(first)
    fresh = pickle.loads(pickle.dumps(make()))      # before any call
    assert repr(fresh(X, W)) == repr(first)
    dx = first[1] if g.with_value else first[0] if isinstance(first, tuple) else first
    np.testing.assert_allclose(dx, expected(), rtol=1e-6, atol=1e-8)


def test_pickle_gradient_of_gradient():
    gg = grad(grad(P.cubic))
    first = gg(0.7)
    same = pickle.loads(pickle.dumps(gg))
    assert same(0.7) == first
    np.testing.assert_allclose(first, 6 * 0.7 * np.cos(0.7 ** 2) - 4 * 0.7 ** 3 * np.sin(0.7 ** 2)
                               + 2.0, rtol=1e-9)


def test_pickle_decorated_function():
    P.decorated(X)
    same = pickle.loads(pickle.dumps(P.decorated))
    assert same is P.decorated
    np.testing.assert_allclose(same(X), numeric_grad(P.decorated.primal, (X,), 0), rtol=1e-6)


def test_spawn_pool():
    g = grad(P.loss)
    g(X, W)                             # compiled here first: it is pickled all the same
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        got = pool.starmap(P.apply, [(g, X, W), (g, X, 2 * W)])
    np.testing.assert_allclose(got[0], expected(), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got[1], 2 * got[0], rtol=1e-12)
