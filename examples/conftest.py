"""Fixtures of the example benchmarks.

Each run of a benchmark is a real pytest item, so a function-scoped fixture
gives every run a fresh client. The item knows which case and which run it
is (``request.node.prob_case.label`` and ``request.node.prob_run``); seeding
the simulated client with both makes every run reproducible, serially and
under pytest-xdist alike.
"""

from __future__ import annotations

import importlib.util
import os

import pytest
from simllm import SimLLM

# The async example (bench_route_async.py) uses the real openai client against a loopback server,
# instrumented by OpenTelemetry's GenAI instrumentation, whose spans carry the tokens.
if importlib.util.find_spec("openai") and importlib.util.find_spec("opentelemetry.instrumentation.genai.openai"):
    import fake_openai
    from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor

    os.environ["OPENAI_BASE_URL"] = fake_openai.start()
    os.environ.setdefault("OPENAI_API_KEY", "not-a-real-key")
    OpenAIInstrumentor().instrument()


@pytest.fixture
def llm(request: pytest.FixtureRequest) -> SimLLM:
    node = request.node
    case = getattr(node, "prob_case", None)
    if case is None:  # a plain test_* function using the fixture
        return SimLLM(seed=node.nodeid, run=0)
    return SimLLM(seed=case.label, run=node.prob_run)
