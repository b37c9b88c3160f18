"""Steps that allocate less (code specialised for shapes): broadcasts.py (drop-broadcasts:
an adjoint is not broadcast where its reader broadcasts it) and buffers.py (reuse-buffers:
write into an array that dies rather than allocate one).
"""
