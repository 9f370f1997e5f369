"""The export as a feature: its parts in each role (the package's docstring says what they are). Its modules
(and the SDK, which reads the ``OTEL_*`` limits as it is imported) are imported in the role methods, after
:class:`Export` has dropped the limits that are no numbers; a worker's without the aggregating process's."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .. import files
from ..config import otel as options
from ..roles.wiring import Aggregation, Feature, WorkerWiring

if TYPE_CHECKING:
    from ..config.otel_settings import OtelSettings
    from ..config.settings import Settings


def feature(config: pytest.Config, settings: Settings) -> Export:
    """The export, once an option or an ``OTEL_*`` variable turned it on (only then is this module imported)."""
    resolved = options.resolve(config)
    assert resolved is not None
    return Export(resolved)


class Export(Feature):
    """Every run a span, every row's aggregates metrics: the export's parts in each role.

    A worker makes its runs' spans (and the instrumentation's metrics and log records when the user set no
    provider) and ships them on the teardown reports; the aggregating process exports everything, with the
    session span, and the metric series of the same facets every other output reads."""

    def __init__(self, settings: OtelSettings) -> None:
        self.settings = settings
        for name in settings.bad_limits:
            os.environ.pop(name, None)

    def output_files(self) -> list[tuple[str, Path]]:
        """The OTLP file, the file its lines go to until the session's end (``PATH.partial``: a journal or a
        report there would get the OTLP lines, or be renamed over the OTLP file), and the spill."""
        file, spill = self.settings.file, self.settings.spill
        partial = files.partial_path(file) if file is not None else None
        named = (("--prob-otel-file", file), ("--prob-otel-file's PATH.partial", partial), ("--prob-otel-spill", spill))
        return [(option, path) for option, path in named if path is not None]

    def aggregating(self, wiring: Aggregation) -> None:
        """A shard (``wiring.scope``) exports the series that add over the parts (no gauge: the merge's), on
        the resource ``service.instance.id`` of the part (``shard-K-of-N``), so that its counters add."""
        from . import export_session, spans  # the aggregating process's exporters: OTel's SDK, its OTLP senders

        scope = wiring.scope
        session = export_session.ExportSession(
            self.settings, wiring.config.rootpath, instance=scope.instance, counters_only=scope.partial is not None
        )
        observer = spans.RunSpans(self.settings, session.tracer, session.run_parent, session.logger)
        wiring.parts.add(observers=observer, links=session)
        wiring.parts.add(finishers=export_session.SessionExport(session, wiring.parts, wiring.notes))

    def worker(self, wiring: WorkerWiring) -> None:
        """The worker's providers export into its outbox, which its teardown reports and its end empty."""
        from . import sdk_exporters, spans  # a worker's: its runs' spans, into its outbox

        settings, workerinput = self.settings, wiring.workerinput
        resource = sdk_exporters.Resource(workerinput.get("prob_otel_resource", {}))
        outbox = sdk_exporters.Outbox()
        processor = sdk_exporters.span_processor(outbox.add, settings.capture_values)
        provider, _ = spans.make_provider(resource, processor)
        parent = spans.parent_context(workerinput.get("prob_otel_traceparent"), workerinput.get("prob_otel_tracestate"))
        logs, logger = (
            sdk_exporters.make_logger_provider(resource, outbox.add, settings.capture_values)
            if settings.logs_on
            else (None, None)
        )  # the instrumentation's records and the plugin's own
        wiring.parts.add(observers=spans.RunSpans(settings, spans.tracer(provider), parent, logger))
        outbox.per_run.append(processor.force_flush)
        # The instrumentation's metrics, when the user set no provider of their own.
        # Each worker's metric streams are its own (OTel's single-writer rule): its id tells them apart.
        worker_id = str(workerinput.get("workerid", ""))
        instance = resource.attributes.get("service.instance.id")  # a shard's, or the user's
        metric_resource = sdk_exporters.Resource(
            {**resource.attributes, "service.instance.id": f"{instance}-{worker_id}" if instance else worker_id}
        )
        reader = sdk_exporters.make_meter_provider(metric_resource, outbox.add) if settings.metrics_on else None
        if reader is not None:
            outbox.flushes.append(reader.force_flush)
        if logs is not None:
            outbox.per_run.append(logs.force_flush)
        wiring.parts.add(observers=outbox, links=outbox)
