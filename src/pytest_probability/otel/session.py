"""Export in the aggregating process: the session span, run spans, metrics.

One :class:`Exporter` per session, in the process that aggregates (a serial
session, or the xdist controller). Run spans arrive on teardown reports and
are batched by a background thread to the sinks: the OTLP endpoint (the
SDK's own HTTP/protobuf or gRPC exporter) and/or the OTLP JSON-lines file.

Reliability rules (docs/observability.md):

* exporting never changes an outcome or the exit status;
* the first failed network export opens a breaker: everything after it goes
  straight to the spill file, so a dead endpoint costs one exporter timeout;
* the end of the session waits at most ``--prob-otel-timeout`` in total for
  the last batches and the metrics; whatever was not confirmed sent by then
  is spilled too (a replay may then duplicate a batch; nothing is lost).
"""

from __future__ import annotations

import logging
import os
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any, Callable, Sequence

from opentelemetry import trace
from opentelemetry.sdk.metrics.export import MetricExportResult, MetricsData
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.sdk.trace.sampling import ALWAYS_ON
from opentelemetry.trace import Status, StatusCode

from .. import __version__
from ..rows import Summary
from . import metrics as metrics_module
from . import otlp_json, resource as resource_module, spans as spans_module
from .options import OtelSettings

BATCH_SIZE = 512
BATCH_WAIT = 0.5
_EXPORTER_LOGGERS = ("opentelemetry.exporter.otlp", "opentelemetry.exporter", "opentelemetry.sdk")


class _LastError(logging.Handler):
    """Keeps the last warning the OTLP exporters logged, as the failure reason."""

    def __init__(self, secrets: Sequence[str]) -> None:
        super().__init__(logging.WARNING)
        self.secrets = [s for s in secrets if len(s) >= 4]
        self.message = ""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
        except Exception:  # pragma: no cover - a broken log call
            return
        for secret in self.secrets:
            text = text.replace(secret, "***")
        if not self.message:  # the first one says why (later ones: "giving up")
            self.message = " ".join(text.split())[:300]


def _header_values(env: Any) -> list[str]:
    values = []
    for name in ("OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_METRICS_HEADERS"):
        for item in env.get(name, "").split(","):
            _, _, value = item.partition("=")
            if value.strip():
                values.append(value.strip())
                values.append(urllib.parse.unquote(value.strip()))  # as sent, and so as logged
    return values


def exporter_timeout(budget: float, env: Any = None) -> float:
    """Per-request timeout: OTEL_EXPORTER_OTLP_TIMEOUT (ms, per spec) when set and shorter than the budget."""
    env = os.environ if env is None else env
    try:
        configured = float(env.get("OTEL_EXPORTER_OTLP_TIMEOUT", "")) / 1000.0
    except ValueError:
        return budget
    return min(budget, configured) if configured > 0 else budget


class ExportFailed(Exception):
    pass


class OtlpSink:
    """The real OTLP exporters of the SDK, for both signals."""

    network = True

    def __init__(self, settings: OtelSettings, log: _LastError) -> None:
        self.log = log
        kwargs: dict[str, Any] = {"timeout": exporter_timeout(settings.timeout)}
        if settings.protocol == "grpc":
            from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

            if settings.traces_endpoint:
                insecure = settings.traces_endpoint.startswith("http://")
                self.spans = OTLPSpanExporter(endpoint=settings.traces_endpoint, insecure=insecure, **kwargs)
                self.metrics = OTLPMetricExporter(endpoint=settings.metrics_endpoint, insecure=insecure, **kwargs)
            else:
                self.spans = OTLPSpanExporter(**kwargs)
                self.metrics = OTLPMetricExporter(**kwargs)
        else:
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            self.spans = OTLPSpanExporter(endpoint=settings.traces_endpoint, **kwargs)
            self.metrics = OTLPMetricExporter(endpoint=settings.metrics_endpoint, **kwargs)

    def export_spans(self, spans: Sequence[ReadableSpan]) -> None:
        self.log.message = ""
        if self.spans.export(spans) is not SpanExportResult.SUCCESS:
            raise ExportFailed(self.log.message or "the exporter reported a failure")

    def export_metrics(self, data: MetricsData, timeout: float) -> None:
        self.log.message = ""
        if self.metrics.export(data, timeout_millis=max(1.0, timeout * 1000)) is not MetricExportResult.SUCCESS:
            raise ExportFailed(self.log.message or "the exporter reported a failure")

    def shutdown(self) -> None:
        for exporter in (self.spans, self.metrics):
            try:
                exporter.shutdown()
            except Exception:  # pragma: no cover - shutdown must not fail the session
                pass


class JsonLinesSink:
    """OTLP JSON lines, one request per line (the Collector's file exporter format)."""

    network = False

    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed in shutdown()
        self._lock = threading.Lock()
        self.lines = 0

    def _write(self, lines: Sequence[str]) -> None:
        with self._lock:
            for line in lines:
                self._handle.write(line + "\n")
            self._handle.flush()
            self.lines += len(lines)

    def export_spans(self, spans: Sequence[ReadableSpan]) -> None:
        self._write(otlp_json.spans_to_lines(spans))

    def export_metrics(self, data: MetricsData, timeout: float) -> None:
        self._write(otlp_json.metrics_to_lines(data))

    def shutdown(self) -> None:
        with self._lock:
            self._handle.close()


class Spill(JsonLinesSink):
    """Telemetry the endpoint did not take; created on first use."""

    def __init__(self, path: Path) -> None:  # noqa: D107 - lazy: no file unless needed
        self.path = path
        self._handle = None  # type: ignore[assignment]
        self._lock = threading.Lock()
        self.lines = 0
        self.spans = 0
        self.points = 0

    def _write(self, lines: Sequence[str]) -> None:
        with self._lock:
            if self._handle is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._handle = open(self.path, "a", encoding="utf-8")  # noqa: SIM115
        super()._write(lines)

    def export_spans(self, spans: Sequence[ReadableSpan]) -> None:
        super().export_spans(spans)
        self.spans += len(spans)

    def export_metrics(self, data: MetricsData, timeout: float) -> None:
        super().export_metrics(data, timeout)
        self.points += sum(
            len(m.data.data_points) for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics
        )

    def shutdown(self) -> None:
        with self._lock:
            if self._handle is not None:
                self._handle.close()


class _ToQueue(SpanProcessor):
    def __init__(self, add: Callable[[ReadableSpan], None]) -> None:
        self.add = add

    def on_end(self, span: ReadableSpan) -> None:
        self.add(span)


class Exporter:
    """Everything the aggregating process exports in one session."""

    def __init__(self, settings: OtelSettings, root: Path, env: Any = None) -> None:
        env = os.environ if env is None else env
        self.settings = settings
        self.resource: Resource = resource_module.build(settings.suite, root, env)
        self.log = _LastError(_header_values(env))
        self._loggers = [(logging.getLogger(name), logging.getLogger(name).propagate) for name in _EXPORTER_LOGGERS[:1]]
        for logger, _ in self._loggers:
            logger.addHandler(self.log)
            logger.propagate = False
        self.sinks: list[Any] = []
        if settings.file is not None:
            self.sinks.append(JsonLinesSink(settings.file))
        self.network: OtlpSink | None = OtlpSink(settings, self.log) if settings.network else None
        spill_path = settings.spill or root / ".pytest-probability" / f"otel-spill-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.jsonl"
        self.spill = Spill(spill_path)
        self.failure: str = ""
        self.file_failure: str = ""
        self.exported_spans = 0
        # Spans wait in a list; the export thread wakes once per batch or every
        # BATCH_WAIT seconds, not once per span (a per-span queue cost ~10% of a run).
        self._buffer: list[ReadableSpan] = []
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._pending: list[ReadableSpan] = []
        self._inflight: list[ReadableSpan] = []
        self._closing = threading.Event()
        self._abandoned = False
        self._thread = threading.Thread(target=self._loop, name="pytest-probability-otel", daemon=True)
        self._thread.start()
        self.start_time_ns = time.time_ns()
        # Always sampled: an unsampled TRACEPARENT from CI must not silence the export.
        provider = TracerProvider(resource=self.resource, sampler=ALWAYS_ON)
        provider.add_span_processor(_ToQueue(self.add))
        self._tracer = provider.get_tracer(spans_module.SCOPE_NAME, __version__)
        self.session_span = self._tracer.start_span(
            "probability.session",
            context=spans_module.context_from_traceparent(settings.traceparent),
            attributes={"test.suite.name": settings.suite},
        )
        self.traceparent = spans_module.traceparent_of(self.session_span)

    # -- spans ---------------------------------------------------------------

    def add(self, span: ReadableSpan) -> None:
        with self._lock:
            self._buffer.append(span)
            full = len(self._buffer) >= BATCH_SIZE
        if full:
            self._wake.set()

    def add_report(self, report: Any) -> None:
        for span in spans_module.spans_from_report(report, self.resource):
            self.add(span)
        if hasattr(report, spans_module.REPORT_ATTRIBUTE):
            delattr(report, spans_module.REPORT_ATTRIBUTE)  # the terminal reporter keeps reports

    def _loop(self) -> None:
        while True:
            self._wake.wait(BATCH_WAIT)
            self._wake.clear()
            closing = self._closing.is_set()
            with self._lock:
                taken, self._buffer = self._buffer, []
            for start in range(0, len(taken), BATCH_SIZE):
                self._inflight = taken[start : start + BATCH_SIZE]
                self._pending = taken[start + BATCH_SIZE :]
                try:
                    self._export_spans(self._inflight)
                except Exception as exc:  # the spill file itself failed: nothing more to do
                    self.file_failure = self.file_failure or f"{self.spill.path}: {exc}"
            self._inflight, self._pending = [], []
            if closing:
                with self._lock:
                    if not self._buffer:
                        return

    def _export_spans(self, batch: Sequence[ReadableSpan]) -> None:
        for sink in self.sinks:
            try:
                sink.export_spans(batch)
            except Exception as exc:  # a file that became unwritable
                self.file_failure = self.file_failure or f"{sink.path}: {exc}"
        if self.network is None:
            return
        if self._abandoned:
            return
        if not self.failure:
            try:
                self.network.export_spans(batch)
                self.exported_spans += len(batch)
                return
            except Exception as exc:
                self.failure = f"traces: {exc}"
        if not self._abandoned:
            self.spill.export_spans(batch)

    # -- session end ---------------------------------------------------------

    def finish(self, summary: Summary, exitstatus: int, extra_series: Any = ()) -> list[str]:
        """End the session span, emit metrics, drain within the time budget; return summary notes."""
        counts = summary.counts
        span = self.session_span
        span.set_attribute("test.suite.run.status", "success" if exitstatus == 0 else "failure")
        span.set_attribute("probability.runs", counts.total + counts.skipped)
        span.set_attribute("probability.passes", counts.passes)
        span.set_attribute("probability.fails", counts.fails)
        span.set_attribute("probability.errors", counts.errors)
        span.set_attribute("probability.skipped", counts.skipped)
        span.set_attribute("probability.cases", len(summary.rows))
        if counts.pass_rate is not None:
            span.set_attribute("probability.pass_fraction", counts.pass_rate)
        if summary.has_cost:
            span.set_attribute("probability.cost", summary.cost)
        if exitstatus != 0:
            span.set_status(Status(StatusCode.ERROR, f"exit status {exitstatus}"))
        span.end()

        batches = metrics_module.collect(summary, self.resource, extra_series, self.start_time_ns)
        # Building the metrics is the session's own work; the export budget starts now.
        deadline = time.monotonic() + self.settings.timeout
        done = threading.Event()
        sent: list[MetricsData] = []

        # The file gets the metrics first: a hanging endpoint must not keep them out of it.
        for batch in batches:
            for sink in self.sinks:
                try:
                    sink.export_metrics(batch, 0)
                except Exception as exc:
                    self.file_failure = self.file_failure or f"{sink.path}: {exc}"

        def drain() -> None:
            self._closing.set()
            self._wake.set()
            self._thread.join()
            if self.network is not None:
                for batch in batches:
                    if self.failure:
                        break
                    try:
                        self.network.export_metrics(batch, max(0.001, deadline - time.monotonic()))
                        sent.append(batch)
                    except Exception as exc:
                        self.failure = f"metrics: {exc}"
            done.set()

        worker = threading.Thread(target=drain, name="pytest-probability-otel-finish", daemon=True)
        worker.start()
        worker.join(max(0.0, deadline - time.monotonic()))
        timed_out = not done.is_set()
        if timed_out:
            self._abandoned = True
            self.failure = self.failure or f"no answer within {self.settings.timeout:g} s"
            unsent = list(self._pending) + self._drain_queue()  # the in-flight batch is in the file already
            if unsent:
                for sink in self.sinks:
                    try:
                        sink.export_spans(unsent)
                    except Exception as exc:
                        self.file_failure = self.file_failure or f"{sink.path}: {exc}"
            leftover = list(self._inflight) + unsent
            if leftover:
                self.spill.export_spans(leftover)
        if self.network is not None:
            for batch in batches:
                if not any(batch is done_batch for done_batch in sent):
                    self.spill.export_metrics(batch, 0)
        return self._close(timed_out)

    def _drain_queue(self) -> list[ReadableSpan]:
        with self._lock:
            spans, self._buffer = self._buffer, []
        return spans

    def _close(self, timed_out: bool) -> list[str]:
        for sink in self.sinks:
            sink.shutdown()
        self.spill.shutdown()
        if self.network is not None and not timed_out:
            self.network.shutdown()
        if not timed_out:
            # An abandoned export thread may still log its failure later; keep it quiet:
            # the summary line already said what failed.
            for logger, propagate in self._loggers:
                logger.removeHandler(self.log)
                logger.propagate = propagate
        notes = list(self.settings.notes)
        if self.failure:
            kept = f"{self.spill.spans} spans and {self.spill.points} metric points kept in {self.spill.path}"
            notes.append(
                f"OpenTelemetry: export to {self.settings.display_endpoint} failed ({self.failure}); {kept}; "
                f"replay: python -m pytest_probability.otel replay {self.spill.path}"
            )
        if self.file_failure:
            notes.append(f"OpenTelemetry: writing the OTLP file failed: {self.file_failure}")
        return notes


def current_span_traceparent(span: trace.Span) -> str:
    return spans_module.traceparent_of(span)
