"""Graded results: ``record_score()`` per run, each case's mean score with an interval that holds, score gates.

``record_score()`` (the public API, with the other ``record_*`` in ``run.recording``) checks each score
against its case's rules; here are each case's score rules and
score gates (:mod:`.rules`: criteria of the case's gate), and their part of
every output (:mod:`.facet`). The statistics are ``maths.scores`` (the hedged
betting interval of Waudby-Smith & Ramdas 2024). Imports the core only.
"""
