"""Exact rewrites of the arithmetic: the same numbers, to the bit, with fewer operations or
temporaries. algebra.py (fill-numbers, fold-algebra, fold-constants, quiet-reciprocals),
seeds.py (fold-seeds), negations.py (fold-negations), factoring.py (factor-sums),
common.py (common-subexpressions, with aliasing.py: which arrays names may share),
signs.py (sink-negations).
"""
