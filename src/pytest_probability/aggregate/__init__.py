"""Aggregation: run records in, rows and the session's totals out (one aggregator, :mod:`.cases`), and
the estimates over each benchmark's inputs (:mod:`.benchmarks`).

May import the model, the maths and the leaves; never a later stage.
"""
