"""Rules of the helpers that second-order code calls (rules/runtime.py gives them), for
third order: grad(grad(grad(f))) and the hessian of a gradient read the second-order code
again. np.einsum's second derivatives are einsums with one operand replaced
(einsum_with, einsum_grad_with); theirs are einsums with two replaced:

    einsum_with(i, t, ...)          = einsum with operand i replaced by t
    einsum_grad_with(g, i, k, t, ...) = einsum_grad(g, i, ...) with operand k replaced by t

Each is linear in every operand it reads (an operand it replaces is not read; the one it
takes the gradient for is read for its shape), so its adjoint for an operand is the
gradient of the same einsum with one more operand replaced, and its tangent the einsum
with that operand's tangent put in.

Generated code does not call these helpers where the positions are numbers (as the rules
of np.einsum and einsum_grad write them): reverse/inline.py puts the operand in its place,
np.einsum('ij,jk->ik', a, t) and einsum_grad(g, 0, 'ij,jk->ik', a, t), whose rules give the
same again, so every order closes. The rules here are for a call with positions known only
at run time (the helper called as a function of its own), one order further.
"""
from ..runtime.numpy.linalg import einsum_grad
from ..runtime.tangents import (einsum_grad_with, einsum_grad_with_both, einsum_with,
                                einsum_with_both)
from .registry import jvp, vjp


@vjp(einsum_with, name="einsum_with")
def einsum_with_(g, ans, i, t, subscripts, x0, x1=None, x2=None, x3=None, x4=None, x5=None,
                 x6=None, x7=None):
    return (0.0, einsum_grad(g, i, subscripts, x0, x1, x2, x3, x4, x5, x6, x7), 0.0,
            einsum_grad_with(g, 0, i, t, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with(g, 1, i, t, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with(g, 2, i, t, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with(g, 3, i, t, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with(g, 4, i, t, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with(g, 5, i, t, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with(g, 6, i, t, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with(g, 7, i, t, subscripts, x0, x1, x2, x3, x4, x5, x6, x7))


@jvp(einsum_with, name="einsum_with")
def einsum_with_tangent(t_dot, x0_dot, x1_dot, x2_dot, x3_dot, x4_dot, x5_dot, x6_dot, x7_dot,
                        ans, i, t, subscripts, x0, x1=None, x2=None, x3=None, x4=None,
                        x5=None, x6=None, x7=None):
    return (einsum_with(i, t_dot, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_with_both(i, t, 0, x0_dot, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_with_both(i, t, 1, x1_dot, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_with_both(i, t, 2, x2_dot, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_with_both(i, t, 3, x3_dot, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_with_both(i, t, 4, x4_dot, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_with_both(i, t, 5, x5_dot, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_with_both(i, t, 6, x6_dot, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_with_both(i, t, 7, x7_dot, subscripts, x0, x1, x2, x3, x4, x5, x6, x7))


# einsum_grad_with(g_, i, k, t, ...): <G, it> = the einsum with operand i replaced by G and
# k by t, contracted with g_; so g_ gets that einsum, t the gradient for k (operand i
# replaced by G), and operand m the gradient for m with both replaced
@vjp(einsum_grad_with, name="einsum_grad_with")
def einsum_grad_with_(g, ans, g_, i, k, t, subscripts, x0, x1=None, x2=None, x3=None,
                      x4=None, x5=None, x6=None, x7=None):
    return (einsum_with_both(i, g, k, t, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            0.0, 0.0,
            einsum_grad_with(g_, k, i, g, subscripts, x0, x1, x2, x3, x4, x5, x6, x7), 0.0,
            einsum_grad_with_both(g_, 0, i, g, k, t, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with_both(g_, 1, i, g, k, t, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with_both(g_, 2, i, g, k, t, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with_both(g_, 3, i, g, k, t, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with_both(g_, 4, i, g, k, t, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with_both(g_, 5, i, g, k, t, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with_both(g_, 6, i, g, k, t, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with_both(g_, 7, i, g, k, t, subscripts, x0, x1, x2, x3, x4, x5, x6, x7))


@jvp(einsum_grad_with, name="einsum_grad_with")
def einsum_grad_with_tangent(g__dot, t_dot, x0_dot, x1_dot, x2_dot, x3_dot, x4_dot, x5_dot,
                             x6_dot, x7_dot, ans, g_, i, k, t, subscripts, x0, x1=None,
                             x2=None, x3=None, x4=None, x5=None, x6=None, x7=None):
    return (einsum_grad_with(g__dot, i, k, t, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with(g_, i, k, t_dot, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with_both(g_, i, k, t, 0, x0_dot, subscripts, x0, x1, x2, x3, x4, x5,
                                  x6, x7),
            einsum_grad_with_both(g_, i, k, t, 1, x1_dot, subscripts, x0, x1, x2, x3, x4, x5,
                                  x6, x7),
            einsum_grad_with_both(g_, i, k, t, 2, x2_dot, subscripts, x0, x1, x2, x3, x4, x5,
                                  x6, x7),
            einsum_grad_with_both(g_, i, k, t, 3, x3_dot, subscripts, x0, x1, x2, x3, x4, x5,
                                  x6, x7),
            einsum_grad_with_both(g_, i, k, t, 4, x4_dot, subscripts, x0, x1, x2, x3, x4, x5,
                                  x6, x7),
            einsum_grad_with_both(g_, i, k, t, 5, x5_dot, subscripts, x0, x1, x2, x3, x4, x5,
                                  x6, x7),
            einsum_grad_with_both(g_, i, k, t, 6, x6_dot, subscripts, x0, x1, x2, x3, x4, x5,
                                  x6, x7),
            einsum_grad_with_both(g_, i, k, t, 7, x7_dot, subscripts, x0, x1, x2, x3, x4, x5,
                                  x6, x7))
