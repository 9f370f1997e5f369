"""The plugin's part of each signal in the SDK's own shapes: exporters behind the SDK's processors and readers.

Every process that exports builds the SDK's processors: a ``BatchSpanProcessor`` on the plugin's tracer
provider, a ``BatchLogRecordProcessor`` on its logger provider (made by the first log record,
:class:`LazyLogs`), a metric reader on its meter providers. They batch, and hand each batch to one of
these exporters, which encode it with the SDK's OTLP encoders and hand the request on (``deliver(kind,
body, count)``): in the aggregating process to the signal's :class:`~.export.Guard` (the OTLP file, the
endpoint, the spill), on an xdist worker to its :class:`~.link.Outbox`. Under ``--prob-otel-capture=ids``
they apply the capture policy first (:func:`redact_span`, :func:`redact_log`), so every span, event and log
record the session exports goes without message content, messages and stack traces, wherever it goes.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, Callable, Sequence

from opentelemetry.sdk._logs import LogRecordProcessor
from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult, MetricsData
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import Status

from ..compat import otel as compat
from .spans import SCOPE

#: (kind, serialized request, spans, points or log records) -> whether it was taken.
Deliver = Callable[[str, bytes, int], bool]
#: Data points per metrics request: keeps a request of 10,000 cases under gRPC's 4 MiB default.
POINTS_PER_REQUEST = 2000

#: Attributes that hold captured message content: the GenAI conventions', OpenInference's.
CONTENT_ATTRIBUTES = frozenset({"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions",
                                "gen_ai.tool.definitions", "input.value", "output.value"})
CONTENT_PREFIXES = ("llm.input_messages.", "llm.output_messages.", "gen_ai.prompt.", "gen_ai.completion.")
#: Attributes that hold messages, stack traces and parameter values (the plugin's and the conventions').
MESSAGE_ATTRIBUTES = frozenset({"exception.message", "exception.stacktrace", "probability.assertion",
                                "probability.skip.reason"})


def withheld(key: str) -> bool:
    """Whether ``--prob-otel-capture=ids`` keeps an attribute out of the export."""
    return (key in CONTENT_ATTRIBUTES or key in MESSAGE_ATTRIBUTES or key.startswith(CONTENT_PREFIXES)
            or key.startswith("probability.param."))


def _kept(attributes: Any) -> dict[str, Any] | None:
    """The attributes without the withheld ones; None when none is withheld (the original is kept)."""
    if not attributes or not any(withheld(key) for key in attributes):
        return None
    return {key: value for key, value in attributes.items() if not withheld(key)}


def redact_span(span: Any) -> Any:
    """A span without message content, messages and stack traces: its withheld attributes, its events'
    (a recorded exception keeps its type), and the description of its status unless the span is the
    plugin's own (``fail in call: AssertionError``, made without the message). Otherwise the span as it is."""
    attributes = _kept(span.attributes)
    events = []
    for event in span.events:
        kept = _kept(event.attributes)
        events.append(event if kept is None else Event(event.name, kept, event.timestamp))
    changed = [new is not old for new, old in zip(events, span.events)]
    scope = span.instrumentation_scope
    status = span.status
    if status.description and (scope is None or scope.name != SCOPE):
        status = Status(status.status_code)
    if attributes is None and not any(changed) and status is span.status:
        return span
    return ReadableSpan(
        name=span.name, context=span.context, parent=span.parent, resource=span.resource,
        attributes=span.attributes if attributes is None else attributes, events=events, links=span.links,
        kind=span.kind, status=status, start_time=span.start_time, end_time=span.end_time, instrumentation_scope=scope,
    )  # fmt: skip


def redact_log(record: Any) -> Any:
    """A log record without its body (a record's message, a GenAI event's content) and withheld attributes."""
    from opentelemetry.sdk._logs import ReadableLogRecord

    inner = copy.copy(record.log_record)
    inner.body = None
    kept = _kept(inner.attributes)
    if kept is not None:
        inner.attributes = kept
    return ReadableLogRecord(log_record=inner, resource=record.resource,
                             instrumentation_scope=record.instrumentation_scope, limits=record.limits)


class SpanOut(SpanExporter):
    """The span exporter behind the plugin's ``BatchSpanProcessor``."""

    def __init__(self, deliver: Deliver, capture: bool = True) -> None:
        self.deliver, self.capture = deliver, capture

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

        batch = spans if self.capture else [redact_span(span) for span in spans]
        ok = self.deliver("traces", encode_spans(batch).SerializeToString(), len(batch))
        return SpanExportResult.SUCCESS if ok else SpanExportResult.FAILURE

    def shutdown(self) -> None:
        pass


class MetricOut(MetricExporter):
    """The metric exporter behind the plugin's metric readers: the OTLP exporters' temporality and
    aggregation preferences, requests of at most :data:`POINTS_PER_REQUEST` points."""

    def __init__(self, deliver: Deliver, points: int = POINTS_PER_REQUEST) -> None:
        temporality, aggregation = compat.metric_preferences()
        super().__init__(preferred_temporality=temporality, preferred_aggregation=aggregation)
        self.deliver, self.points = deliver, points

    def export(self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any) -> MetricExportResult:
        results = [self.deliver("metrics", body, count) for body, count in self.requests(metrics_data)]
        return MetricExportResult.SUCCESS if all(results) else MetricExportResult.FAILURE

    def requests(self, metrics_data: MetricsData) -> list[tuple[bytes, int]]:
        """The encoded requests of ``metrics_data``, with their point counts."""
        from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics

        return [(encode_metrics(part).SerializeToString(), count) for part, count in split(metrics_data, self.points)]

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        pass


def split(data: MetricsData, size: int) -> list[tuple[MetricsData, int]]:
    """``data`` in pieces of at most ``size`` data points, each with its point count; none without points."""
    from opentelemetry.sdk.metrics.export import Metric, ResourceMetrics, ScopeMetrics

    pieces: list[tuple[MetricsData, int]] = []
    resources: list[Any] = []
    used = 0

    def close() -> None:
        nonlocal resources, used
        if used:
            pieces.append((MetricsData(resources), used))
        resources, used = [], 0

    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                points = list(metric.data.data_points)
                while points:
                    take, points = points[: size - used], points[size - used :]
                    part = dataclasses.replace(metric.data, data_points=take)
                    if not resources or resources[-1].resource is not resource.resource:
                        resources.append(ResourceMetrics(resource.resource, [], resource.schema_url))
                    scopes = resources[-1].scope_metrics
                    if not scopes or scopes[-1].scope is not scope.scope:
                        scopes.append(ScopeMetrics(scope.scope, [], scope.schema_url))
                    scopes[-1].metrics.append(Metric(metric.name, metric.description, metric.unit, part))
                    used += len(take)
                    if used >= size:
                        close()
    close()
    return pieces


class LazyLogs(LogRecordProcessor):
    """The plugin's log record processor: a ``BatchLogRecordProcessor`` behind a log exporter like
    :class:`SpanOut`, made by the first log record. The SDK's log export module, which the batch processor
    comes from, makes a non-propagating logger, and pytest's log capture attaches its handlers to every
    such logger in every phase of every run (docs/performance.md): a session without log records never
    imports it."""

    def __init__(self, deliver: Deliver, capture: bool = True) -> None:
        self.deliver, self.capture = deliver, capture
        self.processor: Any = None

    def on_emit(self, log_record: Any) -> None:
        if self.processor is None:
            self.processor = log_processor(self.deliver, self.capture)
        self.processor.on_emit(log_record)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.processor is None or bool(self.processor.force_flush(timeout_millis))

    def shutdown(self) -> None:
        if self.processor is not None:
            self.processor.shutdown()


def log_processor(deliver: Deliver, capture: bool) -> Any:
    """The SDK's ``BatchLogRecordProcessor`` exporting through ``deliver``."""
    from opentelemetry.sdk._logs.export import BatchLogRecordProcessor, LogRecordExporter, LogRecordExportResult

    class LogOut(LogRecordExporter):  # type: ignore[misc]
        def export(self, batch: Sequence[Any]) -> Any:
            records = batch if capture else [redact_log(record) for record in batch]
            ok = deliver("logs", compat.encode_logs(records).SerializeToString(), len(records))
            return LogRecordExportResult.SUCCESS if ok else LogRecordExportResult.FAILURE

        def shutdown(self) -> None:
            pass

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return True

    return BatchLogRecordProcessor(LogOut(), max_queue_size=queue_size("OTEL_BLRP_MAX_QUEUE_SIZE"))


def queue_size(variable: str) -> int | None:
    """A batch processor's queue: the user's ``OTEL_B*P_MAX_QUEUE_SIZE``, else room for every item of a
    session (the SDK's default, 2,048, drops items while a slow endpoint holds one request)."""
    import os

    return None if os.environ.get(variable, "").strip() else 1 << 30


def span_processor(deliver: Deliver, capture: bool) -> Any:
    """The SDK's ``BatchSpanProcessor`` exporting through ``deliver`` (``OTEL_BSP_*`` apply)."""
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    return BatchSpanProcessor(SpanOut(deliver, capture), max_queue_size=queue_size("OTEL_BSP_MAX_QUEUE_SIZE"))
