"""The CI outputs as one feature: the job summary, GitHub annotations and JUnit XML properties.

==========  ===========================================================================
role        parts
==========  ===========================================================================
aggregating :class:`SourceFacet` (``rows[].source``: where each benchmark is defined,
            which the annotations point at); with a summary or annotations,
            :class:`CiOutputs` (a finisher, after the verdicts: both read the report
            dict every output reads); with ``--junitxml``, ``junit.RunProperties``
            (a sink and a hook) and ``junit.SuiteProperties``
merged      :class:`SourceFacet` (the merge's command line writes the summary and prints
            the annotations of the merged report: :func:`write_outputs`)
==========  ===========================================================================

On in a session when ``$GITHUB_STEP_SUMMARY`` or ``--prob-summary`` gives a
summary, annotations are on (``GITHUB_ACTIONS=true`` or
``--prob-annotations=on``), or ``--junitxml`` is given.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pytest

from ... import files
from ...compat import junitxml
from ...model.rows import Row, Summary
from ...protocols import WRITE, Facet, Finisher
from ...roles.wiring import Aggregation, Feature
from .annotations import annotations as annotation_commands  # `annotations` is the __future__ import's
from .attention import as_report, attention
from .junit import RunProperties, SuiteProperties
from .summary import LIMIT, render

if TYPE_CHECKING:
    from ...config.settings import Settings
    from ...report.report_types import Report
    from ...report.writers import ReportDict
    from ...roles.merging import MergeWiring


def feature(config: pytest.Config, settings: Settings) -> CiOutputsFeature:
    """With a summary, annotations or ``--junitxml`` (the composition root's decision)."""
    return CiOutputsFeature(settings, junitxml.enabled(config))


class SourceFacet(Facet):
    """``rows[].source``: the benchmark's file and line (where an annotation points)."""

    def row_fields(self, row: Row) -> Mapping[str, Any]:
        case = row.case
        return {"source": {"path": case.path or case.key.split("::", 1)[0], "line": case.lineno or 1}}


def title_of(suite: str, report: Report) -> str:
    shard, merged = report.settings.shard, report.merged
    where = f" (shard {shard})" if shard else f" (merged, {merged.shards} shards)" if merged else ""
    return f"pytest-probability{': ' + suite if suite else ''}{where}"


def write_summary(path: Path, text_of: Callable[[int], str], appends: bool) -> None:
    """The summary into ``path``: appended (``$GITHUB_STEP_SUMMARY``: what earlier steps' writes left counts
    against the limit) or written whole, atomically."""
    if not appends:
        path.parent.mkdir(parents=True, exist_ok=True)
        files.write_text(path, text_of(LIMIT))
        return
    try:
        used = path.stat().st_size
    except OSError:
        used = 0
    room = LIMIT - used
    if room < 1024:  # nothing useful fits: GitHub would refuse the whole step's summary
        raise OSError(
            f"{path}: the step summary already holds {used:,} bytes of GitHub's {LIMIT:,}; the "
            "probability summary was not added"
        )
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(text_of(room) + "\n")


def write_outputs(
    report: Mapping[str, Any],
    *,
    suite: str,
    summary: Path | None,
    appends: bool,
    annotate: bool,
    trace_url: str | None,
    out: TextOut,
) -> None:
    """The summary written and the annotations printed, from one report (a session's or the merge's), read once."""
    read = as_report(report)
    items = attention(read, trace_url)
    lines, left = annotation_commands(items) if annotate else ([], {"error": 0, "warning": 0})
    for line in lines:
        out.write(line + "\n")
    out.flush()
    if summary is not None:
        title = title_of(suite, read)
        write_summary(summary, lambda limit: render(read, title=title, items=items, left=left, limit=limit), appends)


class CiOutputs(Finisher):
    """The summary and the annotations, once the verdicts and the exit status are settled."""

    phase = WRITE

    def __init__(self, settings: Settings, report: ReportDict) -> None:
        self.settings = settings
        self.report = report

    def finish(self, session: pytest.Session, summary: Summary) -> None:
        if not summary.rows:
            return
        report = self.report.get(session, summary)
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        out: TextOut = _TerminalLines(session.config) if reporter is not None else sys.stdout
        settings = self.settings
        write_outputs(
            report,
            suite=settings.suite,
            summary=settings.summary,
            appends=settings.summary_appends,
            annotate=settings.annotations,
            trace_url=settings.trace_url,
            out=out,
        )


class TextOut(Protocol):
    """Where the annotations are printed: ``sys.stdout``, or :class:`_TerminalLines` in a session."""

    def write(self, text: str, /) -> object: ...

    def flush(self) -> object: ...


class _TerminalLines:
    """Whole lines through pytest's terminal writer: a workflow command must start its line, and the progress
    line (``[100%]``) may still be open."""

    def __init__(self, config: pytest.Config) -> None:
        self.writer = config.get_terminal_writer()

    def write(self, text: str) -> None:
        for line in text.splitlines():
            if self.writer.width_of_current_line:
                self.writer.line()
            self.writer.line(line)

    def flush(self) -> None:
        pass


class CiOutputsFeature(Feature):
    def __init__(self, settings: Settings | None, junit: bool, outputs: bool = False) -> None:
        """``settings``: the session's (None in the merge, whose command line gives its own); ``outputs``: the
        merge writes a summary or annotations."""
        self.settings = settings
        self.junit = junit
        self.outputs = outputs

    def aggregating(self, wiring: Aggregation) -> None:
        settings = self.settings
        assert settings is not None
        wiring.parts.add(facets=SourceFacet())
        if settings.summary is not None or settings.annotations:
            if settings.summary is not None and not settings.summary_appends:
                files.check_path(settings.summary, "--prob-summary")
            wiring.parts.add(finishers=CiOutputs(settings, wiring.report()))
        if self.junit:
            properties = RunProperties(wiring.book, settings.trace_url)
            wiring.parts.add(sinks=properties, finishers=SuiteProperties(wiring.config, wiring.results))
            wiring.register(properties, "probability-junit")

    def merged(self, wiring: MergeWiring) -> None:
        """``rows[].source`` as the shards had it (their sessions' outputs were on), or for the merge's own
        summary and annotations: a merge of shards without it is the session they would have been."""
        sourced = any(
            isinstance(row, Mapping) and "source" in row
            for _, report in wiring.reports
            for row in report.get("rows") or ()
        )
        if sourced or self.outputs:
            wiring.add_facet(SourceFacet())


def merge_summary_path(given: str | None) -> tuple[Path | None, bool]:
    """The merge's summary: ``--summary PATH`` (written whole; ``off``: none), else ``$GITHUB_STEP_SUMMARY``."""
    if given is not None:
        return (None, False) if given.strip().lower() == "off" else (Path(given), False)
    step = os.environ.get("GITHUB_STEP_SUMMARY", "").strip()
    return (Path(step), True) if step else (None, False)
