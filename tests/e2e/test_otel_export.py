"""End to end: what the real OTLP exporter sends, decoded by a real receiver.

Every session runs pytest in a subprocess (OpenTelemetry and xdist keep
process state) against ``OtlpReceiver`` on 127.0.0.1; the assertions are on
the decoded protobuf the plugin's exporter put on the wire, on the OTLP
JSON-lines file, and on the ``--prob-json`` report of the same session.

This file: the traces, the metrics and the resource; the export's settings (TRACEPARENT, the JSON-lines
file, capture, off, protocols, TLS, the attributes' limits) are in test_otel_export_settings.py.
"""

from __future__ import annotations

import json
import subprocess
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from export_sessions import BENCH, BENCH_RUNS, assert_one_trace, by_nodeid, first_lineno, point_key
from otlp_receiver import OtlpReceiver, PointView, SpanView
from sessions import export_to, report
from sessions import session as run

pytestmark = pytest.mark.usefixtures("clean_env")

RUN_SPAN_KEYS = {
    "test.case.name",
    "test.case.result.status",
    "probability.benchmark",
    "probability.case",
    "probability.run",
    "probability.outcome",
    "pytest.nodeid",
    "code.function.name",
    "code.file.path",
    "code.line.number",
}
USAGE_KEYS = {
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.cache_read.input_tokens",
    "probability.cost",
}
DURATION_BOUNDS = [0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0]
INSTRUMENTS = {
    # name: (unit, type, monotonic)
    "probability.runs": ("{run}", "sum", True),
    "probability.case.pass_fraction": ("1", "gauge", None),
    "probability.session.pass_fraction": ("1", "gauge", None),
    "probability.session.runs": ("{run}", "sum", True),
    "probability.cost": ("{USD}", "sum", True),
    "probability.tokens": ("{token}", "sum", True),
    "probability.tokens.cache_read": ("{token}", "sum", True),
    "probability.run.duration": ("s", "histogram", None),
}


# -- traces -----------------------------------------------------------------------


def test_run_spans_attributes_events_and_statuses(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, receiver: OtlpReceiver
) -> None:
    pytester.makepyfile(bench_otel=BENCH)
    export_to(monkeypatch, receiver)
    result = run(pytester, "--prob-runs=2", "--prob-json=report.json")
    assert result.ret == 1
    assert "OpenTelemetry" not in result.stdout.str()

    session, runs = assert_one_trace(receiver.spans(), BENCH_RUNS)
    assert session.parent_span_id == ""
    assert session.attributes["test.suite.name"] == pytester.path.name
    assert session.attributes["test.suite.run.status"] == "failure"
    assert session.attributes["probability.runs"] == BENCH_RUNS
    assert session.status_code == "ERROR"
    nodes = by_nodeid(runs)
    assert len(nodes) == BENCH_RUNS

    # Every record of the JSON report points at its exported span.
    data = report(pytester)
    records = data["records"] + data["skipped_runs"]
    assert {(r["nodeid"], r["trace_id"], r["span_id"]) for r in records} == {
        (s.attributes["pytest.nodeid"], s.trace_id, s.span_id) for s in runs
    }

    bench_file = pytester.path / "bench_otel.py"

    def location(span: SpanView, function: str) -> None:
        assert span.attributes["code.function.name"] == f"bench_otel.{function}"  # module-qualified (semconv)
        assert Path(pytester.path, span.attributes["code.file.path"]).resolve() == bench_file.resolve()
        assert span.attributes["code.line.number"] == first_lineno(bench_file.read_text(), function)

    # A passing run with one model: exactly the attributes.
    terse = nodes["bench_otel.py::bench_classify::terse[run2]"]
    assert terse.name == "probability.run classify::terse"
    location(terse, "bench_classify")
    assert terse.attributes == {
        "test.case.name": "bench_otel.py::classify::terse",
        "test.case.result.status": "pass",
        "probability.benchmark": "classify",
        "probability.case": "terse",
        "probability.run": 2,
        "probability.outcome": "pass",
        "probability.param.prompt": "terse",
        "pytest.nodeid": "bench_otel.py::bench_classify::terse[run2]",
        "code.function.name": "bench_otel.bench_classify",
        "code.file.path": terse.attributes["code.file.path"],
        "code.line.number": first_lineno(bench_file.read_text(), "bench_classify"),
        "gen_ai.usage.input_tokens": 110,
        "gen_ai.usage.output_tokens": 22,
        "gen_ai.usage.cache_read.input_tokens": 5,
        "gen_ai.request.model": "m-small",
        "probability.cost": pytest.approx(0.375),
    }
    assert isinstance(terse.attributes["probability.run"], int)
    assert terse.status_code == "UNSET"
    assert [name for name, _ in terse.events] == ["probability.usage", "probability.usage"]
    assert [attrs for _, attrs in terse.events] == [
        {
            "gen_ai.request.model": "m-small",
            "gen_ai.usage.input_tokens": 100,
            "gen_ai.usage.output_tokens": 20,
            "gen_ai.usage.cache_read.input_tokens": 5,
            "probability.cost": 0.25,
        },
        {
            "gen_ai.request.model": "m-small",
            "gen_ai.usage.input_tokens": 10,
            "gen_ai.usage.output_tokens": 2,
            "gen_ai.usage.cache_read.input_tokens": 0,
            "probability.cost": 0.125,
        },
    ]

    # A failed run: ERROR, exception event, error.type, the assertion message.
    cot = nodes["bench_otel.py::bench_classify::cot[run1]"]
    assert set(cot.attributes) == RUN_SPAN_KEYS | USAGE_KEYS | {
        "probability.param.prompt",
        "gen_ai.request.model",
        "error.type",
        "probability.assertion",
    }
    assert cot.attributes["probability.outcome"] == "fail"
    assert cot.attributes["test.case.result.status"] == "fail"
    assert cot.attributes["probability.run"] == 1
    assert cot.attributes["error.type"] == "AssertionError"
    assert cot.attributes["probability.assertion"].startswith("wanted terse, got cot")
    assert cot.status_code == "ERROR"
    assert "wanted terse, got cot" in cot.status_message
    exceptions = [attrs for name, attrs in cot.events if name == "exception"]
    assert len(exceptions) == 1
    assert exceptions[0]["exception.type"] == "AssertionError"
    assert exceptions[0]["exception.message"].startswith("wanted terse, got cot")
    stack = exceptions[0]["exception.stacktrace"]
    # pytest's own short report: the benchmark's frame and the message, no pluggy frames.
    assert "bench_otel.py" in stack and 'assert prompt == "terse"' in stack
    assert "E   AssertionError: wanted terse, got cot" in stack
    assert "pluggy" not in stack and "_pytest" not in stack
    assert [name for name, _ in cot.events].count("probability.usage") == 2

    # Two models: tokens summed, no single model named.
    two = nodes["bench_otel.py::bench_two_models::run1"]
    location(two, "bench_two_models")
    assert "gen_ai.request.model" not in two.attributes
    assert two.attributes["gen_ai.usage.input_tokens"] == 4
    assert two.attributes["gen_ai.usage.output_tokens"] == 5
    assert two.attributes["gen_ai.usage.cache_read.input_tokens"] == 2
    assert two.attributes["probability.cost"] == pytest.approx(1.5)
    assert [attrs["gen_ai.request.model"] for name, attrs in two.events if name == "probability.usage"] == [
        "m-small",
        "m-large",
    ]

    cost_only = nodes["bench_otel.py::bench_cost_only::run1"]
    assert cost_only.attributes["probability.cost"] == pytest.approx(0.75)
    assert not USAGE_KEYS - {"probability.cost"} & set(cost_only.attributes)
    assert cost_only.events == []

    # Errored in the call and in setup: ERROR, exception event, error.type, no assertion.
    broken = nodes["bench_otel.py::bench_broken::run2"]
    assert set(broken.attributes) == RUN_SPAN_KEYS | {"error.type"}
    assert broken.attributes["probability.outcome"] == "error"
    assert broken.attributes["test.case.result.status"] == "fail"
    assert broken.attributes["probability.case"] == ""
    assert broken.attributes["error.type"] == "KeyError"
    assert broken.status_code == "ERROR"
    assert "no such key" in broken.status_message
    (event,) = [attrs for name, attrs in broken.events if name == "exception"]
    assert event["exception.type"] == "KeyError"
    assert "no such key" in event["exception.message"]
    assert (
        "KeyError" in event["exception.stacktrace"] and 'raise KeyError("no such key")' in event["exception.stacktrace"]
    )

    setup = nodes["bench_otel.py::bench_setup_error::run1"]
    assert setup.attributes["probability.outcome"] == "error"
    assert setup.attributes["error.type"] == "RuntimeError"
    assert "probability.assertion" not in setup.attributes
    assert setup.status_code == "ERROR"
    assert "setup" in setup.status_message
    (event,) = [attrs for name, attrs in setup.events if name == "exception"]
    assert event["exception.type"] == "RuntimeError"
    assert "fixture could not start" in event["exception.message"]
    assert "broken_fixture" in event["exception.stacktrace"]

    skipped = nodes["bench_otel.py::bench_skipped::run1"]
    assert skipped.attributes["probability.outcome"] == "skip"
    assert "test.case.result.status" not in skipped.attributes
    assert skipped.status_code == "UNSET"
    assert not any(name == "exception" for name, _ in skipped.events)

    outcomes = Counter(s.attributes["probability.outcome"] for s in runs)
    assert outcomes == {"pass": 6, "fail": 2, "error": 4, "skip": 2}


def test_xdist_session_is_one_trace_and_workers_never_export(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, otlp_http_receiver: OtlpReceiver
) -> None:
    pytester.makepyfile(bench_otel=BENCH)
    pytester.makeconftest(
        """
        import json, os, sys

        def pytest_sessionfinish(session):
            role = "worker" if hasattr(session.config, "workerinput") else "controller"
            exporting = sorted(m for m in sys.modules
                               if m.startswith(("opentelemetry.exporter.otlp.proto.http", "opentelemetry.exporter.otlp.proto.grpc"))
                               or m == "pytest_probability.otel.export_session")
            with open(f"modules-{role}-{os.getpid()}.json", "w") as handle:
                json.dump(exporting, handle)
        """
    )
    export_to(monkeypatch, otlp_http_receiver)
    result = run(pytester, "-n", "2", "--prob-runs=2", "--prob-json=report.json")
    assert result.ret == 1

    spans = otlp_http_receiver.spans()
    session, runs = assert_one_trace(spans, BENCH_RUNS)
    assert len(by_nodeid(runs)) == BENCH_RUNS
    # Every span came from the controller's exporter: one resource, one metrics request.
    resources = {json.dumps(s.resource, sort_keys=True) for s in spans}
    assert len(resources) == 1
    assert otlp_http_receiver.count("metrics") == 1
    assert len(otlp_http_receiver.trace_requests) == otlp_http_receiver.count("traces")

    workers = sorted(pytester.path.glob("modules-worker-*.json"))
    controllers = sorted(pytester.path.glob("modules-controller-*.json"))
    assert len(workers) == 2 and len(controllers) == 1
    for path in workers:
        assert json.loads(path.read_text()) == [], f"{path.name}: a worker loaded an exporter"
    assert "pytest_probability.otel.export_session" in json.loads(controllers[0].read_text())

    data = report(pytester)
    records = data["records"] + data["skipped_runs"]
    assert {r["span_id"] for r in records} == {s.span_id for s in runs}
    assert {r["trace_id"] for r in records} == {session.trace_id}


USER_CONFTEST = """
import json
import os

import pytest
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

PROVIDER = TracerProvider(resource=Resource.create({"service.name": "user-app"}))
PROVIDER.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=os.environ["USER_OTLP"] + "/v1/traces")))
trace.set_tracer_provider(PROVIDER)


@pytest.fixture
def traced_client(request):
    tracer = trace.get_tracer("user.instrumentation")
    with tracer.start_as_current_span("user.fixture.setup", attributes={"nodeid": request.node.nodeid}):
        pass
    yield tracer
    with tracer.start_as_current_span("user.fixture.teardown", attributes={"nodeid": request.node.nodeid}):
        pass


def pytest_sessionfinish(session):
    role = "worker" if hasattr(session.config, "workerinput") else "controller"
    with open(f"provider-{role}-{os.getpid()}.json", "w") as handle:
        json.dump(trace.get_tracer_provider() is PROVIDER, handle)
"""

USER_BENCH = """
from opentelemetry import trace


def bench_instrumented(traced_client, request):
    with trace.get_tracer("user.instrumentation").start_as_current_span(
        "user.body", attributes={"nodeid": request.node.nodeid}
    ):
        pass
"""


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_user_spans_nest_under_their_run(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, otlp_http_receiver: OtlpReceiver, xdist: list[str]
) -> None:
    pytester.makeconftest(USER_CONFTEST)
    pytester.makepyfile(bench_user=USER_BENCH)
    export_to(monkeypatch, otlp_http_receiver)
    monkeypatch.setenv("USER_OTLP", otlp_http_receiver.endpoint)
    result = run(pytester, *xdist, "--prob-runs=3")
    assert result.ret == 0, result.stdout.str()

    spans = otlp_http_receiver.spans()
    ours = [s for s in spans if s.resource.get("service.name") == "pytest-probability"]
    user = [s for s in spans if s.resource.get("service.name") == "user-app"]
    session, runs = assert_one_trace(ours, 3)
    nodes = by_nodeid(runs)
    assert len(user) == 9
    assert Counter(s.name for s in user) == {"user.fixture.setup": 3, "user.body": 3, "user.fixture.teardown": 3}
    for span in user:
        run_span = nodes[span.attributes["nodeid"]]
        assert span.trace_id == session.trace_id
        assert span.parent_span_id == run_span.span_id, f"{span.name} of {span.attributes['nodeid']}"
    # The user's global TracerProvider was never replaced by the plugin's.
    flags = [json.loads(p.read_text()) for p in pytester.path.glob("provider-*.json")]
    assert flags and all(flags)


# -- metrics and resource -----------------------------------------------------------


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_metrics_equal_the_json_report(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, otlp_http_receiver: OtlpReceiver, xdist: list[str]
) -> None:
    pytester.makepyfile(bench_otel=BENCH)
    export_to(monkeypatch, otlp_http_receiver)
    result = run(pytester, *xdist, "--prob-runs=2", "--prob-json=report.json")
    assert result.ret == 1
    data = report(pytester)

    # Exactly once per session: one request, no series twice.
    assert otlp_http_receiver.count("metrics") == 1
    points = otlp_http_receiver.points()
    assert len({point_key(p) for p in points}) == len(points)
    # Other concerns may add series (state.metric_series); these seven are the contract.
    assert {p.name for p in points} >= set(INSTRUMENTS)
    points = [p for p in points if p.name in INSTRUMENTS]
    for p in points:
        unit, kind, monotonic = INSTRUMENTS[p.name]
        assert (p.unit, p.type, p.is_monotonic) == (unit, kind, monotonic), p.name
        if kind in ("sum", "histogram"):
            assert p.temporality == "cumulative", p.name
        assert p.description, p.name
        assert p.scope_name == "pytest_probability"
        for key in p.attributes:
            assert key in (
                "test.case.name",
                "code.file.path",
                "probability.benchmark",
                "probability.case",
                "probability.outcome",
                "probability.status",
                "gen_ai.request.model",
                "gen_ai.token.type",
            ), f"{p.name} has attribute {key}"
        if p.name == "probability.tokens":
            assert p.attributes["gen_ai.token.type"] in ("input", "output")  # the conventions' values only
    named: dict[str, dict[tuple, PointView]] = defaultdict(dict)
    for p in points:
        named[p.name][tuple(sorted(p.attributes.items()))] = p

    def attrs(**values: str) -> tuple:
        return tuple(sorted(values.items()))

    rows = data["rows"]
    assert len(rows) == 7
    expected_runs, expected_fraction, expected_cost = {}, {}, {}
    tokens: Counter = Counter()
    cache_read: Counter = Counter()
    for row in rows:
        case = {
            "test.case.name": f"bench_otel.py::{row['case']}",
            "probability.benchmark": row["benchmark"],
            "probability.case": row["case_id"],
        }
        for outcome, field in (("pass", "passes"), ("fail", "fails"), ("error", "errors"), ("skip", "skipped")):
            expected_runs[attrs(**case, **{"probability.outcome": outcome})] = row[field]
        if row["pass_fraction"] is not None:
            expected_fraction[attrs(**case, **{"probability.status": row["status"]})] = row["pass_fraction"]
        for model, usage in row["usage"].items():
            expected_cost[attrs(**case, **{"gen_ai.request.model": model})] = usage["cost"]
            model_of = {
                "code.file.path": "bench_otel.py",
                "probability.benchmark": row["benchmark"],
                "gen_ai.request.model": model,
            }
            for kind, field in (("input", "input_tokens"), ("output", "output_tokens")):
                tokens[attrs(**model_of, **{"gen_ai.token.type": kind})] += usage[field]
            cache_read[attrs(**model_of)] += usage["cached_input_tokens"]
        if not row["usage"]:
            expected_cost[attrs(**case)] = row["cost"]

    assert {k: p.value for k, p in named["probability.runs"].items()} == expected_runs
    assert {k: p.value for k, p in named["probability.case.pass_fraction"].items()} == pytest.approx(expected_fraction)
    assert {k: p.value for k, p in named["probability.cost"].items()} == pytest.approx(expected_cost)
    assert {k: p.value for k, p in named["probability.tokens"].items()} == dict(tokens)
    assert {k: p.value for k, p in named["probability.tokens.cache_read"].items()} == dict(cache_read)
    assert {k: p.value for k, p in named["probability.session.pass_fraction"].items()} == {
        (): pytest.approx(data["totals"]["pass_fraction"])
    }
    totals = data["totals"]
    assert {k: p.value for k, p in named["probability.session.runs"].items()} == {
        (): totals["count"] + totals["skipped"]
    }
    # Spot checks against hand-computed values (the report could be wrong too).
    assert expected_cost[
        attrs(
            **{
                "test.case.name": "bench_otel.py::cost_only",
                "probability.benchmark": "cost_only",
                "probability.case": "",
            }
        )
    ] == pytest.approx(1.5)
    assert (
        tokens[
            attrs(
                **{
                    "code.file.path": "bench_otel.py",
                    "probability.benchmark": "classify",
                    "gen_ai.request.model": "m-small",
                    "gen_ai.token.type": "input",
                }
            )
        ]
        == 440
    )
    assert data["totals"]["pass_fraction"] == pytest.approx(6 / 12)

    durations: dict[tuple, list[float]] = defaultdict(list)
    by_label = {row["case"]: row for row in rows}
    for record in data["records"]:
        if record["outcome"] == "skip":
            continue
        row = by_label[record["case"]]
        durations[
            attrs(
                **{
                    "test.case.name": f"bench_otel.py::{row['case']}",
                    "probability.benchmark": row["benchmark"],
                    "probability.case": row["case_id"],
                    "probability.outcome": record["outcome"],
                }
            )
        ].append(record["duration"])
    histogram = named["probability.run.duration"]
    assert set(histogram) == set(durations)
    for key, values in durations.items():
        point = histogram[key]
        assert point.count == len(values)
        assert point.sum == pytest.approx(sum(values))
        assert point.explicit_bounds == DURATION_BOUNDS
        assert sum(point.bucket_counts) == point.count
        assert len(point.bucket_counts) == len(DURATION_BOUNDS) + 1


def test_resource_defaults_git_revision_and_no_instance_id(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, otlp_http_receiver: OtlpReceiver
) -> None:
    pytester.makepyfile(bench_otel="def bench_ok():\n    pass\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q"], cwd=pytester.path, check=True)
    subprocess.run([*git, "add", "bench_otel.py"], cwd=pytester.path, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "init"], cwd=pytester.path, check=True)
    revision = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=pytester.path, check=True, capture_output=True, text=True
    ).stdout.strip()
    export_to(monkeypatch, otlp_http_receiver)
    result = run(pytester)
    assert result.ret == 0

    resources = [s.resource for s in otlp_http_receiver.spans()] + [p.resource for p in otlp_http_receiver.points()]
    assert resources
    for resource in resources:
        assert resource["service.name"] == "pytest-probability"
        assert resource["test.suite.name"] == pytester.path.name
        assert resource["vcs.ref.head.revision"] == revision
        assert "service.instance.id" not in resource
        assert not any(key.startswith("cicd.") for key in resource)


def test_resource_service_name_suite_and_ci(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, otlp_grpc_receiver: OtlpReceiver
) -> None:
    pytester.makepyfile(bench_otel="def bench_ok():\n    pass\n")
    export_to(monkeypatch, otlp_grpc_receiver)
    monkeypatch.setenv("OTEL_SERVICE_NAME", "nightly-evals")
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=ci")
    monkeypatch.setenv("GITHUB_RUN_ID", "987654321")
    monkeypatch.setenv("GITHUB_WORKFLOW", "nightly")
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/evals")
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.example")
    result = run(pytester, "--prob-suite=triage-suite")
    assert result.ret == 0

    spans = otlp_grpc_receiver.spans()
    session, _ = assert_one_trace(spans, 1)
    assert session.attributes["test.suite.name"] == "triage-suite"
    resources = [s.resource for s in spans] + [p.resource for p in otlp_grpc_receiver.points()]
    assert len(resources) > 2
    for resource in resources:
        assert resource["service.name"] == "nightly-evals"
        assert resource["test.suite.name"] == "triage-suite"
        assert resource["deployment.environment.name"] == "ci"
        assert resource["cicd.pipeline.name"] == "nightly"
        assert resource["cicd.pipeline.run.id"] == "987654321"
        assert resource["cicd.pipeline.run.url.full"] == "https://github.example/acme/evals/actions/runs/987654321"
        assert "vcs.ref.head.revision" not in resource  # not a git repository
        assert "service.instance.id" not in resource


def test_per_signal_endpoint_variables(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, otlp_http_receiver: OtlpReceiver
) -> None:
    pytester.makepyfile(bench_otel="def bench_ok():\n    pass\n")
    with OtlpReceiver("http") as metrics_rx:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", otlp_http_receiver.endpoint + "/v1/traces")
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", metrics_rx.endpoint + "/v1/metrics")
        result = run(pytester, "--prob-runs=2")
        assert result.ret == 0
        assert_one_trace(otlp_http_receiver.spans(), 2)
        assert otlp_http_receiver.count("metrics") == 0
        assert metrics_rx.count("traces") == 0
        assert {p.name for p in metrics_rx.points()} >= {"probability.runs", "probability.session.pass_fraction"}
