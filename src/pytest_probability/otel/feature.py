"""The export as a feature: its parts in each role (the package's docstring says what they are)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from ..roles.wiring import Aggregation, Feature, WorkerWiring
from . import options

if TYPE_CHECKING:
    from ..config.settings import Settings
    from .options import OtelSettings


def feature(config: pytest.Config, settings: Settings) -> Export | None:
    """The export when an option or an ``OTEL_*`` variable turns it on, else None (and nothing of OpenTelemetry
    imported)."""
    resolved = options.resolve(config)
    return Export(resolved) if resolved is not None else None


class Export(Feature):
    """Every run a span, every row's aggregates metrics: the export's parts in each role.

    A worker makes its runs' spans (and the instrumentation's metrics and log records when the user set no
    provider) and ships them on the teardown reports; the aggregating process exports everything, with the
    session span, and the metric series of the same facets every other output reads."""

    def __init__(self, settings: OtelSettings) -> None:
        self.settings = settings
        for name in settings.bad_limits:
            os.environ.pop(name, None)

    def aggregating(self, wiring: Aggregation) -> None:
        """``wiring.scope``: a session holding part of the night (a shard) exports the series that add over the
        parts (counters and the duration histogram), no gauge, and its resource is ``service.instance.id``
        of the part (``shard-K-of-N``, unless ``OTEL_RESOURCE_ATTRIBUTES`` gives one), so that each part's
        counters are series of their own, which add, rather than overwrite each other (the merge writes the
        gauges)."""
        from .session import Session, SessionExport, ShippedSpans  # export on, the aggregating process's
        from .signals import ShippedLogs, ShippedMetrics  # export on
        from .spans import RunSpans  # export on

        scope = wiring.scope
        session = Session(self.settings, wiring.config.rootpath, instance=scope.instance,
                          counters_only=scope.partial is not None)
        pipeline = session.pipeline
        wiring.parts.add(observers=RunSpans(self.settings, session.tracer, session.run_parent))
        for link in (ShippedSpans(session), ShippedLogs(pipeline.add_encoded_logs), ShippedMetrics(pipeline.add_metrics)):
            wiring.parts.add(links=link)
        wiring.parts.add(finishers=SessionExport(session, wiring.parts, wiring.notes))

    def worker(self, wiring: WorkerWiring) -> None:
        from opentelemetry.sdk.resources import Resource  # export on: a worker makes its runs' spans

        from . import signals  # export on
        from .spans import RunSpans, WorkerBuffer, WorkerSpans, make_provider, parent_context, tracer  # export on

        settings, workerinput = self.settings, wiring.workerinput
        resource = Resource(workerinput.get("prob_otel_resource", {}))
        buffer = WorkerBuffer()
        provider, _ = make_provider(resource, buffer.add, settings.capture_values)
        parent = parent_context(workerinput.get("prob_otel_traceparent"), workerinput.get("prob_otel_tracestate"))
        wiring.parts.add(observers=RunSpans(settings, tracer(provider), parent, take=buffer.take), links=WorkerSpans(buffer))
        # The instrumentation's metrics and log records, when the user set no provider of their own.
        # Each worker's metric streams are its own (OTel's single-writer rule): its id tells them apart.
        worker_id = str(workerinput.get("workerid", ""))
        instance = resource.attributes.get("service.instance.id")  # a shard's, or the user's
        metric_resource = Resource({**resource.attributes,
                                    "service.instance.id": f"{instance}-{worker_id}" if instance else worker_id})
        reader = signals.make_meter_provider(metric_resource) if settings.metrics_on else None
        if reader is not None:
            wiring.parts.add(links=signals.WorkerMetrics(reader))
        logs = signals.LogBuffer()
        if settings.logs_on and signals.make_logger_provider(resource, logs.add, settings.capture_values) is not None:
            wiring.parts.add(observers=signals.RunLogs(logs), links=signals.WorkerLogs(logs))
