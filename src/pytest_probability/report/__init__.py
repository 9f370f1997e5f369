"""Reports: the terminal table, the JSON and HTML reports, the history page, and each feature's part of them.

Every output reads the same rows (:mod:`pytest_probability.aggregate`) and
the same facets (:class:`~pytest_probability.protocols.Facet`: statistics,
spend, comparisons), so they agree: :mod:`.terminal` draws the table,
:mod:`.json_report` and :mod:`.html_report` build the report and its page,
:mod:`.writers` writes them at the session's end, :mod:`.history` draws
several sessions. May import decide and the earlier stages; never the
exporter (``otel/``, which sits beside this package and reads the same facets).
"""
