"""Optimisations of the generated function: fewer names, lines and allocations, the same
arithmetic. Each module is one optimisation; cleanup.py runs them in order.

    cleanup.py    the driver, and copy propagation, dead code, frees after last use
    nest.py       a number computed for one use goes back into that use (scalar loops)
    batching.py   outer products summed over a loop become one matrix product
    stacking.py   a loop's W @ h and its tangent's W_dot @ h: one product (tangent code)
    buffers.py    write into an array that dies rather than allocate (shapes known)
    algebra.py    exact rewrites that let an array be computed in place
    factoring.py  factors constant along summed axes move out of the sum
    block_index.py  where each name is bound and read in a block (for propagate-copies)
"""
