"""Quarantine (``--prob-quarantine=FILE``): known-bad cases that run and are reported, but never gate or fail the session.

The file is a TOML list of entries (a node-id pattern, an owner, a reason,
an until-date). A quarantined case's failing runs and its failing verdict
item are reported as xfailed (in the process that executes them, an xdist
worker's too), a waiver keeps its failed verdict from failing the session
and from ``--lf``'s cache (the gates' settlement and the merge ask it), and
its facet says QUARANTINED in every output. After its date an entry gates
again, with one warning naming its owner. It imports the core, never
another feature.
"""
