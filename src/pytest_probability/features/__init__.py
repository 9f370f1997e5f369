"""Feature packages: each feature that adds to several stages owns all of its parts here and registers them itself.

A feature package depends on the core (the stages, the session, the
protocols, the roles' wiring), never the other way round, and two feature
packages do not import each other (the import contracts in pyproject.toml
keep both). Each has a ``feature.py`` whose feature object the composition
root lists: the roles call its methods for the processes it has parts in
(``roles.wiring.Feature``). ``spend``: early stopping and budgets;
``compare``: baselines and A/B comparisons; ``shards``: ``--prob-shard`` and
the merge; ``journal``: ``--prob-journal`` and resuming from it.
"""
