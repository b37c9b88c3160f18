"""The forward (tangent) pass: each statement of the normal form, then the tangent of its
result, built from the tangent rules (`@jvp` in rules/, or derived by rules/derive.py).

    tangents.py  the pass: f_jvp(x, w, x_dot, w_dot) -> (out, out_dot), loops and calls too
    rules.py     a tangent rule inlined into generated code
    batch.py     tangents with a leading axis of directions (hessian, jacobian(mode="fwd"))

pipeline.forward_mode.compile_jvp is its recipe; a tangent that is zero at compile time emits nothing.
"""
