"""The errored run, found as a user would: a real session (the real ``openai``
SDK and its OpenTelemetry instrumentation against the loopback server of
tests/genai_server.py) exports to the real Collector with
deploy/otel-collector/config.yaml, which sends the spans to a real Jaeger v2
with deploy/jaeger/config.yaml (memory storage). Jaeger's HTTP API, searched
by service and by the attribute docs/observability.md names, must return the
trace, with the run span as documented; the HTML report's trace link
(``prob_trace_url`` as docs/observability.md writes it for Jaeger) must lead
to the same trace.

One run per test session (stack_runs.run_errored_run, shared by the xdist
workers); without the built programs the tests skip (fail under CI).
"""

from __future__ import annotations

import pytest
from alert_path import shared
from backends import require_backends, tags_of
from stack_runs import run_errored_run

LABEL = "triage::chain_of_thought"


@pytest.fixture(scope="module")
def errored(tmp_path_factory):
    backends = require_backends()
    return shared(tmp_path_factory, "errored_run", lambda d: run_errored_run(d, backends))


def records(errored, outcome: str) -> list[dict]:
    return [r for r in errored["report"]["records"] if r["outcome"] == outcome]


def spans_by_id(trace: dict) -> dict[str, dict]:
    return {s["spanID"]: s for s in trace["spans"]}


def the_trace(errored) -> dict:
    (trace,) = errored["by_outcome"]
    return trace


def test_the_session_exported_without_a_note(errored):
    assert errored["notes"] == [], errored["notes"]
    assert errored["delivered"]["failed_spans"] == 0


def test_search_by_service_and_outcome_finds_the_session_trace(errored):
    """docs/observability.md, step 3: service pytest-probability, tag probability.outcome=error."""
    errored_runs = records(errored, "error")
    assert [r["run"] for r in errored_runs] == [1, 3], errored_runs  # every other run of chain_of_thought
    trace = the_trace(errored)
    assert {r["trace_id"] for r in errored["report"]["records"]} == {trace["traceID"]}
    spans = spans_by_id(trace)
    for record in errored_runs:
        assert record["span_id"] in spans, record


def test_the_errored_run_span(errored):
    """Step 4: the run span's name, tags, status and exception event."""
    trace = the_trace(errored)
    spans = spans_by_id(trace)
    record = records(errored, "error")[0]
    span = spans[record["span_id"]]
    assert span["operationName"] == f"probability.run {LABEL}"
    tags = tags_of(span)
    assert tags["probability.outcome"] == "error"
    assert tags["probability.case"] == "chain_of_thought"
    assert tags["probability.benchmark"] == "triage"
    assert tags["test.case.name"] == f"bench_nightly.py::{LABEL}"
    assert tags["error.type"] == "TimeoutError"
    assert tags["span.kind"] == "internal"
    # The OTLP status, as Jaeger shows it.
    assert tags["otel.status_code"] == "ERROR"
    assert tags["error"] is True
    assert tags["otel.status_description"] == "error in call: request to m-large timed out after 30 s"
    assert tags["otel.scope.name"] == "pytest_probability"
    events = [tags_of(log) for log in span["logs"]]
    exceptions = [e for e in events if e.get("event") == "exception"]
    assert len(exceptions) == 1, events
    (exc,) = exceptions
    assert exc["exception.type"] == "TimeoutError"
    assert exc["exception.message"] == "request to m-large timed out after 30 s"
    assert "raise TimeoutError" in exc["exception.stacktrace"]
    # A child of the session span.
    parents = [r for r in span["references"] if r["refType"] == "CHILD_OF"]
    assert [spans[r["spanID"]]["operationName"] for r in parents] == ["probability.session"]


def test_the_openai_instrumentations_span_is_the_run_spans_child(errored):
    trace = the_trace(errored)
    spans = spans_by_id(trace)
    for record in errored["report"]["records"]:
        children = [
            s
            for s in trace["spans"]
            if any(r["refType"] == "CHILD_OF" and r["spanID"] == record["span_id"] for r in s["references"])
        ]
        assert [c["operationName"] for c in children] == ["chat gpt-4o-mini"], (record["run"], record["case"])
        (chat,) = children
        tags = tags_of(chat)
        assert tags["gen_ai.request.model"] == "gpt-4o-mini"
        assert tags["gen_ai.response.model"] == "gpt-4o-mini-2024-07-18"
        assert tags["gen_ai.usage.input_tokens"] > 0
        assert tags["span.kind"] == "client"
        assert tags["otel.scope.name"] != "pytest_probability"
        assert chat["processID"] == spans[record["span_id"]]["processID"]


def test_the_resource_is_the_sessions(errored):
    trace = the_trace(errored)
    (process,) = {s["processID"] for s in trace["spans"]}
    proc = trace["processes"][process]
    assert proc["serviceName"] == "pytest-probability"
    tags = tags_of(proc)
    assert tags["test.suite.name"] == "nightly-triage"
    assert tags["vcs.ref.head.revision"] == errored["head"]
    assert tags["cicd.pipeline.name"] == "nightly"
    assert tags["cicd.pipeline.run.id"] == "4242"
    assert tags["telemetry.sdk.name"] == "opentelemetry"
    assert "service.instance.id" not in tags


def test_every_exported_span_is_in_jaeger_once(errored):
    trace = the_trace(errored)
    exported = errored["otlp_span_ids"]
    assert len(exported) == len(set(exported))
    stored = [s["spanID"] for s in trace["spans"]]
    assert sorted(stored) == sorted(exported)
    # session + 8 runs + 8 model calls
    assert len(stored) == 1 + 8 + 8


def test_the_other_documented_searches(errored):
    """Two tags narrow it to the case; the operation selects the same case; a
    case without errored runs finds nothing."""
    trace_id = the_trace(errored)["traceID"]
    assert [t["traceID"] for t in errored["by_outcome_and_case"]] == [trace_id]
    assert [t["traceID"] for t in errored["by_operation"]] == [trace_id]
    assert errored["by_outcome_plain"] == []
    assert "pytest-probability" in errored["services"]
    operations = {o["name"] if isinstance(o, dict) else o for o in errored["operations"]}
    assert {"probability.session", f"probability.run {LABEL}", "probability.run triage::plain"} <= operations


def test_the_html_reports_trace_links_lead_to_the_trace(errored):
    """ini prob_trace_url = <jaeger>/trace/{trace_id}: each failed or errored run's link."""
    trace_id = the_trace(errored)["traceID"]
    links = errored["links"]
    assert len(links) == len(records(errored, "error")) + len(records(errored, "fail")) == 2
    for link in links:
        assert link["href"] == f"{errored['jaeger']}/trace/{trace_id}"
        assert link["page_status"] == 200 and link["page_is_html"], link
        assert link["api_status"] == 200, link
        (trace,) = link["api"]["data"]
        assert trace["traceID"] == trace_id
        errored_ids = {r["span_id"] for r in records(errored, "error")}
        assert errored_ids <= set(spans_by_id(trace))
