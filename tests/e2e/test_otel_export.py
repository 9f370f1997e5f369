"""End to end: what the real OTLP exporter sends, decoded by a real receiver.

Every session runs pytest in a subprocess (OpenTelemetry and xdist keep
process state) against ``OtlpReceiver`` on 127.0.0.1; the assertions are on
the decoded protobuf the plugin's exporter put on the wire, on the OTLP
JSON-lines file, and on the ``--prob-json`` report of the same session.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from otlp_receiver import OtlpReceiver, PointView, SpanView, flatten_metrics, flatten_spans
from sessions import export_to, report
from sessions import session as run

from pytest_probability.otel import otlp_json

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

BENCH = """
import pytest
from pytest_probability import record_cost, record_usage


@pytest.fixture
def broken_fixture():
    raise RuntimeError("fixture could not start")


@pytest.mark.parametrize("prompt", ["terse", "cot"])
def bench_classify(prompt):
    record_usage(model="m-small", input_tokens=100, output_tokens=20, cached_input_tokens=5, cost=0.25)
    record_usage(model="m-small", input_tokens=10, output_tokens=2, cost=0.125)
    assert prompt == "terse", f"wanted terse, got {prompt}"


def bench_two_models():
    record_usage(model="m-small", input_tokens=1, output_tokens=1, cost=0.5)
    record_usage(model="m-large", input_tokens=3, output_tokens=4, cached_input_tokens=2, cost=1.0)


def bench_cost_only():
    record_cost(0.75)


def bench_broken():
    raise KeyError("no such key")


def bench_setup_error(broken_fixture):
    pass


def bench_skipped():
    pytest.skip("not today")
"""
#: --prob-runs=2 over the 7 cases of BENCH.
BENCH_RUNS = 14


# -- helpers ----------------------------------------------------------------------


pytestmark = pytest.mark.usefixtures("clean_env")


def session_and_runs(spans: list[SpanView]) -> tuple[SpanView, list[SpanView]]:
    sessions = [s for s in spans if s.name == "probability.session"]
    assert len(sessions) == 1, [s.name for s in spans]
    runs = [s for s in spans if s.name != "probability.session"]
    assert all(s.name.startswith("probability.run ") for s in runs), [s.name for s in runs]
    return sessions[0], runs


def by_nodeid(runs: list[SpanView]) -> dict[str, SpanView]:
    index = {s.attributes["pytest.nodeid"]: s for s in runs}
    assert len(index) == len(runs), "two spans for one run"
    return index


def assert_one_trace(spans: list[SpanView], runs_expected: int) -> tuple[SpanView, list[SpanView]]:
    session, runs = session_and_runs(spans)
    assert len(spans) == runs_expected + 1
    assert len({s.span_id for s in spans}) == len(spans), "duplicate spans"
    assert {s.trace_id for s in spans} == {session.trace_id}
    assert {s.parent_span_id for s in runs} == {session.span_id}
    return session, runs


def first_lineno(source: str, function: str) -> int:
    code = compile(source, "bench", "exec")
    found = [c for c in code.co_consts if getattr(c, "co_name", None) == function]
    assert found, function
    return found[0].co_firstlineno


def point_key(point: PointView) -> tuple:
    return point.name, tuple(sorted(point.attributes.items()))


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
