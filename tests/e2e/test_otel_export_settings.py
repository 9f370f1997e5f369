"""End to end: the export's settings and what they change, decoded by a real OTLP receiver on 127.0.0.1:
TRACEPARENT (the variable and the option), the OTLP JSON-lines file, ``--prob-otel-capture=ids``, export off,
the stack trace and the attributes' length limit, per-signal protocols and endpoints, TLS. The traces, the
metrics and the resource are in test_otel_export.py.
"""

from __future__ import annotations

import json
import os

import pytest
from export_sessions import BENCH, BENCH_RUNS, assert_one_trace, point_key, session_and_runs
from otlp_receiver import OtlpReceiver, PointView, SpanView, flatten_metrics, flatten_spans
from sessions import export_to, report
from sessions import session as run

from pytest_probability.otel import otlp_json

pytestmark = pytest.mark.usefixtures("clean_env")

# -- TRACEPARENT --------------------------------------------------------------------

PARENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_SPAN = "00f067aa0ba902b7"
OPTION_TRACE = "0af7651916cd43dd8448eb211c80319c"
OPTION_SPAN = "b7ad6b7169203331"


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_traceparent_variable_parents_the_session(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, otlp_http_receiver: OtlpReceiver, xdist: list[str]
) -> None:
    pytester.makepyfile(bench_otel="def bench_ok():\n    pass\n")
    export_to(monkeypatch, otlp_http_receiver)
    monkeypatch.setenv("TRACEPARENT", f"00-{PARENT_TRACE}-{PARENT_SPAN}-01")
    result = run(pytester, *xdist, "--prob-runs=3")
    assert result.ret == 0
    session, runs = assert_one_trace(otlp_http_receiver.spans(), 3)
    assert session.trace_id == PARENT_TRACE
    assert session.parent_span_id == PARENT_SPAN


def test_traceparent_option_wins_over_the_variable(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, otlp_grpc_receiver: OtlpReceiver
) -> None:
    pytester.makepyfile(bench_otel="def bench_ok():\n    pass\n")
    export_to(monkeypatch, otlp_grpc_receiver)
    monkeypatch.setenv("TRACEPARENT", f"00-{PARENT_TRACE}-{PARENT_SPAN}-01")
    result = run(pytester, "--prob-runs=2", f"--prob-otel-traceparent=00-{OPTION_TRACE}-{OPTION_SPAN}-01")
    assert result.ret == 0
    session, _ = assert_one_trace(otlp_grpc_receiver.spans(), 2)
    assert (session.trace_id, session.parent_span_id) == (OPTION_TRACE, OPTION_SPAN)


def test_malformed_traceparent_option_is_a_usage_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, otlp_http_receiver: OtlpReceiver
) -> None:
    pytester.makepyfile(bench_otel="def bench_ok():\n    open('ran.txt', 'w').close()\n")
    export_to(monkeypatch, otlp_http_receiver)
    result = run(pytester, f"--prob-otel-traceparent=00-{OPTION_TRACE}-nothex-01")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--prob-otel-traceparent*malformed traceparent*"])
    assert not (pytester.path / "ran.txt").exists()
    assert otlp_http_receiver.counts == {"traces": 0, "metrics": 0, "logs": 0}


def test_a_bad_export_value_in_the_ini_fails_also_with_export_off(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One ini shared by a repository's jobs: the job without an endpoint fails on the typo too, instead of
    # passing until the night export is turned on.
    for name in [n for n in os.environ if n.startswith("OTEL_")]:
        monkeypatch.delenv(name)
    pytester.makepyfile(bench_otel="def bench_ok():\n    open('ran.txt', 'w').close()\n")
    pytester.makeini("[pytest]\nprob_otel_timeout = 10s\n")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ini prob_otel_timeout must be a number of seconds, got '10s'*"])
    assert not (pytester.path / "ran.txt").exists()
    pytester.makeini("[pytest]\nprob_otel_timeout = 10\n")
    assert run(pytester).ret == 0 and (pytester.path / "ran.txt").exists()


def test_malformed_traceparent_variable_is_ignored_with_a_note(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, otlp_http_receiver: OtlpReceiver
) -> None:
    pytester.makepyfile(bench_otel="def bench_ok():\n    pass\n")
    export_to(monkeypatch, otlp_http_receiver)
    monkeypatch.setenv("TRACEPARENT", "garbage")
    result = run(pytester)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*ignored TRACEPARENT*malformed traceparent*"])
    session, _ = assert_one_trace(otlp_http_receiver.spans(), 1)
    assert session.parent_span_id == ""


# -- the OTLP JSON-lines file -----------------------------------------------------------


def comparable_spans(spans: list[SpanView]) -> dict[str, tuple]:
    return {
        s.span_id: (
            s.name,
            s.trace_id,
            s.parent_span_id,
            s.status_code,
            s.status_message,
            json.dumps(s.attributes, sort_keys=True),
            json.dumps(s.events, sort_keys=True),
            json.dumps(s.resource, sort_keys=True),
            s.start_time_unix_nano,
            s.end_time_unix_nano,
        )
        for s in spans
    }


def comparable_points(points: list[PointView]) -> dict[tuple, tuple]:
    return {
        point_key(p): (
            p.unit,
            p.type,
            p.is_monotonic,
            p.temporality,
            p.value,
            p.count,
            p.sum,
            p.bucket_counts,
            p.explicit_bounds,
            json.dumps(p.resource, sort_keys=True),
        )
        for p in points
    }


def test_file_holds_what_the_endpoint_got(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, otlp_http_receiver: OtlpReceiver
) -> None:
    pytester.makepyfile(bench_otel=BENCH)
    export_to(monkeypatch, otlp_http_receiver)
    result = run(pytester, "--prob-runs=2", "--prob-otel-file=out/otel.jsonl")
    assert result.ret == 1
    decoded = list(otlp_json.read_file(pytester.path / "out" / "otel.jsonl"))
    assert {kind for kind, _ in decoded} == {"traces", "metrics"}
    file_spans = flatten_spans(decoded)
    assert_one_trace(file_spans, BENCH_RUNS)
    assert comparable_spans(file_spans) == comparable_spans(otlp_http_receiver.spans())
    file_points = flatten_metrics(decoded)
    assert len(file_points) == len(otlp_http_receiver.points())
    assert comparable_points(file_points) == comparable_points(otlp_http_receiver.points())


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_file_without_any_endpoint(pytester: pytest.Pytester, xdist: list[str]) -> None:
    pytester.makepyfile(bench_otel=BENCH)
    result = run(pytester, *xdist, "--prob-runs=2", "--prob-otel-file=otel.jsonl", "--prob-json=report.json")
    assert result.ret == 1
    assert "OpenTelemetry" not in result.stdout.str()
    decoded = list(otlp_json.read_file(pytester.path / "otel.jsonl"))
    session, runs = assert_one_trace(flatten_spans(decoded), BENCH_RUNS)
    data = report(pytester)
    assert {r["span_id"] for r in data["records"] + data["skipped_runs"]} == {s.span_id for s in runs}
    points = flatten_metrics(decoded)
    assert len([kind for kind, _ in decoded if kind == "metrics"]) == 1
    runs_total = sum(p.value for p in points if p.name == "probability.runs")
    assert runs_total == BENCH_RUNS
    assert not (pytester.path / ".pytest-probability").exists()  # nothing spilled


#: At the table, how many distinct trace id strings the aggregating process's records hold.
TRACE_OBJECTS = """
def pytest_terminal_summary(terminalreporter, config):
    records = config.pluginmanager.get_plugin("probability-role").intake.records
    with open("trace-ids.txt", "w") as handle:
        handle.write(f"{len(records)} {len({r.trace_id for r in records})} {len({id(r.trace_id) for r in records})}")
"""


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_the_runs_records_share_one_trace_id_string(pytester: pytest.Pytester, xdist: list[str]) -> None:
    """Issue 24, peak RSS: every run span is in the session's trace, and each record kept its own
    32-character text of the trace id for the whole session (81 bytes a run, 1.5 MiB at 20,000 runs);
    the records now share one string, in the serial process and, rebuilt from workers' reports, in
    the controller."""
    pytester.makepyfile(bench_otel="def bench_ok():\n    pass\n")
    pytester.makeconftest(TRACE_OBJECTS)
    result = run(pytester, *xdist, "--prob-runs=6", "--prob-otel-file=otel.jsonl")
    assert result.ret == 0, result.stdout.str()
    records, texts, objects = map(int, (pytester.path / "trace-ids.txt").read_text().split())
    assert (records, texts, objects) == (6, 1, 1)
    (trace_id,) = {span.trace_id for span in flatten_spans(list(otlp_json.read_file(pytester.path / "otel.jsonl")))}
    assert len(trace_id) == 32


# -- capture=ids ----------------------------------------------------------------------

SECRETS = ("PARAM-SECRET-7Q1", "ASSERT-SECRET-8W2", "ERROR-SECRET-9E3", "SKIP-SECRET-0R4", "SOURCE-SECRET-1T5")
SECRET_BENCH = """
import pytest


@pytest.mark.parametrize("value", [pytest.param("PARAM-SECRET-7Q1", id="p1")])
def bench_leaky(value):
    assert value == "SOURCE-SECRET-1T5", "ASSERT-SECRET-8W2"


def bench_error():
    raise ValueError("ERROR-SECRET-9E3")


def bench_skip():
    pytest.skip("SKIP-SECRET-0R4")
"""


@pytest.mark.parametrize("capture", ["all", "ids"])
def test_capture_ids_leaks_nothing(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, otlp_http_receiver: OtlpReceiver, capture: str
) -> None:
    pytester.makepyfile(bench_secret=SECRET_BENCH)
    export_to(monkeypatch, otlp_http_receiver)
    result = run(pytester, "--prob-runs=2", f"--prob-otel-capture={capture}", "--prob-otel-file=otel.jsonl")
    assert result.ret == 1
    raw = b"".join(r.body for r in otlp_http_receiver.received)
    written = (pytester.path / "otel.jsonl").read_bytes()
    spans = otlp_http_receiver.spans()
    session, runs = assert_one_trace(spans, 6)
    leaky = [s for s in runs if s.attributes["probability.benchmark"] == "leaky"]
    if capture == "all":  # the control: the same session does carry every secret
        for secret in SECRETS:
            assert secret.encode() in raw, secret
            assert secret.encode() in written, secret
        return
    for secret in SECRETS:
        assert secret.encode() not in raw, secret
        assert secret.encode() not in written, secret
    assert b"Traceback" not in raw and b"Traceback" not in written
    # Ids are kept: case id, outcome, error type.
    assert {s.attributes["probability.case"] for s in leaky} == {"p1"}
    assert not any(key.startswith("probability.param.") for s in runs for key in s.attributes)
    for span in runs:
        assert "probability.assertion" not in span.attributes
        assert "probability.skip.reason" not in span.attributes
        for name, attrs in span.events:
            assert set(attrs) <= {"exception.type"} if name == "exception" else True
    errors = [s for s in runs if s.attributes["probability.outcome"] in ("fail", "error")]
    assert len(errors) == 4
    assert {s.attributes["error.type"] for s in errors} == {"AssertionError", "ValueError"}
    assert all(s.status_code == "ERROR" for s in errors)


# -- off ------------------------------------------------------------------------------

MODULES_CONFTEST = """
import json, sys

def pytest_sessionfinish(session):
    with open("otel-modules.json", "w") as handle:
        json.dump(sorted(m for m in sys.modules if m == "opentelemetry" or m.startswith("opentelemetry.")), handle)
"""


@pytest.mark.parametrize(
    ("args", "env", "exports"),
    [
        pytest.param([], {}, True, id="control-endpoint-set"),
        pytest.param(["--prob-otel=off"], {}, False, id="option-off"),
        pytest.param(["--prob-otel=on"], {"OTEL_SDK_DISABLED": "TRUE"}, False, id="sdk-disabled-over-on"),
    ],
)
def test_off_sends_nothing(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    otlp_http_receiver: OtlpReceiver,
    args: list[str],
    env: dict[str, str],
    exports: bool,
) -> None:
    pytester.makepyfile(bench_otel="def bench_ok():\n    pass\n\ndef bench_bad():\n    assert False\n")
    pytester.makeconftest(MODULES_CONFTEST)
    export_to(monkeypatch, otlp_http_receiver)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = run(pytester, *args)
    assert result.ret == 1
    modules = json.loads((pytester.path / "otel-modules.json").read_text())
    if exports:
        assert otlp_http_receiver.count("traces") >= 1 and otlp_http_receiver.count("metrics") == 1
        # The control exports, with the SDK's tracer provider and OTLP exporter.
        assert {"opentelemetry.sdk.trace", "opentelemetry.exporter.otlp.proto.http.trace_exporter"} <= set(modules)
    else:
        assert otlp_http_receiver.counts == {"traces": 0, "metrics": 0, "logs": 0}
        assert modules == []
        assert not (pytester.path / ".pytest-probability").exists()


def test_auto_without_endpoint_imports_no_opentelemetry(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(bench_otel="def bench_ok():\n    pass\n")
    pytester.makeconftest(MODULES_CONFTEST)
    result = run(pytester, "--prob-runs=2", "--prob-otel=auto", "--prob-otel-capture=ids", "--prob-otel-timeout=3")
    assert result.ret == 0
    assert json.loads((pytester.path / "otel-modules.json").read_text()) == []
    assert "OpenTelemetry" not in result.stdout.str()
    assert not (pytester.path / ".pytest-probability").exists()


def test_a_session_whose_runs_all_skip_still_sends_its_heartbeat(pytester: pytest.Pytester) -> None:
    """No counted run means no pass fraction; probability.session.runs still says the session happened."""
    from otlp_receiver import flatten_metrics

    from pytest_probability.otel import otlp_json

    pytester.makepyfile(bench_skip="import pytest\n\ndef bench_later():\n    pytest.skip('not today')\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--prob-runs=3", "--prob-otel-file=otel.jsonl")
    assert result.ret == pytest.ExitCode.OK
    points = flatten_metrics(list(otlp_json.read_file(pytester.path / "otel.jsonl")))
    names = {p.name for p in points}
    assert "probability.session.pass_fraction" not in names
    assert [p.value for p in points if p.name == "probability.session.runs"] == [3]
    runs = {p.attributes["probability.outcome"]: p.value for p in points if p.name == "probability.runs"}
    assert runs == {"pass": 0, "fail": 0, "error": 0, "skip": 3}


STACK_BENCH = """
import pytest


def check(answer):
    __tracebackhide__ = True
    assert answer == "yes", f"wanted yes, got {answer}"


def helper(answer):
    return deep(answer)


def deep(answer):
    raise ValueError(f"bad answer {answer}")


@pytest.fixture
def broken():
    raise RuntimeError("fixture broke")


@pytest.mark.parametrize("answer", ["no"])
def bench_assert(answer):
    check(answer)


def bench_nested():
    try:
        helper("maybe")
    except ValueError as exc:
        raise KeyError("wrapped") from exc


def bench_setup(broken):
    pass
"""

STACK_CONFTEST = """
import json

import pytest


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if call.excinfo is not None and call.when in ("setup", "call"):  # pytest's short report, whole traceback
        with open("reference.jsonl", "a") as handle:
            handle.write(json.dumps([item.nodeid, str(item._repr_failure_py(call.excinfo, style="short"))]) + "\\n")
    return report
"""


@pytest.mark.parametrize("tbstyle", ["auto", "short"])
def test_the_stacktrace_is_pytests_short_report_of_the_whole_traceback(pytester: pytest.Pytester, tbstyle: str) -> None:
    """A failed run's ``exception.stacktrace`` is what ``item._repr_failure_py(excinfo, style="short")`` gives
    on the whole traceback (the plugin hands it one cut above the benchmark's frame, for speed): a hidden
    frame, a nested call with a chained exception, and a setup error."""
    pytester.makepyfile(bench_stack=STACK_BENCH)
    pytester.makeconftest(STACK_CONFTEST)
    result = run(pytester, "--prob-runs=2", "--prob-otel-file=otel.jsonl", f"--tb={tbstyle}")
    assert result.ret == 1
    reference = dict(json.loads(line) for line in (pytester.path / "reference.jsonl").read_text().splitlines())
    spans = flatten_spans(otlp_json.read_file(pytester.path / "otel.jsonl"))
    got = {}
    for span in spans:
        for name, attributes in span.events:
            if name == "exception":
                got[span.attributes["pytest.nodeid"]] = attributes["exception.stacktrace"]
    assert set(got) == set(reference) and len(got) == 6
    assert got == reference
    nested = got["bench_stack.py::bench_nested::run1"]
    assert "deep" in nested and "ValueError: bad answer maybe" in nested and "KeyError" in nested
    assert "pluggy" not in nested and "_pytest" not in nested
    assert "check(answer)" in got["bench_stack.py::bench_assert::no[run1]"]
    assert "fixture broke" in got["bench_stack.py::bench_setup::run2"]


def test_attribute_values_are_truncated_to_the_sdk_limit(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT applies to run spans (parameters, messages, stack traces)."""
    from otlp_receiver import flatten_spans

    from pytest_probability.otel import otlp_json

    monkeypatch.setenv("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", "12")
    pytester.makepyfile(
        bench_long=(
            "import pytest\n\n"
            "@pytest.mark.parametrize('text', [pytest.param('x' * 100, id='long')])\n"
            "def bench_echo(text):\n"
            "    assert text == 'y', 'a rather long assertion message ' * 5\n"
        )
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--prob-otel-file=otel.jsonl", "--prob-suite=" + "s" * 40
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    spans = flatten_spans(list(otlp_json.read_file(pytester.path / "otel.jsonl")))
    run = next(s for s in spans if s.name.startswith("probability.run"))
    session = next(s for s in spans if s.name == "probability.session")
    assert session.attributes["test.suite.name"] == "s" * 12
    assert session.attributes["test.suite.run.status"] == "failure"[:12]
    assert run.attributes["probability.param.text"] == "x" * 12
    assert len(run.attributes["probability.assertion"]) == 12
    # Names and ids are short enough to stay whole.
    assert run.attributes["probability.case"] == "long"


def test_traces_and_metrics_may_use_different_protocols_and_endpoints(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    otlp_http_receiver: OtlpReceiver,
    otlp_grpc_receiver: OtlpReceiver,
) -> None:
    """OTEL_EXPORTER_OTLP_<SIGNAL>_{ENDPOINT,PROTOCOL}: traces over HTTP, metrics over gRPC."""
    pytester.makepyfile(bench_otel="def bench_ok():\n    pass\n")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", otlp_http_receiver.endpoint + "/v1/traces")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", otlp_grpc_receiver.endpoint)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "grpc")
    result = run(pytester, "--prob-runs=3")
    assert result.ret == 0, result.stdout.str()
    assert otlp_http_receiver.counts == {"traces": 1, "metrics": 0, "logs": 0}
    assert otlp_grpc_receiver.counts == {"traces": 0, "metrics": 1, "logs": 0}
    session_and_runs(otlp_http_receiver.spans())
    runs = [p for p in otlp_grpc_receiver.points() if p.name == "probability.runs"]
    assert {p.attributes["probability.outcome"]: p.value for p in runs}["pass"] == 3


@pytest.mark.parametrize("protocol", ["http/protobuf", "grpc"])
def test_export_over_tls_trusts_the_configured_certificate(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, certs: dict[str, str], protocol: str
) -> None:
    """OTEL_EXPORTER_OTLP_CERTIFICATE: a private CA; without it the same session spills instead."""
    pytester.makepyfile(bench_otel="def bench_ok():\n    pass\n")
    kind = "grpc" if protocol == "grpc" else "http"
    with OtlpReceiver(kind, tls=(certs["server.pem"], certs["server.key"])) as rx:
        assert rx.endpoint.startswith("https://")
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rx.endpoint)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", certs["other-ca.pem"])
        untrusted = run(pytester, "--prob-runs=2", "--prob-otel-timeout=5")
        assert untrusted.ret == 0
        untrusted.stdout.fnmatch_lines(["*OpenTelemetry: export of traces to https://127.0.0.1:* failed (*"])
        line = next(line for line in untrusted.outlines if "export of traces" in line).lower()
        assert "certificate" in line or "handshake" in line, line
        assert rx.spans() == []
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", certs["ca.pem"])
        trusted = run(pytester, "--prob-runs=2")
        assert trusted.ret == 0
        assert "OpenTelemetry" not in trusted.stdout.str()
        session_and_runs(rx.spans())
        assert len(rx.spans()) == 3 and rx.count("metrics") == 1


@pytest.mark.parametrize(
    ("protocol", "variables", "note"),
    [
        (
            "http/protobuf",
            {"OTEL_EXPORTER_OTLP_CERTIFICATE": "ca.pem", "OTEL_EXPORTER_OTLP_CLIENT_KEY": "client.key"},
            "OTEL_EXPORTER_OTLP_CLIENT_KEY is set without a client certificate "
            "(OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE); the key is not used and no client certificate is sent",
        ),
        (
            "grpc",
            {"OTEL_EXPORTER_OTLP_CERTIFICATE": "ca.pem", "OTEL_EXPORTER_OTLP_CLIENT_KEY": "client.key"},
            "OTEL_EXPORTER_OTLP_CLIENT_KEY is set without OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE; "
            "no client certificate is sent",
        ),
        (
            "grpc",
            {"OTEL_EXPORTER_OTLP_CLIENT_KEY": "client.key", "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": "client.pem"},
            "OTEL_EXPORTER_OTLP_CLIENT_KEY and OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE apply over gRPC only beside a CA "
            "certificate (OTEL_EXPORTER_OTLP_CERTIFICATE); no client certificate is sent",
        ),
    ],
    ids=["http-key-alone", "grpc-key-alone", "grpc-pair-without-ca"],
)
def test_a_client_key_the_exporter_does_not_use_gets_a_note(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    certs: dict[str, str],
    protocol: str,
    variables: dict[str, str],
    note: str,
) -> None:
    """Issue 23, item 10: OTEL_EXPORTER_OTLP_CLIENT_KEY without a client certificate was ignored without a
    word, and an mTLS endpoint then refused the handshake with nothing to say why."""
    pytester.makepyfile(bench_otel="def bench_ok():\n    pass\n")
    kind = "grpc" if protocol == "grpc" else "http"
    with OtlpReceiver(kind, tls=(certs["server.pem"], certs["server.key"]), tls_client_ca=certs["ca.pem"]) as rx:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rx.endpoint)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", certs["ca.pem"])
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_CLIENT_KEY", certs["client.key"])
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", certs["client.pem"])
        mutual = run(pytester, "--prob-runs=2", "--prob-otel-timeout=5")  # the whole pair: mTLS works
        assert mutual.ret == 0 and "OpenTelemetry" not in mutual.stdout.str(), mutual.stdout.str()
        assert len(rx.spans()) == 3
        rx.clear()
        for name in (
            "OTEL_EXPORTER_OTLP_CERTIFICATE",
            "OTEL_EXPORTER_OTLP_CLIENT_KEY",
            "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE",
        ):
            monkeypatch.delenv(name)
        for name, file in variables.items():
            monkeypatch.setenv(name, certs[file])
        result = run(pytester, "--prob-runs=2", "--prob-otel-timeout=5")
        assert result.ret == 0
        assert rx.spans() == []  # the endpoint wants a client certificate
    lines = [line.strip() for line in result.outlines if "OpenTelemetry" in line]
    assert any(
        line.startswith("OpenTelemetry: traces, metrics and logs: ") and line.endswith(note) for line in lines
    ), lines
    assert any("export of traces to https://127.0.0.1:" in line for line in lines), lines
