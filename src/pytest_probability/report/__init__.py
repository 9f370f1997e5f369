"""Reports: the terminal table, the JSON and HTML reports, the history page, and the statistics' part of them.

Every output reads the same rows (:mod:`pytest_probability.aggregate`) and
the same facets (:class:`~pytest_probability.protocols.Facet`: the
statistics' (:mod:`.statistics`), the readings' (:mod:`.explain`), and each
feature's), so they agree: :mod:`.terminal` draws the table,
:mod:`.json_report` and :mod:`.html_report` build the report and its page,
:mod:`.writers` writes them at the session's end, :mod:`.history` draws
several sessions. May import decide and the earlier stages; never the roles,
the features or the exporter (``otel/``, which reads the same facets).
"""
