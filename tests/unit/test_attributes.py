"""What a run says as OpenTelemetry attributes (``run/attributes.py``): its scores on its span, and its
``gen_ai.evaluation.result`` events (issue 31, part 6), on hand-built runs."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from pytest_probability.model.case import CaseRef
from pytest_probability.model.run import Score
from pytest_probability.model.run_state import CurrentRun
from pytest_probability.run.attributes import OUTCOME_EVALUATION, evaluated, evaluation_results, run_attributes

CASE = CaseRef(key="b.py::bench_x", benchmark="x", case="", label="x", order=0, runs=3)


@dataclass(frozen=True)
class Rules:
    bars: tuple[tuple[str, float], ...] = ()


def made(outcome: str | None = "pass", scores: tuple[Score, ...] = (), **fields: object) -> CurrentRun:
    run = CurrentRun(case=CASE, run=1, nodeid="b.py::bench_x[run1]", outcome=outcome, **fields)  # type: ignore[arg-type]
    run.scores.extend(scores)
    return run


def test_the_span_carries_each_scores_last_value_and_nothing_without_scores() -> None:
    run = made(scores=(Score("judge", 0.2), Score("rel", 0.5), Score("judge", 0.8)))
    attributes = run_attributes(run, capture=True)
    assert {k: v for k, v in attributes.items() if k.startswith("probability.score.")} == {
        "probability.score.judge": 0.8,
        "probability.score.rel": 0.5,
    }
    assert not any(key.startswith("probability.score") for key in run_attributes(made(), capture=True))


def test_a_run_graded_by_nothing_has_no_evaluation_result() -> None:
    assert evaluation_results(made()) == []
    assert evaluation_results(made("error", message="boom")) == []


def test_each_score_then_the_outcome() -> None:
    run = made("fail", (Score("judge", 0.3, 0.5, "too vague"), Score("rel", 0.9)), message="score 'judge' = 0.3 …")
    judge, rel, outcome = evaluation_results(run)
    shared = {"test.case.name": "b.py::x", "test.case.result.status": "fail"}
    assert judge == {
        "gen_ai.evaluation.name": "judge",
        "gen_ai.evaluation.score.value": 0.3,
        "gen_ai.evaluation.score.label": "fail",
        "gen_ai.evaluation.explanation": "too vague",
        **shared,
    }
    assert rel == {
        "gen_ai.evaluation.name": "rel",
        "gen_ai.evaluation.score.value": 0.9,
        **shared,
    }  # no threshold: no label
    assert outcome == {
        "gen_ai.evaluation.name": OUTCOME_EVALUATION,
        "gen_ai.evaluation.score.label": "fail",
        "gen_ai.evaluation.score.value": 0.0,
        "gen_ai.evaluation.explanation": "score 'judge' = 0.3 …",
        **shared,
    }
    assert evaluation_results(made("pass", (Score("judge", 0.5, 0.5),)))[0]["gen_ai.evaluation.score.label"] == "pass"


def test_an_errored_run_of_a_gated_case_says_its_error_type_and_no_value() -> None:
    run = made("error", score_rules=Rules((("judge", 0.5),)), error_type="TimeoutError", message="timed out")
    (outcome,) = evaluation_results(run)
    assert outcome["error.type"] == "TimeoutError" and outcome["gen_ai.evaluation.score.label"] == "fail"
    assert "gen_ai.evaluation.score.value" not in outcome


def test_a_skipped_runs_scores_have_no_outcome_and_no_status() -> None:
    (score,) = evaluation_results(made("skip", (Score("judge", 0.4),)))
    assert score["gen_ai.evaluation.name"] == "judge" and "test.case.result.status" not in score


@pytest.mark.parametrize(
    "operations, response",
    [([], None), ([(1, 2, "resp-1")], "resp-1"), ([(1, 2, "resp-1"), (1, 3, "resp-2")], None), ([(1, 2, "")], None)],
)
def test_the_response_id_of_the_one_genai_span(operations, response) -> None:
    run = made(scores=(Score("judge", 0.4),), operations=list(operations))
    assert evaluated(run) == (operations[0] if len(operations) == 1 else None)
    assert all(result.get("gen_ai.response.id") == response for result in evaluation_results(run))
