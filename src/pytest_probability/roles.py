"""The role of this process in the session, one plugin object each, picked once at configure.

* :class:`Serial`: a session without xdist. It executes the runs and aggregates them.
* :class:`Controller`: the xdist controller. It aggregates what the workers
  send (records on their reports, and what the features ship), decides, and
  publishes decisions through the channel; it executes nothing.
* :class:`Worker`: an xdist worker. It executes runs and ships their records
  on the reports; it aggregates nothing and prints no table.

As pytest-cov's central/controller/worker objects, each registers the hooks
of its role only: no module branches on "am I a worker". The hooks every
process has (options, collection, each run's phases) are in
:mod:`pytest_probability.plugin`; each hook here is a line or two that hands
over to the stage that owns the concern.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generator

import pytest

from .collect.order import run_items
from .model.case import CaseRef
from .record.intake import InFlight, Intake, transcript_note, worker_of
from .record.wire import run_of
from .report import terminal
from .run import context
from .run.outcome import xfail
from .session import State
from .vocabulary import GATE_KIND, error_excluded_reason

if TYPE_CHECKING:
    # Types only: a worker imports this module for Worker, and need not import the decisions and results
    # (the aggregating process's) at start-up.
    from .decide.book import DecisionBook
    from .decide.comparisons import Comparing
    from .decide.results import Results
    from .report.writers import ReportDict  # only with a report option


class Aggregating:
    """What a process that aggregates does: take the records in, finish the session, print the table."""

    def __init__(self, state: State, intake: Intake, book: DecisionBook, results: Results, comparing: Comparing,
                 report: ReportDict | None) -> None:
        """``report``: the report dict the report writers share, when any is on."""
        self.state = state
        self.intake = intake
        self.book = book
        self.results = results
        self.comparing = comparing
        self.report = report
        self.session: pytest.Session | None = None

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> Generator[None, None, None]:
        """The record is in before any other plugin shows the outcome (before the yield); after them,
        the session's own hook has set ``shouldstop`` for ``-x``/``--maxfail``."""
        state = self.state
        state.taking = True
        try:
            self.take(report)
        finally:
            state.taking = False
        try:
            return (yield)
        finally:
            session = self.session
            if session is not None and report.failed and (session.shouldstop or session.shouldfail):
                self.book.stop()  # -x, --maxfail: release the verdict items waiting on other workers
            if state.interrupt_pending:  # a SIGTERM that came while the record was taken in
                state.interrupt_pending = False
                raise KeyboardInterrupt("SIGTERM")

    def take(self, report: pytest.TestReport) -> None:
        self.intake.take(report)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        state = self.state
        if state.runs is not None:
            state.notes.extend(state.runs.finish())
        state.finishing = True
        self.intake.add_interrupted(context.take_interrupted())  # this process's (serial); a worker's ship
        self.intake.add_late(context.take_late())
        if state.late_usage:
            state.notes.append(
                f"{state.late_usage} record_usage()/record_cost() call(s) came after their run had ended; "
                "each was charged to its own run"
            )
        state.notes.extend(transcript_note(state.records))
        summary = self.results.summary()
        for finisher in state.finishers:
            try:
                finisher.finish(session, summary)
            except OSError as exc:
                state.notes.append(f"could not write a report: {exc}")
                session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
        if state.terminated and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.INTERRUPTED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        state = self.state
        if not (state.records or state.notes):
            return
        summary = self.results.summary()
        if summary.duplicates:
            state.notes.append(f"{summary.duplicates} run(s) were reported more than once; each counted once (the last report)")
        terminal.write(terminalreporter, summary, state.facets, state.notes)

    @pytest.hookimpl(tryfirst=True)  # before pytest's own full garbage collections at unconfigure
    def pytest_unconfigure(self) -> None:
        """Let go of the session's records, rows and analysis once everything is written: pytest's
        full garbage collections at unconfigure then do not walk them (several per case)."""
        self.state.release()
        self.intake.release()
        self.results.release()
        self.comparing.release()
        if self.report is not None:
            self.report.release()
        self.book.records = {}
        self.book.expected = {}


class Serial(Aggregating):
    """A session without xdist: it executes and aggregates."""

    @pytest.hookimpl(trylast=True)  # after the gate items were put after their runs
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        # The selected runs, so that verdicts know runs that never reported.
        keys = {run.prob_case.key: run.prob_case.key for run in run_items(session.items)}
        self.book.expect([item.nodeid for item in session.items], keys)


class Controller(Aggregating):
    """The xdist controller: what its workers send comes in here; decisions go out through the channel."""

    def __init__(self, state: State, intake: Intake, book: DecisionBook, results: Results, comparing: Comparing,
                 report: ReportDict | None, config: pytest.Config) -> None:
        super().__init__(state, intake, book, results, comparing, report)
        self.config = config
        self.in_flight = InFlight(state, intake, lambda: book.folder)

    def take(self, report: pytest.TestReport) -> None:
        self.in_flight.track(report)  # before the record: the setup report carries the case
        super().take(report)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """After Ctrl-C or SIGTERM, the records of the runs whose outcome was shown, before xdist
        stops its workers (its own ``pytest_sessionfinish``); then what every aggregating process does."""
        queue = getattr(self.config.pluginmanager.getplugin("dsession"), "queue", None)
        if session.exitstatus == pytest.ExitCode.INTERRUPTED and queue is not None and self.in_flight.shown:
            self.state.finishing = True  # a SIGTERM now only marks the session terminated
            try:
                self.in_flight.await_shown(lambda timeout: queue.get(timeout=timeout),
                                           lambda report: self.config.hook.pytest_runtest_logreport(report=report))
            except KeyboardInterrupt:  # a second Ctrl-C ends the wait, not the reports
                pass
        super().pytest_sessionfinish(session)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        for link in self.state.links:
            node.workerinput.update(link.worker_input())

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.book.expect(list(ids))  # the first worker's collection, after deselection

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """A worker finished (or crashed): what it shipped at its end; and, if it crashed, its gated
        cases with runs still queued get UNDECIDED at once (before xdist reschedules them)."""
        output = getattr(node, "workeroutput", None) or {}
        for link in self.state.links:
            value = output.get(link.attribute) if link.attribute is not None else None
            if value:
                link.receive(value)
        self.in_flight.node_finished(worker_of(node))
        if error is not None:
            self.in_flight.node_down(worker_of(node), error)
            self._release_rescheduled(node)

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport, sched: Any) -> None:
        record = self.in_flight.crashed(crashitem, report)
        if record is not None and not self.config.option.runxfail and self.state.stats.errors == "exclude":
            if self.book.judged_by(record.case.key) == GATE_KIND:
                # an errored run, left out of its gate
                xfail(report, error_excluded_reason(f"{record.error_type}: {record.message}"))

    def _release_rescheduled(self, node: Any) -> None:
        """xdist hands a crashed worker's queue to the others, at the end of their queues, where a
        gate item may wait for them forever (a run behind it, or alone in a new worker's queue that
        xdist starts only with a second item). No hook tells which runs a crash rescheduled, so this
        is the one place that reads the load scheduler's private queues (``node2pending`` and
        ``collection`` of ``dsession.sched``); other schedulers are left alone."""
        sched = getattr(self.config.pluginmanager.getplugin("dsession"), "sched", None)
        queues = getattr(sched, "node2pending", None)
        collection = getattr(sched, "collection", None)
        if self.book.folder is None or not isinstance(queues, dict) or collection is None:
            return
        cases: dict[str, CaseRef] = self.state.cases
        rescheduled: dict[str, int] = {}
        for index in (queues.get(node) or [])[1:]:  # [0] is the item that crashed
            key = run_of(collection[index], cases)[0]
            rescheduled[key] = rescheduled.get(key, 0) + 1
        for key, text in self.book.release_rescheduled(rescheduled):
            what = f"gate item of {cases[key].label}" if key in cases else f"verdict item {key}"
            self.state.notes.append(f"{what}: {text}")


class Worker:
    """An xdist worker: it executes runs and ships what they produced; the controller aggregates."""

    def __init__(self, state: State, config: pytest.Config) -> None:
        self.state = state
        self.config = config

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Module teardowns, then what is left to ship (late usage, spans ended after the last run)."""
        if self.state.runs is not None:
            self.state.runs.finish()  # their errors are the controller's to show: none reach it from here
        output = self.config.workeroutput  # type: ignore[attr-defined]
        for link in self.state.links:
            if link.attribute is not None:
                value = link.leftover()
                if value is not None:
                    output[link.attribute] = value

    @pytest.hookimpl(tryfirst=True)
    def pytest_unconfigure(self) -> None:
        self.state.release()


class RetryHooks:
    """``--prob-retry``: the call phase repeated on a provider fault; registered only when retries are on."""

    def __init__(self, state: State) -> None:
        self.state = state

    # trylast: inside capture's and logging's wrappers, so a retried call is captured too.
    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Any:
        try:
            return (yield)
        except BaseException as exc:  # noqa: BLE001 - retry_call re-raises what it does not retry
            error = exc
        assert self.state.runs is not None
        self.state.runs.retry_call(item, error)
        return None
