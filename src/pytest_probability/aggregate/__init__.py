"""Aggregation: run records in, rows and the session's totals out (one aggregator, :mod:`.rows`), and
the estimates over each bench function's inputs (:mod:`.inputs`).

May import the model, the maths and the leaves; never a later stage.
"""
