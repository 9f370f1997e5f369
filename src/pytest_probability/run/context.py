"""The current run: which run usage belongs to, in this process, this context and the threads it started.

While a run executes (setup, call and teardown) it is this process's
*current run*. :mod:`.recording`'s public functions charge the run of the
calling context, else of the calling thread, else the current one
(docs/developer-guide.md, "Which run usage belongs to"). Once a run's record
is built (:func:`close`), usage still recorded for it is *late*: it is told to
the run's ``late_listeners`` (the run stage's :class:`LateQueue`, which ships
it, and the run's span) and charged to it in the aggregating process, never to
the run executing then.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import threading
import warnings
import weakref
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ..errors import ProbabilityUsageWarning
from ..model.case import CaseRef
from ..model.run import RunRecord, Score, Usage
from ..model.run_state import CurrentRun
from ..text import printable
from ..vocabulary import ROLE_JUDGE, ROLE_SYSTEM, SOURCE_RECORD, SPAN_FILL

if TYPE_CHECKING:
    from ..model.prices import Prices

_lock = threading.Lock()
_current: CurrentRun | None = None
#: The run of the calling context: set in the thread executing the runs, and inherited by
#: what copies the context (asyncio tasks, ``asyncio.to_thread``, ``contextvars.copy_context``).
_context_run: contextvars.ContextVar[CurrentRun | None] = contextvars.ContextVar("pytest_probability_run", default=None)
#: Whether the calling context is grading an answer (``judging()``): its usage is the judge's.
_judging: contextvars.ContextVar[bool] = contextvars.ContextVar("pytest_probability_judging", default=False)


@contextlib.contextmanager
def judging() -> Iterator[None]:
    """Usage recorded (or read off spans that end) inside the block is the judge's, not the system's:
    LLM-as-judge calls are the evaluation's cost. Tasks started inside inherit it; threads do not."""
    token = _judging.set(True)
    try:
        yield
    finally:
        _judging.reset(token)


def role_here() -> str:
    """The role of usage made in the calling context: ``judge`` inside :func:`judging`, else ``system``."""
    return ROLE_JUDGE if _judging.get() else ROLE_SYSTEM


#: Threads started during a run (and still alive when it ended) -> that run.
_thread_runs: weakref.WeakKeyDictionary[threading.Thread, CurrentRun] = weakref.WeakKeyDictionary()
#: Thread pools serve whichever run submits work: their threads belong to no run.
_POOL_MODULES = ("concurrent.futures.thread", "multiprocessing.pool")


def current_run() -> CurrentRun | None:
    """The run executing in this process, if any."""
    return _current


def start(case: CaseRef, run: int, nodeid: str) -> CurrentRun:
    # Alone, the thread running the run needs no set: close() never binds the current thread.
    threads = frozenset(threading.enumerate()) if threading.active_count() > 1 else frozenset()
    current = CurrentRun(case=case, run=run, nodeid=nodeid, threads_at_start=threads)
    resume(current)
    return current


def make(case: CaseRef, run: int, nodeid: str) -> CurrentRun:
    """A run executed ahead of its item (``run.window``): current only in its own context (:func:`enter`),
    never the process's until its item's protocol makes it so (:func:`resume`)."""
    return CurrentRun(case=case, run=run, nodeid=nodeid)


def enter(run: CurrentRun) -> None:
    """Make ``run`` the calling context's run (a concurrent run's task or thread); the process's is unchanged."""
    _context_run.set(run)


def resume(run: CurrentRun | None) -> None:
    """Make ``run`` (or no run) current in this process and this context."""
    global _current
    _current = run
    _context_run.set(run)


def finish() -> None:
    resume(None)


def bind(function: Callable[..., Any], run: CurrentRun) -> Callable[..., Any]:
    """``function`` (a coroutine function) setting ``run`` as its context's run while it is awaited.

    An async plugin may await the benchmark in a task whose context was copied before this run
    started: anyio awaits every test and fixture in one long-lived runner task (kept while a
    module- or session-scoped async fixture holds it), so without this, every later run's usage
    would be charged to the run that started the task, as late usage."""

    @functools.wraps(function)
    async def bound(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        token = _context_run.set(run)
        try:
            return await function(*args, **kwargs)
        finally:
            _context_run.reset(token)

    return bound


def close(run: CurrentRun) -> RunRecord:
    """Build the run's record; usage recorded for ``run`` after this is late.

    Threads started during the run and still alive stay bound to it, so
    that what they record later is charged to it, not to whichever run is
    current then.
    """
    with _lock:
        record = run.to_record()
        run.closed = True
    if threading.active_count() == 1:
        return record  # only the thread running the run: no thread to bind to it
    for thread in threading.enumerate():
        if (
            thread not in run.threads_at_start
            and thread is not threading.current_thread()
            and not _is_pool_worker(thread)
        ):
            _thread_runs[thread] = run
    return record


def _is_pool_worker(thread: threading.Thread) -> bool:
    return getattr(getattr(thread, "_target", None), "__module__", None) in _POOL_MODULES


def settle(run: CurrentRun, span_usage: str, prices: Prices | None) -> None:
    """At the run's end, before its span ends and its record is built: its span usage merged
    (:func:`merge`) and its usage without a cost priced. Usage that arrives after this is late,
    and follows the same rules (:func:`charge`, :func:`charge_span`)."""
    with _lock:
        spans, run.span_usage = run.span_usage, []
        if spans:
            run.usage.extend(merge(run.usage, spans, span_usage))
        if prices is not None and run.usage:
            run.usage[:] = [prices.apply(u) for u in run.usage]
        run.span_mode, run.prices = span_usage, prices
        run.closed = True


def merge(recorded: Any, spans: list[Usage], mode: str) -> list[Usage]:
    """The span usage that joins a run's ``recorded`` usage: every entry (``add``), or, under ``fill``,
    those of models the run did not record with ``record_usage()`` (a span's response or request model)."""
    if mode != SPAN_FILL:
        return spans
    models = {(u.role, u.model) for u in recorded if u.source == SOURCE_RECORD}
    if not models:
        return spans
    # per role: the judge's spans of a model the system recorded still count (and the other way round)
    return [u for u in spans if (u.role, u.model) not in models and (u.role, u.request_model) not in models]


def run_of_context() -> CurrentRun | None:
    """The run usage made here belongs to: the calling context's, else the calling thread's, else the current one."""
    run = _context_run.get()
    if run is None:
        run = _thread_runs.get(threading.current_thread())
        if run is None:
            run = _current
    return run


def charge_span(usage: Usage) -> bool:
    """Usage read off a span that ended here: to its run's span usage, or late once its run ended
    (then under the rules the run's end applied: :func:`settle`). False when no run is current
    (a span outside any run): not charged."""
    run = run_of_context()
    if run is None:
        return False
    if _judging.get() and usage.role != ROLE_JUDGE:
        usage = usage.replace(role=ROLE_JUDGE)
    with _lock:
        late = run.closed
        if not late:
            run.span_usage.append(usage)
            return True
        if not merge(run.usage, [usage], run.span_mode):
            return True  # a model the run recorded itself (prob_span_usage = fill)
        if run.prices is not None:
            usage = run.prices.apply(usage)
    _tell_late(run, usage, 0.0)
    return True


def note_operation(trace_id: int, span_id: int, response_id: str) -> None:
    """A GenAI span that ended here, inside a run and outside :func:`judging` (a judge's call is the
    evaluation, not what it evaluates): one of the operations the run's evaluation results may be of. Two
    are enough to know there is more than one; one ending after its run's end is not the run's."""
    run = run_of_context()
    if run is None or _judging.get():
        return
    with _lock:
        if not run.closed and len(run.operations) < 2:
            run.operations.append((trace_id, span_id, response_id))


def require_current(function: str) -> CurrentRun:
    """The run usage is charged to: the calling context's, else the calling thread's, else the current one."""
    run = _context_run.get()
    if run is None:
        run = _thread_runs.get(threading.current_thread())
    if run is None:
        run = _current
    if run is None:
        raise RuntimeError(
            f"{function}() was called outside a benchmark run; call it from a bench_* "
            "function or a fixture it uses, while the run executes"
        )
    return run


def charge(function: str, run: CurrentRun, usage: Usage | None, extra_cost: float) -> None:
    """Add usage to its run, or, once the run has ended, queue it as late usage."""
    with _lock:
        late = run.closed
        if late:
            if usage is not None and run.prices is not None:
                usage = run.prices.apply(usage)
        elif usage is not None:
            run.usage.append(usage)
        else:
            run.extra_cost += extra_cost
    if late:
        _tell_late(run, usage, extra_cost)
        warnings.warn(
            ProbabilityUsageWarning(
                printable(
                    f"{function}() was called after run {run.nodeid} had ended (from a thread or task that "
                    "outlived it); charged to that run, not to the run executing now"
                )
            ),
            stacklevel=3,
        )


def _tell_late(run: CurrentRun, usage: Usage | None, extra_cost: float) -> None:
    queue = run.late_queue
    if queue is not None:
        queue.add(run, usage, extra_cost)
    for listener in run.late_listeners:
        try:
            listener(run, usage, extra_cost)
        except Exception:  # pragma: no cover - an observer's failure must not reach the caller
            pass


def charge_score(run: CurrentRun, score: Score) -> bool:
    """Add a score to its run, or, once the run has ended, queue it as late (charged to its run in the
    aggregating process). Whether it was late."""
    with _lock:
        late = run.closed
        if not late:
            run.scores.append(score)
    if late and run.late_queue is not None:
        run.late_queue.add_score(run, score)
    return late


def add_transcript(run: CurrentRun, entry: dict[str, Any], limit: int) -> bool:
    """Append a transcript entry to its run (under the lock, as usage is), unless the run already
    holds ``limit`` entries: then count it as dropped. Whether it was kept."""
    with _lock:
        if len(run.transcript) >= limit:
            run.transcript_dropped += 1
            return False
        run.transcript.append(entry)
        return True


class LateQueue:
    """Usage and scores recorded after their run had ended, in the process that executed the run, until they
    travel to the aggregating process (on the next teardown report, or in an xdist worker's output): every
    run's ``late_queue`` (:meth:`add`, :meth:`add_score`), drained by :meth:`take`. Threads and tasks that
    outlived their run add to it."""

    def __init__(self) -> None:
        self._items: list[tuple[str, Usage | None, float, Score | None]] = []
        self._lock = threading.Lock()

    def add(self, run: CurrentRun, usage: Usage | None, extra_cost: float) -> None:
        with self._lock:
            self._items.append((run.nodeid, usage, extra_cost, None))

    def add_score(self, run: CurrentRun, score: Score) -> None:
        with self._lock:
            self._items.append((run.nodeid, None, 0.0, score))

    @property
    def pending(self) -> bool:
        """Whether late usage is waiting (checked at every teardown report: a list's truth, no lock)."""
        return bool(self._items)

    def take(self) -> list[dict[str, Any]]:
        """The late usage recorded so far, as plain builtins, for the aggregating process."""
        with self._lock:
            items, self._items = self._items, []
        return [
            {
                "nodeid": nodeid,
                "usage": usage.to_dict() if usage is not None else None,
                "extra_cost": extra,
                **({"scores": [score.to_dict()]} if score is not None else {}),
            }
            for nodeid, usage, extra, score in items
        ]
