"""Issue 21, item 5: one pipeline for every signal.

Instrumentation's metrics (a histogram from ``metrics.get_meter``) and log records
(events through the logs API, as the GenAI instrumentation emits them) go through
the plugin's providers to the endpoint (HTTP and gRPC), the OTLP file, the spill
file and ``replay``, serially and under ``-n 2``. Every session runs pytest in a
subprocess (OpenTelemetry keeps process state).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from functools import partial

import pytest
from otlp_receiver import LogView, OtlpReceiver, PointView, SpanView, flatten_logs, flatten_metrics, flatten_spans
from sessions import closed_port, export_to, session

from pytest_probability.otel import otlp_json

pytest_plugins = ["pytester"]

BENCH = """
import pytest
from opentelemetry import _logs, metrics

METER = metrics.get_meter("genai.instrumentation")          # at import, as instrumentation does
DURATION = METER.create_histogram("gen_ai.client.operation.duration", unit="s")
EVENTS = _logs.get_logger("genai.instrumentation")


@pytest.mark.parametrize("model", ["m-small", "m-large"])
def bench_chat(model, request):
    DURATION.record(0.25, {"gen_ai.request.model": model, "gen_ai.operation.name": "chat"})
    EVENTS.emit(
        event_name="gen_ai.client.inference.operation.details",
        body={"answer": "yes"},
        attributes={"gen_ai.request.model": model, "nodeid": request.node.nodeid},
    )
"""
RUNS = 3
TOTAL = 2 * RUNS
HISTOGRAM = "gen_ai.client.operation.duration"

#: Which exporter modules each process loaded, and whether the global providers are the plugin's.
PROBE = """
import json, os, sys

def pytest_sessionfinish(session):
    role = "worker" if hasattr(session.config, "workerinput") else "controller"
    exporting = sorted(m for m in sys.modules
                       if m.startswith(("opentelemetry.exporter.otlp.proto.http", "opentelemetry.exporter.otlp.proto.grpc")))
    with open(f"modules-{role}-{os.getpid()}.json", "w") as handle:
        json.dump(exporting, handle)
"""

#: The user's own providers, set at import: they keep their signals.
USER_PROVIDERS = """
import json, os

from opentelemetry import _logs, metrics
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

READER = InMemoryMetricReader()
metrics.set_meter_provider(MeterProvider(metric_readers=[READER]))
LOGS = InMemoryLogRecordExporter()
_PROVIDER = LoggerProvider()
_PROVIDER.add_log_record_processor(SimpleLogRecordProcessor(LOGS))
_logs.set_logger_provider(_PROVIDER)


def pytest_sessionfinish(session):
    data = READER.get_metrics_data()
    count = 0
    for rm in (data.resource_metrics if data else ()):
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                if metric.name == "gen_ai.client.operation.duration":
                    count += sum(point.count for point in metric.data.data_points)
    with open(f"user-{os.getpid()}.json", "w") as handle:
        json.dump({"measurements": count, "logs": len(LOGS.get_finished_logs())}, handle)
"""


pytestmark = pytest.mark.usefixtures("clean_env")


run = partial(session, options=(f"--prob-runs={RUNS}",))


def run_spans(spans: list[SpanView]) -> dict[str, SpanView]:
    runs = {s.attributes["pytest.nodeid"]: s for s in spans if s.name.startswith("probability.run ")}
    assert len(runs) == TOTAL, sorted(runs)
    return runs


def check_histogram(points: list[PointView], runs: dict[str, SpanView], workers: int = 0) -> None:
    """Every measurement arrived once, on the plugin's resource, with exemplars pointing at runs; under
    xdist each worker's points are its own stream (``service.instance.id``: its id)."""
    ours = [p for p in points if p.name == HISTOGRAM]
    assert ours, sorted({p.name for p in points})
    streams = Counter(json.dumps([p.resource, p.attributes], sort_keys=True) for p in ours)
    assert set(streams.values()) == {1}, "two points of one stream"
    instances = {p.resource.get("service.instance.id") for p in ours}
    assert instances == ({None} if not workers else {f"gw{i}" for i in range(workers)})
    by_model = Counter()
    for point in ours:
        assert point.resource.get("service.name") == "pytest-probability"
        assert point.scope_name == "genai.instrumentation"
        by_model[point.attributes["gen_ai.request.model"]] += point.count
        assert point.sum == pytest.approx(0.25 * point.count)
        assert point.exemplars, "a measurement made inside a run span has an exemplar"
        for trace_id, span_id in point.exemplars:
            assert (trace_id, span_id) in {(s.trace_id, s.span_id) for s in runs.values()}
    assert by_model == {"m-small": RUNS, "m-large": RUNS}


def check_logs(logs: list[LogView], runs: dict[str, SpanView]) -> None:
    """One record per run, each carrying its run span's trace and span id."""
    assert len(logs) == TOTAL, logs
    assert Counter(log.attributes["nodeid"] for log in logs) == Counter({nodeid: 1 for nodeid in runs})
    for log in logs:
        run = runs[log.attributes["nodeid"]]
        assert (log.trace_id, log.span_id) == (run.trace_id, run.span_id)
        assert log.event_name == "gen_ai.client.inference.operation.details"
        assert log.body == {"answer": "yes"}
        assert log.resource.get("service.name") == "pytest-probability"
        assert log.scope_name == "genai.instrumentation"


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_instrumentation_metrics_and_log_records_arrive_once(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, receiver: OtlpReceiver, xdist: list[str]
) -> None:
    pytester.makepyfile(bench_genai=BENCH)
    pytester.makeconftest(PROBE)
    export_to(monkeypatch, receiver)
    result = run(pytester, *xdist, "--prob-otel-file=otlp.jsonl")
    assert result.ret == 0, result.stdout.str()
    assert "OpenTelemetry" not in result.stdout.str(), result.stdout.str()  # no failure, no spill

    runs = run_spans(receiver.spans())
    workers = 2 if xdist else 0
    check_histogram(receiver.points(), runs, workers)
    check_logs(receiver.logs(), runs)

    # The OTLP file holds the same, with logs lines of its own.
    lines = list(otlp_json.read_file(pytester.path / "otlp.jsonl"))
    assert {kind for kind, _ in lines} == {"traces", "metrics", "logs"}
    file_runs = run_spans(flatten_spans(lines))
    assert file_runs.keys() == runs.keys()
    check_histogram(flatten_metrics(lines), file_runs, workers)
    check_logs(flatten_logs(lines), file_runs)

    if xdist:  # the workers made the records and points, and shipped them: none loaded an exporter
        workers = sorted(pytester.path.glob("modules-worker-*.json"))
        assert len(workers) == 2
        for path in workers:
            assert json.loads(path.read_text()) == [], f"{path.name}: a worker loaded an exporter"


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_the_users_own_providers_keep_their_signals(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, otlp_http_receiver: OtlpReceiver, xdist: list[str]
) -> None:
    pytester.makepyfile(bench_genai=BENCH)
    pytester.makeconftest(USER_PROVIDERS)
    export_to(monkeypatch, otlp_http_receiver)
    result = run(pytester, *xdist, "--prob-otel-file=otlp.jsonl")
    assert result.ret == 0, result.stdout.str()

    run_spans(otlp_http_receiver.spans())  # the spans still go the plugin's way
    assert [p for p in otlp_http_receiver.points() if p.name == HISTOGRAM] == []
    assert otlp_http_receiver.logs() == []
    lines = list(otlp_json.read_file(pytester.path / "otlp.jsonl"))
    assert [p for p in flatten_metrics(lines) if p.name == HISTOGRAM] == []
    assert flatten_logs(lines) == []
    assert "logs" not in {kind for kind, _ in lines}
    # The user's providers got everything, in the processes that ran the benchmarks.
    seen = [json.loads(path.read_text()) for path in pytester.path.glob("user-*.json")]
    assert sum(s["measurements"] for s in seen) == TOTAL
    assert sum(s["logs"] for s in seen) == TOTAL


#: Each run notes whether the OTLP log exporter is loaded, and the non-propagating loggers that pytest's
#: log capture attaches to and detaches from in every phase; ``EMIT`` set, each run emits a log record.
PROBE_LOGS = """
import json, logging, os, sys

from opentelemetry import _logs

EVENTS = _logs.get_logger("genai.instrumentation")
EXPORTERS = ("opentelemetry.exporter.otlp.proto.http._log_exporter",
             "opentelemetry.exporter.otlp.proto.grpc._log_exporter")


def bench_probe(request):
    quiet = sorted(name for name, logger in logging.Logger.manager.loggerDict.items()
                   if isinstance(logger, logging.Logger) and not logger.propagate)
    with open("seen.jsonl", "a") as handle:
        handle.write(json.dumps({"loaded": [m for m in EXPORTERS if m in sys.modules], "quiet": quiet}) + "\\n")
    if os.environ.get("EMIT"):
        EVENTS.emit(event_name="probe", body="a record", attributes={"nodeid": request.node.nodeid})
"""


@pytest.mark.parametrize("emit", [False, True], ids=["no-records", "records"])
def test_the_log_exporter_is_made_only_for_log_records_and_its_warnings_are_noted(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, receiver: OtlpReceiver, emit: bool
) -> None:
    """Issue 24: the OTLP log exporter's module makes a non-propagating logger, which pytest's log capture
    walks twice a phase in every run. A session without log records never loads it while it runs; the
    first batch of records makes it, on the export thread. Either way what the SDK says of the logs'
    configuration (here a malformed ``OTEL_EXPORTER_OTLP_LOGS_HEADERS``) is a note, once."""
    pytester.makepyfile(bench_probe=PROBE_LOGS)
    export_to(monkeypatch, receiver)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_LOGS_HEADERS", "not-a-header")
    if emit:
        monkeypatch.setenv("EMIT", "1")
    else:
        monkeypatch.delenv("EMIT", raising=False)
    result = run(pytester, "--prob-otel-timeout=10")
    assert result.ret == 0, result.stdout.str()
    notes = [line.strip() for line in result.outlines if "OpenTelemetry" in line]
    assert len(notes) == 1, notes
    assert notes[0].startswith("OpenTelemetry: logs: Header format invalid!"), notes
    assert "not-a-header" not in result.stdout.str()  # a header's text may be a secret
    seen = [json.loads(line) for line in (pytester.path / "seen.jsonl").read_text().splitlines()]
    assert len(seen) == RUNS
    assert len(receiver.spans()) == RUNS + 1
    if emit:
        assert len(receiver.logs()) == RUNS
    else:
        assert receiver.logs() == []
        for run_seen in seen:
            assert run_seen["loaded"] == [], run_seen
            quiet = [name for name in run_seen["quiet"] if name.startswith("opentelemetry")]
            # The SDK's gRPC exporters share a module that imports the SDK's log export (and its logger).
            assert quiet == (
                [] if receiver.protocol == "http" else ["opentelemetry.sdk._logs._internal.export.propagate.false"]
            )


@pytest.mark.parametrize("protocol", ["http", "grpc"])
@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_log_records_spilled_with_the_endpoint_down_and_replayed(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, protocol: str, xdist: list[str]
) -> None:
    pytester.makepyfile(bench_genai=BENCH)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{closed_port()}")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc" if protocol == "grpc" else "http/protobuf")
    result = run(pytester, *xdist, "--prob-otel-spill=spill.jsonl", "--prob-otel-timeout=5")
    assert result.ret == 0, result.stdout.str()
    out = result.stdout.str()
    assert "export of logs to" in out, out
    assert f"metric points and {TOTAL} log records kept in" in out, out
    spill = pytester.path / "spill.jsonl"
    kinds = Counter(kind for kind, _ in otlp_json.read_file(spill))
    assert kinds["logs"] >= 1 and kinds["traces"] >= 1 and kinds["metrics"] >= 1

    with OtlpReceiver(protocol) as rx:
        done = subprocess.run(
            [sys.executable, "-m", "pytest_probability.otel", "replay", str(spill), "--endpoint", rx.endpoint,
             "--protocol", "grpc" if protocol == "grpc" else "http/protobuf"],
            capture_output=True, text=True, timeout=120, cwd=pytester.path,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert f"{kinds['logs']} log requests" in done.stdout, done.stdout
        runs = run_spans(rx.spans())
        check_logs(rx.logs(), runs)
        check_histogram(rx.points(), runs, 2 if xdist else 0)
