"""What one run produced: its :class:`Usage` calls, its :class:`Score` results, the :class:`RunRecord`.

Pure and pytest-free. A :class:`RunRecord` is built in the process that
executed the run (from its :class:`~.run_state.CurrentRun`), travels to the aggregating
process as plain builtins (:meth:`RunRecord.to_dict` /
:meth:`RunRecord.from_dict`), and is the only input of aggregation, decisions,
reporting and export.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from typing import Any, Final

from ..value_classes import Value
from ..vocabulary import ROLE_JUDGE, ROLE_SYSTEM, SOURCE_RECORD, UNKNOWN_MODEL
from .case import CaseRef


class Usage(Value):
    """Tokens and spend of one ``record_usage()`` call, or of one span that carried GenAI usage.

    ``cached_input_tokens`` and ``cache_creation_input_tokens`` are parts of
    ``input_tokens``, ``reasoning_tokens`` part of ``output_tokens``: never added again.
    """

    model: Final[str]
    input_tokens: Final[int]
    output_tokens: Final[int]
    cached_input_tokens: Final[int]
    cost: Final[float]
    cache_creation_input_tokens: Final[int]
    reasoning_tokens: Final[int]
    #: Where it came from: ``record`` (``record_usage()``) or ``span`` (a span's GenAI attributes).
    source: Final[str]
    #: The span's request model when its response model (``model``) differs; "" otherwise.
    request_model: Final[str]
    #: True when the cost is its tokens times ``--prob-prices`` (no cost was recorded).
    priced: Final[bool]
    #: ``system`` (the code under test) or ``judge`` (grading its answer: ``judging()``).
    role: Final[str]

    __slots__ = FIELDS = (
        "model",
        "input_tokens",
        "output_tokens",
        "cached_input_tokens",
        "cost",
        "cache_creation_input_tokens",
        "reasoning_tokens",
        "source",
        "request_model",
        "priced",
        "role",
    )

    def __init__(
        self,
        model: str = UNKNOWN_MODEL,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cached_input_tokens: int = 0,
        cost: float = 0.0,
        cache_creation_input_tokens: int = 0,
        reasoning_tokens: int = 0,
        source: str = SOURCE_RECORD,
        request_model: str = "",
        priced: bool = False,
        role: str = ROLE_SYSTEM,
    ) -> None:
        self.model = model
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        self.cached_input_tokens = cached_input_tokens
        self.cost = cost
        self.cache_creation_input_tokens = cache_creation_input_tokens
        self.reasoning_tokens = reasoning_tokens
        self.source = source
        self.request_model = request_model
        self.priced = priced
        self.role = role

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cached_input_tokens": self.cached_input_tokens,
            "cost": self.cost,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "source": self.source,
            "request_model": self.request_model,
            "priced": self.priced,
            "role": self.role,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Usage:
        return cls(**{name: data[name] for name in cls.FIELDS if name in data})


class Score(Value):
    """One ``record_score()`` call: a graded result of its run (a judge's score, a similarity, a rubric's share).

    ``value`` is a finite real number in the case's score range; ``threshold``, when given, makes it a
    check (the run fails below it); ``explanation``, the grader's words (cut to a bounded length)."""

    name: Final[str]
    value: Final[float]
    threshold: Final[float | None]
    explanation: Final[str]

    __slots__ = FIELDS = ("name", "value", "threshold", "explanation")

    def __init__(self, name: str, value: float, threshold: float | None = None, explanation: str = "") -> None:
        self.name = name
        self.value = value
        self.threshold = threshold
        self.explanation = explanation

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "value": self.value,
            "threshold": self.threshold,
            "explanation": self.explanation or None,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Score:
        threshold = data.get("threshold")
        return cls(
            str(data["name"]),
            float(data["value"]),
            None if threshold is None else float(threshold),
            str(data.get("explanation") or ""),
        )


def scores_named(records: Iterable[RunRecord], name: str) -> list[float]:
    """The values of score ``name`` in ``records``, in run order (a run's several in the order recorded):
    the order every interval of scores is computed in (``maths.scores``), in every process."""
    return [
        score.value for record in sorted(records, key=lambda r: r.run) for score in record.scores if score.name == name
    ]


class RunRecord(Value):
    """The outcome of one run, one pytest item."""

    case: Final[CaseRef]
    run: Final[int]
    nodeid: Final[str]
    outcome: Final[str]
    duration: Final[float]
    message: Final[str]
    error_type: Final[str]
    error_text: Final[str]
    #: Which phase decided the outcome: ``setup``, ``call`` or ``teardown``.
    phase: Final[str]
    usage: Final[tuple[Usage, ...]]
    #: Spend recorded with ``record_cost()`` (not tied to a model).
    extra_cost: Final[float]
    #: Trace and span id of the run's span when exported (hex), else "".
    trace_id: Final[str]
    span_id: Final[str]
    start_time: Final[float]
    #: Why the run was not executed: "decided" (its case was decided early) or
    #: "budget" (a session budget was reached); "" for a run that executed.
    stopped: Final[str]
    #: Failed attempts before the last one (``--prob-retry``), plain dicts:
    #: ``attempt``, ``error_type``, ``error``, ``wait`` (seconds slept after it).
    retries: Final[tuple[dict[str, Any], ...]]
    #: What the run produced (``record_output``/``record_io``), plain dicts of
    #: text values; ``truncated`` maps a cut value's name to its original length.
    transcript: Final[tuple[dict[str, Any], ...]]
    #: Transcript entries recorded past the cap (``run.recording.TRANSCRIPT_ENTRIES``) and not kept.
    transcript_dropped: Final[int]
    #: The run's graded results (``record_score``), in the order recorded.
    scores: Final[tuple[Score, ...]]

    __slots__ = FIELDS = (
        "case",
        "run",
        "nodeid",
        "outcome",
        "duration",
        "message",
        "error_type",
        "error_text",
        "phase",
        "usage",
        "extra_cost",
        "trace_id",
        "span_id",
        "start_time",
        "stopped",
        "retries",
        "transcript",
        "transcript_dropped",
        "scores",
    )

    def __init__(
        self,
        case: CaseRef,
        run: int,
        nodeid: str,
        outcome: str,
        duration: float = 0.0,
        message: str = "",
        error_type: str = "",
        error_text: str = "",
        phase: str = "call",
        usage: tuple[Usage, ...] = (),
        extra_cost: float = 0.0,
        trace_id: str = "",
        span_id: str = "",
        start_time: float = 0.0,
        stopped: str = "",
        retries: tuple[dict[str, Any], ...] = (),
        transcript: tuple[dict[str, Any], ...] = (),
        transcript_dropped: int = 0,
        scores: tuple[Score, ...] = (),
    ) -> None:
        self.case = case
        self.run = run
        self.nodeid = nodeid
        self.outcome = outcome
        self.duration = duration
        self.message = message
        self.error_type = error_type
        self.error_text = error_text
        self.phase = phase
        self.usage = usage
        self.extra_cost = extra_cost
        self.trace_id = trace_id
        self.span_id = span_id
        self.start_time = start_time
        self.stopped = stopped
        self.retries = retries
        self.transcript = transcript
        self.transcript_dropped = transcript_dropped
        self.scores = scores

    @property
    def attempts(self) -> int:
        return 1 + len(self.retries)

    @property
    def cost(self) -> float:
        """The system's spend (``record_cost()`` and its usage); the judge's is :attr:`judge_cost`."""
        if not self.usage:
            return self.extra_cost  # the usual record: no generator to sum
        return self.extra_cost + sum(u.cost for u in self.usage if u.role != ROLE_JUDGE)

    @property
    def judge_cost(self) -> float:
        """The judge's spend (usage recorded inside ``judging()`` or with ``role="judge"``)."""
        if not self.usage:
            return 0.0
        return sum(u.cost for u in self.usage if u.role == ROLE_JUDGE)

    @property
    def spend(self) -> float:
        """Everything the run spent, the judge's included: what budgets count."""
        return self.cost + self.judge_cost

    def to_dict(self, case: bool = True) -> dict[str, Any]:
        """Plain builtins only, safe for xdist's execnet channel and JSON.

        ``case=False``: the case as its key only, for a process that has its CaseRef
        (:meth:`from_dict` with ``cases``), such as the one that built the record.
        """
        return {
            "case": self.case.to_dict() if case else {"key": self.case.key},
            "run": self.run,
            "nodeid": self.nodeid,
            "outcome": self.outcome,
            "duration": self.duration,
            "message": self.message,
            "error_type": self.error_type,
            "error_text": self.error_text,
            "phase": self.phase,
            "usage": [u.to_dict() for u in self.usage],
            "extra_cost": self.extra_cost,
            "trace_id": self.trace_id,
            "span_id": self.span_id,
            "start_time": self.start_time,
            "stopped": self.stopped,
            "retries": [dict(r) for r in self.retries],
            "transcript": [dict(t) for t in self.transcript],
            "transcript_dropped": self.transcript_dropped,
            "scores": [score.to_dict() for score in self.scores],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], cases: dict[str, CaseRef] | None = None) -> RunRecord:
        """Rebuild a record; ``cases`` (case key -> CaseRef) shares one CaseRef per case.

        Field by field with their defaults (one call per run, on the aggregating process's
        path), not through a filtered copy of ``data``; keys that are no field are ignored.
        """
        case_data = data["case"]
        case = cases.get(case_data["key"]) if cases is not None else None
        if case is None:
            if len(case_data) == 1:
                raise ValueError(
                    f"record of run {data.get('nodeid')!r} names its case {case_data['key']!r} "
                    "by key only, and this process has no such case"
                )
            case = CaseRef.from_dict(case_data)
            if cases is not None:
                cases[case.key] = case
        get = data.get
        usage = get("usage")
        retries = get("retries")
        transcript = get("transcript")
        return cls(
            case=case,
            run=data["run"],
            nodeid=data["nodeid"],
            outcome=data["outcome"],
            duration=get("duration", 0.0),
            message=get("message", ""),
            error_type=get("error_type", ""),
            error_text=get("error_text", ""),
            phase=get("phase", "call"),
            usage=tuple(Usage.from_dict(u) for u in usage) if usage else (),
            extra_cost=get("extra_cost", 0.0),
            trace_id=_shared(get("trace_id", "")),
            span_id=get("span_id", ""),
            start_time=get("start_time", 0.0),
            stopped=get("stopped", ""),
            retries=tuple(dict(r) for r in retries) if retries else (),
            transcript=tuple(dict(t) for t in transcript) if transcript else (),
            transcript_dropped=get("transcript_dropped", 0),
            scores=tuple(Score.from_dict(score) for score in scores) if (scores := get("scores")) else (),
        )


def _shared(text: Any) -> Any:
    """One string for equal texts: a session's runs share its trace id, and the records keep it."""
    return sys.intern(text) if type(text) is str else text
