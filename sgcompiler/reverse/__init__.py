"""The reverse pass: a primal sweep that saves what the adjoint sweep needs, then the
adjoint sweep, built from the derivative rules.

    sweeps.py    the driver: both sweeps of a function, or a callee's forward/backward pair
    context.py   SweepState: every field the sweeps and their helpers share, declared
    state.py     what is known about each adjoint at compile time (zero, fresh, a copy)
    adjoints.py  what one active statement contributes to its inputs' adjoints
    inline.py    a rule's expression inlined into generated code, and simplified
    loops.py     loops: trip counts, the tape, the reversed body
    calls.py     calls of user functions: their forward and backward pieces
    tighten.py   loop bodies tightened before the sweeps (less to tape and copy)
"""
