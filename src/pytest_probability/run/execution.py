"""What the concurrent runs' window keeps of each run it executes, of each group, and of each limit.

:class:`Execution` is one run executing ahead of (or in) its item's call; :class:`Group`, runs that execute
together; :class:`Limit`, a benchmark's adaptive limit. :class:`Scheduler` is what the executors
(:mod:`.executors`) ask of the window (:mod:`.window`), so that neither module imports the other's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from . import streams

if TYPE_CHECKING:
    from collections.abc import Callable

    import pytest

    from ..collect.ahead import Plan
    from ..collect.items import Run
    from ..config.settings import Settings
    from ..model.case import CaseRef
    from ..model.run_state import CurrentRun
    from ..protocols import Registry
    from ..session import Session
    from .context import LateQueue


@dataclass(eq=False)
class Execution:
    """One run executing ahead of (or in) its item's call: what it was called with and what it gave."""

    item: Run
    run: CurrentRun
    group: Group
    function: Any
    kwargs: dict[str, Any]
    #: Executed in its own item's call (the group's leader), not ahead of it.
    leader: bool = False
    #: Epoch seconds when its call started, and when its last attempt ended.
    start_time: float = 0.0
    end_time: float = 0.0
    #: The last attempt's duration, in seconds.
    duration: float = 0.0
    done: bool = False
    #: Cancelled before it ended (Ctrl-C): no outcome of its own.
    cancelled: bool = False
    result: Any = None
    error: BaseException | None = None
    #: What it printed and logged, until its own call writes it out (:mod:`.streams`).
    output: list[tuple[str, str]] = field(default_factory=list)
    records: list[Any] = field(default_factory=list)
    #: The task or future executing it.
    handle: Any = None

    def outcome(self) -> Any:
        """Its result, or its exception raised: what its item's call gives."""
        __tracebackhide__ = True
        streams.replay(self)
        error, self.error = self.error, None
        result, self.result, self.kwargs = self.result, None, {}
        if error is not None:
            raise error
        return result


class Limit:
    """One benchmark's adaptive limit on the calls in flight: K at most, K to start with. A provider fault (a
    class of ``--prob-retry-on``) halves it, once per Retry-After, and no call starts before that wait is
    over; each success then raises it by one over its size, one per window of successes: additive increase,
    multiplicative decrease (Chiu and Jain, 1989; TCP's congestion avoidance, RFC 5681). One per success
    refilled the halved window within a round trip and met the provider's limit again: against a provider
    taking 16 calls at once, 43 % of calls were refused that way and 8 % this way
    (docs/performance.md, "Concurrent runs")."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.size = float(k)
        #: time.monotonic() before which no call starts (a Retry-After being waited out).
        self.hold_until = 0.0
        self.cuts = 0

    def allows(self, in_flight: int, now: float) -> bool:
        return in_flight < int(self.size) and now >= self.hold_until

    def fault(self, wait: float, now: float) -> bool:
        """A provider fault asking to wait ``wait`` seconds; whether the window was halved by it."""
        cut = now >= self.hold_until
        if cut:
            self.size = max(1.0, self.size / 2)
            self.cuts += 1
        self.hold_until = max(self.hold_until, now + wait)
        return cut

    def success(self) -> None:
        self.size = min(float(self.k), self.size + 1 / self.size)


class Group:
    """Runs that execute together: the same fixture values, awaited the same way (:class:`~..collect.ahead.Plan`)."""

    def __init__(self, plan: Plan, k: int, funcargs: dict[str, Any], limit: Limit, position: int) -> None:
        self.plan = plan
        self.k = k
        #: The fixture values its runs share: the leader's.
        self.funcargs = funcargs
        self.limit = limit
        #: Position (in this process's order) of the last item looked at for starting.
        self.position = position
        #: No more runs start in it (an item that cannot join it, a budget, ``-x``).
        self.closed = False
        #: Calls in flight (a run waiting out a Retry-After holds none), and runs waiting to retry.
        self.in_flight = 0
        self.waiting = 0
        #: A sliding group's loop, the context its tasks start from (a copy each), and the timer that looks
        #: again once its limit lets a run start.
        self.loop: Any = None
        self.base: Any = None
        self.timer: Any = None


class Stage(Protocol):
    """What the window asks of the run stage it belongs to (``run.phases.RunPhases``)."""

    settings: Settings
    session: Session
    parts: Registry
    late: LateQueue
    announce: Callable[[CaseRef], None] | None
    queued: Callable[[], list[int]] | None
    ahead_refused: str | None

    def decision(self, case: CaseRef) -> tuple[str, str] | None: ...


class Scheduler(Protocol):
    """What an executor asks of the window: which run starts next, and each execution's life."""

    interrupted: bool

    def begin(self, execution: Execution, kwargs: dict[str, Any]) -> None: ...

    def next_run(self, group: Group, session: pytest.Session) -> Execution | float | None: ...

    def starting(self, execution: Execution) -> None: ...

    def entered(self, execution: Execution) -> None: ...

    def attempt(
        self, execution: Execution, attempt: int, started: float, error: BaseException | None
    ) -> float | None: ...

    def finished(self, execution: Execution, result: Any, error: BaseException | None) -> None: ...

    def retry_slot(self, execution: Execution) -> float | None:
        """None once the retry may call again (it holds a call's place again), else seconds to wait first."""

    def cancel(self) -> None: ...
