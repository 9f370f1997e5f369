"""The records into the session, in the aggregating process: off each teardown report, late, or from a crash.

:class:`Intake` takes each run's record off its teardown report (and, from
it, what features shipped with it: their :class:`~pytest_probability.protocols.Link`
attributes), hands it to every :class:`~pytest_probability.protocols.RecordLog`
(the journal), keeps it, and hands it to every
:class:`~pytest_probability.protocols.RecordSink` (the decision book, budgets).
:class:`InFlight` is the xdist controller's view of the runs executing now,
which turns a worker crash into an errored record of the run it hit.
Records are dropped from reports after use: pytest's terminal reporter keeps
every report until the session ends.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from queue import Empty
from typing import TYPE_CHECKING, Any

import pytest

from ..model.case import CaseRef
from ..model.run import RunRecord, Score, Usage
from ..protocols import Link, Registry
from ..run.announce import read_announced
from ..run.recording import TRANSCRIPT_ENTRIES
from ..vocabulary import INTERRUPTED_ATTRIBUTE, LATE_ATTRIBUTE, RECORD_ATTRIBUTE
from .wire import case_from_report, crash_record, record_from_report

if TYPE_CHECKING:
    from ..run.phases import RunPhases


class Intake:
    """The records of the session, in the aggregating process: the one owner of the records, their cases and
    their revision (what the cached results compare against)."""

    def __init__(self, parts: Registry, local: RunPhases | None = None) -> None:
        """``parts``: the session's extension points (its logs, sinks and links); ``local``: a serial session's
        run stage, whose last attached record is the very record on its report."""
        self.parts = parts
        self.local = local
        #: The records taken in, in arrival order.
        self.records: list[RunRecord] = []
        #: One CaseRef per case key, shared by the records of its runs.
        self.cases: dict[str, CaseRef] = {}
        #: Bumped whenever ``records`` changes.
        self.revision = 0
        #: Usage calls charged to their run after it had ended (from threads or tasks that outlived it).
        self.late_usage = 0
        #: Node id -> index in ``records`` of its latest record (late usage amends it).
        #: Built on the first late usage (rare): one entry per run is not worth keeping otherwise.
        self._index: dict[str, int] | None = None

    def learn(self, case: CaseRef | dict[str, Any]) -> CaseRef:
        """The session's CaseRef of a case (from a worker's report, a journal, a shard's report), added once."""
        key = case.key if isinstance(case, CaseRef) else case["key"]
        known = self.cases.get(key)
        if known is None:
            known = self.cases[key] = case if isinstance(case, CaseRef) else CaseRef.from_dict(case)
            self._new_case(known)
        return known

    def _new_case(self, case: CaseRef) -> None:
        """A case this process had not seen: the features asleep until a case is marked for them wake."""
        if self.parts.asleep:
            self.parts.wake(name for name, _ in case.marks)

    def take(self, report: pytest.TestReport) -> None:
        """A report of this session: its record (a run's teardown report), and what came with it."""
        attached = self.local.take_attached if self.local is not None else (lambda: None)
        known = len(self.cases)
        record = record_from_report(report, self.cases, attached)  # adds the case of a record
        if record is None:
            return
        if len(self.cases) != known:
            self._new_case(record.case)
        self.add(record)
        # pytest's terminal reporter keeps every report; what it carried lives on elsewhere.
        extras = report.__dict__
        del extras[RECORD_ATTRIBUTE]
        for link in self.parts.links:
            if link.attribute is not None:
                value = extras.pop(link.attribute, None)
                if value is not None:
                    link.receive(value)

    def add(self, record: RunRecord, *, finished: bool = True) -> None:
        """``finished``: the run ended (so its record logs see it first: the journal); not a run interrupted
        before its end (which a resumed session runs again), nor a record read back from the journal."""
        if finished:
            for log in self.parts.logs:
                log.write(record)  # durable before anyone shows the run's outcome
        if record.case.key not in self.cases:
            self.cases[record.case.key] = record.case
            self._new_case(record.case)
        if self._index is not None:
            self._index[record.nodeid] = len(self.records)
        self.records.append(record)
        self.revision += 1
        for sink in self.parts.sinks:
            sink.add(record)

    def add_interrupted(self, records: list[RunRecord] | list[dict[str, Any]]) -> None:
        """Records of runs interrupted before their teardown (:class:`InterruptedRuns`): such a run
        sent no teardown report, so it has no record yet."""
        for each in records:
            self.add(each if isinstance(each, RunRecord) else RunRecord.from_dict(each, self.cases), finished=False)

    def add_late(self, items: list[dict[str, Any]] | None, *, finished: bool = True) -> None:
        """Charge usage and scores recorded after their run had ended to that run (``run.context.LateQueue``);
        ``finished``: not read back from the journal (so its logs see it)."""
        if not items:
            return
        if self._index is None:
            self._index = {record.nodeid: i for i, record in enumerate(self.records)}
        for item in items:
            index = self._index.get(item["nodeid"])
            if index is None:
                continue  # its run never reported (interrupted): nothing to amend
            record = self.records[index]
            data = item.get("usage")  # merged and priced where the run executed (run.context.charge)
            usage = Usage.from_dict(data) if data else None
            extra = float(item.get("extra_cost") or 0.0)
            scores = item.get("scores") or ()
            if finished:
                for log in self.parts.logs:
                    log.write_late(item["nodeid"], data, extra, scores)
            self.records[index] = record.replace(
                usage=record.usage + ((usage,) if usage is not None else ()),
                extra_cost=record.extra_cost + extra,
                scores=record.scores + tuple(Score.from_dict(score) for score in scores),
            )
            self.late_usage += 1
            self.revision += 1
            for sink in self.parts.sinks:
                sink.add_late(usage, extra)

    def release(self) -> None:
        """Let go of the records and cases after the session."""
        self.records = []
        self.cases = {}
        self._index = None
        self.revision += 1


class LateUsage(Link):
    """Usage recorded after its run had ended travels on the next teardown report of its process, or in
    an xdist worker's output at its end, and is charged to its own run here."""

    attribute = LATE_ATTRIBUTE

    def __init__(self, intake: Intake | None, runs: RunPhases) -> None:
        """``intake``: the aggregating process's (None on an xdist worker, which only ships)."""
        self.intake = intake
        self.runs = runs

    def receive(self, value: Any) -> None:
        assert self.intake is not None
        self.intake.add_late(value)

    def leftover(self) -> Any:
        return self.runs.late.take()


class InterruptedRuns(Link):
    """Runs interrupted before their teardown report (``run.phases.RunPhases.end``) have a record,
    a skip, as their span has an outcome: kept here in a serial session, or shipped in an xdist
    worker's output at its end, and added to the session's records by :meth:`Intake.add_interrupted`."""

    attribute = INTERRUPTED_ATTRIBUTE

    def __init__(self, intake: Intake | None, runs: RunPhases) -> None:
        self.intake = intake
        self.runs = runs

    def receive(self, value: Any) -> None:
        assert self.intake is not None
        self.intake.add_interrupted(value)

    def leftover(self) -> Any:
        return [record.to_dict() for record in self.runs.take_interrupted()] or None


#: Seconds the xdist controller waits, after Ctrl-C or SIGTERM, for the records of runs whose outcome it
#: showed (:meth:`InFlight.await_shown`): a teardown report comes milliseconds after its call report.
SHOWN_GRACE = 2.0


def worker_of(node: Any) -> str:
    """The id of an xdist node (a report's ``node``, an event's): ``gw0``; ``?`` when unknown."""
    return str(getattr(getattr(node, "gateway", None), "id", "?"))


class InFlight:
    """The xdist controller's runs executing now: which phase each last reported, and why a worker went down."""

    def __init__(self, intake: Intake, folder: Callable[[], Path | None] = lambda: None) -> None:
        """``folder``: the decisions channel's folder, where workers announce their cases."""
        self.intake = intake
        self.folder = folder
        #: node id -> phase last reported, for runs executing now
        self.phases: dict[str, str] = {}
        #: worker id -> why it went down (for the record of a crashed run)
        self.node_errors: dict[str, str] = {}
        #: node id -> worker id, for runs whose outcome pytest has shown (their call report, or a setup
        #: report that did not pass) and whose record, on the teardown report after it, has not come
        self.shown: dict[str, str] = {}

    def track(self, report: pytest.TestReport) -> None:
        """Which phase of each executing run last reported: where a worker crash hit it."""
        case = case_from_report(report)
        if case is not None:
            self.intake.learn(case)
        if report.when in ("setup", "call"):
            self.phases[report.nodeid] = report.when
            if report.when == "call" or not report.passed:
                self.shown[report.nodeid] = worker_of(getattr(report, "node", None))
        else:
            self.phases.pop(report.nodeid, None)
            self.shown.pop(report.nodeid, None)

    def await_shown(
        self,
        get: Callable[[float], tuple[str, dict[str, Any]]],
        take: Callable[[Any], None],
        timeout: float = SHOWN_GRACE,
    ) -> None:
        """After Ctrl-C or SIGTERM the xdist controller reads no more of its workers' events, yet the
        record of a run whose outcome was shown travels on its teardown report, a moment behind: take
        those teardown reports in (``take``, pytest's report hook) from ``get`` (xdist's event queue's
        ``get``), for at most ``timeout`` seconds. Nothing else is taken: the workers are stopping, and a
        run whose outcome was not shown is not awaited (it may sleep for minutes)."""
        deadline = time.monotonic() + timeout
        while self.shown:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            try:
                name, kwargs = get(left)
            except Empty:
                return
            report = kwargs.get("rep") if name == "testreport" else None
            if report is not None and report.when == "teardown" and report.nodeid in self.shown:
                report.node = kwargs.get("node")  # as xdist's own handler sets it (junitxml keys by it)
                take(report)  # track() drops it from shown
                continue
            if name in ("workerfinished", "errordown", "internal_error"):
                self.node_finished(worker_of(kwargs.get("node")))  # its run's record is lost with it

    def node_down(self, worker: str, error: Any) -> None:
        self.node_errors[worker] = str(error)

    def node_finished(self, worker: str) -> None:
        """A worker that went down sends nothing more: its shown runs are not awaited."""
        for nodeid in [n for n, shown_by in self.shown.items() if shown_by == worker]:
            del self.shown[nodeid]

    def crashed(self, nodeid: str, report: pytest.TestReport) -> RunRecord | None:
        """A worker died while executing ``nodeid``: a run that crashed is an errored run, recorded
        like any other (so its verdict is published as soon as its case's last run has reported).
        None when ``nodeid`` is no run (a verdict item, a plain test: xdist's report says it all)."""
        last = self.phases.pop(nodeid, None)
        phase = {"setup": "call", "call": "teardown"}.get(last or "", "setup")
        record = crash_record(nodeid, self.intake.cases, self._crash_text(report), phase)
        if record is None:  # maybe the first run of its case on that worker, dead before its setup report
            for case in read_announced(self.folder()).values():
                self.intake.learn(case)
            record = crash_record(nodeid, self.intake.cases, self._crash_text(report), phase)
        if record is not None:
            self.intake.add(record)
        return record

    def _crash_text(self, report: pytest.TestReport) -> str:
        text = str(report.longrepr or "a worker crashed")
        error = self.node_errors.get(worker_of(getattr(report, "node", None)))
        return f"{text} ({error})" if error else text


def transcript_note(records: list[RunRecord]) -> list[str]:
    """The session's one note about transcripts cut at the entry cap, naming the run that dropped most."""
    cut = [record for record in records if record.transcript_dropped]
    if not cut:
        return []
    worst = max(cut, key=lambda record: record.transcript_dropped)
    return [
        f"{len(cut)} run(s) recorded more than {TRANSCRIPT_ENTRIES:,} transcript entries; the first {TRANSCRIPT_ENTRIES:,} "
        f"of each were kept (most dropped: {worst.nodeid}, {worst.transcript_dropped:,})"
    ]
