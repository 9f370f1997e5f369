"""Decisions: what the rows mean and what the session does about them.

Gate and latency verdicts (:mod:`.gates`, :mod:`.analysis`), the
aggregating process's :class:`~.book.DecisionBook` (verdicts of gated and
judged cases, early stops, budgets) and the one channel that carries its
decisions to xdist workers (:mod:`.channel`), baselines and A/B comparisons
(:mod:`.baseline`, :mod:`.compare`, :mod:`.pairs`, :mod:`.comparisons`,
:mod:`.plan`), and the settlement at the end (:mod:`.settle`). Every decision
is one kind of verdict item and one verdict in the channel. May import
aggregate and the earlier stages (the verdict item is collected), never the
reporters or the exporter.
"""
