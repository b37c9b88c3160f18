"""Optimisations of the generated function: fewer names, lines and allocations, the same
arithmetic. Each module holds one step or a few (one public function each); the recipe
runs them in the order of pipeline.OPTIMIZATIONS. The subpackages, lowest first (a
package imports only from those above it in this list):

    tidy/       cleanup.py: coalesce-copies, propagate-copies, tidy, drop-dead,
                while-condition, drop-lonely-comments, free-after-last-use;
                block_index.py: where each name is bound and read in a block
    known/      what every step is told: specialisation.py (`Specialisation`),
                code_shapes.py (shapes and dtypes of the generated code's values)
    algebraic/  exact rewrites of the arithmetic: algebra.py (fill-numbers, fold-algebra,
                fold-constants, quiet-reciprocals), seeds.py, negations.py, factoring.py,
                common.py (with aliasing.py), signs.py
    loops/      nest.py, hoisting.py and stacking.py (tangent code), batching.py
    memory/     allocate less (shapes known): broadcasts.py, buffers.py

Code made to be read again is rewritten after the optimizations by backend/reread.py.
"""
