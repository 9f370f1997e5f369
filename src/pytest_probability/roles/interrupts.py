"""SIGTERM as Ctrl-C, and the moments it must wait for: one small object per process, owned by its role.

pytest turns Ctrl-C into ``KeyboardInterrupt``: the session stops, the
summary is printed and ``pytest_sessionfinish`` runs, so the finishers write
the JSON report and flush or spill the telemetry. SIGTERM's default action
(what CI sends a cancelled job) kills the process with none of that:
:meth:`Interrupts.install` makes it end the session as Ctrl-C does, except
while a record is being taken in (it raises once the record is in) or while
the finishers run (they finish; the session still ends as interrupted).
"""

from __future__ import annotations

import signal
import threading
from typing import Any

import pytest


class Interrupts:
    def __init__(self) -> None:
        #: Set while the finishers run (a SIGTERM then lets them finish), and on SIGTERM during them.
        self.finishing = False
        self.terminated = False
        #: Set while a report's record is being taken in: a SIGTERM then waits until it is in
        #: (:meth:`raise_pending`), so that no record whose outcome pytest has shown is lost.
        self._taking = False
        self._pending = False

    def install(self, config: pytest.Config) -> None:
        """SIGTERM ends the session as Ctrl-C does. A handler someone else installed (and any thread but the
        main one) is left alone; the previous handler is restored when the config is cleaned up."""
        if threading.current_thread() is not threading.main_thread():
            return
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
            return

        def on_sigterm(signum: int, frame: Any) -> None:
            # A second SIGTERM gets the default action: the process ends at once.
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            if self.finishing:
                # The finishers are writing the report and flushing within their deadline:
                # let them finish; the session still ends as interrupted.
                self.terminated = True
                return
            if self._taking:
                self._pending = True  # raised once the record is in (raise_pending)
                return
            raise KeyboardInterrupt("SIGTERM")

        signal.signal(signal.SIGTERM, on_sigterm)

        def restore() -> None:
            if signal.getsignal(signal.SIGTERM) is on_sigterm:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)

        config.add_cleanup(restore)

    def taking(self, on: bool) -> None:
        """A record is being taken in (``on``), or is in."""
        self._taking = on

    def raise_pending(self) -> None:
        """The SIGTERM that came while a record was taken in, now that it is in."""
        if self._pending:
            self._pending = False
            raise KeyboardInterrupt("SIGTERM")

    def finish(self) -> None:
        """The finishers start: a SIGTERM now only marks the session terminated."""
        self.finishing = True
