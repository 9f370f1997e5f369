"""The nights a case's state is decided over: the newest reports of a ``--prob-history`` folder, read once.

Each report gives every case it ran one :class:`~pytest_probability.maths.states.Night`
(its passes of its counted runs, and the state that night's report stored in
``rows[].history``), dated by the report's ``created_utc`` (its day, UTC). A
file that is not a report is skipped, with a note (as the history page does).
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

from ...report import history as report_history
from ...report.history import Nights, from_reports
from ...vocabulary import HISTORY_PREFIX


def today() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d")


def newest(folder: Path, count: int) -> list[Path]:
    """The newest ``count`` reports of a history folder (by name, which sorts by time), oldest first."""
    if not folder.is_dir() or count <= 0:
        return []
    names = sorted(p for p in folder.iterdir() if p.name.startswith(HISTORY_PREFIX) and p.suffix == ".json")
    return names[-count:]


def read(folder: Path, window: int) -> Nights:
    """The newest ``window`` nights of a history folder (tonight is the session's own)."""
    loaded = report_history.load([report_history.Source(p, in_folder=True) for p in newest(folder, window)])
    nights = from_reports(loaded.reports)
    nights.skipped = list(loaded.skipped)
    return nights


__all__ = ["Nights", "newest", "read", "today"]
