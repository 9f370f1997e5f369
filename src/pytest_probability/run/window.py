"""Concurrent runs (``--prob-concurrency=K``): runs executed ahead of their items, each reported in place.

Every run stays a pytest item with its own setup, call and teardown, in order, through pytest's own
protocol; only what its call does changes (docs/developer-guide.md, "Concurrent runs"). The first run of a
group to be called *leads*: it starts itself and the runs after it that this process is sure to execute
(:meth:`Window.ahead`) and that may execute with it (:mod:`..collect.ahead`), at most K in flight, each in a
copy of the context with its own current run, span and output (:mod:`.streams`). A later run's call does
not call the benchmark again: it waits for its execution and returns its result, or raises its exception.
A group whose loop outlives each call *slides* (a run starts whenever one ends, from any run's call); any
other runs in *windows* of K that its leader's call waits for (:mod:`.executors`).

Whether a run starts is decided when it would start (:meth:`Window.next_run`): the decisions (a case
decided early), the guards (a budget), ``-x``/``--maxfail`` and the adaptive limit (:class:`Limit`), which
halves on a provider fault and waits out its Retry-After. Runs already in flight finish and are charged;
those whose items never report (the session stopped) have their records made at the end
(:meth:`Window.leftovers`).

Imported by the run stage when the first case asking for more than one run in flight is called.
"""

from __future__ import annotations

import functools
import inspect
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from ..collect.ahead import SLIDE, Plan, plan_of
from ..collect.items import Run, VerdictItem
from ..compat.pytest import fixtureinfo
from ..config.marker import concurrency_of
from ..config.retry import describe
from ..errors import ProbabilityConcurrencyWarning
from ..groups import leaf
from ..model.concurrency_figures import Meter
from ..vocabulary import BUDGET, ERROR, FAIL, GATE_KIND, SKIP
from . import context, outcome, streams
from .execution import Execution, Group, Limit, Stage
from .executors import make
from .retries import retry_event

if TYPE_CHECKING:
    from ..model.case import CaseRef
    from ..model.run import RunRecord
    from ..model.run_state import CurrentRun


class Window:
    """The runs this process executes ahead of their items (one per process, owned by its run stage, ``run.phases.RunPhases``)."""

    def __init__(self, phases: Stage) -> None:
        self.phases = phases
        self.settings = phases.settings
        self.policy = phases.settings.retry
        self.meter = Meter()
        #: Started ahead, their item not started yet: item -> execution.
        self.pending: dict[Run, Execution] = {}
        #: The execution of each item whose protocol runs now.
        self.current: dict[Run, Execution] = {}
        self.plans: dict[int, tuple[CaseRef, Plan | str, int]] = {}
        self.limits: dict[str, Limit] = {}
        self.group: Group | None = None
        #: Position of each item in the session's order, for the items that come after a run.
        self._positions: dict[int, int] | None = None
        #: Runs finished ahead whose reports will fail the session (``-x`` counts them before pytest does).
        self.failing: set[Run] = set()
        #: Ctrl-C (or a cancelled call) was seen: runs in flight are cancelled, not waited for.
        self.interrupted = False
        self.last_start = 0.0
        #: Whether this process said why its runs execute one at a time (an xdist scheduling).
        self.warned = False
        self.lock = threading.Lock()
        self._executors: dict[str, Any] = {}

    # -- what the run stage asks ---------------------------------------------------------------------

    def adopt(self, item: Run) -> Execution | None:
        """The execution started ahead for ``item``, now that its protocol starts (None: not started ahead)."""
        execution = self.pending.pop(item, None)
        if execution is not None:
            self.current[item] = execution
        return execution

    def replay(self, item: Run) -> bool:
        """Whether ``item`` was started ahead; then its call gives that execution's outcome (waiting for it
        in a sliding group), whatever was decided since it started."""
        execution = self.current.get(item)
        if execution is None or execution.leader:
            return False
        item.obj = self.executor(execution.group.plan.kind).replay(self, execution)
        return True

    def begin(self, execution: Execution, kwargs: dict[str, Any]) -> None:
        """A leader's call begins: its arguments, and (for a new group) the fixture values the group shares,
        which pytest set up for it."""
        execution.kwargs = kwargs
        group = execution.group
        if not group.funcargs:
            group.funcargs = dict(execution.item.funcargs)

    def lead(self, item: Run, run: CurrentRun) -> bool:
        """Make ``item``'s call start its group (or join the sliding one it belongs to); False when its runs
        execute one at a time (one run in flight asked, or a fixture that keeps them from running ahead)."""
        case = item.prob_case
        plan, k = self.plan(item, case)
        if k <= 1:
            return False
        self.meter.limit = max(self.meter.limit, k)
        refused = self.phases.ahead_refused
        if refused is not None:
            if not self.warned:
                self.warned = True
                self.meter.one_at_a_time.add(f"every run ({refused})")
                warnings.warn(ProbabilityConcurrencyWarning(refused), stacklevel=1)
            return False
        if not isinstance(plan, Plan):
            return False
        group = self.group
        if group is None or group.closed or group.plan.key != plan.key or group.k != k or group.plan.mode != SLIDE:
            limit = self.limits.get(case.benchmark)
            if limit is None or limit.k != k:
                limit = self.limits[case.benchmark] = Limit(k)
            group = self.group = Group(plan, k, {}, limit, self.position(item))
        else:  # a run of the sliding group reached before it could start: every item before it has executed
            group.position = max(group.position, self.position(item))
        function = item.obj
        execution = Execution(item, run, group, function, {}, leader=True)
        run.concurrent = True
        self.current[item] = execution
        item.obj = self.executor(plan.kind).lead(self, execution, function)
        return True

    def report(self, item: Run, report: pytest.TestReport) -> None:
        """Its own start, stop and duration on the call report of a run the window executed."""
        execution = self.current.get(item)
        if execution is None or not execution.done:
            return
        report.start, report.stop, report.duration = execution.start_time, execution.end_time, execution.duration

    def conclude(self, item: Run, run: CurrentRun) -> bool:
        """``item``'s protocol was interrupted before its teardown report: when its execution had ended, the
        run takes that outcome (its call ran whole) and True; else False (it is a skip that says why)."""
        execution = self.current.get(item)
        if execution is None:
            return False
        if not execution.done:
            self.executor(execution.group.plan.kind).wait(execution)
        if not execution.done or execution.cancelled:
            return False
        outcome.on_phase(run, _Call(execution))
        self.meter.unreported += 1
        return True

    def ended(self, item: Run) -> None:
        """``item``'s protocol ended: its reports are logged (``-x`` has counted it). The item gets its own
        function back, so that nothing of its execution (its run, its output) is kept with it."""
        execution = self.current.pop(item, None)
        if execution is not None:
            item.obj = execution.function
            execution.handle = None  # its task (or future) goes now, not at the next garbage collection
        self.failing.discard(item)

    # -- which runs, and whether one may start -----------------------------------------------------

    def plan(self, item: Run, case: CaseRef) -> tuple[Plan | str, int]:
        """(how ``case``'s runs execute ahead, or why they do not; its K), once per case."""
        cached = self.plans.get(id(case))
        if cached is not None and cached[0] is case:
            return cached[1], cached[2]
        k = concurrency_of(self.settings, case.marks)
        plan: Plan | str = plan_of(item) if k > 1 else ""
        if k > 1 and isinstance(plan, str) and plan:
            self.meter.one_at_a_time.add(f"{item.parent.nodeid if item.parent else case.benchmark} ({plan})")
        self.plans[id(case)] = (case, plan, k)
        return plan, k

    def position(self, item: pytest.Item) -> int:
        positions = self._positions
        if positions is None:
            positions = self._positions = {id(it): index for index, it in enumerate(item.session.items)}
        return positions.get(id(item), -1)

    def ahead(self, group: Group, session: pytest.Session) -> Iterator[tuple[int, pytest.Item]]:
        """(position, item) of the items this process will execute after ``group.position``, in its order,
        as far as it is sure of them: every later item of a serial session, an xdist worker's queue."""
        items = session.items
        queued = self.phases.queued
        if queued is None:
            for index in range(group.position + 1, len(items)):
                yield index, items[index]
            return
        for index in queued():
            if index > group.position:
                yield index, items[index]

    def next_run(self, group: Group, session: pytest.Session) -> Execution | float | None:
        """The next run that starts in ``group``, prepared (not started); or the ``time.monotonic()`` before
        which none may (the limit is full or a Retry-After is being waited out: any run's end may free it
        sooner); or None when none will start now (the group is closed, or this process knows no more
        items yet). Looking stops at an item that cannot join the group, which closes it."""
        if group.closed:
            return None
        if len(self.pending) + len(self.current) >= group.k:
            return None  # K runs started and not yet reported (in flight): one more starts once one reports
        now = time.monotonic()
        delay = self.settings.delay
        if group.waiting or not group.limit.allows(group.in_flight, now) or (delay and now - self.last_start < delay):
            return max(group.limit.hold_until, self.last_start + delay if delay else 0.0, now + 0.001)
        maxfail = session.config.getoption("maxfail", 0) or 0
        if session.shouldstop or session.shouldfail or (maxfail and session.testsfailed + len(self.failing) >= maxfail):
            group.closed = True
            return None
        for index, item in self.ahead(group, session):
            if isinstance(item, VerdictItem) or item in self.pending or item in self.current:
                group.position = index
                continue
            if not isinstance(item, Run):
                group.closed = True
                return None
            plan, k = self.plan(item, item.prob_case)
            if not isinstance(plan, Plan) or plan.key != group.plan.key or k != group.k:
                group.closed = True
                return None
            decision = self.phases.decision(item.prob_case)
            if decision is not None and decision[0] == BUDGET:
                group.closed = True  # no run starts; theirs skip in their own setup
                return None
            group.position = index
            if decision is not None:
                continue  # its case was decided early: it skips in its own setup
            execution = self.prepare(group, item)
            if execution is None:
                return None
            return execution
        return None

    def prepare(self, group: Group, item: Run) -> Execution | None:
        """An execution of ``item`` ahead of its item: its run (current in its own context only), its
        function and arguments (its parameters, and the group's fixture values)."""
        kwargs: dict[str, Any] = {}
        params = getattr(getattr(item, "callspec", None), "params", {})
        for name in fixtureinfo(item).argnames:
            if name in params:
                kwargs[name] = params[name]
            elif name in group.funcargs:
                kwargs[name] = group.funcargs[name]
            else:
                group.closed = True  # a fixture the leader had no value of: it runs in its own call
                return None
        case = item.prob_case
        run = context.make(case, item.prob_run, item.nodeid)
        run.late_queue = self.phases.late
        run.concurrent = run.own_context = True
        execution = Execution(item, run, group, item.obj, kwargs)
        self.pending[item] = execution
        return execution

    # -- executing ------------------------------------------------------------------------------------

    def executor(self, kind: str) -> Any:
        executor = self._executors.get(kind)
        if executor is None:
            executor = self._executors[kind] = make(kind)
        return executor

    def starting(self, execution: Execution) -> None:
        """An execution is about to start (in the caller that starts it, so that the next may count it)."""
        group = execution.group
        with self.lock:
            group.in_flight += 1
        self.meter.started()
        self.last_start = time.monotonic()

    def entered(self, execution: Execution) -> None:
        """An execution starts, in its own context (its task's or thread's): its run is current there, its
        output is its own, and the observers see it start (a leader's span, started by its item, is made
        current there too)."""
        execution.start_time = time.time()
        context.enter(execution.run)
        streams.EXECUTING.set(execution)
        observers = self.phases.parts.observers
        if execution.leader:
            for observer in observers:
                observer.run_entered(execution.item, execution.run)
            return
        announce = self.phases.announce
        if announce is not None:
            announce(execution.run.case)
        for observer in observers:
            observer.run_started(execution.item, execution.run)

    def attempt(self, execution: Execution, attempt: int, started: float, error: BaseException | None) -> float | None:
        """One attempt ended (``error`` or a result): the seconds to wait before retrying it, or None when it is
        its last. A provider fault tells the group's limit."""
        now = time.perf_counter()
        execution.duration = now - started
        execution.end_time = time.time()
        policy = self.policy
        if error is None or policy is None or not policy.matches(error):
            if error is None:
                execution.group.limit.success()
            return None
        wait = policy.wait(error, attempt)
        self.meter.faults += 1
        if execution.group.limit.fault(wait, time.monotonic()):
            self.meter.cuts += 1
        if attempt > policy.retries:
            return None
        error_type, text = describe(error)
        entry = {"attempt": attempt, "error_type": error_type, "error": text, "wait": wait}
        execution.run.retries.append(entry)
        retry_event(entry)
        with self.lock:  # it waits out its Retry-After holding no call's place, then waits for one
            execution.group.in_flight -= 1
            execution.group.waiting += 1
        return wait

    def retry_slot(self, execution: Execution) -> float | None:
        """None once a run waiting to retry may call again (it takes a call's place: retries go before new
        runs), else the seconds to wait before asking again."""
        group = execution.group
        now = time.monotonic()
        with self.lock:
            if group.limit.allows(group.in_flight, now) or self.interrupted:
                group.in_flight += 1
                group.waiting -= 1
                return None
        return max(0.005, group.limit.hold_until - now)

    def finished(self, execution: Execution, result: Any, error: BaseException | None) -> None:
        """An execution ended (in its own context): its outcome is kept for its item's call."""
        execution.result, execution.error = result, error
        run = execution.run
        run.attempt_duration = execution.duration
        run.call_end = execution.end_time
        with self.lock:
            execution.group.in_flight -= 1
        execution.done = True
        self.meter.ended(None if execution.cancelled else execution.duration)
        if error is not None and not execution.leader and self._fails_session(execution.item, error):
            self.failing.add(execution.item)

    def _fails_session(self, item: Run, error: BaseException) -> bool:
        """Whether ``item``'s report will fail the session (what ``-x`` counts): an error, or an assertion
        failure of a case no verdict judges."""
        exc = leaf(error)
        if isinstance(exc, (pytest.skip.Exception, pytest.xfail.Exception)):
            return False
        judged = item.prob_gated and not item.config.option.runxfail
        failed = isinstance(exc, (AssertionError, pytest.fail.Exception))
        if judged and failed:
            return False
        if judged and item.prob_judged_by == GATE_KIND and self.phases.session.stats.errors == "exclude":
            return False
        return True

    def cancel(self) -> None:
        """Ctrl-C (or a cancelled call): no run starts any more, those in flight are cancelled."""
        self.interrupted = True
        group = self.group
        if group is not None:
            group.closed = True
        for executor in self._executors.values():
            executor.cancel(self)

    # -- the session's end ------------------------------------------------------------------------------

    def leftovers(self) -> list[RunRecord]:
        """Records of the runs started ahead whose items never reported (the session stopped: ``-x``, a
        crash in another run, Ctrl-C): a run that ended has its outcome, one cancelled is a skip that says
        so; each is charged what it recorded. Waits first for those still in flight, unless interrupted."""
        for executor in self._executors.values():
            executor.settle(self)
        streams.restore()
        records = []
        for execution in list(self.pending.values()):
            records.append(self._record(execution))
        self.pending.clear()
        return records

    def _record(self, execution: Execution) -> RunRecord:
        run = execution.run
        if execution.done and not execution.cancelled:
            call = _Call(execution)
            outcome.on_phase(run, call)
            self.meter.unreported += 1
        else:
            run.outcome = SKIP
            run.message = "interrupted: in flight when the session stopped"
            self.meter.cancelled += 1
        settings = self.settings
        context.settle(run, settings.span_usage, settings.prices)
        for observer in self.phases.parts.observers:
            observer.run_closed(execution.item, run)
        return context.close(run)

    def stats(self) -> dict[str, Any] | None:
        """What concurrent runs did in this process, as plain builtins; None when none ran."""
        snapshot = self.meter.snapshot()
        return snapshot.to_dict() if snapshot.processes else None


class _Call:
    """A call phase as :func:`.outcome.on_phase` reads one, for a run whose item never reported."""

    when = "call"

    def __init__(self, execution: Execution) -> None:
        self.duration = execution.duration
        error = execution.error
        self.excinfo = pytest.ExceptionInfo.from_exception(error) if error is not None else None


def wraps(function: Any, make: Callable[..., Any]) -> Any:
    """``make`` (the call a run's item gives) as ``function`` for pytest and the async plugins: its name, its
    ``__wrapped__`` (pytest cuts a traceback at the benchmark's own frame) and, for a coroutine function,
    a coroutine function."""
    return functools.wraps(function)(make)


def is_coroutine_function(function: Any) -> bool:
    return inspect.iscoroutinefunction(function)


__all__ = ["ERROR", "FAIL", "Execution", "Group", "Limit", "Window", "is_coroutine_function", "wraps"]
