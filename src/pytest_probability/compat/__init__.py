"""The one place per dependency that uses what it does not publish: each name with the public interface it lacks.

``pytest.py``: pytest's collection internals (a function's cases as pytest makes them, node ids ``--lf``
matches, the rewriting hook) and its short failure report. ``xdist.py``: pytest-xdist's controller and
scheduler internals (its event queue after an interrupt, a crashed worker's pending items). ``otel.py``:
the OTLP exporters one level below ``export()`` (an encoded request, its answer), their metric
preferences, the log encoder, an instrumentor's singleton, instrumentation suppression; only ``otel/``
imports it (the forbidden contract's one exception). ``junitxml.py``: the ``--junitxml`` plugin's
suite-property function (without it the suite properties are left out; ``test_compat.py`` does not check
its names). Outside this package no module uses another distribution's private name
(``tests/foreign_privates.py``, checked by ``tests/unit/test_compat.py``), and ``tests/unit/test_compat.py``
fails with a clear message when a supported version lacks a name ``pytest.py``, ``xdist.py`` or ``otel.py`` uses.
"""
