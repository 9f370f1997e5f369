"""OTLP JSON-lines codec and a minimal OTLP sender.

File format
-----------
"OTLP JSON lines" is what the OpenTelemetry Collector's ``file`` exporter
writes and its ``otlpjsonfile`` receiver reads: one JSON object per line,
each an ``ExportTraceServiceRequest`` (``{"resourceSpans": [...]}``) or an
``ExportMetricsServiceRequest`` (``{"resourceMetrics": [...]}``) in the
OTLP/JSON encoding (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding):

* field names are the lowerCamelCase JSON names of the proto fields;
* ``traceId``/``spanId``/``parentSpanId`` (also in links and exemplars) are
  lowercase hex strings, *not* base64 as in generic protobuf JSON;
  other ``bytes`` values (e.g. a ``bytesValue`` attribute) stay base64;
* enums are integers (``"kind": 1``, ``"aggregationTemporality": 2``);
* 64-bit integers are decimal strings (``"startTimeUnixNano": "17..."``,
  ``"asInt": "3"``, ``"count": "5"``, ``"bucketCounts": ["1", "0"]``);
* fields holding their default value are omitted.

Decoding is lenient where the Collector is: snake_case field names, enum
names, numbers for 64-bit integers, upper-case hex and unknown fields
(skipped) are accepted.

Sending
-------
:func:`send` delivers one decoded request to an OTLP endpoint over
``http/protobuf`` (standard library only) or ``grpc`` (grpcio, imported
lazily). See :func:`signal_url` for how the HTTP URL is derived.

This module imports no pytest.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import urllib.error
import urllib.parse
import urllib.request
import zlib
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Union

from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

if TYPE_CHECKING:  # pragma: no cover
    from opentelemetry.sdk.metrics.export import MetricsData
    from opentelemetry.sdk.trace import ReadableSpan

__all__ = [
    "Kind",
    "OtlpRequest",
    "OtlpSendError",
    "decode_line",
    "encode_metrics_request",
    "encode_trace_request",
    "metrics_to_lines",
    "read_file",
    "request_to_line",
    "send",
    "signal_url",
    "spans_to_lines",
]

Kind = Literal["traces", "metrics"]
OtlpRequest = Union[ExportTraceServiceRequest, ExportMetricsServiceRequest]

_REQUEST_TYPES: dict[str, type] = {
    "traces": ExportTraceServiceRequest,
    "metrics": ExportMetricsServiceRequest,
}
_SIGNAL_PATHS = {"traces": "/v1/traces", "metrics": "/v1/metrics"}

# Byte length of the id fields that OTLP/JSON writes as hex.
_TRACE_ID_LEN = 16
_SPAN_ID_LEN = 8
_SPAN_ID_FIELDS = {"traceId": _TRACE_ID_LEN, "spanId": _SPAN_ID_LEN, "parentSpanId": _SPAN_ID_LEN}
_LINK_ID_FIELDS = {"traceId": _TRACE_ID_LEN, "spanId": _SPAN_ID_LEN}
_METRIC_DATA_FIELDS = ("gauge", "sum", "histogram", "exponentialHistogram", "summary")

# The JSON name -> proto name aliases that decoding accepts (jsonpb does).
_SNAKE = {
    "resourceSpans": "resource_spans",
    "resourceMetrics": "resource_metrics",
    "resourceLogs": "resource_logs",
    "scopeSpans": "scope_spans",
    "scopeMetrics": "scope_metrics",
    "traceId": "trace_id",
    "spanId": "span_id",
    "parentSpanId": "parent_span_id",
    "dataPoints": "data_points",
    "exponentialHistogram": "exponential_histogram",
}


# --------------------------------------------------------------------------
# protobuf <-> OTLP/JSON dict
# --------------------------------------------------------------------------


def _check_type(req: Any, expected: type) -> None:
    if not isinstance(req, expected):
        raise TypeError(f"expected {expected.__name__}, got {type(req).__name__}")


def _b64_to_hex(obj: dict, fields: Mapping[str, int]) -> None:
    for name in fields:
        value = obj.get(name)
        if value:
            obj[name] = base64.b64decode(value).hex()


def _message_to_dict(req: Any) -> dict:
    # Only options that exist in every protobuf release we support: int64 as
    # strings, defaults omitted and json_name keys are the defaults anyway.
    return json_format.MessageToDict(
        req,
        preserving_proto_field_name=False,
        use_integers_for_enums=True,
    )


def encode_trace_request(req: ExportTraceServiceRequest) -> dict:
    """Return the OTLP/JSON dict of an ``ExportTraceServiceRequest``."""
    _check_type(req, ExportTraceServiceRequest)
    out = _message_to_dict(req)
    for rs in out.get("resourceSpans", ()):
        for ss in rs.get("scopeSpans", ()):
            for span in ss.get("spans", ()):
                _b64_to_hex(span, _SPAN_ID_FIELDS)
                for link in span.get("links", ()):
                    _b64_to_hex(link, _LINK_ID_FIELDS)
    return out


def encode_metrics_request(req: ExportMetricsServiceRequest) -> dict:
    """Return the OTLP/JSON dict of an ``ExportMetricsServiceRequest``."""
    _check_type(req, ExportMetricsServiceRequest)
    out = _message_to_dict(req)
    for rm in out.get("resourceMetrics", ()):
        for sm in rm.get("scopeMetrics", ()):
            for metric in sm.get("metrics", ()):
                for data_field in _METRIC_DATA_FIELDS:
                    data = metric.get(data_field)
                    if not data:
                        continue
                    for point in data.get("dataPoints", ()):
                        for exemplar in point.get("exemplars", ()):
                            _b64_to_hex(exemplar, _LINK_ID_FIELDS)
    return out


def request_to_line(req: OtlpRequest) -> str:
    """Return one OTLP JSON line (without the trailing newline) for ``req``.

    The line is pure ASCII (non-ASCII characters are ``\\u`` escaped), so it
    can be written with any encoding that is a superset of ASCII.
    """
    if isinstance(req, ExportTraceServiceRequest):
        obj = encode_trace_request(req)
    elif isinstance(req, ExportMetricsServiceRequest):
        obj = encode_metrics_request(req)
    else:
        raise TypeError(
            f"expected ExportTraceServiceRequest or ExportMetricsServiceRequest, got {type(req).__name__}"
        )
    # NaN/Infinity are already strings ("NaN") in MessageToDict output, so
    # allow_nan=False only guards the "valid JSON" promise.
    return json.dumps(obj, separators=(",", ":"), allow_nan=False)


def _get(obj: dict, name: str) -> Any:
    if name in obj:
        return obj[name]
    return obj.get(_SNAKE.get(name, name))


def _hex_to_b64(obj: Any, fields: Mapping[str, int], where: str) -> None:
    if not isinstance(obj, dict):
        return  # ParseDict reports the type error with a better message
    for name, size in fields.items():
        key = name if name in obj else _SNAKE[name]
        value = obj.get(key)
        if value is None or value == "":
            continue
        if not isinstance(value, str):
            raise ValueError(f"{where}.{name}: expected a hex string, got {type(value).__name__}")
        try:
            raw = bytes.fromhex(value)
        except ValueError:
            raw = None
        if raw is None or len(raw) != size or len(value) != 2 * size:
            shown = value if len(value) <= 48 else value[:45] + "..."
            raise ValueError(
                f"{where}.{name}: expected {2 * size} hex characters, got {shown!r}"
                " (OTLP/JSON ids are hex, not base64)"
            )
        obj[key] = base64.b64encode(raw).decode("ascii")


def _iter_list(obj: Any, name: str, where: str) -> Iterator[tuple[str, Any]]:
    if not isinstance(obj, dict):
        return
    items = _get(obj, name)
    if not isinstance(items, list):
        return
    for i, item in enumerate(items):
        yield f"{where}.{name}[{i}]", item


def _prepare_traces(obj: dict) -> None:
    for w1, rs in _iter_list(obj, "resourceSpans", "$"):
        for w2, ss in _iter_list(rs, "scopeSpans", w1):
            for w3, span in _iter_list(ss, "spans", w2):
                _hex_to_b64(span, _SPAN_ID_FIELDS, w3)
                for w4, link in _iter_list(span, "links", w3):
                    _hex_to_b64(link, _LINK_ID_FIELDS, w4)


def _prepare_metrics(obj: dict) -> None:
    for w1, rm in _iter_list(obj, "resourceMetrics", "$"):
        for w2, sm in _iter_list(rm, "scopeMetrics", w1):
            for w3, metric in _iter_list(sm, "metrics", w2):
                if not isinstance(metric, dict):
                    continue
                for data_field in _METRIC_DATA_FIELDS:
                    data = _get(metric, data_field)
                    for w4, point in _iter_list(data, "dataPoints", f"{w3}.{data_field}"):
                        for w5, exemplar in _iter_list(point, "exemplars", w4):
                            _hex_to_b64(exemplar, _LINK_ID_FIELDS, w5)


def decode_line(line: str, *, ignore_unknown_fields: bool = True) -> tuple[Kind, OtlpRequest]:
    """Decode one OTLP JSON line into ``(kind, protobuf request)``.

    ``kind`` is ``"traces"`` or ``"metrics"``. Raises :class:`ValueError`
    saying what is wrong for malformed input (bad JSON, not an object, no
    or several signal keys, logs, ids that are not hex of the right length,
    fields of the wrong type). Unknown fields are skipped like the Collector
    does unless ``ignore_unknown_fields`` is false.
    """
    if isinstance(line, bytes):
        line = line.decode("utf-8")
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON: {exc.msg} at column {exc.colno}") from None
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
    present = {
        kind
        for kind, key in (("traces", "resourceSpans"), ("metrics", "resourceMetrics"), ("logs", "resourceLogs"))
        if key in obj or _SNAKE[key] in obj
    }
    if "logs" in present:
        raise ValueError("OTLP logs lines ('resourceLogs') are not supported; expected traces or metrics")
    if len(present) != 1:
        if present:
            raise ValueError("a line must hold one signal, found both 'resourceSpans' and 'resourceMetrics'")
        keys = ", ".join(sorted(map(repr, obj))) or "none"
        raise ValueError(f"expected a 'resourceSpans' or 'resourceMetrics' key, found keys: {keys}")
    kind: Kind = present.pop()  # type: ignore[assignment]
    if kind == "traces":
        _prepare_traces(obj)
    else:
        _prepare_metrics(obj)
    message = _REQUEST_TYPES[kind]()
    try:
        json_format.ParseDict(obj, message, ignore_unknown_fields=ignore_unknown_fields)
    except json_format.ParseError as exc:
        raise ValueError(f"not a valid OTLP {type(message).__name__}: {exc}") from None
    return kind, message


def read_file(path: str | os.PathLike[str]) -> Iterator[tuple[Kind, OtlpRequest]]:
    """Yield ``(kind, request)`` for every non-blank line of an OTLP JSON-lines file.

    A malformed line raises :class:`ValueError` starting with
    ``"<path>, line <n>: "`` (1-based line numbers).
    """
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                yield decode_line(line)
            except ValueError as exc:
                raise ValueError(f"{os.fspath(path)}, line {lineno}: {exc}") from exc


# --------------------------------------------------------------------------
# SDK data -> lines
# --------------------------------------------------------------------------


def _sdk_encoders() -> tuple[Any, Any]:
    try:  # public re-exports (present in 1.45)
        from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    except ImportError:  # pragma: no cover - older/newer layouts
        from opentelemetry.exporter.otlp.proto.common._internal.metrics_encoder import (  # type: ignore[no-redef]
            encode_metrics,
        )
        from opentelemetry.exporter.otlp.proto.common._internal.trace_encoder import (  # type: ignore[no-redef]
            encode_spans,
        )
    return encode_spans, encode_metrics


def _chunks(items: Sequence[Any], size: int | None) -> Iterator[Sequence[Any]]:
    if size is None:
        yield items
        return
    if size < 1:
        raise ValueError("max_spans_per_line must be >= 1")
    for start in range(0, len(items), size):
        yield items[start : start + size]


def spans_to_lines(spans: Sequence[ReadableSpan], *, max_spans_per_line: int | None = None) -> list[str]:
    """Encode finished SDK spans as OTLP JSON lines (no trailing newlines).

    All spans go into one line unless ``max_spans_per_line`` is given; no
    spans gives no lines.
    """
    spans = list(spans)
    if not spans:
        return []
    encode_spans, _ = _sdk_encoders()
    return [request_to_line(encode_spans(chunk)) for chunk in _chunks(spans, max_spans_per_line)]


def metrics_to_lines(metrics_data: MetricsData | None) -> list[str]:
    """Encode an SDK ``MetricsData`` (e.g. from a metric reader) as OTLP JSON lines.

    Returns one line, or no line when there is no resource metrics at all.
    """
    if metrics_data is None or not metrics_data.resource_metrics:
        return []
    _, encode_metrics = _sdk_encoders()
    return [request_to_line(encode_metrics(metrics_data))]


# --------------------------------------------------------------------------
# Sending
# --------------------------------------------------------------------------

# Per the OTLP spec: retryable HTTP statuses and gRPC codes.
_RETRYABLE_HTTP = {429, 502, 503, 504}
_RETRYABLE_GRPC = {"CANCELLED", "DEADLINE_EXCEEDED", "ABORTED", "OUT_OF_RANGE", "UNAVAILABLE", "DATA_LOSS"}
_MAX_RESPONSE_BYTES = 1 << 20


class OtlpSendError(Exception):
    """Sending a request to an OTLP endpoint failed.

    ``endpoint`` is the URL/target (user info and query string redacted),
    ``reason`` a human-readable cause, ``status`` the HTTP status (int) or
    gRPC status code name (str) when there was one, ``retryable`` whether
    the OTLP spec calls the failure transient. Header values never appear.
    """

    def __init__(self, endpoint: str, reason: str, *, status: int | str | None = None, retryable: bool = False):
        self.endpoint = endpoint
        self.reason = reason
        self.status = status
        self.retryable = retryable
        super().__init__(f"OTLP export to {endpoint} failed: {reason}")


def _redact_url(url: str) -> str:
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return "<invalid endpoint>"
    netloc = parts.netloc.rsplit("@", 1)[-1]
    query = "..." if parts.query else ""
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def _scrub(text: str, headers: Mapping[str, str]) -> str:
    for value in headers.values():
        value = str(value)
        if len(value) >= 3:
            text = text.replace(value, "<redacted>")
    return text


def _check_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    """Validate headers without ever echoing a value (http.client would)."""
    out: dict[str, str] = {}
    for key, value in (headers or {}).items():
        if not isinstance(key, str) or not key or any(c in key for c in " \t\r\n:\x00") or not key.isascii():
            raise ValueError(f"invalid OTLP header name {key!r}")
        if not isinstance(value, str):
            raise ValueError(f"OTLP header {key!r}: value must be a str")
        if any(c in value for c in "\r\n\x00"):
            raise ValueError(f"OTLP header {key!r}: value contains a line break or NUL")
        out[key] = value
    return out


def signal_url(endpoint: str, kind: Kind) -> str:
    """Return the OTLP/HTTP URL for ``kind`` derived from ``endpoint``.

    Rule: a trailing ``/`` is dropped; if the path then ends with this
    signal's path (``/v1/traces`` or ``/v1/metrics``) the endpoint is used as
    is; if it ends with the *other* signal's path, that suffix is replaced
    (so one ``.../v1/traces`` URL also works for metrics instead of posting
    metrics to the traces route); otherwise the signal path is appended to
    the base (``http://host:4318`` -> ``http://host:4318/v1/traces``,
    ``http://host/otlp`` -> ``http://host/otlp/v1/traces``). Query strings
    are kept.
    """
    if kind not in _SIGNAL_PATHS:
        raise ValueError(f"unknown signal kind {kind!r}; expected 'traces' or 'metrics'")
    parts = urllib.parse.urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"OTLP/HTTP endpoint must be an http:// or https:// URL, got {_redact_url(endpoint)!r}")
    path = parts.path.rstrip("/")
    own = _SIGNAL_PATHS[kind]
    if not path.endswith(own):
        for other in _SIGNAL_PATHS.values():
            if path.endswith(other):
                path = path[: -len(other)]
                break
        path += own
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def _normalize_protocol(protocol: str) -> str:
    p = (protocol or "").strip().lower()
    if p in ("http/protobuf", "http", "https"):
        return "http"
    if p == "grpc":
        return "grpc"
    raise ValueError(f"unsupported OTLP protocol {protocol!r}; expected 'http/protobuf' or 'grpc'")


def _normalize_compression(compression: Any) -> str | None:
    if compression is None:
        return None
    value = str(getattr(compression, "value", compression)).strip().lower()
    if value in ("", "none", "nocompression"):
        return None
    if value in ("gzip", "deflate"):
        return value
    raise ValueError(f"unsupported OTLP compression {compression!r}; expected None, 'gzip' or 'deflate'")


def _partial_success_reason(kind: str, response: Any) -> str | None:
    if not response.HasField("partial_success"):
        return None
    ps = response.partial_success
    rejected = ps.rejected_spans if kind == "traces" else ps.rejected_data_points
    if rejected <= 0:
        return None
    what = "spans" if kind == "traces" else "data points"
    msg = f"partial success: {rejected} {what} rejected"
    if ps.error_message:
        msg += f": {ps.error_message[:200]}"
    return msg


def send(
    kind: Kind,
    request: OtlpRequest,
    endpoint: str,
    protocol: str = "http/protobuf",
    headers: Mapping[str, str] | None = None,
    timeout: float = 10.0,
    compression: str | None = None,
    *,
    insecure: bool | None = None,
) -> None:
    """Send one request (as from :func:`decode_line`) to an OTLP endpoint.

    ``protocol`` is ``"http/protobuf"`` (alias ``"http"``) or ``"grpc"``.
    For HTTP the URL is :func:`signal_url` of ``endpoint``; for gRPC the
    ``host:port`` of ``endpoint`` is used (a path is ignored), ``http://``
    means plaintext and ``https://`` TLS; a bare ``host:port`` uses TLS
    unless ``insecure`` is true (as the SDK does). ``compression`` is
    ``None``, ``"gzip"`` or ``"deflate"``. ``timeout`` (seconds) bounds
    the gRPC call as a deadline and each HTTP socket operation.

    Raises :class:`OtlpSendError` on any transport failure, non-2xx HTTP
    status, gRPC error or rejected data (partial success), and
    :class:`ValueError`/:class:`TypeError` for bad arguments.
    """
    if kind not in _REQUEST_TYPES:
        raise ValueError(f"unknown signal kind {kind!r}; expected 'traces' or 'metrics'")
    _check_type(request, _REQUEST_TYPES[kind])
    if not timeout or timeout <= 0:
        raise ValueError("timeout must be a positive number of seconds")
    proto = _normalize_protocol(protocol)
    comp = _normalize_compression(compression)
    hdrs = _check_headers(headers)
    if proto == "http":
        _send_http(kind, request, endpoint, hdrs, float(timeout), comp)
    else:
        _send_grpc(kind, request, endpoint, hdrs, float(timeout), comp, insecure)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: D102
        return None  # surface 3xx as HTTPError; never re-post elsewhere


def _http_error_detail(body: bytes) -> str:
    if not body:
        return ""
    try:
        from google.rpc import status_pb2

        status = status_pb2.Status()
        status.ParseFromString(body)
        if status.message:
            return status.message
    except Exception:  # noqa: BLE001 - best effort only
        pass
    try:
        text = body.decode("utf-8").strip()
    except UnicodeDecodeError:
        return ""
    return text if text.isprintable() else ""


def _send_http(
    kind: str, request: Any, endpoint: str, headers: dict[str, str], timeout: float, compression: str | None
) -> None:
    url = signal_url(endpoint, kind)  # type: ignore[arg-type]
    shown = _redact_url(url)
    body = request.SerializeToString()
    req_headers = {"User-Agent": "pytest-probability-otlp"}
    req_headers.update(headers)
    req_headers["Content-Type"] = "application/x-protobuf"
    if compression == "gzip":
        body = gzip.compress(body)
        req_headers["Content-Encoding"] = "gzip"
    elif compression == "deflate":
        body = zlib.compress(body)
        req_headers["Content-Encoding"] = "deflate"
    http_req = urllib.request.Request(url, data=body, headers=req_headers, method="POST")
    opener = urllib.request.build_opener(_NoRedirect)

    def fail(reason: str, status: int | None = None, retryable: bool = False) -> OtlpSendError:
        return OtlpSendError(shown, _scrub(reason, headers), status=status, retryable=retryable)

    try:
        with opener.open(http_req, timeout=timeout) as resp:
            status = resp.status
            payload = resp.read(_MAX_RESPONSE_BYTES)
    except urllib.error.HTTPError as exc:
        try:
            detail = _http_error_detail(exc.read(_MAX_RESPONSE_BYTES))
        except Exception:  # noqa: BLE001
            detail = ""
        finally:
            exc.close()
        reason = f"HTTP {exc.code} {exc.reason or ''}".rstrip()
        if detail:
            reason += f": {detail[:200]}"
        raise fail(reason, exc.code, exc.code in _RETRYABLE_HTTP) from None
    except urllib.error.URLError as exc:
        cause = exc.reason
        if isinstance(cause, TimeoutError):
            raise fail(f"timed out after {timeout:g}s", retryable=True) from None
        raise fail(f"connection failed: {cause}", retryable=True) from None
    except TimeoutError:
        raise fail(f"timed out after {timeout:g}s", retryable=True) from None
    except Exception as exc:  # http.client errors, connection resets, bad URL parts
        raise fail(f"{type(exc).__name__}: {exc}", retryable=isinstance(exc, OSError)) from None

    if not 200 <= status < 300:  # pragma: no cover - urllib raises HTTPError for these
        raise fail(f"HTTP {status}", status, status in _RETRYABLE_HTTP)
    response = ExportTraceServiceResponse() if kind == "traces" else ExportMetricsServiceResponse()
    try:
        response.ParseFromString(payload)
    except DecodeError:
        return  # a 2xx with a non-protobuf body: accepted, nothing more to learn
    partial = _partial_success_reason(kind, response)
    if partial:
        raise fail(partial, status, False)


def _grpc_target(endpoint: str, insecure: bool | None) -> tuple[str, bool]:
    """Return (target, use_tls)."""
    if "://" in endpoint:
        parts = urllib.parse.urlsplit(endpoint)
        if parts.scheme not in ("http", "https", "grpc", "grpcs") or not parts.netloc:
            raise ValueError(f"invalid OTLP/gRPC endpoint {_redact_url(endpoint)!r}")
        target = parts.netloc.rsplit("@", 1)[-1]
        if insecure is None:
            insecure = parts.scheme in ("http", "grpc")
        return target, not insecure
    target = endpoint.strip().rstrip("/")
    if not target or "/" in target:
        raise ValueError("invalid OTLP/gRPC endpoint; expected http(s)://host:port or host:port")
    return target, not bool(insecure)


def _send_grpc(
    kind: str,
    request: Any,
    endpoint: str,
    headers: dict[str, str],
    timeout: float,
    compression: str | None,
    insecure: bool | None,
) -> None:
    import grpc  # lazily: only needed for this protocol

    target, tls = _grpc_target(endpoint, insecure)
    shown = _redact_url(endpoint) if "://" in endpoint else target
    metadata = []
    for key, value in headers.items():
        if not value.isascii() or not value.isprintable():
            raise ValueError(f"OTLP header {key!r}: gRPC metadata values must be printable ASCII")
        metadata.append((key.lower(), value))
    grpc_compression = {
        None: grpc.Compression.NoCompression,
        "gzip": grpc.Compression.Gzip,
        "deflate": grpc.Compression.Deflate,
    }[compression]

    if tls:
        channel = grpc.secure_channel(target, grpc.ssl_channel_credentials(), compression=grpc_compression)
    else:
        channel = grpc.insecure_channel(target, compression=grpc_compression)
    try:
        if kind == "traces":
            from opentelemetry.proto.collector.trace.v1.trace_service_pb2_grpc import TraceServiceStub

            call = TraceServiceStub(channel).Export
        else:
            from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2_grpc import MetricsServiceStub

            call = MetricsServiceStub(channel).Export
        try:
            response = call(request, timeout=timeout, metadata=metadata or None)
        except grpc.RpcError as exc:
            code = exc.code() if callable(getattr(exc, "code", None)) else None
            details = exc.details() if callable(getattr(exc, "details", None)) else None
            name = code.name if code is not None else "UNKNOWN"
            reason = f"gRPC {name}"
            if name == "DEADLINE_EXCEEDED":
                reason += f" (timeout {timeout:g}s)"
            if details:
                reason += f": {str(details)[:200]}"
            raise OtlpSendError(
                shown, _scrub(reason, headers), status=name, retryable=name in _RETRYABLE_GRPC
            ) from None
    finally:
        channel.close()
    partial = _partial_success_reason(kind, response)
    if partial:
        raise OtlpSendError(shown, _scrub(partial, headers), status="OK", retryable=False)
