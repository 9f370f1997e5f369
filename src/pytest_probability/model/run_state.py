"""The run executing in this process: :class:`CurrentRun`, mutable until its :class:`~.run.RunRecord` is built.

Pure and pytest-free, as ``model.run`` is.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from ..value_classes import Record
from ..vocabulary import PASS
from .case import CaseRef
from .run import RunRecord, Score, Usage


class CurrentRun(Record):
    """Mutable state of the run executing in this process."""

    case: CaseRef
    run: int
    nodeid: str
    start_time: float
    usage: list[Usage]
    extra_cost: float
    outcome: str | None
    phase: str
    duration: float
    message: str
    error_type: str
    error_text: str
    trace_id: str
    span_id: str
    #: Usage read off spans that ended during the run (``prob_span_usage``); merged into ``usage``
    #: when the run ends (:func:`pytest_probability.run.context.settle`).
    span_usage: list[Usage]
    #: What the run's end applied (``prob_span_usage``, ``--prob-prices``), for its late usage.
    span_mode: str
    prices: Any
    #: Listeners called with each late usage (the run, Usage or None, extra cost), e.g. the late usage span;
    #: given the run, so that a listener need not hold it (no reference cycle through the run).
    late_listeners: list[Any]
    #: Listeners called with each Usage as it is recorded (e.g. span events).
    listeners: list[Any]
    #: Formatted traceback of the deciding exception, for observers that export it.
    stacktrace: str
    #: More plain-builtin attributes for the teardown report (e.g. the run's span).
    report_extras: dict[str, Any]
    #: Set once the record has been built: later usage is late (``run.recording.record_usage``).
    closed: bool
    #: Threads alive when the run started (threads started during it belong to it).
    threads_at_start: frozenset[threading.Thread]
    #: Why the run was not executed ("decided", "budget"); "" when it executed.
    stopped: str
    #: Failed attempts before the last (``--prob-retry``): attempt, error_type, error, wait.
    retries: list[dict[str, Any]]
    #: Call duration of the last attempt when the call was retried.
    attempt_duration: float | None
    #: What the run produced (``record_output``/``record_io``), plain dicts in call order.
    transcript: list[dict[str, Any]]
    #: Entries recorded once ``transcript`` held the cap, counted and not kept.
    transcript_dropped: int
    #: The run's scores (``record_score``), in the order recorded.
    scores: list[Score]
    #: What the run's scores are checked against (its case's range and bars: ``config.spec.ScoreRules``), set
    #: when the run starts; None: the default range 0..1.
    score_rules: Any
    #: Where usage and scores recorded after the run's end wait to travel (the run stage's ``LateQueue``).
    late_queue: Any
    #: The GenAI spans that ended inside the run outside ``judging()`` (trace id, span id, response id), the
    #: first two kept: what its evaluation results are of when there is exactly one (``run.attributes.evaluated``).
    operations: list[tuple[int, int, str]]
    #: Executed by the concurrent runs' window (``--prob-concurrency``), in a task or thread of its own: its
    #: call's outcome is its execution's (retried there), and its span lasts that call.
    concurrent: bool
    #: Started ahead of its item, in a context of its own (its task's or thread's): what it made current
    #: there (its span) ends with that context, not with its item.
    own_context: bool
    #: Epoch seconds when its call ended, for a concurrent run (its span ends then); None otherwise.
    call_end: float | None

    __slots__ = FIELDS = (
        "case",
        "run",
        "nodeid",
        "start_time",
        "usage",
        "extra_cost",
        "outcome",
        "phase",
        "duration",
        "message",
        "error_type",
        "error_text",
        "trace_id",
        "span_id",
        "span_usage",
        "span_mode",
        "prices",
        "late_listeners",
        "listeners",
        "stacktrace",
        "report_extras",
        "closed",
        "threads_at_start",
        "stopped",
        "retries",
        "attempt_duration",
        "transcript",
        "transcript_dropped",
        "scores",
        "score_rules",
        "late_queue",
        "operations",
        "concurrent",
        "own_context",
        "call_end",
    )

    def __init__(
        self,
        case: CaseRef,
        run: int,
        nodeid: str,
        start_time: float | None = None,
        usage: list[Usage] | None = None,
        extra_cost: float = 0.0,
        outcome: str | None = None,
        phase: str = "call",
        duration: float = 0.0,
        message: str = "",
        error_type: str = "",
        error_text: str = "",
        trace_id: str = "",
        span_id: str = "",
        span_usage: list[Usage] | None = None,
        span_mode: str = "",
        prices: Any = None,
        late_listeners: list[Any] | None = None,
        listeners: list[Any] | None = None,
        stacktrace: str = "",
        report_extras: dict[str, Any] | None = None,
        closed: bool = False,
        threads_at_start: frozenset[threading.Thread] = frozenset(),
        stopped: str = "",
        retries: list[dict[str, Any]] | None = None,
        attempt_duration: float | None = None,
        transcript: list[dict[str, Any]] | None = None,
        transcript_dropped: int = 0,
        scores: list[Score] | None = None,
        score_rules: Any = None,
        late_queue: Any = None,
        operations: list[tuple[int, int, str]] | None = None,
        concurrent: bool = False,
        own_context: bool = False,
        call_end: float | None = None,
    ) -> None:
        self.case = case
        self.run = run
        self.nodeid = nodeid
        self.start_time = time.time() if start_time is None else start_time
        self.usage = [] if usage is None else usage
        self.extra_cost = extra_cost
        self.outcome = outcome
        self.phase = phase
        self.duration = duration
        self.message = message
        self.error_type = error_type
        self.error_text = error_text
        self.trace_id = trace_id
        self.span_id = span_id
        self.span_usage = [] if span_usage is None else span_usage
        self.span_mode = span_mode
        self.prices = prices
        self.late_listeners = [] if late_listeners is None else late_listeners
        self.listeners = [] if listeners is None else listeners
        self.stacktrace = stacktrace
        self.report_extras = {} if report_extras is None else report_extras
        self.closed = closed
        self.threads_at_start = threads_at_start
        self.stopped = stopped
        self.retries = [] if retries is None else retries
        self.attempt_duration = attempt_duration
        self.transcript = [] if transcript is None else transcript
        self.transcript_dropped = transcript_dropped
        self.scores = [] if scores is None else scores
        self.score_rules = score_rules
        self.late_queue = late_queue
        self.operations = [] if operations is None else operations
        self.concurrent = concurrent
        self.own_context = own_context
        self.call_end = call_end

    def to_record(self) -> RunRecord:
        return RunRecord(
            case=self.case,
            run=self.run,
            nodeid=self.nodeid,
            outcome=self.outcome or PASS,
            duration=self.duration,
            message=self.message,
            error_type=self.error_type,
            error_text=self.error_text,
            phase=self.phase,
            usage=tuple(self.usage),
            extra_cost=self.extra_cost,
            trace_id=self.trace_id,
            span_id=self.span_id,
            start_time=self.start_time,
            stopped=self.stopped,
            retries=tuple(self.retries),
            transcript=tuple(self.transcript),
            transcript_dropped=self.transcript_dropped,
            scores=tuple(self.scores),
        )
