"""OpenTelemetry export for pytest-probability: every run a span, every row's aggregates metrics.

Importing this package imports no OpenTelemetry module: ``feature.feature``
decides from the options whether export is on, and the export's role parts
(``feature.Export``) import the OpenTelemetry SDK (its tracer provider for the run spans, its meter and logger
providers for instrumentation's metrics and log records when the process has
none, its OTLP exporters and encoders for sending). It registers the export's parts,
each behind one of the session's extension points: the run spans (a
:class:`~pytest_probability.protocols.RunObserver`), what travels between
xdist workers and the controller (a :class:`~pytest_probability.protocols.Link`),
and, in the aggregating process, the flush at the end (a
:class:`~pytest_probability.protocols.Finisher`), which reads the metric
series of the same facets every other output reads.

A feature beside the feature packages, above the roles whose wiring it uses
(it imports no feature package, and none imports it): it may import the
roles' wiring, the reports' shared model, the session, the protocols, the
model, the configuration's parsers and the leaves; only the composition roots
import it, and nothing outside it imports OpenTelemetry.
"""
