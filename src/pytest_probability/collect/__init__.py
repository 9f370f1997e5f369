"""Collection: benchmark files, benchmarks, cases, their runs and verdict items, and their order.

:mod:`.benchfiles` finds benchmark files and what is in them; :mod:`.benchmark`
turns a benchmark into the runs of each case (and its verdict items);
:mod:`.items` are those items; :mod:`.nodeid` makes their node ids match what
``--lf`` parses; :mod:`.order` keeps verdict items after their runs and runs
the features' items checks; :mod:`.scratch` is what collection keeps between
benchmarks (its own). May import the session, the configuration, the model
and the leaves; no later stage (verdicts come through the session's
``decisions``, the verdict kinds through its registry).
"""
