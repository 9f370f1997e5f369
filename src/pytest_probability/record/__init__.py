"""Records in the aggregating process: off teardown reports, late, from crashed workers.

:mod:`.wire` reads a record off its report (or makes a crashed run's);
:mod:`.intake` keeps the session's records and hands each to the record
sinks (the decision book), and tracks the xdist controller's runs in flight.
May import run (the wire format's other side), collect, the session, the
model and the leaves; never a later stage.
"""
