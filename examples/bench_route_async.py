"""An async benchmark on the real ``openai`` client, instrumented by OpenTelemetry's GenAI instrumentation,
with 4 runs in flight at once (``concurrency=4``: each run a task on pytest-asyncio's loop).

The client talks to the loopback server of ``fake_openai.py`` (``conftest.py`` starts it and
instruments the SDK). The benchmark records no usage: the tokens come from the
instrumentation's spans, and ``make demo`` prices them with ``examples/prices.toml``
(``--prob-prices``). It needs ``openai``, ``opentelemetry-instrumentation-genai-openai`` and
pytest-asyncio (all in the ``test`` extras); without them the file is skipped.
"""

from __future__ import annotations

import pytest

from pytest_probability import current_run

openai = pytest.importorskip("openai")
pytest.importorskip("opentelemetry.instrumentation.genai.openai")
pytest.importorskip("pytest_asyncio")

QUESTIONS = {
    "refund": "I was charged twice for one order.",
    "outage": "The site is down since noon.",
}


@pytest.mark.probability(concurrency=4)
@pytest.mark.asyncio
@pytest.mark.parametrize("expected", list(QUESTIONS))
async def bench_route_async(expected: str) -> None:
    client = openai.AsyncOpenAI()
    reply = await client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[
            {"role": "system", "content": "Answer refund, outage or other."},
            {"role": "user", "content": QUESTIONS[expected]},
        ],
        # the loopback server's seed: every run answers the same each time (current_run(): a run in flight
        # with others has no request fixture to read its number from)
        user=f"run{current_run().run}",
    )
    assert reply.choices[0].message.content == expected
