"""The test OTLP receiver (fed by the real SDK exporters) and the OTLP JSON-lines codec."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
import urllib.error
import urllib.request

import pytest
import sdk_lines
from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.metrics import Counter, MeterProvider
from opentelemetry.sdk.metrics.export import AggregationTemporality, InMemoryMetricReader, MetricExportResult
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Link, SpanKind, Status, StatusCode
from otlp_receiver import (
    PARTIAL_MESSAGE,
    OtlpReceiver,
    flatten_metrics,
    flatten_spans,
    wait_for,
)

from pytest_probability.otel import otlp_json
from pytest_probability.otel.request_sender import Sender

SECRET = "Bearer tok-3f9a7c1e-very-secret"
RESOURCE = {"service.name": "pytest-probability-test", "prob.suite": "unit"}
HEX32 = re.compile(r"^[0-9a-f]{32}$")
HEX16 = re.compile(r"^[0-9a-f]{16}$")


# --------------------------------------------------------------------------
# SDK data
# --------------------------------------------------------------------------


class Telemetry:
    """Spans and metrics recorded through real SDK providers."""

    def __init__(self) -> None:
        resource = Resource.create(RESOURCE)
        self.span_exporter = InMemorySpanExporter()
        tracer_provider = TracerProvider(resource=resource)
        tracer_provider.add_span_processor(SimpleSpanProcessor(self.span_exporter))
        self.reader = InMemoryMetricReader(preferred_temporality={Counter: AggregationTemporality.DELTA})
        meter_provider = MeterProvider(metric_readers=[self.reader], resource=resource)

        tracer = tracer_provider.get_tracer("prob.tests", "1.2.3")
        meter = meter_provider.get_meter("prob.tests")
        runs = meter.create_counter("prob.runs", unit="{run}")
        duration = meter.create_histogram(
            "prob.duration", unit="s", explicit_bucket_boundaries_advisory=[0.1, 1.0, 10.0]
        )
        fraction = meter.create_gauge("prob.pass_fraction", unit="1")
        inflight = meter.create_up_down_counter("prob.inflight")

        with tracer.start_as_current_span("linked-target") as target:
            self.link_ctx = target.get_span_context()
        with tracer.start_as_current_span("case test_x", kind=SpanKind.SERVER) as parent:
            parent.set_status(Status(StatusCode.OK))
            with tracer.start_as_current_span(
                "run 3",
                links=[Link(self.link_ctx, {"link.reason": "retry-of"})],
                attributes={"case": "test_x", "run": 3, "passed": False, "score": 0.5, "tags": ["a", "b"]},
            ) as child:
                child.add_event("retry", {"attempt": 2})
                child.set_status(Status(StatusCode.ERROR, "assert 1 == 2"))
                for value in (0.05, 0.5, 0.7, 20.0):
                    duration.record(value, {"case": "test_x"})
                runs.add(3, {"case": "a"})
                runs.add(2, {"case": "b"})
                fraction.set(0.75, {"case": "a"})
                inflight.add(1)
                inflight.add(-2)
        self.parent_ctx = parent.get_span_context()
        self.child_ctx = child.get_span_context()
        self.spans = list(self.span_exporter.get_finished_spans())
        self.metrics_data = self.reader.get_metrics_data()
        tracer_provider.shutdown()
        meter_provider.shutdown()


@pytest.fixture
def telemetry() -> Telemetry:
    return Telemetry()


def check_spans(views, t: Telemetry) -> None:
    by_name = {v.name: v for v in views}
    assert sorted(by_name) == ["case test_x", "linked-target", "run 3"]
    parent, child = by_name["case test_x"], by_name["run 3"]
    assert parent.trace_id == child.trace_id == format(t.parent_ctx.trace_id, "032x")
    assert parent.span_id == format(t.parent_ctx.span_id, "016x")
    assert child.span_id == format(t.child_ctx.span_id, "016x")
    assert parent.parent_span_id == "" and child.parent_span_id == parent.span_id
    assert (parent.kind, child.kind) == ("SERVER", "INTERNAL")
    assert child.attributes == {"case": "test_x", "run": 3, "passed": False, "score": 0.5, "tags": ["a", "b"]}
    assert (parent.status_code, parent.status_message) == ("OK", "")
    assert (child.status_code, child.status_message) == ("ERROR", "assert 1 == 2")
    assert child.events == [("retry", {"attempt": 2})]
    assert child.links == [
        (format(t.link_ctx.trace_id, "032x"), format(t.link_ctx.span_id, "016x"), {"link.reason": "retry-of"})
    ]
    assert (child.scope_name, child.scope_version) == ("prob.tests", "1.2.3")
    for key, value in RESOURCE.items():
        assert child.resource[key] == value
    assert child.resource["telemetry.sdk.language"] == "python"
    assert 0 < parent.start_time_unix_nano <= child.start_time_unix_nano <= child.end_time_unix_nano
    assert child.end_time_unix_nano <= parent.end_time_unix_nano


def check_metrics(points) -> None:
    by_key = {(p.name, tuple(sorted(p.attributes.items()))): p for p in points}
    assert set(by_key) == {
        ("prob.runs", (("case", "a"),)),
        ("prob.runs", (("case", "b"),)),
        ("prob.duration", (("case", "test_x"),)),
        ("prob.pass_fraction", (("case", "a"),)),
        ("prob.inflight", ()),
    }
    runs_a = by_key[("prob.runs", (("case", "a"),))]
    assert (runs_a.type, runs_a.is_monotonic, runs_a.temporality, runs_a.unit) == ("sum", True, "delta", "{run}")
    assert runs_a.value == 3 and isinstance(runs_a.value, int)
    assert by_key[("prob.runs", (("case", "b"),))].value == 2
    hist = by_key[("prob.duration", (("case", "test_x"),))]
    assert (hist.type, hist.temporality, hist.unit) == ("histogram", "cumulative", "s")
    assert hist.count == 4 and hist.sum == pytest.approx(21.25)
    assert hist.explicit_bounds == [0.1, 1.0, 10.0]
    assert hist.bucket_counts == [1, 2, 0, 1]
    assert (hist.min, hist.max) == (0.05, 20.0)
    gauge = by_key[("prob.pass_fraction", (("case", "a"),))]
    assert (gauge.type, gauge.value, gauge.temporality, gauge.is_monotonic) == ("gauge", 0.75, None, None)
    updown = by_key[("prob.inflight", ())]
    assert (updown.type, updown.is_monotonic, updown.temporality, updown.value) == ("sum", False, "cumulative", -1)
    assert all(p.resource["service.name"] == RESOURCE["service.name"] for p in points)


def free_closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------------------
# Real SDK exporters -> receiver
# --------------------------------------------------------------------------


def test_sdk_http_exporters_with_gzip_and_headers(otlp_http_receiver, telemetry):
    from opentelemetry.exporter.otlp.proto.http import Compression
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    rx = otlp_http_receiver
    common = dict(headers={"authorization": SECRET}, compression=Compression.Gzip, timeout=5)
    span_exporter = OTLPSpanExporter(endpoint=rx.endpoint + "/v1/traces", **common)
    metric_exporter = OTLPMetricExporter(endpoint=rx.endpoint + "/v1/metrics", **common)
    try:
        assert span_exporter.export(telemetry.spans) == SpanExportResult.SUCCESS
        assert metric_exporter.export(telemetry.metrics_data) == MetricExportResult.SUCCESS
    finally:
        span_exporter.shutdown()
        metric_exporter.shutdown()

    wait_for(lambda: rx.count("traces") == 1 and rx.count("metrics") == 1, timeout=5)
    assert rx.counts == {"traces": 1, "metrics": 1, "logs": 0}
    for record in rx.received:
        assert record.transport == "http"
        assert record.content_encoding == "gzip"
        assert record.headers["content-encoding"] == "gzip"
        assert record.headers["authorization"] == SECRET
        assert record.headers["content-type"] == "application/x-protobuf"
    check_spans(rx.spans(), telemetry)
    check_metrics(rx.points())
    # What went over the wire is exactly what the SDK encoder produces.
    assert rx.trace_requests == [encode_spans(telemetry.spans)]
    assert rx.metrics_requests == [encode_metrics(telemetry.metrics_data)]


def test_sdk_grpc_exporters_with_metadata(otlp_grpc_receiver, telemetry):
    from grpc import Compression
    from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

    rx = otlp_grpc_receiver
    common = dict(
        endpoint=rx.endpoint, insecure=True, headers={"authorization": SECRET}, timeout=5, compression=Compression.Gzip
    )
    span_exporter = OTLPSpanExporter(**common)
    metric_exporter = OTLPMetricExporter(**common)
    try:
        assert span_exporter.export(telemetry.spans) == SpanExportResult.SUCCESS
        assert metric_exporter.export(telemetry.metrics_data) == MetricExportResult.SUCCESS
    finally:
        span_exporter.shutdown()
        metric_exporter.shutdown()

    wait_for(lambda: rx.count("traces") == 1 and rx.count("metrics") == 1, timeout=5)
    assert [r.transport for r in rx.received] == ["grpc", "grpc"]
    assert all(h["authorization"] == SECRET for h in rx.headers)
    check_spans(rx.spans(), telemetry)
    check_metrics(rx.points())
    assert rx.trace_requests == [encode_spans(telemetry.spans)]
    assert rx.metrics_requests == [encode_metrics(telemetry.metrics_data)]


# --------------------------------------------------------------------------
# Codec: SDK data -> lines -> protobuf
# --------------------------------------------------------------------------


def test_spans_round_trip(telemetry):
    lines = sdk_lines.spans_to_lines(telemetry.spans)
    assert len(lines) == 1 and "\n" not in lines[0]
    kind, request = otlp_json.decode_line(lines[0])
    assert kind == "traces"
    assert isinstance(request, ExportTraceServiceRequest)
    assert request == encode_spans(telemetry.spans)
    check_spans(flatten_spans([request]), telemetry)
    # decode -> encode gives back the very same JSON
    assert otlp_json.encode_request(request) == json.loads(lines[0])
    assert otlp_json.request_to_line(request) == lines[0]


def test_metrics_round_trip(telemetry):
    lines = sdk_lines.metrics_to_lines(telemetry.metrics_data)
    assert len(lines) == 1
    kind, request = otlp_json.decode_line(lines[0])
    assert kind == "metrics"
    assert isinstance(request, ExportMetricsServiceRequest)
    assert request == encode_metrics(telemetry.metrics_data)
    check_metrics(flatten_metrics([request]))
    assert otlp_json.encode_request(request) == json.loads(lines[0])


def walk_keys(obj):
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield key
            yield from walk_keys(value)
    elif isinstance(obj, list):
        for item in obj:
            yield from walk_keys(item)


def test_span_json_follows_otlp_json_spec(telemetry):
    obj = json.loads(sdk_lines.spans_to_lines(telemetry.spans)[0])
    assert set(obj) == {"resourceSpans"}
    assert all("_" not in key for key in walk_keys(obj)), "field names must be lowerCamelCase"
    spans = {s["name"]: s for s in obj["resourceSpans"][0]["scopeSpans"][0]["spans"]}
    parent, child = spans["case test_x"], spans["run 3"]
    for span in spans.values():
        assert HEX32.match(span["traceId"]) and HEX16.match(span["spanId"])
        assert isinstance(span["startTimeUnixNano"], str) and isinstance(span["endTimeUnixNano"], str)
        # empty / default fields are omitted
        for absent in ("traceState", "droppedAttributesCount", "droppedEventsCount", "droppedLinksCount"):
            assert absent not in span
    assert parent["traceId"] == format(telemetry.parent_ctx.trace_id, "032x")
    assert parent["spanId"] == format(telemetry.parent_ctx.span_id, "016x")
    assert "parentSpanId" not in parent
    assert child["parentSpanId"] == parent["spanId"]
    assert child["links"][0]["traceId"] == format(telemetry.link_ctx.trace_id, "032x")
    assert child["links"][0]["spanId"] == format(telemetry.link_ctx.span_id, "016x")
    assert parent["kind"] == 2 and child["kind"] == 1  # enums as integers
    assert child["status"] == {"code": 2, "message": "assert 1 == 2"}
    sdk_child = next(s for s in telemetry.spans if s.name == "run 3")
    assert child["startTimeUnixNano"] == str(sdk_child.start_time)
    attrs = {a["key"]: a["value"] for a in child["attributes"]}
    assert attrs["run"] == {"intValue": "3"}
    assert attrs["score"] == {"doubleValue": 0.5}
    assert attrs["passed"] == {"boolValue": False}
    assert attrs["tags"] == {"arrayValue": {"values": [{"stringValue": "a"}, {"stringValue": "b"}]}}
    assert child["events"][0]["attributes"] == [{"key": "attempt", "value": {"intValue": "2"}}]


def test_metrics_json_follows_otlp_json_spec(telemetry):
    obj = json.loads(sdk_lines.metrics_to_lines(telemetry.metrics_data)[0])
    assert set(obj) == {"resourceMetrics"}
    assert all("_" not in key for key in walk_keys(obj))
    metrics = {m["name"]: m for m in obj["resourceMetrics"][0]["scopeMetrics"][0]["metrics"]}
    runs = metrics["prob.runs"]["sum"]
    assert runs["aggregationTemporality"] == 1 and runs["isMonotonic"] is True
    assert sorted(p["asInt"] for p in runs["dataPoints"]) == ["2", "3"]
    assert "isMonotonic" not in metrics["prob.inflight"]["sum"]  # false is a default
    hist = metrics["prob.duration"]["histogram"]
    assert hist["aggregationTemporality"] == 2
    point = hist["dataPoints"][0]
    assert point["count"] == "4"
    assert point["bucketCounts"] == ["1", "2", "0", "1"]
    assert point["explicitBounds"] == [0.1, 1.0, 10.0]
    assert isinstance(point["startTimeUnixNano"], str) and isinstance(point["timeUnixNano"], str)
    # Exemplars (recorded inside the sampled child span) carry hex ids too.
    exemplar = point["exemplars"][0]
    assert exemplar["traceId"] == format(telemetry.child_ctx.trace_id, "032x")
    assert exemplar["spanId"] == format(telemetry.child_ctx.span_id, "016x")
    assert metrics["prob.pass_fraction"]["gauge"]["dataPoints"][0]["asDouble"] == 0.75


SPEC_STYLE_LINE = json.dumps(
    {  # shaped like opentelemetry-proto examples/trace.json, with its upper-case hex
        "resourceSpans": [
            {
                "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "my.service"}}]},
                "scopeSpans": [
                    {
                        "scope": {"name": "my.library", "version": "1.0.0"},
                        "spans": [
                            {
                                "traceId": "5B8EFFF798038103D269B633813FC60C",
                                "spanId": "EEE19B7EC3C1B174",
                                "parentSpanId": "EEE19B7EC3C1B173",
                                "name": "I'm a server span",
                                "startTimeUnixNano": "1544712660000000000",
                                "endTimeUnixNano": 1544712661000000000,
                                "kind": "SPAN_KIND_SERVER",
                                "attributes": [{"key": "my.span.attr", "value": {"intValue": 7}}],
                                "status": {"code": 2},
                                "someFutureField": {"x": 1},
                            }
                        ],
                    }
                ],
            }
        ]
    }
)


def test_decode_accepts_what_the_collector_accepts():
    kind, request = otlp_json.decode_line(SPEC_STYLE_LINE)
    assert kind == "traces"
    span = request.resource_spans[0].scope_spans[0].spans[0]
    assert span.trace_id == bytes.fromhex("5b8efff798038103d269b633813fc60c")
    assert span.span_id == bytes.fromhex("eee19b7ec3c1b174")
    assert span.parent_span_id == bytes.fromhex("eee19b7ec3c1b173")
    assert span.kind == 2 and span.end_time_unix_nano == 1544712661000000000
    [view] = flatten_spans([request])
    assert view.attributes == {"my.span.attr": 7} and view.status_code == "ERROR"
    assert view.resource == {"service.name": "my.service"}
    # re-encoding normalises to lower-case hex and string int64
    reencoded = otlp_json.encode_request(request)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert reencoded["traceId"] == "5b8efff798038103d269b633813fc60c"
    assert reencoded["endTimeUnixNano"] == "1544712661000000000"
    with pytest.raises(ValueError, match="someFutureField"):
        otlp_json.decode_line(SPEC_STYLE_LINE, ignore_unknown_fields=False)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"resourceSpans": [', "invalid JSON"),
        ("[1, 2]", "expected a JSON object, got list"),
        ('{"foo": 1}', "'resourceSpans', 'resourceMetrics' or 'resourceLogs'"),
        ('{"resourceSpans": [], "resourceMetrics": []}', "one signal"),
        ('{"resourceSpans": [], "resourceLogs": []}', "found 'resourceSpans' and 'resourceLogs'"),
        (
            '{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"W47/95gDgQPSabYzgT/GDA==","name":"x"}]}]}]}',
            r"resourceSpans\[0\]\.scopeSpans\[0\]\.spans\[0\]\.traceId: expected 32 hex",
        ),
        ('{"resourceSpans":[{"scopeSpans":[{"spans":[{"spanId":"abcd","name":"x"}]}]}]}', "expected 16 hex"),
        ('{"resourceSpans":[{"scopeSpans":[{"spans":[{"spanId":12,"name":"x"}]}]}]}', "expected a hex string"),
        ('{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":5,"kind":"nope"}]}]}]}', "ExportTraceServiceRequest"),
        (
            '{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"m","sum":{"dataPoints":'
            '[{"asInt":"1","exemplars":[{"traceId":"zz"}]}]}}]}]}]}',
            r"metrics\[0\]\.sum\.dataPoints\[0\]\.exemplars\[0\]\.traceId",
        ),
    ],
)
def test_decode_line_rejects_malformed(line, problem):
    with pytest.raises(ValueError, match=problem):
        otlp_json.decode_line(line)


def test_read_file_reports_line_numbers(tmp_path, telemetry):
    good_traces = sdk_lines.spans_to_lines(telemetry.spans)[0]
    good_metrics = sdk_lines.metrics_to_lines(telemetry.metrics_data)[0]
    path = tmp_path / "otlp.jsonl"
    path.write_text(f"{good_traces}\n\n{good_metrics}\n   \n{{not json\n{good_traces}\n", encoding="utf-8")
    seen = []
    with pytest.raises(ValueError, match=r"otlp\.jsonl, line 5: invalid JSON") as excinfo:
        for kind, _request in otlp_json.read_file(path):
            seen.append(kind)
    assert seen == ["traces", "metrics"]  # blank lines skipped, good lines before the error yielded
    assert isinstance(excinfo.value.__cause__, ValueError)

    path.write_text(f"\n{good_traces}\n{good_metrics}\n", encoding="utf-8")
    pairs = list(otlp_json.read_file(str(path)))
    assert [k for k, _ in pairs] == ["traces", "metrics"]
    check_spans(flatten_spans(pairs), telemetry)
    check_metrics(flatten_metrics(pairs))


def test_line_helpers_edge_cases(telemetry):
    assert sdk_lines.spans_to_lines([]) == []
    assert sdk_lines.metrics_to_lines(None) == []
    lines = sdk_lines.spans_to_lines(telemetry.spans, max_spans_per_line=2)
    assert len(lines) == 2
    assert len(flatten_spans(otlp_json.decode_line(line)[1] for line in lines)) == 3
    with pytest.raises(TypeError):
        otlp_json.encode_request(object())
    # non-ASCII text survives and lines stay ASCII
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with provider.get_tracer("t").start_as_current_span("naïve ✓\nline"):
        pass
    [line] = sdk_lines.spans_to_lines(exporter.get_finished_spans())
    assert line.isascii() and "\n" not in line
    assert flatten_spans([otlp_json.decode_line(line)[1]])[0].name == "naïve ✓\nline"


# --------------------------------------------------------------------------
# send()
# --------------------------------------------------------------------------


def sender(kind, protocol, endpoint, monkeypatch=None):
    url = endpoint if protocol == "grpc" else f"{endpoint}/v1/{kind}"
    return Sender(kind, protocol, url, {})


@pytest.mark.parametrize("protocol", ["http/protobuf", "grpc"])
@pytest.mark.parametrize("compression", [None, "gzip", "deflate"])
def test_sender_delivers_decoded_lines_intact(protocol, compression, tmp_path, telemetry, monkeypatch):
    """The plugin's Sender: the SDK's exporters, given requests that are already encoded."""
    if compression:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_COMPRESSION", compression)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", f"authorization={SECRET}")
    path = tmp_path / "otlp.jsonl"
    lines = sdk_lines.spans_to_lines(telemetry.spans) + sdk_lines.metrics_to_lines(telemetry.metrics_data)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    decoded = list(otlp_json.read_file(path))

    with OtlpReceiver("grpc" if protocol == "grpc" else "http") as rx:
        for kind, request in decoded:
            result = sender(kind, protocol, rx.endpoint).send(request.SerializeToString(), 5)
            assert result.ok and result.rejected == 0, result
        assert rx.counts == {"traces": 1, "metrics": 1, "logs": 0}
        assert rx.trace_requests == [decoded[0][1]]
        assert rx.headers[0]["authorization"] == SECRET


@pytest.mark.parametrize("protocol", ["http/protobuf", "grpc"])
def test_sender_reports_a_refusal_with_its_reason(protocol, telemetry):
    with OtlpReceiver("grpc" if protocol == "grpc" else "http", mode="refuse") as rx:
        result = sender("traces", protocol, rx.endpoint).send(encode_spans(telemetry.spans).SerializeToString(), 2)
    assert not result.ok
    assert ("503" in result.reason) if protocol != "grpc" else ("UNAVAILABLE" in result.reason)


@pytest.mark.parametrize("protocol", ["http/protobuf", "grpc"])
def test_sender_to_a_closed_port_fails_within_its_timeout(protocol, telemetry):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    started = time.monotonic()
    result = sender("traces", protocol, f"http://127.0.0.1:{port}").send(
        encode_spans(telemetry.spans).SerializeToString(), 2
    )
    assert not result.ok and result.reason
    assert time.monotonic() - started < 6


@pytest.mark.parametrize("protocol", ["http/protobuf", "grpc"])
def test_sender_to_a_slow_receiver_times_out(protocol, telemetry):
    with OtlpReceiver("grpc" if protocol == "grpc" else "http", mode="slow", slow_delay=10) as rx:
        started = time.monotonic()
        result = sender("traces", protocol, rx.endpoint).send(encode_spans(telemetry.spans).SerializeToString(), 1)
        assert not result.ok
        assert time.monotonic() - started < 6


@pytest.mark.parametrize("protocol", ["http/protobuf", "grpc"])
@pytest.mark.parametrize("kind", ["traces", "metrics"])
def test_sender_reads_a_partial_success(protocol, kind, telemetry):
    """The SDK's exporters drop the response; a partial success is a success with a rejected count."""
    request = encode_spans(telemetry.spans) if kind == "traces" else encode_metrics(telemetry.metrics_data)
    with OtlpReceiver("grpc" if protocol == "grpc" else "http", mode="partial") as rx:
        result = sender(kind, protocol, rx.endpoint).send(request.SerializeToString(), 5)
    assert result.ok and result.rejected == 1
    assert result.reason == PARTIAL_MESSAGE


def test_sender_errors_never_show_header_values_or_url_credentials(telemetry, monkeypatch):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", f"authorization=Bearer%20{SECRET}")
    with OtlpReceiver("http", mode="refuse") as rx:
        endpoint = rx.endpoint.replace("http://", "http://alice:pw-Zx9q@") + "/v1/traces"
        one = Sender("traces", "http/protobuf", endpoint)
        result = one.send(encode_spans(telemetry.spans).SerializeToString(), 2)
    assert not result.ok
    assert SECRET not in result.reason and "pw-Zx9q" not in result.reason and "alice" not in one.display


def post(url, body, content_type="application/x-protobuf", timeout=5):
    req = urllib.request.Request(url, data=body, headers={"Content-Type": content_type}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_http_receiver_routes_and_logs(otlp_http_receiver):
    rx = otlp_http_receiver
    logs = logs_service_pb2.ExportLogsServiceRequest()
    logs.resource_logs.add().scope_logs.add().log_records.add().severity_text = "INFO"
    assert post(rx.endpoint + "/v1/logs", logs.SerializeToString()) == (200, b"")
    assert rx.logs_requests == [logs.SerializeToString()]
    assert post(rx.endpoint + "/v1/unknown", b"")[0] == 404
    assert post(rx.endpoint + "/v1/traces", b"{}", content_type="application/json")[0] == 415
    assert post(rx.endpoint + "/v1/traces", b"\xff\xff\xff")[0] == 400
    assert rx.counts == {"traces": 0, "metrics": 0, "logs": 1}


def test_grpc_receiver_accepts_logs(otlp_grpc_receiver):
    import grpc
    from opentelemetry.proto.collector.logs.v1 import logs_service_pb2_grpc

    logs = logs_service_pb2.ExportLogsServiceRequest()
    logs.resource_logs.add().scope_logs.add().log_records.add().severity_text = "WARN"
    target = otlp_grpc_receiver.endpoint.split("://")[1]
    with grpc.insecure_channel(target) as channel:
        logs_service_pb2_grpc.LogsServiceStub(channel).Export(logs, timeout=5, metadata=[("x-test", "1")])
    assert otlp_grpc_receiver.logs_requests == [logs.SerializeToString()]
    assert otlp_grpc_receiver.headers[0]["x-test"] == "1"


def test_receiver_stop_is_prompt_with_slow_request_in_flight(telemetry):
    rx = OtlpReceiver("http", mode="slow", slow_delay=20)
    errors: list[BaseException] = []

    def client():
        try:
            sender("traces", "http/protobuf", rx.endpoint).send(encode_spans(telemetry.spans).SerializeToString(), 25)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    thread = threading.Thread(target=client, daemon=True)
    thread.start()
    try:
        wait_for(lambda: rx.count("traces") == 1, timeout=5)
    finally:
        started = time.monotonic()
        rx.stop()
    assert time.monotonic() - started < 5
    thread.join(timeout=10)
    assert not thread.is_alive()
    assert errors == []  # the slow request was answered (early) rather than dropped
    with pytest.raises(RuntimeError):
        _ = rx.endpoint


def test_receiver_argument_validation():
    with pytest.raises(ValueError):
        OtlpReceiver("udp", start=False)
    rx = OtlpReceiver("http", start=False)
    with pytest.raises(ValueError):
        rx.mode = "explode"
    with pytest.raises(ValueError):
        rx.slow_delay = 3600


def test_wait_for_is_bounded():
    started = time.monotonic()
    with pytest.raises(AssertionError, match="within 0.2s"):
        wait_for(lambda: False, timeout=0.2)
    assert time.monotonic() - started < 2
    calls = iter([0, 0, "done"])
    assert wait_for(lambda: next(calls), timeout=5) == "done"


def _log_request():
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue
    from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord, ResourceLogs, ScopeLogs

    record = LogRecord(
        time_unix_nano=1,
        severity_number=9,
        event_name="gen_ai.choice",
        body=AnyValue(string_value="yes"),
        trace_id=bytes.fromhex("0af7651916cd43dd8448eb211c80319c"),
        span_id=bytes.fromhex("b7ad6b7169203331"),
    )
    return logs_service_pb2.ExportLogsServiceRequest(
        resource_logs=[ResourceLogs(scope_logs=[ScopeLogs(log_records=[record])])]
    )


def test_logs_round_trip_with_hex_ids():
    """A logs line holds the record's trace and span ids as hex, like spans, and decodes back to the request."""
    request = _log_request()
    line = otlp_json.request_to_line(request)
    record = json.loads(line)["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]
    assert (record["traceId"], record["spanId"]) == ("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331")
    kind, decoded = otlp_json.decode_line(line)
    assert kind == "logs" and decoded == request


@pytest.mark.parametrize("protocol", ["http/protobuf", "grpc"])
def test_sender_sends_logs_and_reads_their_partial_success(protocol):
    request = _log_request()
    with OtlpReceiver("grpc" if protocol == "grpc" else "http", mode="partial") as rx:
        result = sender("logs", protocol, rx.endpoint).send(request.SerializeToString(), 5)
        assert rx.logs_requests == [request.SerializeToString()]
    assert result.ok and result.rejected == 1
    assert result.reason == PARTIAL_MESSAGE
