"""OpenTelemetry export for pytest-probability: every run a span, every row's aggregates metrics.

Importing this package imports no OpenTelemetry module: ``config/otel.py`` decides from the options whether
export is on, and only then do the export's role parts (``feature.Export``) import the SDK. A feature beside
the feature packages, above the roles whose wiring it uses; only the composition roots import it, and
nothing outside it (but ``compat/otel_sdk.py``, which it alone imports) imports OpenTelemetry.
"""
