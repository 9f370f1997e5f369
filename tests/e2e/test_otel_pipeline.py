"""End to end: one pipeline for every span, the SDK's variables, per-signal breakers, exemplars.

Sessions run pytest in a subprocess against real OTLP receivers on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from otlp_receiver import OtlpReceiver, SpanView, flatten_spans
from sessions import closed_port, export_to, otel_lines
from sessions import session as run

from pytest_probability.otel import otlp_json

pytestmark = pytest.mark.usefixtures("clean_env")


# -- the user's spans ---------------------------------------------------------------------

INSTRUMENTED_CONFTEST = """
import http.server
import threading

from opentelemetry.instrumentation.requests import RequestsInstrumentor


class Ok(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


SERVER = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Ok)
threading.Thread(target=SERVER.serve_forever, daemon=True).start()
RequestsInstrumentor().instrument()  # before any tracer provider exists
"""

INSTRUMENTED_BENCH = """
import requests
from opentelemetry import trace

from conftest import SERVER

TRACER = trace.get_tracer("bench.model")  # at import: a proxy tracer


def bench_calls_a_model():
    with TRACER.start_as_current_span("model.call"):
        response = requests.get(f"http://127.0.0.1:{SERVER.server_address[1]}/v1/complete", timeout=5)
    assert response.text == "ok"
"""


def check_children(spans: list[SpanView], runs: int) -> None:
    """Each run span has its model.call child, whose child is the instrumented GET; one trace, one resource."""
    session = [s for s in spans if s.name == "probability.session"]
    run_spans = {s.span_id: s for s in spans if s.name.startswith("probability.run ")}
    calls = {s.span_id: s for s in spans if s.name == "model.call"}
    gets = [s for s in spans if s.name == "GET"]
    assert len(session) == 1 and len(run_spans) == len(calls) == len(gets) == runs, Counter(s.name for s in spans)
    assert {s.trace_id for s in spans} == {session[0].trace_id}
    assert {c.parent_span_id for c in calls.values()} == set(run_spans)
    assert {g.parent_span_id for g in gets} == set(calls)
    assert {c.scope_name for c in calls.values()} == {"bench.model"}
    assert {g.scope_name for g in gets} == {"opentelemetry.instrumentation.requests"}
    assert all(g.attributes.get("http.response.status_code", g.attributes.get("http.status_code")) == 200 for g in gets)
    resources = {json.dumps(s.resource, sort_keys=True) for s in spans}
    assert len(resources) == 1 and json.loads(resources.pop())["service.name"] == "pytest-probability"


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_instrumented_http_calls_are_children_of_their_run_everywhere(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, otlp_http_receiver: OtlpReceiver, xdist: list[str]
) -> None:
    pytester.makeconftest(INSTRUMENTED_CONFTEST)
    pytester.makepyfile(bench_model=INSTRUMENTED_BENCH)
    export_to(monkeypatch, otlp_http_receiver)
    result = run(pytester, *xdist, "--prob-runs=4", "--prob-otel-file=otel.jsonl", "--prob-otel-timeout=5")
    assert result.ret == 0, result.stdout.str()
    assert otel_lines(result) == []
    # The endpoint: the plugin's own export requests made no spans (instrumentation suppressed).
    check_children(otlp_http_receiver.spans(), 4)
    check_children(flatten_spans(list(otlp_json.read_file(pytester.path / "otel.jsonl"))), 4)


def test_instrumented_spans_are_spilled_and_replayed_with_their_run(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(INSTRUMENTED_CONFTEST)
    pytester.makepyfile(bench_model=INSTRUMENTED_BENCH)
    result = run(
        pytester, "--prob-runs=2", f"--prob-otel-endpoint=http://127.0.0.1:{closed_port()}", "--prob-otel-timeout=2"
    )
    assert result.ret == 0
    (spill,) = (pytester.path / ".pytest-probability").glob("otel-spill-*.jsonl")
    check_children(flatten_spans(list(otlp_json.read_file(spill))), 2)
    with OtlpReceiver("grpc") as rx:
        done = subprocess.run(
            [sys.executable, "-m", "pytest_probability.otel", "replay", str(spill), "--endpoint", rx.endpoint, "--protocol", "grpc"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        check_children(rx.spans(), 2)


# -- partial success, per-signal breakers --------------------------------------------------------


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_partial_success_is_counted_never_spilled(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, protocol: str
) -> None:
    """A partial success rejecting one item used to open the breaker, spill everything and drop the metrics."""
    pytester.makepyfile(bench_ok="def bench_ok():\n    pass\n")
    with OtlpReceiver(protocol, mode="partial") as rx:
        export_to(monkeypatch, rx)
        result = run(pytester, "--prob-runs=4")
        assert result.ret == 0
        assert len(rx.spans()) == 5 and rx.count("metrics") == 1
    lines = otel_lines(result)
    assert any("rejected 1 spans" in line and "rejected by test receiver" in line for line in lines), lines
    assert any("rejected 1 metric points" in line for line in lines), lines
    assert not [line for line in lines if "failed" in line or "kept in" in line]
    assert not (pytester.path / ".pytest-probability").exists()


def test_a_dead_traces_endpoint_does_not_stop_the_metrics(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, otlp_http_receiver: OtlpReceiver
) -> None:
    pytester.makepyfile(bench_ok="def bench_ok():\n    pass\n")
    dead = f"http://127.0.0.1:{closed_port()}/v1/traces"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", dead)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", otlp_http_receiver.endpoint + "/v1/metrics")
    result = run(pytester, "--prob-runs=3", "--prob-otel-timeout=3")
    assert result.ret == 0
    assert otlp_http_receiver.count("metrics") == 1
    runs = [p for p in otlp_http_receiver.points() if p.name == "probability.runs"]
    assert {p.attributes["probability.outcome"]: p.value for p in runs}["pass"] == 3
    lines = otel_lines(result)
    failed = [line for line in lines if "failed" in line]
    assert len(failed) == 1 and "export of traces to " + dead in failed[0], lines
    (spill,) = (pytester.path / ".pytest-probability").glob("otel-spill-*.jsonl")
    decoded = list(otlp_json.read_file(spill))
    assert {kind for kind, _ in decoded} == {"traces"} and len(flatten_spans(decoded)) == 4


def test_a_traces_endpoint_alone_sends_no_metrics_to_localhost(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, otlp_http_receiver: OtlpReceiver
) -> None:
    pytester.makepyfile(bench_ok="def bench_ok():\n    pass\n")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", otlp_http_receiver.endpoint + "/v1/traces")
    result = run(pytester, "--prob-runs=2")
    assert result.ret == 0
    assert len(otlp_http_receiver.spans()) == 3 and otlp_http_receiver.count("metrics") == 0
    lines = otel_lines(result)
    assert len(lines) == 1 and "metrics are not sent" in lines[0], lines


# -- the SDK's variables ----------------------------------------------------------------------


@pytest.mark.parametrize("signal", ["TRACES", "METRICS"])
def test_exporter_none_turns_that_signal_off(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, otlp_http_receiver: OtlpReceiver, signal: str
) -> None:
    pytester.makepyfile(bench_ok="def bench_ok():\n    pass\n")
    export_to(monkeypatch, otlp_http_receiver)
    monkeypatch.setenv(f"OTEL_{signal}_EXPORTER", "none")
    result = run(pytester, "--prob-runs=2")
    assert result.ret == 0 and otel_lines(result) == []
    if signal == "TRACES":
        assert otlp_http_receiver.count("traces") == 0 and otlp_http_receiver.count("metrics") == 1
    else:
        assert len(otlp_http_receiver.spans()) == 3 and otlp_http_receiver.count("metrics") == 0


@pytest.mark.parametrize(("preference", "expected"), [("delta", "delta"), ("lowmemory", "delta"), ("", "cumulative")])
def test_temporality_preference_is_honoured(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    otlp_grpc_receiver: OtlpReceiver,
    preference: str,
    expected: str,
) -> None:
    pytester.makepyfile(bench_ok="def bench_ok():\n    pass\n")
    export_to(monkeypatch, otlp_grpc_receiver)
    if preference:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", preference)
    assert run(pytester, "--prob-runs=2").ret == 0
    points = otlp_grpc_receiver.points()
    kinds = {p.temporality for p in points if p.name in ("probability.runs", "probability.run.duration")}
    assert kinds == {expected}


def test_sampler_drops_spans_but_the_metrics_count_every_run(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, otlp_http_receiver: OtlpReceiver
) -> None:
    pytester.makepyfile(bench_ok="def bench_ok():\n    pass\n")
    export_to(monkeypatch, otlp_http_receiver)
    monkeypatch.setenv("OTEL_TRACES_SAMPLER", "always_off")
    result = run(pytester, "--prob-runs=3", "--prob-json=report.json")
    assert result.ret == 0
    assert otlp_http_receiver.spans() == []
    runs = [p for p in otlp_http_receiver.points() if p.name == "probability.runs"]
    assert {p.attributes["probability.outcome"]: p.value for p in runs}["pass"] == 3
    records = json.loads((pytester.path / "report.json").read_text())["records"]
    assert {r["span_id"] for r in records} == {None}  # no id of a span that was never exported


def test_batch_size_variable_is_honoured(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, otlp_http_receiver: OtlpReceiver
) -> None:
    pytester.makepyfile(bench_ok="import time\n\ndef bench_ok():\n    time.sleep(0.02)\n")
    export_to(monkeypatch, otlp_http_receiver)
    monkeypatch.setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "2")
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "5000")
    assert run(pytester, "--prob-runs=8").ret == 0
    sizes = [len(flatten_spans([request])) for request in otlp_http_receiver.trace_requests]
    assert sum(sizes) == 9 and max(sizes) <= 2


def test_service_name_and_resource_attributes_win(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, otlp_http_receiver: OtlpReceiver
) -> None:
    pytester.makepyfile(bench_ok="def bench_ok():\n    pass\n")
    export_to(monkeypatch, otlp_http_receiver)
    monkeypatch.setenv("OTEL_SERVICE_NAME", "evals")
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "test.suite.name=theirs,team=llm")
    assert run(pytester, "--prob-suite=ours").ret == 0
    resources = [s.resource for s in otlp_http_receiver.spans()] + [p.resource for p in otlp_http_receiver.points()]
    assert resources and all(
        (r["service.name"], r["test.suite.name"], r["team"]) == ("evals", "theirs", "llm") for r in resources
    )


def test_sdk_disabled_exports_nothing(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, otlp_http_receiver: OtlpReceiver
) -> None:
    pytester.makepyfile(bench_ok="def bench_ok():\n    pass\n")
    export_to(monkeypatch, otlp_http_receiver)
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    assert run(pytester, "--prob-otel-file=otel.jsonl").ret == 0
    assert otlp_http_receiver.counts == {"traces": 0, "metrics": 0, "logs": 0}
    assert not (pytester.path / "otel.jsonl").exists()


# -- a failure is easy to debug ----------------------------------------------------------------


def _exemplars(rx: OtlpReceiver, name: str) -> dict[str, set[str]]:
    """outcome -> span ids of the exemplars on ``name``'s points."""
    found: dict[str, set[str]] = {}
    for request in rx.metrics_requests:
        for resource_metrics in request.resource_metrics:
            for scope in resource_metrics.scope_metrics:
                for metric in scope.metrics:
                    if metric.name != name:
                        continue
                    data = metric.histogram if metric.HasField("histogram") else metric.sum
                    for point in data.data_points:
                        outcome = next(
                            kv.value.string_value for kv in point.attributes if kv.key == "probability.outcome"
                        )
                        ids = {e.span_id.hex() for e in point.exemplars}
                        if ids:
                            found.setdefault(outcome, set()).update(ids)
                        assert all(e.trace_id for e in point.exemplars)
    return found


def test_failed_and_errored_runs_are_exemplars(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, otlp_http_receiver: OtlpReceiver
) -> None:
    pytester.makepyfile(
        bench_mixed="import pytest\n\n@pytest.mark.parametrize('answer', ['yes', 'no', 'boom'])\n"
        "def bench_mixed(answer):\n    if answer == 'boom':\n        raise RuntimeError('boom')\n    assert answer == 'yes'\n"
    )
    export_to(monkeypatch, otlp_http_receiver)
    assert run(pytester, "--prob-runs=3", "--prob-json=report.json").ret == 1
    records = json.loads((pytester.path / "report.json").read_text())["records"]
    by_outcome = {o: {r["span_id"] for r in records if r["outcome"] == o} for o in ("pass", "fail", "error")}
    spans = {s.span_id: s for s in otlp_http_receiver.spans()}
    for name in ("probability.runs", "probability.run.duration"):
        exemplars = _exemplars(otlp_http_receiver, name)
        assert exemplars == {"fail": by_outcome["fail"], "error": by_outcome["error"]}, name
        for ids in exemplars.values():
            assert all(spans[i].status_code == "ERROR" for i in ids)  # each links to an exported, failed span


def test_two_files_with_the_same_case_never_share_a_series(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, otlp_http_receiver: OtlpReceiver
) -> None:
    bench = "import pytest\n\n@pytest.mark.parametrize('c', ['c1'])\ndef bench_x(c):\n    assert {ok}\n"
    for folder, ok in (("a", "True"), ("b", "False")):
        (pytester.path / folder).mkdir()
        (pytester.path / folder / "__init__.py").write_text("")
        (pytester.path / folder / "bench_x.py").write_text(bench.format(ok=ok))
    export_to(monkeypatch, otlp_http_receiver)
    assert run(pytester, "--prob-runs=2").ret == 1
    fractions = {
        p.attributes["test.case.name"]: p.value
        for p in otlp_http_receiver.points()
        if p.name == "probability.case.pass_fraction"
    }
    assert fractions == {"a/bench_x.py::x::c1": 1.0, "b/bench_x.py::x::c1": 0.0}
    keys = [(p.name, json.dumps(p.attributes, sort_keys=True)) for p in otlp_http_receiver.points()]
    assert len(keys) == len(set(keys))
    names = {s.attributes["test.case.name"] for s in otlp_http_receiver.spans() if "test.case.name" in s.attributes}
    assert names == {"a/bench_x.py::x::c1", "b/bench_x.py::x::c1"}


# -- the OTLP file ---------------------------------------------------------------------------------


def test_two_sessions_writing_one_file_keep_every_line_whole(pytester: pytest.Pytester, tmp_path: Path) -> None:
    """Issue 12, item 15: two sessions on one --prob-otel-file produced corrupt lines and no warning."""
    pytester.makepyfile(bench_slow="import time\n\ndef bench_slow():\n    time.sleep(0.02)\n")
    target = tmp_path / "shared.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(OTEL_BSP_MAX_EXPORT_BATCH_SIZE="1", OTEL_BSP_SCHEDULE_DELAY="1", PYTHONPATH=os.pathsep.join(sys.path))
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", f"--prob-otel-file={target}"]
    first = subprocess.Popen(
        [*command, "--prob-runs=400"],
        cwd=pytester.path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        import time

        deadline = time.monotonic() + 60
        partial = target.with_name(target.name + ".partial")  # the first session's lines, until its end
        while not (partial.exists() and partial.stat().st_size) and time.monotonic() < deadline:
            time.sleep(0.02)  # the first session is writing
        second = subprocess.run(
            [*command, "--prob-runs=40"], cwd=pytester.path, env=env, capture_output=True, text=True, timeout=120
        )
    finally:
        out, _ = first.communicate(timeout=120)
    assert first.returncode == 0 and second.returncode == 0, out + second.stdout
    lines = target.read_text().splitlines()
    decoded = [otlp_json.decode_line(line) for line in lines]  # every line whole
    spans = flatten_spans(decoded)
    sessions = [s for s in spans if s.name == "probability.session"]
    assert len(sessions) == 2 and len(spans) == 401 + 41
    assert len([1 for kind, _ in decoded if kind == "metrics"]) == 2
    assert "another session is writing" in second.stdout + out


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_traceparent_and_tracestate_are_honoured(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, otlp_http_receiver: OtlpReceiver, xdist: list[str]
) -> None:
    pytester.makepyfile(bench_ok="def bench_ok():\n    pass\n")
    export_to(monkeypatch, otlp_http_receiver)
    monkeypatch.setenv("TRACEPARENT", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
    monkeypatch.setenv("TRACESTATE", "vendor=abc")
    assert run(pytester, *xdist, "--prob-runs=3").ret == 0
    states = [
        (span.name, span.trace_state)
        for request in otlp_http_receiver.trace_requests
        for resource_spans in request.resource_spans
        for scope_spans in resource_spans.scope_spans
        for span in scope_spans.spans
    ]
    assert len(states) == 4 and {state for _, state in states} == {"vendor=abc"}, states
    assert {s.trace_id for s in otlp_http_receiver.spans()} == {"4bf92f3577b34da6a3ce929d0e0e4736"}


@pytest.mark.parametrize("how", ["segfault", "sigkill"])
def test_a_session_that_crashes_leaves_the_previous_otlp_file_whole(pytester: pytest.Pytester, how: str) -> None:
    """Issue 23, item 5: the OTLP file was emptied at the session's start, so a session that segfaulted or
    was killed left the user less than they had. The file is now replaced only at the end, as the JSON
    report is; what the crashed session wrote is in PATH.partial."""
    pytester.makepyfile(bench_ok="import time\n\ndef bench_ok():\n    time.sleep(0.01)\n")
    target = pytester.path / "otel.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(OTEL_BSP_MAX_EXPORT_BATCH_SIZE="1", OTEL_BSP_SCHEDULE_DELAY="1", PYTHONPATH=os.pathsep.join(sys.path))
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", f"--prob-otel-file={target}"]
    first = subprocess.run(
        [*command, "--prob-runs=3"], cwd=pytester.path, env=env, capture_output=True, text=True, timeout=120
    )
    assert first.returncode == 0, first.stdout + first.stderr
    previous = target.read_bytes()
    assert len(flatten_spans([otlp_json.decode_line(line) for line in previous.decode().splitlines()])) == 4
    crash = (
        "import ctypes\n\nctypes.string_at(0)\n"
        if how == "segfault"
        else "import os, signal\n\nos.kill(os.getpid(), signal.SIGKILL)\n"
    )
    pytester.makepyfile(
        bench_zcrash=f"import time\n\ndef bench_crash():\n    time.sleep(0.3)  # some spans written first\n    {crash.strip().replace(chr(10), chr(10) + '    ')}\n"
    )
    second = subprocess.run(
        [*command, "--prob-runs=3"], cwd=pytester.path, env=env, capture_output=True, text=True, timeout=120
    )
    assert second.returncode < 0, second.stdout + second.stderr  # killed by the signal
    assert target.read_bytes() == previous
    partial = target.with_name("otel.jsonl.partial")
    assert [s.name for s in flatten_spans(list(otlp_json.read_file(partial)))][:3] == ["probability.run ok"] * 3
    (pytester.path / "bench_zcrash.py").unlink()
    third = subprocess.run(
        [*command, "--prob-runs=2"], cwd=pytester.path, env=env, capture_output=True, text=True, timeout=120
    )
    assert third.returncode == 0, third.stdout + third.stderr
    assert len(flatten_spans(list(otlp_json.read_file(target)))) == 3  # the new session's, in place of the old
    assert not partial.exists()
