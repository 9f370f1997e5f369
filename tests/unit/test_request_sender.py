"""The logs' sender made on its first use (issue 24), and the SDK's warnings read from the building
thread only. The guards run for real with the fake senders of test_signal_guards.py;
the sessions that load (or never load) the real OTLP log exporter are in tests/e2e/test_otel_signals.py."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import pytest
from otlp_receiver import flatten_logs
from pipeline_fakes import TimedSender, logs_request, pipeline, span_request

from pytest_probability.otel import otlp_json
from pytest_probability.otel.request_sender import Deferred, SdkWarnings


def answering() -> TimedSender:
    return TimedSender(lambda deadline: (0.0, True))


class Maker:
    """Counts the builds; raises instead when given an exception."""

    def __init__(self, error: Exception | None = None) -> None:
        self.error = error
        self.builds = 0
        self.sender = answering()

    def __call__(self) -> TimedSender:
        self.builds += 1
        if self.error is not None:
            raise self.error
        return self.sender


def test_a_session_without_log_records_never_makes_the_logs_sender(tmp_path: Path) -> None:
    maker = Maker()
    traces = answering()
    p = pipeline(tmp_path, traces, logs=Deferred(maker, "http://logs"))  # type: ignore[arg-type]
    p.guards["traces"].forward(span_request(1), 1)
    p.finish([])
    assert traces.calls == 1
    assert maker.builds == 0
    assert p.guards["logs"].sender.built is None  # type: ignore[union-attr]


def test_the_first_log_batch_makes_the_sender_once(tmp_path: Path) -> None:
    maker = Maker()
    logs = Deferred(maker, "http://logs")
    p = pipeline(tmp_path, answering(), logs=logs)  # type: ignore[arg-type]
    p.guards["logs"].forward(logs_request(), 1)
    p.finish([])
    assert maker.builds == 1 and maker.sender.calls == 1
    assert p.guards["logs"].sent == 1 and not p.guards["logs"].failure
    # Threads asking at once get the one sender.
    again = Maker()
    deferred = Deferred(again, "http://logs")
    got: list[object] = []
    threads = [threading.Thread(target=lambda: got.append(deferred.get())) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert again.builds == 1 and len(got) == 8 and all(sender is again.sender for sender in got)


def test_a_logs_sender_that_cannot_be_made_keeps_the_records_and_says_why(tmp_path: Path) -> None:
    logs = Deferred(Maker(ValueError("no such certificate")), "http://logs")
    p = pipeline(tmp_path, answering(), logs=logs)  # type: ignore[arg-type]
    p.guards["logs"].forward(logs_request(), 1)
    p.finish([])
    signal = p.guards["logs"]
    assert signal.failure == "ValueError: no such certificate"
    assert logs.display == "http://logs"  # never built: the endpoint as configured
    kept = flatten_logs(list(otlp_json.read_file(tmp_path / "spill.jsonl")))
    assert [log.body for log in kept] == ["a log record"]


def test_only_the_building_threads_warnings_are_the_exporters() -> None:
    """The logs' exporter is built on the export thread while the runs go on: a warning another thread
    logs meanwhile (a user's instrumentation) is not the exporter's."""
    logger = logging.getLogger("opentelemetry.test.deferred")
    elsewhere = threading.Thread(target=lambda: logger.warning("from a run"))
    with SdkWarnings() as caught:
        logger.warning("from the exporter")
        elsewhere.start()
        elsewhere.join(5)
    assert caught.messages == ["from the exporter"]


def test_the_warnings_are_kept_when_logging_records_no_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """``logging.logThreads = False`` (a user's speed-up) leaves every record's thread None: then every
    warning logged during the build is the exporter's, as before the building thread was checked."""
    monkeypatch.setattr(logging, "logThreads", False)
    with SdkWarnings() as caught:
        logging.getLogger("opentelemetry.test.deferred").warning("from the exporter")
    assert caught.messages == ["from the exporter"]
