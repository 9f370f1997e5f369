"""Export in the aggregating process: spans, metrics and log records to the endpoint, the file and the spill.

One :class:`Pipeline` per session, in the process that aggregates (a serial
session, or the xdist controller). Spans arrive two ways: as SDK
``ReadableSpan`` objects from this process's tracer provider (its span
processor, :class:`Collect`), or already encoded by an xdist worker (a
serialized ``ExportTraceServiceRequest``, from the SDK's own encoder). A
background thread encodes and batches them (``OTEL_BSP_MAX_EXPORT_BATCH_SIZE``
spans, ``OTEL_BSP_SCHEDULE_DELAY``, as the SDK's batch processor reads them)
and sends each request with :class:`~pytest_probability.otel.send.Sender`.
Log records (from the plugin's ``LoggerProvider``, :mod:`~pytest_probability.otel.signals`)
take the same way: SDK records from this process, or encoded by a worker (a
serialized ``ExportLogsServiceRequest``), batched by the same thread.

What the SDK does not give, and this module adds:

* one total deadline for the session end (``--prob-otel-timeout``);
* one breaker per signal: the first failed traces request sends every later
  span batch to the spill file, and leaves the metrics alone (and the other
  way round);
* a partial success counts as a success: its rejected spans or points are
  counted and reported, never spilled and never retried;
* the spill file and the OTLP JSON-lines file (:class:`Lines`), whose every
  line is written whole with one ``O_APPEND`` write.
"""

from __future__ import annotations

import importlib
import os
import stat
import threading
import time
from pathlib import Path
from typing import Any, Callable

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.sdk.trace import SpanProcessor

from . import otlp_json
from .options import OtelSettings
from .send import Deferred, Result, Sender

#: A request holds at most this much encoded data, unless one span is larger:
#: under the 4 MiB a gRPC server (the Collector) takes by default.
BATCH_BYTES = 2 << 20
#: The most the session's end waits past its deadline for the answer to a request in flight.
GRACE = 2.0


class Lines:
    """An OTLP JSON-lines file: one request per line, each line written whole by one ``O_APPEND`` write.

    ``fresh`` (the OTLP file): the session's lines go to ``PATH.partial`` beside it (a symlink's
    target), renamed over ``PATH`` at :meth:`close`, so a previous file stays whole until this session
    has a file to put in its place: a session that crashes or is killed leaves it as it was (and its
    own lines in ``PATH.partial``, until the next session starts). If another session is writing the
    same file right now (it holds the lock on ``PATH.partial``), both append whole lines to that one
    partial file and ``shared`` says so; the session that started it renames it. A FIFO or a device
    is written through. Not fresh (the spill file): appended to, created on the first line.
    """

    def __init__(self, path: Path, fresh: bool) -> None:
        self.path = path
        self.fresh = fresh
        self.shared = False
        self.lines = 0
        self.spans = 0
        self.points = 0
        self.logs = 0
        self._fd: int | None = None
        self._lock = threading.Lock()
        #: Where a fresh file's lines go until the end (None: written in place).
        self._partial: Path | None = None
        self._target: Path | None = None
        self._closed = False
        #: The first write that failed (a full disk, a file size limit): nothing more is written, and
        #: a fresh file is not put in place. What could not be written is counted.
        self.failure: OSError | None = None
        self.lost_spans = 0
        self.lost_points = 0
        self.lost_logs = 0
        if fresh:
            try:
                self._open()
            except OSError as exc:
                self.failure = exc

    def _open(self) -> int:
        if self._fd is None:
            if self.fresh:
                self._fd = self._open_fresh()
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        return self._fd

    def _open_fresh(self) -> int:
        try:
            special = not stat.S_ISREG(os.stat(self.path).st_mode)
        except OSError:
            special = False
        if special:  # a FIFO, /dev/stdout, /dev/null: written through, never replaced
            return os.open(self.path, os.O_WRONLY | os.O_APPEND)
        target = Path(os.path.realpath(self.path))
        partial = target.with_name(target.name + ".partial")
        target.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(20):
            fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            try:
                import fcntl  # POSIX only
            except ImportError:  # pragma: no cover - Windows: no concurrent-session detection
                os.ftruncate(fd, 0)
                break
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held until close
            except OSError:
                self.shared = True  # another session is writing it: append to its partial file
                return fd
            try:
                same = os.fstat(fd).st_ino == os.stat(partial).st_ino
            except OSError:
                same = False
            if same:
                os.ftruncate(fd, 0)  # a crashed session's leftover, or nothing
                break
            os.close(fd)  # the session we waited for renamed it into place meanwhile: start a new one
        else:  # pragma: no cover - twenty sessions finishing at once
            self.shared = True
            return fd
        self._partial, self._target = partial, target
        return fd

    def write(self, line: str, kind: str, count: int) -> None:
        """One request of ``count`` spans (``kind`` traces), metric points or log records (``logs``)."""
        data = (line + "\n").encode("utf-8")
        with self._lock:
            if self._closed:
                return  # a send that outlived the session's end: the end already kept its batch
            if self.failure is None:
                try:
                    self._write_line(data)
                except OSError as exc:
                    self.failure = exc
            if self.failure is not None:
                if kind == "traces":
                    self.lost_spans += count
                elif kind == "logs":
                    self.lost_logs += count
                else:
                    self.lost_points += count
                return
            self.lines += 1
            if kind == "traces":
                self.spans += count
            elif kind == "logs":
                self.logs += count
            else:
                self.points += count

    def _write_line(self, data: bytes) -> None:
        fd = self._open()
        size = None
        if not self.shared:
            try:
                size = os.fstat(fd).st_size
            except OSError:
                pass
        view = memoryview(data)
        try:
            while view:  # a regular file takes it in one write unless the disk is full
                view = view[os.write(fd, view) :]
        except OSError:
            if size is not None and len(view) < len(data):
                try:
                    os.ftruncate(fd, size)  # no line cut short: the file stays as it was before it
                except OSError:
                    pass
            raise

    def close(self) -> None:
        """Put a fresh file in place (when something was written to it); then no more lines."""
        with self._lock:
            self._closed = True
            if self._fd is None:
                return
            fd, self._fd = self._fd, None
            try:
                if self._partial is not None and self._target is not None:
                    if self.failure is None and os.fstat(fd).st_size:
                        try:
                            os.fsync(fd)
                        except OSError as exc:  # a full disk may only show here
                            self.failure = exc
                    if self.failure is not None or os.fstat(fd).st_size == 0:
                        os.unlink(self._partial)  # nothing (whole) to put in the previous file's place
                    else:
                        try:
                            os.chmod(self._partial, os.stat(self._target).st_mode & 0o777)
                        except OSError:
                            pass  # no previous file: the partial file's own mode
                        os.replace(self._partial, self._target)
            finally:
                os.close(fd)


class Collect(SpanProcessor):
    """The span processor of the plugin's tracer provider: hands each ended, sampled span on."""

    def __init__(self, deliver: Callable[[Any], None]) -> None:
        self.deliver = deliver

    def on_end(self, span: Any) -> None:
        if span.context.trace_flags.sampled:
            self.deliver(span)


def encode_spans(spans: list[Any]) -> bytes:
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans as sdk_encode  # once there are spans

    return sdk_encode(spans).SerializeToString()


def encode_logs(records: list[Any]) -> bytes:
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs as sdk_encode  # once there are logs

    return sdk_encode(records).SerializeToString()


#: Per signal: the request type's module and name, and its resource, scope and item fields.
_SHAPES = {
    "traces": ("opentelemetry.proto.collector.trace.v1.trace_service_pb2", "ExportTraceServiceRequest",
               "resource_spans", "scope_spans", "spans"),
    "logs": ("opentelemetry.proto.collector.logs.v1.logs_service_pb2", "ExportLogsServiceRequest",
             "resource_logs", "scope_logs", "log_records"),
}


def _merge(body: bytes, kind: str = "traces") -> Any:
    """One request with one entry per resource and scope (concatenated requests repeat them)."""
    module, name, resources_field, scopes_field, items_field = _SHAPES[kind]
    request_type = getattr(importlib.import_module(module), name)
    request = request_type.FromString(body)
    if len(getattr(request, resources_field)) <= 1:
        return request
    merged = request_type()
    resources: dict[bytes, tuple[Any, dict[bytes, Any]]] = {}
    for resource_entry in getattr(request, resources_field):
        key = resource_entry.resource.SerializeToString(deterministic=True) + resource_entry.schema_url.encode()
        if key not in resources:
            target = getattr(merged, resources_field).add(resource=resource_entry.resource, schema_url=resource_entry.schema_url)
            resources[key] = (target, {})
        target, scopes = resources[key]
        for scope_entry in getattr(resource_entry, scopes_field):
            scope_key = scope_entry.scope.SerializeToString(deterministic=True) + scope_entry.schema_url.encode()
            if scope_key not in scopes:
                scopes[scope_key] = getattr(target, scopes_field).add(scope=scope_entry.scope, schema_url=scope_entry.schema_url)
            getattr(scopes[scope_key], items_field).extend(getattr(scope_entry, items_field))
    return merged


class _Signal:
    """One signal's sender, breaker and counts."""

    def __init__(self, sender: Sender | Deferred | None) -> None:
        self.sender = sender
        self.failure = ""
        self.sent = 0
        self.rejected = 0
        self.rejected_messages: list[str] = []

    def send(self, body: bytes, count: int, timeout: float) -> bool:
        """Send unless the breaker is open; True when the endpoint took it (a partial success included)."""
        if self.sender is None or self.failure:
            return False
        try:
            result = self.sender.send(body, timeout)
        except Exception as exc:  # anything the exporter raises is a failed request
            result = Result(False, 0, f"{type(exc).__name__}: {exc}")
        if not result.ok:
            self.failure = result.reason or "failed"
            return False
        self.sent += count
        self.rejected += result.rejected
        if result.reason and result.reason not in self.rejected_messages:
            self.rejected_messages.append(result.reason)
        return True


def _bsp_setting(name: str, default: int) -> int:
    from opentelemetry.sdk.trace.export import BatchSpanProcessor  # the aggregating process's: its batches

    try:
        value = int(getattr(BatchSpanProcessor, name)())  # the SDK reads (and warns about) OTEL_BSP_*
    except Exception:
        return default
    return value if value > 0 else default


class _Request:
    """One request on its way out: a span or log batch, or a metrics request.

    Its ``state`` moves, under the pipeline's lock, from ``pending`` to ``sending`` (a thread
    took it) to ``sent`` (the endpoint answered) or ``kept`` (spilled, by the thread after a
    failure or by the session's end): whoever moves it to ``kept`` writes it to the spill file,
    so a request is spilled once, and never when the endpoint confirmed it.
    """

    __slots__ = ("body", "count", "kind", "written", "state")

    def __init__(self, body: bytes, count: int, kind: str, written: bool = False) -> None:
        self.body = body
        self.count = count
        self.kind = kind
        self.written = written  # in the OTLP file yet
        self.state = "pending"


class Pipeline:
    """Everything the aggregating process exports in one session."""

    def __init__(self, settings: OtelSettings, spill_path: Path, senders: dict[str, Sender | Deferred | None]) -> None:
        self.settings = settings
        self.signals = {name: _Signal(senders.get(name)) for name in ("traces", "metrics", "logs")}
        self.file = Lines(settings.file, fresh=True) if settings.file is not None else None
        self.spill = Lines(spill_path, fresh=False)
        self.file_failure = ""
        self.batch_size = _bsp_setting("_default_max_export_batch_size", 512)
        self.delay = _bsp_setting("_default_schedule_delay_millis", 5000) / 1000
        self._spans: list[Any] = []
        self._encoded: list[tuple[bytes, int]] = []
        self._logs: list[Any] = []
        self._encoded_logs: list[tuple[bytes, int]] = []
        #: Metric requests that arrived before the end (xdist workers' instrumentation metrics).
        self._metrics: list[tuple[bytes, int]] = []
        self._pending = 0
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closing = False
        self._abandoned = False
        #: The session end's deadline (monotonic), once it has begun: no request starts after it.
        self._deadline: float | None = None
        # Span batches taken and not finished.
        self._inflight: list[_Request] = []
        self._thread = threading.Thread(target=self._loop, name="pytest-probability-otel", daemon=True)
        self._thread.start()

    # -- spans ------------------------------------------------------------

    def add_span(self, span: Any) -> None:
        """An SDK span this process ended (the span processor calls it)."""
        with self._lock:
            self._spans.append(span)
            self._pending += 1
            full = self._pending >= self.batch_size
        if full:
            self._wake.set()

    def add_encoded(self, data: Any) -> None:
        """Spans an xdist worker encoded: (serialized ExportTraceServiceRequest, span count)."""
        body, count = data
        with self._lock:
            self._encoded.append((body, count))
            self._pending += count
            full = self._pending >= self.batch_size
        if full:
            self._wake.set()

    # -- log records --------------------------------------------------------

    def add_log(self, record: Any) -> None:
        """An SDK log record this process emitted (the plugin's log record processor calls it)."""
        with self._lock:
            self._logs.append(record)
            self._pending += 1
            full = self._pending >= self.batch_size
        if full:
            self._wake.set()

    def add_encoded_logs(self, data: Any) -> None:
        """Log records an xdist worker encoded: (serialized ExportLogsServiceRequest, record count)."""
        body, count = data
        with self._lock:
            self._encoded_logs.append((body, count))
            self._pending += count
            full = self._pending >= self.batch_size
        if full:
            self._wake.set()

    # -- metrics ------------------------------------------------------------

    def add_metrics(self, data: Any) -> None:
        """A metrics request made before the end (an xdist worker's): (serialized request, point count)."""
        body, count = data
        with self._lock:
            self._metrics.append((body, count))

    def _waiting(self) -> bool:
        return bool(self._spans or self._encoded or self._logs or self._encoded_logs)

    def _take(self) -> list[tuple[str, bytes, int]]:
        """Everything waiting, as requests: (signal, serialized request, span or log record count)."""
        with self._lock:
            spans, self._spans = self._spans, []
            encoded, self._encoded = self._encoded, []
            logs, self._logs = self._logs, []
            encoded_logs, self._encoded_logs = self._encoded_logs, []
            self._pending = 0
        batches: list[tuple[str, bytes, int]] = []
        for kind, items, ready, encode in (("traces", spans, encoded, encode_spans), ("logs", logs, encoded_logs, encode_logs)):
            for start in range(0, len(items), self.batch_size):
                part = items[start : start + self.batch_size]
                batches.append((kind, encode(part), len(part)))
            body: list[bytes] = []
            size = count = 0
            for chunk, n in ready:
                if body and (count + n > self.batch_size or size + len(chunk) > BATCH_BYTES):
                    batches.append((kind, _merge(b"".join(body), kind).SerializeToString(), count))
                    body, size, count = [], 0, 0
                body.append(chunk)
                size += len(chunk)
                count += n
            if body:
                batches.append((kind, _merge(b"".join(body), kind).SerializeToString(), count))
        return batches

    def _loop(self) -> None:
        while True:
            self._wake.wait(self.delay)
            self._wake.clear()
            closing = self._closing
            try:
                batches = self._take()
            except Exception as exc:  # pragma: no cover - an encoding bug must not stop the session
                self.file_failure = self.file_failure or f"encoding spans or log records: {exc}"
                batches = []
            with self._lock:
                if self._abandoned:
                    return
                self._inflight = [_Request(body, count, kind) for kind, body, count in batches]
            self._export_all(list(self._inflight))
            if closing or self._abandoned:
                with self._lock:
                    if self._abandoned or not self._waiting():
                        return

    def _line(self, body: bytes, kind: str) -> str:
        if kind in _SHAPES:
            return otlp_json.request_to_line(_merge(body, kind))
        return otlp_json.request_to_line(ExportMetricsServiceRequest.FromString(body))

    def _write(self, lines: Lines | None, body: bytes, kind: str, count: int) -> None:
        """One request to the OTLP file or the spill file; a file that became unwritable is noted."""
        if lines is None:
            return
        try:
            lines.write(self._line(body, kind), kind, count)
        except Exception as exc:
            self.file_failure = self.file_failure or f"{lines.path}: {exc}"

    def _timeout(self) -> float | None:
        """A new request's timeout, or None when none may start (the deadline passed, or the end gave up).

        At the session's end a request gets what is left of the deadline and ``GRACE`` more: one
        in flight at the deadline is waited for, so that its answer, not the clock, says whether
        it is kept for replay."""
        if self._abandoned:
            return None
        if self._deadline is None:
            return self.settings.timeout
        left = self._deadline - time.monotonic()
        return min(self.settings.timeout, left + grace(self.settings.timeout)) if left > 0 else None

    def _send(self, request: _Request) -> bool:
        """Send one request (its state ``pending``); spill it if the endpoint did not take it.
        False when it was not started (the deadline passed): the session's end keeps it."""
        signal = self.signals[request.kind]
        with self._lock:
            timeout = self._timeout()
            if timeout is None or request.state != "pending":
                return False
            request.state = "sending"
        ok = signal.send(request.body, request.count, timeout)
        with self._lock:
            if request.state != "sending":
                return True  # the end already kept it
            if ok:
                request.state = "sent"
                return True
            request.state = "kept"
            self._write(self.spill, request.body, request.kind, request.count)  # under the lock: once
        return True

    def _export_all(self, batches: list[_Request]) -> None:
        """Send span and log batches, each signal on its own thread when both wait.

        Signals go to their own endpoints: one that hangs or retries for the whole deadline must
        not take the time of the other (``finish`` sends the metrics beside them the same way)."""
        for batch in batches:  # the file first, from this thread only
            if not batch.written:
                self._write(self.file, batch.body, batch.kind, batch.count)
                batch.written = True
        kinds = sorted({batch.kind for batch in batches})
        if len(kinds) < 2:  # the usual case: this thread sends them
            self._export_kind(batches)
            return
        threads = [threading.Thread(target=self._export_kind, args=([b for b in batches if b.kind == kind],),
                                    name=f"pytest-probability-otel-{kind}", daemon=True) for kind in kinds]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def _export_kind(self, batches: list[_Request]) -> None:
        for batch in batches:
            if not self._export_batch(batch):
                break  # past the deadline: the session's end keeps the rest

    def _export_batch(self, batch: _Request) -> bool:
        if self.signals[batch.kind].sender is None:
            with self._lock:
                batch.state = "sent" if batch.state == "pending" else batch.state
            return True
        return self._send(batch)

    # -- session end ------------------------------------------------------

    def finish(self, metric_requests: list[tuple[bytes, int]]) -> bool:
        """Drain spans and log records, send the metrics, all within the deadline; False when the deadline passed.

        A request in flight at the deadline is waited for ``grace`` more seconds (its own timeout
        ends it by then); whatever the endpoint did not confirm is spilled, once; a signal whose
        every request was confirmed gets no failure."""
        timeout = self.settings.timeout
        with self._lock:
            self._deadline = deadline = time.monotonic() + timeout
            metric_requests = [*metric_requests, *self._metrics]
            self._metrics = []
        for body, points in metric_requests:  # the file first: a hanging endpoint must not keep them out
            self._write(self.file, body, "metrics", points)
        metrics = [_Request(body, points, "metrics", written=True) for body, points in metric_requests]
        done = threading.Event()

        def drain() -> None:
            self._closing = True
            self._wake.set()
            # The metrics go out beside the last span and log batches, not after them: a traces
            # endpoint that hangs, or retries until the deadline, must not keep them out.
            if self.signals["metrics"].sender is not None:
                for request in metrics:
                    if not self._send(request):
                        break
            self._thread.join()
            done.set()

        worker = threading.Thread(target=drain, name="pytest-probability-otel-finish", daemon=True)
        worker.start()
        worker.join(max(0.0, deadline + grace(timeout) - time.monotonic()))
        timed_out = not done.is_set()
        with self._lock:
            self._abandoned = True  # nothing starts any more
            unanswered = {"traces": 0, "metrics": 0, "logs": 0}
            kept: list[_Request] = []
            for request in [*self._inflight, *metrics]:
                if request.state in ("pending", "sending"):
                    unanswered[request.kind] += request.state == "sending"
                    request.state = "kept"
                    kept.append(request)
            self._inflight = []
        kept += [_Request(body, count, kind) for kind, body, count in self._take()]  # ended too late for a batch
        for request in kept:
            if not request.written:
                self._write(self.file, request.body, request.kind, request.count)
            signal = self.signals[request.kind]
            if signal.sender is None:
                continue
            # Only an answer that never came can make a request both arrive and be kept here.
            self._write(self.spill, request.body, request.kind, request.count)
            if not signal.failure:
                signal.failure = (f"no answer within {timeout:g} s" if unanswered[request.kind]
                                  else f"the {timeout:g} s deadline passed before it was sent")
        for lines in (self.file, self.spill):
            if lines is not None:
                try:
                    lines.close()
                except OSError as exc:
                    self.file_failure = self.file_failure or f"{lines.path}: {exc}"
        if not timed_out:
            for signal in self.signals.values():
                if signal.sender is not None:
                    signal.sender.close()
        return not timed_out


def grace(timeout: float) -> float:
    """How long the session's end waits, past the deadline, for a request already in flight."""
    return min(GRACE, timeout)
