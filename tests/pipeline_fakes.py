"""Fakes for the export pipeline's unit tests: requests made by hand, and a sender whose timing is exact.

The pipeline itself runs for real (tests/unit/test_otel_pipeline_deadline.py,
tests/unit/test_otel_deferred_sender.py)."""

from __future__ import annotations

import time
from pathlib import Path

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from pytest_probability.otel.options import OtelSettings
from pytest_probability.otel.pipeline import Pipeline
from pytest_probability.otel.send import Result

TIMEOUT = 0.5


def span_request(index: int) -> bytes:
    request = ExportTraceServiceRequest()
    span = request.resource_spans.add().scope_spans.add().spans.add()
    span.trace_id = bytes(range(16))
    span.span_id = index.to_bytes(8, "big")
    span.name = f"span {index}"
    return request.SerializeToString()


def metrics_request() -> bytes:
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

    request = ExportMetricsServiceRequest()
    metric = request.resource_metrics.add().scope_metrics.add().metrics.add(name="probability.session.runs")
    metric.sum.data_points.add(as_int=3)
    return request.SerializeToString()


class TimedSender:
    """Answers each request at a given moment, counted from the start of the session's end."""

    display = "http://fake"

    def __init__(self, answer: "callable") -> None:
        self.answer = answer  # (deadline) -> (when, ok)
        self.deadline = 0.0
        self.calls = 0

    def send(self, body: bytes, timeout: float) -> Result:
        self.calls += 1
        when, ok = self.answer(self.deadline)
        time.sleep(max(0.0, when - time.monotonic()))
        return Result(True) if ok else Result(False, 0, "refused by the fake")

    def close(self) -> None:
        pass


def logs_request() -> bytes:
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    request = ExportLogsServiceRequest()
    request.resource_logs.add().scope_logs.add().log_records.add().body.string_value = "a log record"
    return request.SerializeToString()


def pipeline(
    tmp_path: Path, traces: TimedSender, metrics: TimedSender | None = None, logs: TimedSender | None = None
) -> Pipeline:
    settings = OtelSettings(
        endpoints={"traces": "", "metrics": ""}, protocols={"traces": "http/protobuf", "metrics": "http/protobuf"},
        timeout=TIMEOUT, file=None, spill=tmp_path / "spill.jsonl", capture="all", suite="s", traceparent=None,
    )  # fmt: skip
    senders = {"traces": traces, "metrics": metrics, "logs": logs}
    return Pipeline(settings, tmp_path / "spill.jsonl", senders)  # type: ignore[arg-type]
