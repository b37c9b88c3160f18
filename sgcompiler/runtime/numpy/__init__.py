"""The helpers of the NumPy rules (rules/numpy/), file for file; runtime/__init__.py
re-exports them."""
