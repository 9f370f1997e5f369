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

Sending a decoded line is :mod:`pytest_probability.otel.send`'s (the SDK's
exporters). This module imports no pytest.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator, Mapping
from typing import Any, Literal, Union

from google.protobuf import json_format
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

__all__ = [
    "Kind",
    "OtlpRequest",
    "decode_line",
    "encode_metrics_request",
    "encode_trace_request",
    "read_file",
    "request_to_line",
]

Kind = Literal["traces", "metrics"]
OtlpRequest = Union[ExportTraceServiceRequest, ExportMetricsServiceRequest]

_REQUEST_TYPES: dict[str, type] = {
    "traces": ExportTraceServiceRequest,
    "metrics": ExportMetricsServiceRequest,
}

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
