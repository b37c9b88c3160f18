"""Derivative rules of NumPy's shape, copy and indexing functions. See registry.py.

These functions move elements without changing them, so each gradient moves `g` back:
the inverse movement (transpose, flip, roll), or a sum where an element was used more
than once (tile, repeat, take). Array methods (`x.ravel()`, `x.astype(float)`) reach
these rules through analysis/ops.py.
"""
import numpy as np

from ...runtime import unbroadcast
from ...runtime.numpy.shapes import (COPYING_PAD_MODES, append_grad, astype, cast_grad,
                              column_stack_grad, delete_grad, diff_grad, dstack_grad,
                              hsplit_axis, hstack_grad,
                              interp_grad_fp, interp_grad_x, interp_linear_part, join_pieces, linspace_fractions,
                              pad_grad, partition_grad, partition_tangent_of, polyval_grad_p,
                              polyval_grad_x, real_dtype, repeat_grad, rollaxis_grad,
                              select_default_grad, select_grads, sort_grad, sorted_like,
                              split_like,
                              take_along_axis_grad, take_grad, tile_grad, transpose_grad,
                              trapezoid_grad, unstack, vstack_grad)
from ...runtime.batched_rules import batch_diff_padded, batch_pad, batch_polyval
from ...runtime.tangents import cast_tangent, diff_padded
from ..registry import batchable, jvp, linear, present, vjp

# --- shapes and axes --------------------------------------------------------------------------


@vjp(np.transpose, *present(np, "permute_dims"))
def transpose(g, ans, a, axes=None):
    return transpose_grad(g, axes)


@vjp(np.reshape, notes="order 'C' or 'F'")
def reshape(g, ans, a, shape=None, order="C"):
    return np.reshape(g, np.shape(a), order=order)


@vjp(np.ravel, notes="order 'C' or 'F'; also x.flatten()")
def ravel(g, ans, a, order="C"):
    return np.reshape(g, np.shape(a), order=order)


@vjp(np.expand_dims, np.squeeze)
def expand_dims(g, ans, a, axis=None):
    return np.reshape(g, np.shape(a))


@vjp(np.atleast_1d, np.atleast_2d, np.atleast_3d, notes="one array")
def atleast_1d(g, ans, ary):
    return np.reshape(g, np.shape(ary))


@vjp(np.broadcast_to)
def broadcast_to(g, ans, array, shape, subok=False):
    return unbroadcast(g, array)


@vjp(np.swapaxes)
def swapaxes(g, ans, a, axis1, axis2):
    return np.swapaxes(g, axis1, axis2)


@vjp(np.moveaxis)
def moveaxis(g, ans, a, source, destination):
    return np.moveaxis(g, destination, source)


@vjp(np.rollaxis)
def rollaxis(g, ans, a, axis, start=0):
    return rollaxis_grad(g, a, axis, start)


@vjp(np.flip)
def flip(g, ans, m, axis=None):
    return np.flip(g, axis)


@vjp(np.fliplr)
def fliplr(g, ans, m):
    return np.fliplr(g)


@vjp(np.flipud)
def flipud(g, ans, m):
    return np.flipud(g)


@vjp(np.roll)
def roll(g, ans, a, shift, axis=None):
    return np.roll(g, np.negative(shift), axis)


@vjp(np.rot90)
def rot90(g, ans, m, k=1, axes=(0, 1)):
    return np.rot90(g, -k, axes)


@vjp(np.tile)
def tile(g, ans, A, reps):
    return tile_grad(g, A, reps)


@vjp(np.repeat)
def repeat(g, ans, a, repeats, axis=None):
    return repeat_grad(g, a, repeats, axis)


@vjp(np.triu)
def triu(g, ans, m, k=0):
    return np.triu(g, k)


@vjp(np.tril)
def tril(g, ans, m, k=0):
    return np.tril(g, k)


@vjp(np.pad, notes="modes constant, edge, reflect, symmetric, wrap; no gradient for "
                   "constant_values", supported={"mode": COPYING_PAD_MODES})
def pad(g, ans, array, pad_width, mode="constant", *, constant_values=0):
    return pad_grad(g, array, pad_width, mode)


@vjp(np.append)
def append(g, ans, arr, values, axis=None):
    return append_grad(g, arr, values, axis, 0), append_grad(g, arr, values, axis, 1)


@vjp(np.delete)
def delete(g, ans, arr, obj, axis=None):
    return delete_grad(g, arr, obj, axis)


@vjp(np.diff, notes="no gradient for prepend/append")
def diff(g, ans, a, n=1, axis=-1, prepend=None, append=None):
    return diff_grad(g, a, n, axis, prepend, append)


# --- copies and casts ---------------------------------------------------------------------------


@vjp(np.float64, np.float32)
def float64(g, ans, x):
    return g


@vjp(np.asarray)
def asarray(g, ans, a, dtype=None):
    return g


@vjp(np.ascontiguousarray, np.asfortranarray)
def ascontiguousarray(g, ans, a, dtype=None):
    return np.reshape(g, np.shape(a))       # (a 0-d a gives an array of shape (1,))


@vjp(np.array)
def array(g, ans, object, dtype=None):
    return g


@vjp(np.copy)
def copy(g, ans, a, order="K"):
    return g


@vjp(astype, name="x.astype()", notes="a cast to an integer or bool type has zero gradient",
     supported={"dtype": real_dtype})
def astype_method(g, ans, x, dtype, order="K", casting="unsafe", subok=True, copy=True):
    return cast_grad(g, x, dtype)


@vjp(*present(np, "astype"), notes="a cast to an integer or bool type has zero gradient",
     supported={"dtype": real_dtype})
def astype_function(g, ans, x, dtype, *, copy=True, device=None):
    return cast_grad(g, x, dtype)


# --- selection ----------------------------------------------------------------------------------


@vjp(np.take, notes="repeated indices add; modes raise, wrap, clip")
def take(g, ans, a, indices, axis=None, out=None, mode="raise"):
    return take_grad(g, a, indices, axis, mode), None


@vjp(np.take_along_axis, notes="repeated indices add")
def take_along_axis(g, ans, arr, indices, axis=-1):
    return take_along_axis_grad(g, arr, indices, axis), None


@vjp(np.compress)
def compress(g, ans, condition, a, axis=None, out=None):
    return None, take_grad(g, a, np.flatnonzero(condition), axis)


@vjp(np.extract)
def extract(g, ans, condition, arr):
    return None, take_grad(g, arr, np.flatnonzero(condition))


@vjp(np.sort, notes="tied elements each get one of the tied gradients")
def sort(g, ans, a, axis=-1, kind=None, order=None):
    return sort_grad(g, a, axis)


@vjp(np.partition, notes="tied elements each get one of the tied gradients")
def partition(g, ans, a, kth, axis=-1, kind="introselect", order=None):
    return partition_grad(g, ans, a, axis)


@vjp(np.bincount, notes="gradient for the weights")
def bincount(g, ans, x, weights=None, minlength=0):
    return None, np.take(g, x)


# --- constructors with differentiable values ----------------------------------------------------


@vjp(np.full)
def full(g, ans, shape, fill_value, dtype=None, order="C"):
    return None, unbroadcast(g, fill_value)


@vjp(np.full_like, notes="the gradient for a is zero (only its shape is used)")
def full_like(g, ans, a, fill_value, dtype=None, order="K", subok=True, shape=None):
    return 0.0, unbroadcast(g, fill_value)


@vjp(np.linspace, notes="start and stop; not retstep=True", supported={"retstep": (False,)})
def linspace(g, ans, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    return (unbroadcast(np.sum(g * (1.0 - linspace_fractions(g, num, endpoint, axis, retstep)),
                               axis=axis), start),
            unbroadcast(np.sum(g * linspace_fractions(g, num, endpoint, axis, retstep),
                               axis=axis), stop))


# --- interpolation and integration ---------------------------------------------------------------


@vjp(np.interp, notes="x and fp (not xp); not period", supported={"period": (None,)})
def interp(g, ans, x, xp, fp, left=None, right=None, period=None):
    return (interp_grad_x(g, x, xp, fp, left, right, period), None,
            interp_grad_fp(g, x, xp, fp, left, right, period))


@vjp(*present(np, "trapezoid", "trapz"), notes="y only (not x or dx)")
def trapezoid(g, ans, y, x=None, dx=1.0, axis=-1):
    return trapezoid_grad(g, y, x, dx, axis)


@vjp(np.polyval, notes="1-D coefficient arrays")
def polyval(g, ans, p, x):
    return polyval_grad_p(g, p, x), polyval_grad_x(g, p, x)


# --- sequences of arrays (the gradient of a sequence parameter is a list) -------------------


@vjp(np.concatenate, *present(np, "concat"), notes="a sequence of arrays; axis=None too")
def concatenate(g, ans, arrays, axis=0):
    return split_like(g, arrays, axis)


@vjp(np.stack)
def stack(g, ans, arrays, axis=0):
    return unstack(g, axis)


@vjp(np.hstack)
def hstack(g, ans, tup):
    return hstack_grad(g, tup)


@vjp(np.vstack)
def vstack(g, ans, tup):
    return vstack_grad(g, tup)


@vjp(np.dstack)
def dstack(g, ans, tup):
    return dstack_grad(g, tup)


@vjp(np.column_stack)
def column_stack(g, ans, tup):
    return column_stack_grad(g, tup)


@vjp(np.select, notes="choicelist and default (not the conditions)")
def select(g, ans, condlist, choicelist, default=0):
    return (None, select_grads(g, condlist, choicelist),
            select_default_grad(g, condlist, default))


@vjp(np.split, np.array_split, multiple_results=True)
def split(g, ans, ary, indices_or_sections, axis=0):
    return join_pieces(g, ans, axis)


@vjp(np.hsplit, multiple_results=True)
def hsplit(g, ans, ary, indices_or_sections):
    return join_pieces(g, ans, hsplit_axis(ary))


@vjp(np.vsplit, multiple_results=True)
def vsplit(g, ans, ary, indices_or_sections):
    return join_pieces(g, ans, 0)


@vjp(np.dsplit, multiple_results=True)
def dsplit(g, ans, ary, indices_or_sections):
    return join_pieces(g, ans, 2)


# --- tangents (forward mode): these functions are linear in the arrays they move ----------

linear(np.transpose, *present(np, "permute_dims"), np.reshape, np.ravel, np.expand_dims,
       np.squeeze, np.atleast_1d, np.atleast_2d, np.atleast_3d, np.broadcast_to,
       np.swapaxes, np.moveaxis, np.rollaxis, np.flip, np.fliplr, np.flipud, np.roll,
       np.rot90, np.tile, np.repeat, np.triu, np.tril, np.append, np.delete, np.float64,
       np.float32, np.asarray, np.ascontiguousarray, np.asfortranarray, np.array, np.copy,
       np.take, np.take_along_axis, np.compress, np.extract, np.bincount, np.full,
       np.full_like, np.linspace, *present(np, "trapezoid", "trapz"), np.concatenate,
       *present(np, "concat"), np.stack, np.hstack, np.vstack, np.dstack, np.column_stack,
       np.select, np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit)


@jvp(np.pad)
def pad_tangent(t, ans, array, pad_width, mode="constant", *, constant_values=0):
    return np.pad(t, pad_width, mode)


batchable(np.pad, helpers=[(np.pad, batch_pad)])


@jvp(np.diff)
def diff_tangent(t, ans, a, n=1, axis=-1, prepend=None, append=None):
    return diff_padded(t, n, axis, prepend, append)


batchable(np.diff, helpers=[(diff_padded, batch_diff_padded)])


@jvp(astype, name="x.astype()")
def astype_method_tangent(t, ans, x, dtype, order="K", casting="unsafe", subok=True,
                          copy=True):
    return cast_tangent(t, dtype)


@jvp(*present(np, "astype"))
def astype_function_tangent(t, ans, x, dtype, *, copy=True, device=None):
    return cast_tangent(t, dtype)


batchable(astype, *present(np, "astype"))      # (a cast of any shape)


@jvp(np.sort)
def sort_tangent(t, ans, a, axis=-1, kind=None, order=None):
    return sorted_like(t, a, axis)


@jvp(np.partition)
def partition_tangent(t, ans, a, kth, axis=-1, kind="introselect", order=None):
    return partition_tangent_of(t, ans, a, axis)


@jvp(np.interp)
def interp_tangent(x_dot, fp_dot, ans, x, xp, fp, left=None, right=None, period=None):
    return (interp_grad_x(x_dot, x, xp, fp, left, right, period),
            interp_linear_part(x, xp, fp_dot, left, right, period))


@jvp(np.polyval)
def polyval_tangent(p_dot, x_dot, ans, p, x):
    return np.polyval(p_dot, x), x_dot * np.polyval(np.polyder(p), x)


batchable(np.polyval, helpers=[(np.polyval, batch_polyval)])


# second order: np.partition's gradient helper and its tangent move values as the
# partition moved a's elements, one the transpose of the other (ans and a only say how)
@vjp(partition_grad, name="partition_grad")
def partition_grad_(g, ans, g_, ans_, a, axis=-1):
    return partition_tangent_of(g, ans_, a, axis), 0.0, 0.0, 0.0


@vjp(partition_tangent_of, name="partition_tangent_of")
def partition_tangent_of_(g, ans, t, ans_, a, axis=-1):
    return partition_grad(g, ans_, a, axis), 0.0, 0.0, 0.0


linear(partition_grad, partition_tangent_of)
