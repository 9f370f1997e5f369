"""Each concurrent run's own output: what it prints and logs, kept apart until its own call shows it.

pytest captures a test's output per phase, with one capture for the whole process: it cannot tell two runs
in flight apart. While runs execute concurrently (:mod:`.window`), :func:`routed` puts a router in front of
``sys.stdout`` and ``sys.stderr`` and a filter on the root logger's handlers; what a run's task or thread
writes or logs is kept on its :class:`~.execution.Execution` (the calling context's :data:`EXECUTING`), and
everything else passes through unchanged. Its own call then writes it out (:func:`replay`), inside the
capture of that call, so that each run's report holds its own output and no other run's (and, with ``-s``,
the terminal shows it in run order).
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import sys
from collections.abc import Iterator
from typing import Any, Protocol, TextIO


class Kept(Protocol):
    """Where a concurrent run's output waits for its own call (``run.execution.Execution``)."""

    output: list[tuple[str, str]]
    records: list[Any]


#: The concurrent run executing in the calling context (its task's or thread's), or None.
EXECUTING: contextvars.ContextVar[Kept | None] = contextvars.ContextVar("pytest_probability_executing", default=None)
#: The attribute a log record routed to a run carries, so that the other handlers' filters drop it too.
_ROUTED = "_pytest_probability_routed"


class Router:
    """Stands in for ``sys.stdout`` or ``sys.stderr`` while runs are in flight: a concurrent run's text is
    kept for its own call, anything else goes to the stream it replaced."""

    def __init__(self, target: TextIO, name: str) -> None:
        self._target = target
        self._name = name

    def write(self, text: str) -> int:
        execution = EXECUTING.get()
        if execution is None:
            return self._target.write(text)
        execution.output.append((self._name, text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if EXECUTING.get() is None:
            self._target.flush()

    def __getattr__(self, name: str) -> Any:  # encoding, isatty, fileno, buffer ...: the stream's own
        return getattr(self._target, name)


class Route(logging.Filter):
    """On each handler of the root logger while runs are in flight: a concurrent run's records are kept for
    its own call (and dropped here); any other record passes."""

    def filter(self, record: logging.LogRecord) -> bool:
        execution = EXECUTING.get()
        if execution is None:
            return True
        if not getattr(record, _ROUTED, False):
            setattr(record, _ROUTED, True)
            execution.records.append(record)
        return False


#: The one filter on the root logger's handlers while runs are in flight.
_ROUTE = Route()


@contextlib.contextmanager
def routed(keep: bool = False) -> Iterator[None]:
    """Runs' output kept apart while the block runs (the calls in which concurrent runs execute).

    ``keep``: leave the router in place after the block, for the loop's last steps after the call's own
    coroutine returned (a sliding group's tasks run on in them); pytest's capture puts its own stream
    back at the phase's end, and :func:`restore` undoes the rest at the session's end."""
    install()
    try:
        yield
    finally:
        if not keep:
            restore()


def install() -> None:
    """The router in front of ``sys.stdout`` and ``sys.stderr`` (once: never a router in front of a router),
    and the filter on each handler of the root logger."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if not isinstance(stream, Router):
            setattr(sys, name, Router(stream, name))
    for handler in logging.getLogger().handlers:
        if _ROUTE not in handler.filters:
            handler.addFilter(_ROUTE)


def restore() -> None:
    """The streams and handlers as they were before :func:`install`."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if isinstance(stream, Router):
            setattr(sys, name, stream._target)
    for handler in logging.getLogger().handlers:
        handler.removeFilter(_ROUTE)


def replay(execution: Kept) -> None:
    """Write out what ``execution`` printed and logged, in order, into the current call's capture, once."""
    output, execution.output = execution.output, []
    if output:
        for name, text in output:
            stream = sys.stdout if name == "stdout" else sys.stderr
            stream.write(text)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
    records, execution.records = execution.records, []
    for record in records:
        record.__dict__.pop(_ROUTED, None)
        logging.getLogger(record.name).handle(record)
