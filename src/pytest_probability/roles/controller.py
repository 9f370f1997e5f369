"""The xdist controller: what its workers send comes in here; decisions go out through the channel.

It aggregates as a serial session does (:class:`~.serial.Aggregating`) and
executes nothing. Its own parts: the decisions link (each worker learns the
channel's folder), the runs executing now (a worker crash's record, and after
Ctrl-C or SIGTERM the records of runs already shown), and xdist's hooks.
"""

from __future__ import annotations

from typing import Any

import pytest

from ..compat import xdist
from ..decide.book import DecisionsLink
from ..model.case import CaseRef
from ..record.concurrency import ConcurrencyLink, refusal
from ..record.intake import InFlight, worker_of
from ..record.wire import run_of
from ..report.concurrency import ConcurrencyFacet
from ..run.outcome import xfail
from ..vocabulary import GATE_KIND, error_excluded_reason
from .serial import Aggregating
from .wiring import Aggregation


class Controller(Aggregating):
    ships = True  # its workers' runs ship their records here

    def wire_role(self, wiring: Aggregation) -> None:
        book = self.book
        self.workers_concurrency: list[dict[str, Any]] = []
        dist = str(getattr(self.config.option, "dist", "load"))
        self.session.parts.add(links=DecisionsLink(book))
        self.session.parts.add(links=ConcurrencyLink(self.workers_concurrency, refused=refusal(dist)))
        self.in_flight = InFlight(self.intake, lambda: book.folder)
        for feature in self.features:
            feature.controller(wiring)

    @property
    def concurrency(self) -> ConcurrencyFacet:
        """The concurrent runs' facet: what each worker shipped at its end."""
        return ConcurrencyFacet(self.workers_concurrency)

    def take(self, report: pytest.TestReport) -> None:
        self.in_flight.track(report)  # before the record: the setup report carries the case
        super().take(report)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """After Ctrl-C or SIGTERM, the records of the runs whose outcome was shown, before xdist
        stops its workers (its own ``pytest_sessionfinish``); then what every aggregating process does."""
        get = xdist.event_queue(self.config)
        if session.exitstatus == pytest.ExitCode.INTERRUPTED and get is not None and self.in_flight.shown:
            self.interrupts.finish()  # a SIGTERM now only marks the session terminated
            try:
                self.in_flight.await_shown(get, lambda report: self.config.hook.pytest_runtest_logreport(report=report))
            except KeyboardInterrupt:  # a second Ctrl-C ends the wait, not the reports
                pass
        super().pytest_sessionfinish(session)

    @pytest.hookimpl(optionalhook=True, tryfirst=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        """Under xdist's default load scheduling with more than one run in flight per worker (the option or
        the ini key), a load scheduling that keeps 2 K runs queued on each worker (``compat.xdist``);
        anything else is xdist's own."""
        settings = self.session.settings
        k = settings.cli_concurrency if settings.cli_concurrency is not None else settings.ini_concurrency
        if k > 1 and config.getvalue("dist") == "loadgroup":
            self.session.notes.append(
                f"--prob-concurrency={k} under --dist loadgroup: xdist sends a worker its runs two at a time unless "
                "they share an xdist_group mark, so at most two are in flight; mark each benchmark with "
                "@pytest.mark.xdist_group(name) or use --dist load"
            )
        if k <= 1 or config.getvalue("dist") != "load":
            return None
        return xdist.ahead_scheduling(config, log, 2 * k)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        for link in self.session.parts.links:
            node.workerinput.update(link.worker_input())

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.book.expect(list(ids))  # the first worker's collection, after deselection

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """A worker finished (or crashed): what it shipped at its end; and, if it crashed, its gated
        cases with runs still queued get UNDECIDED at once (before xdist reschedules them)."""
        output = getattr(node, "workeroutput", None) or {}
        for link in self.session.parts.links:
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
        if record is not None and not self.config.option.runxfail and self.session.stats.errors == "exclude":
            if self.book.judged_by(record.case.key) == GATE_KIND:
                # an errored run, left out of its gate
                xfail(report, error_excluded_reason(f"{record.error_type}: {record.message}"))

    def _release_rescheduled(self, node: Any) -> None:
        """xdist hands a crashed worker's queue to the others, at the end of their queues, where a
        gate item may wait for them forever (a run behind it, or alone in a new worker's queue that
        xdist starts only with a second item). No hook tells which runs a crash rescheduled
        (``compat.xdist.pending_after_crash``); other schedulers are left alone."""
        pending = xdist.pending_after_crash(self.config, node)
        if self.book.folder is None or pending is None:
            return
        cases: dict[str, CaseRef] = self.intake.cases
        rescheduled: dict[str, int] = {}
        for nodeid in pending:
            key = run_of(nodeid, cases)[0]
            rescheduled[key] = rescheduled.get(key, 0) + 1
        for key, text in self.book.release_rescheduled(rescheduled):
            what = f"gate item of {cases[key].label}" if key in cases else f"verdict item {key}"
            self.session.notes.append(f"{what}: {text}")
