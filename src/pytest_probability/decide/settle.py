"""The verdicts at the session's end: a failed verdict fails the session, and ``--lf`` reruns whole cases.

A case whose verdict failed is rerun whole by ``--lf`` (every run marked in
the ``lastfailed`` cache), so that its verdict can be decided again. A failed
verdict sets exit status 1 whether or not its verdict item ran (deselected,
or ``--prob-no-gate-items``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from ..collect.nodeid import set_lastfailed
from ..model.rows import Summary
from ..protocols import Finisher, Link

if TYPE_CHECKING:
    from ..session import State
    from .book import DecisionBook
    from .results import Results


def fail_session(session: pytest.Session) -> None:
    """A verdict failed: the session fails (exit status 1), also when no verdict item failed it
    (``--prob-no-gate-items``, or the item deselected by ``-k``, ``-m`` or ``--deselect``), as in
    0.3.0. A verdict is never counted twice: the exit status is 1 either way."""
    if session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


class SettleGates:
    """Finisher: release waiting gate items, remove the decisions channel, settle failed gates."""

    def __init__(self, book: DecisionBook, results: Results) -> None:
        self.book = book
        self.results = results

    def finish(self, session: pytest.Session, summary: Summary) -> None:
        self.book.stop()
        self.book.cleanup()
        failed = self.results.analysis().failed_gates
        if failed:
            fail_session(session)
            set_lastfailed(session.config, failed=[r.nodeid for row in failed for r in row.row.records])  # all its runs


class EmptyShard(Finisher):
    """``--prob-shard``: a shard whose every run is in other shards (more shards than some case has runs)
    executed nothing, which pytest calls exit status 5 (no tests ran). It is a shard all the same: it exits
    0 and writes its report, which the merge needs. A shard that collected no run at all (a wrong path)
    keeps its 5."""

    def __init__(self, state: State, collect_only: bool) -> None:
        self.state = state
        self.collect_only = collect_only

    @property
    def empty(self) -> bool:
        """Whether this session is a shard that collected runs, all of them other shards'."""
        return not self.collect_only and self.state.runs_of_other_shards > 0 and not self.state.records

    def finish(self, session: pytest.Session, summary: Summary) -> None:
        if self.empty and session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
            session.exitstatus = pytest.ExitCode.OK


#: An xdist worker's output key: how many runs of other shards it deselected.
SHARD_DESELECTED = "prob_shard_deselected"


class ShardDeselected(Link):
    """An xdist worker's count of runs deselected for other shards (``collect.order.shard``), shipped at its end to
    the controller, whose :class:`EmptyShard` tells an empty shard from one that collected nothing."""

    attribute = SHARD_DESELECTED

    def __init__(self, state: State) -> None:
        self.state = state

    def receive(self, value: Any) -> None:
        self.state.runs_of_other_shards = max(self.state.runs_of_other_shards, int(value))

    def leftover(self) -> Any:
        return self.state.runs_of_other_shards or None
