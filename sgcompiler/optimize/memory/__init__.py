"""Steps that allocate less (code specialised for shapes): broadcasts.py (drop-broadcasts:
an adjoint is not broadcast where its reader broadcasts it), ties.py (split-ties: max's
and min's mask multiplied in as a comparison, its ties halved in place, not made as an
array of floats) and buffers.py (reuse-buffers: write into an array that dies rather than
allocate one).
"""
