"""The processes that aggregate: :class:`Aggregating` (what they share) and :class:`Serial`, a session without xdist.

An aggregating process takes every run's record in (``pytest_runtest_logreport``),
decides (the decision book), and at the end runs the finishers and prints the
table. Its wiring: the book first among the sinks, the statistics' facet and
the core's finishers, then each feature's ``aggregating`` part, then the
readings facet last (its JSON fields are the others' with readings added).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import pytest

from ..collect.order import run_items
from ..decide.book import DecisionBook
from ..decide.results import Results
from ..decide.settle import SettleGates, UnscoredGates
from ..protocols import Registry
from ..record.intake import Intake, transcript_note
from ..report import terminal
from ..report.concurrency_facet import ConcurrencyFacet
from ..report.explain import ExplainFacet
from ..report.statistics import StatisticsFacet
from ..session import Scope
from .role import Role
from .wiring import Aggregation

if TYPE_CHECKING:
    from ..config.settings import Settings
    from ..config.spec import Specs
    from ..report.writers import ReportDict


class Aggregating(Role):
    """What a process that aggregates does: take the records in, finish the session, print the table."""

    book: DecisionBook
    intake: Intake

    def decisions(self, settings: Settings, specs: Specs, parts: Registry, scope: Scope) -> DecisionBook:
        self.book = DecisionBook(specs, parts, scope)
        return self.book

    def make_intake(self) -> Intake:
        return Intake(self.session.parts, local=None if self.ships else self.runs)

    def wire(self) -> None:
        session, parts = self.session, self.session.parts
        self.results = Results(self.intake, self.book, session.specs, session.scope)
        self.report: ReportDict | None = None
        self.pytest_session: pytest.Session | None = None
        #: The session ended in a usage error with runs resumed (a refused journal): it reports nothing.
        self.refused = False
        parts.add(
            sinks=self.book,
            facets=StatisticsFacet(self.results, session.stats, lambda case: session.specs.of(case).score_rules),
            finishers=SettleGates(self.book, self.results),
        )
        parts.add(finishers=UnscoredGates(self.results))
        wiring = Aggregation(self.config, session, self.runs, self.intake, self.book, self.results, self.report_dict)
        for feature in self.features:
            feature.aggregating(wiring)
        self.wire_role(wiring)
        parts.add(facets=self.concurrency)
        # last: its JSON fields are the others' with the readings added
        parts.add(
            facets=ExplainFacet(self.results, parts, session.stats, lambda: self.config.get_terminal_writer().fullwidth)
        )

    def wire_role(self, wiring: Aggregation) -> None:
        raise NotImplementedError

    @property
    def concurrency(self) -> ConcurrencyFacet:
        """The concurrent runs' facet: this process's own figures (a serial session executes its runs)."""
        runs = self.runs
        return ConcurrencyFacet([], lambda: runs.window.stats() if runs.window is not None else None)

    def report_dict(self) -> ReportDict:
        """The report dict the report files share, made on the first ask (its module only with a report option)."""
        if self.report is None:
            from ..report.writers import ReportDict  # only with a report option

            self.report = ReportDict(self.session.settings.to_dict(), self.session.parts)
        return self.report

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.pytest_session = session

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> Generator[None, None, None]:
        """The record is in before any other plugin shows the outcome (before the yield); after them,
        the session's own hook has set ``shouldstop`` for ``-x``/``--maxfail``."""
        interrupts = self.interrupts
        interrupts.taking(True)
        try:
            self.take(report)
        finally:
            interrupts.taking(False)
        try:
            return (yield)
        finally:
            session = self.pytest_session
            if session is not None and report.failed and (session.shouldstop or session.shouldfail):
                self.book.stop()  # -x, --maxfail: release the verdict items waiting on other workers
            interrupts.raise_pending()  # a SIGTERM that came while the record was taken in

    def take(self, report: pytest.TestReport) -> None:
        self.intake.take(report)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        notes, intake = self.session.notes, self.intake
        notes.extend(self.runs.finish())
        self.interrupts.finish()
        if session.exitstatus == pytest.ExitCode.USAGE_ERROR and intake.records:
            # Refused before any run with runs resumed (a journal of another suite, found at collection):
            # nothing of this session ran, so nothing is reported, not the runs the journal held, and no file is
            # written over the last (reports, the history folder, the summary, the OTLP file, --lf's cache);
            # pytest says why. (Without records, as for a path that does not exist, the outputs say themselves
            # that they were left as they were.)
            self.refused = True
            return
        intake.add_interrupted(self.runs.take_interrupted())  # this process's (serial); a worker's ship
        intake.add_late(self.runs.late.take())
        if intake.late_usage:
            notes.append(
                f"{intake.late_usage} record_usage()/record_cost() call(s) came after their run had ended; "
                "each was charged to its own run"
            )
        notes.extend(transcript_note(intake.records))
        summary = self.results.summary()
        for finisher in self.session.parts.finishers:
            try:
                finisher.finish(session, summary)
            except OSError as exc:
                notes.append(f"could not write a report: {exc}")
                session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
        if self.interrupts.terminated and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.INTERRUPTED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        notes = self.session.notes
        if self.refused or not (self.intake.records or notes):
            return
        summary = self.results.summary()
        if summary.duplicates:
            notes.append(
                f"{summary.duplicates} run(s) were reported more than once; each counted once (the last report)"
            )
        terminal.write(terminalreporter, summary, self.session.parts.facets, notes)

    def release(self) -> None:
        """Let go of the session's records, rows and analysis once everything is written: pytest's
        full garbage collections at unconfigure then do not walk them (several per case)."""
        self.intake.release()
        self.results.release()
        if self.report is not None:
            self.report.release()
        self.book.release()


class Serial(Aggregating):
    """A session without xdist: it executes and aggregates."""

    def wire_role(self, wiring: Aggregation) -> None:
        for feature in self.features:
            feature.serial(wiring)

    @pytest.hookimpl(trylast=True)  # after the gate items were put after their runs
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        # The selected runs, so that verdicts know runs that never reported.
        keys = {run.prob_case.key: run.prob_case.key for run in run_items(session.items)}
        self.book.expect([item.nodeid for item in session.items], keys)
