"""Fakes for the export's unit tests: requests made by hand, and a sender whose timing is exact.

The guards and the session's end run for real (tests/unit/test_signal_guards.py,
tests/unit/test_request_sender.py): :class:`End` holds one guard per signal, as the session does,
and ends them as ``Session.drain`` does, with the metrics sent on a thread of their own."""

from __future__ import annotations

import time
from pathlib import Path

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from pytest_probability.files import Lines
from pytest_probability.otel.request_sender import Result
from pytest_probability.otel.signal_guards import Guard, drain

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

    def __init__(self, answer: callable) -> None:
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


class End:
    """A session's guards over the fake senders, and its end."""

    def __init__(self, tmp_path: Path, senders: dict[str, object]) -> None:
        self.spill = Lines(tmp_path / "spill.jsonl", fresh=False)
        self.guards = {
            kind: Guard(kind, senders.get(kind), None, self.spill, TIMEOUT)  # type: ignore[arg-type]
            for kind in ("traces", "metrics", "logs")
        }

    def finish(self, metric_requests: list[tuple[bytes, int]]) -> bool:
        return drain(self.guards, [lambda: self.guards["metrics"].send_all(metric_requests)], TIMEOUT, [self.spill])


def pipeline(
    tmp_path: Path, traces: TimedSender, metrics: TimedSender | None = None, logs: object | None = None
) -> End:
    return End(tmp_path, {"traces": traces, "metrics": metrics, "logs": logs})
