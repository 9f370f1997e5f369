"""How a group's runs execute at once: sync benchmarks in threads, async ones as tasks of their event loop.

:class:`Threads` runs a window of a sync benchmark's runs in a pool of K threads, each in a copy of the
context, inside its leader's call. :class:`Tasks` runs an async benchmark's runs as tasks of the loop its
leader's call runs on: asyncio's (pytest-asyncio, anyio on asyncio) or trio's (pytest-trio, anyio on
trio). Where the loop outlives each call (pytest-asyncio with a wider loop scope) the group *slides*: each
run's call starts what may start and waits for its own execution, and a run that ends starts the next.
Elsewhere (a loop per call, trio, threads) the leader's call runs a *window* of up to K runs and returns
once they have all ended.

Each execution calls the benchmark, retries it on a provider fault (waiting in its own task or thread),
and keeps its outcome for its item's call (:meth:`~.window.Execution.outcome`). Imported by the window
when the first group of a kind leads; trio only when a trio loop runs the call.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import sys
import time
from typing import TYPE_CHECKING, Any

from ..collect.ahead import SLIDE, SYNC
from ..groups import leaf
from . import streams
from .execution import Execution

if TYPE_CHECKING:
    from .execution import Group
    from .execution import Scheduler as Window

#: Longest single wait of a leader's loop, so that Ctrl-C is seen within it on every platform.
POLL = 0.5
#: After Ctrl-C, how long runs in flight in threads (which cannot be stopped) are waited for, so that a call
#: about to end is recorded with its outcome rather than as interrupted.
GRACE = 2.0


def make(kind: str) -> Threads | Tasks:
    return Threads() if kind == SYNC else Tasks()


def _fill(
    window: Window, group: Group, started: list[Execution], start: Any, session: Any
) -> tuple[bool, float | None]:
    """Start what may start in a window of up to K runs: (whether no more will start, the monotonic time
    before which none may)."""
    while len(started) < group.k:
        nxt = window.next_run(group, session)
        if nxt is None:
            return True, None
        if isinstance(nxt, float):
            return False, nxt
        window.starting(nxt)
        started.append(nxt)
        start(nxt)
    return True, None


def _timeout(until: float | None) -> float:
    return POLL if until is None else max(0.0, min(POLL, until - time.monotonic()))


class Threads:
    """Sync benchmarks: a window of runs in a pool of threads, inside the leader's call."""

    def __init__(self) -> None:
        self.pool: concurrent.futures.ThreadPoolExecutor | None = None
        self.size = 0
        self.running: set[Execution] = set()

    def lead(self, window: Window, execution: Execution, function: Any) -> Any:
        def lead(**kwargs: Any) -> Any:
            __tracebackhide__ = True
            window.begin(execution, kwargs)
            self.run_window(window, execution)
            return execution.outcome()

        return functools.wraps(function)(lead)

    def replay(self, window: Window, execution: Execution) -> Any:
        def replay(**kwargs: Any) -> Any:
            __tracebackhide__ = True
            return execution.outcome()

        return functools.wraps(execution.function)(replay)

    def _pool(self, k: int) -> concurrent.futures.ThreadPoolExecutor:
        if self.pool is None or self.size < k:
            if self.pool is not None:
                self.pool.shutdown(wait=False)
            self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=k, thread_name_prefix="pytest-probability")
            self.size = k
        return self.pool

    def run_window(self, window: Window, leader: Execution) -> None:
        group, session = leader.group, leader.item.session
        pool = self._pool(group.k)

        def start(execution: Execution) -> None:
            self.running.add(execution)
            execution.handle = pool.submit(contextvars.copy_context().run, self.execute, window, execution)

        started = [leader]
        window.starting(leader)
        with streams.routed():
            try:
                start(leader)
                while True:
                    exhausted, until = _fill(window, group, started, start, session)
                    running = [e.handle for e in started if not e.done]
                    if not running and exhausted:
                        return
                    if running:
                        concurrent.futures.wait(
                            running, timeout=_timeout(until), return_when=concurrent.futures.FIRST_COMPLETED
                        )
                    else:
                        time.sleep(_timeout(until))
            except BaseException:
                window.cancel()
                raise

    def execute(self, window: Window, execution: Execution) -> None:
        __tracebackhide__ = True
        window.entered(execution)
        attempt, result, error = 1, None, None
        try:
            while True:
                started, result, error = time.perf_counter(), None, None
                try:
                    result = execution.function(**execution.kwargs)
                except BaseException as exc:  # noqa: BLE001 - the run's outcome, raised again in its own call
                    error = exc
                wait = window.attempt(execution, attempt, started, error)
                if wait is None:
                    break
                time.sleep(wait)
                while (wait := window.retry_slot(execution)) is not None:
                    time.sleep(wait)
                attempt += 1
        finally:
            self.running.discard(execution)
            window.finished(execution, result, error)

    def cancel(self, window: Window) -> None:
        """Ctrl-C: threads cannot be stopped; those not started are, and no more start."""
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool, self.size = None, 0

    def settle(self, window: Window) -> None:
        """At the session's end: wait for runs still in flight (each ends with its call); after Ctrl-C, for
        at most :data:`GRACE` seconds."""
        handles = [e.handle for e in list(self.running) if e.handle is not None]
        if handles:
            concurrent.futures.wait(handles, timeout=GRACE if window.interrupted else None)

    def wait(self, execution: Execution) -> None:
        """After Ctrl-C: wait at most :data:`GRACE` seconds for a run's thread to end its call."""
        if execution.handle is not None and not execution.done:
            concurrent.futures.wait([execution.handle], timeout=GRACE)


class Tasks:
    """Async benchmarks: tasks of the loop the leader's call runs on (asyncio, or trio)."""

    def __init__(self) -> None:
        #: asyncio tasks in flight, for Ctrl-C and the session's end.
        self.tasks: dict[Execution, Any] = {}

    def lead(self, window: Window, execution: Execution, function: Any) -> Any:
        async def lead(**kwargs: Any) -> Any:
            __tracebackhide__ = True
            window.begin(execution, kwargs)
            if _trio_running():
                await self._trio_window(window, execution)
            elif execution.group.plan.mode == SLIDE:
                await self._slide(window, execution, lead=True)
            else:
                await self._asyncio_window(window, execution)
            return execution.outcome()

        return functools.wraps(function)(lead)

    def replay(self, window: Window, execution: Execution) -> Any:
        async def replay(**kwargs: Any) -> Any:
            __tracebackhide__ = True
            if execution.group.plan.mode == SLIDE and not _trio_running():
                await self._slide(window, execution, lead=False)
            return execution.outcome()

        return functools.wraps(execution.function)(replay)

    async def _execute(self, window: Window, execution: Execution, sleep: Any, cancelled: type[BaseException]) -> None:
        __tracebackhide__ = True
        window.entered(execution)
        attempt, result, error = 1, None, None
        try:
            while True:
                started, result, error = time.perf_counter(), None, None
                try:
                    result = await execution.function(**execution.kwargs)
                except (cancelled, KeyboardInterrupt):  # the window's (Ctrl-C): not the run's outcome
                    execution.cancelled = True
                    window.cancel()
                    raise
                except BaseException as exc:  # noqa: BLE001 - the run's outcome, raised again in its own call
                    error = exc
                wait = window.attempt(execution, attempt, started, error)
                if wait is None:
                    break
                await sleep(wait)
                while (wait := window.retry_slot(execution)) is not None:
                    await sleep(wait)
                attempt += 1
        finally:
            self.tasks.pop(execution, None)
            window.finished(execution, result, error)

    # -- asyncio ------------------------------------------------------------------------------------------

    def _spawn(
        self, window: Window, execution: Execution, loop: asyncio.AbstractEventLoop, base: contextvars.Context
    ) -> None:
        coroutine = self._execute(window, execution, asyncio.sleep, asyncio.CancelledError)
        task = base.copy().run(loop.create_task, coroutine)  # the task runs in a copy of the copy
        execution.handle = self.tasks[execution] = task

    async def _asyncio_window(self, window: Window, leader: Execution) -> None:
        group, session = leader.group, leader.item.session
        loop, base = asyncio.get_running_loop(), contextvars.copy_context()
        started = [leader]
        window.starting(leader)
        with streams.routed():
            try:
                self._spawn(window, leader, loop, base)
                while True:
                    exhausted, until = _fill(
                        window, group, started, lambda e: self._spawn(window, e, loop, base), session
                    )
                    running = [e.handle for e in started if not e.done]
                    if not running and exhausted:
                        return
                    if running:
                        await asyncio.wait(running, timeout=_timeout(until), return_when=asyncio.FIRST_COMPLETED)
                    else:
                        await asyncio.sleep(_timeout(until))
            except BaseException:
                window.cancel()
                await _drain([e.handle for e in started if not e.done])
                raise

    async def _slide(self, window: Window, execution: Execution, lead: bool) -> None:
        """A sliding group: start what may start (this run first, when it leads), then wait for this run."""
        group, session = execution.group, execution.item.session
        loop = asyncio.get_running_loop()
        if group.loop is None:
            group.loop, group.base = loop, contextvars.copy_context()
        with streams.routed(keep=True):
            try:
                if lead:
                    window.starting(execution)
                    self._spawn(window, execution, loop, group.base)
                    execution.handle.add_done_callback(lambda _task: self._top_up(window, group, session, loop))
                self._top_up(window, group, session, loop)
                if not execution.done:
                    await asyncio.wait([execution.handle])
            except BaseException:
                window.cancel()
                await _drain([task for task in self.tasks.values() if not task.done()])
                raise

    def _top_up(self, window: Window, group: Group, session: Any, loop: asyncio.AbstractEventLoop) -> None:
        """Start every run that may start now in a sliding group; if the limit holds them back, look again
        when it lets go (and whenever a run ends)."""
        while True:
            nxt = window.next_run(group, session)
            if isinstance(nxt, Execution):
                window.starting(nxt)
                self._spawn(window, nxt, loop, group.base)
                nxt.handle.add_done_callback(lambda _task: self._top_up(window, group, session, loop))
                continue
            if isinstance(nxt, float) and group.timer is None:

                def again() -> None:
                    group.timer = None
                    self._top_up(window, group, session, loop)

                group.timer = loop.call_later(max(0.0, nxt - time.monotonic()), again)
            return

    # -- trio -----------------------------------------------------------------------------------------------

    async def _trio_window(self, window: Window, leader: Execution) -> None:
        import trio  # a trio loop runs this call: trio is imported already

        group, session = leader.group, leader.item.session
        ended = [trio.Event()]

        async def execute(execution: Execution) -> None:
            try:
                await self._execute(window, execution, trio.sleep, trio.Cancelled)
            finally:
                ended[0].set()

        started = [leader]
        window.starting(leader)
        with streams.routed():
            try:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(execute, leader)
                    while True:
                        exhausted, until = _fill(
                            window, group, started, lambda e: nursery.start_soon(execute, e), session
                        )
                        if all(e.done for e in started) and exhausted:
                            return
                        with trio.move_on_after(_timeout(until)):
                            await ended[0].wait()
                        ended[0] = trio.Event()
            except BaseException as exc:
                window.cancel()
                interruption = leaf(exc)  # trio's nursery holds a run's KeyboardInterrupt in a group
                if isinstance(interruption, KeyboardInterrupt):
                    raise interruption from None
                raise

    # -- Ctrl-C and the session's end --------------------------------------------------------------------

    def wait(self, execution: Execution) -> None:
        """Tasks are cancelled on Ctrl-C, not waited for."""

    def cancel(self, window: Window) -> None:
        for task in list(self.tasks.values()):
            if not task.done():
                task.cancel()

    def settle(self, window: Window) -> None:
        """At the session's end: the tasks of a sliding group still in flight (their loop stopped when the
        last call returned) run to their end, or are cancelled when interrupted, if their loop still can."""
        pending = [task for task in self.tasks.values() if not task.done()]
        if not pending:
            return
        loop = pending[0].get_loop()
        if loop.is_closed() or loop.is_running():
            for execution in list(self.tasks):
                execution.cancelled = True
            return
        if window.interrupted:
            for task in pending:
                task.cancel()
        for _ in range(3):  # a stop left set by the call that was interrupted ends the first run early
            pending = [task for task in pending if not task.done()]
            if not pending:
                return
            try:
                loop.run_until_complete(_drain(pending))
            except RuntimeError:
                continue


async def _drain(tasks: list[Any]) -> None:
    """Wait for ``tasks`` to end, whatever they raise."""
    if tasks:
        await asyncio.gather(*tasks, return_exceptions=True)


def _trio_running() -> bool:
    """Whether this call runs on trio's loop (pytest-trio, or anyio's trio backend) rather than asyncio's."""
    if "trio" not in sys.modules:
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return True
    return False
