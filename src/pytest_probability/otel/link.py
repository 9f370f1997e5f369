"""The one way between xdist workers and the controller, for every signal.

A worker's SDK processors and readers export their batches, encoded by the
SDK's encoders, into its :class:`Outbox` (no worker talks to the network): each
run's teardown flushes its span and log processors, so that the run's spans and
log records travel on its teardown report with its record, and the worker's end
flushes its metric reader too and ships the rest in its ``workeroutput``. In
the controller the :class:`Inbox` hands each request to its signal's guard,
which batches them as the SDK's batch processor would and sends them with the
breaker, the spill and the deadline of the session. The inbox also gives each worker the session span's
context and the resource, so that every run span is a child of the session
span and the session is one trace.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Mapping

from ..model.run import CurrentRun
from ..protocols import Link, RunObserver

#: The teardown-report attribute and ``workeroutput`` key: a list of (signal, serialized request, count).
ATTRIBUTE = "prob_otel"


class Outbox(RunObserver, Link):
    """A worker's side: what its processors exported, on the next teardown report; the rest at its end."""

    attribute = ATTRIBUTE

    def __init__(self) -> None:
        self._items: list[tuple[str, bytes, int]] = []
        self._lock = threading.Lock()
        #: What flushes the worker's span and log processors into this outbox, at each run's teardown: a run's
        #: spans and records travel with its record, also when the controller stops the workers at once.
        self.per_run: list[Callable[[], Any]] = []
        #: What flushes its metric reader too, at its end.
        self.flushes: list[Callable[[], Any]] = []

    def add(self, kind: str, body: bytes, count: int) -> bool:
        with self._lock:
            self._items.append((kind, body, count))
        return True

    def take(self) -> list[tuple[str, bytes, int]]:
        with self._lock:
            items, self._items = self._items, []
        return items

    def run_finished(self, item: Any, run: CurrentRun) -> None:
        for flush in self.per_run:
            flush()
        items = self.take()
        if items:
            run.report_extras[ATTRIBUTE] = items

    def leftover(self) -> Any:
        for flush in (*self.per_run, *self.flushes):
            try:
                flush()
            except Exception:  # pragma: no cover - a worker's end must not fail on its telemetry
                pass
        return self.take() or None


class Inbox(Link):
    """The aggregating process's side: each worker's requests, off reports and out of its output."""

    attribute = ATTRIBUTE

    def __init__(self, forward: Callable[[str, bytes, int], Any], worker_input: Callable[[], Mapping[str, Any]]) -> None:
        self.forward, self._worker_input = forward, worker_input

    def worker_input(self) -> Mapping[str, Any]:
        return self._worker_input()

    def receive(self, value: Any) -> None:
        for kind, body, count in value:
            self.forward(kind, bytes(body), count)
