"""Support-ticket triage: two prompts (and models) on two tickets, plus a summary.

Stacked ``parametrize`` decorators make every combination a case; the
decorator nearest the function comes first in the id, so the rows are
``triage::refund-terse``, ``triage::outage-terse``,
``triage::refund-chain_of_thought``, ``triage::outage-chain_of_thought``.

With the simulated client (``simllm.py``) and ten runs:

- ``refund-terse``             FLAKY: the small model sometimes says "account"
- ``refund-chain_of_thought``  passes every run (large model, step by step)
- ``outage-terse``             FLAKY (N errored): wrong answers and timeouts
- ``outage-chain_of_thought``  N ERRORED: always right when it answers, but
  some requests time out (an exception other than AssertionError is an error)
- ``escalation_summary``       ERROR: every run is rate-limited (HTTP 429,
  no quota for ``m-xl``), so no run ever produces a sample

The chain-of-thought prompt has a long, fixed system prompt; the simulated
provider serves it from its prompt cache, so ``m-large`` shows cached tokens.
"""

from __future__ import annotations

import pytest
from simllm import SimLLM

from pytest_probability import record_cost, record_usage

SYSTEM = (
    "You are the triage assistant of ACME support. Categories: billing (payments, "
    "charges, refunds, invoices), account (login, password, profile, deletion), "
    "technical (crashes, errors, performance, uploads). Think step by step about "
    "which category fits, then give the category as the first word of your answer. "
    "Be careful: a refund request about a crash is billing, a crash is technical."
)

PROMPTS = {
    # name: (model, system prompt, user prompt template)
    "terse": ("m-small", "", "Category (billing/account/technical) of this ticket: {text}"),
    "chain_of_thought": ("m-large", SYSTEM, "Ticket: {text}"),
}

#: Flat price of one look-up in the (simulated) paid CRM API.
CRM_LOOKUP_COST = 0.0002


@pytest.mark.parametrize("prompt", ["terse", "chain_of_thought"])
@pytest.mark.parametrize(
    "text, category",
    [
        pytest.param("Hello, my card was charged twice for order 1182.", "billing", id="refund"),
        pytest.param("Since yesterday the app crashes when I upload a photo.", "technical", id="outage"),
    ],
)
def bench_triage(llm: SimLLM, text: str, category: str, prompt: str) -> None:
    model, system, template = PROMPTS[prompt]
    if system:
        # Spend that is not tokens of a model: record_cost() adds it to the
        # run's (and the row's) cost, not to any model's token line.
        record_cost(CRM_LOOKUP_COST)
    response = llm.complete(template.format(text=text), model=model, system=system)
    # record_usage() also takes an object with model, input_tokens,
    # output_tokens, cached_input_tokens and cost attributes.
    record_usage(response)
    assert response.category == category


# A marker sets the runs of this benchmark when --prob-runs is not given
# (`pytest examples` runs it 3 times). The command line wins over the
# marker: with `make demo` (--prob-runs=10) it runs 10 times like the rest.
@pytest.mark.probability(runs=3)
def bench_escalation_summary(llm: SimLLM) -> None:
    response = llm.complete("Summarize the open tickets of today for the on-call engineer.", model="m-xl")
    record_usage(response)
    assert response.text
