"""The statistics, pure and standard-library only: intervals, quantiles, pass^k, averages over inputs, comparisons, stopping rules.

No pytest, numpy or scipy at run time; every method is checked against scipy
and statsmodels in ``tests/unit``. Imports nothing of the package but the
leaves (``vocabulary``).
"""
