"""The gates' verdicts at the session's end: a failed verdict fails the session, and ``--lf`` reruns whole cases.

A case whose verdict failed is rerun whole by ``--lf`` (every run marked in
the ``lastfailed`` cache), so that its verdict can be decided again. A failed
verdict sets exit status 1 whether or not its verdict item ran (deselected,
or ``--prob-no-gate-items``), unless a waiver excuses its case (quarantine:
``protocols.Waiver``), whose verdict item was xfailed and which ``--lf``
leaves alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from ..collect.nodeid import set_lastfailed
from ..model.rows import Summary
from ..protocols import Finisher

if TYPE_CHECKING:
    from .book import DecisionBook
    from .results import Results


def fail_session(session: pytest.Session) -> None:
    """A verdict failed: the session fails (exit status 1), also when no verdict item failed it
    (``--prob-no-gate-items``, or the item deselected by ``-k``, ``-m`` or ``--deselect``): a failed
    verdict is never lost with its item. A verdict is never counted twice: the exit status is 1 either way."""
    if session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


class SettleGates(Finisher):
    """Finisher: release waiting gate items, remove the decisions channel, settle failed gates."""

    def __init__(self, book: DecisionBook, results: Results) -> None:
        self.book = book
        self.results = results

    def finish(self, session: pytest.Session, summary: Summary) -> None:
        self.book.stop()
        self.book.cleanup()
        parts = self.book.parts
        failed = [row for row in self.results.analysis().failed_gates if not parts.waived(row.row.case)]
        if failed:
            fail_session(session)
            set_lastfailed(session.config, failed=[r.nodeid for row in failed for r in row.row.records])  # all its runs
