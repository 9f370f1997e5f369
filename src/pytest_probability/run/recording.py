"""The public recording API: ``record_usage``, ``record_cost``, ``record_output``, ``record_io``, ``record_score``,
``TokenUsage``.

Each call validates its values (a clear error names the bad one) and charges
the current run (:mod:`.context`); usage survives failed asserts, errors and
skips of the run. Costs and tokens are bounded per call (:data:`MAX_COST`,
:data:`MAX_TOKENS`), so no sum of them can overflow and the reports only ever
hold finite numbers.
"""

from __future__ import annotations

import decimal
import json
import math
import numbers
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..config.values import check_score_name, score_number
from ..errors import ProbabilityUsageWarning
from ..model.run import Score, Usage
from ..text import clip, printable, well_formed
from ..vocabulary import ROLE_JUDGE, ROLES, UNKNOWN_MODEL
from . import context

#: Characters kept of each transcript value (``record_output``/``record_io``); longer ones are cut.
TRANSCRIPT_LIMIT = 16384
#: Transcript entries kept per run; later ones are counted (the record's ``transcript_dropped``), not kept.
TRANSCRIPT_ENTRIES = 1000
#: Largest cost one ``record_usage()`` or ``record_cost()`` call may record (in your currency).
#: With it, no sum of a session's costs can overflow a float (that would take 10**296 calls),
#: so the table and the JSON report only ever hold finite numbers.
MAX_COST = 1e12
#: Largest token count of one call, per field; sums stay exact and within 64-bit integers.
MAX_TOKENS = 10**12


_USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cached_input_tokens",
    "cache_creation_input_tokens",
    "reasoning_tokens",
)


@dataclass
class TokenUsage:
    """One model's calls within a run, to pass to :func:`record_usage` (a public type; any object
    or dict with these names does as well). Mutable, so that it can be filled in as calls return."""

    model: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    cost: float = 0.0


def _tokens(name: str, value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise TypeError(f"record_usage(): {name} must be a whole number of tokens, got {value!r}")
    if value < 0:
        raise ValueError(f"record_usage(): {name} must not be negative, got {value!r}")
    if value > MAX_TOKENS:
        raise ValueError(f"record_usage(): {name} must be at most {MAX_TOKENS:,} per call, got {value!r}")
    return int(value)


def _money(function: str, name: str, value: Any) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, decimal.Decimal)):
        raise TypeError(f"{function}(): {name} must be a number, got {value!r}")
    if isinstance(value, decimal.Decimal) and not value.is_finite():
        # float(Decimal("sNaN")) raises an InvalidOperation that names no argument.
        raise ValueError(f"{function}(): {name} must be finite, got {value!r}")
    try:
        number = float(value)
    except (ArithmeticError, ValueError):  # too large for a float (int, Fraction, Decimal)
        raise ValueError(f"{function}(): {name} must be at most {MAX_COST:g} per call, got {value!r}") from None
    if math.isnan(number) or (math.isinf(number) and isinstance(value, float)):
        raise ValueError(f"{function}(): {name} must be finite, got {value!r}")
    if number < 0:
        raise ValueError(f"{function}(): {name} must not be negative, got {value!r}")
    if number > MAX_COST:  # infinity here is a finite value too large for a float
        raise ValueError(f"{function}(): {name} must be at most {MAX_COST:g} per call, got {value!r}")
    return number


def _from_source(source: Any, name: str) -> Any:
    if isinstance(source, Mapping):
        return source.get(name)
    return getattr(source, name, None)


def record_usage(
    usage: Any = None,
    /,
    *,
    model: str | None = None,
    input_tokens: int | None = None,
    output_tokens: int | None = None,
    cached_input_tokens: int | None = None,
    cost: float | None = None,
    cache_creation_input_tokens: int | None = None,
    reasoning_tokens: int | None = None,
    role: str | None = None,
) -> Usage:
    """Attribute tokens (and optionally spend) of one model call to the current run.

    Pass the fields as keywords, or one dict or object that has them
    (``model``, ``input_tokens``, ``output_tokens``, ``cached_input_tokens``,
    ``cost``, ``cache_creation_input_tokens``, ``reasoning_tokens``); keywords win over the
    object's values. Cached and cache-creation tokens are parts of ``input_tokens``,
    reasoning tokens part of ``output_tokens``. ``role``: ``"judge"`` for a call that
    grades the answer (LLM-as-judge), ``"system"`` for the code under test; by default
    ``"judge"`` inside :func:`judging`, else ``"system"``. Usage survives failed
    asserts, errors and skips of the run. Returns what was recorded.
    """
    run = context.require_current("record_usage")
    values: dict[str, Any] = {}
    if usage is not None:
        for name in ("model", *_USAGE_FIELDS, "cost"):
            values[name] = _from_source(usage, name)
    given = {
        "model": model,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cached_input_tokens": cached_input_tokens,
        "cost": cost,
        "cache_creation_input_tokens": cache_creation_input_tokens,
        "reasoning_tokens": reasoning_tokens,
    }
    values.update({k: v for k, v in given.items() if v is not None})
    model_name = values.get("model")
    if model_name is None or model_name == "":
        model_name = UNKNOWN_MODEL
    elif not isinstance(model_name, str):
        raise TypeError(f"record_usage(): model must be a string, got {model_name!r}")
    else:
        model_name = well_formed(model_name)
    cost_value = _money("record_usage", "cost", values.get("cost"))
    if role is None:
        role = context.role_here()
    elif role not in ROLES:
        raise ValueError(f"record_usage(): role must be one of {', '.join(map(repr, ROLES))}, got {role!r}")
    recorded = Usage(
        model=model_name,
        input_tokens=_tokens("input_tokens", values.get("input_tokens")),
        output_tokens=_tokens("output_tokens", values.get("output_tokens")),
        cached_input_tokens=_tokens("cached_input_tokens", values.get("cached_input_tokens")),
        cost=cost_value,
        cache_creation_input_tokens=_tokens("cache_creation_input_tokens", values.get("cache_creation_input_tokens")),
        reasoning_tokens=_tokens("reasoning_tokens", values.get("reasoning_tokens")),
        role=role,
    )
    context.charge("record_usage", run, recorded, 0.0)
    if not run.closed:
        for listener in run.listeners:
            listener(recorded)
    return recorded


def record_cost(amount: float) -> float:
    """Attribute spend (in your currency, conventionally USD) to the current run; inside
    :func:`judging`, to its judge (as usage of no model with that cost)."""
    run = context.require_current("record_cost")
    value = _money("record_cost", "amount", amount)
    if context.role_here() == ROLE_JUDGE:
        context.charge("record_cost", run, Usage(cost=value, role=ROLE_JUDGE), 0.0)
    else:
        context.charge("record_cost", run, None, value)
    return value


judging = context.judging


def _transcript_text(value: Any) -> str:
    """A value as text: a string as is, anything else as its JSON (``repr`` for what JSON cannot hold);
    well-formed (:func:`~pytest_probability.text.well_formed`)."""
    if isinstance(value, str):
        return well_formed(value)
    try:
        return well_formed(json.dumps(value, ensure_ascii=False, default=repr))
    except (TypeError, ValueError):  # e.g. a circular structure
        return well_formed(repr(value))


def _transcript_entry(function: str, values: dict[str, Any]) -> dict[str, Any]:
    return _add_entry(context.require_current(function), function, values)


def _add_entry(run: Any, function: str, values: dict[str, Any], notify: bool = True) -> dict[str, Any]:
    if len(run.transcript) >= TRANSCRIPT_ENTRIES:  # past the cap (the list never shrinks): count, build nothing,
        context.add_transcript(run, {}, TRANSCRIPT_ENTRIES)  # so a run that records a million entries stays cheap
        return {}
    entry: dict[str, Any] = {}
    cut: dict[str, int] = {}
    for given, value in values.items():
        if value is None:
            continue
        name = well_formed(given)  # a field's name is any text (record_output(**{...}))
        if name == "truncated":
            raise ValueError(f"{function}(): 'truncated' is the name the record uses for cut values; pick another")
        text = _transcript_text(value)
        if len(text) > TRANSCRIPT_LIMIT:
            cut[name] = len(text)
            text = clip(text, TRANSCRIPT_LIMIT)
        entry[name] = text
    if cut:
        entry["truncated"] = cut
    if not context.add_transcript(run, entry, TRANSCRIPT_ENTRIES):
        return {}
    if notify:
        for listener in run.listeners:
            listener(entry)
    return entry


#: The GenAI conventions' message content on a span (captured when the instrumentation is told to:
#: ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only`` or ``span_and_event``).
INPUT_MESSAGES, OUTPUT_MESSAGES = "gen_ai.input.messages", "gen_ai.output.messages"


def messages_text(value: Any) -> str:
    """The conventions' messages (a JSON string, or the list itself) as text: one ``role: text`` line per
    message, its text parts joined; any other part (a tool call, an image) as its JSON."""
    messages = value
    if isinstance(value, str):
        try:
            messages = json.loads(value)
        except ValueError:
            return value
    if not isinstance(messages, (list, tuple)):
        return _transcript_text(messages)
    lines = []
    for message in messages:
        if not isinstance(message, Mapping):
            lines.append(_transcript_text(message))
            continue
        texts = []
        for part in message.get("parts") or ():
            if isinstance(part, Mapping) and part.get("type") == "text" and isinstance(part.get("content"), str):
                texts.append(part["content"])
            else:
                texts.append(_transcript_text(part))
        lines.append(f"{message.get('role') or 'message'}: {' '.join(texts)}")
    return "\n".join(lines)


def span_transcript(attributes: Mapping[str, Any]) -> bool:
    """A span's captured message content as a transcript entry of the run it ended in: ``prompt`` (its input
    messages), ``output`` (its output messages), ``model`` and ``source`` ``span``, cut as ``record_io``'s.
    False when the span carries no content or ended outside any run."""
    prompt, output = attributes.get(INPUT_MESSAGES), attributes.get(OUTPUT_MESSAGES)
    if prompt is None and output is None:
        return False
    run = context.run_of_context()
    if run is None:
        return False
    model = attributes.get("gen_ai.response.model") or attributes.get("gen_ai.request.model")
    values = {
        "prompt": messages_text(prompt) if prompt is not None else None,
        "output": messages_text(output) if output is not None else None,
        "model": model if isinstance(model, str) else None,
        "source": "span",
    }
    # Not onto the run span as an event: the content is on the span it came from already.
    _add_entry(run, "span_transcript", values, notify=False)
    return True


def record_output(output: Any, /, **fields: Any) -> dict[str, Any]:
    """Attach what the current run produced (and any named fields, e.g. ``tool_calls=``) to its record.

    Values are kept as text: a string as is, anything else as its JSON. Each
    value longer than :data:`TRANSCRIPT_LIMIT` characters is cut, and the
    entry's ``truncated`` maps its name to the original length. A run keeps
    its first :data:`TRANSCRIPT_ENTRIES` entries; later calls are counted in the
    record's ``transcript_dropped`` and return ``{}``. Survives failed asserts
    and errors of the run. Returns the entry recorded.
    """
    return _transcript_entry("record_output", {"output": output, **fields})


def record_io(*, prompt: Any = None, output: Any = None, **fields: Any) -> dict[str, Any]:
    """Attach one exchange of the current run: the prompt, the output and any named fields.

    Same rules as :func:`record_output`; a field left ``None`` is not recorded.
    """
    return _transcript_entry("record_io", {"prompt": prompt, "output": output, **fields})


def record_score(value: Any, name: str = "score", *, threshold: Any = None, explanation: Any = None) -> None:
    """Record a score of the current run (any number of calls per run, several names).

    ``value``: a finite real number in the case's score range; ``threshold``: the run fails when ``value``
    is below it (an ``AssertionError`` naming the score, its value and the threshold); ``explanation``: the
    grader's words, kept with the score (and out of the export under ``--prob-otel-capture=ids``).
    A bad value is a ``TypeError`` or ``ValueError`` naming the run and the score.
    """
    __tracebackhide__ = True
    run = context.require_current("record_score")
    rules = run.score_rules  # the scores feature's (its case's range), else 0..1
    low, high = (rules.low, rules.high) if rules is not None else (0.0, 1.0)
    span = f"[{low:g}, {high:g}]"
    where = f"record_score() in {run.nodeid}"
    score_name = check_score_name(name, f"{where}: name")
    number = score_number(value, f"{where}: score {score_name!r}")
    if not low <= number <= high:
        raise ValueError(
            f"{where}: score {score_name!r} is {number:g}, outside its score range {span} "
            "(ini prob_score_range, or the mark's score_range=)"
        )
    bar = None
    if threshold is not None:
        bar = score_number(threshold, f"{where}: the threshold of score {score_name!r}")
        if not low <= bar <= high:
            raise ValueError(
                f"{where}: the threshold of score {score_name!r} is {bar:g}, outside its score range {span}"
            )
    if explanation is not None and not isinstance(explanation, str):
        raise TypeError(
            f"{where}: the explanation of score {score_name!r} must be text, got {type(explanation).__name__}"
        )
    score = Score(score_name, number, bar, clip(well_formed(explanation or ""), TRANSCRIPT_LIMIT))
    if context.charge_score(run, score):
        warnings.warn(
            ProbabilityUsageWarning(
                printable(
                    f"record_score() was called after run {run.nodeid} had ended (from a thread or task that outlived it); "
                    "charged to that run"
                    + (", whose outcome its threshold can no longer change" if bar is not None else "")
                )
            ),
            stacklevel=2,
        )
        return
    if bar is not None and number < bar:
        raise AssertionError(f"score {score_name!r} = {number:g} is below its threshold {bar:g}")


@dataclass(frozen=True)
class RunInfo:
    """Which run the calling code belongs to (:func:`current_run`)."""

    #: The row label, ``classify::identify_pii``.
    label: str
    #: The case's node id, without the run suffix.
    case: str
    #: The run number, from 1.
    run: int
    #: The run's node id.
    nodeid: str


def current_run() -> RunInfo:
    """The run executing in the calling context, the one ``record_usage()`` charges: a run executing ahead of
    its item (``--prob-concurrency``) in its own task or thread, else the calling thread's, else the process's.
    Where ``request.node.prob_run`` cannot be read (a run that executes ahead asks for no ``request``), this
    tells a benchmark which run it is, to seed a client, say. A ``RuntimeError`` outside a run."""
    run = context.require_current("current_run")
    return RunInfo(run.case.label, run.case.key, run.run, run.nodeid)
