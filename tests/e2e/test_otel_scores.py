"""Issue 31, part 6: graded results in the OpenTelemetry export, end to end in subprocess sessions.

Run spans carry ``probability.score.<name>``; each score, and each graded run's outcome, is a
``gen_ai.evaluation.result`` log record through the plugin's logger provider; the score metrics (the mean
and its bounds, and a histogram of run scores whose exemplars point at runs) arrive at the loopback OTLP
receivers (HTTP/protobuf and gRPC), serially and under ``-n 2``. A session without scores exports none of
it. The evaluation events of runs that called the real ``openai`` SDK (with its real OpenTelemetry
instrumentation, against the tests' loopback server) carry the ids of the GenAI span they evaluate.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
import sessions
from otlp_receiver import LogView, OtlpReceiver, SpanView, flatten_logs, flatten_metrics, flatten_spans
from sessions import CONFTEST, clean_export_env

from pytest_probability.otel import otlp_json

XDIST = pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
EVENT = "gen_ai.evaluation.result"

#: graded: five runs; each records ``rel`` twice (the span keeps the last), then ``judge`` with a threshold
#: (runs 1 and 2 fail on it), run 4 then errors and run 5 skips. gated: a score gate; run 1 errors before any
#: score. plain: no score at all.
BENCH = """
import pytest
from pytest_probability import record_score


@pytest.mark.probability(runs=5)
def bench_graded(n):
    record_score(0.5, "rel")
    record_score(0.6 + n / 100, "rel")
    record_score(n / 10, "judge", threshold=0.25, explanation=f"EXPLAINED-{n}")
    if n == 4:
        raise RuntimeError("BOOM")
    if n == 5:
        pytest.skip("no answer")


@pytest.mark.probability(runs=2, min_score={"judge": 0.5})
def bench_gated(n):
    if n == 1:
        raise ValueError("no grader")
    record_score(0.9, "judge")


@pytest.mark.probability(runs=2)
def bench_plain(n):
    pass
"""


def expected(benchmark: str, n: int) -> list[dict[str, Any]]:
    """The evaluation events of one run, in order: ``gen_ai.evaluation.name`` and the attributes checked."""
    name = f"bench_scores.py::{benchmark}"
    if benchmark == "plain":
        return []
    if benchmark == "gated":
        if n == 1:
            return [
                {
                    "gen_ai.evaluation.name": "probability.outcome",
                    "gen_ai.evaluation.score.label": "fail",
                    "error.type": "ValueError",
                    "gen_ai.evaluation.explanation": "no grader",
                    "test.case.name": name,
                    "test.case.result.status": "fail",
                }
            ]
        return [
            {
                "gen_ai.evaluation.name": "judge",
                "gen_ai.evaluation.score.value": 0.9,
                "test.case.name": name,
                "test.case.result.status": "pass",
            },
            {
                "gen_ai.evaluation.name": "probability.outcome",
                "gen_ai.evaluation.score.label": "pass",
                "gen_ai.evaluation.score.value": 1.0,
                "test.case.name": name,
                "test.case.result.status": "pass",
            },
        ]
    status = {1: "fail", 2: "fail", 3: "pass", 4: "fail", 5: None}[n]
    shared = {"test.case.name": name, **({"test.case.result.status": status} if status else {})}
    events = [
        {"gen_ai.evaluation.name": "rel", "gen_ai.evaluation.score.value": 0.5, **shared},
        {"gen_ai.evaluation.name": "rel", "gen_ai.evaluation.score.value": 0.6 + n / 100, **shared},
        {
            "gen_ai.evaluation.name": "judge",
            "gen_ai.evaluation.score.value": n / 10,
            "gen_ai.evaluation.score.label": "pass" if n >= 3 else "fail",
            "gen_ai.evaluation.explanation": f"EXPLAINED-{n}",
            **shared,
        },
    ]
    if n in (1, 2):
        events.append(
            {
                "gen_ai.evaluation.name": "probability.outcome",
                "gen_ai.evaluation.score.label": "fail",
                "gen_ai.evaluation.score.value": 0.0,
                **shared,
                "gen_ai.evaluation.explanation": f"score 'judge' = {n / 10:g} is below its threshold 0.25",
            }
        )
    elif n == 3:
        events.append(
            {
                "gen_ai.evaluation.name": "probability.outcome",
                "gen_ai.evaluation.score.label": "pass",
                "gen_ai.evaluation.score.value": 1.0,
                **shared,
            }
        )
    elif n == 4:
        events.append(
            {
                "gen_ai.evaluation.name": "probability.outcome",
                "gen_ai.evaluation.score.label": "fail",
                "error.type": "RuntimeError",
                **shared,
            }
        )
    return events


@pytest.fixture
def folder(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    clean_export_env(monkeypatch, pytester)
    pytester.makeconftest(CONFTEST)
    return pytester


def session(folder: pytest.Pytester, rx: OtlpReceiver | None, *args: str) -> pytest.RunResult:
    env = (
        [
            "--prob-otel-endpoint",
            rx.endpoint,
            "--prob-otel-protocol",
            "grpc" if rx.protocol == "grpc" else "http/protobuf",
        ]
        if rx is not None
        else []
    )
    return sessions.session(folder, "--prob-otel-file=otlp.jsonl", *env, *args)


def run_spans(spans: list[SpanView]) -> dict[str, SpanView]:
    """The run spans by span id."""
    return {s.span_id: s for s in spans if s.name.startswith("probability.run ")}


def events_by_run(logs: list[LogView], runs: dict[str, SpanView]) -> dict[tuple[str, int], list[dict[str, Any]]]:
    """Every evaluation event pointing at a run span, grouped by (benchmark, run), in the order emitted."""
    grouped: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for log in logs:
        assert log.event_name == EVENT and log.body is None, log
        assert log.scope_name == "pytest_probability"
        run = runs[log.span_id]
        assert log.trace_id == run.trace_id
        grouped[(run.attributes["probability.benchmark"], run.attributes["probability.run"])].append(log.attributes)
    return grouped


def check_export(spans: list[SpanView], logs: list[LogView], points: list[Any], capture: str = "all") -> None:
    runs = run_spans(spans)
    assert len(runs) == 9
    for run in runs.values():
        benchmark, n = run.attributes["probability.benchmark"], run.attributes["probability.run"]
        scores = {k: v for k, v in run.attributes.items() if k.startswith("probability.score.")}
        want = (
            {"probability.score.rel": pytest.approx(0.6 + n / 100), "probability.score.judge": pytest.approx(n / 10)}
            if benchmark == "graded"
            else {"probability.score.judge": 0.9}
            if (benchmark, n) == ("gated", 2)
            else {}
        )
        assert scores == want, (benchmark, n)
    grouped = events_by_run(logs, runs)
    for benchmark, runs_of in (("graded", 5), ("gated", 2), ("plain", 2)):
        for n in range(1, runs_of + 1):
            got = grouped.get((benchmark, n), [])
            want = expected(benchmark, n)
            if capture == "ids":
                want = [{k: v for k, v in event.items() if k != "gen_ai.evaluation.explanation"} for event in want]
            if (benchmark, n) == ("graded", 4):  # the error's message: the run's own words
                assert ("BOOM" in got[-1].pop("gen_ai.evaluation.explanation", "")) == (capture == "all")
            assert got == [pytest.approx(event) for event in want], (benchmark, n)

    # The score metrics: the mean and its bounds per case and score name, and the run scores' histogram.
    ours = [p for p in points if "score" in p.name]
    names = {(p.name, p.attributes["probability.benchmark"], p.attributes["probability.score.name"]) for p in ours}
    assert names == {
        (metric, benchmark, score)
        for metric in (
            "probability.case.score.mean",
            "probability.case.score.lower",
            "probability.case.score.upper",
            "probability.run.score",
        )
        for benchmark, score in (("graded", "rel"), ("graded", "judge"), ("gated", "judge"))
    } | {  # the gated case's bar and its score gate's verdict
        ("probability.case.score.min_score", "gated", "judge"),
        ("probability.case.score.gate.verdict", "gated", "judge"),
    }
    bar, gate = (
        next(p for p in ours if p.name == name)
        for name in ("probability.case.score.min_score", "probability.case.score.gate.verdict")
    )
    assert (bar.unit, bar.value, gate.unit, gate.value in (-1, 0, 1)) == ("1", 0.5, "", True)
    histogram = {
        (p.attributes["probability.benchmark"], p.attributes["probability.score.name"]): p
        for p in ours
        if p.name == "probability.run.score"
    }
    for (benchmark, _score), point in histogram.items():
        assert point.unit == "1" and point.type == "histogram" and point.temporality == "cumulative"
        assert point.explicit_bounds == pytest.approx([k / 10 for k in range(11)])
        assert point.attributes["test.case.name"] == f"bench_scores.py::{benchmark}"
        # Exemplars point at run spans of the case: the runs of its lowest scores, eight at most.
        ids = {(runs[span].trace_id, span) for _, span in point.exemplars}
        assert set(point.exemplars) <= ids
        assert all(runs[span].attributes["probability.benchmark"] == benchmark for _, span in point.exemplars)
    graded_runs = {(s.trace_id, s.span_id) for s in runs.values() if s.attributes["probability.benchmark"] == "graded"}
    judge, rel = histogram[("graded", "judge")], histogram[("graded", "rel")]
    assert (judge.count, judge.sum) == (5, pytest.approx(1.5))
    assert judge.bucket_counts == [0, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0]  # (-inf, 0], (0, 0.1], ..., (1, +inf)
    assert set(judge.exemplars) == graded_runs and len(judge.exemplars) == 5
    assert (rel.count, rel.sum) == (10, pytest.approx(5 * 0.5 + 5 * 0.6 + 0.15))
    assert len(rel.exemplars) == 8 and set(rel.exemplars) == graded_runs  # five 0.5s, then runs 1-3's second
    assert histogram[("gated", "judge")].count == 1


@XDIST
def test_scores_reach_the_receivers_as_span_attributes_evaluation_events_and_metrics(folder, receiver, xdist) -> None:
    folder.makepyfile(bench_scores=BENCH)
    result = session(folder, receiver, *xdist)
    assert result.ret == 1, result.stdout.str()  # the threshold's fails, the error, the undecided gate
    assert "OpenTelemetry" not in result.stdout.str(), result.stdout.str()  # nothing failed, nothing spilled
    check_export(receiver.spans(), receiver.logs(), receiver.points())
    lines = list(otlp_json.read_file(folder.path / "otlp.jsonl"))  # the OTLP file holds the same
    check_export(flatten_spans(lines), flatten_logs(lines), flatten_metrics(lines))


@XDIST
def test_capture_ids_keeps_the_explanations_out_of_the_export(folder, xdist) -> None:
    folder.makepyfile(bench_scores=BENCH)
    result = session(folder, None, "--prob-otel-capture=ids", "--prob-json=report.json", *xdist)
    assert result.ret == 1, result.stdout.str()
    text = (folder.path / "otlp.jsonl").read_text()
    assert "EXPLAINED" not in text and "BOOM" not in text and "below its threshold" not in text
    lines = list(otlp_json.read_file(folder.path / "otlp.jsonl"))
    check_export(flatten_spans(lines), flatten_logs(lines), flatten_metrics(lines), capture="ids")
    assert "EXPLAINED-1" in (folder.path / "report.json").read_text()  # the JSON report is no export


PLAIN = """
import pytest


@pytest.mark.probability(runs=6, min_rate=0.1)
@pytest.mark.parametrize("case", ["a", "b"])
def bench_plain(case, n):
    assert n != 2
"""


@XDIST
def test_a_session_without_scores_exports_no_score_attribute_event_or_series(folder, xdist) -> None:
    folder.makepyfile(bench_plain=PLAIN)
    result = session(folder, None, *xdist)
    assert result.ret == 0, result.stdout.str()
    lines = list(otlp_json.read_file(folder.path / "otlp.jsonl"))
    assert {kind for kind, _ in lines} == {"traces", "metrics"}  # no log record at all
    runs = run_spans(flatten_spans(lines))
    assert len(runs) == 12
    assert not any(key.startswith("probability.score") for s in runs.values() for key in s.attributes)
    names = {p.name for p in flatten_metrics(lines)}
    assert names == {
        "probability.runs",
        "probability.case.pass_fraction",
        "probability.session.pass_fraction",
        "probability.session.runs",
        "probability.cost",
        "probability.run.duration",
        "probability.case.interval.lower",
        "probability.case.interval.upper",
        "probability.case.min_rate",
        "probability.case.gate.verdict",
    }


#: The user's own logger provider, set at import: the instrumentation's records are theirs, the plugin's own
#: evaluation results still take the plugin's way (as its run spans do).
USER_LOGS = (
    CONFTEST
    + """
import json, os

from opentelemetry import _logs
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

LOGS = InMemoryLogRecordExporter()
_PROVIDER = LoggerProvider()
_PROVIDER.add_log_record_processor(SimpleLogRecordProcessor(LOGS))
_logs.set_logger_provider(_PROVIDER)


def pytest_sessionfinish(session):
    with open(f"user-{os.getpid()}.json", "w") as handle:
        json.dump([log.log_record.event_name for log in LOGS.get_finished_logs()], handle)
"""
)

USER_BENCH = """
from opentelemetry import _logs
from pytest_probability import record_score


def bench_mine(n):
    _logs.get_logger("user.code").emit(event_name="user.event", attributes={"n": n})
    record_score(0.5)
"""


def test_the_evaluation_results_take_the_plugins_way_beside_a_users_logger_provider(folder, otlp_http_receiver) -> None:
    folder.makeconftest(USER_LOGS)
    folder.makepyfile(bench_mine=USER_BENCH)
    result = session(folder, otlp_http_receiver, "--prob-runs=2")
    assert result.ret == 0, result.stdout.str()
    runs = run_spans(otlp_http_receiver.spans())
    grouped = events_by_run(otlp_http_receiver.logs(), runs)  # the plugin's records only, each at its run
    assert {key: [event["gen_ai.evaluation.name"] for event in events] for key, events in grouped.items()} == {
        ("mine", 1): ["score", "probability.outcome"],
        ("mine", 2): ["score", "probability.outcome"],
    }
    (seen,) = [json.loads(path.read_text()) for path in folder.path.glob("user-*.json")]
    assert seen == ["user.event", "user.event"]  # the user's provider got the user's records, not the plugin's


# --- the real openai SDK and its real OpenTelemetry instrumentation ---------------------------------------

SERVER = (Path(__file__).parent.parent / "genai_server.py").read_text()

OPENAI_CONFTEST = """
import os

import genai_server
from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor

os.environ["OPENAI_BASE_URL"] = genai_server.start()
os.environ["OPENAI_API_KEY"] = "test-key"
OpenAIInstrumentor().instrument()
"""

#: one: one call of the system under test, and the judge's (in judging(): the evaluation, not what it
#: evaluates); none: no GenAI call; two: two calls of the system.
OPENAI_BENCH = """
import openai
from pytest_probability import judging, record_score


def ask(model):
    return openai.OpenAI().chat.completions.create(model=model, messages=[{"role": "user", "content": "Rain?"}])


def bench_one():
    ask("gpt-4o-mini")
    with judging():
        ask("judge-mini")
    record_score(0.7, "judge")


def bench_none():
    record_score(0.5, "judge")


def bench_two():
    ask("gpt-4o-mini")
    ask("gpt-4o-mini")
    record_score(0.6, "judge")
"""


@XDIST
def test_an_evaluation_is_parented_to_the_one_genai_span_of_its_run_else_to_the_run_span(
    folder, otlp_http_receiver, xdist
) -> None:
    pytest.importorskip("openai")
    pytest.importorskip("opentelemetry.instrumentation.genai.openai")
    folder.makepyfile(genai_server=SERVER, conftest=OPENAI_CONFTEST, bench_openai=OPENAI_BENCH)
    result = session(folder, otlp_http_receiver, "--prob-runs=2", *xdist)
    assert result.ret == 0, result.stdout.str()
    spans = otlp_http_receiver.spans()
    runs = run_spans(spans)
    assert len(runs) == 6
    chats = [s for s in spans if s.name.startswith("chat ")]
    assert len(chats) == 2 * 4  # one's two calls (the system's and the judge's), two's two, in each run
    logs = otlp_http_receiver.logs()
    assert len(logs) == 2 * 3 * 2  # a score and the outcome per run
    for log in logs:
        assert log.event_name == EVENT
        by_id = {s.span_id: s for s in spans}
        target = by_id[log.span_id]
        run = target if target.span_id in runs else runs[target.parent_span_id]
        benchmark = run.attributes["probability.benchmark"]
        if benchmark == "one":  # the system's chat span in this run, never the judge's
            assert target.name == "chat gpt-4o-mini" and target.parent_span_id == run.span_id, target
            assert log.trace_id == target.trace_id
            assert log.attributes["gen_ai.response.id"] == target.attributes["gen_ai.response.id"] == "chatcmpl-1"
        else:  # no GenAI span, or more than one: the run span's ids
            assert (log.trace_id, log.span_id) == (run.trace_id, run.span_id), benchmark
            assert "gen_ai.response.id" not in log.attributes
    pointed = {(log.span_id, log.attributes["gen_ai.evaluation.name"]) for log in logs}
    assert len(pointed) == len(logs)  # each run's two events, at a span of their own run
