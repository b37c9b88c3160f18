"""The helpers that generated gradient code calls, mirroring rules/ file for file.

    core.py        unbroadcast, unreduce, trees, dtypes: what every rule family shares
    numpy/         rules/numpy/: reductions, shapes, linalg, decompositions, signal, fft
    complex_numbers.py  rules/complex_numbers.py: complex values (real_like, real_only)
    scipy/         rules/scipy/ (imported by them only, so SciPy stays optional)
    tangents.py    what forward-mode (tangent) code calls
    iteration.py   by_position: a loop over a parameter refuses a dict or a set
    sequences.py   the adjoints of + and * of lists and tuples (joined, repeated)
    batched.py     what batched tangent code calls (all basis directions at once)

Generated code names a helper by its own name (`unbroadcast(g, x)`); the optimize pass
treats every function of this package alike (`is_helper`).
"""
from __future__ import annotations

from .checkpoint import checkpoint, checkpoint_every  # noqa: F401
from .core import (SHAPE_ARGUMENT, TREE_HELPERS, add_at, add_trees, as_float, balanced_eq,
                   bessel_i1, copied, field, fitted, float_dtype, index_part, item_adjoint,
                   item_of, length, max_of, min_of, mT, not_a_view, old_item,
                   old_item_back, picked, reduce_like,
                   reduced_axes, reduced_size, rows_sum, scalar_result, scatter_item,
                   sequence_adjoint,
                   sequence_parts, stop_gradient, too_few_values, tree_item, tree_with,
                   unbroadcast,
                   unbroadcast_each, unbroadcast_sum, unreduce, written_back, written_part,
                   zeros_tree)  # noqa: F401
from .numpy.reductions import (average_grad_a, average_grad_weights, average_weights, axes_last,
                         choose_grad, cumprod_grad, cumsum_grad, divide_or_zero, median_grad,
                         nan_count, prod_grad)  # noqa: F401
from .numpy.shapes import (append_grad, astype, cast_grad, column_stack_grad, delete_grad,
                     diff_grad, dstack_grad, hsplit_axis, hstack_grad, interp_grad_fp,
                     interp_grad_x, interp_linear_part, interp_slope_grad, join_pieces, linspace_fractions,
                     pad_grad, partition_grad,
                     partition_tangent_of, polyval_grad_p, polyval_grad_x, repeat_grad,
                     real_dtype, rollaxis_grad, select_default_grad, select_grad, select_grads,
                     sort_grad, sorted_like, split_like, take_along_axis_grad, take_grad, tile_grad,
                     transpose_grad, trapezoid_grad, unstack, vstack_grad)  # noqa: F401
from .batched_rules import batch_checked, batch_mean, batch_sum  # noqa: F401
from .batched import (batch_added, batch_array, batch_first, batch_item, batch_last, batch_set_item, batch_lifted, batch_map,
                      batch_matmul_grad_left, batch_matmul_grad_left_y, batch_matmul_grad_right,
                      batch_matmul_grad_right_x, batch_matmul_left,
                      batch_matmul_right, batch_transposed, batch_unbroadcast,
                      batch_unreduce, batch_zeros, broadcast_batch, last_index)  # noqa: F401
from .tangents import (added_tangent, broadcast_like, cast_tangent, choose_tangent,
                       zeros_tangent)  # noqa: F401
from .numpy.linalg import (cholesky_grad, cross_grad, diag_grad, diagonal_grad, dot_grad_left,
                     dot_grad_right, eigh_grad, eigvalsh_grad, einsum_grad, fold, fold_lower,
                     fold_upper, inner_grad_a, inner_grad_b, kron_grad, matmul_grad_left,
                     matmul_grad_right, matrix_norm_grad, matrix_power_grad, multi_dot_grads,
                     norm_grad, pinv_grad, slogdet_grad, solve_grad_a, solve_grad_b,
                     svdvals_grad, tensordot_axes, tensordot_grad_a, tensordot_grad_b,
                     trace_grad, vecdot_grad, vector_norm_grad)  # noqa: F401
from .numpy.decompositions import (eig_grad, eig_tangent_of, eigvals_grad, eigvals_tangent_of,
                             lstsq_grad_a, lstsq_grad_b, lstsq_tangent_of, qr_grad,
                             qr_tangent_of, svd_grad, svd_tangent_of)  # noqa: F401
from .complex_numbers import (abs_squared, angle_scale, complex_cast_grad, complex_eig_grad,
                              complex_eig_tangent_of, complex_eigvals_grad,
                              complex_eigvals_tangent_of, complex_sign,
                              complex_sign_grad, complex_sign_reciprocal,
                              complex_sign_reciprocal_slope, complex_sign_tangent, real_like,
                              real_only)  # noqa: F401
from .complex_decompositions import (complex_cholesky_grad, complex_cholesky_tangent_of,  # noqa: F401
                                     complex_eigh_grad, complex_eigh_tangent_of,
                                     complex_eigvalsh_grad, complex_qr_grad,
                                     complex_qr_tangent_of, complex_svd_grad,
                                     complex_svd_tangent_of)
from .iteration import by_position  # noqa: F401
from .sequences import (SEQUENCE_HELPERS, joined_part, joined_whole, repeated_count,  # noqa: F401
                        repeated_count_tangent, repeated_part, repeated_whole)
from .numpy.fft import (fft_again, fft_grad, fftn_again, fftn_grad, hfft_grad, ihfft_grad, irfft_grad,  # noqa: F401
                  irfftn_grad, rfft_grad, rfftn_grad)
from .numpy.signal import (convolve_grad_a, convolve_grad_v, correlate_grad_a, correlate_grad_v,
                     gradient_grad)  # noqa: F401


TREE_HELPERS = TREE_HELPERS + SEQUENCE_HELPERS


def is_helper(obj) -> bool:
    """Whether `obj` is one of these helpers (of any module of this package)."""
    return str(getattr(obj, "__module__", "")).startswith(__name__)
