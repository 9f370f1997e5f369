"""The lightweight run span: the OpenTelemetry API behaviour users rely on, and the SDK's limits."""

from __future__ import annotations

import enum
import math
import random
import subprocess
import sys

import pytest
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanContext, Status, StatusCode, TraceFlags

from pytest_probability.otel import runspan
from pytest_probability.otel.apispan import RecordingSpan
from pytest_probability.otel.runspan import Limits, SpanCore


def make(**kwargs) -> RecordingSpan:
    return RecordingSpan("probability.run x", 0xABC, 0x123, True, {"a": "b"}, **kwargs)


def test_wire_form_holds_what_was_recorded() -> None:
    span = make()
    span.set_attribute("n", 3)
    span.add_event("e", {"k": 1.5}, timestamp=42)
    span.end(end_time=span.start_time + 10)
    data = span.to_dict()
    assert data["name"] == "probability.run x"
    assert data["trace_id"] == 0xABC and data["parent_span_id"] == 0x123 and data["parent_remote"] is True
    assert data["span_id"] == span.get_span_context().span_id != 0
    assert data["end"] - data["start"] == 10
    assert data["attributes"] == {"a": "b", "n": 3}
    assert data["events"] == [("e", 42, {"k": 1.5})]
    assert data["status"] == (0, "")
    assert data["kind"] == 0 and data["flags"] == 1


def test_span_ids_do_not_follow_a_seeded_global_random() -> None:
    ids = set()
    for _ in range(50):
        random.seed(1234)
        ids.add(make().get_span_context().span_id)
    assert len(ids) == 50


def test_user_spans_nest_under_the_current_run_span() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    span = make()
    token = otel_context.attach(trace.set_span_in_context(span))
    try:
        assert trace.get_current_span() is span
        with provider.get_tracer("user").start_as_current_span("user.call"):
            trace.get_current_span().set_attribute("inner", True)
        trace.get_current_span().set_attribute("from.benchmark", "yes")
    finally:
        otel_context.detach(token)
    (child,) = exporter.get_finished_spans()
    assert child.parent.span_id == span.get_span_context().span_id
    assert child.context.trace_id == 0xABC
    assert span.attributes["from.benchmark"] == "yes" and "inner" not in span.attributes


def test_status_rules_follow_the_sdk() -> None:
    span = make()
    span.set_status(StatusCode.UNSET)
    assert span.status == (0, "")
    span.set_status(StatusCode.ERROR, "boom")
    assert span.status == (2, "boom")
    span.set_status(Status(StatusCode.OK, "ignored for OK"))
    assert span.status == (1, "")
    span.set_status(StatusCode.ERROR, "too late: OK is final")
    assert span.status == (1, "")
    span.force_status(runspan.ERROR, "the run failed")  # the plugin's outcome wins
    assert span.status == (2, "the run failed")


def test_record_exception_is_an_exception_event() -> None:
    span = make()
    try:
        raise KeyError("missing")
    except KeyError as exc:
        span.record_exception(exc, {"extra": 1})
    (name, _, attributes), = span.events
    assert name == "exception"
    assert attributes["exception.type"] == "KeyError"
    assert attributes["exception.message"] == "'missing'"
    assert "raise KeyError" in attributes["exception.stacktrace"]
    assert attributes["exception.escaped"] == "False" and attributes["extra"] == 1


def test_an_ended_span_ignores_changes() -> None:
    span = make()
    span.end(end_time=5)
    assert not span.is_recording()
    span.set_attribute("late", 1)
    span.add_event("late")
    span.update_name("late")
    span.set_status(StatusCode.ERROR, "late")
    span.end(end_time=99)
    data = span.to_dict()
    assert "late" not in data["attributes"] and data["events"] == [] and data["name"] == "probability.run x"
    assert data["status"] == (0, "") and data["end"] == 5


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("text", "text"),
        (True, True),
        (7, 7),
        (1.5, 1.5),
        (b"\x00\x01", b"\x00\x01"),
        (("a", "b"), ["a", "b"]),
        ([1, None, 3], [1, None, 3]),
        ([True, False], [True, False]),
        ([], []),
    ],
)
def test_valid_attribute_values_are_kept(value, expected) -> None:
    span = make()
    span.set_attribute("k", value)
    assert span.attributes["k"] == expected


class Colour(str, enum.Enum):
    RED = "red"


class Shape(enum.Enum):
    ROUND = 1


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        ({"a": 1, "": 2, 3: ("x",)}, {"a": 1, "3": ["x"]}),
        ([1, "two"], [1, "two"]),
        ([[1], {"k": None}], [[1], {"k": None}]),
        (Colour.RED, "red"),
        (Shape.ROUND, "Shape.ROUND"),
        ({1, 2}, "{1, 2}"),
    ],
)
def test_other_values_are_cleaned_as_the_api_does(value, expected) -> None:
    """Mappings, None, mixed and nested sequences are kept; other objects become their str()."""
    span = make()
    span.set_attribute("k", value)
    assert span.attributes["k"] == expected
    assert type(span.attributes["k"]) is type(expected)


def test_the_same_values_encode_like_the_sdk_keeps_them() -> None:
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import TracerProvider as SdkProvider
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter as Memory

    from pytest_probability.otel.encode import TraceEncoder

    values = {"m": {"k": 1}, "n": None, "mix": (1, "x"), "nested": ((1, 2),), "colour": Colour.RED, "s": "plain"}
    memory = Memory()
    provider = SdkProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    with provider.get_tracer("t").start_as_current_span("s") as sdk_span:
        sdk_span.set_attributes(values)
    (finished,) = memory.get_finished_spans()
    ours = SpanCore("s", 1)
    ours.set_attributes(values)
    ours.end()
    expected = encode_spans([finished]).resource_spans[0].scope_spans[0].spans[0].attributes
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    encoded = ExportTraceServiceRequest.FromString(TraceEncoder({}, "", "t", "").to_protobuf([ours.to_dict()]))
    assert encoded.resource_spans[0].scope_spans[0].spans[0].attributes == expected


def test_nan_is_a_valid_float() -> None:
    span = make()
    span.set_attribute("k", math.nan)
    assert math.isnan(span.attributes["k"])


def test_limits_come_from_the_sdk_variables() -> None:
    env = {
        "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT": "5",
        "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT": "3",
        "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT": "2",
        "OTEL_SPAN_EVENT_COUNT_LIMIT": "2",
        "OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT": "1",
        "OTEL_SPAN_LINK_COUNT_LIMIT": "not a number",
    }
    limits = Limits.from_env(env)
    assert limits == Limits(
        attribute_count=2, attribute_length=3, event_count=2, event_attribute_count=1, event_attribute_length=5,
        link_count=128, link_attribute_count=128,
    )
    assert Limits.from_env({}) == runspan.DEFAULT_LIMITS
    assert Limits.from_env({"OTEL_ATTRIBUTE_COUNT_LIMIT": "7"}).attribute_count == 7


def test_limits_cut_values_drop_attributes_and_keep_the_newest_events() -> None:
    limits = Limits(attribute_count=2, attribute_length=3, event_count=2, event_attribute_count=1, event_attribute_length=5)
    span = RecordingSpan("s", 1, limits=limits)
    span.set_attribute("one", "abcdef")
    span.set_attribute("two", ["abcdef", "xy"])
    span.set_attribute("three", 3)  # over the count
    span.set_attribute("one", "again")  # replacing an existing key is no new attribute
    assert span.attributes == {"one": "aga", "two": ["abc", "xy"]}
    for index in range(4):
        span.add_event(f"e{index}", {"message": "0123456789", "dropped": 1})
    assert [name for name, _, _ in span.events] == ["e2", "e3"]
    assert span.events[-1][2] == {"message": "01234"}
    data = span.to_dict()
    assert data["dropped_attributes"] == 1 and data["dropped_events"] == 2


def test_links_are_recorded_up_to_the_limit() -> None:
    span = RecordingSpan("s", 1, limits=Limits(link_count=1))
    other = SpanContext(5, 6, is_remote=True, trace_flags=TraceFlags(1))
    span.add_link(other, {"why": "retry"})
    span.add_link(other)
    assert span.links == [(5, 6, 1, {"why": "retry"})]
    assert span.to_dict()["dropped_links"] == 1


def test_the_core_span_imports_no_opentelemetry() -> None:
    """Without user instrumentation, a run's span must not pull in the API (see the module docstring)."""
    code = (
        "import sys\n"
        "from pytest_probability.otel import runspan, encode, spans, session\n"
        "span = runspan.SpanCore('s', runspan.new_trace_id())\n"
        "span.add_event('e', {'k': 1}); span.end()\n"
        "assert span.to_dict()['events'][0][0] == 'e'\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "[]"


def test_the_api_span_records_like_the_core() -> None:
    core, api = SpanCore("s", 7, 3, False, {"a": 1}), RecordingSpan("s", 7, 3, False, {"a": 1})
    for span in (core, api):
        span.set_attribute("b", "x")
        span.add_event("e", {"k": 1}, timestamp=9)
        span.end(end_time=span.start_time + 1)
    one, two = core.to_dict(), api.to_dict()
    for data in (one, two):
        data.pop("span_id"), data.pop("start"), data.pop("end")
    assert one == two
    assert api.get_span_context().span_id == api.span_id and api.get_span_context().trace_id == 7


def test_traceparent_round_trip() -> None:
    span = make()
    text = span.traceparent
    assert text == f"00-{0xABC:032x}-{span.get_span_context().span_id:016x}-01"
    assert runspan.parse_traceparent(text) == (0xABC, span.get_span_context().span_id)
    assert runspan.parse_traceparent(None) is None


def test_shared_case_attributes_are_exported_and_never_modified() -> None:
    shared = {"probability.case": "c", "code.line.number": 3}
    span = RecordingSpan("s", 1, attributes={"probability.run": 1}, case_attributes=shared, limits=Limits(attribute_count=4))
    span.set_attribute("mine", True)
    assert span.to_dict()["case_attributes"] is shared
    span.set_attribute("probability.case", "overridden")  # the benchmark wins; the shared dict stays as it was
    assert shared == {"probability.case": "c", "code.line.number": 3}
    data = span.to_dict()
    assert data["case_attributes"] is None
    assert data["attributes"] == {"probability.case": "overridden", "code.line.number": 3, "probability.run": 1, "mine": True}
    span.set_attribute("one.too.many", 1)
    assert span.to_dict()["dropped_attributes"] == 1


def test_the_count_limit_counts_shared_attributes() -> None:
    span = SpanCore("s", 1, attributes={}, case_attributes={"a": 1, "b": 2}, limits=Limits(attribute_count=3))
    span.set_attribute("c", 3)
    span.set_attribute("d", 4)
    assert span.attributes == {"c": 3} and span.dropped_attributes == 1
