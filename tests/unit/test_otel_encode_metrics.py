"""TraceEncoder's metrics encoding (otel/encode.py) against the SDK's own OTLP encoder.

Every comparison builds the same metrics twice: as plain tuples
``(name, description, unit, kind, points)`` that go through
``TraceEncoder.metrics_protobuf`` / ``metrics_json_line``, and as the
equivalent SDK ``MetricsData`` that goes through ``encode_metrics``. The
protobuf must decode to an equal request (and is byte-identical to the SDK's
serialization), the JSON line must decode (``otlp_json.decode_line``) to that
same request and be the same JSON document as the SDK request through
``otlp_json.request_to_line``.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    Gauge,
    Histogram,
    HistogramDataPoint,
    Metric,
    MetricsData,
    NumberDataPoint,
    ResourceMetrics,
    ScopeMetrics,
    Sum,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from otlp_receiver import flatten_metrics

from pytest_probability.otel import otlp_json
from pytest_probability.otel.encode import METRIC_KINDS, TraceEncoder, metric_points

RESOURCE = Resource(
    {"service.name": "pytest-probability-test", "prob.suite": "unit", "host.cpus": 2, "ünï": "cödé ✓"},
    schema_url="https://opentelemetry.io/schemas/1.21.0",
)
RESOURCE_NO_SCHEMA = Resource({"service.name": "no-schema", "x": 1.5})
SCOPE = InstrumentationScope("pytest_probability", "0.4.0")
START = 1_760_000_000_123_456_789
NOW = START + 42_000_000_007
DURATION_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0)

# One of every attribute value type (all in range: the SDK fails on an int beyond int64).
ALL_ATTRIBUTES: dict[str, Any] = {
    "str": "plain",
    "str.empty": "",
    "str.unicode": "héllo wörld — ünïcödé ✓ 日本語",
    "str.astral": "emoji 😀 and 𝄞",
    "str.long": "x" * 300 + "é" * 9000,  # lengths that need 2- and 3-byte varints
    "str.control": 'quote " backslash \\ newline \n tab \t nul \x00',
    "bool.true": True,
    "bool.false": False,
    "int.zero": 0,
    "int.negative": -5,
    "int.min": -(1 << 63),
    "int.max": (1 << 63) - 1,
    "float": 1.5,
    "float.zero": 0.0,
    "float.negative.zero": -0.0,
    "float.tiny": 5e-324,
    "float.huge": 1.7976931348623157e308,
    "float.nan": math.nan,
    "float.inf": math.inf,
    "float.-inf": -math.inf,
    "bytes": b"\x00\x01\xfe\xff raw",
    "seq.str": ("a", "", "ü"),
    "seq.int": (1, -1, 0),
    "seq.float": (0.5, math.nan, -math.inf),
    "seq.bool": (True, False),
    "seq.empty": (),
    "ключ ✓": "значение",  # non-ASCII key
}


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------


def encoder(resource: Resource = RESOURCE, scope: InstrumentationScope = SCOPE) -> TraceEncoder:
    return TraceEncoder(resource.attributes, resource.schema_url, scope.name, scope.version or "")


def sdk_metric(metric: tuple, start: int, now: int) -> Metric:
    """The SDK ``Metric`` equivalent to a metric tuple."""
    name, description, unit, kind, points = metric
    if kind == "histogram":
        data: Any = Histogram(
            [
                HistogramDataPoint(attributes, start, now, count, total, list(buckets), list(bounds), lo, hi)
                for attributes, (count, total, buckets, bounds, lo, hi) in points
            ],
            AggregationTemporality.CUMULATIVE,
        )
    else:
        number_points = [NumberDataPoint(attributes, start, now, value) for attributes, value in points]
        if kind == "counter":
            data = Sum(number_points, AggregationTemporality.CUMULATIVE, True)
        else:
            data = Gauge(number_points)
    return Metric(name, description, unit, data)


def sdk_data(
    metrics: list[tuple], start: int = START, now: int = NOW, resource: Resource = RESOURCE, scope=SCOPE
) -> MetricsData:
    return MetricsData(
        [
            ResourceMetrics(
                resource,
                [ScopeMetrics(scope, [sdk_metric(m, start, now) for m in metrics], "")],
                resource.schema_url,
            )
        ]
    )


def assert_matches_sdk(
    metrics: list[tuple],
    start: int = START,
    now: int = NOW,
    resource: Resource = RESOURCE,
    scope: InstrumentationScope = SCOPE,
) -> ExportMetricsServiceRequest:
    """Check both encodings of ``metrics`` against the SDK's; return the decoded request."""
    enc = encoder(resource, scope)
    expected = encode_metrics(sdk_data(metrics, start, now, resource, scope))

    data = enc.metrics_protobuf(metrics, start, now)
    assert isinstance(data, bytes)
    got = ExportMetricsServiceRequest.FromString(data)
    assert MessageToDict(got) == MessageToDict(expected)  # readable diff first
    assert got == expected
    # Fields are written in field-number order like protobuf does: the same bytes.
    assert data == expected.SerializeToString(deterministic=True)

    line = enc.metrics_json_line(metrics, start, now)
    assert isinstance(line, str)
    assert line.isascii() and "\n" not in line
    kind, request = otlp_json.decode_line(line, ignore_unknown_fields=False)
    assert kind == "metrics"
    assert MessageToDict(request) == MessageToDict(expected)
    assert request == expected
    # The same JSON document as the SDK request through the existing codec.
    assert json.loads(line) == json.loads(otlp_json.request_to_line(expected))
    return got


def number_point(request: ExportMetricsServiceRequest, metric: int = 0, point: int = 0) -> Any:
    [rm] = request.resource_metrics
    [sm] = rm.scope_metrics
    m = sm.metrics[metric]
    return getattr(m, m.WhichOneof("data")).data_points[point]


def histogram(count: int, total: float, buckets: list[int], bounds=DURATION_BUCKETS, lo=0.0, hi=0.0) -> tuple:
    return (count, total, buckets, bounds, lo, hi)


# --------------------------------------------------------------------------
# matches the SDK
# --------------------------------------------------------------------------


def test_plugin_like_metrics_match_sdk() -> None:
    case = {"probability.benchmark": "bench_answer", "probability.case": "bench_answer[q1]"}
    buckets = [0, 3, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]
    metrics = [
        ("probability.runs", "Runs by benchmark, case and outcome", "{run}", "counter", [
            ({**case, "probability.outcome": "pass"}, 4),
            ({**case, "probability.outcome": "fail"}, 1),
        ]),
        ("probability.case.pass_fraction", "Passes over counted runs of a case", "1", "gauge", [
            ({**case, "probability.status": "pass"}, 0.8),
        ]),
        ("probability.cost", "Spend recorded by runs", "{USD}", "counter", [
            ({**case, "gen_ai.request.model": "m"}, 0.0123),
        ]),
        ("probability.run.duration", "Duration of the call phase of runs", "s", "histogram", [
            (case, histogram(5, 0.75 + 400.5, buckets, lo=0.07, hi=400.5)),
        ]),
    ]
    request = assert_matches_sdk(metrics)
    [rm] = request.resource_metrics
    assert rm.schema_url == RESOURCE.schema_url
    [sm] = rm.scope_metrics
    assert (sm.scope.name, sm.scope.version) == ("pytest_probability", "0.4.0")
    assert [m.name for m in sm.metrics] == [m[0] for m in metrics]
    assert sm.metrics[0].sum.aggregation_temporality == 2 and sm.metrics[0].sum.is_monotonic
    assert sm.metrics[3].histogram.aggregation_temporality == 2
    assert number_point(request, 0, 1).as_int == 1
    assert number_point(request, 1).as_double == 0.8


@pytest.mark.parametrize("kind", ["counter", "gauge"])
def test_number_values_match_sdk(kind: str) -> None:
    values = [
        0, 1, -1, 7, 1 << 40, -(1 << 63), (1 << 63) - 1,
        0.0, -0.0, 1.5, -2.25, 3.0, 5e-324, 1.7976931348623157e308, 1e21, 1e-7,
        math.nan, math.inf, -math.inf,
    ]  # fmt: skip
    metrics = [("v", "values", "1", kind, [({"i": i}, value) for i, value in enumerate(values)])]
    request = assert_matches_sdk(metrics)
    points = [number_point(request, 0, i) for i in range(len(values))]
    for point, value in zip(points, values):
        if isinstance(value, int):
            assert point.WhichOneof("value") == "as_int" and point.as_int == value
        else:
            assert point.WhichOneof("value") == "as_double"
            assert point.as_double == value or (math.isnan(value) and math.isnan(point.as_double))
    assert math.copysign(1.0, points[8].as_double) == -1.0  # -0.0 kept


def test_bool_value_is_sent_as_double() -> None:
    """Deliberate: the SDK fails the whole batch ("as_int: Expected an int, got a boolean")."""
    metrics = [("flag", "", "", "gauge", [({}, True), ({}, False)])]
    with pytest.raises(Exception, match="boolean"):
        encode_metrics(sdk_data(metrics))
    enc = encoder()
    request = ExportMetricsServiceRequest.FromString(enc.metrics_protobuf(metrics, START, NOW))
    assert request == encode_metrics(sdk_data([("flag", "", "", "gauge", [({}, 1.0), ({}, 0.0)])]))
    assert number_point(request, 0, 0).WhichOneof("value") == "as_double"
    assert number_point(request, 0, 1).WhichOneof("value") == "as_double"
    assert otlp_json.decode_line(enc.metrics_json_line(metrics, START, NOW)) == ("metrics", request)


def test_attributes_of_every_type_match_sdk() -> None:
    metrics = [
        ("c", "d", "u", "counter", [(ALL_ATTRIBUTES, 3), ({}, 4)]),
        ("g", "d", "u", "gauge", [(ALL_ATTRIBUTES, 0.5), ({}, -1)]),
        ("h", "d", "u", "histogram", [(ALL_ATTRIBUTES, histogram(1, 0.2, [0, 0, 0, 1] + [0] * 10, lo=0.2, hi=0.2))]),
    ]
    request = assert_matches_sdk(metrics)
    [rm] = request.resource_metrics
    for metric in rm.scope_metrics[0].metrics:
        first = getattr(metric, metric.WhichOneof("data")).data_points[0]
        assert [kv.key for kv in first.attributes] == list(ALL_ATTRIBUTES)


def test_histograms_match_sdk() -> None:
    points = [
        ({"case": "all zero"}, histogram(0, 0.0, [0] * 14)),
        ({"case": "no observation"}, histogram(0, 0.0, [0] * 14, lo=math.inf, hi=-math.inf)),
        ({"case": "typical"}, histogram(6, 12.5, [1, 0, 2, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0], lo=0.01, hi=9.9)),
        ({"case": "overflow"}, histogram(2, 1000.0, [0] * 13 + [2], lo=400.0, hi=600.0)),
        ({"case": "one bucket"}, histogram(3, 3.0, [3], bounds=(), lo=1.0, hi=1.0)),
        ({"case": "list bounds"}, [2, 0.5, [1, 1, 0], [0.25, 1.0], 0.1, 0.4]),  # lists, not tuples
        ({"case": "huge count"}, histogram((1 << 64) - 1, 1e300, [(1 << 64) - 1, 0], bounds=(0.0,), lo=-1.0, hi=1e300)),
        ({"case": "non-finite"}, histogram(2, math.nan, [1, 1], bounds=(math.inf,), lo=-math.inf, hi=math.nan)),
        ({"case": "negative"}, histogram(2, -3.5, [2, 0], bounds=(-1.0,), lo=-2.0, hi=-1.5)),
        ({}, histogram(1, 7, [0, 1], bounds=(5,), lo=7, hi=7)),  # ints where doubles go
    ]
    request = assert_matches_sdk([("probability.run.duration", "Duration", "s", "histogram", points)])
    zero = number_point(request, 0, 0)
    assert zero.count == 0 and list(zero.bucket_counts) == [0] * 14
    assert zero.HasField("sum") and zero.HasField("min") and zero.HasField("max")  # explicit presence, as in the SDK
    typical = number_point(request, 0, 2)
    assert (typical.count, typical.sum, typical.min, typical.max) == (6, 12.5, 0.01, 9.9)
    assert list(typical.explicit_bounds) == list(DURATION_BUCKETS)
    assert (typical.start_time_unix_nano, typical.time_unix_nano) == (START, NOW)


def test_several_metrics_of_each_kind_in_order_match_sdk() -> None:
    metrics = []
    for i in range(4):
        counts = [({"i": i, "k": k}, i * k) for k in range(3)]
        metrics.append((f"counter.{i}", f"counter {i}", "{run}", "counter", counts))
        metrics.append((f"gauge.{i}", "", "1", "gauge", [({"i": i}, i / 3)]))
        metrics.append(
            (f"histogram.{i}", f"histogram {i}", "", "histogram", [({"i": i}, histogram(i, i * 0.5, [i] + [0] * 13))])
        )
    request = assert_matches_sdk(metrics)
    assert [m.name for m in request.resource_metrics[0].scope_metrics[0].metrics] == [m[0] for m in metrics]
    assert metric_points(metrics) == 4 * (3 + 1 + 1)


def test_many_points_match_sdk() -> None:
    """Thousands of points: message lengths that need 2- and 3-byte varints."""
    counters = [({"probability.case": f"bench[{i}]", "probability.outcome": "pass", "n": i}, i) for i in range(2000)]
    gauges = [({"probability.case": f"bench[{i}]", "ü": "✓" * (i % 7)}, i / 1999) for i in range(1500)]
    histograms = [({"probability.case": f"bench[{i}]"}, histogram(i, i * 1.25, [i] + [0] * 13)) for i in range(500)]
    metrics = [
        ("probability.runs", "Runs", "{run}", "counter", counters),
        ("probability.case.pass_fraction", "Fraction", "1", "gauge", gauges),
        ("probability.run.duration", "Duration", "s", "histogram", histograms),
    ]
    assert metric_points(metrics) == 4000
    data = encoder().metrics_protobuf(metrics, START, NOW)
    assert len(data) > 1 << 16
    assert_matches_sdk(metrics)


def test_empty_description_unit_and_name_are_omitted() -> None:
    metrics = [
        ("no.description", "", "s", "counter", [({}, 1)]),
        ("no.unit", "described", "", "gauge", [({}, 1.0)]),
        ("neither", "", "", "histogram", [({}, histogram(0, 0.0, []))]),
        ("", "", "", "counter", [({}, 2)]),
    ]
    request = assert_matches_sdk(metrics)
    sdk_metrics = request.resource_metrics[0].scope_metrics[0].metrics
    assert [(m.name, m.description, m.unit) for m in sdk_metrics] == [m[:3] for m in metrics]
    line = encoder().metrics_json_line(metrics, START, NOW)
    json_metrics = json.loads(line)["resourceMetrics"][0]["scopeMetrics"][0]["metrics"]
    assert [sorted(k for k in m if k in ("name", "description", "unit")) for m in json_metrics] == [
        ["name", "unit"],
        ["description", "name"],
        ["name"],
        [],
    ]


def test_metric_without_points_has_no_data_as_in_the_sdk() -> None:
    metrics = [(f"empty.{kind}", "nothing", "1", kind, []) for kind in METRIC_KINDS]
    request = assert_matches_sdk(metrics)
    assert [m.WhichOneof("data") for m in request.resource_metrics[0].scope_metrics[0].metrics] == [None] * 3
    assert metric_points(metrics) == 0


def test_no_metrics_gives_one_empty_scope_as_in_the_sdk() -> None:
    request = assert_matches_sdk([])
    [rm] = request.resource_metrics
    [sm] = rm.scope_metrics
    assert sm.scope.name == "pytest_probability" and not sm.metrics
    assert metric_points([]) == 0


def test_gauge_points_carry_no_start_time_as_in_the_sdk() -> None:
    request = assert_matches_sdk([("g", "", "", "gauge", [({}, 1)]), ("c", "", "", "counter", [({}, 1)])])
    gauge, counter = number_point(request, 0), number_point(request, 1)
    assert (gauge.start_time_unix_nano, gauge.time_unix_nano) == (0, NOW)
    assert (counter.start_time_unix_nano, counter.time_unix_nano) == (START, NOW)


@pytest.mark.parametrize(
    ("resource", "scope"),
    [
        (RESOURCE, SCOPE),
        (RESOURCE_NO_SCHEMA, SCOPE),
        (Resource({}), InstrumentationScope("only-name")),
        (RESOURCE_NO_SCHEMA, InstrumentationScope("")),
    ],
    ids=["schema", "no-schema", "empty-resource-no-version", "empty-scope"],
)
def test_resource_and_scope_match_sdk(resource: Resource, scope: InstrumentationScope) -> None:
    metrics = [("c", "d", "1", "counter", [({"a": "b"}, 5)]), ("g", "d", "1", "gauge", [({}, 0.25)])]
    request = assert_matches_sdk(metrics, resource=resource, scope=scope)
    [rm] = request.resource_metrics
    assert rm.schema_url == (resource.schema_url or "")
    line = encoder(resource, scope).metrics_json_line(metrics, START, NOW)
    assert ('"schemaUrl"' in line) == bool(resource.schema_url)


def test_times_zero_are_omitted_as_defaults() -> None:
    metrics = [("c", "", "", "counter", [({}, 1)]), ("h", "", "", "histogram", [({}, histogram(1, 1.0, [1]))])]
    request = assert_matches_sdk(metrics, 0, 0)
    assert (number_point(request, 0).start_time_unix_nano, number_point(request, 1).time_unix_nano) == (0, 0)
    assert '"startTimeUnixNano"' not in encoder().metrics_json_line(metrics, 0, 0)


def test_small_times_match_sdk() -> None:
    assert_matches_sdk([("c", "", "", "counter", [({}, 1)])], 1, 2)


# --------------------------------------------------------------------------
# metric_points, receiver, beyond the SDK
# --------------------------------------------------------------------------


def test_metric_points_counts_every_data_point() -> None:
    metrics = [
        ("a", "", "", "counter", [({}, 1), ({"x": 1}, 2), ({"x": 2}, 3)]),
        ("b", "", "", "gauge", []),
        ("c", "", "", "histogram", [({}, histogram(1, 1.0, [1]))]),
    ]
    assert metric_points(metrics) == 4
    assert metric_points([]) == 0
    request = ExportMetricsServiceRequest.FromString(encoder().metrics_protobuf(metrics, START, NOW))
    assert len(flatten_metrics([request])) == metric_points(metrics)


def test_receiver_reads_the_protobuf() -> None:
    metrics = [
        ("probability.runs", "Runs", "{run}", "counter", [
            ({"probability.outcome": "pass"}, 9),
            ({"probability.outcome": "fail"}, 1),
        ]),
        ("probability.session.pass_fraction", "Fraction", "1", "gauge", [({}, 0.9)]),
        ("probability.run.duration", "Duration", "s", "histogram", [
            ({"case": "é"}, histogram(2, 0.3, [1, 1] + [0] * 12, lo=0.1, hi=0.2)),
        ]),
    ]
    data = encoder().metrics_protobuf(metrics, START, NOW)
    points = flatten_metrics([ExportMetricsServiceRequest.FromString(data)])
    assert [(p.name, p.type, p.unit, p.description) for p in points] == [
        ("probability.runs", "sum", "{run}", "Runs"),
        ("probability.runs", "sum", "{run}", "Runs"),
        ("probability.session.pass_fraction", "gauge", "1", "Fraction"),
        ("probability.run.duration", "histogram", "s", "Duration"),
    ]
    runs_pass, runs_fail, fraction, duration = points
    assert (runs_pass.value, runs_pass.attributes, runs_pass.is_monotonic, runs_pass.temporality) == (
        9, {"probability.outcome": "pass"}, True, "cumulative",
    )  # fmt: skip
    assert runs_fail.value == 1
    assert (fraction.value, fraction.attributes, fraction.temporality) == (0.9, {}, None)
    assert (duration.count, duration.sum, duration.min, duration.max) == (2, 0.3, 0.1, 0.2)
    assert duration.temporality == "cumulative"
    assert duration.bucket_counts == [1, 1] + [0] * 12
    assert duration.explicit_bounds == list(DURATION_BUCKETS)
    assert duration.attributes == {"case": "é"}
    assert runs_pass.resource == dict(RESOURCE.attributes)
    assert runs_pass.scope_name == "pytest_probability"
    assert (runs_pass.start_time_unix_nano, runs_pass.time_unix_nano) == (START, NOW)
    # The JSON line gives the same points through the file codec.
    line = encoder().metrics_json_line(metrics, START, NOW)
    assert flatten_metrics([otlp_json.decode_line(line)]) == points


def test_unknown_kind_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown metric kind 'summary'"):
        encoder().metrics_protobuf([("x", "", "", "summary", [])], START, NOW)
    with pytest.raises(ValueError, match="unknown metric kind"):
        encoder().metrics_json_line([("x", "", "", "updowncounter", [({}, 1)])], START, NOW)


def test_int_beyond_int64_is_sent_as_double() -> None:
    """Deliberate: the SDK fails the whole batch (protobuf rejects the as_int)."""
    big = 1 << 70
    metrics = [("big", "", "", "counter", [({}, big), ({}, -big)])]
    enc = encoder()
    request = ExportMetricsServiceRequest.FromString(enc.metrics_protobuf(metrics, START, NOW))
    assert number_point(request, 0, 0).as_double == float(big)
    assert number_point(request, 0, 1).as_double == -float(big)
    kind, from_json = otlp_json.decode_line(enc.metrics_json_line(metrics, START, NOW))
    assert kind == "metrics" and from_json == request
    # Equal to the SDK's encoding of the float values.
    assert request == encode_metrics(sdk_data([("big", "", "", "counter", [({}, float(big)), ({}, -float(big))])]))


def test_lone_surrogates_are_scrubbed() -> None:
    """Deliberate: the SDK fails on a string that is no valid UTF-8; like spans, it becomes '?'."""
    bad = "file-\udcff.py"
    metrics = [(f"m{bad}", f"d{bad}", f"u{bad}", "gauge", [({"path": bad, f"k{bad}": (bad, "ok")}, 1.5)])]
    clean = "file-?.py"
    expected_metrics = [
        (f"m{clean}", f"d{clean}", f"u{clean}", "gauge", [({"path": clean, f"k{clean}": (clean, "ok")}, 1.5)]),
    ]
    expected = encode_metrics(sdk_data(expected_metrics))
    enc = encoder()
    assert ExportMetricsServiceRequest.FromString(enc.metrics_protobuf(metrics, START, NOW)) == expected
    line = enc.metrics_json_line(metrics, START, NOW)
    assert line.isascii()
    assert otlp_json.decode_line(line) == ("metrics", expected)
    # Non-BMP characters (escaped as surrogate pairs in JSON) are kept.
    astral = [("😀", "𝄞", "", "counter", [({"e": "😀"}, 1)])]
    assert_matches_sdk(astral)


def test_input_is_not_modified() -> None:
    attributes = {"a": "b", "bad": "\udcff"}
    points = [(attributes, 1)]
    metrics = [("m", "", "", "counter", points)]
    encoder().metrics_protobuf(metrics, START, NOW)
    encoder().metrics_json_line(metrics, START, NOW)
    assert metrics == [("m", "", "", "counter", [({"a": "b", "bad": "\udcff"}, 1)])]
    assert points[0][0] is attributes


def test_module_imports_only_the_standard_library() -> None:
    import subprocess
    import sys

    code = (
        "import sys; import pytest_probability.otel.encode as e;"
        "e.TraceEncoder({'a': 1}, '', 's', '1').metrics_protobuf([('m', '', '', 'counter', [({}, 1)])], 1, 2);"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('google', 'opentelemetry')];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
