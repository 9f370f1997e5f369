"""A small, deterministic, simulated LLM client for the example benchmarks.

No network, no API key, no randomness you cannot reproduce. A simulated
model cannot read, so it answers from a table: :data:`KNOWLEDGE` maps a
snippet of input text to what a perfect model would answer, what a confused
one answers instead, and how often each simulated model gets it right or
times out. Those per-input, per-model numbers are the "accuracy knobs" that
make the example rows pass, flake, fail or error.

Every call draws from its own random generator, seeded by a hash of
``(seed, run, call number, model, prompt)``: the ``seed`` is the case's label
and ``run`` its run index (the ``llm`` fixture in ``conftest.py`` takes both
from the pytest item). So run 3 of ``triage::refund-terse`` gets the same
answer every time, in a serial session or in any pytest-xdist worker, and
different runs of one case get different answers. ``hashlib`` is used, not
``hash()``, whose value for strings changes between processes.

Prices are per million tokens. ``input_tokens`` counts all prompt tokens,
cached ones included (as most providers report it); ``cached`` is the part
of them served from the provider's prompt cache, billed at the cached price.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field


class SimError(Exception):
    """Base class of the simulated API's errors."""


class SimTimeout(SimError):
    """The simulated request timed out (some runs of slow cases)."""


class SimRateLimitError(SimError):
    """HTTP 429: the simulated account has no quota for this model."""


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens."""

    input: float
    output: float
    cached_input: float


PRICES: dict[str, Price] = {
    "m-small": Price(input=0.60, output=2.40, cached_input=0.30),
    "m-large": Price(input=3.00, output=12.00, cached_input=0.30),
}

#: Models that exist but the simulated account may not call: every request
#: is rate-limited (a quota/configuration problem, not bad luck).
NO_QUOTA = {"m-xl"}


@dataclass(frozen=True)
class Knowledge:
    """What the simulated models make of one input.

    ``accuracy`` and ``timeout`` are per model: the chance that a call returns
    ``answer`` (otherwise ``wrong``), and the chance that it times out before
    answering. ``step_by_step`` is added to the accuracy when the prompt asks
    the model to think step by step (capped at 1).
    """

    answer: str
    wrong: str
    accuracy: dict[str, float]
    timeout: dict[str, float] = field(default_factory=dict)
    step_by_step: float = 0.0


#: Input snippet -> knowledge. The first snippet found in the prompt wins.
KNOWLEDGE: dict[str, Knowledge] = {
    # classify
    "Can I change the delivery address": Knowledge(answer="yes", wrong="no", accuracy={"m-small": 1.0}),
    "my email is ana@example.com": Knowledge(answer="yes", wrong="no", accuracy={"m-small": 0.7}),
    # The model always answers with a currency sign; the benchmark expects a
    # bare number: a prompt/format bug that fails every run.
    "refund of 42 euros": Knowledge(answer="€42.00", wrong="42", accuracy={"m-small": 1.0}),
    # triage
    "my card was charged twice": Knowledge(
        answer="billing",
        wrong="account",
        accuracy={"m-small": 0.75, "m-large": 0.95},
        step_by_step=0.05,
    ),
    "the app crashes when I upload a photo": Knowledge(
        answer="technical",
        wrong="billing",
        accuracy={"m-small": 0.6, "m-large": 0.95},
        timeout={"m-small": 0.2, "m-large": 0.3},
        step_by_step=0.05,
    ),
    # summarize (graded by a rubric: bench_summarize.py)
    "I was charged twice for order 1042": Knowledge(
        answer="Customer charged twice for order 1042; wants the duplicate charge refunded; has the bank statement.",
        wrong="Customer has a billing problem with an order.",
        accuracy={"m-small": 0.6, "m-large": 0.95},
    ),
    "The export to CSV has failed since Monday": Knowledge(
        answer="CSV export failing since Monday; error 'timeout at 30 s'; blocks the monthly report.",
        wrong="Export is failing since Monday.",
        accuracy={"m-small": 0.1, "m-large": 0.8},
    ),
}


@dataclass(frozen=True)
class Response:
    """One completion. Has the attributes ``record_usage(response)`` reads."""

    model: str
    text: str
    input_tokens: int
    output_tokens: int
    cached: int
    cost: float

    @property
    def category(self) -> str:
        """The answer as a label: first word, lower case, no punctuation."""
        words = self.text.strip().split()
        return words[0].strip(".,:;!").lower() if words else ""

    @property
    def cached_input_tokens(self) -> int:
        """Alias of ``cached`` under the name ``record_usage()`` looks for."""
        return self.cached


def count_tokens(text: str) -> int:
    """A crude tokenizer: about four characters per token."""
    return max(1, (len(text) + 3) // 4)


class SimLLM:
    """The simulated client. One instance per run (see the ``llm`` fixture).

    ``seed`` and ``run`` identify the run; ``cached_prefix_tokens`` is how
    many leading prompt tokens the simulated provider serves from its cache,
    for models listed in ``cache_models``.
    """

    def __init__(self, seed: str, run: int, *, cache_models: tuple[str, ...] = ("m-large",)) -> None:
        self.seed = seed
        self.run = run
        self.cache_models = cache_models
        self.calls = 0

    def _rng(self, model: str, prompt: str) -> random.Random:
        self.calls += 1
        key = "\x1f".join((self.seed, str(self.run), str(self.calls), model, prompt))
        digest = hashlib.sha256(key.encode("utf-8")).digest()
        return random.Random(int.from_bytes(digest[:8], "big"))

    def complete(self, prompt: str, *, model: str = "m-small", system: str = "") -> Response:
        """Answer ``prompt`` (after the optional ``system`` prompt) with ``model``.

        Raises :class:`SimRateLimitError` for a model without quota,
        :class:`SimTimeout` now and then for slow inputs, ``ValueError`` for
        an unknown model.
        """
        if model in NO_QUOTA:
            raise SimRateLimitError(f"429 Too Many Requests: no quota for model {model!r} on this account")
        if model not in PRICES:
            raise ValueError(f"unknown model {model!r}; known: {', '.join(sorted(PRICES))}")
        rng = self._rng(model, system + "\n" + prompt)
        knowledge = next((k for snippet, k in KNOWLEDGE.items() if snippet in prompt), None)
        step_by_step = "step by step" in (system + prompt).lower()

        if knowledge is not None and rng.random() < knowledge.timeout.get(model, 0.0):
            raise SimTimeout(f"request to {model} timed out after 30 s")

        if knowledge is None:
            text = "I am not sure."
        else:
            accuracy = knowledge.accuracy.get(model, 0.5)
            if step_by_step:
                accuracy = min(1.0, accuracy + knowledge.step_by_step)
            text = knowledge.answer if rng.random() < accuracy else knowledge.wrong

        cached = count_tokens(system) if system and model in self.cache_models else 0
        input_tokens = count_tokens(system) + count_tokens(prompt) if system else count_tokens(prompt)
        # Reasoning first, answer last: step-by-step prompts produce more output.
        output_tokens = count_tokens(text) + (rng.randint(60, 120) if step_by_step else rng.randint(0, 3))
        if step_by_step:
            text = f"{text}\n(reasoning: {output_tokens - count_tokens(text)} tokens)"
        price = PRICES[model]
        cost = (
            (input_tokens - cached) * price.input + cached * price.cached_input + output_tokens * price.output
        ) / 1_000_000
        return Response(
            model=model,
            text=text,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cached=cached,
            cost=round(cost, 10),
        )
