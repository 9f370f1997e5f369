"""The OTLP JSON-lines codec: protobuf requests to lines with hex ids, and back.

"OTLP JSON lines" is what the OpenTelemetry Collector's ``file`` exporter
writes and its ``otlpjsonfile`` receiver reads: one JSON object per line,
each an ``ExportTraceServiceRequest`` (``{"resourceSpans": [...]}``), an
``ExportMetricsServiceRequest`` (``{"resourceMetrics": [...]}``) or an
``ExportLogsServiceRequest`` (``{"resourceLogs": [...]}``) in the
OTLP/JSON encoding (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding):

* field names are the lowerCamelCase JSON names of the proto fields;
* ``traceId``/``spanId``/``parentSpanId`` (also in links, exemplars and log records) are
  lowercase hex strings, *not* base64 as in generic protobuf JSON;
  other ``bytes`` values (e.g. a ``bytesValue`` attribute) stay base64;
* enums are integers (``"kind": 1``, ``"aggregationTemporality": 2``);
* 64-bit integers are decimal strings (``"startTimeUnixNano": "17..."``,
  ``"asInt": "3"``, ``"count": "5"``, ``"bucketCounts": ["1", "0"]``);
* fields holding their default value are omitted.

Decoding is lenient where the Collector is: snake_case field names, enum
names, numbers for 64-bit integers, upper-case hex and unknown fields
(skipped) are accepted.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator
from typing import Any, Literal, Union

from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

Kind = Literal["traces", "metrics", "logs"]
OtlpRequest = Union[ExportTraceServiceRequest, ExportMetricsServiceRequest, ExportLogsServiceRequest]  # noqa: UP007 - a runtime alias

_REQUEST_TYPES: dict[str, type[OtlpRequest]] = {
    "traces": ExportTraceServiceRequest,
    "metrics": ExportMetricsServiceRequest,
    "logs": ExportLogsServiceRequest,
}
#: Each signal's top-level key.
_KEYS: dict[Kind, str] = {"traces": "resourceSpans", "metrics": "resourceMetrics", "logs": "resourceLogs"}

# Byte length of the id fields that OTLP/JSON writes as hex (in spans, links and exemplars).
_ID_FIELDS = {"traceId": 16, "spanId": 8, "parentSpanId": 8}
_METRIC_DATA_FIELDS = ("gauge", "sum", "histogram", "exponentialHistogram", "summary")

# The JSON name -> proto name aliases that decoding accepts (jsonpb does).
_SNAKE = {
    "resourceSpans": "resource_spans",
    "resourceMetrics": "resource_metrics",
    "resourceLogs": "resource_logs",
    "scopeSpans": "scope_spans",
    "scopeMetrics": "scope_metrics",
    "scopeLogs": "scope_logs",
    "logRecords": "log_records",
    "traceId": "trace_id",
    "spanId": "span_id",
    "parentSpanId": "parent_span_id",
    "dataPoints": "data_points",
    "exponentialHistogram": "exponential_histogram",
}


def _get(obj: Any, name: str) -> Any:
    if not isinstance(obj, dict):
        return None
    return obj[name] if name in obj else obj.get(_SNAKE.get(name, name))


def _walk(obj: Any, where: str, names: tuple[str, ...]) -> Iterator[tuple[str, dict]]:
    """(JSON path, object) of every object reached through the lists ``names``."""
    if not names:
        if isinstance(obj, dict):
            yield where, obj
        return
    items = _get(obj, names[0])
    for i, item in enumerate(items if isinstance(items, list) else ()):
        yield from _walk(item, f"{where}.{names[0]}[{i}]", names[1:])


def _id_holders(obj: dict, kind: Kind) -> Iterator[tuple[str, dict]]:
    """(JSON path, object) of every span, link, exemplar and log record of a request dict."""
    if kind == "logs":
        yield from _walk(obj, "$", ("resourceLogs", "scopeLogs", "logRecords"))
        return
    if kind == "traces":
        for where, span in _walk(obj, "$", ("resourceSpans", "scopeSpans", "spans")):
            yield where, span
            yield from _walk(span, where, ("links",))
        return
    for where, metric in _walk(obj, "$", ("resourceMetrics", "scopeMetrics", "metrics")):
        for name in _METRIC_DATA_FIELDS:
            yield from _walk(_get(metric, name), f"{where}.{name}", ("dataPoints", "exemplars"))


def encode_request(req: OtlpRequest) -> dict:
    """The OTLP/JSON dict of a request."""
    kind = next((kind for kind in _KEYS if isinstance(req, _REQUEST_TYPES[kind])), None)
    if kind is None:
        raise TypeError(f"expected an Export*ServiceRequest, got {type(req).__name__}")
    # Only options that exist in every protobuf release we support: int64 as
    # strings, defaults omitted and json_name keys are the defaults anyway.
    out = json_format.MessageToDict(req, preserving_proto_field_name=False, use_integers_for_enums=True)
    for _, holder in _id_holders(out, kind):
        for name in _ID_FIELDS:
            if holder.get(name):
                holder[name] = base64.b64decode(holder[name]).hex()
    return out


def parse(kind: str, body: bytes) -> OtlpRequest:
    """The request of signal ``kind`` that ``body`` serializes."""
    return _REQUEST_TYPES[kind].FromString(body)


def request_to_line(req: OtlpRequest) -> str:
    """One OTLP JSON line (without the trailing newline), pure ASCII (non-ASCII characters ``\\u``
    escaped). NaN and infinities are strings in ``MessageToDict``'s output already: ``allow_nan=False``
    only guards the "valid JSON" promise."""
    return json.dumps(encode_request(req), separators=(",", ":"), allow_nan=False)


def _hex_to_b64(obj: dict, where: str) -> None:
    for name, size in _ID_FIELDS.items():
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
                f"{where}.{name}: expected {2 * size} hex characters, got {shown!r} (OTLP/JSON ids are hex, not base64)"
            )
        obj[key] = base64.b64encode(raw).decode("ascii")


def decode_line(line: str, *, ignore_unknown_fields: bool = True) -> tuple[Kind, OtlpRequest]:
    """Decode one OTLP JSON line into ``(kind, protobuf request)``.

    ``kind`` is ``"traces"``, ``"metrics"`` or ``"logs"``. Raises :class:`ValueError`
    saying what is wrong for malformed input (bad JSON, not an object, no
    or several signal keys, ids that are not hex of the right length,
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
    present = [kind for kind, key in _KEYS.items() if key in obj or _SNAKE[key] in obj]
    if len(present) != 1:
        if present:
            found = " and ".join(repr(_KEYS[kind]) for kind in present)
            raise ValueError(f"a line must hold one signal, found {found}")
        keys = ", ".join(sorted(map(repr, obj))) or "none"
        raise ValueError(f"expected a 'resourceSpans', 'resourceMetrics' or 'resourceLogs' key, found keys: {keys}")
    kind = present[0]
    for where, holder in _id_holders(obj, kind):
        _hex_to_b64(holder, where)
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
