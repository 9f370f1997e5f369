"""What an xdist worker tells the controller about a case before the case's first run there starts.

The controller learns a case from the setup report of its first run on each
worker (``CASE_ATTRIBUTE``). A worker that dies in that setup sends no report,
so the worker also appends the case to a file of its own in the decisions
channel's folder (``cases-<worker>.jsonl``), with one unbuffered ``write`` each:
what a process wrote survives it, whatever kills it. The controller reads the
files only when a crash hits a run of a case it has not learned
(:func:`read_announced`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..model.case import CaseRef

#: The files' names in the channel folder: ``cases-gw0.jsonl``.
PATTERN = "cases-*.jsonl"


class CaseAnnouncements:
    """A worker's side: one JSON line per case, before its first run here starts."""

    def __init__(self, folder: Path, worker: str) -> None:
        self.path = folder / f"cases-{worker}.jsonl"
        self._fd: int | None = None

    def announce(self, case: CaseRef) -> None:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.write(self._fd, (json.dumps(case.to_dict(), separators=(",", ":")) + "\n").encode())


def read_announced(folder: Path | None) -> dict[str, CaseRef]:
    """Every case the workers announced (case key -> CaseRef); a line cut by a crash is skipped."""
    cases: dict[str, CaseRef] = {}
    if folder is None:
        return cases
    for path in sorted(folder.glob(PATTERN)):
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError:
            continue
        for line in lines:
            try:
                case = CaseRef.from_dict(json.loads(line))
            except (ValueError, KeyError, TypeError):
                continue
            cases.setdefault(case.key, case)
    return cases
