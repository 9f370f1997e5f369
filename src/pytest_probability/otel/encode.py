"""Fast OTLP encoding of run spans given as plain dicts.

Why this exists
---------------
Every run of a ``bench_*`` function becomes one span, so encoding is on the
per-run path. The SDK's own encoder
(``opentelemetry.exporter.otlp.proto.common.trace_encoder.encode_spans``)
builds every message through protobuf constructors and costs about 36 µs per
span, which alone is most of the 15 % export budget of a trivial run. This
module writes the same requests directly:

* :meth:`TraceEncoder.to_protobuf` returns the serialized
  ``ExportTraceServiceRequest`` bytes. It writes the protobuf wire format by
  hand (field tags, varints, lengths) instead of filling messages: even
  in-place ``add()`` on ``upb`` messages costs about 0.5 µs per attribute, about
  8 µs for a span of a dozen attributes, the hand-written bytes about 5 µs.
* :meth:`TraceEncoder.to_json_line` returns one line of "OTLP JSON lines",
  the OpenTelemetry Collector file-exporter format documented (and decoded) by
  :mod:`pytest_probability.otel.otlp_json`: lowerCamelCase field names, ids
  as lowercase hex, 64-bit integers as decimal strings, enums as integers,
  default-valued fields omitted, pure ASCII.

The module needs only the standard library (no protobuf, no SDK, no pytest);
the unit tests check its output against the SDK encoder's.

The span wire form
------------------
A span is a plain dict (builtins only, so it can travel between processes)::

    {
      "name": str,
      "trace_id": int,           # 128-bit, nonzero
      "span_id": int,            # 64-bit, nonzero
      "parent_span_id": int,     # 0: no parent
      "parent_remote": bool,     # the parent's SpanContext.is_remote
      "flags": int,              # W3C trace flags of the span's context
      "kind": int,               # opentelemetry.trace.SpanKind value (INTERNAL=0 .. CONSUMER=4)
      "start": int, "end": int,  # ns since the epoch
      "attributes": {str: value},
      "case_attributes": {str: value} or None,  # may be absent; shared by spans, see below
      "events": [(name, time_ns, {str: value}), ...],          # tuples or lists
      "links": [(trace_id, span_id, flags, {str: value}), ...],  # usually empty
      "status": (code, description),  # 0 UNSET, 1 OK, 2 ERROR (the proto numbers)
      "dropped_attributes": int, "dropped_events": int, "dropped_links": int,  # may be absent
    }

``case_attributes`` holds attributes that many spans share (those of a case,
for its runs) in *one* dict object: its encoding is cached by identity, so it
must not be changed once a span holding it has been encoded, and no key may
appear in both dicts. It is encoded before ``attributes``.

An attribute value is a ``str``, ``bool``, ``int``, ``float`` or ``bytes``,
or a list/tuple of those (``None`` elements allowed, encoded as an empty
``AnyValue`` like the SDK does); ``None`` and mappings (``kvlistValue``) are
accepted too.

Semantics
---------
The output matches the SDK encoder's for the equivalent ``ReadableSpan``:
one ``ResourceSpans`` with one ``ScopeSpans``; ``kind`` is the SpanKind value
plus one; the status message is sent only for ERROR (the SDK's ``Status``
drops the description otherwise) and the status field is always present;
``flags`` has ``SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE`` (0x100) set, plus
``SPAN_FLAGS_CONTEXT_IS_REMOTE`` (0x200) when the span has a remote parent.
Deliberate choices where the SDK differs or the wire form says nothing:

* Like SDK 1.45 (open-telemetry/opentelemetry-python#4666), the W3C trace
  flags (``"flags"``, bits 0-7) are not copied into the OTLP span/link flags.
* A link carries no ``is_remote``, so link flags are always 0x100.
* Events and links carry no dropped-attributes count (always 0).
* An ``int`` outside the int64 range is sent as a string value (its decimal
  text) instead of making the attribute fail, as it does in the SDK.
* A string that cannot be encoded as UTF-8 (lone surrogates, e.g. from
  ``surrogateescape`` file names) has those characters replaced by ``?``; the
  SDK drops such an attribute and fails the whole batch for such a name.
* A value of any other type drops its attribute (as in the SDK, minus the log).
* An empty batch gives an empty request: ``b""`` and ``{"resourceSpans":[]}``.

Metrics
-------
:meth:`TraceEncoder.metrics_protobuf` and :meth:`TraceEncoder.metrics_json_line`
encode the session's metrics, with the same resource and scope as the spans,
as one ``ExportMetricsServiceRequest`` (one ``ResourceMetrics``, one
``ScopeMetrics``), so that session end needs neither the SDK nor protobuf.
A metric is a plain tuple ``(name, description, unit, kind, points)``:

* ``kind`` ``"counter"``: a monotonic cumulative ``Sum``; ``"gauge"``: a
  ``Gauge``; points ``(attributes, value)``, an ``int`` value (not a ``bool``)
  is sent as ``as_int``, any other as ``as_double``;
* ``kind`` ``"histogram"``: a cumulative ``Histogram``; points ``(attributes,
  (count, sum, bucket_counts, explicit_bounds, min, max))``.

The output matches the SDK encoder's (``encode_metrics``) for the equivalent
``MetricsData`` with every point from ``start_ns`` to ``now_ns``; like it:

* gauge points carry no ``start_time_unix_nano`` (the SDK encoder drops it);
* a metric without points carries no data field at all (no ``sum``/``gauge``/
  ``histogram``, hence no temporality);
* a histogram's ``sum``, ``min`` and ``max`` are always sent (they have
  explicit presence), unless ``None``;
* an empty list of metrics still gives the request with one (empty)
  ``ScopeMetrics``.

Beyond the SDK, which fails the whole batch for these: an ``int`` value
outside the int64 range and a ``bool`` value are sent as ``as_double``
(``True`` as 1.0); strings are scrubbed as for spans.
"""

from __future__ import annotations

import base64
import json
import re
import struct
from collections.abc import Mapping, Sequence
from json.encoder import encode_basestring_ascii
from typing import Any, Callable, NamedTuple

__all__ = ["METRIC_KINDS", "ResourceFields", "TraceEncoder", "metric_points", "resource_proto_fields"]

#: ``SpanFlags`` bits of OTLP (trace.proto): the parent's is_remote is known / is true.
HAS_IS_REMOTE = 0x100
IS_REMOTE = 0x200
_LOCAL_FLAGS = HAS_IS_REMOTE
_REMOTE_FLAGS = HAS_IS_REMOTE | IS_REMOTE

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1
_UINT64_MASK = (1 << 64) - 1
_KEY_CACHE_LIMIT = 4096


class _Unsupported(Exception):
    """An attribute value of a type OTLP cannot carry; its attribute is dropped."""


def _scrub_str(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def _scrub(obj: Any) -> Any:
    """``obj`` with every string (keys included) made encodable as UTF-8."""
    if isinstance(obj, str):
        return _scrub_str(obj)
    if isinstance(obj, Mapping):
        return {_scrub(k): _scrub(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_scrub(v) for v in obj)
    return obj


# ==========================================================================
# Protobuf wire format
# ==========================================================================
#
# Field numbers (opentelemetry-proto, tag = number << 3 | wire type, with
# wire type 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32):
#   ExportTraceServiceRequest: resource_spans=1
#   ResourceSpans: resource=1, scope_spans=2, schema_url=3
#   Resource: attributes=1          ScopeSpans: scope=1, spans=2, schema_url=3
#   InstrumentationScope: name=1, version=2, attributes=3
#   Span: trace_id=1, span_id=2, trace_state=3, parent_span_id=4, name=5,
#         kind=6, start_time_unix_nano=7 (fixed64), end_time_unix_nano=8
#         (fixed64), attributes=9, dropped_attributes_count=10, events=11,
#         dropped_events_count=12, links=13, dropped_links_count=14,
#         status=15, flags=16 (fixed32)
#   Span.Event: time_unix_nano=1 (fixed64), name=2, attributes=3
#   Span.Link: trace_id=1, span_id=2, attributes=4, flags=6 (fixed32)
#   Status: message=2, code=3
#   KeyValue: key=1, value=2         ArrayValue / KeyValueList: values=1
#   AnyValue: string_value=1, bool_value=2, int_value=3, double_value=4
#             (fixed64), array_value=5, kvlist_value=6, bytes_value=7

_SMALL = tuple(bytes((i,)) for i in range(128))


def _varint(n: int) -> bytes:
    """The base-128 varint of ``0 <= n < 2**64``."""
    if n < 0x80:
        return _SMALL[n]
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _field(tag: bytes, payload: bytes) -> bytes:
    """A length-delimited field: tag, length, payload."""
    n = len(payload)
    return tag + (_SMALL[n] if n < 0x80 else _varint(n)) + payload


_pack_double = struct.Struct("<Bd").pack  # tag 0x21 + double_value
_pack_times = struct.Struct("<BQBQ").pack  # span start (0x39) and end (0x41)
_pack_event_time = struct.Struct("<BQ").pack  # event time_unix_nano (0x09)
_pack_fixed32 = struct.Struct("<I").pack

_PB_KIND = {0: b"\x30\x01", 1: b"\x30\x02", 2: b"\x30\x03", 3: b"\x30\x04", 4: b"\x30\x05"}
_PB_STATUS_CODE = {0: b"", 1: b"\x18\x01", 2: b"\x18\x02"}
_PB_SPAN_FLAGS = (b"\x85\x01" + _pack_fixed32(_LOCAL_FLAGS), b"\x85\x01" + _pack_fixed32(_REMOTE_FLAGS))
_PB_LINK_FLAGS = b"\x35" + _pack_fixed32(_LOCAL_FLAGS)
_PB_EMPTY_STATUS = b"\x7a\x00"
_PB_TRUE = b"\x10\x01"
_PB_FALSE = b"\x10\x00"

# key -> the KeyValue.key field, bytes ready to use (bounded: keys may be dynamic).
_key_fields: dict[str, bytes] = {}


def _pb_any(value: Any) -> bytes:
    """The body of the ``AnyValue`` for ``value`` (any supported type)."""
    if value is None:
        return b""
    if isinstance(value, bool):
        return _PB_TRUE if value else _PB_FALSE
    if isinstance(value, str):
        return _field(b"\x0a", value.encode("utf-8"))
    if isinstance(value, int):
        if _INT64_MIN <= value <= _INT64_MAX:
            return b"\x18" + _varint(value & _UINT64_MASK)
        return _field(b"\x0a", str(value).encode("ascii"))
    if isinstance(value, float):
        return _pack_double(0x21, value)
    if isinstance(value, bytes):
        return _field(b"\x3a", value)
    if isinstance(value, (list, tuple)):
        return _field(b"\x2a", b"".join([_field(b"\x0a", _pb_any(v)) for v in value]))
    if isinstance(value, Mapping):
        kvs = [_field(b"\x0a", str(k).encode("utf-8")) + _field(b"\x12", _pb_any(v)) for k, v in value.items()]
        return _field(b"\x32", b"".join([_field(b"\x0a", kv) for kv in kvs]))
    raise _Unsupported(type(value).__name__)


def _pb_attributes(attributes: Mapping[str, Any], tag: bytes, out: list[bytes]) -> None:
    """Append one ``tag`` + KeyValue field per attribute to ``out``.

    The common scalar types are inlined; this loop is most of the cost of a span.
    """
    small = _SMALL
    keys = _key_fields
    append = out.append
    for key, value in attributes.items():
        key_field = keys.get(key)
        if key_field is None:
            key_field = _field(b"\x0a", key.encode("utf-8"))
            if len(keys) < _KEY_CACHE_LIMIT:
                keys[key] = key_field
        t = type(value)
        if t is str:
            raw = value.encode("utf-8")
            n = len(raw)
            if n < 0x7E:  # the AnyValue (tag, length, string) is then < 128 bytes
                kv = key_field + b"\x12" + small[n + 2] + b"\x0a" + small[n] + raw
            else:
                kv = key_field + _field(b"\x12", _field(b"\x0a", raw))
        elif t is bool:
            kv = key_field + (b"\x12\x02\x10\x01" if value else b"\x12\x02\x10\x00")
        elif t is int and _INT64_MIN <= value <= _INT64_MAX:
            v = _varint(value & _UINT64_MASK)
            kv = key_field + b"\x12" + small[len(v) + 1] + b"\x18" + v
        elif t is float:
            kv = key_field + b"\x12\x09" + _pack_double(0x21, value)
        else:
            try:
                kv = key_field + _field(b"\x12", _pb_any(value))
            except _Unsupported:
                continue
        n = len(kv)
        append(tag)
        append(small[n] if n < 0x80 else _varint(n))
        append(kv)


# id(shared dict) -> (the dict, its encoding): the dict is kept so that its id stays its own.
_shared_pb: dict[int, tuple[Mapping[str, Any], bytes]] = {}
_shared_json: dict[int, tuple[Mapping[str, Any], str]] = {}
_SHARED_CACHE_LIMIT = 8192


def _cached(cache: dict[int, tuple[Mapping[str, Any], Any]], shared: Mapping[str, Any], encode: Callable[[Any], Any]) -> Any:
    cached = cache.get(id(shared))
    if cached is not None and cached[0] is shared:
        return cached[1]
    encoded = encode(shared)
    if len(cache) >= _SHARED_CACHE_LIMIT:
        cache.clear()
    cache[id(shared)] = (shared, encoded)
    return encoded


def _pb_shared(shared: Mapping[str, Any]) -> bytes:
    out: list[bytes] = []
    _pb_attributes(shared, b"\x4a", out)
    return b"".join(out)


def _pb_span(span: Mapping[str, Any]) -> bytes:
    """The body of one ``Span`` message."""
    out = [b"\x0a\x10", span["trace_id"].to_bytes(16, "big"), b"\x12\x08", span["span_id"].to_bytes(8, "big")]
    parent = span["parent_span_id"]
    if parent:
        out.append(b"\x22\x08")
        out.append(parent.to_bytes(8, "big"))
    name = span["name"]
    if name:
        out.append(_field(b"\x2a", name.encode("utf-8")))
    out.append(_PB_KIND[span["kind"]])
    out.append(_pack_times(0x39, span["start"], 0x41, span["end"]))
    shared = span.get("case_attributes")
    if shared:
        out.append(_cached(_shared_pb, shared, _pb_shared))
    attributes = span["attributes"]
    if attributes:
        _pb_attributes(attributes, b"\x4a", out)
    dropped = span.get("dropped_attributes")
    if dropped:
        out.append(b"\x50" + _varint(dropped))
    for event_name, time_ns, event_attributes in span["events"]:
        event = [_pack_event_time(0x09, time_ns)]
        if event_name:
            event.append(_field(b"\x12", event_name.encode("utf-8")))
        if event_attributes:
            _pb_attributes(event_attributes, b"\x1a", event)
        out.append(_field(b"\x5a", b"".join(event)))
    dropped = span.get("dropped_events")
    if dropped:
        out.append(b"\x60" + _varint(dropped))
    for trace_id, span_id, _trace_flags, link_attributes in span["links"]:
        link = [b"\x0a\x10", trace_id.to_bytes(16, "big"), b"\x12\x08", span_id.to_bytes(8, "big")]
        if link_attributes:
            _pb_attributes(link_attributes, b"\x22", link)
        link.append(_PB_LINK_FLAGS)
        out.append(_field(b"\x6a", b"".join(link)))
    dropped = span.get("dropped_links")
    if dropped:
        out.append(b"\x70" + _varint(dropped))
    code, description = span["status"]
    if code == 2 and description:
        out.append(_field(b"\x7a", _field(b"\x12", description.encode("utf-8")) + b"\x18\x02"))
    elif code:
        out.append(_field(b"\x7a", _PB_STATUS_CODE[code]))
    else:
        out.append(_PB_EMPTY_STATUS)
    out.append(_PB_SPAN_FLAGS[1 if parent and span["parent_remote"] else 0])
    return b"".join(out)


# ==========================================================================
# OTLP JSON
# ==========================================================================
#
# Spans are written as text directly (building dicts for json.dumps costs
# about three times as much); strings go through the json module's own C
# escaper, so the output is what ``json.dumps(..., ensure_ascii=True)`` gives.
# Rare values (sequences, bytes, non-finite floats, ...) go through a dict.
# Members are in field-number order, like ``json_format.MessageToDict``.

_JSON_KIND = {0: 1, 1: 2, 2: 3, 3: 4, 4: 5}
_JSON_STATUS = {0: ',"status":{}', 1: ',"status":{"code":1}', 2: ',"status":{"code":2}'}
_JSON_SPAN_FLAGS = (f',"flags":{_LOCAL_FLAGS}}}', f',"flags":{_REMOTE_FLAGS}}}')
_json_dumps: Callable[[Any], str] = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode
_json_str: Callable[[str], str] = encode_basestring_ascii

# key -> '{"key":"<key>","value":' (bounded like _key_fields).
_json_key_prefixes: dict[str, str] = {}


def _json_double(value: float) -> float | str:
    if value - value == 0:  # finite
        return value
    if value != value:
        return "NaN"
    return "Infinity" if value > 0 else "-Infinity"


def _json_any(value: Any) -> dict[str, Any]:
    """The OTLP/JSON ``AnyValue`` object for ``value`` (any supported type)."""
    if value is None:
        return {}
    if isinstance(value, bool):
        return {"boolValue": bool(value)}
    if isinstance(value, str):
        return {"stringValue": str(value)}
    if isinstance(value, int):
        if _INT64_MIN <= value <= _INT64_MAX:
            return {"intValue": str(int(value))}
        return {"stringValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": _json_double(float(value))}
    if isinstance(value, bytes):
        return {"bytesValue": base64.b64encode(value).decode("ascii")}
    if isinstance(value, (list, tuple)):
        return {"arrayValue": {"values": [_json_any(v) for v in value]} if value else {}}
    if isinstance(value, Mapping):
        kvs = [{"key": str(k), "value": _json_any(v)} for k, v in value.items()]
        return {"kvlistValue": {"values": kvs} if kvs else {}}
    raise _Unsupported(type(value).__name__)


def _json_attributes(attributes: Mapping[str, Any]) -> str:
    """The comma-separated OTLP/JSON ``KeyValue`` objects of ``attributes``."""
    out = []
    append = out.append
    prefixes = _json_key_prefixes
    esc = _json_str
    for key, value in attributes.items():
        prefix = prefixes.get(key)
        if prefix is None:
            prefix = '{"key":' + esc(key) + ',"value":'
            if len(prefixes) < _KEY_CACHE_LIMIT:
                prefixes[key] = prefix
        t = type(value)
        if t is str:
            append(prefix + '{"stringValue":' + esc(value) + "}}")
        elif t is bool:
            append(prefix + ('{"boolValue":true}}' if value else '{"boolValue":false}}'))
        elif t is int and _INT64_MIN <= value <= _INT64_MAX:
            append(f'{prefix}{{"intValue":"{value}"}}}}')
        elif t is float and value - value == 0:
            append(prefix + '{"doubleValue":' + repr(value) + "}}")
        else:
            try:
                append(prefix + _json_dumps(_json_any(value)) + "}")
            except _Unsupported:
                pass
    return ",".join(out)


def _json_span(span: Mapping[str, Any]) -> str:
    """The OTLP/JSON ``Span`` object."""
    parent = span["parent_span_id"]
    out = [f'{{"traceId":"{span["trace_id"]:032x}","spanId":"{span["span_id"]:016x}"']
    append = out.append
    if parent:
        append(f',"parentSpanId":"{parent:016x}"')
    name = span["name"]
    if name:
        append(',"name":' + _json_str(name))
    append(f',"kind":{_JSON_KIND[span["kind"]]}')
    start = span["start"]
    if start:
        append(f',"startTimeUnixNano":"{start:d}"')
    end = span["end"]
    if end:
        append(f',"endTimeUnixNano":"{end:d}"')
    attributes = span["attributes"]
    encoded = _json_attributes(attributes) if attributes else ""
    shared = span.get("case_attributes")
    if shared:
        shared_encoded = _cached(_shared_json, shared, _json_attributes)
        if shared_encoded:
            encoded = shared_encoded + "," + encoded if encoded else shared_encoded
    if encoded:
        append(',"attributes":[' + encoded + "]")
    dropped = span.get("dropped_attributes")
    if dropped:
        append(f',"droppedAttributesCount":{dropped:d}')
    events = span["events"]
    if events:
        append(',"events":[' + ",".join([_json_event(*event) for event in events]) + "]")
    dropped = span.get("dropped_events")
    if dropped:
        append(f',"droppedEventsCount":{dropped:d}')
    links = span["links"]
    if links:
        append(',"links":[' + ",".join([_json_link(*link) for link in links]) + "]")
    dropped = span.get("dropped_links")
    if dropped:
        append(f',"droppedLinksCount":{dropped:d}')
    code, description = span["status"]
    if code == 2 and description:
        append(',"status":{"message":' + _json_str(description) + ',"code":2}')
    else:
        append(_JSON_STATUS[code])
    append(_JSON_SPAN_FLAGS[1 if parent and span["parent_remote"] else 0])
    return "".join(out)


def _json_event(name: str, time_ns: int, attributes: Mapping[str, Any]) -> str:
    members = []
    if time_ns:
        members.append(f'"timeUnixNano":"{time_ns:d}"')
    if name:
        members.append('"name":' + _json_str(name))
    if attributes:
        encoded = _json_attributes(attributes)
        if encoded:
            members.append('"attributes":[' + encoded + "]")
    return "{" + ",".join(members) + "}"


def _json_link(trace_id: int, span_id: int, _trace_flags: int, attributes: Mapping[str, Any]) -> str:
    out = f'{{"traceId":"{trace_id:032x}","spanId":"{span_id:016x}"'
    if attributes:
        encoded = _json_attributes(attributes)
        if encoded:
            out += ',"attributes":[' + encoded + "]"
    return out + f',"flags":{_LOCAL_FLAGS}}}'


# ==========================================================================
# Resource, scope, requests
# ==========================================================================


class ResourceFields(NamedTuple):
    """A resource, pre-encoded for :class:`TraceEncoder` (the same for every batch)."""

    #: ``ResourceSpans.resource`` field (tag, length, ``Resource`` message).
    protobuf_resource: bytes
    #: ``ResourceSpans.schema_url`` field, ``b""`` when there is none.
    protobuf_schema_url: bytes
    #: OTLP/JSON ``Resource`` object.
    json_resource: str
    #: OTLP/JSON ``,"schemaUrl":"..."`` member, ``""`` when there is none.
    json_schema_url: str


def resource_proto_fields(attributes: Mapping[str, Any], schema_url: str = "") -> ResourceFields:
    """Pre-encode a resource (e.g. ``Resource.attributes`` and ``Resource.schema_url``)."""
    attributes = _scrub(dict(attributes))
    schema_url = _scrub_str(schema_url or "")
    body: list[bytes] = []
    _pb_attributes(attributes, b"\x0a", body)
    json_attributes = _json_attributes(attributes)
    return ResourceFields(
        protobuf_resource=_field(b"\x0a", b"".join(body)),
        protobuf_schema_url=_field(b"\x1a", schema_url.encode("utf-8")) if schema_url else b"",
        json_resource='{"attributes":[' + json_attributes + "]}" if json_attributes else "{}",
        json_schema_url=',"schemaUrl":' + _json_dumps(schema_url) if schema_url else "",
    )


class TraceEncoder:
    """Encodes batches of wire-form spans (see the module docstring) of one resource and scope.

    Each batch becomes one ``ExportTraceServiceRequest`` with one
    ``ResourceSpans`` holding one ``ScopeSpans``. Instances hold only
    immutable pre-encoded data (plus module-level caches of encoded
    attribute keys) and may be shared between threads.
    """

    def __init__(
        self,
        resource_attributes: Mapping[str, Any],
        resource_schema_url: str,
        scope_name: str,
        scope_version: str,
    ) -> None:
        resource = resource_proto_fields(resource_attributes, resource_schema_url)
        scope_name = _scrub_str(scope_name or "")
        scope_version = _scrub_str(scope_version or "")

        scope = b""
        json_scope: dict[str, str] = {}
        if scope_name:
            scope += _field(b"\x0a", scope_name.encode("utf-8"))
            json_scope["name"] = scope_name
        if scope_version:
            scope += _field(b"\x12", scope_version.encode("utf-8"))
            json_scope["version"] = scope_version
        self._pb_resource = resource.protobuf_resource
        self._pb_scope = _field(b"\x0a", scope)  # ScopeSpans.scope
        self._pb_schema_url = resource.protobuf_schema_url
        self._json_head = (
            '{"resourceSpans":[{"resource":'
            + resource.json_resource
            + ',"scopeSpans":[{"scope":'
            + _json_dumps(json_scope)
            + ',"spans":['
        )
        self._json_tail = "]}]" + resource.json_schema_url + "}]}"
        # For metrics (the same resource and scope).
        self._json_resource = resource.json_resource
        self._json_scope = _json_dumps(json_scope)
        self._json_schema_url = resource.json_schema_url

    def to_protobuf(self, spans: Sequence[Mapping[str, Any]]) -> bytes:
        """The serialized ``ExportTraceServiceRequest`` of ``spans`` (``b""`` for none)."""
        return self.protobuf_request([span_protobuf(span) for span in spans])

    def protobuf_request(self, encoded: Sequence[bytes]) -> bytes:
        """The request of spans already encoded by :func:`span_protobuf` (``b""`` for none)."""
        if not encoded:
            return b""
        scope_spans = self._pb_scope + b"".join(encoded)
        resource_spans = b"".join((self._pb_resource, _field(b"\x12", scope_spans), self._pb_schema_url))
        return _field(b"\x0a", resource_spans)

    def to_json_line(self, spans: Sequence[Mapping[str, Any]]) -> str:
        """One OTLP JSON line (pure ASCII, no trailing newline) for ``spans``.

        An empty batch gives ``{"resourceSpans":[]}``, which decodes to the
        same empty request as ``to_protobuf([])``.
        """
        return self.json_request([span_json(span) for span in spans])

    def json_request(self, encoded: Sequence[str]) -> str:
        """The JSON line of spans already encoded by :func:`span_json`."""
        if not encoded:
            return '{"resourceSpans":[]}'
        return self._json_head + ",".join(encoded) + self._json_tail

    def metrics_protobuf(self, metrics: Sequence[tuple], start_ns: int, now_ns: int) -> bytes:
        """The serialized ``ExportMetricsServiceRequest`` of ``metrics`` (see the module docstring).

        One ``ResourceMetrics`` (this encoder's resource and schema URL) holding
        one ``ScopeMetrics`` (its scope) with the metrics in order; points are
        cumulative from ``start_ns`` (ns since the epoch) to ``now_ns``.
        """
        scope_metrics = self._pb_scope + b"".join([_metric_protobuf(metric, start_ns, now_ns) for metric in metrics])
        resource_metrics = b"".join((self._pb_resource, _field(b"\x12", scope_metrics), self._pb_schema_url))
        return _field(b"\x0a", resource_metrics)

    def metrics_json_line(self, metrics: Sequence[tuple], start_ns: int, now_ns: int) -> str:
        """The request of :meth:`metrics_protobuf` as one OTLP JSON line (pure ASCII, no newline)."""
        encoded = [_metric_json(metric, start_ns, now_ns) for metric in metrics]
        scope_metrics = '{"scope":' + self._json_scope + (',"metrics":[' + ",".join(encoded) + "]}" if encoded else "}")
        return (
            '{"resourceMetrics":[{"resource":'
            + self._json_resource
            + ',"scopeMetrics":['
            + scope_metrics
            + "]"
            + self._json_schema_url
            + "}]}"
        )


def span_protobuf(span: Mapping[str, Any]) -> bytes:
    """One span as a ``ScopeSpans.spans`` entry (tag, length, ``Span`` message).

    Requests are concatenations of these (:meth:`TraceEncoder.protobuf_request`),
    so a span can be encoded where it ends and kept as bytes until its batch
    is sent: no resource is needed here.
    """
    try:
        body = _pb_span(span)
    except UnicodeEncodeError:
        body = _pb_span(_scrub(span))
    n = len(body)
    return b"".join((b"\x12", _SMALL[n] if n < 0x80 else _varint(n), body))


#: A JSON escape of an unpaired surrogate (json.dumps writes lowercase hex).
_LONE_SURROGATE = re.compile(r"\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f][0-9a-f]{2})|(?<!\\ud[89ab][0-9a-f]{2})\\ud[c-f][0-9a-f]{2}")


def span_json(span: Mapping[str, Any]) -> str:
    """One span as an element of the OTLP/JSON ``spans`` array (see :meth:`TraceEncoder.json_request`)."""
    text = _json_span(span)
    # A lone surrogate ("\ud800" without its pair) is no valid OTLP string:
    # re-encode the span with scrubbed strings only then. A non-BMP character
    # (an emoji) is a valid pair and needs nothing.
    if "\\ud" in text and _LONE_SURROGATE.search(text):
        text = _json_span(_scrub(span))
    return text


def span_encoder(protobuf: bool, as_json: bool) -> Callable[[Mapping[str, Any]], Any]:
    """A function encoding a span's wire form in the formats the session's sinks need:
    ``bytes`` (protobuf, for an endpoint), ``str`` (OTLP/JSON, for a file) or, with
    both, the pair ``(bytes, str)``. A lone bytes or str is no object the garbage
    collector tracks, which matters for thousands of spans waiting for their batch."""
    if protobuf and as_json:
        return lambda span: (span_protobuf(span), span_json(span))
    if protobuf:
        return span_protobuf
    return span_json


# ==========================================================================
# Metrics
# ==========================================================================
#
# Field numbers (opentelemetry-proto metrics.proto and metrics_service.proto):
#   ExportMetricsServiceRequest: resource_metrics=1
#   ResourceMetrics: resource=1, scope_metrics=2, schema_url=3
#   ScopeMetrics: scope=1, metrics=2, schema_url=3
#   Metric: name=1, description=2, unit=3, gauge=5, sum=7, histogram=9
#   Gauge: data_points=1
#   Sum: data_points=1, aggregation_temporality=2, is_monotonic=3
#   Histogram: data_points=1, aggregation_temporality=2
#   NumberDataPoint: start_time_unix_nano=2 (fixed64), time_unix_nano=3
#       (fixed64), as_double=4 (double), as_int=6 (sfixed64), attributes=7
#   HistogramDataPoint: start_time_unix_nano=2 (fixed64), time_unix_nano=3
#       (fixed64), count=4 (fixed64), sum=5 (optional double), bucket_counts=6
#       (packed fixed64), explicit_bounds=7 (packed double), attributes=9,
#       min=11 (optional double), max=12 (optional double)
# Fields are written in field-number order, as protobuf serializes them.

#: The values of a metric tuple's ``kind``.
METRIC_KINDS = ("counter", "gauge", "histogram")
_CUMULATIVE = 2  # AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE
_PB_METRIC_DATA = {
    "counter": (b"\x3a", b"\x10\x02\x18\x01"),  # Metric.sum; temporality CUMULATIVE, is_monotonic
    "gauge": (b"\x2a", b""),  # Metric.gauge
    "histogram": (b"\x4a", b"\x10\x02"),  # Metric.histogram; temporality CUMULATIVE
}
_JSON_METRIC_DATA = {
    "counter": ('"sum":{', f',"aggregationTemporality":{_CUMULATIVE},"isMonotonic":true}}'),
    "gauge": ('"gauge":{', "}"),
    "histogram": ('"histogram":{', f',"aggregationTemporality":{_CUMULATIVE}}}'),
}
_pack_fixed64 = _pack_event_time  # tag byte + little-endian uint64
_pack_sfixed64 = struct.Struct("<Bq").pack


def metric_points(metrics: Sequence[tuple]) -> int:
    """The number of data points of ``metrics`` (``(name, description, unit, kind, points)`` tuples)."""
    return sum(len(metric[4]) for metric in metrics)


def _metric_fields(metric: Sequence[Any]) -> tuple[str, str, str, str, Sequence[Any]]:
    """``metric`` unpacked, with its kind checked and ``None`` strings made empty."""
    name, description, unit, kind, points = metric
    if kind not in _PB_METRIC_DATA:
        raise ValueError(f"unknown metric kind {kind!r}; expected one of {', '.join(METRIC_KINDS)}")
    return name or "", description or "", unit or "", kind, points


def _scrub_metric(
    name: str, description: str, unit: str, kind: str, points: Sequence[Any]
) -> tuple[str, str, str, str, Sequence[Any]]:
    return _scrub_str(name), _scrub_str(description), _scrub_str(unit), kind, _scrub(list(points))


def _is_int64(value: Any) -> bool:
    """Whether a point's ``value`` goes to ``as_int`` (else ``as_double``)."""
    return isinstance(value, int) and not isinstance(value, bool) and _INT64_MIN <= value <= _INT64_MAX


def _pb_number_point(attributes: Mapping[str, Any], value: Any, start_ns: int, now_ns: int) -> bytes:
    """The body of a ``NumberDataPoint`` (``start_ns`` 0: none, as for gauges)."""
    out = []
    if start_ns:
        out.append(_pack_fixed64(0x11, start_ns))
    if now_ns:
        out.append(_pack_fixed64(0x19, now_ns))
    if _is_int64(value):
        out.append(_pack_sfixed64(0x31, value))
    else:
        out.append(_pack_double(0x21, float(value)))
    if attributes:
        _pb_attributes(attributes, b"\x3a", out)
    return b"".join(out)


def _pb_histogram_point(attributes: Mapping[str, Any], value: Sequence[Any], start_ns: int, now_ns: int) -> bytes:
    """The body of a ``HistogramDataPoint``."""
    count, total, bucket_counts, explicit_bounds, minimum, maximum = value
    out = []
    if start_ns:
        out.append(_pack_fixed64(0x11, start_ns))
    if now_ns:
        out.append(_pack_fixed64(0x19, now_ns))
    if count:
        out.append(_pack_fixed64(0x21, count))
    if total is not None:
        out.append(_pack_double(0x29, float(total)))
    if bucket_counts:
        out.append(_field(b"\x32", struct.pack(f"<{len(bucket_counts)}Q", *bucket_counts)))
    if explicit_bounds:
        out.append(_field(b"\x3a", struct.pack(f"<{len(explicit_bounds)}d", *explicit_bounds)))
    if attributes:
        _pb_attributes(attributes, b"\x4a", out)
    if minimum is not None:
        out.append(_pack_double(0x59, float(minimum)))
    if maximum is not None:
        out.append(_pack_double(0x61, float(maximum)))
    return b"".join(out)


def _pb_metric(
    name: str, description: str, unit: str, kind: str, points: Sequence[Any], start_ns: int, now_ns: int
) -> bytes:
    """The body of a ``Metric`` message."""
    data_tag, data_tail = _PB_METRIC_DATA[kind]
    out = []
    if name:
        out.append(_field(b"\x0a", name.encode("utf-8")))
    if description:
        out.append(_field(b"\x12", description.encode("utf-8")))
    if unit:
        out.append(_field(b"\x1a", unit.encode("utf-8")))
    if points:  # the SDK encoder sets the data field only when adding a point
        if kind == "histogram":
            encoded = [_field(b"\x0a", _pb_histogram_point(a, v, start_ns, now_ns)) for a, v in points]
        else:
            point_start = start_ns if kind == "counter" else 0  # the SDK drops a gauge's start time
            encoded = [_field(b"\x0a", _pb_number_point(a, v, point_start, now_ns)) for a, v in points]
        out.append(_field(data_tag, b"".join(encoded) + data_tail))
    return b"".join(out)


def _metric_protobuf(metric: Sequence[Any], start_ns: int, now_ns: int) -> bytes:
    """One metric as a ``ScopeMetrics.metrics`` entry (tag, length, ``Metric`` message)."""
    fields = _metric_fields(metric)
    try:
        body = _pb_metric(*fields, start_ns, now_ns)
    except UnicodeEncodeError:
        body = _pb_metric(*_scrub_metric(*fields), start_ns, now_ns)
    return _field(b"\x12", body)


def _json_number(value: Any) -> str:
    """A double as OTLP/JSON: a number, or ``"NaN"``/``"Infinity"``/``"-Infinity"``."""
    value = float(value)
    if value - value == 0:  # finite: what json.dumps writes
        return repr(value)
    return _json_dumps(_json_double(value))


def _json_number_point(attributes: Mapping[str, Any], value: Any, start_ns: int, now_ns: int) -> str:
    members = []
    if start_ns:
        members.append(f'"startTimeUnixNano":"{start_ns:d}"')
    if now_ns:
        members.append(f'"timeUnixNano":"{now_ns:d}"')
    if _is_int64(value):
        members.append(f'"asInt":"{int(value):d}"')
    else:
        members.append('"asDouble":' + _json_number(value))
    if attributes:
        encoded = _json_attributes(attributes)
        if encoded:
            members.append('"attributes":[' + encoded + "]")
    return "{" + ",".join(members) + "}"


def _json_histogram_point(attributes: Mapping[str, Any], value: Sequence[Any], start_ns: int, now_ns: int) -> str:
    count, total, bucket_counts, explicit_bounds, minimum, maximum = value
    members = []
    if start_ns:
        members.append(f'"startTimeUnixNano":"{start_ns:d}"')
    if now_ns:
        members.append(f'"timeUnixNano":"{now_ns:d}"')
    if count:
        members.append(f'"count":"{count:d}"')
    if total is not None:
        members.append('"sum":' + _json_number(total))
    if bucket_counts:
        members.append('"bucketCounts":[' + ",".join([f'"{n:d}"' for n in bucket_counts]) + "]")
    if explicit_bounds:
        members.append('"explicitBounds":[' + ",".join([_json_number(b) for b in explicit_bounds]) + "]")
    if attributes:
        encoded = _json_attributes(attributes)
        if encoded:
            members.append('"attributes":[' + encoded + "]")
    if minimum is not None:
        members.append('"min":' + _json_number(minimum))
    if maximum is not None:
        members.append('"max":' + _json_number(maximum))
    return "{" + ",".join(members) + "}"


def _json_metric(
    name: str, description: str, unit: str, kind: str, points: Sequence[Any], start_ns: int, now_ns: int
) -> str:
    members = []
    if name:
        members.append('"name":' + _json_str(name))
    if description:
        members.append('"description":' + _json_str(description))
    if unit:
        members.append('"unit":' + _json_str(unit))
    if points:
        if kind == "histogram":
            encoded = [_json_histogram_point(a, v, start_ns, now_ns) for a, v in points]
        else:
            point_start = start_ns if kind == "counter" else 0
            encoded = [_json_number_point(a, v, point_start, now_ns) for a, v in points]
        head, tail = _JSON_METRIC_DATA[kind]
        members.append(head + '"dataPoints":[' + ",".join(encoded) + "]" + tail)
    return "{" + ",".join(members) + "}"


def _metric_json(metric: Sequence[Any], start_ns: int, now_ns: int) -> str:
    """One metric as an element of the OTLP/JSON ``metrics`` array."""
    fields = _metric_fields(metric)
    text = _json_metric(*fields, start_ns, now_ns)
    if "\\ud" in text and _LONE_SURROGATE.search(text):  # a lone surrogate (see span_json)
        text = _json_metric(*_scrub_metric(*fields), start_ns, now_ns)
    return text
