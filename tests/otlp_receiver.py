"""A real, in-process OTLP receiver for the test suite (HTTP/protobuf and gRPC).

    with OtlpReceiver("http") as rx:          # or OtlpReceiver("grpc")
        exporter = OTLPSpanExporter(endpoint=rx.endpoint + "/v1/traces")
        ...
        wait_for(lambda: rx.count("traces") >= 1)
        spans = flatten_spans(rx.trace_requests)

Binds 127.0.0.1 on a free port and serves from background threads.
``mode`` can be changed at any time:

* ``"ok"``     answer 200 / gRPC OK with an empty Export*ServiceResponse;
* ``"refuse"`` answer HTTP 503 / gRPC UNAVAILABLE (the request is counted
  but its data is not stored);
* ``"slow"``   wait ``slow_delay`` seconds (bounded, cut short by
  :meth:`OtlpReceiver.stop`), then answer as ``"ok"``; the data is stored
  on arrival;
* ``"partial"`` store the data but answer with an OTLP partial success
  rejecting one item (``rejected_spans``/``rejected_data_points`` = 1).

TLS is optional: ``OtlpReceiver("http", tls=(certfile, keyfile))`` serves
HTTPS and ``OtlpReceiver("grpc", tls=(certfile, keyfile))`` gRPC over TLS
(PEM files); ``.endpoint`` then starts with ``https://``. With
``tls_client_ca=<CA file>`` clients must also present a certificate signed
by that CA (mutual TLS). Without ``tls`` nothing changes.

:func:`flatten_spans`, :func:`flatten_metrics` and :func:`flatten_logs` turn protobuf requests
(from a receiver or from ``otlp_json.read_file``) into flat, comparable views.
"""

from __future__ import annotations

import gzip
import http.server
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

__all__ = [
    "OtlpReceiver",
    "LogView",
    "PointView",
    "ReceivedRequest",
    "SpanView",
    "any_value_to_python",
    "attributes_to_dict",
    "flatten_logs",
    "flatten_metrics",
    "flatten_spans",
    "wait_for",
]

MODES = ("ok", "refuse", "slow", "partial")
PARTIAL_MESSAGE = "rejected by test receiver"
MAX_SLOW_DELAY = 30.0
MAX_BODY_BYTES = 64 << 20

_SIGNAL_BY_PATH = {"/v1/traces": "traces", "/v1/metrics": "metrics", "/v1/logs": "logs"}
_REQUEST_TYPES = {
    "traces": trace_service_pb2.ExportTraceServiceRequest,
    "metrics": metrics_service_pb2.ExportMetricsServiceRequest,
    "logs": None,  # stored raw
}
_RESPONSE_TYPES = {
    "traces": trace_service_pb2.ExportTraceServiceResponse,
    "metrics": metrics_service_pb2.ExportMetricsServiceResponse,
    "logs": logs_service_pb2.ExportLogsServiceResponse,
}

T = TypeVar("T")


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------


def wait_for(predicate: Callable[[], T], timeout: float = 10.0, interval: float = 0.02, message: str = "") -> T:
    """Poll ``predicate`` until it returns something truthy; return that value.

    Raises AssertionError after ``timeout`` seconds (the loop is bounded).
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(message or f"condition not met within {timeout:g}s")
        time.sleep(min(interval, max(0.0, deadline - time.monotonic())) or interval)


def any_value_to_python(value: AnyValue) -> Any:
    """AnyValue -> str/bool/int/float/bytes, list for arrays, dict for kvlists, None if empty."""
    which = value.WhichOneof("value")
    if which is None:
        return None
    if which == "array_value":
        return [any_value_to_python(v) for v in value.array_value.values]
    if which == "kvlist_value":
        return attributes_to_dict(value.kvlist_value.values)
    return getattr(value, which)


def attributes_to_dict(attributes: Iterable[KeyValue]) -> dict[str, Any]:
    return {kv.key: any_value_to_python(kv.value) for kv in attributes}


@dataclass
class SpanView:
    name: str
    trace_id: str  # 32 lowercase hex chars
    span_id: str  # 16 lowercase hex chars
    parent_span_id: str  # "" for a root span
    kind: str  # "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER", "UNSPECIFIED"
    attributes: dict[str, Any]
    status_code: str  # "UNSET", "OK", "ERROR"
    status_message: str
    events: list[tuple[str, dict[str, Any]]]
    resource: dict[str, Any]
    scope_name: str
    start_time_unix_nano: int
    end_time_unix_nano: int
    scope_version: str = ""
    links: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)  # (trace_id, span_id, attrs)


@dataclass
class PointView:
    name: str
    unit: str
    type: str  # "sum", "gauge", "histogram", "exponential_histogram", "summary"
    is_monotonic: bool | None  # None unless type == "sum"
    temporality: str | None  # "cumulative"/"delta"/"unspecified"; None for gauge/summary
    attributes: dict[str, Any]
    resource: dict[str, Any]
    scope_name: str = ""
    description: str = ""
    value: int | float | None = None  # sum / gauge
    count: int | None = None  # histograms / summary
    sum: float | None = None
    bucket_counts: list[int] | None = None  # explicit-bucket histogram
    explicit_bounds: list[float] | None = None
    min: float | None = None
    max: float | None = None
    start_time_unix_nano: int = 0
    time_unix_nano: int = 0
    exemplars: list[tuple[str, str]] = field(default_factory=list)  # (trace_id, span_id), hex


@dataclass
class LogView:
    body: Any
    severity_number: int
    severity_text: str
    event_name: str
    trace_id: str  # "" when the record has no span context
    span_id: str
    attributes: dict[str, Any]
    resource: dict[str, Any]
    scope_name: str = ""


_SPAN_KINDS = {0: "UNSPECIFIED", 1: "INTERNAL", 2: "SERVER", 3: "CLIENT", 4: "PRODUCER", 5: "CONSUMER"}
_STATUS_CODES = {0: "UNSET", 1: "OK", 2: "ERROR"}
_TEMPORALITIES = {0: "unspecified", 1: "delta", 2: "cumulative"}


def flatten_spans(requests: Iterable[Any]) -> list[SpanView]:
    """Flatten ExportTraceServiceRequests into SpanViews, in wire order.

    Accepts requests or ``(kind, request)`` pairs (as ``otlp_json.read_file``
    yields); metrics requests/pairs are skipped.
    """
    out: list[SpanView] = []
    for req in _requests_of(requests, trace_service_pb2.ExportTraceServiceRequest):
        for rs in req.resource_spans:
            resource = attributes_to_dict(rs.resource.attributes)
            for ss in rs.scope_spans:
                for span in ss.spans:
                    out.append(
                        SpanView(
                            name=span.name,
                            trace_id=span.trace_id.hex(),
                            span_id=span.span_id.hex(),
                            parent_span_id=span.parent_span_id.hex(),
                            kind=_SPAN_KINDS.get(span.kind, str(span.kind)),
                            attributes=attributes_to_dict(span.attributes),
                            status_code=_STATUS_CODES.get(span.status.code, str(span.status.code)),
                            status_message=span.status.message,
                            events=[(ev.name, attributes_to_dict(ev.attributes)) for ev in span.events],
                            resource=resource,
                            scope_name=ss.scope.name,
                            scope_version=ss.scope.version,
                            start_time_unix_nano=span.start_time_unix_nano,
                            end_time_unix_nano=span.end_time_unix_nano,
                            links=[
                                (ln.trace_id.hex(), ln.span_id.hex(), attributes_to_dict(ln.attributes))
                                for ln in span.links
                            ],
                        )
                    )
    return out


def flatten_metrics(requests: Iterable[Any]) -> list[PointView]:
    """Flatten ExportMetricsServiceRequests into one PointView per data point.

    Accepts requests or ``(kind, request)`` pairs; trace requests are skipped.
    """
    out: list[PointView] = []
    for req in _requests_of(requests, metrics_service_pb2.ExportMetricsServiceRequest):
        for rm in req.resource_metrics:
            resource = attributes_to_dict(rm.resource.attributes)
            for sm in rm.scope_metrics:
                for metric in sm.metrics:
                    which = metric.WhichOneof("data")
                    if which is None:
                        continue
                    data = getattr(metric, which)
                    common = dict(
                        name=metric.name,
                        unit=metric.unit,
                        description=metric.description,
                        resource=resource,
                        scope_name=sm.scope.name,
                    )
                    temporality = (
                        _TEMPORALITIES.get(data.aggregation_temporality, str(data.aggregation_temporality))
                        if which in ("sum", "histogram", "exponential_histogram")
                        else None
                    )
                    for dp in data.data_points:
                        view = PointView(
                            type=which,
                            is_monotonic=data.is_monotonic if which == "sum" else None,
                            temporality=temporality,
                            attributes=attributes_to_dict(dp.attributes),
                            start_time_unix_nano=dp.start_time_unix_nano,
                            time_unix_nano=dp.time_unix_nano,
                            exemplars=[(e.trace_id.hex(), e.span_id.hex()) for e in getattr(dp, "exemplars", ())],
                            **common,
                        )
                        if which in ("sum", "gauge"):
                            num = dp.WhichOneof("value")
                            view.value = getattr(dp, num) if num else None
                        else:
                            view.count = dp.count
                            view.sum = dp.sum
                            if which == "histogram":
                                view.bucket_counts = list(dp.bucket_counts)
                                view.explicit_bounds = list(dp.explicit_bounds)
                            if which != "summary":
                                view.min = dp.min if dp.HasField("min") else None
                                view.max = dp.max if dp.HasField("max") else None
                        out.append(view)
    return out


def flatten_logs(requests: Iterable[Any]) -> list[LogView]:
    """Flatten ExportLogsServiceRequests (or their serialized bytes, or ``(kind, request)`` pairs) into LogViews."""
    out: list[LogView] = []
    decoded = []
    for item in requests:
        if isinstance(item, (bytes, bytearray)):
            item = logs_service_pb2.ExportLogsServiceRequest.FromString(bytes(item))
        decoded.append(item)
    for req in _requests_of(decoded, logs_service_pb2.ExportLogsServiceRequest):
        for rl in req.resource_logs:
            resource = attributes_to_dict(rl.resource.attributes)
            for sl in rl.scope_logs:
                for record in sl.log_records:
                    out.append(
                        LogView(
                            body=any_value_to_python(record.body),
                            severity_number=record.severity_number,
                            severity_text=record.severity_text,
                            event_name=record.event_name,
                            trace_id=record.trace_id.hex(),
                            span_id=record.span_id.hex(),
                            attributes=attributes_to_dict(record.attributes),
                            resource=resource,
                            scope_name=sl.scope.name,
                        )
                    )
    return out


def _response(signal: str, outcome: str) -> Any:
    response = _RESPONSE_TYPES[signal]()
    if outcome == "partial":
        field_name = {"traces": "rejected_spans", "metrics": "rejected_data_points", "logs": "rejected_log_records"}
        setattr(response.partial_success, field_name[signal], 1)
        response.partial_success.error_message = PARTIAL_MESSAGE
    return response


def _requests_of(items: Iterable[Any], wanted: type) -> Iterable[Any]:
    for item in items:
        if isinstance(item, tuple) and len(item) == 2:
            item = item[1]
        if isinstance(item, wanted):
            yield item


@dataclass
class ReceivedRequest:
    signal: str  # "traces", "metrics", "logs"
    transport: str  # "http" or "grpc"
    headers: dict[str, str]  # lower-cased names (HTTP headers or gRPC metadata)
    body: bytes  # uncompressed protobuf bytes (empty for gRPC)
    message: Any  # decoded Export*ServiceRequest (None for logs over HTTP)
    content_encoding: str = ""
    accepted: bool = True  # False when refused


# --------------------------------------------------------------------------
# the receiver
# --------------------------------------------------------------------------


class OtlpReceiver:
    """An OTLP/HTTP (protobuf) or OTLP/gRPC receiver on 127.0.0.1:<free port>."""

    def __init__(
        self,
        protocol: str = "http",
        *,
        mode: str = "ok",
        slow_delay: float = 3.0,
        start: bool = True,
        tls: tuple[str, str] | None = None,
        tls_client_ca: str | None = None,
    ):
        if protocol not in ("http", "grpc"):
            raise ValueError("protocol must be 'http' or 'grpc'")
        if tls is not None and len(tls) != 2:
            raise ValueError("tls must be (certfile, keyfile)")
        if tls_client_ca is not None and tls is None:
            raise ValueError("tls_client_ca needs tls=(certfile, keyfile)")
        self.protocol = protocol
        self.tls = tuple(tls) if tls is not None else None
        self.tls_client_ca = tls_client_ca
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._received: list[ReceivedRequest] = []
        self._counts = {"traces": 0, "metrics": 0, "logs": 0}
        self._mode = "ok"
        self._slow_delay = 0.0
        self.mode = mode
        self.slow_delay = slow_delay
        self.port: int | None = None
        self._http_server: http.server.ThreadingHTTPServer | None = None
        self._http_thread: threading.Thread | None = None
        self._grpc_server: Any = None
        if start:
            self.start()

    # -- configuration ---------------------------------------------------
    @property
    def mode(self) -> str:
        return self._mode

    @mode.setter
    def mode(self, value: str) -> None:
        if value not in MODES:
            raise ValueError(f"mode must be one of {MODES}")
        self._mode = value

    @property
    def slow_delay(self) -> float:
        return self._slow_delay

    @slow_delay.setter
    def slow_delay(self, value: float) -> None:
        if not 0 <= value <= MAX_SLOW_DELAY:
            raise ValueError(f"slow_delay must be within [0, {MAX_SLOW_DELAY}] seconds")
        self._slow_delay = float(value)

    @property
    def endpoint(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:4318`` (append /v1/traces for the SDK HTTP exporter).

        ``https://`` when the receiver serves TLS.
        """
        if self.port is None:
            raise RuntimeError("receiver not started")
        scheme = "https" if self.tls else "http"
        return f"{scheme}://127.0.0.1:{self.port}"

    # -- collected data ----------------------------------------------------
    @property
    def received(self) -> list[ReceivedRequest]:
        with self._lock:
            return list(self._received)

    def _accepted(self, signal: str) -> list[Any]:
        with self._lock:
            return [r.message for r in self._received if r.signal == signal and r.accepted]

    @property
    def trace_requests(self) -> list[trace_service_pb2.ExportTraceServiceRequest]:
        return self._accepted("traces")

    @property
    def metrics_requests(self) -> list[metrics_service_pb2.ExportMetricsServiceRequest]:
        return self._accepted("metrics")

    @property
    def logs_requests(self) -> list[bytes]:
        """Raw (uncompressed) protobuf bodies of accepted logs requests."""
        with self._lock:
            return [r.body for r in self._received if r.signal == "logs" and r.accepted]

    @property
    def headers(self) -> list[dict[str, str]]:
        """Headers/metadata of every request received, in order."""
        with self._lock:
            return [dict(r.headers) for r in self._received]

    def count(self, signal: str) -> int:
        """Requests received for ``signal`` (including refused ones)."""
        with self._lock:
            return self._counts[signal]

    @property
    def counts(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)

    def spans(self) -> list[SpanView]:
        return flatten_spans(self.trace_requests)

    def points(self) -> list[PointView]:
        return flatten_metrics(self.metrics_requests)

    def logs(self) -> list[LogView]:
        return flatten_logs(self.logs_requests)

    def clear(self) -> None:
        with self._lock:
            self._received.clear()
            for key in self._counts:
                self._counts[key] = 0

    # -- request handling shared by both transports -------------------------
    def _handle(self, record: ReceivedRequest) -> str:
        """Record a request; return the outcome "ok", "refuse" or "partial" (after any slow wait)."""
        mode = self._mode
        record.accepted = mode != "refuse"
        with self._lock:
            self._counts[record.signal] += 1
            self._received.append(record)
        if mode == "slow":
            self._stopping.wait(self._slow_delay)
        return mode if mode in ("refuse", "partial") else "ok"

    # -- lifecycle -----------------------------------------------------------
    def start(self) -> OtlpReceiver:
        if self.port is not None:
            return self
        self._stopping.clear()
        if self.protocol == "http":
            self._start_http()
        else:
            self._start_grpc()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._http_server is not None:
            self._http_server.shutdown()
            self._http_server.server_close()
            if self._http_thread is not None:
                self._http_thread.join(timeout=5)
            self._http_server = None
            self._http_thread = None
        if self._grpc_server is not None:
            self._grpc_server.stop(grace=0.2).wait(timeout=5)
            self._grpc_server = None
        self.port = None

    def __enter__(self) -> OtlpReceiver:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = self.endpoint if self.port is not None else "stopped"
        return f"<OtlpReceiver {self.protocol} {where} mode={self._mode}>"

    # -- HTTP ------------------------------------------------------------------
    def _start_http(self) -> None:
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = 15  # idle keep-alive connections end eventually

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass  # keep test output clean

            def _reply(self, code: int, body: bytes = b"", ctype: str = "application/x-protobuf") -> None:
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if body:
                    self.wfile.write(body)

            def _read_body(self) -> bytes | None:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    chunks, total = [], 0
                    while True:
                        size = int(self.rfile.readline(100).split(b";")[0].strip() or b"0", 16)
                        if size == 0:
                            self.rfile.readline(100)  # trailing CRLF (no trailers expected)
                            return b"".join(chunks)
                        total += size
                        if total > MAX_BODY_BYTES:
                            return None
                        chunks.append(self.rfile.read(size))
                        self.rfile.readline(100)
                length = int(self.headers.get("Content-Length") or 0)
                if length > MAX_BODY_BYTES:
                    return None
                return self.rfile.read(length)

            def do_GET(self) -> None:  # noqa: N802
                self._reply(405, b"method not allowed", "text/plain")

            def do_POST(self) -> None:  # noqa: N802
                signal = _SIGNAL_BY_PATH.get(self.path.split("?", 1)[0])
                try:
                    raw = self._read_body()
                except (ValueError, OSError):
                    self._reply(400, b"bad body framing", "text/plain")
                    return
                if signal is None:
                    self._reply(404, b"unknown path", "text/plain")
                    return
                if raw is None:
                    self._reply(413, b"body too large", "text/plain")
                    return
                ctype = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
                if ctype != "application/x-protobuf":
                    self._reply(415, b"only application/x-protobuf is supported", "text/plain")
                    return
                encoding = self.headers.get("Content-Encoding", "").strip().lower()
                try:
                    if encoding == "gzip":
                        body = gzip.decompress(raw)
                    elif encoding == "deflate":
                        try:
                            body = zlib.decompress(raw)
                        except zlib.error:
                            body = zlib.decompress(raw, -zlib.MAX_WBITS)  # raw deflate
                    elif encoding in ("", "identity"):
                        body = raw
                    else:
                        self._reply(415, b"unsupported content-encoding", "text/plain")
                        return
                except (OSError, EOFError, zlib.error):
                    self._reply(400, b"cannot decompress body", "text/plain")
                    return
                message = None
                req_type = _REQUEST_TYPES[signal]
                if req_type is not None:
                    message = req_type()
                    try:
                        message.ParseFromString(body)
                    except Exception:  # noqa: BLE001 - DecodeError
                        self._reply(400, b"invalid protobuf", "text/plain")
                        return
                record = ReceivedRequest(
                    signal=signal,
                    transport="http",
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=body,
                    message=message,
                    content_encoding=encoding,
                )
                outcome = receiver._handle(record)
                if outcome == "refuse":
                    self.send_response(503)
                    self.send_header("Content-Type", "text/plain")
                    self.send_header("Retry-After", "1")
                    self.send_header("Content-Length", "7")
                    self.end_headers()
                    self.wfile.write(b"refused")
                    return
                self._reply(200, _response(signal, outcome).SerializeToString())

        server_class: type[http.server.ThreadingHTTPServer] = http.server.ThreadingHTTPServer
        if self.tls:
            server_class = _tls_http_server(self._server_ssl_context())
        server = server_class(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        self._http_server = server
        self.port = server.server_address[1]
        self._http_thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name=f"otlp-http-{self.port}", daemon=True
        )
        self._http_thread.start()

    def _server_ssl_context(self) -> ssl.SSLContext:
        assert self.tls is not None
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*self.tls)
        if self.tls_client_ca:
            context.load_verify_locations(cafile=self.tls_client_ca)
            context.verify_mode = ssl.CERT_REQUIRED
        return context

    # -- gRPC ------------------------------------------------------------------
    def _start_grpc(self) -> None:
        from concurrent.futures import ThreadPoolExecutor

        import grpc
        from opentelemetry.proto.collector.logs.v1 import logs_service_pb2_grpc
        from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2_grpc
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

        receiver = self

        def export(signal: str, request: Any, context: Any) -> Any:
            headers: dict[str, str] = {}
            for key, value in context.invocation_metadata():
                headers[key.lower()] = value if isinstance(value, str) else value.decode("latin-1")
            if signal == "logs":
                body, message = request.SerializeToString(), None
            else:
                body, message = b"", request
            record = ReceivedRequest(signal=signal, transport="grpc", headers=headers, body=body, message=message)
            outcome = receiver._handle(record)
            if outcome == "refuse":
                context.abort(grpc.StatusCode.UNAVAILABLE, "refused by test receiver")
            return _response(signal, outcome)

        class Traces(trace_service_pb2_grpc.TraceServiceServicer):
            def Export(self, request, context):  # noqa: N802
                return export("traces", request, context)

        class Metrics(metrics_service_pb2_grpc.MetricsServiceServicer):
            def Export(self, request, context):  # noqa: N802
                return export("metrics", request, context)

        class Logs(logs_service_pb2_grpc.LogsServiceServicer):
            def Export(self, request, context):  # noqa: N802
                return export("logs", request, context)

        server = grpc.server(ThreadPoolExecutor(max_workers=4, thread_name_prefix="otlp-grpc"))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Traces(), server)
        metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server(Metrics(), server)
        logs_service_pb2_grpc.add_LogsServiceServicer_to_server(Logs(), server)
        if self.tls:
            certfile, keyfile = self.tls
            with open(keyfile, "rb") as key, open(certfile, "rb") as cert:
                pair = (key.read(), cert.read())
            client_ca = None
            if self.tls_client_ca:
                with open(self.tls_client_ca, "rb") as ca:
                    client_ca = ca.read()
            credentials = grpc.ssl_server_credentials(
                [pair], root_certificates=client_ca, require_client_auth=client_ca is not None
            )
            port = server.add_secure_port("127.0.0.1:0", credentials)
        else:
            port = server.add_insecure_port("127.0.0.1:0")
        if not port:
            raise RuntimeError("could not bind a gRPC port on 127.0.0.1")
        server.start()
        self._grpc_server = server
        self.port = port


def _tls_http_server(context: ssl.SSLContext) -> type[http.server.ThreadingHTTPServer]:
    """A ThreadingHTTPServer that speaks TLS; the handshake runs in the request's own thread."""

    class TlsServer(http.server.ThreadingHTTPServer):
        def finish_request(self, request: Any, client_address: Any) -> None:
            request.settimeout(10)  # a client that never completes the handshake cannot hang a thread
            try:
                tls_sock = context.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError):
                return  # e.g. the client does not trust our certificate: it sees the failure itself
            try:
                super().finish_request(tls_sock, client_address)
            finally:
                try:
                    tls_sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                tls_sock.close()

    return TlsServer
