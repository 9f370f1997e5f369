"""The report files, written at the session's end: ``--prob-json`` and ``--prob-html`` (the history folder's: ``features.compare.history_folder``).

Each writer is a :class:`~pytest_probability.protocols.Finisher`. They write
the same report dict (:class:`ReportDict`, built once from the rows and every
facet), with the one safe writer (:func:`pytest_probability.files.write_text`:
a symlink's target, a FIFO or a device written through, never replaced). A
session that executed no run (``--collect-only``, a ``-k`` that selects
nothing, a collection error) never replaces a good report with an empty one.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .. import files
from ..model.rows import Summary
from ..protocols import WRITE, Finisher, Registry
from ..session import Notes
from . import json_report


class ReportDict:
    """The session's report dict, built once for every writer (the JSON report's shape), from the facets
    registered when it is built."""

    def __init__(self, settings: dict[str, Any], parts: Registry) -> None:
        self.settings = settings
        self.parts = parts
        self._built: tuple[Summary, int, dict[str, Any]] | None = None

    def get(self, session: pytest.Session, summary: Summary) -> dict[str, Any]:
        status = int(session.exitstatus)
        if self._built is None or self._built[0] is not summary or self._built[1] != status:
            report = json_report.build(summary, settings=self.settings, exit_status=status, facets=self.parts.facets)
            self._built = (summary, status, report)
        return self._built[2]

    def release(self) -> None:
        self._built = None


class _ReportFile(Finisher):
    phase = WRITE

    def __init__(
        self, path: Path, report: ReportDict, notes: Notes, empty_ok: Callable[[], bool] = lambda: False
    ) -> None:
        """``empty_ok``: whether a report without runs is written all the same (a shard whose runs are all
        in other shards: the merge needs every shard's report)."""
        self.path = path
        self.report = report
        self.notes = notes
        self.empty_ok = empty_ok

    def finish(self, session: pytest.Session, summary: Summary) -> None:
        if not summary.rows and not self.empty_ok():
            # No run was executed: an empty report must not replace a good one.
            if self.path.is_file():
                self.notes.append(f"no benchmark run was executed: {self.path} was left as it was")
            return
        text = self.text(self.report.get(session, summary))
        try:
            files.write_text(self.path, text)
        except OSError as exc:
            if exc.errno is None:  # already a sentence naming the path (a FIFO nobody reads)
                raise
            # A full disk (ENOSPC), a file size limit (EFBIG): the atomic write left the previous file whole.
            kept = "; the previous report was left as it was" if self.path.is_file() else ""
            raise OSError(f"{self.path}: {exc.strerror or exc}{kept}") from exc

    def text(self, report: dict[str, Any]) -> str:
        raise NotImplementedError


class JsonReport(_ReportFile):
    """``--prob-json``: strict JSON, one row and one record per line."""

    def text(self, report: dict[str, Any]) -> str:
        return json_report.dumps(report)


class HtmlReport(_ReportFile):
    """``--prob-html``: one self-contained page of the same report."""

    def __init__(
        self,
        path: Path,
        report: ReportDict,
        notes: Notes,
        trace_url: str | None,
        empty_ok: Callable[[], bool] = lambda: False,
    ) -> None:
        super().__init__(path, report, notes, empty_ok)
        self.trace_url = trace_url

    def text(self, report: dict[str, Any]) -> str:
        from . import html_report  # only with --prob-html

        return html_report.render(report, trace_url=self.trace_url)
