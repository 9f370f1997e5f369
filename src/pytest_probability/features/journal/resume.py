"""Resuming from the journal: its runs deselected in every process that collects, and counted in the exit status.

:class:`Resume` is the :class:`~pytest_probability.protocols.ItemsCheck` that
deselects the runs a journal holds (and refuses a journal of another suite or
selection); :class:`JournalHooks` and :class:`JournalLink` are the xdist
controller's part; :class:`ResumedOutcomes` the exit status and ``--lf``'s
cache with the resumed runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from ...collect.items import Run
from ...collect.nodeid import set_lastfailed
from ...model.rows import Summary
from ...model.run import RunRecord
from ...protocols import COUNT, Finisher, ItemsCheck, Link
from ...text import printable
from ...vocabulary import ERROR, FAIL
from .journal_file import SHOWN, Contents, case_difference

#: An xdist worker's ``workerinput`` key: the journal's path and the length resumed from.
WORKER_INPUT = "prob_journal"


class Resume(ItemsCheck):
    """The runs a journal holds are deselected, in every process that collects (an
    :class:`~pytest_probability.protocols.ItemsCheck`); a case the journal knows must be the session's
    own, selected and unchanged (its marks, parameters and runs).

    A serial session refuses a difference at once (a usage error). An xdist worker cannot (its
    controller would see a crash): it writes the refusal into the decisions channel's folder, where
    :class:`JournalHooks` on the controller reads it when the worker's collection arrives.
    """

    def __init__(self, path: Path, contents: Contents, folder: Path | None = None, worker: str = "") -> None:
        self.path = path
        self.cases = contents.cases
        self.nodeids = contents.nodeids
        self.folder = folder
        self.worker = worker

    def check_items(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        if not self.cases:
            return
        kept: list[pytest.Item] = []
        dropped: list[pytest.Item] = []
        seen: dict[str, dict[str, Any]] = {}
        nodeids = self.nodeids
        for item in items:
            if isinstance(item, Run):
                case = item.prob_case
                if case.key in self.cases and case.key not in seen:
                    seen[case.key] = case.to_dict()
                if item.nodeid in nodeids:
                    dropped.append(item)
                    continue
            kept.append(item)
        text = self._refusal(seen)
        if text is not None:
            if self.folder is None:
                raise pytest.UsageError(text)
            (self.folder / f"journal-refused-{self.worker}.txt").write_text(text, encoding="utf-8")
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept

    def _refusal(self, seen: Mapping[str, Mapping[str, Any]]) -> str | None:
        missing = [key for key in self.cases if key not in seen]
        if missing:
            shown = ", ".join(missing[:SHOWN]) + (f" and {len(missing) - SHOWN} more" if len(missing) > SHOWN else "")
            return printable(
                f"--prob-journal: {self.path} has runs of {len(missing)} case(s) this session does not "
                f"select: {shown}; resume with the same files and selection (-k, -m) it was written "
                "with, or give another journal path to start over"
            )
        for key, collected in seen.items():
            diff = case_difference(self.cases[key], collected)
            if diff:
                return printable(
                    f"--prob-journal: {self.path} has runs of case {key} as it was before: it differs "
                    f"now in {', '.join(diff)}; resume with the suite it was written for, or give "
                    "another journal path to start over"
                )
        return None


class JournalHooks:
    """The xdist controller's part: a worker's refusal (:class:`Resume`) ends the session as a usage error."""

    def __init__(self, folder: Any) -> None:
        """``folder``: returns the decisions channel's folder (None before it is opened)."""
        self.folder = folder

    @pytest.hookimpl(optionalhook=True, tryfirst=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        folder = self.folder()
        if folder is None:
            return
        for path in sorted(Path(folder).glob("journal-refused-*.txt")):
            raise pytest.UsageError(path.read_text(encoding="utf-8"))


class JournalLink(Link):
    """Each xdist worker gets the journal's path and the length the controller resumed from: a worker reads
    what was resumed, never what the controller appends meanwhile (so every worker deselects the same runs)."""

    def __init__(self, path: Path, length: int) -> None:
        self.path = path
        self.length = length

    def worker_input(self) -> Mapping[str, Any]:
        return {WORKER_INPUT: {"path": str(self.path), "length": self.length}}


class ResumedOutcomes(Finisher):
    """The exit status and ``--lf``'s cache count the resumed runs as the session that executed them: a
    failed or errored run fails the session as it did there (unless its case is gated: a gate item decides
    it, and the run was xfailed), and the next ``--lf`` reruns it; a session whose every run was resumed ran
    no item, which pytest calls exit status 5, but it has its runs: 0 (or 1). First of the finishers, so
    that a failed gate's settling (every run of its case rerun by ``--lf``) comes after it."""

    phase = COUNT

    def __init__(self, resumed: list[RunRecord], gated: Any, runxfail: bool) -> None:
        """``gated``: whether a case's runs are gated (their failures xfailed)."""
        self.resumed = resumed
        self.gated = gated
        self.runxfail = runxfail

    def finish(self, session: pytest.Session, summary: Summary) -> None:
        if not self.resumed:
            return
        if session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
            session.exitstatus = pytest.ExitCode.OK
        failed = {
            record.nodeid
            for record in self.resumed
            if record.outcome in (FAIL, ERROR) and (self.runxfail or not self.gated(record.case))
        }
        if failed and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        # --lf: the session that executed them was killed before pytest's cache was written.
        set_lastfailed(
            session.config,
            failed=failed,
            passed=[record.nodeid for record in self.resumed if record.nodeid not in failed],
        )
