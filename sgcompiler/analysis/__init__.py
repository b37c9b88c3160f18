"""Analyses of the normal form: plain results, no rewriting.

    ops.py       what one right-hand side computes (a rule call, a copy, an index...)
    memory.py    which names keep one value, which reads may see a later in-place write
    activity.py  which values are active: varied by a wrt argument and useful for the result
    shapes.py    shape classes (which names provably share a shape) and scalars
    sizes.py     concrete shapes and dtypes, when the code is specialised for its arguments
"""
