"""The plugin's part of each signal in the SDK's own shapes: exporters behind the SDK's processors and readers.

Every process that exports builds the SDK's processors: a ``BatchSpanProcessor`` on the plugin's tracer
provider, a ``BatchLogRecordProcessor`` on its logger provider (made by the first record, :class:`LazyLogs`),
a metric reader on its meter provider. Their exporters here encode each batch with the SDK's OTLP encoders
and ``deliver(kind, body, count)`` it: in the aggregating process to the signal's :class:`~.signal_guards.Guard`,
on an xdist worker to its :class:`Outbox`. Under ``--prob-otel-capture=ids`` they apply the capture
policy first (:func:`redact_span`, :func:`redact_log`), so no span, event or log record exported, wherever
it goes, holds message content, messages or stack traces.

An xdist worker's processors deliver into its :class:`Outbox`, the one way from workers to the controller
for every signal: each run's teardown flushes the span and log processors into it, so that the run's spans
and log records travel on its teardown report with its record, and the worker's end flushes its metric
reader too and ships the rest in its ``workeroutput``; no worker talks to the network. The controller's
side is its export session (:class:`~.export_session.ExportSession`, a link too).

The meter and logger providers are for instrumentation (the GenAI instrumentation's histograms and
events): installed as the global ones only when the process has none (a provider the user set first keeps
its signal); the meter provider's reader has no period, collected at the process's end. The logger
provider is also the plugin's own, for its evaluation results, global or not.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from opentelemetry import _logs, metrics
from opentelemetry.sdk._logs import LoggerProvider, LogRecordProcessor, ReadableLogRecord
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    Metric,
    MetricExporter,
    MetricExportResult,
    MetricsData,
    PeriodicExportingMetricReader,
    ResourceMetrics,
    ScopeMetrics,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import Link as SpanLink
from opentelemetry.trace import Status

from .. import __version__
from ..compat import otel_sdk as compat
from ..model.run_state import CurrentRun
from ..protocols import Link, RunObserver
from ..text import well_formed_data
from .spans import SCOPE

if TYPE_CHECKING:
    from opentelemetry.util.types import AnyValue

#: (kind, serialized request, spans, points or log records) -> whether it was taken.
Deliver = Callable[[str, bytes, int], bool]
#: Data points per metrics request: keeps a request of 10,000 cases under gRPC's 4 MiB default.
POINTS_PER_REQUEST = 2000

#: Attributes that hold captured message content: the GenAI conventions', OpenInference's.
CONTENT_ATTRIBUTES = frozenset(
    {
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.system_instructions",
        "gen_ai.tool.definitions",
        "input.value",
        "output.value",
    }
)
CONTENT_PREFIXES = ("llm.input_messages.", "llm.output_messages.", "gen_ai.prompt.", "gen_ai.completion.")
#: Attributes that hold messages, stack traces and explanations (the plugin's and the conventions').
MESSAGE_ATTRIBUTES = frozenset(
    {
        "exception.message",
        "exception.stacktrace",
        "probability.assertion",
        "probability.skip.reason",
        "gen_ai.evaluation.explanation",
    }
)


def withheld(key: str) -> bool:
    """Whether ``--prob-otel-capture=ids`` keeps an attribute out of the export."""
    return (
        key in CONTENT_ATTRIBUTES
        or key in MESSAGE_ATTRIBUTES
        or key.startswith(CONTENT_PREFIXES)
        or key.startswith("probability.param.")
    )


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
    scope, status = span.instrumentation_scope, span.status
    if status.description and (scope is None or scope.name != SCOPE):
        status = Status(status.status_code)
    if (
        attributes is None
        and status is span.status
        and all(new is old for new, old in zip(events, span.events, strict=False))
    ):
        return span
    return ReadableSpan(
        name=span.name, context=span.context, parent=span.parent, resource=span.resource,
        attributes=span.attributes if attributes is None else attributes, events=events, links=span.links,
        kind=span.kind, status=status, start_time=span.start_time, end_time=span.end_time, instrumentation_scope=scope,
    )  # fmt: skip


def redact_log(record: Any) -> Any:
    """A log record without its body (a record's message, a GenAI event's content) and withheld attributes."""
    inner = copy.copy(record.log_record)
    inner.body = None
    kept = _kept(inner.attributes)
    if kept is not None:
        inner.attributes = kept
    return _log(record, inner, record.resource)


def _log(record: Any, inner: Any, resource: Any) -> Any:
    """``record`` with ``inner`` (its ``LogRecord``, changed) and ``resource``."""
    scope = record.instrumentation_scope
    return ReadableLogRecord(log_record=inner, resource=resource, instrumentation_scope=scope, limits=record.limits)


def _resource(resource: Any) -> Any:
    # well_formed_data keeps the attributes' shape: a dict of the same keys and kinds of value.
    return Resource(cast("Mapping[str, AnyValue]", well_formed_data(dict(resource.attributes))), resource.schema_url)


def encoded(encode: Callable[[Sequence[Any]], bytes], batch: Sequence[Any], fix: Callable[[Any], Any]) -> bytes:
    """``encode(batch)``; when protobuf refuses a text in it (a lone surrogate, in a span or log record of any
    code), the batch again with every text of every item well-formed (``fix``): nothing of it is lost."""
    try:
        return encode(batch)
    except UnicodeEncodeError:
        return encode([fix(item) for item in batch])


def well_formed_span(span: Any) -> Any:
    """A span with every text well-formed: its name, attributes, events, links, status description, resource."""
    fixed: Any = well_formed_data
    status = Status(span.status.status_code, fixed(span.status.description)) if span.status.description else span.status
    return ReadableSpan(
        name=fixed(span.name), context=span.context, parent=span.parent, resource=_resource(span.resource),
        attributes=fixed(dict(span.attributes or {})), kind=span.kind, status=status,
        events=[Event(fixed(e.name), fixed(dict(e.attributes or {})), e.timestamp) for e in span.events],
        links=[SpanLink(link.context, fixed(dict(link.attributes or {}))) for link in span.links],
        start_time=span.start_time, end_time=span.end_time, instrumentation_scope=span.instrumentation_scope,
    )  # fmt: skip


def well_formed_log(record: Any) -> Any:
    """A log record with every text well-formed: its body, attributes and resource."""
    inner = copy.copy(record.log_record)
    inner.body, inner.attributes = well_formed_data(inner.body), well_formed_data(dict(inner.attributes or {}))
    return _log(record, inner, _resource(record.resource))


def _encoders() -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
    """The OTLP span and metric encoders (protobuf, the OTLP messages): imported at the first batch, here only."""
    from opentelemetry.exporter.otlp.proto.common import metrics_encoder, trace_encoder

    return trace_encoder.encode_spans, metrics_encoder.encode_metrics


class SpanOut(SpanExporter):
    """The span exporter behind the plugin's ``BatchSpanProcessor``."""

    def __init__(self, deliver: Deliver, capture: bool = True) -> None:
        self.deliver, self.capture = deliver, capture

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        encode_spans, _ = _encoders()
        batch = spans if self.capture else [redact_span(span) for span in spans]
        body = encoded(lambda items: encode_spans(items).SerializeToString(), batch, well_formed_span)
        ok = self.deliver("traces", body, len(batch))
        return SpanExportResult.SUCCESS if ok else SpanExportResult.FAILURE


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
        _, encode_metrics = _encoders()
        return [(encode_metrics(part).SerializeToString(), count) for part, count in split(metrics_data, self.points)]

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        pass


def split(data: MetricsData, size: int) -> list[tuple[MetricsData, int]]:
    """``data`` in pieces of at most ``size`` data points, each with its point count; none without points."""
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
                metric_data: Any = metric.data  # a Sum, Gauge, Histogram...: replace() cannot type their union
                points = list(metric_data.data_points)
                while points:
                    take, points = points[: size - used], points[size - used :]
                    part = dataclasses.replace(metric_data, data_points=take)
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
    """The plugin's log record processor: a ``BatchLogRecordProcessor`` made by the first log record. Its
    module makes a non-propagating logger, which pytest's log capture attaches to in every phase of every
    run (docs/performance.md): a session without log records never imports it."""

    def __init__(self, deliver: Deliver, capture: bool = True) -> None:
        self.deliver, self.capture = deliver, capture
        self.processor: Any = None

    def on_emit(self, log_record: Any) -> None:
        if self.processor is None:
            from opentelemetry.sdk._logs import export  # its logger: only once a record comes

            self.processor = export.BatchLogRecordProcessor(
                _log_exporter(export, self.deliver, self.capture),
                max_queue_size=queue_size("OTEL_BLRP_MAX_QUEUE_SIZE"),
            )
        self.processor.on_emit(log_record)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.processor is None or bool(self.processor.force_flush(timeout_millis))

    def shutdown(self) -> None:
        if self.processor is not None:
            self.processor.shutdown()


def _log_exporter(module: Any, deliver: Deliver, capture: bool) -> Any:
    """The log record exporter behind the plugin's ``BatchLogRecordProcessor`` (``module``: the SDK's)."""

    class LogOut(module.LogRecordExporter):
        def export(self, batch: Sequence[Any]) -> Any:
            records = batch if capture else [redact_log(record) for record in batch]
            body = encoded(lambda items: compat.encode_logs(items).SerializeToString(), records, well_formed_log)
            ok = deliver("logs", body, len(records))
            return module.LogRecordExportResult.SUCCESS if ok else module.LogRecordExportResult.FAILURE

        def shutdown(self) -> None:
            pass

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return True

    return LogOut()


def queue_size(variable: str) -> int | None:
    """A batch processor's queue: the user's ``OTEL_B*P_MAX_QUEUE_SIZE``, else room for every item of a
    session (the SDK's default, 2,048, drops items while a slow endpoint holds one request)."""
    return None if os.environ.get(variable, "").strip() else 1 << 30


def span_processor(deliver: Deliver, capture: bool) -> Any:
    """The SDK's ``BatchSpanProcessor`` exporting through ``deliver`` (``OTEL_BSP_*`` apply)."""
    return BatchSpanProcessor(SpanOut(deliver, capture), max_queue_size=queue_size("OTEL_BSP_MAX_QUEUE_SIZE"))


def make_meter_provider(resource: Any, deliver: Deliver) -> Any | None:
    """The reader of the plugin's global MeterProvider (through :class:`MetricOut`), or None when a global
    one is already set."""
    if not _unset(metrics.get_meter_provider()):
        return None
    reader = PeriodicExportingMetricReader(MetricOut(deliver), export_interval_millis=math.inf)
    provider = MeterProvider(metric_readers=[reader], resource=resource, shutdown_on_exit=False)
    metrics.set_meter_provider(provider)
    return reader if metrics.get_meter_provider() is provider else None


def make_logger_provider(resource: Any, deliver: Deliver, capture: bool = True) -> tuple[LazyLogs, Any]:
    """The processor of the plugin's LoggerProvider, and its logger (the plugin's own records, which take the
    plugin's way as its spans do); the provider is made global unless one is set already. ``capture`` False
    (``--prob-otel-capture=ids``): records go without their body and withheld attributes."""
    processor = LazyLogs(deliver, capture)
    provider = LoggerProvider(resource=resource, shutdown_on_exit=False)
    provider.add_log_record_processor(processor)
    if _unset(_logs.get_logger_provider()):
        _logs.set_logger_provider(provider)
    return processor, provider.get_logger(SCOPE, __version__)


def _unset(provider: Any) -> bool:
    """Whether a global provider is still the API's proxy one, i.e. nobody set one (not even a no-op one)."""
    return type(provider).__name__.startswith(("_Proxy", "Proxy"))


#: The teardown-report attribute and ``workeroutput`` key: a list of (signal, serialized request, count).
ATTRIBUTE = "prob_otel"


class Outbox(RunObserver, Link):
    """A worker's side: what its processors exported, on the next teardown report; the rest at its end."""

    attribute = ATTRIBUTE

    def __init__(self) -> None:
        self._items: list[tuple[str, bytes, int]] = []
        self._lock = threading.Lock()
        #: What flushes the worker's span and log processors into this outbox, at each run's teardown: a run's
        #: spans and records travel with its record, also when the controller stops the workers at once.
        self.per_run: list[Callable[[], Any]] = []
        #: What flushes its metric reader too, at its end.
        self.flushes: list[Callable[[], Any]] = []

    def add(self, kind: str, body: bytes, count: int) -> bool:
        with self._lock:
            self._items.append((kind, body, count))
        return True

    def take(self) -> list[tuple[str, bytes, int]]:
        with self._lock:
            items, self._items = self._items, []
        return items

    def run_finished(self, item: Any, run: CurrentRun) -> None:
        for flush in self.per_run:
            flush()
        items = self.take()
        if items:
            run.report_extras[ATTRIBUTE] = items

    def leftover(self) -> Any:
        for flush in (*self.per_run, *self.flushes):
            try:
                flush()
            except Exception:  # pragma: no cover - a worker's end must not fail on its telemetry
                pass
        return self.take() or None
