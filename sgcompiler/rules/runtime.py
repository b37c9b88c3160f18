"""Derivative rules of the runtime helpers that generated code calls (runtime/).

Grad of grad compiles a generated gradient again, so every helper that gradient calls needs
a rule of its own. Most helpers are the adjoint of a linear map applied to `g` (the
primitive's vjp); the adjoint of such a helper with respect to its `g` is the linear map
itself, which is the primitive (or its vjp with the roles swapped):

    matmul_grad_left(g_, x, y) = g_ @ y.T   ->    d g_ = g @ y,   d y = g.T @ g_
    unbroadcast(g_, x)         sums g_ down  ->    d g_ = g broadcast back: unbroadcast(g, g_)

(A helper's own parameters `g` and `ans` are written `g_` and `ans_` here: `g` and `ans`
are the rule's, the adjoint and the value of the helper's result. A product's `g` may be
a plain 0.0, the zero part of a tree's adjoint: `unreduce(g, x)` gives it x's shape.)

Arguments that a helper reads only for their shape, integer indexes and counts, and
arguments it is piecewise constant in (the choice of max) get exactly zero (0.0). An
argument a helper is not linear in and that has no rule here (prod_grad's x) gets None:
a derivative through it is refused, naming it. Helpers not listed have no rule: a
gradient through them is refused.

(The tangent rules of the same helpers, for forward mode, go in a section of their own.)
"""
import numpy as np

from ..runtime import (add_at, add_trees, as_float, balanced_eq, cast_grad, choose_grad,
                       copied, cumsum_grad, dot_grad_left, dot_grad_right, field,
                       fitted, float_dtype, hsplit_axis, index_part, inner_grad_a, inner_grad_b,
                       item_adjoint, item_of, length, linspace_fractions, matmul_grad_left,
                       matmul_grad_right, median_grad, mT, nan_count, not_a_view, old_item,
                       old_item_back,
                       picked, prod_grad, reduce_like, reduced_axes, reduced_size, repeat_grad,
                       scalar_result, scatter_item, sequence_adjoint, sequence_parts,
                       take_grad, tensordot_axes,
                       tensordot_grad_a, tensordot_grad_b, tile_grad, transpose_grad,
                       tree_item, tree_with, unbroadcast, unbroadcast_each,
                       unbroadcast_sum, unreduce, written_back, written_part, zeros_tree)
from ..runtime import (cholesky_grad, cumprod_grad, diag_grad, diagonal_grad, eig_grad,
                       eigh_grad, eigvals_grad, eigvalsh_grad, lstsq_grad_a, lstsq_grad_b,
                       matrix_norm_grad, matrix_power_grad, multi_dot_grads, norm_grad,
                       pinv_grad, qr_grad, slogdet_grad, solve_grad_a, solve_grad_b,
                       svd_grad, svdvals_grad, trace_grad, vector_norm_grad)
from ..runtime import by_position, checkpoint_every, cross_grad, divide_or_zero, join_pieces, split_like
from ..runtime import (diff_grad, interp_grad_fp, interp_grad_x, interp_linear_part,
                       interp_slope_grad, pad_grad,
                       rollaxis_grad, sort_grad, sorted_like, take_along_axis_grad)
from ..runtime import (append_grad, average_grad_a, average_grad_weights, average_weights,
                       column_stack_grad,
                       delete_grad, dstack_grad, hstack_grad, kron_grad, polyval_grad_p,
                       polyval_grad_x, select_default_grad, select_grad, select_grads,
                       trapezoid_grad,
                       unstack, vecdot_grad, vstack_grad)
from ..runtime.batched_rules import batch_einsum_grad, batch_einsum_grad_with
from ..runtime.numpy.linalg import einsum_grad
from ..runtime.tangents import diff_padded, einsum_grad_with, einsum_with
from ..runtime.numpy.linalg import fold, fold_lower, fold_upper
from .registry import (batchable, jvp, linear, multilinear, nondifferentiable, through_source,
                       vjp)

# --- adjoint rules (reverse mode) ---------------------------------------------------------

# shapes, counts, checks and masks: integers, bools, zeros, or piecewise constant
nondifferentiable(reduced_size, reduced_axes, float_dtype, balanced_eq, zeros_tree,
                  scalar_result, not_a_view, nan_count, tensordot_axes, hsplit_axis,
                  linspace_fractions, length, checkpoint_every, by_position)


@vjp(unbroadcast, name="unbroadcast")
def unbroadcast_(g, ans, g_, x):
    return unbroadcast(g, g_), 0.0


@vjp(unreduce, name="unreduce")
def unreduce_(g, ans, g_, x, axis=None, keepdims=False):
    return reduce_like(g, g_, axis, keepdims), 0.0


@vjp(reduce_like, name="reduce_like")
def reduce_like_(g, ans, g_, h, axis=None, keepdims=False):
    return unreduce(g, g_, axis, keepdims), 0.0


@vjp(unbroadcast_each, name="unbroadcast_each")
def unbroadcast_each_(g, ans, g_, items):
    return unbroadcast_sum(g, g_), 0.0


# third order (the gradient of sum(list) read twice): unbroadcast_each's adjoint is linear
# in its g_, each item summed down to h; its own adjoint is h's g back to every item
@vjp(unbroadcast_sum, name="unbroadcast_sum")
def unbroadcast_sum_(g, ans, g_, h):
    return unbroadcast_each(g, g_), 0.0


@vjp(as_float, name="as_float")
def as_float_(g, ans, g_, x1=None, x2=None, x3=None):
    return g, 0.0, 0.0, 0.0


@vjp(item_adjoint, name="item_adjoint")
def item_adjoint_(g, ans, g_, index, x=None):
    return scatter_item(g, g_, index), 0.0, 0.0


@vjp(scatter_item, name="scatter_item")
def scatter_item_(g, ans, c, g_, index):
    return item_adjoint(g, index, c), 0.0, 0.0


@vjp(copied, name="copied")
def copied_(g, ans, value):
    return g


@vjp(mT, name="mT")
def mT_(g, ans, x):
    return mT(g)


@vjp(add_trees, name="add_trees")
def add_trees_(g, ans, a, b):
    # lists add up to the shorter one's length: the longer one's tail gets zeros
    return fitted(g, a), fitted(g, b)


# fitted(g_, like) pads a list g_ with zeros to like's length (or cuts a longer one): its
# transpose cuts g back to g_'s length (or pads it), fitted(g, g_); like is read for its
# length (or shape) only
@vjp(fitted, name="fitted")
def fitted_(g, ans, g_, like):
    return fitted(g, g_), 0.0


@vjp(add_at, name="add_at")
def add_at_(g, ans, dx, index, g_):
    return g, 0.0, index_part(g, index, g_)


@vjp(index_part, name="index_part")
def index_part_(g, ans, g_, index, like):
    return add_at(zeros_tree(g_), index, g), 0.0, 0.0


# the gradient saves what `c[k] = v` overwrites (old_item) and puts it back: at second order
# that copy's adjoint goes to c at k
@vjp(old_item, name="old_item")
def old_item_(g, ans, container, key):
    return old_item_back(g, container, key), 0.0


@vjp(old_item_back, name="old_item_back")
def old_item_back_(g, ans, g_, container, key):
    return old_item(g, key), 0.0, 0.0


@vjp(field, name="field")
def field_(g, ans, obj, name):
    return tree_with(obj, name, g), None


@vjp(tree_item, name="tree_item")
def tree_item_(g, ans, g_, key):
    return tree_with(g_, key, g), None


# (like is read for its structure only: no gradient, 0.0, as for a shape)
@vjp(tree_with, name="tree_with")
def tree_with_(g, ans, like, key, g_):
    return 0.0, None, tree_item(g, key)


@vjp(transpose_grad, name="transpose_grad")
def transpose_grad_(g, ans, g_, axes=None):
    return np.transpose(g, axes)


@vjp(cast_grad, name="cast_grad")
def cast_grad_(g, ans, g_, x, dtype):
    return cast_grad(g, g_, dtype), 0.0


@vjp(matmul_grad_left, name="matmul_grad_left")
def matmul_grad_left_(g, ans, g_, x, y):
    return np.matmul(unreduce(g, x), y), 0.0, matmul_grad_right(g_, unreduce(g, x), y)


@vjp(matmul_grad_right, name="matmul_grad_right")
def matmul_grad_right_(g, ans, g_, x, y):
    return np.matmul(x, unreduce(g, y)), matmul_grad_left(g_, x, unreduce(g, y)), 0.0


@vjp(dot_grad_left, name="dot_grad_left")
def dot_grad_left_(g, ans, g_, x, y):
    return np.dot(unreduce(g, x), y), 0.0, dot_grad_right(g_, unreduce(g, x), y)


@vjp(dot_grad_right, name="dot_grad_right")
def dot_grad_right_(g, ans, g_, x, y):
    return np.dot(x, unreduce(g, y)), dot_grad_left(g_, x, unreduce(g, y)), 0.0


@vjp(inner_grad_a, name="inner_grad_a")
def inner_grad_a_(g, ans, g_, a, b):
    return np.inner(unreduce(g, a), b), 0.0, inner_grad_b(g_, unreduce(g, a), b)


@vjp(inner_grad_b, name="inner_grad_b")
def inner_grad_b_(g, ans, g_, a, b):
    return np.inner(a, unreduce(g, b)), inner_grad_a(g_, a, unreduce(g, b)), 0.0


@vjp(tensordot_grad_a, name="tensordot_grad_a")
def tensordot_grad_a_(g, ans, g_, a, b, axes=2):
    return (np.tensordot(unreduce(g, a), b, axes), 0.0,
            tensordot_grad_b(g_, unreduce(g, a), b, axes))


@vjp(tensordot_grad_b, name="tensordot_grad_b")
def tensordot_grad_b_(g, ans, g_, a, b, axes=2):
    return (np.tensordot(a, unreduce(g, b), axes),
            tensordot_grad_a(g_, a, unreduce(g, b), axes), 0.0)


@vjp(choose_grad, name="choose_grad")
def choose_grad_(g, ans, g_, ans_, x, axis=None, keepdims=False):
    return (np.sum(g * choose_grad(1.0, ans_, x, axis, keepdims), axis=axis, keepdims=keepdims),
            0.0, 0.0)


# the value written by x[index] = v, without the writes a duplicate index overwrote, and
# its transpose (zeros with g assigned at index: assignment keeps the same writes)
@vjp(written_part, name="written_part")
def written_part_(g, ans, g_, index):
    return written_back(g, index, g_), 0.0


@vjp(written_back, name="written_back")
def written_back_(g, ans, g_, index, like):
    return written_part(g, index), 0.0, 0.0


@vjp(median_grad, name="median_grad")
def median_grad_(g, ans, g_, a, axis=None, keepdims=False):
    return np.sum(g * median_grad(1.0, a, axis, keepdims), axis=axis, keepdims=keepdims), 0.0


@vjp(cumsum_grad, name="cumsum_grad")
def cumsum_grad_(g, ans, g_, a, axis=None):
    return np.reshape(np.cumsum(g, axis), np.shape(g_)), 0.0


@vjp(take_grad, name="take_grad")
def take_grad_(g, ans, g_, a, indices, axis=None, mode="raise"):
    return np.take(g, indices, axis, mode=mode), 0.0, 0.0


@vjp(tile_grad, name="tile_grad")
def tile_grad_(g, ans, g_, A, reps):
    return np.tile(g, reps), 0.0, 0.0


@vjp(repeat_grad, name="repeat_grad")
def repeat_grad_(g, ans, g_, a, repeats, axis=None):
    return np.repeat(g, repeats, axis), 0.0, 0.0


@vjp(sequence_adjoint, name="sequence_adjoint")
def sequence_adjoint_(g, ans, g_, items):
    return sequence_parts(g, items), 0.0


@vjp(sequence_parts, name="sequence_parts")
def sequence_parts_(g, ans, g_, items):
    return sequence_adjoint(g, items), 0.0


@vjp(picked, name="picked")
def picked_(g, ans, g_, items, chosen):
    return item_of(g, items, chosen), 0.0, 0.0


@vjp(item_of, name="item_of")
def item_of_(g, ans, t, items, chosen):
    return picked(g, items, chosen), 0.0, 0.0


# the gradients of functions that only move elements (linear in the array they move):
# the transpose of each is the movement itself (the primitive's tangent), and the
# array they read the order from gets zero (piecewise constant)

@vjp(sort_grad, name="sort_grad")
def sort_grad_(g, ans, g_, a, axis=-1):
    return sorted_like(g, a, axis), 0.0


@vjp(sorted_like, name="sorted_like")
def sorted_like_(g, ans, t, a, axis=-1):
    return sort_grad(g, a, axis), 0.0


@vjp(take_along_axis_grad, name="take_along_axis_grad")
def take_along_axis_grad_(g, ans, g_, arr, indices, axis=-1):
    return np.take_along_axis(g, indices, axis), 0.0, 0.0


@vjp(pad_grad, name="pad_grad")
def pad_grad_(g, ans, g_, array, pad_width, mode="constant"):
    return np.pad(g, pad_width, mode), 0.0, 0.0


# diff_grad's transpose is np.diff of g with zeros for what was prepended and appended
# (diff_padded), whose transpose is diff_grad again
@vjp(diff_grad, name="diff_grad")
def diff_grad_(g, ans, g_, a, n=1, axis=-1, prepend=None, append=None):
    return diff_padded(g, n, axis, prepend, append), 0.0


@vjp(diff_padded, name="diff_padded")
def diff_padded_(g, ans, t, n=1, axis=-1, prepend=None, append=None):
    return diff_grad(g, t, n, axis, prepend, append)


@vjp(rollaxis_grad, name="rollaxis_grad")
def rollaxis_grad_(g, ans, g_, a, axis, start=0):
    return np.rollaxis(g, axis, start), 0.0, 0.0


# np.interp's gradient for fp is linear in g_ and smooth in x (the weights 1 - t and t);
# its transpose is np.interp of g (zero outside the range when left/right are given:
# interp_linear_part, whose rules are np.interp's),
# and its derivative in x is the slope of that interpolation. The gradient for x,
# g_ * slope(fp), is linear in g_ and in fp and piecewise constant in x: it is read
# through its source.
@vjp(interp_grad_fp, name="interp_grad_fp")
def interp_grad_fp_(g, ans, g_, x, xp, fp, left=None, right=None, period=None):
    return (interp_linear_part(x, xp, g, left, right, period),
            interp_grad_x(g_, x, xp, g, left, right, period), None, 0.0)


@vjp(interp_linear_part, name="interp_linear_part")
def interp_linear_part_(g, ans, x, xp, fp, left=None, right=None, period=None):
    return (interp_grad_x(g, x, xp, fp, left, right, period), None,
            interp_grad_fp(g, x, xp, fp, left, right, period))


# einsum_grad(g_, i, ...) is linear in g_ and in every operand but i (read for its shape):
# its transpose in g_ is the einsum with operand i replaced by g, and the gradient for
# operand k that of the einsum with operand i replaced by g (zero for k = i)
@vjp(einsum_grad, name="einsum_grad")
def einsum_grad_(g, ans, g_, i, subscripts, x0, x1=None, x2=None, x3=None, x4=None, x5=None,
                 x6=None, x7=None):
    return (einsum_with(i, g, subscripts, x0, x1, x2, x3, x4, x5, x6, x7), 0.0, 0.0,
            einsum_grad_with(g_, 0, i, g, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with(g_, 1, i, g, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with(g_, 2, i, g, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with(g_, 3, i, g, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with(g_, 4, i, g, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with(g_, 5, i, g, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with(g_, 6, i, g, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with(g_, 7, i, g, subscripts, x0, x1, x2, x3, x4, x5, x6, x7))


# --- helpers read through their source ------------------------------------------------------
#
# The gradient helpers of the matrix functions, decompositions and norms are not linear in
# most of their arguments (prod_grad's x: the products of all but two elements, exact
# with zeros through its cumulative products), and their derivatives would be long rules
# of their own. They are
# ordinary NumPy code, so the compiler differentiates them as it does a user function (each
# gets its own piece, in reverse and in forward mode): grad of grad, hessian and hvp go
# through them. tests/test_second_order_helpers.py checks each at second order.

through_source(prod_grad, cholesky_grad, cumprod_grad, diag_grad, diagonal_grad, eig_grad, eigh_grad,
               eigvals_grad, eigvalsh_grad, lstsq_grad_a, lstsq_grad_b, matrix_norm_grad,
               matrix_power_grad, multi_dot_grads, norm_grad, pinv_grad, qr_grad,
               slogdet_grad, solve_grad_a, solve_grad_b, svd_grad, svdvals_grad,
               trace_grad, vector_norm_grad, fold, fold_lower, fold_upper,
               split_like, join_pieces, divide_or_zero, cross_grad, interp_grad_x,
               unstack, hstack_grad, vstack_grad, dstack_grad, column_stack_grad,
               append_grad, delete_grad, trapezoid_grad, select_grad, select_grads,
               select_default_grad,
               polyval_grad_p, polyval_grad_x, average_grad_a, average_grad_weights, average_weights,
               kron_grad, vecdot_grad)


# --- tangent rules (forward mode) -----------------------------------------------------------
#
# Forward over reverse (hessian, hvp) reads generated gradient code, so these helpers need
# tangents too. Each is linear in `g_` (it applies the adjoint of a linear map to it), and
# the product gradients are also linear in the other factor: their tangents are the helper
# itself applied to the tangents (registry.linear, registry.multilinear); arguments read
# only for their shape (0.0 above) have no tangent.

linear(unbroadcast, unreduce, unbroadcast_each, unbroadcast_sum, as_float, mT, add_trees, transpose_grad,
       cast_grad, choose_grad, median_grad, cumsum_grad, take_grad, tile_grad,
       repeat_grad, add_at, index_part, reduce_like, copied, item_adjoint,
       scatter_item, tree_item, field, tree_with, picked, item_of, old_item, old_item_back,
       sequence_adjoint, sequence_parts, written_part, written_back, sort_grad,
       take_along_axis_grad, pad_grad, diff_grad, diff_padded, rollaxis_grad, sorted_like,
       fitted)
multilinear(matmul_grad_left, matmul_grad_right, dot_grad_left, dot_grad_right,
            inner_grad_a, inner_grad_b, tensordot_grad_a, tensordot_grad_b)


# np.interp's gradient for fp moves g_ by the weights 1 - t and t, which change with x
# (dt = dx / (xp[j + 1] - xp[j])): that part is the gradient for fp of x's gradient
@jvp(interp_grad_fp, name="interp_grad_fp")
def interp_grad_fp_tangent(g__dot, x_dot, ans, g_, x, xp, fp, left=None, right=None,
                           period=None):
    return (interp_grad_fp(g__dot, x, xp, fp, left, right, period),
            interp_slope_grad(g_ * x_dot, x, xp, fp))


@jvp(interp_linear_part, name="interp_linear_part")
def interp_linear_part_tangent(x_dot, fp_dot, ans, x, xp, fp, left=None, right=None,
                               period=None):
    return (interp_grad_x(x_dot, x, xp, fp, left, right, period),
            interp_linear_part(x, xp, fp_dot, left, right, period))


@jvp(einsum_grad, name="einsum_grad")
def einsum_grad_tangent(g__dot, x0_dot, x1_dot, x2_dot, x3_dot, x4_dot, x5_dot, x6_dot, x7_dot,
                        ans, g_, i, subscripts, x0, x1=None, x2=None, x3=None, x4=None,
                        x5=None, x6=None, x7=None):
    return (einsum_grad(g__dot, i, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with(g_, i, 0, x0_dot, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with(g_, i, 1, x1_dot, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with(g_, i, 2, x2_dot, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with(g_, i, 3, x3_dot, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with(g_, i, 4, x4_dot, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with(g_, i, 5, x5_dot, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with(g_, i, 6, x6_dot, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with(g_, i, 7, x7_dot, subscripts, x0, x1, x2, x3, x4, x5, x6, x7))


# (batched: the directions one more index of the einsum, runtime/batched_rules.py)
batchable(einsum_grad, helpers=[(einsum_grad, batch_einsum_grad),
                                (einsum_grad_with, batch_einsum_grad_with)])
