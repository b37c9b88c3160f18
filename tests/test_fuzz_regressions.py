"""Minimal reproducers of what the random-program test (test_random_programs.py) found.

Each function is the smallest program found that shows one problem; the comment above it
says what sgcompiler did when it was found and what finite differences (the right answer)
say. Fixed ones stay as regression tests (FIXED). One whose bug is still open is in OPEN,
marked xfail(strict=True): when it is fixed, the test passes, strict makes that an error,
and whoever fixes it moves it to FIXED.
"""
import numpy as np
import pytest

from gradcheck import assert_grad_matches
from sgcompiler import SGCompilerError, grad, stop_gradient, value_and_grad
from sgcompiler.backend.loader import function_from_text
from sgcompiler.runtime import joined_part, repeated_part

X = np.array([0.4, -0.7, 1.2])       # np.sum(X) > 0
Y = np.array([0.5, -1.0, 2.0])


def twice(u):
    return 2.0 * u


# abs() of a NumPy scalar: the inlined rule loses its `* 1.0` and subtracts two NumPy
# bools: TypeError "numpy boolean subtract, the `-` operator, is not supported".
# Expected [1, 0, 0].
def abs_of_numpy_scalar(x):
    return abs(x[0])


# An early `return` in one branch, after an element was read: the adjoint of x is the
# float 0.0 on the branch taken, and `dx[0] += db` then fails with
# TypeError "'float' object is not subscriptable". Expected [1, 0, 0].
def early_return_after_index(x):
    b = x[0]
    if np.sum(x) > 0.0:
        return b
    return x[2]


# The same with a fancy index: np.add.at(dx, ...) with dx = 0.0 raises
# TypeError "first operand must be array". Expected [2, 1, 0].
def early_return_after_fancy_index(x):
    b = x[[0, 0, 1]]
    if np.sum(x) > 0.0:
        return np.sum(b)
    return x[2]


# The same with a written copy: the written array's adjoint is 0.0 on the branch taken
# and `dbuf[0]` fails with TypeError "'float' object is not subscriptable".
# Expected [1, 1, 1].
def early_return_after_element_write(x):
    buf = x.copy()
    buf[0] = x[0]
    if np.sum(x) > 0.0:
        return np.sum(x)
    return np.sum(buf)


# An element of a user function's result: add_at(da, 1, db) adds in place into da, which
# is a broadcast view (unreduce of a scalar), so every element gets db.
# sgcompiler gives [4, 4, 4]; expected [2, 4, 2].
def index_of_call_result(x):
    a = twice(x)
    b = a[1]
    return np.sum(a) + b


# A name assigned only in a branch that is not taken, then overwritten: the primal sweep
# saves its old value (`_a_old = a`) and raises UnboundLocalError. Expected [2, 0, 0].
def overwrite_name_bound_only_in_untaken_branch(x):
    if np.sum(x) > 10.0:
        a = x
    a = x[0]
    return a * 2.0


# `a += y` on an array works in place in Python, so b (the same array) changes too; the
# compiler treats it as `a = a + y`: value 6.0 instead of 7.5 at (X * 0 + [1, 2, 3], Y),
# and gradient with respect to y 0 instead of 1. (Refusing augmented assignment to an
# array that another name may share would also be right.)
def inplace_add_through_alias(x, y):
    a = x * 1.0
    b = a
    a += y
    return np.sum(b)


# A rule of the form g * mask, with g folded to the constant 1.0, leaves the bool mask as
# the adjoint; the next rule negates it: TypeError "The numpy boolean negative, the `-`
# operator, is not supported". Expected [-1, -1, 0].
def clip_of_negation(x):
    return np.sum(np.clip(-x, -0.5, 0.8))


# The slice of a user function's result: add_at(dd, slice(None, 2), dc) into a broadcast
# view raises ValueError "operand array with iterator write flag set is read-only".
# Expected 2 * (1 - tanh(x) ** 2) * [2, 2, 1].
def slice_of_call_result(x):
    d = twice(np.tanh(x))
    c = d[:2]
    return np.sum(d) + np.sum(c)


# A dead assignment inside a loop that reads x drops the adjoint code of everything after
# the loop: NameError "name 'dx' is not defined". Expected [1, 1, 1].
def dead_statement_in_loop(x):
    for i in range(2):
        a = np.sin(x)
    return np.sum(x)


# The same through a list comprehension (a loop) whose list is never used, inside a branch:
# UnboundLocalError "cannot access local variable 'dx'". Expected [1, 1, 1].
def unused_comprehension_in_branch(x):
    if np.sum(x) > 0.0:
        lst = [x for i in range(2)]
    return np.sum(x)


# The name the function returns is overwritten, and the backward sweep restores its old
# value before the result is returned: grad raises TypeError "f must return a scalar ...
# returned a value of shape (3,)" (value_and_grad returns None when the old value is the
# None a loop tape starts with). Expected [0, 0, 2].
def returned_name_restored(x):
    if np.sum(x) > 10.0:
        a = x
    else:
        a = x * 2.0
    a = a[2]
    return a


def returned_name_restored_after_loop(x):
    for i in range(2):
        a = x
    a = a[2]
    return a


# Like overwrite_name_bound_only_in_untaken_branch, with a plain copy: `_buf_old = buf`
# raises UnboundLocalError. Expected [1, 1, 1].
def overwrite_copy_bound_only_in_untaken_branch(x):
    if np.sum(x) > 10.0:
        buf = x * 2.0
    buf = x
    return np.sum(buf)


# The adjoint of np.sum(...) is folded to the constant 1.0, which has lost the shape of the
# summed array, so unbroadcast(1.0, y) cannot sum it over the broadcast axis: d/dy is 1.0
# instead of 3.0 (and d/dx[0] 2 instead of 4 below). A regression after 6cd8af4.
def sum_of_broadcast_scalar(x, y):
    return np.sum(x + y)


def sum_of_broadcast_element(x):
    return np.sum(x + x[0])


# A negative constant base: the normal form prints `_pow = -2.0 ** 2`, which is -4.0.
# sgcompiler gives [-4, -4, -4] (and value_and_grad a value of the wrong sign); expected
# [4, 4, 4].
def negative_constant_base(x):
    return np.sum((-2.0) ** 2 * x)


# The same for a loop variable: a loop in a branch that is not taken binds i, and the
# tape push of i's old value before the next loop over i raises UnboundLocalError.
# Expected [1, 1, 1].
def loop_variable_bound_only_in_untaken_branch(x):
    if np.sum(x) > 10.0:
        for i in range(3):
            pass
    buf = x.copy()
    for i in range(3):
        if np.sum(x) > 10.0:
            buf[i] = x[0]
        return np.sum(buf)


# Rebinding an array that is written in place, inside a branch (or a loop), to a new array
# is refused: SGCompilerError "'buf' is written in place later but may share memory with
# another value here; make it a copy (.copy()) ... [in: buf = buf * 2.0]", though it is a
# new array (the same for `buf = buf.copy()` in a loop). Expected [0, 3, 2].
def rebind_written_array_in_branch(x):
    buf = x.copy()
    if np.sum(x) > 0.0:
        buf = buf * 2.0
    buf[0] = x[1]
    return np.sum(buf)


# A new array each pass of a loop, then written: the backward sweep sets dbuf = 0.0 after
# restoring buf, and the next pass's dbuf[i] raises TypeError "'float' object is not
# subscriptable". Expected [0, 1, 0].
def refill_written_array_in_loop(x):
    for i in range(2):
        buf = np.zeros_like(x)
        buf[i] = x[1]
    return np.sum(buf)


# Two loops, each with a `return` inside: both set the same `_returned` flag, so the
# backward sweep replays the first loop's return when the second one returned, and the
# gradient is silently zero: sgcompiler gives [0, 0, 0]; expected [3, 3, 3].
def returns_in_two_loops(x):
    for i in range(2):
        if np.sum(x) > 10.0:
            return np.sum(x * x)
    for i in range(2):
        return np.sum(x * 3.0)
    return 0.0


# Found after c0e6331: d/dx of x / 0.5 under np.sum is the broadcast scalar
# unbroadcast(1.0 / 0.5, x), a read-only view, and `dx += ...` for the other term then
# raises ValueError "output array is read-only". Expected cos(x) + 2.
def broadcast_seed_then_accumulate(x):
    a = np.sin(x)
    c = x / 0.5
    return np.sum(a) + np.sum(c)


# Found after c0e6331: an element read, a conditional expression, then an early return:
# TypeError "'float' object is not subscriptable". Expected [1, 0, 0].
def early_return_after_conditional_expression(x):
    c = x[0]
    b = x[2] if np.sum(x) > 10.0 else c
    if np.sum(x) > 0.0:
        return b
    return x[1]


# Found after c0e6331: `+=` on one name unpacked from a call's tuple is refused,
# SGCompilerError "'+=' and the like change an array in place, and 'b' refers to the same
# array", though a and b are different arrays. Expected 2 * (x + 1).
def pair(u, v):
    return u * v, u + v


def inplace_add_after_unpacking_a_call(x):
    a, b = pair(x, 1.0)
    a += 1.0
    return np.sum(a * b)


# Found after c0e6331: the same read-only broadcast adjoint, then an element added:
# `dx[0] += d_x_0` raises ValueError "assignment destination is read-only".
# Expected (1 - x / x[0]) / x[0] summed as finite differences say: [-3.125, 2.5, 2.5].
def divide_by_own_element(x):
    x = x / x[0]
    return np.sum(x)


# Found after c0e6331: `for v in x` iterates over the array x named when the loop
# started; the loop lowers to `for _iv in range(len(x)): v = x[_iv]`, which reads the
# rebound x. Value 0.0060 instead of -0.1344 at X, gradient [0.075, -0.017, 0.005] instead
# of [-0.672, 0.192, -0.112].
def rebind_iterated_array(x):
    for v in x:
        x = x * v
    return x[0]


# Found after c0e6331: a return inside a loop over y: dy is 0.0 on the returning path and
# the loop's `dy[_iv] += dv` raises TypeError "'float' object is not subscriptable".
# Expected d/dx = [1, 0, 0], d/dy = [1, 0, 0].
def return_inside_loop_over_array(x, y):
    for v in y:
        return x[0] + v
    return y[0]


# Found after b15308b: a is a new array (np.sin's result) when `a /= 2.0` runs, yet it is
# refused: SGCompilerError "'+=' and the like change an array in place, and 'x' refers to
# the same array" (a was x before, and the loop iterates over x). Expected cos(x) / 8.
def inplace_divide_in_loop_over_former_alias(x):
    a = x
    a = np.sin(a)
    for v in x:
        a /= 2.0
    return np.sum(a)


# Found after b15308b: the same in a loop, where `a *= a[0]` is refused ("'_a_0' refers to
# the same array"), though the element is read before the array changes (allowed outside
# a loop). Expected d/dx of sum(sin(x) * sin(x0) ** 3).
def inplace_multiply_by_own_element_in_loop(x):
    a = np.sin(x)
    for i in range(2):
        a *= a[0]
    return np.sum(a)


# Found after b15308b: under np.sum, the seed of a negated broadcast sum is the constant
# -1.0, and unbroadcast(-1.0, x[0]) cannot sum it over the broadcast axis: sgcompiler gives
# [-2, -1, -1]; expected [-4, -1, -1].
def sum_of_negated_broadcast(x):
    return np.sum(-(x[0] + x))


# Found after b15308b: a written copy of a stopped value, read by np.minimum before the
# write: the adjoint sweep deletes dbuf (`del d_buf_1, dbuf`) and then adds into it for
# np.minimum: UnboundLocalError "cannot access local variable 'dbuf'".
# Expected [0, 0, -0.7] (buf is a constant: f = c0 + c1 * min(3 c2, x2) + c2).
def write_into_copy_of_stopped_value(x):
    buf = np.copy(stop_gradient(x))
    a = np.minimum(buf * 3.0, x)
    buf[1] *= a[2]
    return np.sum(buf)


# Found after b15308b: the adjoint of b is 0.0 when the branch does not read b[0]; it is
# copied into dx (b = x), and `dx[2] += ...` raises TypeError "'float' object is not
# subscriptable". Expected [0, 0, 1].
def copy_then_element_in_one_branch(x):
    a = x[2]
    b = x
    return a + (b[0] if np.sum(x) > 10.0 else 2.0)


# Found after b15308b: an element read in an inner loop, then a return in the outer
# loop: TypeError "'float' object is not subscriptable" (like
# return_inside_loop_over_array). Expected [1, 0, 0].
def return_after_inner_loop_element_read(x):
    for i in range(2):
        for j in range(2):
            c = x[0]
        return c
    return x[1]


# Found after 5ef09d6 (by the hypothesis run, shrunk): in a loop with a break, `x += 1.0`
# on the new array x * 2.0 is refused, SGCompilerError "'+=' and the like change an array
# in place, and '_mul' refers to the same array" (_mul is the compiler's own temporary).
# Expected [8, 8, 8].
def inplace_add_in_loop_with_break(x):
    for i in range(3):
        if np.sum(x) > 100.0:
            break
        x = x * 2.0
        x += 1.0
    return np.sum(x)


# Found after 5ef09d6: the adjoint of the new x is 0.0 when the branch takes y, and
# `dx = dx_1 / _float` then `dx[0] += ...` raises TypeError "'float' object is not
# subscriptable" (as copy_then_element_in_one_branch). Expected d/dx = 0, d/dy = 1.
def scaled_by_own_element_used_in_one_branch(x, y):
    x = x / float(x[0])
    b = x if np.sum(y) > 10.0 else y
    return np.sum(b)


# Found after 5ef09d6: the seed of np.sum(-y) is the constant -1.0, which reaches
# unbroadcast(d_add, x[2]) in the loop without the broadcast shape: d/dx[2] is -1.75
# instead of -2.25 (as sum_of_negated_broadcast).
def negated_sum_after_loop(x, y):
    for i in range(2):
        x = x * 0.5
        y = y + x[2]
    return np.sum(-y)


# Found after 5ef09d6: the simplest form of write_into_copy_of_stopped_value: a constant
# array read by an active operation, then written with an active value: UnboundLocalError
# "cannot access local variable 'dbuf'". Expected [0, 0, 1].
def write_into_constant_array_read_before(x):
    buf = np.ones_like(x)
    buf[1] = (buf * x)[2]
    return np.sum(buf)


# Found after f9eafb5: b holds x on one path, then the constant 0.5, which a loop reads:
# the loop's adjoint does `db += da` with db never set: UnboundLocalError "cannot access
# local variable 'db'". Expected [0.75, 0.75, 0.75].
def constant_rebound_after_branch_used_in_loop(x):
    if np.sum(x) > 0.0:
        b = x
    b = 0.5
    a = x * 3.0
    for i in range(2):
        a = a * b
    return np.sum(a)


# Found after f9eafb5: `a *= 2.0` after a `return a` in the same loop is refused,
# SGCompilerError "'+=' and the like change an array in place, and '_return_value' refers
# to the same array" (the compiler's own temporary for the returned value; when the
# return runs, the loop ends). Expected [8, 0, 0].
def inplace_after_return_in_loop(x):
    a = x[0] * 2.0
    for i in range(2):
        if np.sum(x) > 10.0:
            return a
        a *= 2.0
    return a


# A comprehension whose iterable reads a name that its own target shadows: Python reads
# the first iterable in the enclosing scope, the compiler renamed it with the target, so
# the generated code read an unbound `v2`: UnboundLocalError. Expected [18, 18, 18] at
# (1, 2, 3); found by the random programs (seed 203587753).
def comprehension_iterable_reads_the_outer_name(x):
    a = 0.0
    for v in x[::-1]:
        a = a + np.sum([v * 3.0 for v in (v + x)])
    return a


# The same with a second generator, whose iterable is in the comprehension's scope.
def second_generator_reads_the_inner_name(x):
    a = 0.0
    for v in x[::-1]:
        a = a + np.sum([v * w for v in (v + x) for w in (v * x)])
    return a


# Found by CI's own seed for a commit of session 12 (SGC_FUZZ_SEED=147033743, program
# seed 147033750), refused the same on the parent 86fe487: a swap in one branch of a loop
# body and `d += ...` in the other was refused ("'a' refers to the same array"), though
# after the swap a and d are different arrays. The walk of the loop's two trips
# (_Points.rebound) did not count `d = _value2`, later in the same branch as the link
# `_value = d` it ends, as certain; it does now (no jump in between). A false refusal.
def swap_in_one_branch_update_in_the_other(x):
    a, d = np.sum(x), np.max(x)
    for v in x:
        if v > 0.3:
            a, d = d, a
        else:
            d += v * 0.5
    return a + d


def open_bug(reason, raises):
    """The mark of a reproducer whose bug is still open."""
    return pytest.mark.xfail(strict=True, reason=reason, raises=raises)


FIXED = [sum_of_broadcast_element, negative_constant_base, abs_of_numpy_scalar,
         clip_of_negation, early_return_after_index, early_return_after_fancy_index,
         early_return_after_element_write, index_of_call_result, slice_of_call_result,
         overwrite_name_bound_only_in_untaken_branch,
         overwrite_copy_bound_only_in_untaken_branch, dead_statement_in_loop,
         unused_comprehension_in_branch, returned_name_restored,
         returned_name_restored_after_loop, refill_written_array_in_loop,
         loop_variable_bound_only_in_untaken_branch, rebind_written_array_in_branch,
         returns_in_two_loops, broadcast_seed_then_accumulate,
         early_return_after_conditional_expression, divide_by_own_element,
         inplace_add_after_unpacking_a_call, rebind_iterated_array,
         inplace_divide_in_loop_over_former_alias, return_after_inner_loop_element_read,
         inplace_multiply_by_own_element_in_loop,
         copy_then_element_in_one_branch, sum_of_negated_broadcast, inplace_add_in_loop_with_break,
         constant_rebound_after_branch_used_in_loop, inplace_after_return_in_loop,
         comprehension_iterable_reads_the_outer_name, second_generator_reads_the_inner_name,
         swap_in_one_branch_update_in_the_other]

OPEN = []


@pytest.mark.parametrize("f", FIXED + OPEN, ids=lambda f: getattr(f, "__name__", None))
def test_reproducer(f):
    value, _ = value_and_grad(f)(X.copy())
    assert value is not None and np.isclose(value, f(X.copy()), rtol=1e-12), value
    assert_grad_matches(f, [X])


def test_sum_of_broadcast_scalar():
    assert_grad_matches(sum_of_broadcast_scalar, [X, 0.7])


def test_inplace_add_through_alias_is_refused_or_right():
    x = np.array([1.0, 2.0, 3.0])
    try:
        value, _ = value_and_grad(inplace_add_through_alias, wrt=(0, 1))(x.copy(), Y.copy())
    except SGCompilerError as exc:
        assert "+=" in str(exc)
        return
    assert value == inplace_add_through_alias(x.copy(), Y.copy())
    assert_grad_matches(inplace_add_through_alias, [x, Y])


def test_return_inside_loop_over_array():
    gx, gy = grad(return_inside_loop_over_array, wrt=(0, 1))(X, Y)
    assert np.allclose(gx, [1, 0, 0]) and np.allclose(gy, [1, 0, 0]), (gx, gy)


@pytest.mark.parametrize("f, expected", [
    (write_into_copy_of_stopped_value, [0.0, 0.0, X[1]]),
    (write_into_constant_array_read_before, [0.0, 0.0, 1.0])])
def test_write_into_constant_array_read_before(f, expected):
    g = grad(f)(X)
    assert np.allclose(g, expected), g


def test_scaled_by_own_element_used_in_one_branch():
    gx, gy = grad(scaled_by_own_element_used_in_one_branch, wrt=(0, 1))(X, Y)
    assert np.allclose(gx, 0.0) and np.allclose(gy, 1.0), (gx, gy)


def test_negated_sum_after_loop():
    assert_grad_matches(negated_sum_after_loop, [X, Y], wrt=[0])


# Found by the final long run (seed 900687 of program_check.py, start 900000): `d = x` in
# one branch and `d += ...` in another branch of the same loop iteration are ordered one
# after the other by the alias analysis (memory.linear lists both branches), so the update
# is refused as if d could still be x there, though d is rebound at the top of every
# iteration. A false refusal, not a wrong gradient. Expected [2, 2, 2] (the last pass
# leaves d = x + 1). Fixed: branches of one `if` in one pass are exclusive.
def inplace_in_branch_exclusive_with_alias(x):
    for i in range(2):
        d = x * 1.0
        if i == 0:
            d = x
        else:
            d += 1.0
    return np.sum(d * 2.0)


def test_inplace_in_branch_exclusive_with_alias():
    assert_grad_matches(inplace_in_branch_exclusive_with_alias, [X])


def alias_rebound_in_one_branch_only(x, c):
    a = x * 1.0
    b = a
    if c > 0:
        b = x * 2.0
    a += 1.0
    return np.sum(b)


def test_alias_rebound_in_one_branch_only_is_refused():
    # b is still a's array when c <= 0: the in-place update reaches it, so it is refused
    # (a rebinding inside a branch that may not run does not end the alias)
    with pytest.raises(SGCompilerError, match="refers to the same array"):
        value_and_grad(alias_rebound_in_one_branch_only)(X.copy(), -1.0)


def returns_its_argument(u, n):
    s = u
    for _ in range(n):
        s = np.sin(s) * 0.5
    return s


def returns_a_new_array(u, n):
    return np.sin(u) * n


# A user function that returns its argument (its loop ran no trips), then `a -= x` on
# the result: Python changes y in place, and the return reads y. sgcompiler made a new
# array for a, so value and gradient were both wrong (found by a long random-program run
# as "value != primal"). Now refused; a function that returns a new array is not.
def inplace_on_a_returned_argument(x, y):
    a = returns_its_argument(y, 0)
    a -= x
    return np.sum(a * y)


def inplace_on_a_new_result(x, y):
    a = returns_a_new_array(y, 2.0)
    a -= x
    return np.sum(a * y)


def test_inplace_on_a_returned_argument_is_refused():
    with pytest.raises(SGCompilerError, match="'y' refers to the same array"):
        value_and_grad(inplace_on_a_returned_argument)(X.copy(), Y.copy())
    assert_grad_matches(inplace_on_a_new_result, [X, Y])


# A conditional expression that is one array or another (`t = a if c else y`) made a and
# y one alias group, so `a += ...` was refused because y is read later, although a and y
# are never one array. The most common false refusal of the long runs (about 0.4% of
# programs). Expected: the gradient.
# While fixing it: when t *is* a (c true), `a += 1.0` changes t too, but the end of the if
# (whose branches both assign the temporary) was taken to end the very links its branches
# made, so this was accepted and value and gradient were wrong (6.6 for 8.1). Now refused.
def ifexp_links_two_arrays(x, y):
    a = x * 2.0
    t = a[0] if np.sum(y) > 0.0 else y[0]
    a += t
    return np.sum(a * y)


def ifexp_is_the_array_updated(x, y):
    a = x * 2.0
    t = a if np.sum(y) > 0.0 else y
    a += 1.0
    return np.sum(t * y)


def test_a_conditional_temporary_does_not_join_its_two_arrays():
    assert_grad_matches(ifexp_links_two_arrays, [X, Y])
    with pytest.raises(SGCompilerError, match="'t' refers to the same array"):
        value_and_grad(ifexp_is_the_array_updated)(X.copy(), Y.copy())


def pair_with_cos(u, v):
    return u * v, u - np.cos(v)


# The mean's adjoint, g / reduced_size(d), passed through a negation, is a number that
# stands for an array of d's shape; it was taken for an array because it names d (only for
# its size), so the number itself went into the adjoint of the helper's tuple result and
# the helper's backward summed one copy instead of three. Expected: the sum over d's
# elements. Found by a long random-program run (wrong by 30%).
def negated_mean_of_a_returned_array(x, y):
    a, d = pair_with_cos(y, np.cos(x))
    return np.sum(a) * np.mean(-d)


def test_negated_mean_of_a_returned_array():
    assert_grad_matches(negated_mean_of_a_returned_array, [X, 0.7])


# Sums of one array along two different axes, with keepdims, were given the same shape
# class, so their difference was taken to have that shape too: its adjoint reached both
# sums without being summed back, `dt2 = dt7` and `dt3 = -dt7` (shapes (3, 4), not
# (1, 4) and (3, 1)), and the gradient came out all zeros (code for any shape; the
# specialised code was right). Found by the broadcasting programs of
# test_shape_programs.py once they drew softplus.
def sums_along_two_axes(s):
    t2 = np.sum(s, axis=0, keepdims=True)
    t3 = np.sum(s, axis=1, keepdims=True)
    t7 = t2 - t3
    return np.sum(t7 * t7)


def sums_along_two_axes_twice(s):
    t2 = np.mean(np.sum(s, axis=0, keepdims=True), axis=1, keepdims=True)
    t3 = np.sum(s, axis=(1, 0), keepdims=True)
    return np.sum((t2 - t3 + s) ** 2)


@pytest.mark.parametrize("f", [sums_along_two_axes, sums_along_two_axes_twice])
@pytest.mark.parametrize("shape", [(3, 4), (1, 3), (2, 1)])
def test_sums_along_different_axes_have_different_shapes(f, shape, monkeypatch):
    from sgcompiler import api
    s = np.random.default_rng(0).normal(size=shape)
    assert_grad_matches(f, [s])
    monkeypatch.setattr(api, "MAX_SHAPES", 0)       # the code for any shape
    assert_grad_matches(f, [s])


# `a = x[0]; a += 1.0` on a vector x was refused ("'x' refers to the same array"): x[0] of
# a vector is a NumPy number, which `+=` rebinds. With the shapes known (the default), an
# element read by as many whole-number indices as the array has axes is no view. A row of
# a matrix is one, and stays refused.
def element_updated(x, y):
    a = x[0]
    a += 1.0
    b = y[1]
    for i in range(2):
        c = y[i]
        c *= x[-1]
        b += c
    return a * np.sum(x) + b


def row_updated(X):
    a = X[0]
    a += 1.0
    return np.sum(a) * np.sum(X)


def test_an_element_of_an_argument_may_be_updated():
    assert_grad_matches(element_updated, [X, Y])
    with pytest.raises(SGCompilerError, match="'X' refers to the same array"):
        grad(row_updated)(np.ones((2, 3)))


# Found by a wider random-program run over broadcasting shapes (helper branch
# fuzz-shapes, tests/shape_fuzz_wide.py there). unbroadcast(g, x) with g of fewer axes
# than x (the seed of np.sum, simplified away, leaves g = w of shape (3,) for s of shape
# (1, 3)) summed g along x's axis numbers: ds = [[0.8, 0.8, 0.8]] instead of w, and an
# IndexError for a number g against a (3, 1) column. Both in the specialised code and in
# the code for any shape.
S_ROW, W_VEC, B_COL = np.array([[0.5, -1.0, 2.0]]), np.array([0.3, 0.7, -0.2]), \
    np.array([[0.5], [-1.0], [2.0]])


def row_times_vector(s, w):
    return np.sum(s * w)


def row_times_vector_squared(s, w):
    return np.sum(s * w) ** 2


def number_times_column(b, c):
    return np.sum(c * b)


def three_times_column(b):
    return np.sum(3.0 * b)


@pytest.mark.parametrize("f, args", [(row_times_vector, [S_ROW, W_VEC]),
                                     (row_times_vector_squared, [S_ROW, W_VEC]),
                                     (number_times_column, [B_COL, 0.7]),
                                     (three_times_column, [B_COL])])
def test_a_gradient_with_fewer_axes_than_its_operand(f, args, monkeypatch):
    from sgcompiler import api
    assert_grad_matches(f, args, wrt=[0])
    monkeypatch.setattr(api, "MAX_SHAPES", 0)
    assert_grad_matches(f, args, wrt=[0])


# t1 = t0.ravel() is a view of t0, yet `t0 - 1.0` was written into t0 (np.subtract(t0,
# 1.0, out=t0)) while t1 was still to be read: value and gradient wrong (specialised code
# only). A method call on an array now hands the array on, like a helper call.
def ravel_view_then_reuse(x, c):
    t0 = x * 2.0
    t1 = t0.ravel()
    t2 = (t0 - 1.0).ravel()
    return np.sum(c * t1 * t2)


def reshape_view_then_reuse(x, c):
    t0 = x * 2.0
    t1 = t0.reshape(2, 6)
    t2 = (t0 - 1.0).reshape(6, 2)
    return np.sum(t1 @ t2) * c


@pytest.mark.parametrize("f", [ravel_view_then_reuse, reshape_view_then_reuse])
def test_a_view_made_by_a_method_keeps_its_array(f):
    x, c = np.arange(12.0).reshape(4, 3) / 10, 0.5
    value, gradient = value_and_grad(f, wrt=(0, 1))(x, c)
    assert value == pytest.approx(f(x, c))
    assert_grad_matches(f, [x, c])


# The mean of an empty slice: the generated code divided by the size 0 (ZeroDivisionError)
# where the function returns nan. The gradient of nothing is nothing: zeros.
def mean_of_empty_slice(b):
    return np.mean(b[1:3, 1:]) + np.sum(np.mean(b[1:3, 1:], axis=0)) * 0.0 + np.sum(b)


def test_the_mean_of_an_empty_slice(monkeypatch):
    from sgcompiler import api
    b = np.ones((4, 1))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(grad(mean_of_empty_slice)(b), np.ones((4, 1)))
        monkeypatch.setattr(api, "MAX_SHAPES", 0)
        np.testing.assert_array_equal(grad(mean_of_empty_slice)(b), np.ones((4, 1)))


# The refusal of `t1 -= s` named the compiler's version of t1 ("write t1_1 = t1_1 +
# ..."); `t0 += t0` on stop_gradient of a Python float was refused as if the float were an
# array another name shares.
def augmented_after_a_view(s):
    t1 = s * 2.0
    t1 -= s
    t2 = t1[..., None]
    t1 -= s
    return np.sum(t2) + np.sum(t1)


def augmented_number(c):
    t0 = stop_gradient(c)
    t0 += t0
    return c * t0


def test_refusals_of_augmented_assignment_name_the_users_variables():
    with pytest.raises(SGCompilerError, match=r"'t2' refers to the same array; write t1 = "
                                              r"t1 \+"):
        grad(augmented_after_a_view)(np.ones(3))
    assert grad(augmented_number)(0.7) == pytest.approx(1.4)


def _reassigned(x):
    a = x * 2.0
    a = a * 3.0
    return np.sum(a)


def test_refusal_messages_name_no_internal_variable():
    # a long random program was refused naming '_return_value', the compiler's own
    # variable for an early return; messages now name a user's variable or say what it is
    from sgcompiler.analysis.activity import _who
    from sgcompiler.frontend import front_end
    norm = front_end(_reassigned).norm
    assert norm.namer.user_name("a_1") == "a"       # the second a
    assert _who(norm, {"a_1", "_return_value"}) == "'a'"
    assert _who(norm, {"_return_value"}) == "the value an earlier 'return' gave"
    assert _who(norm, {"_mul"}) == "a value made from it"


# A list (or tuple) of arrays passed to a user function was an array there: its backward
# made `np.zeros_like(ps)` of the list (ValueError for arrays of different shapes). The
# callee now knows which of its parameters the caller passes parameter trees.
def list_layer(ps, x):
    return np.tanh(x @ ps[0] + ps[1])


def list_tree_through_a_helper(ps, x, y):
    h = list_layer(ps, x)
    return np.mean(h @ ps[2] - y) ** 2


@pytest.mark.parametrize("generic", [False, True])
def test_a_list_tree_passed_to_a_helper(generic, monkeypatch):
    from gradcheck import assert_tree_grad_matches
    from sgcompiler import api
    if generic:
        monkeypatch.setattr(api, "MAX_SHAPES", 0)
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(5, 2)), rng.normal(size=5)
    ps = [rng.normal(size=(2, 3)), rng.normal(size=3), rng.normal(size=3)]
    assert_tree_grad_matches(list_tree_through_a_helper, [ps, x, y], 0)
    assert_tree_grad_matches(list_tree_through_a_helper, [(ps[0], 0.5, ps[2]), x, y], 0)


# `t = x.flatten(); t *= 2.0` was refused as if t were a view of x ("'x' refers to the same
# array ... copy it first (.copy())"): flatten shares ravel's derivative rule, but always
# copies. `x.ravel()` may be a view and stays refused.
def flatten_then_scale(x):
    t = x.flatten()
    t *= 2.0
    return np.sum(t * x.ravel())


def ravel_then_scale(x):
    t = x.ravel()
    t *= 2.0
    return np.sum(t * x.ravel())


def test_flatten_is_a_copy_and_ravel_may_be_a_view():
    x = np.array([[0.5, -1.0], [2.0, 0.25]])
    assert_grad_matches(flatten_then_scale, [x])
    with pytest.raises(SGCompilerError, match="'x' refers to the same array"):
        grad(ravel_then_scale)(x)


# Found by helper-7's fuzzer of parameter trees passed through helpers (branch
# fuzz-trees, tests/tree_fuzz.py there). Each crashed the generated code, in the
# specialised code and in the code for any shape alike.
#
# 1. A list or tuple inside a tree (params["ps"], a loop's layer tuple) passed to a helper
#    was an array there: `np.zeros_like(ps)` of the tuple (ValueError).
def scale_by_first(ps, h):
    return h * ps[0]


def subtree_to_helper(params, x):
    return np.sum(scale_by_first(params["ps"], x))


def apply_layer(layer, h):
    M, v = layer
    return np.tanh(h @ M + v)


def layers_to_helper(layers, x):
    for layer in layers:
        x = apply_layer(layer, x)
    return np.sum(x)


# 2. A tree parameter a helper's result does not depend on: its zero gradient,
#    zeros_tree(t), read t, which the forward had not saved (NameError).
def ignores_its_tree(t, h):
    return h * 2.0


def unaffected_tree_parameter(params, x):
    return np.sum(ignores_its_tree(params, x) * params["a"])


# 3. A statement after a loop in a helper: the old value it overwrites (_h_old) was not
#    saved for the backward (NameError).
def loop_then_scale(ws, h):
    for w in ws:
        h = h * w
    h = h * 2.0
    return h


def statement_after_a_helpers_loop(ws, x):
    return np.sum(loop_then_scale(ws, x) ** 2)


# 4. A helper's tuple result whose part reduced over axis 1 is not used: the zero adjoint
#    of that part, a number, went through np.expand_dims(0.0, 1) (AxisError).
def value_and_row_mean(h):
    z = np.tanh(h)
    return z, np.mean(z * z, axis=-1)


def unused_reduced_part(x):
    a, b = value_and_row_mean(x)
    return np.sum(a)


@pytest.mark.parametrize("generic", [False, True])
def test_trees_and_helpers(generic, monkeypatch):
    from gradcheck import assert_tree_grad_matches
    from sgcompiler import api
    if generic:
        monkeypatch.setattr(api, "MAX_SHAPES", 0)
    rng = np.random.default_rng(1)
    x = rng.normal(size=3)
    for ps in ((rng.normal(size=3), 0.5), [rng.normal(size=3), rng.normal(size=3)]):
        assert_tree_grad_matches(subtree_to_helper, [{"ps": ps}, x], 0)
    layers = [(rng.normal(size=(3, 2)), rng.normal(size=2)), (rng.normal(size=(2, 2)), 0.1)]
    assert_tree_grad_matches(layers_to_helper, [layers, x], 0)
    assert_tree_grad_matches(unaffected_tree_parameter, [{"a": rng.normal(size=3)}, x], 0)
    ws = [rng.normal(size=3), rng.normal(size=3)]
    assert_tree_grad_matches(statement_after_a_helpers_loop, [ws, x], 0)
    assert_grad_matches(statement_after_a_helpers_loop, [np.stack(ws), x])
    assert_grad_matches(unused_reduced_part, [rng.normal(size=(2, 3))])


# Issue 13, 1 (the extended grammar's array_literal and list_literal): the adjoint of a
# list or tuple display sent element k's adjoint to the k-th *variable* among its
# elements, so a constant before them shifted every one (np.array([0.5, x[1], y]) gave
# x[1] the adjoint of 0.5).
def array_literal(x, y):
    return np.sum(np.array([0.5, x[1], y]) * x)


def list_literal(x, y):
    return [0.5, x[1], y][1] * x[0]


def test_a_display_with_constants_before_its_variables():
    x = np.array([0.3, -1.2, 0.7])
    assert_grad_matches(array_literal, [x, 1.5])
    assert_grad_matches(list_literal, [x, 1.5])


# Issue 13, 1 (probing the scoping of loop names, found by hand and then by the EXTRAS
# production "scopes"): `for v in v` rebinds the name of the sequence it indexes, but only
# names the body rebinds were read once before the loop, so from the second pass `v[i]`
# indexed the element: IndexError "invalid index to scalar variable" (with enumerate, zip,
# reversed and a list too). Python iterates over the object v named when the loop started.
def loop_over_its_own_target(x, y):
    v = x * y
    s = 0.0
    for v in v:
        s = s * 0.5 + v * v
    return s + v


def enumerate_over_its_own_target(x, y):
    v = x * y
    s = 0.0
    for i, v in enumerate(v):
        s = s + v * v * i
    return s + v


def zip_over_its_own_target(x, y):
    v = x * y
    s = 0.0
    for v, a in zip(v, x):
        s = s + a * v * v
    return s + v


def reversed_over_its_own_target(x, y):
    v = x * y
    s = 0.0
    for v in reversed(v):
        s = s * 0.5 + v * v
    return s + v


def nested_loops_over_their_own_target(x, y):
    v = np.outer(x, x) * y
    s = 0.0
    for v in v:
        for v in v:
            s = s + v * v
    return s + v


def comprehension_scopes(x, y):
    sc = x * y
    inner = sum([sum([w * sc for sc in sc if sc > w]) for w in sc])
    return inner + sum([sc * 2.0 for sc in sc + x]) + sum([a * sc for a, sc in zip(sc, x)])


@pytest.mark.parametrize("f", [loop_over_its_own_target, enumerate_over_its_own_target,
                               zip_over_its_own_target, reversed_over_its_own_target,
                               nested_loops_over_their_own_target, comprehension_scopes])
def test_a_loop_over_the_name_its_target_rebinds(f):
    for x in (X, np.array([1.5, -0.3, 0.2, 0.9])):
        assert_grad_matches(f, [x, 1.3])
        assert_grad_matches(f, [x, -0.7])


# Issue 13, the wide-shape fuzzer (seed 800128, --extended): a view of a view of an array
# written in place later: `t1 = np.broadcast_to(t0[None, :], ...)` sees the writes into t0,
# but only a read of `t0[None, :]` itself was checked, so t1 was taken as a copy and the
# gradient was wrong (x got the adjoint of the values before the writes, w got zero).
# np.atleast_2d, np.real, np.flip, np.split and the other view makers were not known as
# views at all (wrong gradients too). Each is refused now, with the line.
def view_of_a_view_written_later(x, w, b, s, c):
    t0 = np.exp(c) * (abs(x))
    t1 = np.broadcast_to(t0[None, :], (2, 4, 3))
    t0[np.array([2, -1, 0, 3])] *= w
    t0[[-3, 1]] = c
    return np.mean(t1)


def view_atleast_2d(x, w):
    t0 = np.exp(w) * x
    t1 = np.atleast_2d(t0)
    t0[1] = w
    return np.sum(t1 * t1)


def view_real(x, w):
    t0 = np.exp(w) * x
    t1 = np.real(t0)
    t0[1] = w
    return np.sum(t1 * t1)


def view_flip(x, w):
    t0 = np.exp(w) * x
    t1 = np.flip(t0)
    t0[1] = w
    return np.sum(t1 * t1)


def view_fliplr(x, w):
    t0 = np.exp(w) * x
    t1 = np.fliplr(t0[None])
    t0[1] = w
    return np.sum(t1 * t1)


def view_rot90(x, w):
    t0 = np.exp(w) * x
    t1 = np.rot90(t0[None])
    t0[1] = w
    return np.sum(t1 * t1)


def view_split(x, w):
    t0 = np.exp(w) * x
    t1 = np.split(t0, [1])[1]
    t0[1] = w
    return np.sum(t1 * t1)


def view_conj_method(x, w):
    t0 = np.exp(w) * x
    t1 = t0.conj()
    t0[1] = w
    return np.sum(t1 * t1)


def view_ascontiguousarray(x, w):
    t0 = np.exp(w) * x
    t1 = np.ascontiguousarray(t0)
    t0[1] = w
    return np.sum(t1 * t1)


def view_t_of_an_index(x, w):
    t0 = np.exp(w) * x
    t1 = t0[:].T
    t0[1] = w
    return np.sum(t1 * t1)


def view_reshape_of_an_index(x, w):
    t0 = np.exp(w) * x
    t1 = t0[None, :].reshape(3)
    t0[1] = w
    return np.sum(t1 * t1)


def view_broadcast_of_an_index(x, w):
    t0 = np.exp(w) * x
    t1 = np.broadcast_to(t0[1:], (2, 2))
    t0[1] = w
    return np.sum(t1 * t1)


def test_a_view_of_a_view_written_later_is_refused():
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=(4, 3)), rng.normal(size=3)
    with pytest.raises(SGCompilerError, match=r"view of an array that is written in place"):
        grad(view_of_a_view_written_later, wrt=(0, 1))(x, w, 0.0, 0.0, 0.3)


@pytest.mark.parametrize("f", [view_atleast_2d, view_real, view_flip, view_fliplr,
                               view_rot90, view_split, view_conj_method,
                               view_ascontiguousarray, view_t_of_an_index,
                               view_reshape_of_an_index, view_broadcast_of_an_index])
def test_a_view_maker_of_an_array_written_later_is_refused(f):
    with pytest.raises(SGCompilerError) as info:
        grad(f)(np.array([0.3, -1.2, 0.7]), 0.4)
    message = str(info.value)
    assert f"test_fuzz_regressions.py:{f.__code__.co_firstlineno + 2}" in message, message
    assert "view" in message or "keeps a reference" in message, message


# Issue 13, the wide-shape fuzzer with its new view makers (seeds 53, 62, 333, --extended):
# np.ascontiguousarray (and np.asfortranarray) of a 0-d value returns shape (1,), but the
# rule took the adjoint for the argument's own: ValueError "cannot broadcast a non-scalar
# to a scalar array" or TypeError in the API. The adjoint is reshaped to the argument's.
def contiguous_of_a_scalar(x, c):
    t0 = np.ascontiguousarray(c)
    return np.sum(t0 * x) + c * np.sum(np.asfortranarray(np.sum(x) * c) * t0)


def test_contiguous_of_a_scalar():
    for x in (X, np.array([[0.3, 0.2], [-0.1, 0.5]])):
        assert_grad_matches(contiguous_of_a_scalar, [x, 0.7])
        assert_grad_matches(contiguous_of_a_scalar, [x, np.array(-0.4)])


# Issue 13, 1 (found probing names in loops by hand): a write into a dict, `d[k] = v`,
# saved the old element as `d[k].copy()` for the adjoint sweep to put back: KeyError from
# the generated code for a key the dict did not have yet, AttributeError for a float
# element (of a list too). The old element is now saved by runtime.old_item (0.0 for a
# new key: a zero of any structure).
def dict_built_in_a_loop(x, y):
    v = x * y
    d = {}
    for k in range(3):
        d[k] = sum([v[k] * u for u in v])
    return d[0] + d[2] * d[1]


def dict_new_keys(x, y):
    d = {}
    d["a"] = x[0] * y
    d["b"] = x[1:] * y
    return d["a"] * np.sum(d["b"])


def float_elements_replaced(x, y):
    d = {"a": 1.0, "b": x * 2.0}
    d["a"] = x[0] * y
    lst = [1.0, 2.0]
    lst[0] = x[1] * d["a"]
    return lst[0] * lst[1] + np.sum(d["b"] * y)


@pytest.mark.parametrize("f", [dict_built_in_a_loop, dict_new_keys, float_elements_replaced])
def test_a_write_into_a_dict_or_list(f):
    for x, y in ((X, 1.3), (np.array([1.5, -0.3, 0.2, 0.9]), -0.7)):
        assert_grad_matches(f, [x, y])


# Issue 13, the wide-shape fuzzer (seed 810654, --extended): the adjoint of a mean along
# axis 0, unreduce(g / 4, x, 0), was taken for a broadcast scalar (the test read axis=0
# as no axis, since 0 == False), so the consumers used g / 4 itself, of the reduction's
# shape: ValueError from `db += ...` in the generated code, or a gradient of shape (1,)
# for b of shape (4, 1).
def mean_along_axis_0(b, w):
    t5 = ((-(b * b - b)).mean(0)) * (np.sum(w, axis=0, keepdims=True))
    return np.sum(np.sin(t5))


def negated_mean_along_axis_0(b, w):
    return np.sum(np.sin((-b).mean(0) * w))


@pytest.mark.parametrize("f", [mean_along_axis_0, negated_mean_along_axis_0])
def test_a_mean_along_axis_0_is_no_broadcast_scalar(f):
    rng = np.random.default_rng(2)
    for b, w in (((4, 1), (3, 4)), ((4, 3), (2, 3)), ((2, 1), (1, 1))):
        args = [rng.normal(size=b), rng.normal(size=w)]
        assert_grad_matches(f, args, wrt=(0,))


# --- wrong gradients found last session: a loop over a dict, lists joined in a helper ----

def loop_over_a_dict_argument(d, x):
    s = 0.0
    for k in d:             # iterated by position: d[0], d[1], ... (issue 13, open)
        s = s + d[k] * x
    return s


def _joined(a, x):
    return [np.sin(x)] + a


def lists_joined_in_a_helper(x):
    b = _joined([2.0 * x], x)
    return np.sum(b[0] * b[1])


def _loop_in_helper(d, x):
    s = 0.0
    for k in d:
        s = s + d[k] * x
    return s


def loop_over_a_dict_in_a_helper(d, x):
    return 2.0 * _loop_in_helper(d, x)


def loop_over_a_nested_dict(p, x):
    return sum([p["inner"][k] * x for k in p["inner"]])


def enumerate_a_dict(d, x):
    s = 0.0
    for i, k in enumerate(d):
        s = s + d[k] * x * i
    return s


def loop_over_a_set(s, x):
    t = 0.0
    for v in s:
        t = t + v * x
    return t


def loop_over_a_dict_view(d, x):
    t = 0.0
    values = d.values()
    for v in values:
        t = t + v * x
    return t


def _made(x):
    return {0: x, 1: 2.0 * x}


def loop_over_a_dict_a_helper_made(x):
    d = _made(x)
    s = 0.0
    for k in d:
        s = s + d[k]
    return s


# a loop over a dict (a set, a dict view) is read by position, d[0], d[1], ...: with int
# keys the gradient was silently wrong (2.0, want 1.0), else an internal KeyError; the
# loop now refuses it when it runs, naming the loop's line
@pytest.mark.parametrize("f, args, kind", [
    (loop_over_a_dict_argument, ({0: 1.0, 1: 0.0, 2: 0.0}, 2.0), "a dict"),
    (loop_over_a_dict_argument, ({"a": 1.0, "b": 0.0}, 2.0), "a dict"),
    (loop_over_a_dict_in_a_helper, ({0: 1.0, 1: 0.0, 2: 0.0}, 2.0), "a dict"),
    (loop_over_a_nested_dict, ({"inner": {0: 1.0, 1: 0.0}}, 2.0), "a dict"),
    (enumerate_a_dict, ({0: 1.0, 1: 0.0, 2: 5.0}, 2.0), "a dict"),
    (loop_over_a_set, ({1.0, 2.0}, 2.0), "a set"),
    (loop_over_a_dict_view, ({0: 1.0, 1: 0.0}, 2.0), "a dict view"),
    (loop_over_a_dict_a_helper_made, (2.0,), "a dict")],
    ids=["int keys", "str keys", "helper", "nested", "enumerate", "set", "view", "made"])
def test_a_loop_over_a_dict_argument(f, args, kind):
    import inspect
    from sgcompiler import jvp
    lines, first = inspect.getsourcelines(f)
    loops = [first + i for i, text in enumerate(lines) if " for " in f" {text}"]
    if f is loop_over_a_dict_in_a_helper:
        lines, first = inspect.getsourcelines(_loop_in_helper)
        loops = [first + 2]
    wrt = len(args) - 1
    for run in (lambda: grad(f, wrt=wrt)(*args),
                lambda: jvp(f, args, (None,) * wrt + (1.0,))):
        with pytest.raises(SGCompilerError) as err:
            run()
        assert f"test_fuzz_regressions.py:{loops[0]})" in str(err.value), str(err.value)
        assert f"runs over {kind}" in str(err.value), str(err.value)


def loop_over_keys_and_items(d, x):
    s = 0.0
    for k in d.keys():
        s = s + d[k] * x
    for k, v in d.items():
        s = s + v * x * x
    return s + loop_over_a_set([d[k] for k in d.keys()], x)


def loop_over_a_list_of_dicts(params, x):
    for layer in params:
        x = np.tanh(x * layer["w"] + layer["b"])
    return np.sum(x)


def test_loops_over_sequences_and_keys_stay_right():
    d = {2: 0.5, 0: -1.5, "a": 2.0}
    assert_grad_matches(loop_over_keys_and_items, [d, 0.7], wrt=[1])
    rng = np.random.default_rng(13)
    params = [{"w": rng.normal(size=3), "b": rng.normal(size=3)} for _ in range(2)]
    x = rng.normal(size=(2, 3))
    assert_grad_matches(loop_over_a_list_of_dicts, [params, x], wrt=[1])
    got = grad(loop_over_a_list_of_dicts)(params, x)
    for i, key in [(0, "w"), (1, "b"), (1, "w")]:
        for j in range(3):
            up = [dict(layer) for layer in params]
            down = [dict(layer) for layer in params]
            up[i][key] = up[i][key] + 1e-6 * np.eye(3)[j]
            down[i][key] = down[i][key] - 1e-6 * np.eye(3)[j]
            fd = (loop_over_a_list_of_dicts(up, x) - loop_over_a_list_of_dicts(down, x)) / 2e-6
            assert np.isclose(got[i][key][j], fd, rtol=1e-5, atol=1e-7), (i, key, j)


# list + list in a helper whose list is a parameter: the adjoint of the joined list went
# whole to both lists ([2.647, 5.652]); it is now split at len(a) (runtime/sequences.py)
def test_lists_joined_in_a_helper():
    x = np.array([0.3, 0.7])
    got = grad(lists_joined_in_a_helper)(x)
    assert_grad_matches(lists_joined_in_a_helper, [x])
    assert np.allclose(got, [1.164, 2.359], atol=1e-3), got


# Issue 13 (program_check --order 2 --extras containers, seed 9000, via helper_slice): a
# list sliced, then appended to. The first-order code adds the slice's adjoint back with
# `da[1:] = add_trees(da[1:], db)`, db one longer than da[1:] (the appended element's
# entry), which add_trees drops; read again, add_at's rule handed db a part one entry
# short (index_part), and the appended element's second-order adjoint was lost in the
# next add_trees: d/dy of <grad f, v> came out as vy, not vx. index_part and add_trees'
# rule now pad a shorter list with zeros (runtime/core.py fitted).
def slice_then_append(x, y):
    a = [x, y]
    b = a[1:]
    b.append(x * 1.5)
    return np.sum((b[0] * b[-1]) ** 2)


def slice_then_append_in_a_helper(x, y):
    a = [x, y, np.tanh(x)]
    b = a[1:]
    first, *rest = a
    b.append(first * y)
    return np.sum((b[0] * rest[-1] + b[-1]) ** 2)


@pytest.mark.parametrize("f", [slice_then_append, slice_then_append_in_a_helper])
@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 3), (3,)), ((), (4,))])
def test_second_order_through_a_slice_then_append(f, shapes):
    rng = np.random.default_rng(9000)
    x, y, vx, vy = (rng.normal(size=shape) for shape in shapes + shapes)
    s = function_from_text(
        "def s(x, y):\n    gx, gy = _g(x, y)\n    return np.sum(gx * _vx) + np.sum(gy * _vy)\n",
        "s", {"np": np, "_g": grad(f, wrt=(0, 1)), "_vx": vx, "_vy": vy}, "test")
    assert_grad_matches(s, [x, y], rtol=1e-5, atol=1e-6)


# Issue 13 (program_check --order 2 --extras containers, seeds 9001-9150): a list or tuple
# joined (a + b) or repeated (a * n) in a helper was refused at second order, with no
# derivative rule for joined_part or repeated_part (the first-order adjoints of + and *,
# which grad of grad reads again); they have rules now (rules/sequences.py).
def joined_in_a_helper(a, u):
    return [np.sin(u)] + a


def tuple_joined_in_a_helper(t, u):
    return t + (u * 0.5,)


def repeated_in_a_helper(a, n):
    return a * n


def scaled_by_its_counter(u, n):
    s = u
    for k in range(n):
        s = np.sin(s) * 0.5 + u * k
    return s


def joins_and_repeats(x, y):
    a = joined_in_a_helper([x, y * x], y)
    t = tuple_joined_in_a_helper((x, y), x * y)
    r = repeated_in_a_helper([x * y, np.cos(y)], 2)
    return np.sum(a[0] * a[1] + a[2] ** 2 + t[0] * t[2] + np.sin(t[1]) + r[0] * r[3]
                  + r[2] ** 2 + scaled_by_its_counter(x * y, 3) ** 2)


@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 3), (3,)), ((), (4,))])
def test_second_order_through_lists_joined_and_repeated(shapes):
    rng = np.random.default_rng(9001)
    x, y, vx, vy = (rng.normal(size=shape) for shape in shapes + shapes)
    s = function_from_text(
        "def s(x, y):\n    gx, gy = _g(x, y)\n    return np.sum(gx * _vx) + np.sum(gy * _vy)\n",
        "s", {"np": np, "_g": grad(joins_and_repeats, wrt=(0, 1)), "_vx": vx, "_vy": vy},
        "test")
    assert_grad_matches(s, [x, y], rtol=1e-5, atol=1e-6)


def repeated_numpy_part(g, count):
    # repeated_part's NumPy case: the adjoint of `items * count` for an array `items`
    return np.sum(repeated_part(g, np.ones(3), count) * np.array([0.5, -1.0, 2.0]))


def joined_list_part(g0, g1, g2):
    part = joined_part([g0, g1, g2], [1.0], [1.0, 2.0], 1)
    return np.sum(part[0] * np.sin(part[1]))


@pytest.mark.parametrize("shapes", [((2, 3), ()), ((3,), (3,)), ((2, 3), (2, 1))])
def test_rules_of_the_sequence_adjoints(shapes):
    rng = np.random.default_rng(13)
    g, count = (rng.normal(size=shape) for shape in shapes)
    assert_grad_matches(repeated_numpy_part, [g, count if count.ndim else float(count)])
    assert_grad_matches(joined_list_part, [rng.normal(size=shapes[0]) for _ in range(3)])


# Issue 13 (seeds 9001-9150): a helper looping over d.keys() or d.items() was refused at
# second order: the first-order code loops over `_keys = d.keys()`, which the code read
# again indexes (by position), and a dict view refused that when it ran. The keys are a
# list now (frontend/iteration.py), in the order Python iterates them.
def loops_over_keys(d, u):
    s = 0.0 * u
    for k in d.keys():
        s = s + d[k] * u
    return s


def loops_over_items(d, u):
    s = u
    for k, v in d.items():
        s = s * 0.5 + v * np.sin(s)
    return s


def loops_over_a_dict_in_helpers(x, y):
    a = loops_over_keys({2: x, 1: y * x, 0: np.cos(x)}, y)
    b = loops_over_items({"b": x * y, "a": np.tanh(y)}, x)
    return np.sum(a ** 2 + a * b)


# (not x of shape (): a 0-d array argument that a loop broadcasts up raises ValueError at
# first order already, reported with issue 13)
@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 3), (3,)), ((2, 4), (1, 4))])
def test_second_order_through_loops_over_a_dict(shapes):
    rng = np.random.default_rng(9002)
    x, y, vx, vy = (rng.normal(size=shape) for shape in shapes + shapes)
    s = function_from_text(
        "def s(x, y):\n    gx, gy = _g(x, y)\n    return np.sum(gx * _vx) + np.sum(gy * _vy)\n",
        "s", {"np": np, "_g": grad(loops_over_a_dict_in_helpers, wrt=(0, 1)), "_vx": vx,
              "_vy": vy}, "test")
    assert_grad_matches(s, [x, y], rtol=1e-5, atol=1e-6)


# Issue 13 (seeds 9111, 9142 with containers, 720023): an array written in place in one
# branch and rebound in the other was refused at second order: the first-order adjoint
# `copied(np.broadcast_to(dbuf, np.shape(buf)))` read again is a view of dbuf, which is
# written in place later, but only a copy ever reads that view (analysis/activity.py).
def written_in_one_branch_rebound_in_the_other(x, y, bound):
    buf = np.sin(x).copy()
    if np.sum(buf) > bound:
        buf[1] *= buf.mean()
    else:
        buf = x.copy()
    return np.sum(buf * y)


@pytest.mark.parametrize("bound", [-50.0, 50.0])
@pytest.mark.parametrize("shapes", [((3,), (3,)), ((3,), (2, 3)), ((4,), ())])
def test_second_order_through_a_write_in_one_branch(shapes, bound):
    rng = np.random.default_rng(9111)
    x, y, vx, vy = (rng.normal(size=shape) for shape in shapes + shapes)
    first = grad(written_in_one_branch_rebound_in_the_other, wrt=(0, 1))
    s = function_from_text(
        "def s(x, y):\n    gx, gy = _g(x, y, _bound)\n"
        "    return np.sum(gx * _vx) + np.sum(gy * _vy)\n",
        "s", {"np": np, "_g": first, "_bound": bound, "_vx": vx, "_vy": vy}, "test")
    assert_grad_matches(s, [x, y], rtol=1e-5, atol=1e-6)


def _grows_in_a_loop(x, y):
    s = x
    for v in [y]:
        s = s * 0.5 + v
    return np.sum(s)


def _grows_then_scales(x, w, ys):
    s = x
    for v in ys:
        s = np.sin(s) * 0.5 + v
        s = s * w
    return np.sum(s)


@pytest.mark.parametrize("start", [(), (1,), (4,), (3, 1)])
def test_a_loop_carried_value_that_grows_by_broadcasting(start):
    """`s = x` of a smaller shape, then `s = f(s) + v` in a loop: s takes v's shape on the
    first trip. The shapes pass gave what is computed from s the class of s, so the
    adjoint of `s * 0.5` was not summed back to x's shape, and an internal ValueError
    reached the user (found by the order2 fuzzing, seed 9000 onwards)."""
    rng = np.random.default_rng(len(start))
    x = rng.normal(size=start)
    assert_grad_matches(_grows_in_a_loop, (x, rng.normal(size=4)))
    assert_grad_matches(_grows_then_scales, (x, rng.normal(size=4),
                                             [rng.normal(size=4), rng.normal(size=4)]),
                        wrt=(0, 1))


def _grows_from_an_item(x, y):
    b = x * 2.0
    s = b[2]
    for v in [y]:
        s = np.sin(s) * 0.5 + v
    return np.sum(b) + np.sum(s)


def test_a_value_that_grows_from_an_item_of_an_array():
    """Found by the new `growing` production (program_check --extras growing, seed 1001):
    `s = b[2]` has no shape class, and neither has `s = np.sin(s) * 0.5 + v`, so both took
    the class 's' and seemed to agree; the adjoint reached `b[2]` with v's shape (an
    internal ValueError from np.add.at). A name assigned more than once, one of whose
    values has no class, now shares its class with nothing."""
    rng = np.random.default_rng(1001)
    assert_grad_matches(_grows_from_an_item, (rng.normal(size=3), rng.normal(size=3)))
    assert_grad_matches(_grows_from_an_item, (rng.normal(size=3), rng.normal(size=(2, 3))))


# Issue 14 (program_check --order 2, seed 9264): a product of an array that is written
# into later. The first-order code passes it, restored, to prod_grad (read through its
# source at second order), and the check that a call keeps no reference to an array
# written in place refused that generated line; a runtime helper returns new arrays, so
# what it reads other than its `g` is no reference.
def product_then_write(x):
    buf = (x * 2.0).copy()
    p = np.prod(buf)
    buf[1] = -buf[2]
    return np.sum(buf * p)


def product_then_write_in_a_loop(x):
    buf = np.sin(x).copy()
    total = 0.0
    for i in range(2):
        total = total + np.prod(buf) * buf[0]
        buf[i] = buf[-1] * x[0]
    return total + np.sum(buf)


@pytest.mark.parametrize("f", [product_then_write, product_then_write_in_a_loop])
@pytest.mark.parametrize("shape", [(3,), (5,)])
def test_second_order_through_a_product_then_a_write(f, shape):
    rng = np.random.default_rng(9264)
    x, v = rng.normal(size=shape), rng.normal(size=shape)
    s = function_from_text("def s(x):\n    return np.sum(_g(x) * _v)\n", "s",
                           {"np": np, "_g": grad(f), "_v": v}, "test")
    assert_grad_matches(s, [x], rtol=1e-5, atol=1e-6)


# Issue 14 (program_check --order 2 --extras picks, seeds 7, 10, 30, 51, 57 of 60): an
# array of a helper's pair read with an index that picks one element twice, where one
# such read feeds nothing returned. Its first-order adjoint stays the number 0.0, and the
# second-order code took the part of it at the index (index_part, the adjoint of
# add_at's value): TypeError, 'float' object is not subscriptable. The part of an adjoint
# no value has reached is 0.0 (runtime/core.py index_part).
@pytest.mark.parametrize("seed", [7, 10, 30])
def test_second_order_through_picks_of_a_pair(seed):
    # seed 10: pair1 = helper_two(...) in a loop, np.sum(pair1[1][[0, 0]] * ...) unused;
    # then np.sum(pair3[1][[-1, 0, -1]] * pair3[1][[-1, 0, -1]]) returned
    import random
    from program_check import check_program_second_order
    from program_grammar import Choices, write_program
    source, y_float = write_program(Choices(random.Random(seed).randrange), extras=("picks",))
    outcome = check_program_second_order(source, y_float)
    assert outcome.status == "ok", f"{source}\n{outcome.detail}"


# Issue 14 (program_check --order 2 --extended --extras scopes, 39 of 300 programs from
# seed 881000 refused): a dict built by writes into new keys in a loop. The gradient saves
# what each write replaces (old_item) and puts it back; grad of grad had no rule for
# old_item ("no derivative rule for old_item"). With the rule (the saved copy's adjoint goes
# to the dict at the key, runtime/core.py old_item_back), the second-order code made
# np.copy() of the dict adjoint that the sweep writes into, an object array, and add_trees
# refused it ("read both by position and by field name"): a container is copied as one.
def dict_filled_by_key(x, y):
    s = np.asarray([3.0, x[0] * y[1], 2.0 / (1.0 + np.square(x[2]))])
    d = {}
    for k in range(3):
        d[k] = s[k] * s[2 - k]
    return d[0] + d[2] * d[1]


def list_written_by_index(x, y):
    items = [x[0], y[1], x[2] * y[0]]
    for k in range(3):
        items[k] = items[k] * items[2 - k] + np.sin(y[k])
    return items[0] * items[1] + items[2]


def array_of_unknown_kind_written(x, y):
    a = [np.sin(x), np.cos(y)][0].copy()   # an array the shapes pass does not follow
    for k in range(3):
        a[[k, 0]] = a[k] * y[k]
    return np.sum(a * x)


@pytest.mark.parametrize("f", [dict_filled_by_key, list_written_by_index,
                               array_of_unknown_kind_written])
def test_second_order_through_writes_into_containers(f):
    from sgcompiler import check_grads
    for x, y in [(X, Y), (Y[::-1] * 0.7, X + 0.3)]:
        check_grads(f, (x, y), order=2, modes=("rev",))
        first = grad(f, wrt=(0, 1))
        vx, vy = np.array([1.0, -2.0, 0.5]), np.array([0.3, 0.8, -1.1])
        s = function_from_text("def s(x, y):\n    gx, gy = _g(x, y)\n"
                               "    return np.sum(gx * _vx) + np.sum(gy * _vy)\n", "s",
                               {"np": np, "_g": first, "_vx": vx, "_vy": vy}, "test")
        assert_grad_matches(s, [x, y], rtol=1e-5, atol=1e-6)


# Issue 14 (program_check --order 2 --extended, seeds 881056, 881094, 881227 of 300): an
# element write into an array that the adjoint sweep reads, where the sweep itself reads
# nothing at the index (the written value has no gradient). The gradient puts the old
# elements back at the index, but the first run of the reverser, which finds what the
# adjoint sweep reads, did not count the index: grad of grad raised NameError
# "name 'i' is not defined" in the backward piece (reverse/sweeps.py _with_restored_indexes).
def write_at_a_named_index(x, y):
    buf = np.copy(Y) * 0.5             # a constant: no adjoint writes at the index
    a = np.sum(np.sin(buf * x * y))
    i = [1, -2, 1]
    buf[i] = 2.0
    return a + np.sum(buf * x)


def write_at_a_named_index_in_a_branch(x, y):
    buf = np.cos(X)
    a = np.sum(np.sin(buf * x))
    if np.sum(x) > -10.0:
        i = [0, 0, 1]
        buf[i] = 2.0
    return a + np.sum(buf * x * y)


@pytest.mark.parametrize("f", [write_at_a_named_index, write_at_a_named_index_in_a_branch])
def test_second_order_restores_an_element_write_at_its_index(f):
    from sgcompiler import check_grads
    for x, y in [(X, Y), (Y[::-1] * 0.7, X + 0.3)]:
        check_grads(f, (x, y), order=2, modes=("rev", "fwd"))


# Issue 14 (program_check --order 2 --extended --extras containers growing picks scopes):
# programs that the two fixes above first broke, before the merge. 881021: a dict filled
# key by key (refused for old_item before); 881056, 881227: the restored index; 881075 and
# 881153: old_item's key written as a slice inside the call (SyntaxError, `old_item(buf,
# 1:)`); 881228: copied() taken for a container where its argument was an array, which gave
# a wrong second derivative (d/dy[2] 3.392 where finite differences give 2.942).
# Shrunk from 881228 with copied() following its argument's kind: an array taken for a
# container, written at an index that picks an element twice. The adjoint of the written
# value took every pick (`np.copy(dbuf[_index])`), where NumPy keeps the last write: d/dy[2]
# 3.392, finite differences 2.942. The value's adjoint is written_part's at any index
# that may pick twice; written_part takes a container's item at run time.
SHRUNK_881228 = """def f(x, y):
    buf = np.copy(y)
    for v in x:
        if (1.5 - y[-1]) > 0.3:
            buf[[1, -2, 1]] = helper_closure(buf[2])
    grow12 = buf[2]
    for part12 in [(buf * 0.5), y]:
        grow12 = grow12 * 0.5 + part12
    sc1 = helper_lambda(np.array([(grow12).mean(), y[2], x[2]]))
    b = sum([sc1 * 2.0 for sc1 in sc1 + x])
    return b + np.sum(buf) + np.sum(grow12)
"""


def test_second_order_write_that_picks_twice_into_what_may_be_a_container():
    from program_check import check_program_second_order
    outcome = check_program_second_order(SHRUNK_881228, False)
    assert outcome.status == "ok", outcome.detail


@pytest.mark.parametrize("seed", [881021, 881056, 881075, 881153, 881227, 881228])
def test_second_order_programs_through_writes(seed):
    import random
    from program_check import check_program_second_order
    from program_grammar import Choices, write_program
    source, y_float = write_program(Choices(random.Random(seed).randrange), extended=True,
                                    extras=("containers", "growing", "picks", "scopes"))
    outcome = check_program_second_order(source, y_float)
    assert outcome.status == "ok", f"{source}\n{outcome.detail}"


# Session 10, the order-2 generator with every extra (seeds 895000-895199: 174 ok, 22
# refused, 3 skipped, one crash):
# - 895141: the backward of a helper whose adjoint in is a container gives a plain 0.0 for
#   an argument only an unwritten part reaches (zeros_tree's parts are 0.0), and the list
#   literal that argument came from indexed it: `dy = d_arg2[0]` raised "'float' object is
#   not subscriptable" at first order. Such an array's first adjoint may now be a plain
#   0.0 (read with item_adjoint, broadcast for rules that need its shape).
# - 895139 was refused at second order: `d_abs, = h_backward(dbuf, saved)` after the
#   last write into dbuf. Accepting a reference taken after the last write is wrong: the
#   adjoint sweep puts the written elements back in place, and so changes an alias that
#   an adjoint still holds (tried and measured: d/dx[0] 0.35 where differences give 2.46).
#   Code made to be read again passes such an array to a piece as copied(dbuf) instead
#   (backend/reread.py), as it saves one.

def _join_one_half(t, u):
    return t + (u * 0.5,)


def identity_helper(a):
    return a


def list_into_a_helper_whose_part_gets_no_gradient(x, y):
    a = _join_one_half((x,), np.array([y, 1.0, 2.0]))[0] * \
        _join_one_half((x,), np.array([y, 1.0, 2.0]))[-1]
    return np.sum(a)


def test_a_helpers_argument_reached_only_by_an_unwritten_part():
    from sgcompiler import check_grads
    x = np.array([0.3, -1.2, 2.0])
    for y in (0.7, -0.4):
        dx, dy = grad(list_into_a_helper_whose_part_gets_no_gradient, wrt=(0, 1))(x, y)
        np.testing.assert_allclose(dx, [0.5 * y, 0.5, 1.0])
        np.testing.assert_allclose(dy, 0.5 * x[0])
        check_grads(list_into_a_helper_whose_part_gets_no_gradient, (x, y), order=2,
                    modes=("fwd", "rev"))


def reference_after_the_last_write(x):
    buf = x * 1.0
    buf[0] = x[1] * 3.0
    y = identity_helper(buf)       # y is buf: dx = y, then buf[0] restored in place
    return np.sum(y * x)


def written_in_a_loop_then_given_to_a_helper(x):
    buf = identity_helper(np.abs(x) * 2.0).copy()
    for i in range(2):
        buf[i] *= x[0]
    return np.sum(buf * x)


@pytest.mark.parametrize("shape", [(3,), (4, 2)], ids=str)
def test_second_order_of_an_adjoint_written_into_then_given_to_a_helper(shape):
    from sgcompiler import check_grads
    x = np.random.default_rng(len(shape)).normal(size=shape)
    check_grads(written_in_a_loop_then_given_to_a_helper, (x,), order=2,
                modes=("fwd", "rev"))


def test_a_reference_to_an_array_written_earlier_is_refused():
    with pytest.raises(SGCompilerError, match=r"test_fuzz_regressions.py:\d+\): 'buf' is "
                                              r"written in place, and this keeps"):
        grad(reference_after_the_last_write)(np.array([0.3, -1.2, 2.0]))


@pytest.mark.parametrize("seed", [895139, 895141])
def test_second_order_programs_of_session_10(seed):
    import random
    from program_check import check_program_second_order
    from program_grammar import Choices, write_program
    source, y_float = write_program(Choices(random.Random(seed).randrange), extended=True,
                                    extras=("containers", "growing", "picks", "scopes"))
    outcome = check_program_second_order(source, y_float)
    assert outcome.status == "ok", f"{source}\n{outcome.detail}"


def sum_of_a_comprehension_that_may_be_empty(x):
    s = sum([v * x[0] for v in x if v > 0.5])
    return np.sum(np.sin(x) * x ** 2) + s * x[1]


@pytest.mark.parametrize("x", [[0.3, -1.2, 2.0], [0.1, 0.2, -0.3]], ids=["some", "empty"])
def test_hessian_through_a_sum_of_an_empty_comprehension(x):
    # the batched tangent of an empty list has no directions to count: batch_map raised
    # IndexError; it now runs one jvp per column (forward-mode generator, seed 903012)
    import warnings
    from sgcompiler import hessian, jacobian
    x = np.array(x)
    g = grad(sum_of_a_comprehension_that_may_be_empty)
    eps = 1e-6
    numeric = np.stack([(g(x + eps * e) - g(x - eps * e)) / (2 * eps) for e in np.eye(3)], 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(hessian(sum_of_a_comprehension_that_may_be_empty)(x),
                                   numeric, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(
            jacobian(sum_of_a_comprehension_that_may_be_empty, mode="fwd")(x), g(x),
            rtol=1e-10, atol=1e-12)


# The wide-shape fuzzer, --extended, seeds 901000-901299: one wrong gradient (901092).
# (t1 - t0) * (t1 - t0): the backward's two equal adjoints d_sub and d_sub2 were shared
# (d_sub2 = d_sub) although `dt1_1 = d_sub; ...; dt1_1 += d_sub2` writes into d_sub's
# array through dt1_1, so the second `dt0 -= d_sub` subtracted twice the value. A name
# that may hold the array of a name written into is now written into too
# (optimize/algebraic/aliasing.ArrayFacts).

def square_of_a_difference_read_twice(x, w):
    t0 = w.reshape((-1,))
    t1 = np.dot(np.tanh(t0), t0)
    t1 -= x
    t2 = w / -(1.0 + (t1 - t0) * (t1 - t0))
    return np.sum(t2) ** 2 + np.sum(t0 * t0)


def difference_read_twice_in_a_sum(x, w):
    d = x - w
    e = (x - w) * (x - w) + np.sin(x - w)
    return np.sum(e * d)


@pytest.mark.parametrize("f", [square_of_a_difference_read_twice,
                               difference_read_twice_in_a_sum])
@pytest.mark.parametrize("shape", [(3,), (1,), (4,)], ids=str)
def test_equal_adjoints_are_not_shared_through_an_alias_written_into(f, shape):
    rng = np.random.default_rng(shape[0])
    assert_grad_matches(f, [rng.normal(size=shape), rng.normal(size=shape)])


# Issue 14 (program_check --hessian --extended --extras containers growing picks scopes,
# 17 of 150 programs from seed 896000 failed, none with a wrong value): the batched
# Hessian maps a runtime helper that is linear in a container's tangent over the
# directions (runtime.batch_map) and took their number from the container's first item.
# A dict's tangent before its first write (old_item of a key the dict does not have yet)
# and an empty list (a comprehension whose filter kept nothing, then summed) have no item:
# StopIteration and IndexError from hessian. Such a tangent holds no direction; the helper,
# linear in it, gives its zero once (the same for every direction).
def dict_filled_from_empty(x, y):
    a = [x * 0.5, x][0]          # an array whose shape the shapes pass does not follow
    d = {}
    for k in range(3):
        d[k] = a[k] * a[2 - k] * y[k]
    return d[0] + d[2] * d[1]


SHRUNK_896008 = """def f(x, y):
    pair3 = helper_two(((y[0] + y) ** 2), stop_gradient(np.array([x[0], 0.1, 0.5])))
    picked3 = np.sum(pair3[1][[-1, 0, -1]] * pair3[1][[-1, 0, -1]])
    if (-picked3) > 0.5:
        return picked3
    b = helper_slice([x, x, x], y)
    sc1 = (b / (2.0 + np.cos(y[2])))
    b = sum([sum([w * sc1 for sc1 in sc1 if sc1 > w]) for w in sc1])
    return b + picked3
"""


def test_batched_hessian_through_a_dict_filled_from_empty():
    import warnings
    from gradcheck import fd_hessian
    from sgcompiler import PerColumnWarning, hessian
    for x, y in [(X, Y), (Y[::-1] * 0.7, X + 0.3)]:
        with warnings.catch_warnings():
            warnings.simplefilter("error", PerColumnWarning)
            H = hessian(dict_filled_from_empty)(x, y)
        np.testing.assert_allclose(H, fd_hessian(dict_filled_from_empty, x, y), rtol=1e-5,
                                   atol=1e-6)


def test_batched_hessian_through_the_sum_of_an_empty_list():
    from program_check import check_program_hessian
    outcome = check_program_hessian(SHRUNK_896008, False)
    paths = [how for how in outcome.settled if how.startswith("hessian")]
    assert outcome.status == "ok" and paths == ["hessian batched"] * 2, outcome.detail


@pytest.mark.parametrize("seed", [896000, 896008, 896048, 896065])
def test_batched_hessians_of_programs_through_empty_containers(seed):
    import random
    from program_check import check_program_hessian
    from program_grammar import Choices, write_program
    source, y_float = write_program(Choices(random.Random(seed).randrange), extended=True,
                                    extras=("containers", "growing", "picks", "scopes"))
    outcome = check_program_hessian(source, y_float)
    assert outcome.status == "ok", f"{source}\n{outcome.detail}"


def test_batch_map_of_tangents_with_no_direction_in_them():
    from sgcompiler.runtime import batch_map
    from sgcompiler.runtime.core import old_item
    assert batch_map(sum, (0,), []) == 0
    assert batch_map(old_item, (0,), {}, 2) == 0.0
    t = np.arange(6.0).reshape(2, 3)       # two directions
    out = batch_map(lambda u, v: u[0] + u[1] + v, (0, 1), [0.0, t], t)    # (0.0: a zero)
    np.testing.assert_array_equal(out, 2 * t)
    np.testing.assert_array_equal(batch_map(old_item, (0,), {1: t}, 1), t)


# Session 10, program_check --hessian with every extra, seeds 906000-906149 (140 ok, 8
# refused as expected, 2 crashes):
# - 906144: a container's 0.0 part (zeros_tree) has a batched zero of shape (batch,),
#   a zero of any shape; batch_item of it as an array's tangent moved an axis it lacks.
# - 906030: a helper's tangent for a list it got no tangent for is a plain 0.0, and the
#   caller's tangent of the list's item indexed it (d_arg_dot[0]: 'float' object is not
#   subscriptable); an item of a container's tangent is item_adjoint(t, i) now.

def _join_after_sine(a, u):
    return [np.sin(u)] + a


def item_of_a_joined_list(x, y):
    a = _join_after_sine([np.asarray([x[0], -0.7, 2.0])], y)[0]
    return np.sum(a * x * x)


def test_hessian_through_an_item_of_a_list_joined_in_a_helper():
    from sgcompiler import hessian
    rng = np.random.default_rng(4)
    x, y = rng.normal(size=3), rng.normal(size=3)
    np.testing.assert_allclose(hessian(item_of_a_joined_list)(x, y), 2 * np.diag(np.sin(y)),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", [906030, 906144])
def test_hessian_programs_of_session_10(seed):
    import random
    from program_check import check_program_hessian
    from program_grammar import Choices, write_program
    source, y_float = write_program(Choices(random.Random(seed).randrange), extended=True,
                                    extras=("containers", "growing", "picks", "scopes",
                                            "sigmoids"))
    outcome = check_program_hessian(source, y_float)
    assert outcome.status == "ok", f"{source}\n{outcome.detail}"


# Session 10, benchmarks/batched_hessians.py --census: the Hessians of two real specimens
# were refused, "no derivative rule for real_only" (the complex-mode guard that the
# gradient of np.fft.fftshift, np.real_if_close and np.gradient's helpers calls). It has
# rules now (linear in g; its operands, a tuple, only checked), so grad of grad reads it.

@pytest.mark.parametrize("name, shape", [("reorders", (6,)), ("gradient_axes", (4, 5))])
def test_second_order_through_the_real_only_guard(name, shape):
    import specimens_numpy
    from sgcompiler import check_grads, hessian
    f = getattr(specimens_numpy, name)
    x = np.random.default_rng(1).normal(size=shape)
    check_grads(f, (x,), order=2, modes=("fwd", "rev"))
    g, eps = grad(f), 1e-6
    basis = np.eye(x.size).reshape((x.size,) + shape)
    numeric = np.stack([(g(x + eps * e) - g(x - eps * e)) / (2 * eps) for e in basis], -1)
    with pytest.warns(Warning):     # (per column: complex values in the FFT's helpers)
        np.testing.assert_allclose(hessian(f)(x), numeric.reshape(shape + shape),
                                   rtol=1e-5, atol=1e-5)


# Session 11, program_check --hessian (919046, also seen in session 10): the Hessian of a
# loop that skipped, by `continue`, a statement writing a product was refused, naming our
# own gradient code: "'dbuf2' is written in place later but may share memory with another
# value here [generated f_grad: dbuf2 = prod_grad(dy, _prod, buf2)]". Any call's result
# counted as possibly shared; a runtime helper that returns none of its arguments (its
# summary, analysis/summaries.Callees.returned_params) returns a new array.

def prod_in_a_skipped_loop_then_written(x, y):
    n = 0
    while n < 3:
        n += 1
        if np.sum(x) > 0.3:
            continue
        buf = np.zeros_like(x) + x
        y = y + np.prod(buf)
    buf = x.copy()
    buf[1] += x[-1]
    return y + np.sum(buf * buf)


@pytest.mark.parametrize("x", [np.array([0.1, -0.5, 0.2]), np.array([0.4, 0.3, -0.2]),
                               np.array([0.1, -0.5, 0.2, 0.3])])
def test_hessian_through_a_product_gradient_written_later(x):
    from gradcheck import fd_hessian
    from sgcompiler import check_grads, hessian
    H = hessian(prod_in_a_skipped_loop_then_written)(x, 0.3)
    np.testing.assert_allclose(H, fd_hessian(prod_in_a_skipped_loop_then_written, x, 0.3),
                               rtol=1e-5, atol=1e-6)
    check_grads(prod_in_a_skipped_loop_then_written, (x, 0.3), order=2, modes=("rev",))


def test_hessian_program_919046():
    import random
    from program_check import check_program_hessian
    from program_grammar import Choices, write_program
    source, y_float = write_program(Choices(random.Random(919046).randrange), extended=True,
                                    extras=("containers", "growing", "picks", "scopes",
                                            "sigmoids"))
    outcome = check_program_hessian(source, y_float)
    # (the program also loops over a dict in helper_dict_loop: the refusal users get)
    assert outcome.status == "refused" and outcome.detail.startswith("helper_dict_loop") \
        and "dbuf" not in outcome.detail, f"{source}\n{outcome.detail}"


def test_program_check_hessian_compares_with_finite_differences(monkeypatch):
    """check_program_hessian compared batched with per-column Hessians only, so a wrong
    Hessian that both paths share passed; it now compares them with central differences
    of the first-order gradient too."""
    import program_check
    import sgcompiler
    source = "def f(x, y):\n    return np.sum(np.sin(x) * x) * y\n"
    assert program_check.check_program_hessian(source, True).status == "ok"
    real = sgcompiler.hessian

    def off_by_a_little(f, wrt=0):
        h = real(f, wrt=wrt)
        return lambda *args: h(*args) * 1.001
    monkeypatch.setattr(sgcompiler, "hessian", off_by_a_little)
    outcome = program_check.check_program_hessian(source, True)
    assert outcome.status == "failed" and "finite differences" in outcome.detail


# Session 11, program_check --hessian 923015: second order refused our own first-order
# code, "'dbuf' is written in place, and this keeps a reference to it [generated f_grad:
# d_arg = split_like(dbuf, _arg)]": split_like gives views of the adjoint it splits (the
# pieces of a concatenation), and dbuf was written into later. Code made to be read again
# passes such a helper a copy (backend/reread._copy_passed), as it does a user's function.

def concatenated_in_a_branch_after_a_write(x, y):
    buf = np.cos(x).copy()
    buf[-1] = x[2]
    if np.sum(x) > 0.3:
        a = x[0] * buf[1]
    else:
        buf = np.copy(np.concatenate([[y[-1]], (buf[2] / (1.0 + buf * buf))[1:]]))
        a = x[-1]
    return a + np.sum(buf * buf)


@pytest.mark.parametrize("x", [np.array([0.3, -0.2, 0.1]), np.array([0.3, 0.2, 0.1]),
                               np.array([-0.4, 0.1, 0.2, 0.3])])
def test_hessian_through_split_pieces_of_an_adjoint_written_later(x):
    from gradcheck import fd_hessian
    from sgcompiler import hessian
    y = np.linspace(0.1, 0.4, x.size)
    f = concatenated_in_a_branch_after_a_write
    np.testing.assert_allclose(hessian(f)(x, y), fd_hessian(f, x, y), rtol=1e-5, atol=1e-6)


# Session 11, program_check --extended 924043: a loop inside a loop whose statements the
# gradient does not need (`for j in range(2): c = stop_gradient(x)`) lost its whole body in
# the primal sweep's copy, and the generated code did not compile ("expected an indented
# block after 'for' statement"). It keeps a `pass` (reverse/loops.primal_loop).

def loop_of_stopped_values_in_a_loop(x):
    a = x[0]
    for i in range(3):
        for j in range(2):
            c = stop_gradient(x)
        a = a * np.sin(x[1]) + c[0] * 0.0
    return a


def loop_of_stopped_values_in_a_loop_alone(x):
    a = x[0]
    for i in range(3):
        for j in range(2):
            c = stop_gradient(x)
        a = a * np.sin(x[1]) + j
    return a


@pytest.mark.parametrize("f", [loop_of_stopped_values_in_a_loop,
                               loop_of_stopped_values_in_a_loop_alone])
@pytest.mark.parametrize("x", [np.array([0.3, 0.5]), np.array([-0.7, 1.2, 0.4])])
def test_a_loop_whose_statements_the_gradient_does_not_need(f, x):
    assert_grad_matches(f, (x,))


# program_check --extended, seed 930045 (session 12): a loop trip whose adjoint leaves x's
# adjoint a plain 0.0 (x is rebound from values that do not read it), which the next trip
# (in reverse) reads as an array, `dx[0]` for the np.array of a list: TypeError "'float'
# object is not subscriptable". The loop's adjoint now counts an adjoint made a plain 0.0
# in the body as one the next trip may see so. (The same in a for loop was right before:
# its companion.)
def rebound_from_others_in_a_while(x, y):
    for i in range(2):
        m = 0
        while m < 3:
            m += 1
            if i == 1:
                continue
            x = x * y
            x = np.array([np.max(np.square(y)), 0.1, 1.5])
    return np.sum(x * y)


def rebound_from_others_in_a_for(x, y):
    for k in range(3):
        x = x * y
        x = np.array([np.max(np.sin(y) * k), 0.1, 1.5])
    return np.sum(x * y)


@pytest.mark.parametrize("f", [rebound_from_others_in_a_while, rebound_from_others_in_a_for])
@pytest.mark.parametrize("y", [Y, np.array([-1.1, 0.3, 0.8])])
def test_an_adjoint_a_trip_leaves_a_plain_zero(f, y):
    assert_grad_matches(f, (X, y))
