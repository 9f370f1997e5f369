"""Graded results: summaries scored by a rubric, not passed or failed.

A support ticket is summarized by the simulated model, and an offline rubric
judge gives the summary a share of points: one point for each key fact of the
ticket it keeps (``RUBRIC``). ``record_score()`` records that share, 0 to 1,
with the judge's explanation; ``min_score`` gates each case on the *mean*
score, with an interval that holds at few runs (the hedged betting interval),
so the gate says PASS, FAIL or UNDECIDED as a rate gate does. With ten runs:

- ``summarize::double_charge-m-large``  every fact kept: PASS against 0.6
- ``summarize::double_charge-m-small``  mean 0.6: UNDECIDED (ten runs cannot tell)
- ``summarize::csv_export-m-large``     mean 0.93 against 0.8: UNDECIDED at ten runs
- ``summarize::csv_export-m-small``     mean 0.33: FAIL against 0.8

A second score, ``brevity``, only reports (no bar): the share of the 20-word
budget the summary left unused.
"""

from __future__ import annotations

import pytest
from simllm import SimLLM

from pytest_probability import record_score, record_usage

TICKETS = {
    "double_charge": "I was charged twice for order 1042 and I want the duplicate charge refunded. "
    "I attached my bank statement.",
    "csv_export": "The export to CSV has failed since Monday with 'timeout at 30 s', and we cannot send "
    "the monthly report without it.",
}

#: What a good summary keeps: the ticket's key facts, each one point.
RUBRIC = {
    "double_charge": ("charged twice", "1042", "refund"),
    "csv_export": ("csv", "monday", "timeout", "report"),
}


def judge(ticket: str, summary: str) -> tuple[float, str]:
    """The rubric's share of points, and which facts the summary missed."""
    facts = RUBRIC[ticket]
    kept = [fact for fact in facts if fact in summary.lower()]
    missed = [fact for fact in facts if fact not in kept]
    return len(kept) / len(facts), ("missed: " + ", ".join(missed)) if missed else "kept every fact"


@pytest.mark.parametrize("model", ["m-large", "m-small"])
@pytest.mark.parametrize(
    "ticket", ["double_charge", pytest.param("csv_export", marks=pytest.mark.probability(min_score={"rubric": 0.8}))]
)
@pytest.mark.probability(min_score={"rubric": 0.6})
def bench_summarize(llm: SimLLM, ticket: str, model: str) -> None:
    response = llm.complete(f"Summarize this support ticket in at most 20 words.\n\n{TICKETS[ticket]}", model=model)
    record_usage(response)
    score, explanation = judge(ticket, response.text)
    record_score(score, "rubric", explanation=explanation)
    record_score(max(0.0, 1 - len(response.text.split()) / 20), "brevity")
