"""The runs: each run's phases, the current run that usage is charged to, its outcome and its record.

:mod:`.phases` is the per-run path (``RunPhases``, which also keeps what runs
leave for the aggregating process: late usage, interrupted runs);
:mod:`.context` keeps the current run (per process, context and thread);
:mod:`.recording` is the public ``record_*`` API; :mod:`.outcome` classifies
phases; :mod:`.report` puts the record on the teardown report; :mod:`.retries`
repeats a call on a provider fault; :mod:`.modules` runs benchmark files'
``setup()``/``teardown()``; :mod:`.key` is the stage's key in
``config.stash``. May import collect (its items), the session, the
configuration, the model and the leaves; never a later stage (decisions come
through the session's ``decisions``, observers and guards through its registry).
"""
