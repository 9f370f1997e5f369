"""The per-run path: a run's phases, from its start to its record on the teardown report.

:class:`RunPhases` is what the hook surface calls for each item (a run or
not) in a process that executes runs. For a run it makes the run current
(:mod:`.context`), tells the observers, skips a run the decisions say not to
start, classifies each phase (:mod:`.outcome`), reports a judged case's
failing runs as xfailed, and at the teardown report builds the record and
attaches it (:mod:`.report`). A serial session and an xdist worker take the
same path; a worker also puts each case on its first setup report, so that
the controller knows the case before any run of it can crash the worker.
"""

from __future__ import annotations

import inspect
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from ..collect.items import Run
from ..config.marker import concurrency_of
from ..groups import leaf
from ..text import printable
from ..vocabulary import CASE_ATTRIBUTE, FAIL, GATE_KIND, SKIP, error_excluded_reason, xfail_reason
from . import context, outcome, report
from .modules import ModuleHooks

if TYPE_CHECKING:
    from ..model.case import CaseRef
    from ..model.run import RunRecord
    from ..session import Session
    from .window import Window


class RunPhases:
    """The run stage of one process: the per-run path the hook surface calls, and what runs leave behind
    for the aggregating process (late usage, interrupted runs, a serial session's last record)."""

    def __init__(
        self,
        session: Session,
        ships: bool,
        announce: Callable[[CaseRef], None] | None = None,
        queued: Callable[[], list[int]] | None = None,
        ahead_refused: str | None = None,
    ) -> None:
        """``ships``: this process is an xdist worker, whose records travel to the controller (not
        read back here). ``announce``: on a worker, tells the controller of each case before its
        first run here starts (``run.announce``), so that a crash in that run's setup has a record.
        ``queued``, ``ahead_refused``: on a worker, the items it will execute, or why it cannot know
        (concurrent runs, :attr:`queued`)."""
        self.session = session
        self.settings = session.settings
        self.parts = session.parts  # frozen before the first run: its observers and guards are final
        self.ships = ships
        self.announce = announce
        self.modules = ModuleHooks()
        self.started = 0
        #: Usage recorded after its run had ended, until it travels (``LateUsage``).
        self.late = context.LateQueue()
        #: Records of runs interrupted before their teardown report (Ctrl-C, SIGTERM, pytest.exit()).
        self._interrupted: list[RunRecord] = []
        #: (report data, record) of the last record attached, in a process that aggregates.
        self._attached: tuple[dict[str, Any], RunRecord] | None = None
        #: Keys of the cases whose first setup report this worker has sent (with the case on it).
        self._shipped: set[str] = set()
        #: The concurrent runs' window (``--prob-concurrency``, :mod:`.window`), made when the first case
        #: asking for more than one run in flight is called.
        self.window: Window | None = None
        #: On an xdist worker: the positions of the items queued for it, in order (``compat.xdist.queued``);
        #: None in a serial session, which executes every item after the current one.
        self.queued = queued
        #: Why no run may execute ahead of its item in this process (an xdist scheduling that cannot say which
        #: runs a worker will receive); None when they may.
        self.ahead_refused = ahead_refused

    def start(self, item: pytest.Item) -> None:
        if not isinstance(item, Run):
            return
        window = self.window
        execution = window.adopt(item) if window is not None else None
        if execution is not None:  # started ahead: its run (and span) exist since it started
            context.resume(execution.run)
            return
        run = context.start(item.prob_case, item.prob_run, item.nodeid)
        run.late_queue = self.late
        if self.announce is not None and run.case.key not in self._shipped:
            self.announce(run.case)  # learned at this run's setup report, if it comes
        for observer in self.parts.observers:
            observer.run_started(item, run)

    def end(self, item: pytest.Item) -> None:
        if not isinstance(item, Run):
            return
        window = self.window
        run = context.current_run()
        if run is not None:
            interrupted = not run.closed  # no teardown report: Ctrl-C, SIGTERM or pytest.exit() in a phase
            # a skip that says why, on its span (run_closed) and in its record alike, unless the run's call
            # had ended before the interruption (a concurrent run): then the outcome it had
            if interrupted and window is not None:
                window.cancel()  # Ctrl-C, SIGTERM: no run starts any more, runs in flight are cancelled
            if interrupted and (window is None or not window.conclude(item, run)):
                exc = sys.exc_info()[1]
                run.outcome = SKIP
                run.message = f"interrupted: {type(exc).__name__}" if exc is not None else "interrupted"
            if interrupted:
                settings = self.settings
                context.settle(run, settings.span_usage, settings.prices)  # its span usage too, as at teardown
            for observer in self.parts.observers:
                observer.run_closed(item, run)
            if interrupted:  # in every output as its span is (take_interrupted)
                self._interrupted.append(context.close(run))
        if window is not None:
            window.ended(item)
        context.finish()

    def before_setup(self, item: pytest.Item) -> None:
        if not isinstance(item, Run):
            return
        window = self.window
        if window is not None and window.replay(item):
            return  # started ahead: it executed, whatever was decided since; its call gives that outcome
        decision = self.decision(item.prob_case)
        if decision is not None:
            # Decided early, or a budget reached: this run is not executed (no fixture, no delay).
            run = context.current_run()
            if run is not None:
                run.stopped = decision[0]
            pytest.skip(printable(f"not run: {decision[1]}"))
        self._pace()
        if self._concurrency(item.prob_case) > 1:
            run = context.current_run()
            if run is not None and self._window().lead(item, run):
                self._module_setup(item)
                return
        if item.benchmark.prob_async:
            function = item.obj
            run = context.current_run()
            if run is not None and inspect.iscoroutinefunction(function):
                # anyio awaits every test in one long-lived task, whose context was copied when it
                # started (maybe in an earlier run): the run is set inside the coroutine itself.
                item.obj = context.bind(function, run)
        self._module_setup(item)

    def _module_setup(self, item: Run) -> None:
        """The benchmark file's ``setup()``, once, before its first run."""
        module = item.module
        if module is not None and not self.modules.ready(module):
            run = context.current_run()
            context.finish()  # module setup() belongs to no run
            try:
                self.modules.setup(module)
            finally:
                context.resume(run)

    def _concurrency(self, case: CaseRef) -> int:
        """Runs of ``case`` in flight at once (``--prob-concurrency``, its marker, ini ``prob_concurrency``)."""
        settings = self.settings
        if settings.cli_concurrency is not None:
            return settings.cli_concurrency
        if not case.marks:
            return settings.ini_concurrency
        return concurrency_of(settings, case.marks)

    def _window(self) -> Window:
        window = self.window
        if window is None:
            from .window import Window  # only once a case asks for more than one run in flight

            window = self.window = Window(self)
        return window

    def decision(self, case: CaseRef) -> tuple[str, str] | None:
        """Why a run of ``case`` must not start: the decisions' (decided early), else a guard's (a budget)."""
        decisions = self.session.decisions
        decision = decisions.run_decision(case) if decisions is not None else None
        if decision is None:
            for guard in self.parts.guards:
                decision = guard.check(case)
                if decision is not None:
                    break
        return decision

    def _pace(self) -> None:
        """Sleep ``--prob-delay`` between runs, never before the first."""
        delay = self.settings.delay
        if self.started and delay:
            time.sleep(delay)
        self.started += 1

    def after_phase(self, item: pytest.Item, call: pytest.CallInfo[None], report_: pytest.TestReport) -> None:
        if not isinstance(item, Run):
            return
        if call.excinfo is not None and call.excinfo.type is not KeyboardInterrupt:
            interruption = leaf(call.excinfo.value)
            if isinstance(interruption, KeyboardInterrupt):
                # Ctrl-C (or SIGTERM, the plugin's Ctrl-C) inside pytest-trio's nursery reaches pytest in an
                # exception group, which pytest would report as a failed run and go on: it stops the session.
                raise interruption
        run = context.current_run()
        if run is None:
            return
        if call.when == "call" and self.window is not None:
            self.window.report(item, report_)
        outcome.on_phase(run, call)
        if item.prob_gated and report_.failed and not item.config.option.runxfail:
            self._judged_failure(item, call, report_)
        if self.ships and call.when == "setup" and run.case.key not in self._shipped:
            # The controller learns each case before its first run here can crash this worker.
            self._shipped.add(run.case.key)
            setattr(report_, CASE_ATTRIBUTE, run.case.to_dict())
        if call.excinfo is not None:
            for observer in self.parts.observers:
                observer.phase_raised(item, run, call)
        if call.when == "teardown":
            if run.outcome is None:
                # Setup passed but the call never ran (an interrupted session): nothing was sampled.
                run.outcome = SKIP
                run.message = run.message or "not run"
            settings = self.settings
            context.settle(run, settings.span_usage, settings.prices)  # before the run's span reads its usage
            for observer in self.parts.observers:
                observer.run_finished(item, run)
            attached = report.attach(report_, run, self.late, local=not self.ships)
            self._attached = None if self.ships else attached

    def _judged_failure(self, item: Run, call: pytest.CallInfo[None], report_: pytest.TestReport) -> None:
        """A judged case's failed report: a failed run (an assert) is xfailed, its verdict item decides;
        an errored one fails the session as any error does (ini ``prob_errors = count``, the default), unless
        ini ``prob_errors = exclude`` leaves errors out of its gate."""
        kind = item.prob_judged_by
        run = context.current_run()
        assert run is not None
        if outcome.classify(call.excinfo, call.when) == FAIL:
            outcome.xfail(report_, xfail_reason(kind, run.message))
        elif kind == GATE_KIND and self.session.stats.errors == "exclude":
            outcome.xfail(report_, error_excluded_reason(outcome.error_summary(run)))

    def check_callable(self, item: pytest.Item) -> None:
        """Raise for benchmarks pytest cannot call: generators and un-awaited coroutines."""
        __tracebackhide__ = True
        if not isinstance(item, Run):
            return
        benchmark = item.benchmark
        if benchmark.prob_callable:
            return  # an earlier run of this benchmark passed: so do the others (one function)
        function = getattr(item, "obj", None)
        name = getattr(item, "originalname", item.name)
        if inspect.isgeneratorfunction(function) or inspect.isasyncgenfunction(function):
            raise TypeError(
                f"benchmark {name!r} is a generator function; a benchmark must return, "
                "not yield (use a fixture for setup that yields)"
            )
        if not inspect.iscoroutinefunction(function):
            benchmark.prob_callable = True

    def check_unrun(self, item: pytest.Item) -> None:
        """Raise for an async benchmark's run that no async plugin ran. Called from a
        ``pytest_pyfunc_call`` impl of plain priority: after the tryfirst ones (anyio's, which runs
        the coroutine and stops the hook) and inside pytest-asyncio's ``runtest`` and pytest-trio's
        ``pytest_runtest_call`` (which swap ``obj`` for a plain function first), before pytest's own
        trylast impl, which would fail the run (pytest 9) or skip it (pytest 8). An error, never a
        failed run: the benchmark was not sampled."""
        __tracebackhide__ = True
        if not isinstance(item, Run) or not item.benchmark.prob_async:
            return
        if inspect.iscoroutinefunction(getattr(item, "obj", None)):
            raise TypeError(unrun_message(getattr(item, "originalname", item.name)))

    def finish(self) -> list[str]:
        """At the session's end: every module ``teardown()``; returns their errors."""
        return self.modules.teardown_all()

    def take_attached(self) -> tuple[dict[str, Any], RunRecord] | None:
        """The (report data, record) last attached to a teardown report in this process, once."""
        attached, self._attached = self._attached, None
        return attached

    def take_interrupted(self) -> list[RunRecord]:
        """The records of runs interrupted before their teardown report, and of runs executed ahead whose
        items never reported (the session stopped while they were in flight), once."""
        if self.window is not None:
            self._interrupted.extend(self.window.leftovers())
        records, self._interrupted = self._interrupted, []
        return records


def unrun_message(name: str) -> str:
    """The error of an async benchmark's run that no async plugin ran."""
    return (
        f"benchmark {name!r} is a coroutine function and no async plugin ran it: install pytest-asyncio, "
        "anyio or pytest-trio, and mark the benchmark for it (@pytest.mark.asyncio, @pytest.mark.anyio, "
        "@pytest.mark.trio) or turn on that plugin's auto mode"
    )
