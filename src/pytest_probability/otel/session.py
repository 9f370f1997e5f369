"""Export in the aggregating process: the session span, run spans, metrics.

One :class:`Exporter` per session, in the process that aggregates (a serial
session, or the xdist controller). Each run span arrives already encoded
(:func:`~pytest_probability.otel.encode.span_encoder`: OTLP protobuf for the
endpoint, OTLP/JSON for the file),
straight from the run in a serial session or on its teardown report under
xdist, where the workers did the encoding. Encoded spans are bytes and str,
which the garbage collector never has to scan while they wait for their
batch. A background thread assembles batches into requests
(:class:`~pytest_probability.otel.encode.TraceEncoder`) and hands them to the
sinks: the OTLP endpoint (:mod:`pytest_probability.otel.transport`,
HTTP/protobuf or gRPC) and/or the OTLP JSON-lines file. The SDK is not
imported at all (unless OTEL_EXPERIMENTAL_RESOURCE_DETECTORS asks for its
resource detectors).

Reliability rules (docs/observability.md):

* exporting never changes an outcome or the exit status;
* the first failed network export opens a breaker: everything after it goes
  straight to the spill file, so a dead endpoint costs one request timeout;
* the end of the session waits at most ``--prob-otel-timeout`` in total for
  the last batches and the metrics; whatever was not confirmed sent by then
  is spilled too (a replay may then duplicate a batch; nothing is lost).
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any, Sequence

from .. import __version__
from ..rows import Summary
from . import metrics as metrics_module
from . import resource as resource_module
from . import transport
from .encode import TraceEncoder, span_encoder
from .metrics import MetricsBatch
from .options import OtelSettings
from .runspan import ERROR, Limits, SpanCore, new_trace_id, parse_traceparent

SCOPE_NAME = "pytest_probability"
#: A request holds at most BATCH_SIZE spans and, unless one span is larger,
#: BATCH_BYTES of them: under the 4 MiB a gRPC server (the Collector) takes by default.
BATCH_SIZE = 2048
BATCH_BYTES = 2 << 20
BATCH_WAIT = 0.5


def _size(span: Encoded) -> int:
    return len(span) if type(span) in (bytes, str) else len(span[0])


def split_batches(spans: list[Encoded]) -> list[list[Encoded]]:
    """Split into requests of at most BATCH_SIZE spans and (a lone larger span aside) BATCH_BYTES."""
    out: list[list[Encoded]] = []
    current: list[Encoded] = []
    size = 0
    for span in spans:
        n = _size(span)
        if current and (len(current) >= BATCH_SIZE or size + n > BATCH_BYTES):
            out.append(current)
            current, size = [], 0
        current.append(span)
        size += n
    if current:
        out.append(current)
    return out

#: An encoded span: bytes (protobuf), str (OTLP/JSON) or both as a pair; see
#: :func:`pytest_probability.otel.encode.span_encoder`.
Encoded = Any


def _protobuf(span: Encoded) -> bytes:
    return span if type(span) is bytes else span[0]


def _json(span: Encoded) -> str | None:
    if type(span) is str:
        return span
    return None if type(span) is bytes else span[1]


class ExportFailed(Exception):
    pass


class OtlpSink:
    """The OTLP endpoint, one sender per signal."""

    def __init__(self, settings: OtelSettings, encoder: TraceEncoder, env: Any) -> None:
        self.encoder = encoder
        self.timeout = settings.timeout
        self.senders = {
            kind: transport.Sender(
                transport.target_from_env(
                    kind,
                    settings.metrics_protocol if kind == "metrics" else settings.protocol,
                    env,
                    endpoint=settings.metrics_endpoint if kind == "metrics" else settings.traces_endpoint,
                    default_timeout=settings.timeout,
                )
            )
            for kind in ("traces", "metrics")
        }
        for sender in self.senders.values():
            sender.prepare()

    def _send(self, kind: str, body: bytes, deadline: float | None) -> None:
        sender = self.senders[kind]
        if deadline is None:
            deadline = time.monotonic() + sender.target.timeout
        try:
            sender.send_with_retry(body, deadline)
        except transport.OtlpSendError as exc:
            raise ExportFailed(exc.reason) from None

    def export_spans(self, spans: Sequence[Encoded]) -> None:
        self._send("traces", self.encoder.protobuf_request([_protobuf(span) for span in spans]), None)

    def export_metrics(self, batch: MetricsBatch, deadline: float) -> None:
        self._send("metrics", self.encoder.metrics_protobuf(batch.metrics, batch.start_ns, batch.now_ns), deadline)

    def shutdown(self) -> None:
        for sender in self.senders.values():
            try:
                sender.close()
            except Exception:  # pragma: no cover - shutdown must not fail the session
                pass


class JsonLinesSink:
    """OTLP JSON lines, one request per line (the Collector's file exporter format)."""

    def __init__(self, path: Path, encoder: TraceEncoder) -> None:
        self.path = path
        self.encoder = encoder
        self._handle = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed in shutdown()
        self._lock = threading.Lock()
        self.lines = 0

    def _write(self, lines: Sequence[str]) -> None:
        with self._lock:
            for line in lines:
                self._handle.write(line + "\n")
            self._handle.flush()
            self.lines += len(lines)

    def export_spans(self, spans: Sequence[Encoded]) -> None:
        if spans:
            self._write([self.encoder.json_request([_json(span) for span in spans])])

    def export_metrics(self, batch: MetricsBatch) -> None:
        self._write([self.encoder.metrics_json_line(batch.metrics, batch.start_ns, batch.now_ns)])

    def shutdown(self) -> None:
        with self._lock:
            self._handle.close()


class Spill(JsonLinesSink):
    """Telemetry the endpoint did not take; created on first use."""

    def __init__(self, path: Path, encoder: TraceEncoder) -> None:  # noqa: D107 - lazy: no file unless needed
        self.path = path
        self.encoder = encoder
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

    def export_spans(self, spans: Sequence[Encoded]) -> None:
        if not spans:
            return
        if _json(spans[0]) is not None:
            line = self.encoder.json_request([_json(span) for span in spans])
        else:  # only protobuf was made (no file sink): convert, on this failure path only
            from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

            from . import otlp_json

            request = ExportTraceServiceRequest.FromString(self.encoder.protobuf_request([_protobuf(span) for span in spans]))
            line = otlp_json.request_to_line(request)
        self._write([line])
        self.spans += len(spans)

    def export_metrics(self, batch: MetricsBatch) -> None:
        super().export_metrics(batch)
        self.points += batch.points

    def shutdown(self) -> None:
        with self._lock:
            if self._handle is not None:
                self._handle.close()


class Exporter:
    """Everything the aggregating process exports in one session."""

    def __init__(self, settings: OtelSettings, root: Path, env: Any = None) -> None:
        env = os.environ if env is None else env
        self.settings = settings
        self.resource = resource_module.build(settings.suite, root, env)
        self.encoder = TraceEncoder(dict(self.resource.attributes), self.resource.schema_url or "", SCOPE_NAME, __version__)
        self.sinks: list[JsonLinesSink] = []
        if settings.file is not None:
            self.sinks.append(JsonLinesSink(settings.file, self.encoder))
        self.network: OtlpSink | None = OtlpSink(settings, self.encoder, env) if settings.network else None
        spill_path = settings.spill or root / ".pytest-probability" / f"otel-spill-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.jsonl"
        self.spill = Spill(spill_path, self.encoder)
        self.failure: str = ""
        self.file_failure: str = ""
        # Spans wait in a list; the export thread wakes once per batch or every
        # BATCH_WAIT seconds, not once per span (a per-span queue cost ~10% of a run).
        self.encode = span_encoder(settings.network, settings.file is not None)
        self._buffer: list[Encoded] = []
        self._buffer_bytes = 0
        self._lock = threading.Lock()
        self._wake = threading.Event()
        # Under _lock: the batches the thread has taken but not started, the one
        # it is exporting, and whether that one is in the files yet. Once
        # _abandoned (the deadline passed), the thread starts nothing more and
        # writes no file: finish() owns what is left.
        self._pending: list[list[Encoded]] = []
        self._inflight: list[Encoded] = []
        self._inflight_in_files = False
        self._files_lock = threading.Lock()
        self._files_closed = False
        self._closing = threading.Event()
        self._abandoned = False
        self._thread = threading.Thread(target=self._loop, name="pytest-probability-otel", daemon=True)
        self._thread.start()
        self.start_time_ns = time.time_ns()
        # Always sampled: an unsampled TRACEPARENT from CI must not silence the export.
        parent = parse_traceparent(settings.traceparent)
        trace_id, parent_id = parent if parent else (None, 0)
        self.session_span = SpanCore(
            "probability.session", trace_id or new_trace_id(), parent_id, parent_remote=bool(parent), limits=Limits.from_env()
        )
        self.session_span.set_attribute("test.suite.name", settings.suite)
        self.traceparent = self.session_span.traceparent

    @property
    def session_ids(self) -> tuple[int, int]:
        return self.session_span.trace_id, self.session_span.span_id

    # -- spans ---------------------------------------------------------------

    def add_span(self, span: dict[str, Any]) -> None:
        """A finished span's wire form, from this process."""
        self.add(self.encode(span))

    def add(self, span: Encoded) -> None:
        """An encoded span (from this process, or from an xdist worker's report)."""
        with self._lock:
            self._buffer.append(span)
            self._buffer_bytes += _size(span)
            full = len(self._buffer) >= BATCH_SIZE or self._buffer_bytes >= BATCH_BYTES
        if full:
            self._wake.set()

    def _loop(self) -> None:
        while True:
            self._wake.wait(BATCH_WAIT)
            self._wake.clear()
            closing = self._closing.is_set()
            with self._lock:
                taken, self._buffer, self._buffer_bytes = self._buffer, [], 0
                self._pending = split_batches(taken)
            while True:
                with self._lock:
                    if self._abandoned or not self._pending:
                        self._inflight, self._pending = [], []
                        break
                    batch = self._inflight = self._pending.pop(0)
                    self._inflight_in_files = False
                try:
                    self._export_spans(batch)
                except Exception as exc:  # the spill file itself failed: nothing more to do
                    self.file_failure = self.file_failure or f"{self.spill.path}: {exc}"
            if closing or self._abandoned:
                with self._lock:
                    if self._abandoned or not self._buffer:
                        return

    def _write_files_locked(self, batch: Sequence[Encoded]) -> None:
        """Write to the OTLP files, with _files_lock held; nothing once finish() closed them."""
        if self._files_closed:
            return
        for sink in self.sinks:
            try:
                sink.export_spans(batch)
            except Exception as exc:  # a file that became unwritable
                self.file_failure = self.file_failure or f"{sink.path}: {exc}"

    def _export_spans(self, batch: Sequence[Encoded]) -> None:
        with self._files_lock:
            self._write_files_locked(batch)
            with self._lock:  # still holding _files_lock: finish() sees the files and the flag agree
                self._inflight_in_files = True
        if self.network is None or self._abandoned:
            return
        if not self.failure:
            try:
                self.network.export_spans(batch)
                return
            except Exception as exc:
                self.failure = f"traces: {exc}"
        if not self._abandoned:
            self.spill.export_spans(batch)

    # -- session end ---------------------------------------------------------

    def _end_session_span(self, summary: Summary, exitstatus: int) -> None:
        counts = summary.counts
        span = self.session_span
        attributes = {
            "test.suite.run.status": "success" if exitstatus == 0 else "failure",
            "probability.runs": counts.total + counts.skipped,
            "probability.passes": counts.passes,
            "probability.fails": counts.fails,
            "probability.errors": counts.errors,
            "probability.skipped": counts.skipped,
            "probability.cases": len(summary.rows),
        }
        if counts.pass_rate is not None:
            attributes["probability.pass_fraction"] = counts.pass_rate
        if summary.has_cost:
            attributes["probability.cost"] = summary.cost
        span.set_attributes(attributes)
        if exitstatus != 0:
            span.force_status(ERROR, f"exit status {exitstatus}")
        span.end()
        self.add_span(span.to_dict())

    def finish(self, summary: Summary, exitstatus: int, extra_series: Any = ()) -> list[str]:
        """End the session span, emit metrics, drain within the time budget; return summary notes."""
        self._end_session_span(summary, exitstatus)
        batches = metrics_module.collect(summary, extra_series, self.start_time_ns)
        # Building the metrics is the session's own work; the export budget starts now.
        deadline = time.monotonic() + self.settings.timeout
        done = threading.Event()
        sent: list[Any] = []

        # The file gets the metrics first: a hanging endpoint must not keep them out of it.
        for batch in batches:
            for sink in self.sinks:
                try:
                    sink.export_metrics(batch)
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
                        self.network.export_metrics(batch, deadline)
                        sent.append(batch)
                    except Exception as exc:
                        self.failure = f"metrics: {exc}"
            done.set()

        worker = threading.Thread(target=drain, name="pytest-probability-otel-finish", daemon=True)
        worker.start()
        worker.join(max(0.0, deadline - time.monotonic()))
        timed_out = not done.is_set()
        if timed_out:
            self.failure = self.failure or f"no answer within {self.settings.timeout:g} s"
            with self._lock:
                self._abandoned = True  # the thread starts no other batch
                inflight = list(self._inflight)
                unsent = [span for batch in self._pending for span in batch] + self._buffer
                self._pending, self._buffer, self._buffer_bytes = [], [], 0
            with self._files_lock:
                # The in-flight batch may not be in the files yet; after this, the thread writes none.
                with self._lock:
                    unwritten = unsent if self._inflight_in_files else inflight + unsent
                for batch in split_batches(unwritten):
                    self._write_files_locked(batch)
                self._files_closed = True
            # A batch in flight may still arrive: a replay can then duplicate it, nothing is lost.
            for batch in split_batches(inflight + unsent):
                self.spill.export_spans(batch)
        if self.network is not None:
            for batch in batches:
                if not any(batch is done_batch for done_batch in sent):
                    self.spill.export_metrics(batch)
        return self._close(timed_out)

    def _close(self, timed_out: bool) -> list[str]:
        with self._files_lock:
            self._files_closed = True
            for sink in self.sinks:
                sink.shutdown()
        self.spill.shutdown()
        if self.network is not None and not timed_out:
            self.network.shutdown()
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
