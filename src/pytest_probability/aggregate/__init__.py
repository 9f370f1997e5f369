"""Aggregation: run records in, rows and the session's totals out (one aggregator, :mod:`.rows`).

May import the model, the maths and the leaves; never a later stage.
"""
