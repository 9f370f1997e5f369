"""Spend less: cases decided early (``--prob-stop``) and session budgets (``--prob-max-cost/-tokens/-time``).

The rule that stops a case (``early_stop.py``), the budget and its checks before each run, and
their part of every output (the ``not run`` column, the ``stopping`` and
``budget`` sections). Imports the core only.
"""
