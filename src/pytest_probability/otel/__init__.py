"""OpenTelemetry export for pytest-probability: every run a span, every row's aggregates metrics.

Importing this package imports no OpenTelemetry module: :func:`configure`
decides from the options whether export is on and only then imports the
OpenTelemetry SDK (its tracer provider for the run spans, its meter and logger
providers for instrumentation's metrics and log records when the process has
none, its OTLP exporters and encoders for sending). It hands the composition root the export's parts,
each behind one of the session's extension points: the run spans (a
:class:`~pytest_probability.protocols.RunObserver`), what travels between
xdist workers and the controller (a :class:`~pytest_probability.protocols.Link`),
and, in the aggregating process, the flush at the end (a
:class:`~pytest_probability.protocols.Finisher`), which reads the metric
series of the same facets every other output reads.

Beside ``report/`` (neither imports the other), it may import the session,
the protocols, the model, the configuration's parsers and the leaves; only
the composition root imports it, and nothing outside it imports OpenTelemetry.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import pytest

from . import options

if TYPE_CHECKING:
    from ..protocols import Facet, Finisher, Link, RunObserver


@dataclass
class Export:
    """The export's parts, for the composition root to register."""

    observers: tuple[RunObserver, ...]
    links: tuple[Link, ...]
    #: The flush at the session's end; None on an xdist worker (its controller exports).
    finisher: Finisher | None


def configure(config: pytest.Config, *, worker: bool, facets: Sequence[Facet], notes: list[str],
              shard: tuple[int, int] | None = None) -> Export | None:
    """The export's parts when it is on, else None (and nothing of OpenTelemetry imported).

    ``shard``: ``--prob-shard``'s (K, N). A shard's metrics are the series that add over shards
    (counters and the duration histogram), no gauge, and its resource is ``service.instance.id``
    ``shard-K-of-N`` (unless ``OTEL_RESOURCE_ATTRIBUTES`` gives one), so that each shard's counters are
    series of their own, which add, rather than overwrite each other."""
    settings = options.resolve(config)
    if settings is None:
        return None
    for name in settings.bad_limits:
        os.environ.pop(name, None)
    from .spans import RunSpans, WorkerBuffer, WorkerSpans, make_provider, parent_context, tracer

    if worker:
        from opentelemetry.sdk.resources import Resource

        from . import signals

        workerinput = config.workerinput  # type: ignore[attr-defined]
        resource = Resource(workerinput.get("prob_otel_resource", {}))
        buffer = WorkerBuffer()
        provider, _ = make_provider(resource, buffer.add, settings.capture_values)
        parent = parent_context(workerinput.get("prob_otel_traceparent"), workerinput.get("prob_otel_tracestate"))
        observers: list[RunObserver] = [RunSpans(settings, tracer(provider), parent, take=buffer.take)]
        links: list[Link] = [WorkerSpans(buffer)]
        # The instrumentation's metrics and log records, when the user set no provider of their own.
        # Each worker's metric streams are its own (OTel's single-writer rule): its id tells them apart.
        worker_id = str(workerinput.get("workerid", ""))
        instance = resource.attributes.get("service.instance.id")  # a shard's, or the user's
        metric_resource = Resource({**resource.attributes,
                                    "service.instance.id": f"{instance}-{worker_id}" if instance else worker_id})
        reader = signals.make_meter_provider(metric_resource) if settings.metrics_on else None
        if reader is not None:
            links.append(signals.WorkerMetrics(reader))
        logs = signals.LogBuffer()
        if settings.logs_on and signals.make_logger_provider(resource, logs.add, settings.capture_values) is not None:
            observers.append(signals.RunLogs(logs))
            links.append(signals.WorkerLogs(logs))
        return Export(tuple(observers), tuple(links), None)

    from .session import Session, SessionExport, ShippedSpans
    from .signals import ShippedLogs, ShippedMetrics

    session = Session(settings, config.rootpath, shard=shard)
    pipeline = session.pipeline
    return Export((RunSpans(settings, session.tracer, session.run_parent),),
                  (ShippedSpans(session), ShippedLogs(pipeline.add_encoded_logs), ShippedMetrics(pipeline.add_metrics)),
                  SessionExport(session, facets, notes))
