"""Rules of the helpers np.einsum's second derivatives are written with (rules/runtime.py
gives them), for third order and beyond:

    einsum_with(i, t, ...)            = np.einsum with operand i replaced by t
    einsum_grad_with(g, i, k, t, ...) = einsum_grad(g, i, ...) with operand k replaced by t

Generated code does not call these where the positions are numbers (as the rules of np.einsum
and einsum_grad write them): reverse/inline.py puts the operand in its place,
np.einsum('ij,jk->ik', a, t) and einsum_grad(g, 0, 'ij,jk->ik', a, t), whose rules give the
same again. Where the positions are known only at run time (a helper called as a function
of its own), their rules are written with the general forms, which close at every order:

    einsum_replacing(subscripts, where, x0.., t0..)         operand where[j] replaced by t_j
    einsum_grad_replacing(g, m, subscripts, where, x0.., t0..)  its gradient for operand m
    unless_in(v, k, where)                                   v, or zeros when k is in where

Each einsum is linear in every operand it reads (a replaced operand is not read, nor is the
one the gradient is for, but for its shape), so its adjoint for an operand is the gradient
with the same replacements (zero, unless_in, where it is not read), the adjoint of a
gradient's g the einsum with operand m replaced by it, and a tangent the einsum with one
more replacement: put first in `where`, its value first in t0.. (the first entry for an
operand wins).
"""
from ..runtime.numpy.linalg import einsum_grad
from ..runtime.tangents import (einsum_grad_replacing, einsum_grad_with, einsum_replacing,
                                einsum_with, entry, unless_in)
from .registry import jvp, linear, nondifferentiable, vjp


@vjp(einsum_replacing, name="einsum_replacing")
def einsum_replacing_(g, ans, subscripts, where, x0, x1=None, x2=None, x3=None, x4=None, x5=None,
    x6=None, x7=None, t0=None, t1=None, t2=None, t3=None, t4=None, t5=None, t6=None, t7=None):
    return (0.0,
            0.0,
            unless_in(einsum_grad_replacing(g, 0, subscripts, where, x0, x1, x2, x3, x4, x5, x6,
                x7, t0, t1, t2, t3, t4, t5, t6, t7), 0, where),
            unless_in(einsum_grad_replacing(g, 1, subscripts, where, x0, x1, x2, x3, x4, x5, x6,
                x7, t0, t1, t2, t3, t4, t5, t6, t7), 1, where),
            unless_in(einsum_grad_replacing(g, 2, subscripts, where, x0, x1, x2, x3, x4, x5, x6,
                x7, t0, t1, t2, t3, t4, t5, t6, t7), 2, where),
            unless_in(einsum_grad_replacing(g, 3, subscripts, where, x0, x1, x2, x3, x4, x5, x6,
                x7, t0, t1, t2, t3, t4, t5, t6, t7), 3, where),
            unless_in(einsum_grad_replacing(g, 4, subscripts, where, x0, x1, x2, x3, x4, x5, x6,
                x7, t0, t1, t2, t3, t4, t5, t6, t7), 4, where),
            unless_in(einsum_grad_replacing(g, 5, subscripts, where, x0, x1, x2, x3, x4, x5, x6,
                x7, t0, t1, t2, t3, t4, t5, t6, t7), 5, where),
            unless_in(einsum_grad_replacing(g, 6, subscripts, where, x0, x1, x2, x3, x4, x5, x6,
                x7, t0, t1, t2, t3, t4, t5, t6, t7), 6, where),
            unless_in(einsum_grad_replacing(g, 7, subscripts, where, x0, x1, x2, x3, x4, x5, x6,
                x7, t0, t1, t2, t3, t4, t5, t6, t7), 7, where),
            einsum_grad_replacing(g, entry(where, 0), subscripts, where, x0, x1, x2, x3, x4, x5,
                x6, x7, t0, t1, t2, t3, t4, t5, t6, t7),
            unless_in(einsum_grad_replacing(g, entry(where, 1), subscripts, where, x0, x1, x2, x3,
                x4, x5, x6, x7, t0, t1, t2, t3, t4, t5, t6, t7), entry(where, 1), where[:1]),
            unless_in(einsum_grad_replacing(g, entry(where, 2), subscripts, where, x0, x1, x2, x3,
                x4, x5, x6, x7, t0, t1, t2, t3, t4, t5, t6, t7), entry(where, 2), where[:2]),
            unless_in(einsum_grad_replacing(g, entry(where, 3), subscripts, where, x0, x1, x2, x3,
                x4, x5, x6, x7, t0, t1, t2, t3, t4, t5, t6, t7), entry(where, 3), where[:3]),
            unless_in(einsum_grad_replacing(g, entry(where, 4), subscripts, where, x0, x1, x2, x3,
                x4, x5, x6, x7, t0, t1, t2, t3, t4, t5, t6, t7), entry(where, 4), where[:4]),
            unless_in(einsum_grad_replacing(g, entry(where, 5), subscripts, where, x0, x1, x2, x3,
                x4, x5, x6, x7, t0, t1, t2, t3, t4, t5, t6, t7), entry(where, 5), where[:5]),
            unless_in(einsum_grad_replacing(g, entry(where, 6), subscripts, where, x0, x1, x2, x3,
                x4, x5, x6, x7, t0, t1, t2, t3, t4, t5, t6, t7), entry(where, 6), where[:6]),
            unless_in(einsum_grad_replacing(g, entry(where, 7), subscripts, where, x0, x1, x2, x3,
                x4, x5, x6, x7, t0, t1, t2, t3, t4, t5, t6, t7), entry(where, 7), where[:7]))


@jvp(einsum_replacing, name="einsum_replacing")
def einsum_replacing_tangent(x0_dot, x1_dot, x2_dot, x3_dot, x4_dot, x5_dot, x6_dot, x7_dot,
    t0_dot, t1_dot, t2_dot, t3_dot, t4_dot, t5_dot, t6_dot, t7_dot, ans, subscripts, where, x0,
    x1=None, x2=None, x3=None, x4=None, x5=None, x6=None, x7=None, t0=None, t1=None, t2=None,
    t3=None, t4=None, t5=None, t6=None, t7=None):
    return (unless_in(einsum_replacing(subscripts, (0,) + where, x0, x1, x2, x3, x4, x5, x6, x7,
        x0_dot, t0, t1, t2, t3, t4, t5, t6), 0, where),
            unless_in(einsum_replacing(subscripts, (1,) + where, x0, x1, x2, x3, x4, x5, x6, x7,
                x1_dot, t0, t1, t2, t3, t4, t5, t6), 1, where),
            unless_in(einsum_replacing(subscripts, (2,) + where, x0, x1, x2, x3, x4, x5, x6, x7,
                x2_dot, t0, t1, t2, t3, t4, t5, t6), 2, where),
            unless_in(einsum_replacing(subscripts, (3,) + where, x0, x1, x2, x3, x4, x5, x6, x7,
                x3_dot, t0, t1, t2, t3, t4, t5, t6), 3, where),
            unless_in(einsum_replacing(subscripts, (4,) + where, x0, x1, x2, x3, x4, x5, x6, x7,
                x4_dot, t0, t1, t2, t3, t4, t5, t6), 4, where),
            unless_in(einsum_replacing(subscripts, (5,) + where, x0, x1, x2, x3, x4, x5, x6, x7,
                x5_dot, t0, t1, t2, t3, t4, t5, t6), 5, where),
            unless_in(einsum_replacing(subscripts, (6,) + where, x0, x1, x2, x3, x4, x5, x6, x7,
                x6_dot, t0, t1, t2, t3, t4, t5, t6), 6, where),
            unless_in(einsum_replacing(subscripts, (7,) + where, x0, x1, x2, x3, x4, x5, x6, x7,
                x7_dot, t0, t1, t2, t3, t4, t5, t6), 7, where),
            einsum_replacing(subscripts, where, x0, x1, x2, x3, x4, x5, x6, x7, t0_dot, t1, t2, t3,
                t4, t5, t6, t7),
            unless_in(einsum_replacing(subscripts, where, x0, x1, x2, x3, x4, x5, x6, x7, t0,
                t1_dot, t2, t3, t4, t5, t6, t7), entry(where, 1), where[:1]),
            unless_in(einsum_replacing(subscripts, where, x0, x1, x2, x3, x4, x5, x6, x7, t0, t1,
                t2_dot, t3, t4, t5, t6, t7), entry(where, 2), where[:2]),
            unless_in(einsum_replacing(subscripts, where, x0, x1, x2, x3, x4, x5, x6, x7, t0, t1,
                t2, t3_dot, t4, t5, t6, t7), entry(where, 3), where[:3]),
            unless_in(einsum_replacing(subscripts, where, x0, x1, x2, x3, x4, x5, x6, x7, t0, t1,
                t2, t3, t4_dot, t5, t6, t7), entry(where, 4), where[:4]),
            unless_in(einsum_replacing(subscripts, where, x0, x1, x2, x3, x4, x5, x6, x7, t0, t1,
                t2, t3, t4, t5_dot, t6, t7), entry(where, 5), where[:5]),
            unless_in(einsum_replacing(subscripts, where, x0, x1, x2, x3, x4, x5, x6, x7, t0, t1,
                t2, t3, t4, t5, t6_dot, t7), entry(where, 6), where[:6]),
            unless_in(einsum_replacing(subscripts, where, x0, x1, x2, x3, x4, x5, x6, x7, t0, t1,
                t2, t3, t4, t5, t6, t7_dot), entry(where, 7), where[:7]))


@vjp(einsum_grad_replacing, name="einsum_grad_replacing")
def einsum_grad_replacing_(g, ans, g_, m, subscripts, where, x0, x1=None, x2=None, x3=None,
    x4=None, x5=None, x6=None, x7=None, t0=None, t1=None, t2=None, t3=None, t4=None, t5=None,
    t6=None, t7=None):
    return (einsum_replacing(subscripts, (m,) + where, x0, x1, x2, x3, x4, x5, x6, x7, g, t0, t1,
        t2, t3, t4, t5, t6),
            0.0,
            0.0,
            0.0,
            unless_in(einsum_grad_replacing(g_, 0, subscripts, (m,) + where, x0, x1, x2, x3, x4,
                x5, x6, x7, g, t0, t1, t2, t3, t4, t5, t6), 0, (m,) + where),
            unless_in(einsum_grad_replacing(g_, 1, subscripts, (m,) + where, x0, x1, x2, x3, x4,
                x5, x6, x7, g, t0, t1, t2, t3, t4, t5, t6), 1, (m,) + where),
            unless_in(einsum_grad_replacing(g_, 2, subscripts, (m,) + where, x0, x1, x2, x3, x4,
                x5, x6, x7, g, t0, t1, t2, t3, t4, t5, t6), 2, (m,) + where),
            unless_in(einsum_grad_replacing(g_, 3, subscripts, (m,) + where, x0, x1, x2, x3, x4,
                x5, x6, x7, g, t0, t1, t2, t3, t4, t5, t6), 3, (m,) + where),
            unless_in(einsum_grad_replacing(g_, 4, subscripts, (m,) + where, x0, x1, x2, x3, x4,
                x5, x6, x7, g, t0, t1, t2, t3, t4, t5, t6), 4, (m,) + where),
            unless_in(einsum_grad_replacing(g_, 5, subscripts, (m,) + where, x0, x1, x2, x3, x4,
                x5, x6, x7, g, t0, t1, t2, t3, t4, t5, t6), 5, (m,) + where),
            unless_in(einsum_grad_replacing(g_, 6, subscripts, (m,) + where, x0, x1, x2, x3, x4,
                x5, x6, x7, g, t0, t1, t2, t3, t4, t5, t6), 6, (m,) + where),
            unless_in(einsum_grad_replacing(g_, 7, subscripts, (m,) + where, x0, x1, x2, x3, x4,
                x5, x6, x7, g, t0, t1, t2, t3, t4, t5, t6), 7, (m,) + where),
            unless_in(einsum_grad_replacing(g_, entry(where, 0), subscripts, (m,) + where, x0, x1,
                x2, x3, x4, x5, x6, x7, g, t0, t1, t2, t3, t4, t5, t6), entry(where, 0),
                (m,) + where[:0]),
            unless_in(einsum_grad_replacing(g_, entry(where, 1), subscripts, (m,) + where, x0, x1,
                x2, x3, x4, x5, x6, x7, g, t0, t1, t2, t3, t4, t5, t6), entry(where, 1),
                (m,) + where[:1]),
            unless_in(einsum_grad_replacing(g_, entry(where, 2), subscripts, (m,) + where, x0, x1,
                x2, x3, x4, x5, x6, x7, g, t0, t1, t2, t3, t4, t5, t6), entry(where, 2),
                (m,) + where[:2]),
            unless_in(einsum_grad_replacing(g_, entry(where, 3), subscripts, (m,) + where, x0, x1,
                x2, x3, x4, x5, x6, x7, g, t0, t1, t2, t3, t4, t5, t6), entry(where, 3),
                (m,) + where[:3]),
            unless_in(einsum_grad_replacing(g_, entry(where, 4), subscripts, (m,) + where, x0, x1,
                x2, x3, x4, x5, x6, x7, g, t0, t1, t2, t3, t4, t5, t6), entry(where, 4),
                (m,) + where[:4]),
            unless_in(einsum_grad_replacing(g_, entry(where, 5), subscripts, (m,) + where, x0, x1,
                x2, x3, x4, x5, x6, x7, g, t0, t1, t2, t3, t4, t5, t6), entry(where, 5),
                (m,) + where[:5]),
            unless_in(einsum_grad_replacing(g_, entry(where, 6), subscripts, (m,) + where, x0, x1,
                x2, x3, x4, x5, x6, x7, g, t0, t1, t2, t3, t4, t5, t6), entry(where, 6),
                (m,) + where[:6]),
            unless_in(einsum_grad_replacing(g_, entry(where, 7), subscripts, (m,) + where, x0, x1,
                x2, x3, x4, x5, x6, x7, g, t0, t1, t2, t3, t4, t5, t6), entry(where, 7),
                (m,) + where[:7]))


@jvp(einsum_grad_replacing, name="einsum_grad_replacing")
def einsum_grad_replacing_tangent(g__dot, x0_dot, x1_dot, x2_dot, x3_dot, x4_dot, x5_dot, x6_dot,
    x7_dot, t0_dot, t1_dot, t2_dot, t3_dot, t4_dot, t5_dot, t6_dot, t7_dot, ans, g_, m, subscripts,
    where, x0, x1=None, x2=None, x3=None, x4=None, x5=None, x6=None, x7=None, t0=None, t1=None,
    t2=None, t3=None, t4=None, t5=None, t6=None, t7=None):
    return (einsum_grad_replacing(g__dot, m, subscripts, where, x0, x1, x2, x3, x4, x5, x6, x7, t0,
        t1, t2, t3, t4, t5, t6, t7),
            unless_in(einsum_grad_replacing(g_, m, subscripts, (0,) + where, x0, x1, x2, x3, x4,
                x5, x6, x7, x0_dot, t0, t1, t2, t3, t4, t5, t6), 0, (m,) + where),
            unless_in(einsum_grad_replacing(g_, m, subscripts, (1,) + where, x0, x1, x2, x3, x4,
                x5, x6, x7, x1_dot, t0, t1, t2, t3, t4, t5, t6), 1, (m,) + where),
            unless_in(einsum_grad_replacing(g_, m, subscripts, (2,) + where, x0, x1, x2, x3, x4,
                x5, x6, x7, x2_dot, t0, t1, t2, t3, t4, t5, t6), 2, (m,) + where),
            unless_in(einsum_grad_replacing(g_, m, subscripts, (3,) + where, x0, x1, x2, x3, x4,
                x5, x6, x7, x3_dot, t0, t1, t2, t3, t4, t5, t6), 3, (m,) + where),
            unless_in(einsum_grad_replacing(g_, m, subscripts, (4,) + where, x0, x1, x2, x3, x4,
                x5, x6, x7, x4_dot, t0, t1, t2, t3, t4, t5, t6), 4, (m,) + where),
            unless_in(einsum_grad_replacing(g_, m, subscripts, (5,) + where, x0, x1, x2, x3, x4,
                x5, x6, x7, x5_dot, t0, t1, t2, t3, t4, t5, t6), 5, (m,) + where),
            unless_in(einsum_grad_replacing(g_, m, subscripts, (6,) + where, x0, x1, x2, x3, x4,
                x5, x6, x7, x6_dot, t0, t1, t2, t3, t4, t5, t6), 6, (m,) + where),
            unless_in(einsum_grad_replacing(g_, m, subscripts, (7,) + where, x0, x1, x2, x3, x4,
                x5, x6, x7, x7_dot, t0, t1, t2, t3, t4, t5, t6), 7, (m,) + where),
            unless_in(einsum_grad_replacing(g_, m, subscripts, where, x0, x1, x2, x3, x4, x5, x6,
                x7, t0_dot, t1, t2, t3, t4, t5, t6, t7), entry(where, 0), (m,) + where[:0]),
            unless_in(einsum_grad_replacing(g_, m, subscripts, where, x0, x1, x2, x3, x4, x5, x6,
                x7, t0, t1_dot, t2, t3, t4, t5, t6, t7), entry(where, 1), (m,) + where[:1]),
            unless_in(einsum_grad_replacing(g_, m, subscripts, where, x0, x1, x2, x3, x4, x5, x6,
                x7, t0, t1, t2_dot, t3, t4, t5, t6, t7), entry(where, 2), (m,) + where[:2]),
            unless_in(einsum_grad_replacing(g_, m, subscripts, where, x0, x1, x2, x3, x4, x5, x6,
                x7, t0, t1, t2, t3_dot, t4, t5, t6, t7), entry(where, 3), (m,) + where[:3]),
            unless_in(einsum_grad_replacing(g_, m, subscripts, where, x0, x1, x2, x3, x4, x5, x6,
                x7, t0, t1, t2, t3, t4_dot, t5, t6, t7), entry(where, 4), (m,) + where[:4]),
            unless_in(einsum_grad_replacing(g_, m, subscripts, where, x0, x1, x2, x3, x4, x5, x6,
                x7, t0, t1, t2, t3, t4, t5_dot, t6, t7), entry(where, 5), (m,) + where[:5]),
            unless_in(einsum_grad_replacing(g_, m, subscripts, where, x0, x1, x2, x3, x4, x5, x6,
                x7, t0, t1, t2, t3, t4, t5, t6_dot, t7), entry(where, 6), (m,) + where[:6]),
            unless_in(einsum_grad_replacing(g_, m, subscripts, where, x0, x1, x2, x3, x4, x5, x6,
                x7, t0, t1, t2, t3, t4, t5, t6, t7_dot), entry(where, 7), (m,) + where[:7]))


@vjp(einsum_with, name="einsum_with")
def einsum_with_(g, ans, i, t, subscripts, x0, x1=None, x2=None, x3=None, x4=None, x5=None,
    x6=None, x7=None):
    return (0.0,
            einsum_grad(g, i, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            0.0,
            unless_in(einsum_grad_replacing(g, 0, subscripts, (i,), x0, x1, x2, x3, x4, x5, x6, x7,
                t), 0, (i,)),
            unless_in(einsum_grad_replacing(g, 1, subscripts, (i,), x0, x1, x2, x3, x4, x5, x6, x7,
                t), 1, (i,)),
            unless_in(einsum_grad_replacing(g, 2, subscripts, (i,), x0, x1, x2, x3, x4, x5, x6, x7,
                t), 2, (i,)),
            unless_in(einsum_grad_replacing(g, 3, subscripts, (i,), x0, x1, x2, x3, x4, x5, x6, x7,
                t), 3, (i,)),
            unless_in(einsum_grad_replacing(g, 4, subscripts, (i,), x0, x1, x2, x3, x4, x5, x6, x7,
                t), 4, (i,)),
            unless_in(einsum_grad_replacing(g, 5, subscripts, (i,), x0, x1, x2, x3, x4, x5, x6, x7,
                t), 5, (i,)),
            unless_in(einsum_grad_replacing(g, 6, subscripts, (i,), x0, x1, x2, x3, x4, x5, x6, x7,
                t), 6, (i,)),
            unless_in(einsum_grad_replacing(g, 7, subscripts, (i,), x0, x1, x2, x3, x4, x5, x6, x7,
                t), 7, (i,)))


@jvp(einsum_with, name="einsum_with")
def einsum_with_tangent(t_dot, x0_dot, x1_dot, x2_dot, x3_dot, x4_dot, x5_dot, x6_dot, x7_dot, ans,
    i, t, subscripts, x0, x1=None, x2=None, x3=None, x4=None, x5=None, x6=None, x7=None):
    return (einsum_with(i, t_dot, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            unless_in(einsum_replacing(subscripts, (0, i), x0, x1, x2, x3, x4, x5, x6, x7, x0_dot,
                t), 0, (i,)),
            unless_in(einsum_replacing(subscripts, (1, i), x0, x1, x2, x3, x4, x5, x6, x7, x1_dot,
                t), 1, (i,)),
            unless_in(einsum_replacing(subscripts, (2, i), x0, x1, x2, x3, x4, x5, x6, x7, x2_dot,
                t), 2, (i,)),
            unless_in(einsum_replacing(subscripts, (3, i), x0, x1, x2, x3, x4, x5, x6, x7, x3_dot,
                t), 3, (i,)),
            unless_in(einsum_replacing(subscripts, (4, i), x0, x1, x2, x3, x4, x5, x6, x7, x4_dot,
                t), 4, (i,)),
            unless_in(einsum_replacing(subscripts, (5, i), x0, x1, x2, x3, x4, x5, x6, x7, x5_dot,
                t), 5, (i,)),
            unless_in(einsum_replacing(subscripts, (6, i), x0, x1, x2, x3, x4, x5, x6, x7, x6_dot,
                t), 6, (i,)),
            unless_in(einsum_replacing(subscripts, (7, i), x0, x1, x2, x3, x4, x5, x6, x7, x7_dot,
                t), 7, (i,)))


@vjp(einsum_grad_with, name="einsum_grad_with")
def einsum_grad_with_(g, ans, g_, i, k, t, subscripts, x0, x1=None, x2=None, x3=None, x4=None,
    x5=None, x6=None, x7=None):
    return (unless_in(einsum_replacing(subscripts, (i, k), x0, x1, x2, x3, x4, x5, x6, x7, g, t),
        k, (i,)),
            0.0,
            0.0,
            unless_in(einsum_grad_replacing(g_, k, subscripts, (i,), x0, x1, x2, x3, x4, x5, x6,
                x7, g), k, (i,)),
            0.0,
            unless_in(unless_in(einsum_grad_replacing(g_, 0, subscripts, (i, k), x0, x1, x2, x3,
                x4, x5, x6, x7, g, t), 0, (i, k)), k, (i,)),
            unless_in(unless_in(einsum_grad_replacing(g_, 1, subscripts, (i, k), x0, x1, x2, x3,
                x4, x5, x6, x7, g, t), 1, (i, k)), k, (i,)),
            unless_in(unless_in(einsum_grad_replacing(g_, 2, subscripts, (i, k), x0, x1, x2, x3,
                x4, x5, x6, x7, g, t), 2, (i, k)), k, (i,)),
            unless_in(unless_in(einsum_grad_replacing(g_, 3, subscripts, (i, k), x0, x1, x2, x3,
                x4, x5, x6, x7, g, t), 3, (i, k)), k, (i,)),
            unless_in(unless_in(einsum_grad_replacing(g_, 4, subscripts, (i, k), x0, x1, x2, x3,
                x4, x5, x6, x7, g, t), 4, (i, k)), k, (i,)),
            unless_in(unless_in(einsum_grad_replacing(g_, 5, subscripts, (i, k), x0, x1, x2, x3,
                x4, x5, x6, x7, g, t), 5, (i, k)), k, (i,)),
            unless_in(unless_in(einsum_grad_replacing(g_, 6, subscripts, (i, k), x0, x1, x2, x3,
                x4, x5, x6, x7, g, t), 6, (i, k)), k, (i,)),
            unless_in(unless_in(einsum_grad_replacing(g_, 7, subscripts, (i, k), x0, x1, x2, x3,
                x4, x5, x6, x7, g, t), 7, (i, k)), k, (i,)))


@jvp(einsum_grad_with, name="einsum_grad_with")
def einsum_grad_with_tangent(g__dot, t_dot, x0_dot, x1_dot, x2_dot, x3_dot, x4_dot, x5_dot, x6_dot,
    x7_dot, ans, g_, i, k, t, subscripts, x0, x1=None, x2=None, x3=None, x4=None, x5=None, x6=None,
    x7=None):
    return (einsum_grad_with(g__dot, i, k, t, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            einsum_grad_with(g_, i, k, t_dot, subscripts, x0, x1, x2, x3, x4, x5, x6, x7),
            unless_in(unless_in(einsum_grad_replacing(g_, i, subscripts, (0, k), x0, x1, x2, x3,
                x4, x5, x6, x7, x0_dot, t), 0, (i, k)), k, (i,)),
            unless_in(unless_in(einsum_grad_replacing(g_, i, subscripts, (1, k), x0, x1, x2, x3,
                x4, x5, x6, x7, x1_dot, t), 1, (i, k)), k, (i,)),
            unless_in(unless_in(einsum_grad_replacing(g_, i, subscripts, (2, k), x0, x1, x2, x3,
                x4, x5, x6, x7, x2_dot, t), 2, (i, k)), k, (i,)),
            unless_in(unless_in(einsum_grad_replacing(g_, i, subscripts, (3, k), x0, x1, x2, x3,
                x4, x5, x6, x7, x3_dot, t), 3, (i, k)), k, (i,)),
            unless_in(unless_in(einsum_grad_replacing(g_, i, subscripts, (4, k), x0, x1, x2, x3,
                x4, x5, x6, x7, x4_dot, t), 4, (i, k)), k, (i,)),
            unless_in(unless_in(einsum_grad_replacing(g_, i, subscripts, (5, k), x0, x1, x2, x3,
                x4, x5, x6, x7, x5_dot, t), 5, (i, k)), k, (i,)),
            unless_in(unless_in(einsum_grad_replacing(g_, i, subscripts, (6, k), x0, x1, x2, x3,
                x4, x5, x6, x7, x6_dot, t), 6, (i, k)), k, (i,)),
            unless_in(unless_in(einsum_grad_replacing(g_, i, subscripts, (7, k), x0, x1, x2, x3,
                x4, x5, x6, x7, x7_dot, t), 7, (i, k)), k, (i,)))


@vjp(unless_in, name="unless_in")
def unless_in_(g, ans, v, k, where):
    return unless_in(g, k, where), 0.0, 0.0


linear(unless_in)
nondifferentiable(entry)
