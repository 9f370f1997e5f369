"""What a run says in OpenTelemetry's terms: its span's attributes, its span events', its evaluation results.

Pure and OpenTelemetry-free (``otel/spans.py`` puts these on the run's span and emits them): the run's
outcome, usage and scores as its span's attributes (:func:`run_attributes`), a ``record_usage()`` call or a
transcript entry as a span event's (:func:`usage_event`, :func:`transcript_attributes`), late usage as its
span's (:func:`late_attributes`), and each score and the outcome of a graded run as a
``gen_ai.evaluation.result`` event of the GenAI semantic conventions (:func:`evaluation_results`), about the
one GenAI span that ended inside the run, when there is one (:func:`evaluated`).
"""

from __future__ import annotations

import json
from typing import Any

from ..model.outputs import case_name
from ..model.run import Usage
from ..model.run_state import CurrentRun
from ..text import clip
from ..vocabulary import ERROR, FAIL, PASS, ROLE_JUDGE, SKIP, SOURCE_SPAN
from .spanusage import RESPONSE_ID

#: Messages on spans and events (``exception.message``, ``probability.assertion``, an explanation).
MESSAGE_LIMIT = 4096
#: The conventions' event for an evaluation's result, and the evaluation name of a run's outcome.
EVALUATION_EVENT = "gen_ai.evaluation.result"
OUTCOME_EVALUATION = "probability.outcome"


def usage_attributes(usage: list[Usage]) -> dict[str, Any]:
    """A run's usage (recorded and read off spans) as GenAI attributes: token sums, its parts when
    any, the model when there is one, and ``probability.usage.span_tokens`` (the tokens read off spans)."""
    attributes: dict[str, Any] = {
        "gen_ai.usage.input_tokens": sum(u.input_tokens for u in usage),
        "gen_ai.usage.output_tokens": sum(u.output_tokens for u in usage),
        "gen_ai.usage.cache_read.input_tokens": sum(u.cached_input_tokens for u in usage),
    }
    creation = sum(u.cache_creation_input_tokens for u in usage)
    if creation:
        attributes["gen_ai.usage.cache_creation.input_tokens"] = creation
    reasoning = sum(u.reasoning_tokens for u in usage)
    if reasoning:
        attributes["gen_ai.usage.reasoning.output_tokens"] = reasoning
    spans = sum(u.input_tokens + u.output_tokens for u in usage if u.source == SOURCE_SPAN)
    if spans:
        attributes["probability.usage.span_tokens"] = spans
    models = {u.model for u in usage}
    if len(models) == 1:
        attributes["gen_ai.request.model"] = models.pop()
    return attributes


def judge_attributes(usage: list[Usage]) -> dict[str, Any]:
    """The judge's usage of a run (``judging()``), apart from the system's GenAI attributes."""
    return {
        "probability.judge.input_tokens": sum(u.input_tokens for u in usage),
        "probability.judge.output_tokens": sum(u.output_tokens for u in usage),
        "probability.judge.cost": sum(u.cost for u in usage),
    }


def _messages(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}], ensure_ascii=False)


def transcript_attributes(entry: dict[str, Any]) -> dict[str, Any]:
    """One transcript entry as GenAI content attributes: ``prompt`` as ``gen_ai.input.messages``
    (a user message), ``output`` as ``gen_ai.output.messages`` (an assistant message), both JSON
    strings as the conventions allow on spans; other fields as ``probability.transcript.<name>``."""
    attributes: dict[str, Any] = {}
    for name, value in entry.items():
        if name == "truncated":
            attributes["probability.transcript.truncated"] = sorted(value)
        elif name == "prompt":
            attributes["gen_ai.input.messages"] = _messages("user", value)
        elif name == "output":
            attributes["gen_ai.output.messages"] = _messages("assistant", value)
        else:
            attributes[f"probability.transcript.{name}"] = value
    return attributes


def usage_event(usage: Usage) -> dict[str, Any]:
    """A ``record_usage()`` call as its ``probability.usage`` event's attributes (the judge's marked)."""
    attributes: dict[str, Any] = {
        "gen_ai.request.model": usage.model,
        "gen_ai.usage.input_tokens": usage.input_tokens,
        "gen_ai.usage.output_tokens": usage.output_tokens,
        "gen_ai.usage.cache_read.input_tokens": usage.cached_input_tokens,
        "probability.cost": usage.cost,
    }
    if usage.role == ROLE_JUDGE:  # the system's events stay as they were
        attributes["probability.usage.role"] = ROLE_JUDGE
    return attributes


def late_attributes(run: CurrentRun, usage: Usage | None, extra_cost: float) -> dict[str, Any]:
    """Usage charged to a run after its span ended, as the attributes of its ``probability.late_usage`` span."""
    attributes: dict[str, Any] = {"pytest.nodeid": run.nodeid, "probability.run": run.run, "probability.late": True}
    if usage is None:
        attributes["probability.cost"] = extra_cost
        return attributes
    attributes.update(usage_attributes([usage]))
    attributes["probability.cost"] = usage.cost
    if usage.role == ROLE_JUDGE:
        attributes["probability.usage.role"] = ROLE_JUDGE
    return attributes


def error_type(run: CurrentRun) -> str:
    """A failed or errored run's ``error.type``: its exception's type, else what its outcome implies."""
    return run.error_type or ("AssertionError" if run.outcome == FAIL else "Exception")


def run_attributes(run: CurrentRun, capture: bool) -> dict[str, Any]:
    """A run's span attributes at its end: its outcome and result status, its usage (the judge's apart) and
    cost, its skip reason (``capture``: ``--prob-otel-capture=all``), its error type, and each score's last value
    (``probability.score.<name>``, the name as ``record_score()`` checked it)."""
    outcome = run.outcome or SKIP
    attributes: dict[str, Any] = {"probability.outcome": outcome}
    if outcome in (PASS, FAIL, ERROR):
        attributes["test.case.result.status"] = "pass" if outcome == PASS else "fail"
    if run.usage:
        system = [u for u in run.usage if u.role != ROLE_JUDGE]
        if system:
            attributes.update(usage_attributes(system))
        if len(system) < len(run.usage):
            attributes.update(judge_attributes([u for u in run.usage if u.role == ROLE_JUDGE]))
    if run.usage or run.extra_cost:
        attributes["probability.cost"] = run.extra_cost + sum(u.cost for u in run.usage if u.role != ROLE_JUDGE)
    if outcome == SKIP and run.message and capture:
        attributes["probability.skip.reason"] = clip(run.message, MESSAGE_LIMIT)
    if outcome in (FAIL, ERROR):
        attributes["error.type"] = error_type(run)
    for score in run.scores:  # in the order recorded: a name's last value stays
        attributes[f"probability.score.{score.name}"] = score.value
    return attributes


def evaluated(run: CurrentRun) -> tuple[int, int, str] | None:
    """The GenAI span a run's evaluation is of: (trace id, span id, response id) of the one GenAI span that
    ended inside the run outside ``judging()``; None with none or several (then the run span is)."""
    return run.operations[0] if len(run.operations) == 1 else None


def evaluation_results(run: CurrentRun) -> list[dict[str, Any]]:
    """The attributes of a graded run's ``gen_ai.evaluation.result`` events: one per score, in the order
    recorded, then one of its outcome (not for a skip). A run graded neither by a score nor by a score
    gate of its case (``min_score``) has none. The explanations are the capture policy's to withhold."""
    if not run.scores and not getattr(run.score_rules, "bars", ()):
        return []
    outcome = run.outcome or SKIP
    shared: dict[str, Any] = {"test.case.name": case_name(run.case)}
    status = "pass" if outcome == PASS else "fail"
    if outcome != SKIP:
        shared["test.case.result.status"] = status
    operation = evaluated(run)
    if operation is not None and operation[2]:
        shared[RESPONSE_ID] = operation[2]
    results = []
    for score in run.scores:
        result = {"gen_ai.evaluation.name": score.name, "gen_ai.evaluation.score.value": score.value, **shared}
        if score.threshold is not None:
            result["gen_ai.evaluation.score.label"] = "pass" if score.value >= score.threshold else "fail"
        if score.explanation:
            result["gen_ai.evaluation.explanation"] = score.explanation
        results.append(result)
    if outcome == SKIP:
        return results
    result = {"gen_ai.evaluation.name": OUTCOME_EVALUATION, "gen_ai.evaluation.score.label": status, **shared}
    if outcome == ERROR:  # an error is no fail (prob_errors decides whether it counts): no value
        result["error.type"] = error_type(run)
    else:
        result["gen_ai.evaluation.score.value"] = 1.0 if outcome == PASS else 0.0
    if outcome != PASS and run.message:
        result["gen_ai.evaluation.explanation"] = clip(run.message, MESSAGE_LIMIT)
    results.append(result)
    return results
