"""The helpers of the SciPy rules (rules/scipy/), file for file: imported only by those
rules, so only where SciPy is installed."""
