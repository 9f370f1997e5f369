"""TraceEncoder (otel/encode.py) against the SDK's own OTLP encoder.

Every comparison builds the same spans twice: as SDK ``ReadableSpan`` objects
(from a real ``TracerProvider`` or constructed with fixed ids and times) that
go through ``encode_spans``, and as wire-form dicts that go through
``TraceEncoder``. The protobuf outputs must decode to equal requests, and the
JSON line must be valid OTLP JSON (``otlp_json.decode_line``) for that same
request.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, NonRecordingSpan, SpanContext, SpanKind, Status, StatusCode, TraceFlags

from pytest_probability.otel import otlp_json
from pytest_probability.otel.encode import TraceEncoder, resource_proto_fields

RESOURCE = Resource(
    {"service.name": "pytest-probability-test", "prob.suite": "unit", "host.cpus": 2},
    schema_url="https://opentelemetry.io/schemas/1.21.0",
)
SCOPE = InstrumentationScope("pytest_probability", "0.4.0")
TRACE_ID = 0x5B8EFFF798038103D269B633813FC60C
OTHER_TRACE_ID = 0x0AF7651916CD43DD8448EB211C80319C
START = 1_760_000_000_123_456_789

# One of every attribute value type the wire form carries.
VALUES: dict[str, Any] = {
    "str": "plain",
    "str.empty": "",
    "str.unicode": "héllo wörld — ünïcödé ✓ 日本語",
    "str.astral": "emoji 😀 and 𝄞",
    "str.long": "x" * 300 + "é" * 9000,  # lengths that need 2- and 3-byte varints
    "str.control": 'quote " backslash \\ newline \n tab \t nul \x00',
    "bool.true": True,
    "bool.false": False,
    "int.zero": 0,
    "int.one": 1,
    "int.negative": -5,
    "int.big": 1 << 40,
    "int.min": -(1 << 63),
    "int.max": (1 << 63) - 1,
    "float": 1.5,
    "float.zero": 0.0,
    "float.negative.zero": -0.0,
    "float.tiny": 5e-324,
    "float.huge": 1.7976931348623157e308,
    "float.integral": 3.0,
    "float.nan": math.nan,
    "float.inf": math.inf,
    "float.-inf": -math.inf,
    "bytes": b"\x00\x01\xfe\xff raw",
    "bytes.empty": b"",
    "seq.str": ("a", "", "ü"),
    "seq.bool": (True, False),
    "seq.int": (1, -1, 0, (1 << 63) - 1),
    "seq.float": (0.5, math.nan, math.inf, -math.inf),
    "seq.bytes": (b"ab", b""),
    "seq.none": ("a", None, "b"),
    "seq.empty": (),
}


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------


def encoder(resource: Resource = RESOURCE, scope: InstrumentationScope = SCOPE) -> TraceEncoder:
    return TraceEncoder(resource.attributes, resource.schema_url, scope.name, scope.version or "")


def wire_span(i: int = 0, **overrides: Any) -> dict[str, Any]:
    """A wire-form span; the optional dropped counts are left out."""
    span: dict[str, Any] = {
        "name": f"bench_answer[{i}]",
        "trace_id": TRACE_ID,
        "span_id": 0x1000 + i,
        "parent_span_id": 0xEEE19B7EC3C1B174,
        "parent_remote": False,
        "flags": 1,
        "kind": 0,
        "start": START + 1000 * i,
        "end": START + 1000 * i + 500,
        "attributes": {"probability.run": i, "probability.outcome": "pass"},
        "events": [],
        "links": [],
        "status": (0, ""),
    }
    span.update(overrides)
    return span


def sdk_span(w: dict[str, Any], resource: Resource = RESOURCE, scope: InstrumentationScope = SCOPE) -> ReadableSpan:
    """The ``ReadableSpan`` equivalent to wire-form span ``w`` (no dropped counts)."""
    flags = TraceFlags(w["flags"])
    parent = None
    if w["parent_span_id"]:
        parent = SpanContext(w["trace_id"], w["parent_span_id"], is_remote=w["parent_remote"], trace_flags=flags)
    code, description = w["status"]
    return ReadableSpan(
        name=w["name"],
        context=SpanContext(w["trace_id"], w["span_id"], is_remote=False, trace_flags=flags),
        parent=parent,
        resource=resource,
        attributes=w["attributes"],
        events=[Event(name, attributes, time_ns) for name, time_ns, attributes in w["events"]],
        links=[
            Link(SpanContext(trace_id, span_id, is_remote=False, trace_flags=TraceFlags(link_flags)), attributes)
            for trace_id, span_id, link_flags, attributes in w["links"]
        ],
        kind=SpanKind(w["kind"]),
        status=Status(StatusCode(code), description or None),
        start_time=w["start"],
        end_time=w["end"],
        instrumentation_scope=scope,
    )


def to_wire(span: ReadableSpan) -> dict[str, Any]:
    """The wire form of a finished SDK span, as the producing side builds it."""
    ctx = span.context
    parent = span.parent
    return {
        "name": span.name,
        "trace_id": ctx.trace_id,
        "span_id": ctx.span_id,
        "parent_span_id": parent.span_id if parent else 0,
        "parent_remote": bool(parent and parent.is_remote),
        "flags": int(ctx.trace_flags),
        "kind": span.kind.value,
        "start": span.start_time,
        "end": span.end_time,
        "attributes": dict(span.attributes or {}),
        "events": [(e.name, e.timestamp, dict(e.attributes or {})) for e in span.events],
        "links": [
            (link.context.trace_id, link.context.span_id, int(link.context.trace_flags), dict(link.attributes or {}))
            for link in span.links
        ],
        "status": (span.status.status_code.value, span.status.description or ""),
        "dropped_attributes": span.dropped_attributes,
        "dropped_events": span.dropped_events,
        "dropped_links": span.dropped_links,
    }


def tuples_to_lists(obj: Any) -> Any:
    """What a transport that knows no tuples (xdist/execnet, JSON) does to a span."""
    if isinstance(obj, dict):
        return {k: tuples_to_lists(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [tuples_to_lists(v) for v in obj]
    return obj


def decode(data: bytes) -> ExportTraceServiceRequest:
    return ExportTraceServiceRequest.FromString(data)


def check_json_line(line: str, expected: ExportTraceServiceRequest) -> None:
    assert line.isascii() and "\n" not in line
    kind, request = otlp_json.decode_line(line, ignore_unknown_fields=False)
    assert kind == "traces"
    assert MessageToDict(request) == MessageToDict(expected)
    assert request == expected
    # Same JSON document as the SDK request through the existing codec.
    assert json.loads(line) == json.loads(otlp_json.request_to_line(expected))


def assert_matches_sdk(wire: list[dict[str, Any]], sdk: list[ReadableSpan], enc: TraceEncoder | None = None) -> None:
    enc = enc or encoder()
    expected = encode_spans(sdk)
    got = decode(enc.to_protobuf(wire))
    assert MessageToDict(got) == MessageToDict(expected)  # readable diff first
    assert got == expected
    check_json_line(enc.to_json_line(wire), expected)


def only_span(request: ExportTraceServiceRequest) -> Any:
    [resource_spans] = request.resource_spans
    [scope_spans] = resource_spans.scope_spans
    [span] = scope_spans.spans
    return span


def attribute_values(span: Any) -> dict[str, AnyValue]:
    return {kv.key: kv.value for kv in span.attributes}


# --------------------------------------------------------------------------
# attribute values
# --------------------------------------------------------------------------


def test_every_attribute_value_type_matches_the_sdk() -> None:
    w = wire_span(attributes=dict(VALUES), events=[("values", START + 1, dict(VALUES))])
    assert_matches_sdk([w], [sdk_span(w)])


def test_bool_is_not_encoded_as_int_and_int_not_as_bool() -> None:
    w = wire_span(attributes={"t": True, "f": False, "one": 1, "zero": 0, "seq": (True, 1)})
    values = attribute_values(only_span(decode(encoder().to_protobuf([w]))))
    assert values["t"].WhichOneof("value") == "bool_value" and values["t"].bool_value is True
    assert values["f"].WhichOneof("value") == "bool_value" and values["f"].bool_value is False
    assert values["one"].WhichOneof("value") == "int_value" and values["one"].int_value == 1
    assert values["zero"].WhichOneof("value") == "int_value" and values["zero"].int_value == 0
    assert [v.WhichOneof("value") for v in values["seq"].array_value.values] == ["bool_value", "int_value"]
    attributes = json.loads(encoder().to_json_line([w]))["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"]
    assert attributes[0] == {"key": "t", "value": {"boolValue": True}}
    assert attributes[2] == {"key": "one", "value": {"intValue": "1"}}


def test_non_finite_floats_are_json_strings_and_protobuf_doubles() -> None:
    w = wire_span(attributes={"nan": math.nan, "inf": math.inf, "ninf": -math.inf, "seq": (math.nan, 1.0)})
    line = encoder().to_json_line([w])
    assert "NaN" in line and "Infinity" in line
    spans = json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert spans[0]["attributes"][:3] == [
        {"key": "nan", "value": {"doubleValue": "NaN"}},
        {"key": "inf", "value": {"doubleValue": "Infinity"}},
        {"key": "ninf", "value": {"doubleValue": "-Infinity"}},
    ]
    values = attribute_values(only_span(decode(encoder().to_protobuf([w]))))
    assert math.isnan(values["nan"].double_value)
    assert values["inf"].double_value == math.inf and values["ninf"].double_value == -math.inf
    assert_matches_sdk([w], [sdk_span(w)])


def test_non_ascii_text_everywhere_gives_an_ascii_line() -> None:
    w = wire_span(
        name="bench_ünïcode[日本]",
        attributes={"ключ": "значение", "emoji 😀": ("😀", "ü")},
        events=[("événement", START + 1, {"clé": "valeur ✓"})],
        status=(2, "échec: 1 ≠ 2"),
    )
    assert_matches_sdk([w], [sdk_span(w)])
    assert "\\u00fc" in encoder().to_json_line([w])


def test_empty_attributes_events_with_and_without_attributes() -> None:
    w = wire_span(
        attributes={},
        events=[
            ("no.attributes", START + 1, {}),
            ("with.attributes", START + 2, {"k": "v", "n": 2}),
            ("", START + 3, {}),
        ],
    )
    assert_matches_sdk([w], [sdk_span(w)])
    span = only_span(decode(encoder().to_protobuf([w])))
    assert list(span.attributes) == []
    assert [e.name for e in span.events] == ["no.attributes", "with.attributes", ""]


def test_mapping_and_none_values_match_the_sdk() -> None:
    # Not produced by the plugin (the SDK's attribute checks refuse them), but
    # the SDK encoder accepts them: a kvlistValue and an empty AnyValue.
    w = wire_span(attributes={"map": {"a": 1, "b": ("x", None)}, "map.empty": {}, "none": None})
    assert_matches_sdk([w], [sdk_span(w)])


def test_a_value_of_an_unsupported_type_drops_only_its_attribute_like_the_sdk() -> None:
    w = wire_span(attributes={"before": 1, "object": object(), "seq.object": ("a", object()), "after": "kept"})
    assert_matches_sdk([w], [sdk_span(w)])
    assert list(attribute_values(only_span(decode(encoder().to_protobuf([w]))))) == ["before", "after"]


def test_int_beyond_int64_is_encoded_as_its_decimal_string() -> None:
    # The SDK drops such an attribute (its protobuf setter raises); we keep the value as text.
    huge, tiny = 1 << 64, -(1 << 63) - 1
    w = wire_span(attributes={"huge": huge, "tiny": tiny, "seq": (1, huge)})
    enc = encoder()
    request = decode(enc.to_protobuf([w]))
    values = attribute_values(only_span(request))
    assert values["huge"].WhichOneof("value") == "string_value" and values["huge"].string_value == str(huge)
    assert values["tiny"].string_value == str(tiny)
    assert [v.WhichOneof("value") for v in values["seq"].array_value.values] == ["int_value", "string_value"]
    assert values["seq"].array_value.values[1].string_value == str(huge)
    check_json_line(enc.to_json_line([w]), request)


def test_lone_surrogates_are_replaced_in_both_encodings() -> None:
    # e.g. a file name decoded with surrogateescape; the SDK would drop the
    # attribute, and fail the whole batch for such a span name.
    bad = "file-\udcff.txt"
    w = wire_span(name=f"bench[{bad}]", attributes={"path": bad, f"key-{bad}": ("ok", bad)}, status=(2, bad))
    enc = encoder()
    request = decode(enc.to_protobuf([w, wire_span(1)]))
    spans = request.resource_spans[0].scope_spans[0].spans
    assert len(spans) == 2 and spans[0].name == "bench[file-?.txt]"
    assert attribute_values(spans[0])["path"].string_value == "file-?.txt"
    assert "key-file-?.txt" in attribute_values(spans[0])
    assert spans[0].status.message == "file-?.txt"
    assert spans[1] == only_span(encode_spans([sdk_span(wire_span(1))]))
    check_json_line(enc.to_json_line([w, wire_span(1)]), request)


# --------------------------------------------------------------------------
# span fields
# --------------------------------------------------------------------------


def test_spans_from_a_real_tracer_match_the_sdk() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(
        resource=Resource.create({"service.name": "encode-test"}),
        span_limits=SpanLimits(max_span_attributes=3, max_events=2, max_links=1),
    )
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("prob.tests", "1.2.3")
    remote = NonRecordingSpan(
        SpanContext(OTHER_TRACE_ID, 0x00F067AA0BA902B7, is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED))
    )
    with tracer.start_as_current_span("session", kind=SpanKind.SERVER) as session:
        session.set_status(Status(StatusCode.OK))
        with tracer.start_as_current_span("run", attributes={"run": 1, "passed": False, "score": 0.5}) as run:
            run.add_event("no.attributes")
            run.add_event("exception", {"exception.type": "AssertionError", "exception.message": "1 != 2"})
            run.set_status(Status(StatusCode.ERROR, "fail in call: assert 1 == 2"))
        with tracer.start_as_current_span(
            "dropping",
            kind=SpanKind.CLIENT,
            attributes={"a": 1, "b": 2, "c": 3, "d": 4, "e": 5},
            links=[Link(run.get_span_context(), {"why": "retry"}), Link(session.get_span_context())],
        ) as dropping:
            for i in range(4):
                dropping.add_event(f"e{i}", {"i": i})
    remote_context = trace.set_span_in_context(remote)
    with tracer.start_as_current_span("remote child", context=remote_context, kind=SpanKind.PRODUCER):
        pass
    with tracer.start_as_current_span("root", kind=SpanKind.CONSUMER):
        pass
    spans = list(exporter.get_finished_spans())
    provider.shutdown()

    by_name = {s.name: s for s in spans}
    assert (by_name["dropping"].dropped_attributes, by_name["dropping"].dropped_events) == (2, 2)
    assert by_name["dropping"].dropped_links == 1
    assert by_name["remote child"].parent.is_remote
    resource = spans[0].resource
    enc = encoder(resource, InstrumentationScope("prob.tests", "1.2.3"))
    assert_matches_sdk([to_wire(s) for s in spans], spans, enc)


@pytest.mark.parametrize("kind", list(SpanKind))
def test_every_span_kind(kind: SpanKind) -> None:
    w = wire_span(kind=kind.value)
    assert_matches_sdk([w], [sdk_span(w)])
    assert only_span(decode(encoder().to_protobuf([w]))).kind == kind.value + 1


@pytest.mark.parametrize(
    ("status", "code", "message"),
    [
        ((0, ""), 0, ""),
        ((1, ""), 1, ""),
        ((2, ""), 2, ""),
        ((2, "fail in call: assert 1 == 2"), 2, "fail in call: assert 1 == 2"),
        # The SDK's Status keeps a description only for ERROR.
        ((1, "ignored for OK"), 1, ""),
        ((0, "ignored for UNSET"), 0, ""),
    ],
)
def test_status(status: tuple[int, str], code: int, message: str) -> None:
    w = wire_span(status=status)
    assert_matches_sdk([w], [sdk_span(w)])
    span = only_span(decode(encoder().to_protobuf([w])))
    assert span.HasField("status")  # the SDK always sends one, also for UNSET
    assert (span.status.code, span.status.message) == (code, message)


@pytest.mark.parametrize(
    ("parent_span_id", "parent_remote", "flags"),
    [(0, False, 0x100), (0xEEE19B7EC3C1B174, False, 0x100), (0xEEE19B7EC3C1B174, True, 0x300), (0, True, 0x100)],
)
@pytest.mark.parametrize("trace_flags", [0, 1])
def test_span_flags_tell_whether_the_parent_is_remote(
    parent_span_id: int, parent_remote: bool, flags: int, trace_flags: int
) -> None:
    # Like SDK 1.45 the W3C trace flags are not copied into the OTLP flags.
    w = wire_span(parent_span_id=parent_span_id, parent_remote=parent_remote, flags=trace_flags)
    assert_matches_sdk([w], [sdk_span(w)])
    span = only_span(decode(encoder().to_protobuf([w])))
    assert span.flags == flags
    assert span.parent_span_id == (parent_span_id.to_bytes(8, "big") if parent_span_id else b"")


def test_links() -> None:
    w = wire_span(
        links=[
            (OTHER_TRACE_ID, 0x00F067AA0BA902B7, 1, {"link.reason": "retry-of", "n": 2}),
            (TRACE_ID, 0x1, 0, {}),
        ]
    )
    assert_matches_sdk([w], [sdk_span(w)])
    links = only_span(decode(encoder().to_protobuf([w]))).links
    assert [link.trace_id.hex() for link in links] == [f"{OTHER_TRACE_ID:032x}", f"{TRACE_ID:032x}"]
    assert [link.flags for link in links] == [0x100, 0x100]  # a link in the wire form is never remote


def test_dropped_counts() -> None:
    w = wire_span(dropped_attributes=3, dropped_events=200, dropped_links=70000)
    span = only_span(decode(encoder().to_protobuf([w])))
    assert (span.dropped_attributes_count, span.dropped_events_count, span.dropped_links_count) == (3, 200, 70000)
    check_json_line(encoder().to_json_line([w]), decode(encoder().to_protobuf([w])))
    zero = wire_span(dropped_attributes=0, dropped_events=0, dropped_links=0)
    assert encoder().to_protobuf([zero]) == encoder().to_protobuf([wire_span()])


def test_ids_and_times_keep_all_their_bits() -> None:
    w = wire_span(
        trace_id=(1 << 128) - 1,
        span_id=(1 << 64) - 1,
        parent_span_id=1,
        start=1,
        end=(1 << 64) - 1,
        events=[("e", 1, {})],
    )
    assert_matches_sdk([w], [sdk_span(w)])
    line = encoder().to_json_line([w])
    assert '"traceId":"ffffffffffffffffffffffffffffffff"' in line
    assert '"parentSpanId":"0000000000000001"' in line
    assert f'"endTimeUnixNano":"{(1 << 64) - 1}"' in line


# --------------------------------------------------------------------------
# batches, resource and scope
# --------------------------------------------------------------------------


def test_many_spans_in_one_batch_keep_their_order() -> None:
    wire = [wire_span(i, attributes={"i": i, "case": f"case-{i % 7}", "x": "y" * (i % 200)}) for i in range(1000)]
    assert_matches_sdk(wire, [sdk_span(w) for w in wire])
    spans = decode(encoder().to_protobuf(wire)).resource_spans[0].scope_spans[0].spans
    assert [s.span_id for s in spans] == [(0x1000 + i).to_bytes(8, "big") for i in range(1000)]


def test_a_span_whose_tuples_became_lists_encodes_the_same() -> None:
    w = wire_span(
        attributes=dict(VALUES),
        events=[("exception", START + 1, {"exception.type": "AssertionError", "seq": ("a", "b")})],
        links=[(OTHER_TRACE_ID, 0x2, 1, {"seq": (1, 2)})],
        status=(2, "boom"),
    )
    travelled = tuples_to_lists(w)
    assert isinstance(travelled["status"], list) and isinstance(travelled["events"][0], list)
    assert isinstance(travelled["attributes"]["seq.str"], list)
    enc = encoder()
    assert enc.to_protobuf([travelled]) == enc.to_protobuf([w])
    assert enc.to_json_line([travelled]) == enc.to_json_line([w])
    assert_matches_sdk([travelled], [sdk_span(w)])


def test_empty_batch() -> None:
    # The caller never encodes an empty batch; if it does, both forms are an empty request.
    enc = encoder()
    assert enc.to_protobuf([]) == b"" == encode_spans([]).SerializeToString()
    assert enc.to_json_line([]) == '{"resourceSpans":[]}'
    assert otlp_json.decode_line(enc.to_json_line([])) == ("traces", ExportTraceServiceRequest())


@pytest.mark.parametrize(
    ("resource", "scope"),
    [
        (RESOURCE, SCOPE),
        (Resource.create({"service.name": "svc", "seq": ("a", "b"), "v": 1.5}), InstrumentationScope("s", None)),
        (Resource({}), InstrumentationScope("", None)),
        (Resource({"k": "v"}, schema_url=""), InstrumentationScope("name-only")),
    ],
    ids=["schema-url", "created", "empty", "no-schema-url"],
)
def test_resource_and_scope(resource: Resource, scope: InstrumentationScope) -> None:
    wire = [wire_span(0), wire_span(1)]
    enc = encoder(resource, scope)
    assert_matches_sdk(wire, [sdk_span(w, resource, scope) for w in wire], enc)
    request = decode(enc.to_protobuf(wire))
    assert request.resource_spans[0].schema_url == resource.schema_url
    encoded_scope = request.resource_spans[0].scope_spans[0].scope
    assert (encoded_scope.name, encoded_scope.version) == (scope.name, scope.version or "")


def test_resource_proto_fields() -> None:
    fields = resource_proto_fields(RESOURCE.attributes, RESOURCE.schema_url)
    expected = encode_spans([sdk_span(wire_span())]).resource_spans[0]
    assert fields.protobuf_resource[:1] == b"\x0a"  # ResourceSpans.resource
    partial = type(expected).FromString(fields.protobuf_resource + fields.protobuf_schema_url)
    assert partial.resource == expected.resource and partial.schema_url == RESOURCE.schema_url
    assert json.loads(fields.json_resource) == MessageToDict(expected.resource)
    assert json.loads("{" + fields.json_schema_url.lstrip(",") + "}") == {"schemaUrl": RESOURCE.schema_url}
    empty = resource_proto_fields({})
    assert (empty.protobuf_schema_url, empty.json_resource, empty.json_schema_url) == (b"", "{}", "")


def test_one_encoder_serves_many_batches() -> None:
    enc = encoder()
    first, second = [wire_span(0)], [wire_span(1), wire_span(2)]
    assert enc.to_protobuf(first) == enc.to_protobuf(first)
    assert_matches_sdk(second, [sdk_span(w) for w in second], enc)
    assert_matches_sdk(first, [sdk_span(w) for w in first], enc)


def test_shared_case_attributes_encode_like_plain_attributes() -> None:
    """case_attributes (one dict shared by a case's spans) are encoded once and cached by identity."""
    from pytest_probability.otel import encode as encode_module

    encoder = TraceEncoder({"service.name": "s"}, "", "scope", "1")
    shared = {"probability.case": "c", "code.line.number": 7, "probability.param.text": "héllo"}
    spans = []
    for run in range(3):
        span = wire_span(run)
        span["case_attributes"] = shared
        spans.append(span)
    merged = []
    for span in spans:
        plain = dict(span)
        plain["attributes"] = {**shared, **span["attributes"]}
        plain["case_attributes"] = None
        merged.append(plain)
    assert ExportTraceServiceRequest.FromString(encoder.to_protobuf(spans)) == ExportTraceServiceRequest.FromString(
        encoder.to_protobuf(merged)
    )
    assert otlp_json.decode_line(encoder.to_json_line(spans)) == otlp_json.decode_line(encoder.to_json_line(merged))
    assert encode_module._shared_pb[id(shared)][0] is shared
    assert encode_module._shared_json[id(shared)][0] is shared
