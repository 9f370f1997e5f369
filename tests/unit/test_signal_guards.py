"""The export at the session's deadline: every request kept at most once, and never one the endpoint
confirmed (issue 23, items 3 and 4). The guards and the end run for real, with a fake sender whose
timing is exact; the end-to-end sessions against slow receivers are in tests/e2e/test_otel_reliability.py."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from otlp_receiver import flatten_metrics, flatten_spans
from pipeline_fakes import TIMEOUT, End, TimedSender, logs_request, metrics_request, pipeline, span_request

from pytest_probability.otel import otlp_json


def finish(
    p: End, senders: list[TimedSender], requests: list[tuple[bytes, int]], spans: int = 1, logs: int = 0
) -> None:
    """The session's end, with ``spans`` and ``logs`` requests of workers arriving as it begins (sent at
    once, on their guards' threads: in flight when the deadline starts)."""
    for sender in senders:
        sender.deadline = time.monotonic() + TIMEOUT
    for index in range(spans):
        p.guards["traces"].forward(span_request(index + 1), 1)
    for _ in range(logs):
        p.guards["logs"].forward(logs_request(), 1)
    p.finish(requests)


def spilled(tmp_path: Path) -> tuple[list[str], int]:
    path = tmp_path / "spill.jsonl"
    if not path.exists():
        return [], 0
    decoded = list(otlp_json.read_file(path))
    return sorted(s.span_id for s in flatten_spans(decoded)), len(flatten_metrics(decoded))


@pytest.mark.parametrize("attempt", range(5))
def test_a_batch_that_fails_just_before_the_deadline_is_spilled_once(tmp_path: Path, attempt: int) -> None:
    """Item 4: the thread spilled the failed batch, and the end spilled it again, as still in flight."""
    traces = TimedSender(lambda deadline: (deadline - 0.001, False))
    p = pipeline(tmp_path, traces)
    write = p.spill.write

    def slow_write(*args: object) -> None:  # a spill on a slow disk: the race's window, wide open
        time.sleep(0.01)
        write(*args)  # type: ignore[arg-type]

    p.spill.write = slow_write  # type: ignore[method-assign]
    finish(p, [traces], [])
    ids, _ = spilled(tmp_path)
    assert ids == [(1).to_bytes(8, "big").hex()], ids
    assert p.spill.counts == {"traces": 1} and p.spill.lines == 1
    assert traces.calls == 1


def test_a_request_answered_after_the_deadline_is_not_kept(tmp_path: Path) -> None:
    """Item 3: a request in flight at the deadline whose answer came a little later was both delivered
    and spilled, and every signal was noted as failed."""
    traces = TimedSender(lambda deadline: (deadline - TIMEOUT / 2, True))
    metrics = TimedSender(lambda deadline: (deadline + 0.2, True))  # answered 0.2 s past the deadline
    p = pipeline(tmp_path, traces, metrics)
    finish(p, [traces, metrics], [(metrics_request(), 1)])
    assert spilled(tmp_path) == ([], 0)
    assert {name: signal.failure for name, signal in p.guards.items()} == {"traces": "", "metrics": "", "logs": ""}
    assert (p.guards["traces"].sent, p.guards["metrics"].sent) == (1, 1)


def test_only_the_signal_that_missed_the_deadline_is_noted(tmp_path: Path) -> None:
    traces = TimedSender(lambda deadline: (deadline - TIMEOUT / 2, True))
    metrics = TimedSender(lambda deadline: (deadline + 60, True))  # never within the grace
    p = pipeline(tmp_path, traces, metrics)
    started = time.monotonic()
    finish(p, [traces, metrics], [(metrics_request(), 1)])
    assert time.monotonic() - started < TIMEOUT + TIMEOUT + 1  # the deadline and its grace, not 60 s
    assert spilled(tmp_path) == ([], 1)
    assert p.guards["traces"].failure == ""
    assert p.guards["metrics"].failure == f"no answer within {TIMEOUT:g} s"


def test_a_traces_endpoint_that_never_answers_leaves_the_metrics_their_time(tmp_path: Path) -> None:
    """The metrics were sent after the last span batch, on one thread: a traces request held to the
    deadline left them none (`the 0.5 s deadline passed before it was sent`)."""
    traces = TimedSender(lambda deadline: (deadline + 60, True))  # never within the grace
    metrics = TimedSender(lambda deadline: (deadline - TIMEOUT * 0.8, True))
    p = pipeline(tmp_path, traces, metrics)
    finish(p, [traces, metrics], [(metrics_request(), 1)])
    assert (metrics.calls, p.guards["metrics"].sent, p.guards["metrics"].failure) == (1, 1, "")
    assert p.guards["traces"].failure == f"no answer within {TIMEOUT:g} s"
    assert spilled(tmp_path) == ([(1).to_bytes(8, "big").hex()], 0)


def test_a_traces_endpoint_that_never_answers_leaves_the_log_records_their_time(tmp_path: Path) -> None:
    """Span and log batches went out one after the other from one thread."""
    traces = TimedSender(lambda deadline: (deadline + 60, True))
    logs = TimedSender(lambda deadline: (deadline - TIMEOUT * 0.8, True))
    p = pipeline(tmp_path, traces, logs=logs)
    finish(p, [traces, logs], [], logs=1)
    assert (logs.calls, p.guards["logs"].sent, p.guards["logs"].failure) == (1, 1, "")
    assert p.guards["traces"].failure == f"no answer within {TIMEOUT:g} s"
