"""The gates' verdicts at the session's end: a failed verdict fails the session, and ``--lf`` reruns whole cases.

A case whose verdict failed is rerun whole by ``--lf`` (every run marked in
the ``lastfailed`` cache), so that its verdict can be decided again. A failed
verdict sets exit status 1 whether or not its verdict item ran (deselected,
or ``--prob-no-gate-items``), unless a waiver excuses its case (quarantine:
``protocols.Waiver``), whose verdict item was xfailed and which ``--lf``
leaves alone.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import pytest

from ..collect.nodeid import set_lastfailed
from ..errors import ProbabilityGateWarning
from ..model.rows import Summary
from ..protocols import Finisher
from ..text import printable

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


#: Cases named in the one warning about a bar with no score; the rest are counted.
SHOWN = 5


class UnscoredGates(Finisher):
    """One ``ProbabilityGateWarning`` naming the cases whose score gate had no score to judge (UNDECIDED, never
    PASS): a ``min_score`` naming a score the case never recorded (a typo, or a grader that did not run)."""

    def __init__(self, results: Results) -> None:
        self.results = results

    def finish(self, session: pytest.Session, summary: Summary) -> None:
        missing: dict[str, list[str]] = {}
        for result in self.results.analysis().rows:
            for gate in result.scores:
                if not gate.n and result.row.counts.total:
                    missing.setdefault(gate.spec.name, []).append(result.row.label)
        for name, labels in missing.items():
            shown = ", ".join(labels[:SHOWN]) + (f" and {len(labels) - SHOWN} more" if len(labels) > SHOWN else "")
            warnings.warn(
                ProbabilityGateWarning(
                    printable(
                        f"min_score names score {name!r}, which {len(labels)} case(s) never recorded: {shown}; their gates "
                        "are UNDECIDED (check the name given to record_score())"
                    )
                ),
                stacklevel=1,
            )
