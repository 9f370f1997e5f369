"""Records in the aggregating process: off teardown reports, late, from crashed workers.

:mod:`.wire` reads a record off its report (or makes a crashed run's);
:mod:`.intake` owns the session's records and their cases, hands each to the
record logs (the journal) and then the sinks (the decision book, budgets),
and tracks the xdist controller's runs in flight; :mod:`.shape` checks the
records and cases read back from files (a shard's report, the journal),
field by field, before anything is rebuilt from them, and :mod:`.bulk` many
of them at once, cheaply (the merge's). May import run (the
wire format's other side), collect, the session, the config, the model and
the leaves; never a later stage.
"""
