"""Shards: one session's runs spread over N CI jobs (``--prob-shard=K/N``), and their merge into one report.

A shard deselects the runs of other shards, decides nothing on its part
(the session's ``Scope``), and hands the merge what it needs in its report;
``python -m pytest_probability merge`` judges the shards' records as one
session with the features' merge parts. Imports the core only.
"""
