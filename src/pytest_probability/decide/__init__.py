"""Decisions: what the rows mean and what the session does about them.

Gate and latency verdicts (:mod:`.gates`, :mod:`.analysis`), the session's
results (:mod:`.results`), the aggregating process's
:class:`~.book.DecisionBook` (verdicts of gated cases and of the features'
verdict kinds, cases stopped early, the flags features publish) and the one
channel that carries its decisions to xdist workers (:mod:`.channel`), and
the gates' settlement at the end (:mod:`.settle`). Every decision is one kind
of verdict item and one verdict in the channel; the features' decisions
(comparisons, early stopping, budgets) come through it. May import aggregate
and the earlier stages (the verdict item is collected), never the reporters,
the roles, the features or the exporter.
"""
