"""Usage read off a span's attributes (the GenAI semantic conventions, OpenInference and OpenLIT names).

Pure and OpenTelemetry-free: :func:`usage_of` takes a span's attribute
mapping, so the span processor (``otel/usage_spans.py``) and the tests share one
reading (what a run says back, as attributes, is :mod:`.attributes`). The rules of the reading
(docs/reference.md, "Usage from spans"):

* tokens: ``gen_ai.usage.input_tokens`` / ``gen_ai.usage.output_tokens``,
  else OpenInference's ``llm.token_count.prompt`` / ``llm.token_count.completion``
  (one family per span, never both added);
* parts, never added again: cached input (``gen_ai.usage.cache_read.input_tokens``,
  ``llm.token_count.prompt_details.cache_read``), cache creation
  (``gen_ai.usage.cache_creation.input_tokens``, util-genai's
  ``gen_ai.usage.cache_write.input_tokens``, ``llm.token_count.prompt_details.cache_write``)
  and reasoning output (``gen_ai.usage.reasoning.output_tokens``, OpenLIT's
  ``gen_ai.usage.reasoning_tokens``, ``llm.token_count.completion_details.reasoning``);
* cost, in USD, set by an instrumentation: OpenLIT's ``gen_ai.usage.cost``,
  else OpenInference's ``llm.cost.total``;
* the model: ``gen_ai.response.model``, else ``gen_ai.request.model``, else
  OpenInference's ``llm.model_name``.

A value that is not a whole number of tokens (or a finite cost) within the
limits of ``record_usage()`` is ignored, never raised: a span processor must
not throw.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..model.run import Usage
from ..text import well_formed
from ..vocabulary import SOURCE_SPAN, UNKNOWN_MODEL
from .recording import MAX_COST, MAX_TOKENS

INPUT, OUTPUT = "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"
CACHE_READ = "gen_ai.usage.cache_read.input_tokens"
CACHE_CREATION = ("gen_ai.usage.cache_creation.input_tokens", "gen_ai.usage.cache_write.input_tokens")
REASONING = ("gen_ai.usage.reasoning.output_tokens", "gen_ai.usage.reasoning_tokens")
RESPONSE_MODEL, REQUEST_MODEL = "gen_ai.response.model", "gen_ai.request.model"
#: The attribute every GenAI span has (a span with it is a GenAI operation), and the id of its response.
OPERATION, RESPONSE_ID = "gen_ai.operation.name", "gen_ai.response.id"
OI_PROMPT, OI_COMPLETION = "llm.token_count.prompt", "llm.token_count.completion"
OI_CACHE_READ = "llm.token_count.prompt_details.cache_read"
OI_CACHE_WRITE = "llm.token_count.prompt_details.cache_write"
OI_REASONING = "llm.token_count.completion_details.reasoning"
OI_MODEL = "llm.model_name"
COST = ("gen_ai.usage.cost", "llm.cost.total")
#: Any of these on a span means it may carry usage (the fast test for every span ended).
MARKERS = (INPUT, OUTPUT, OI_PROMPT, OI_COMPLETION, *COST)


def _tokens(value: Any) -> int:
    if isinstance(value, bool):
        return 0
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and 0 <= value <= MAX_TOKENS:
        return value
    return 0


def _first(attributes: Mapping[str, Any], names: tuple[str, ...]) -> Any:
    for name in names:
        value = attributes.get(name)
        if value is not None:
            return value
    return None


def _cost(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0.0
    number = float(value)
    return number if math.isfinite(number) and 0 <= number <= MAX_COST else 0.0


def usage_of(attributes: Mapping[str, Any] | None) -> Usage | None:
    """The usage a span's attributes carry, or None when they carry none."""
    if not attributes:
        return None
    get = attributes.get
    if get(INPUT) is not None or get(OUTPUT) is not None:
        input_tokens = _tokens(get(INPUT))
        output_tokens = _tokens(get(OUTPUT))
        cached = _tokens(get(CACHE_READ))
        creation = _tokens(_first(attributes, CACHE_CREATION))
        reasoning = _tokens(_first(attributes, REASONING))
    elif get(OI_PROMPT) is not None or get(OI_COMPLETION) is not None:
        input_tokens = _tokens(get(OI_PROMPT))
        output_tokens = _tokens(get(OI_COMPLETION))
        cached = _tokens(get(OI_CACHE_READ))
        creation = _tokens(get(OI_CACHE_WRITE))
        reasoning = _tokens(get(OI_REASONING))
    else:
        input_tokens = output_tokens = cached = creation = reasoning = 0
    cost = _cost(_first(attributes, COST))
    if not (input_tokens or output_tokens or cost):
        return None
    response = get(RESPONSE_MODEL)
    request = get(REQUEST_MODEL)
    if not isinstance(response, str) or not response:
        response = None
    if not isinstance(request, str) or not request:
        request = None
    model = response or request
    if model is None:
        named = get(OI_MODEL)
        model = named if isinstance(named, str) and named else UNKNOWN_MODEL
    model, request = well_formed(model), well_formed(request) if request else request
    return Usage(
        model=model,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cached_input_tokens=min(cached, input_tokens),
        cache_creation_input_tokens=min(creation, input_tokens),
        reasoning_tokens=min(reasoning, output_tokens),
        cost=cost,
        source=SOURCE_SPAN,
        request_model=request if request and request != model else "",
    )
