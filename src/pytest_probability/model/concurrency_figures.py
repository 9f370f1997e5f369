"""What concurrent runs (``--prob-concurrency``) did in one process, and in a session: pure, pytest-free.

A :class:`Meter` counts, in the process executing runs, the runs in flight over time; its
:meth:`~Meter.snapshot` is a :class:`Concurrency`, plain numbers that travel to the aggregating process
(an xdist worker's in its output) and add up over processes (:meth:`Concurrency.merged`). The *ideal* wall
time is what the runs' calls would take with exactly K of them in flight all the time: the sum of their
call times divided by K (and by the processes executing them).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Concurrency:
    """Runs in flight in one or more processes: the limit asked for, what was reached, and what it cost."""

    #: The most runs in flight one process was asked to keep (the largest K of its cases).
    limit: int = 1
    #: Processes that executed runs concurrently (xdist workers, or the one serial process).
    processes: int = 0
    #: Runs executed concurrently (each once, its retries included).
    runs: int = 0
    #: Seconds of their calls (the last attempt of each), added up.
    call_seconds: float = 0.0
    #: Wall seconds during which at least one run was in flight; over processes, the longest one's.
    wall_seconds: float = 0.0
    #: Run-seconds in flight (runs in flight integrated over time), added up over processes.
    in_flight_seconds: float = 0.0
    #: Wall seconds in flight added up over processes (the mean's denominator).
    busy_seconds: float = 0.0
    #: The most runs in flight at once in one process.
    peak: int = 0
    #: Calls that raised a provider fault (a class of ``--prob-retry-on``).
    faults: int = 0
    #: Times a window was halved after a fault.
    cuts: int = 0
    #: Benchmarks whose runs executed one at a time although asked for more: "label (why)".
    one_at_a_time: tuple[str, ...] = ()
    #: Runs in flight when the session stopped (``-x``, Ctrl-C, a crash) whose items never reported: those that
    #: finished (recorded with their outcome and charged), and those cancelled (recorded as skipped).
    unreported: int = 0
    cancelled: int = 0

    @property
    def mean(self) -> float:
        """Mean runs in flight while any was."""
        return self.in_flight_seconds / self.busy_seconds if self.busy_seconds > 0 else 0.0

    @property
    def ideal_seconds(self) -> float:
        """The wall time of the same calls with exactly ``limit`` in flight in each process all the time."""
        slots = self.limit * max(1, self.processes)
        return self.call_seconds / slots if slots else 0.0

    @property
    def ratio(self) -> float | None:
        """Wall time over the ideal (1.0 is the ideal; None without calls)."""
        ideal = self.ideal_seconds
        return self.wall_seconds / ideal if ideal > 0 else None

    def to_dict(self) -> dict[str, Any]:
        ratio = self.ratio
        return {
            "limit": self.limit,
            "processes": self.processes,
            "runs": self.runs,
            "mean_in_flight": round(self.mean, 3),
            "peak_in_flight": self.peak,
            "call_seconds": round(self.call_seconds, 6),
            "wall_seconds": round(self.wall_seconds, 6),
            "ideal_seconds": round(self.ideal_seconds, 6),
            "wall_over_ideal": None if ratio is None else round(ratio, 4),
            "faults": self.faults,
            "window_cuts": self.cuts,
            "one_at_a_time": list(self.one_at_a_time),
            "finished_unreported": self.unreported,
            "cancelled": self.cancelled,
            "in_flight_seconds": round(self.in_flight_seconds, 6),
            "busy_seconds": round(self.busy_seconds, 6),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Concurrency:
        """Read back from a report (a shard's, the history page's): a field absent or null is its default."""
        return cls(
            limit=int(data.get("limit") or 1),
            processes=int(data.get("processes") or 0),
            runs=int(data.get("runs") or 0),
            call_seconds=float(data.get("call_seconds") or 0.0),
            wall_seconds=float(data.get("wall_seconds") or 0.0),
            in_flight_seconds=float(data.get("in_flight_seconds") or 0.0),
            busy_seconds=float(data.get("busy_seconds") or 0.0),
            peak=int(data.get("peak_in_flight") or 0),
            faults=int(data.get("faults") or 0),
            cuts=int(data.get("window_cuts") or 0),
            one_at_a_time=tuple(str(x) for x in data.get("one_at_a_time") or ()),
            unreported=int(data.get("finished_unreported") or 0),
            cancelled=int(data.get("cancelled") or 0),
        )

    @classmethod
    def merged(cls, parts: Iterable[Concurrency]) -> Concurrency | None:
        """The session's figures from each process's; None when no process ran runs concurrently."""
        parts = [part for part in parts if part.processes]
        if not parts:
            return None
        return cls(
            limit=max(part.limit for part in parts),
            processes=sum(part.processes for part in parts),
            runs=sum(part.runs for part in parts),
            call_seconds=sum(part.call_seconds for part in parts),
            wall_seconds=max(part.wall_seconds for part in parts),
            in_flight_seconds=sum(part.in_flight_seconds for part in parts),
            busy_seconds=sum(part.busy_seconds for part in parts),
            peak=max(part.peak for part in parts),
            faults=sum(part.faults for part in parts),
            cuts=sum(part.cuts for part in parts),
            one_at_a_time=tuple(sorted({label for part in parts for label in part.one_at_a_time})),
            unreported=sum(part.unreported for part in parts),
            cancelled=sum(part.cancelled for part in parts),
        )


@dataclass
class Meter:
    """Runs in flight in this process over time (thread-safe: pool threads end runs too)."""

    limit: int = 1
    in_flight: int = 0
    peak: int = 0
    runs: int = 0
    call_seconds: float = 0.0
    in_flight_seconds: float = 0.0
    busy_seconds: float = 0.0
    faults: int = 0
    cuts: int = 0
    one_at_a_time: set[str] = field(default_factory=set)
    unreported: int = 0
    cancelled: int = 0
    _last: float = field(default_factory=time.perf_counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def started(self) -> None:
        """A run started: one more in flight."""
        self._change(1)

    def ended(self, call_seconds: float | None) -> None:
        """A run ended after its call took ``call_seconds`` (its last attempt); None: it was cancelled."""
        if call_seconds is not None:
            with self._lock:
                self.runs += 1
                self.call_seconds += call_seconds
        self._change(-1)

    def _change(self, delta: int) -> None:
        with self._lock:
            now = time.perf_counter()
            if self.in_flight:
                elapsed = now - self._last
                self.in_flight_seconds += self.in_flight * elapsed
                self.busy_seconds += elapsed
            self._last = now
            self.in_flight += delta
            self.peak = max(self.peak, self.in_flight)

    def snapshot(self) -> Concurrency:
        with self._lock:
            return Concurrency(
                limit=self.limit,
                processes=1 if self.runs or self.one_at_a_time else 0,
                runs=self.runs,
                call_seconds=self.call_seconds,
                wall_seconds=self.busy_seconds,
                in_flight_seconds=self.in_flight_seconds,
                busy_seconds=self.busy_seconds,
                peak=self.peak,
                faults=self.faults,
                cuts=self.cuts,
                one_at_a_time=tuple(sorted(self.one_at_a_time)),
                unreported=self.unreported,
                cancelled=self.cancelled,
            )
