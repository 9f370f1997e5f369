"""End to end: the plugin's own names are reserved for scores (issue 46, item 10).

The export writes one ``gen_ai.evaluation.result`` record per score, named as the score, and one of each
graded run's outcome, named ``probability.outcome``. A score of that name gave two records that could not be
told apart from the outcome's. Every name starting with ``probability.`` is refused, with an error that says
which names are reserved: ``record_score()`` (the run errors, naming it), ``min_score=`` (the benchmark's
collection error) and ``--prob-min-score`` (a usage error).
"""

from __future__ import annotations

import json

import pytest
from otlp_receiver import flatten_logs
from sessions import CONFTEST, clean_export_env

from pytest_probability.otel import otlp_json

RESERVED = "must not start with 'probability.', the plugin's own names"

BENCH = """
import pytest
from pytest_probability import record_score


@pytest.mark.probability(runs=2)
def bench_graded(n):
    record_score(0.4, "judge")
    record_score(0.9, "probability.outcome")
"""


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_score_named_as_the_outcome_record_is_refused_and_the_outcome_stays_one_record(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, mode: list[str]
) -> None:
    clean_export_env(monkeypatch, pytester)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(bench_scores=BENCH)
    result = pytester.runpytest_subprocess(
        *mode, "-p", "no:cacheprovider", "--prob-otel-file=otlp.jsonl", "--prob-json=r.json", timeout=180
    )
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [f"*ValueError: record_score() in bench_scores.py::bench_graded::run1: name {RESERVED}*"]
    )
    report = json.loads((pytester.path / "r.json").read_text(encoding="utf-8"))
    assert [r["outcome"] for r in report["records"]] == ["error", "error"]
    assert all([s["name"] for s in r["scores"]] == ["judge"] for r in report["records"])
    logs = flatten_logs(list(otlp_json.read_file(pytester.path / "otlp.jsonl")))
    by_run: dict[str, list[str]] = {}
    for log in logs:
        by_run.setdefault(log.span_id, []).append(log.attributes["gen_ai.evaluation.name"])
    assert sorted(by_run.values()) == [["judge", "probability.outcome"]] * 2
    outcomes = [log.attributes for log in logs if log.attributes["gen_ai.evaluation.name"] == "probability.outcome"]
    assert all(o["error.type"] == "ValueError" and o["gen_ai.evaluation.score.label"] == "fail" for o in outcomes)


def test_a_bar_on_a_reserved_name_is_refused_by_the_mark_and_the_option(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        bench_bars="""
import pytest


@pytest.mark.probability(runs=2, min_score={"Probability.Outcome": 0.5})
def bench_barred():
    pass
"""
    )
    marked = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=120)
    assert marked.ret == 2  # the benchmark's collection error
    marked.stdout.fnmatch_lines([f"*min_score*{RESERVED}*got 'Probability.Outcome'*"])
    pytester.makepyfile(bench_bars="def bench_free():\n    pass\n")
    option = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--prob-min-score=probability.x=0.5", timeout=120)
    assert option.ret == 4
    option.stderr.fnmatch_lines([f"*--prob-min-score*{RESERVED}*got 'probability.x'*"])
    fine = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--prob-min-score=probabilityx=0.5", timeout=120)
    assert fine.ret == 1  # only the namespace is the plugin's: this bar gates (undecided: no run recorded it)
    fine.stdout.fnmatch_lines(["*gate of free: UNDECIDED: score 'probabilityx': none recorded*"])
