"""The nights a case's state is decided over: the newest reports of a ``--prob-history`` folder, read once.

Each report gives every case it ran one :class:`~pytest_probability.maths.states.Night`
(its passes of its counted runs, and the state that night's report stored in
``rows[].history``), dated by the report's ``created_utc`` (its day, UTC). A
file that is not a report is skipped, with a note (as the history page does).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from ...maths.states import Night
from ...report import history as report_history
from ...vocabulary import HISTORY_PREFIX


@dataclass
class Nights:
    """The nights read, oldest first: each one's day and its cases' nights by case key."""

    days: list[str] = field(default_factory=list)
    cases: list[dict[str, Night]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def of(self, key: str, label: str, tonight: Night | None) -> list[Night | None]:
        """A case's nights (None where it did not run), tonight's last."""
        found: list[Night | None] = [night.get(key) or night.get(label) for night in self.cases]
        return [*found, tonight]


def day(report: Mapping[str, Any]) -> str:
    """The day (UTC, ``YYYY-MM-DD``) of a report's session; ``created`` (local time) for 0.3.0's."""
    text = str(report.get("created_utc") or report.get("created") or "")
    return text[:10]


def today() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d")


def newest(folder: Path, count: int) -> list[Path]:
    """The newest ``count`` reports of a history folder (by name, which sorts by time), oldest first."""
    if not folder.is_dir() or count <= 0:
        return []
    names = sorted(p for p in folder.iterdir() if p.name.startswith(HISTORY_PREFIX) and p.suffix == ".json")
    return names[-count:]


def night_of(row: Mapping[str, Any], when: str) -> Night | None:
    """A report row's night: its passes of its counted runs, and its stored state; None without counts."""
    passes, total = row.get("passes"), row.get("total", row.get("count"))
    if not isinstance(passes, int) or not isinstance(total, int) or isinstance(passes, bool) or total < 0:
        return None
    stored = row.get("history") if isinstance(row.get("history"), Mapping) else {}
    text = {k: stored.get(k) if isinstance(stored.get(k), str) else None for k in ("state", "since", "first_flaky")}
    return Night(when, min(passes, total), total, text["state"], text["since"], text["first_flaky"])


def from_reports(reports: Sequence[Mapping[str, Any]]) -> Nights:
    """The nights of reports already read (oldest first)."""
    nights = Nights()
    for report in reports:
        when = day(report)
        cases: dict[str, Night] = {}
        for row in report.get("rows") or ():
            if not isinstance(row, Mapping):
                continue
            night = night_of(row, when)
            if night is None:
                continue
            # a 0.3.0 row has no node id: its label is its key
            key = row.get("nodeid") if isinstance(row.get("nodeid"), str) else row.get("label") or row.get("case")
            if isinstance(key, str) and key:
                cases.setdefault(key, night)
        nights.days.append(when)
        nights.cases.append(cases)
    return nights


def read(folder: Path, window: int) -> Nights:
    """The newest ``window`` nights of a history folder (tonight is the session's own)."""
    loaded = report_history.load([report_history.Source(p, in_folder=True) for p in newest(folder, window)])
    nights = from_reports(loaded.reports)
    nights.skipped = list(loaded.skipped)
    return nights
