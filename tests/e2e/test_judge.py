"""The judge's spend apart (issue 21, item 4), end to end in subprocess sessions.

Usage recorded inside ``pytest_probability.judging()`` or with ``record_usage(..., role="judge")``, and usage
read off GenAI spans that end inside ``judging()``, is the judge's: its own lines in the table, its own fields
in the JSON, its own attributes on the run span and series in the metrics, and counted in budgets.
"""

from __future__ import annotations

import json

import pytest
from otlp_receiver import flatten_metrics, flatten_spans
from sessions import section

from pytest_probability.otel import otlp_json

XDIST = pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])

BENCH = """
import pytest
from opentelemetry import trace
from pytest_probability import judging, record_cost, record_usage

tracer = trace.get_tracer("my.instrumentation")


def grade(answer):
    with tracer.start_as_current_span("chat judge-model") as span:  # an instrumented judge call
        span.set_attributes({"gen_ai.request.model": "judge-model", "gen_ai.usage.input_tokens": 500,
                             "gen_ai.usage.output_tokens": 3, "gen_ai.usage.cost": 0.05})
    return answer == "yes"


@pytest.mark.parametrize("q", ["a", "b"])
def bench_answer(q):
    record_usage(model="gpt-4o", input_tokens=100, output_tokens=20, cost=0.01)
    with judging():
        assert grade("yes")
        record_cost(0.001)
    record_usage(model="gpt-4o", input_tokens=7, output_tokens=1, cost=0.002, role="judge")
"""


pytestmark = pytest.mark.usefixtures("clean_env")


@XDIST
def test_the_judges_spend_is_apart_in_every_output(pytester: pytest.Pytester, xdist: list[str]) -> None:
    pytester.makepyfile(bench_judge=BENCH)
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--prob-runs=2",
        "--prob-json=report.json",
        "--prob-otel-file=otel.jsonl",
        *xdist,
        timeout=120,
    )
    assert result.ret == 0, result.stdout.str()
    lines = section(result)
    assert "  Cost:    $0.0400" in lines  # the system's: 4 runs x $0.01
    assert any(line.startswith("  Tokens:  gpt-4o  400 in / 80 out") for line in lines), lines
    assert "  Judge:   $0.2120" in lines  # 4 x (0.05 + 0.001 + 0.002)
    judge = [line for line in lines if line.startswith(("  Judge tokens:", "                 "))]
    assert any("judge-model" in line and "2,000 in / 12 out" in line for line in judge), judge
    assert any("gpt-4o" in line and "28 in / 4 out" in line for line in judge), judge

    data = json.loads((pytester.path / "report.json").read_text())
    totals = data["totals"]
    assert totals["cost"] == pytest.approx(0.04) and totals["judge_cost"] == pytest.approx(0.212)
    assert set(totals["usage"]) == {"gpt-4o"} and totals["usage"]["gpt-4o"]["input_tokens"] == 400
    assert totals["judge_usage"]["judge-model"]["input_tokens"] == 2000
    assert totals["judge_usage"]["gpt-4o"]["input_tokens"] == 28  # the same model as the system's, apart
    for row in data["rows"]:
        assert row["cost"] == pytest.approx(0.02) and row["judge_cost"] == pytest.approx(0.106)
    for record in data["records"]:
        assert record["cost"] == pytest.approx(0.01) and record["judge_cost"] == pytest.approx(0.053)
        roles = sorted((u["model"], u["role"]) for u in record["usage"])
        assert roles == [("gpt-4o", "judge"), ("gpt-4o", "system"), ("judge-model", "judge"), ("unknown", "judge")]

    decoded = list(otlp_json.read_file(pytester.path / "otel.jsonl"))
    runs = [s for s in flatten_spans(decoded) if s.name.startswith("probability.run ")]
    assert len(runs) == 4
    for span in runs:
        assert span.attributes["gen_ai.usage.input_tokens"] == 100  # the system's only
        assert span.attributes["probability.cost"] == pytest.approx(0.01)
        assert span.attributes["probability.judge.input_tokens"] == 507
        assert span.attributes["probability.judge.cost"] == pytest.approx(0.053)
    points = [p for p in flatten_metrics(decoded) if p.name == "probability.cost"]
    judged = sum(p.value for p in points if p.attributes.get("probability.usage.role") == "judge")
    system = sum(p.value for p in points if "probability.usage.role" not in p.attributes)
    assert judged == pytest.approx(0.212) and system == pytest.approx(0.04)  # record_cost's judge part: model "unknown"
    assert sum(p.value for p in points) == pytest.approx(0.252)


def test_budgets_count_the_judges_spend(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(bench_judge=BENCH)
    # the system alone spends $0.01 a run: only the judge's $0.053 reaches a $0.10 budget after two runs
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--prob-runs=5",
        "--prob-json=report.json",
        "--prob-max-cost=0.1",
        "--prob-otel-file=otel.jsonl",
        timeout=120,
    )
    data = json.loads((pytester.path / "report.json").read_text())
    assert data["budget"]["reached"] == "cost", data["budget"]
    assert len(data["records"]) == 2 and data["budget"]["runs_not_executed"] == 8
    assert data["budget"]["spent"]["cost"] == pytest.approx(0.126)
    assert result.ret == 0


def test_a_bad_role_is_an_error_of_the_run(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        bench_role="from pytest_probability import record_usage\n\n"
        "def bench_role():\n    record_usage(model='m', input_tokens=1, role='grader')\n"
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--prob-runs=1", "--prob-json=report.json")
    assert result.ret == 1
    (record,) = json.loads((pytester.path / "report.json").read_text())["records"]
    assert record["outcome"] == "error"
    assert record["error"] == "ValueError: record_usage(): role must be one of 'system', 'judge', got 'grader'"
