"""``--prob-history``: the session's report added to the history folder, which later sessions compare with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ... import files
from ...model.rows import Summary
from ...protocols import WRITE, Finisher
from ...report.writers import ReportDict
from .baseline import history_name


class HistoryReport(Finisher):
    """``--prob-history``: the session's report added to the folder, for a session that ran and finished normally."""

    phase = WRITE

    def __init__(self, folder: Path, report: ReportDict) -> None:
        self.folder = folder
        self.report = report

    def finish(self, session: pytest.Session, summary: Summary) -> None:
        if not summary.rows or int(session.exitstatus) not in (0, 1):
            return
        report = self.report.get(session, summary)
        self.folder.mkdir(parents=True, exist_ok=True)
        files.write_atomic(self.folder / history_name(), json.dumps(report, indent=2, ensure_ascii=False) + "\n")
