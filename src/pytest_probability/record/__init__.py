"""Records in the aggregating process: off teardown reports, late, from crashed workers.

:mod:`.wire` reads a record off its report (or makes a crashed run's);
:mod:`.intake` owns the session's records and their cases, hands each to the
record logs (the journal) and then the sinks (the decision book, budgets),
and tracks the xdist controller's runs in flight (what is read back from
files is checked by ``report.schema``, many records at once by
``report.schema_fast``); :mod:`.concurrency_link` carries a process's
concurrent runs' figures to the aggregating one. May import run (the
wire format's other side), collect, the session, the config, the model and
the leaves; never a later stage.
"""
