"""Benchmarks of sgcompiler against hand-written gradients and other AD systems; see run.py."""
