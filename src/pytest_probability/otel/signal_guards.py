"""Each signal's way out in the aggregating process: the OTLP file, the endpoint, the spill, the deadline.

The SDK's processors and readers hand each encoded batch (:mod:`.sdk_exporters`) to the signal's
:class:`Guard`, on their thread; an xdist worker's requests are forwarded, and the guard batches and sends
them on a thread of its own. What the SDK does not give, and the guard adds: every request in the OTLP
file first; one breaker per signal (a failed request sends that signal's later ones to the spill file, the
others carry on); a partial success counted as a success (its rejected items reported, never spilled nor
retried); and the session end's deadline (:func:`drain`): no request starts after it, one in flight is
waited for a short grace (its answer, not the clock, says whether it is kept), and whatever the endpoint
did not confirm is spilled, once.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from ..files import Lines
from . import otlp_json
from .request_sender import Deferred, Result, Sender

#: The most the session's end waits past its deadline for the answer to a request in flight.
GRACE = 2.0
#: A forwarded batch holds at most this much, unless one item is larger: under a gRPC server's default 4 MiB.
BATCH_BYTES = 2 << 20
#: Wakes a guard's thread at the session's end.
_WAKE = object()
#: What a request counts, per signal, in the notes and the files.
UNITS = {"traces": "spans", "metrics": "metric points", "logs": "log records"}


def _setting(name: str, default: int) -> int:
    """A positive whole ``OTEL_BSP_*`` value (the SDK warns about a bad one), else the SDK's default."""
    try:
        value = int(os.environ.get(name, "").strip() or default)
    except ValueError:
        return default
    return value if value > 0 else default


def grace(timeout: float) -> float:
    """How long the session's end waits, past the deadline, for a request already in flight."""
    return min(GRACE, timeout)


class _Request:
    """One request. Its ``state`` moves, under its guard's lock, from ``pending`` to ``sending`` to ``sent``
    or ``kept``: whoever keeps it spills it, so once, and never when the endpoint confirmed it."""

    __slots__ = ("body", "count", "written", "state")

    def __init__(self, body: bytes, count: int) -> None:
        self.body, self.count, self.written, self.state = body, count, False, "pending"


class Guard:
    """One signal's exporter wrapper: every request to the OTLP file, then to the endpoint or the spill."""

    def __init__(
        self, kind: str, sender: Sender | Deferred | None, file: Lines | None, spill: Lines, timeout: float
    ) -> None:
        self.kind, self.sender, self.file, self.spill, self.timeout = kind, sender, file, spill, timeout
        #: The breaker: why the first failed request failed ("" while none did).
        self.failure = ""
        self.sent = self.rejected = 0
        self.rejected_messages: list[str] = []
        #: A file write that failed for another reason than the disk (the disk's is each file's own).
        self.file_failure = ""
        self._lock = threading.Lock()
        self._open: list[_Request] = []
        self._deadline: float | None = None
        self._abandoned = False
        self._queue: queue.SimpleQueue[Any] | None = None
        self._idle = threading.Event()
        self._idle.set()

    def export(self, body: bytes, count: int) -> bool:
        """A request of this process's processor, sent now, on its thread; True when the endpoint took it."""
        return self.send_all([(body, count)])

    def send_all(self, items: list[tuple[bytes, int]]) -> bool:
        """Requests sent now, in order, each known to the guard before the first starts (the end keeps what
        a hanging first one leaves unsent); True when the endpoint took every one."""
        requests = [self._track(body, count) for body, count in items]
        results = [self._deliver(request) and request.state == "sent" for request in requests]
        return all(results)

    def forward(self, body: bytes, count: int) -> bool:
        """A request encoded elsewhere (an xdist worker's run), sent on this guard's thread with those that
        arrive within ``OTEL_BSP_SCHEDULE_DELAY``, up to ``OTEL_BSP_MAX_EXPORT_BATCH_SIZE`` items, as the SDK's
        batch processor would (concatenated: a protobuf concatenation is their merge)."""
        with self._lock:
            if self._queue is None:
                self._queue = queue.SimpleQueue()
                threading.Thread(target=self._forward, name=f"pytest-probability-otel-{self.kind}", daemon=True).start()
            self._idle.clear()
            self._queue.put((body, count))
        return True

    def _forward(self) -> None:
        assert self._queue is not None
        pending, size, delay = (
            self._queue,
            _setting("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512),
            _setting("OTEL_BSP_SCHEDULE_DELAY", 5000) / 1000,
        )
        while True:
            first = pending.get()
            if first is None:
                return
            batch = [first] if first is not _WAKE else []
            counted, length, until = sum(c for _, c in batch), sum(len(b) for b, _ in batch), time.monotonic() + delay
            while batch and counted < size and length < BATCH_BYTES:
                ending = self._deadline is not None
                try:
                    item = pending.get_nowait() if ending else pending.get(timeout=max(0.0, until - time.monotonic()))
                except queue.Empty:
                    break
                if item is None:
                    pending.put(None)
                    break
                if item is not _WAKE:
                    batch.append(item)
                    counted, length = counted + item[1], length + len(item[0])
            if batch:
                self._deliver(self._track(b"".join(body for body, _ in batch), counted))
            with self._lock:
                if pending.empty():
                    self._idle.set()

    def _track(self, body: bytes, count: int) -> _Request:
        with self._lock:
            self._open.append(request := _Request(body, count))
        return request

    def _write(self, lines: Lines | None, request: _Request) -> None:
        """One request to the OTLP file or the spill file; a file that became unwritable is noted."""
        if lines is None:
            return
        try:
            lines.write(otlp_json.request_to_line(otlp_json.parse(self.kind, request.body)), self.kind, request.count)
        except Exception as exc:
            self.file_failure = self.file_failure or f"{lines.path}: {exc}"

    def _allowed(self) -> float | None:
        """A new request's timeout, or None when none may start (the deadline passed, or the end gave up).
        At the end a request gets what is left of the deadline and the grace."""
        if self._abandoned:
            return None
        if self._deadline is None:
            return self.timeout
        left = self._deadline - time.monotonic()
        return min(self.timeout, left + grace(self.timeout)) if left > 0 else None

    def _deliver(self, request: _Request) -> bool:
        """Write the request to the file, then send it, or spill it if the breaker is open or the endpoint
        did not take it. False when it was not started (the deadline passed): the end keeps it."""
        if not request.written:
            self._write(self.file, request)
            request.written = True
        with self._lock:
            allowed = self._allowed()
            if allowed is None or request.state != "pending":
                return False
            if self.sender is None or self.failure:  # nowhere to send it, or the breaker is open
                self._close(request, "sent" if self.sender is None else "kept")
                return True
            request.state = "sending"
        ok = self._send(request, allowed)
        with self._lock:
            if request.state == "sending":  # not kept by the end meanwhile
                self._close(request, "sent" if ok else "kept")
        return True

    def _close(self, request: _Request, state: str) -> None:
        """Under the lock: the request's last state; a kept one is spilled (so, once)."""
        request.state = state
        self._open.remove(request)
        if state == "kept":
            self._write(self.spill, request)

    def _send(self, request: _Request, timeout: float) -> bool:
        assert self.sender is not None
        try:
            result = self.sender.send(request.body, timeout)
        except Exception as exc:  # anything the exporter raises is a failed request
            result = Result(False, 0, f"{type(exc).__name__}: {exc}")
        if not result.ok:
            self.failure = self.failure or result.reason or "failed"
            return False
        self.sent += request.count
        self.rejected += result.rejected
        if result.reason and result.reason not in self.rejected_messages:
            self.rejected_messages.append(result.reason)
        return True

    def end(self, deadline: float) -> None:
        """The session's end has begun: no request starts after ``deadline`` (monotonic); what waits to be
        forwarded goes now."""
        with self._lock:
            self._deadline = deadline
            if self._queue is not None:
                self._queue.put(_WAKE)

    def wait(self, until: float) -> bool:  # until the forwarded requests are all sent, at most ``until``
        return self._idle.wait(max(0.0, until - time.monotonic()))

    def abandon(self) -> None:
        """The end gives up: nothing starts any more, and whatever was not confirmed is kept, once."""
        with self._lock:
            self._abandoned = True
            open_requests, self._open = self._open, []
            while self._queue is not None:  # what was never taken off the queue
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    self._queue.put(None)
                    break
                if isinstance(item, tuple):
                    open_requests.append(_Request(*item))
            for request in open_requests:
                if request.state not in ("pending", "sending"):
                    continue
                if not request.written:
                    self._write(self.file, request)
                    request.written = True
                if self.sender is None:
                    request.state = "sent"
                    continue
                if not self.failure:
                    self.failure = (
                        f"no answer within {self.timeout:g} s"
                        if request.state == "sending"
                        else f"the {self.timeout:g} s deadline passed before it was sent"
                    )
                request.state = "kept"
                self._write(self.spill, request)


def drain(guards: dict[str, Guard], jobs: list[Callable[[], Any]], timeout: float, files: list[Lines | None]) -> bool:
    """The session's end: ``jobs`` (flushing the processors and readers, sending the metrics) each on its own
    thread (one that hangs takes no time from the others), and the guards' forwarded requests, within
    ``timeout`` and its grace; then whatever was not confirmed is kept, and the files closed. False when the
    deadline passed."""
    deadline = time.monotonic() + timeout
    for guard in guards.values():
        guard.end(deadline)
    threads = [threading.Thread(target=job, name="pytest-probability-otel-end", daemon=True) for job in jobs]
    for thread in threads:
        thread.start()
    until = deadline + grace(timeout)
    for thread in threads:
        thread.join(max(0.0, until - time.monotonic()))
    idle = [guard.wait(until) for guard in guards.values()]
    timed_out = any(thread.is_alive() for thread in threads) or not all(idle)
    for guard in guards.values():
        guard.abandon()
    for lines in files:
        if lines is not None:
            try:
                lines.close()
            except OSError as exc:
                guards["traces"].file_failure = guards["traces"].file_failure or f"{lines.path}: {exc}"
    if not timed_out:
        for guard in guards.values():
            if guard.sender is not None:
                guard.sender.close()
    return not timed_out
