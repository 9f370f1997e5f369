"""The other signals: the plugin's SDK ``MeterProvider`` and ``LoggerProvider``.

Instrumentation (the GenAI instrumentation's ``gen_ai.client.token.usage`` and
``gen_ai.client.operation.duration`` histograms, its events, emitted as log
records through the logs API) records into the global providers. When the
process has none, the plugin installs SDK ones on the session's resource, so
those metrics and log records go where the run spans go: the endpoint, the
OTLP file, the spill file and ``replay``. A provider the user set first stays
in charge of its signal; the plugin then installs none for it.

* **Metrics**: a ``MeterProvider`` with one ``InMemoryMetricReader`` (the
  temporality and histogram aggregation the SDK's OTLP exporters prefer,
  from ``OTEL_EXPORTER_OTLP_METRICS_*``), collected once, at the end of the
  process that made them, and encoded with the SDK's ``encode_metrics``. The
  SDK's exemplar filter (``OTEL_METRICS_EXEMPLAR_FILTER``, default
  ``trace_based``) gives a measurement made inside a run the run span's ids.
* **Log records**: a ``LoggerProvider`` whose one processor hands each record
  on (the SDK takes the trace and span ids from the current context, the run
  span's during a run): in the aggregating process to the pipeline; on an xdist
  worker to a buffer that the run's teardown report empties (encoded with the
  SDK's ``encode_logs``), the rest at the worker's end.

Under xdist a worker's metrics travel in its ``workeroutput`` (collected at its
end), its log records on teardown reports: no worker talks to the network.
"""

from __future__ import annotations

import copy
import threading
from typing import Any, Callable

from opentelemetry import metrics

from ..model.run import CurrentRun
from ..protocols import Link, RunObserver
from .pipeline import encode_logs
from .spans import is_content

#: Teardown-report attribute (and ``workeroutput`` key) of a worker's encoded log records: (bytes, count).
LOGS_ATTRIBUTE = "prob_otel_logs"
#: ``workeroutput`` key of a worker's encoded instrumentation metrics: (bytes, point count).
METRICS_ATTRIBUTE = "prob_otel_metrics"


def make_meter_provider(resource: Any) -> Any | None:
    """The reader of the plugin's global MeterProvider, or None when a global one is already set."""
    from opentelemetry.exporter.otlp.proto.common._internal.metrics_encoder import OTLPMetricExporterMixin  # metrics on
    from opentelemetry.sdk.metrics import MeterProvider  # metrics on
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # metrics on

    if not _unset(metrics.get_meter_provider()):
        return None
    mixin = OTLPMetricExporterMixin()  # the SDK's OTLP exporters' reading of the preference variables
    reader = InMemoryMetricReader(
        preferred_temporality=mixin._get_temporality({}),
        preferred_aggregation=mixin._get_aggregation({}),
    )
    provider = MeterProvider(metric_readers=[reader], resource=resource)
    metrics.set_meter_provider(provider)
    if metrics.get_meter_provider() is not provider:  # pragma: no cover - set by someone else meanwhile
        return None
    return reader


def collect_metrics(reader: Any) -> tuple[bytes, int] | None:
    """What the reader's provider recorded so far, as one serialized request and its point count."""
    if reader is None:
        return None
    from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics  # metrics on

    try:
        data = reader.get_metrics_data()
    except Exception:  # pragma: no cover - the SDK's collection must not fail the session
        return None
    if data is None:
        return None
    points = sum(
        len(metric.data.data_points)
        for resource_metrics in data.resource_metrics
        for scope_metrics in resource_metrics.scope_metrics
        for metric in scope_metrics.metrics
    )
    if not points:
        return None
    return encode_metrics(data).SerializeToString(), points


def _strip_content(record: Any) -> None:
    """A log record (a copy) without captured message content: the content attributes, and the body of a
    GenAI event (``gen_ai.*``: the older instrumentations' content)."""
    attributes = record.attributes
    if attributes and any(is_content(key) for key in attributes):
        record.attributes = {k: v for k, v in attributes.items() if not is_content(k)}
    if record.body is not None and str(getattr(record, "event_name", "") or "").startswith("gen_ai."):
        record.body = None


def make_logger_provider(resource: Any, deliver: Callable[[Any], None], capture: bool = True) -> Any | None:
    """The plugin's global LoggerProvider handing each record to ``deliver``; None when one is set.
    ``capture`` False (``--prob-otel-capture=ids``): records go without captured message content (the
    attributes of :data:`~.spans.CONTENT_ATTRIBUTES`, and a GenAI event's body)."""
    from opentelemetry import _logs  # logs on
    from opentelemetry.sdk._logs import LogRecordProcessor, LoggerProvider, ReadableLogRecord  # logs on

    if not _unset(_logs.get_logger_provider()):
        return None

    class Collect(LogRecordProcessor):
        """Hands each emitted log record on, frozen as the SDK's batch processor freezes it."""

        def on_emit(self, log_record: Any) -> None:
            record = copy.copy(log_record.log_record)
            if not capture:
                _strip_content(record)
            deliver(ReadableLogRecord(
                log_record=record, resource=log_record.resource or resource,
                instrumentation_scope=log_record.instrumentation_scope, limits=log_record.limits,
            ))  # fmt: skip

        def shutdown(self) -> None:
            pass

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return True

    provider = LoggerProvider(resource=resource)
    provider.add_log_record_processor(Collect())
    _logs.set_logger_provider(provider)
    if _logs.get_logger_provider() is not provider:  # pragma: no cover - set by someone else meanwhile
        return None
    return provider


def _unset(provider: Any) -> bool:
    """Whether a global provider is still the API's proxy one, i.e. nobody set one (not even a no-op one)."""
    name = type(provider).__name__
    return name.startswith(("_Proxy", "Proxy"))


class LogBuffer:
    """Log records emitted in an xdist worker, until the next teardown report takes them."""

    def __init__(self) -> None:
        self._records: list[Any] = []
        self._lock = threading.Lock()

    def add(self, record: Any) -> None:
        with self._lock:
            self._records.append(record)

    def take(self) -> tuple[bytes, int] | None:
        with self._lock:
            records, self._records = self._records, []
        if not records:
            return None
        return encode_logs(records), len(records)


class RunLogs(RunObserver):
    """On an xdist worker: the log records emitted so far go on each run's teardown report."""

    def __init__(self, buffer: LogBuffer) -> None:
        self.buffer = buffer

    def run_finished(self, item: Any, run: CurrentRun) -> None:
        encoded = self.buffer.take()
        if encoded is not None:
            run.report_extras[LOGS_ATTRIBUTE] = encoded


class WorkerLogs(Link):
    """An xdist worker's side of the log records: what was emitted after its last run, in its output."""

    attribute = LOGS_ATTRIBUTE

    def __init__(self, buffer: LogBuffer) -> None:
        self.buffer = buffer

    def leftover(self) -> Any:
        return self.buffer.take()


class WorkerMetrics(Link):
    """An xdist worker's side of the instrumentation metrics: collected at its end, in its output."""

    attribute = METRICS_ATTRIBUTE

    def __init__(self, reader: Any) -> None:
        self.reader = reader

    def leftover(self) -> Any:
        return collect_metrics(self.reader)


class ShippedLogs(Link):
    """The aggregating process's side: workers' encoded log records, off reports and out of their output."""

    attribute = LOGS_ATTRIBUTE

    def __init__(self, add: Callable[[Any], None]) -> None:
        self.add = add

    def receive(self, value: Any) -> None:
        self.add(tuple(value))


class ShippedMetrics(Link):
    """The aggregating process's side: each worker's instrumentation metrics, out of its output."""

    attribute = METRICS_ATTRIBUTE

    def __init__(self, add: Callable[[Any], None]) -> None:
        self.add = add

    def receive(self, value: Any) -> None:
        self.add(tuple(value))
