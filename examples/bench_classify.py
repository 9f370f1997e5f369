"""Small classification tasks on the cheap model.

One benchmark, three cases (one ``pytest.param`` each, with an id that
becomes the row label ``classify::<id>``). With the simulated client
(``simllm.py``) and ten runs:

- ``classify::is_question``   passes every run            (no status word)
- ``classify::identify_pii``  passes about 7 runs in 10   FLAKY
- ``classify::extract_amount`` never passes                FAIL: the model answers
  "€42.00" but the benchmark wants a bare number, a prompt bug the table exposes.
"""

from __future__ import annotations

import pytest
from simllm import SimLLM

from pytest_probability import record_io, record_usage

PROMPT = "{task}\nAnswer with one word or number only.\n\nMessage: {text}"


@pytest.mark.parametrize(
    "task, text, expected",
    [
        pytest.param(
            "Is this message a question? (yes/no)",
            "Can I change the delivery address of my order?",
            "yes",
            id="is_question",
        ),
        pytest.param(
            "Does this message contain personal data? (yes/no)",
            "Hi, my email is ana@example.com, please call me back.",
            "yes",
            id="identify_pii",
        ),
        pytest.param(
            "What amount of money does the customer ask for?",
            "I would like a refund of 42 euros for the broken lamp.",
            "42.00",
            id="extract_amount",
        ),
    ],
)
def bench_classify(llm: SimLLM, task: str, text: str, expected: str) -> None:
    prompt = PROMPT.format(task=task, text=text)
    response = llm.complete(prompt, model="m-small")
    # The transcript: what a failed run answered, in the JSON and the HTML report.
    record_io(prompt=prompt, output=response.text)
    # Record before asserting: usage of a failed run still counts.
    record_usage(
        model=response.model,
        input_tokens=response.input_tokens,
        output_tokens=response.output_tokens,
        cached_input_tokens=response.cached,
        cost=response.cost,
    )
    assert response.category == expected
