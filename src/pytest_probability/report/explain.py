"""``--prob-explain``: a plain-language reading of every line.

:class:`ExplainFacet` puts the readings (the statistics' :class:`~.readings.Explainer`, and each feature's
``Readings``) in the outputs: an ``explanation`` beside each thing read in the JSON report, and the
``Explained`` section after the summary, with the methods used; without the flag, a one-line hint when
there is something worth reading.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..aggregate.benchmarks import OVERALL
from ..model.outputs import Line
from ..protocols import Facet
from ..text import label_text
from ..vocabulary import FAILED, UNDECIDED
from .readings import Explainer

if TYPE_CHECKING:
    from ..config.settings import StatsConfig
    from ..decide.results import Results

HINT = "Run with --prob-explain for a plain-language reading."
GUIDE = 'Full guide: docs/user-guide.md, "Fractions you can trust" and "Comparing and catching drops"'


class ExplainFacet(Facet):
    """``--prob-explain``'s readings: the ``Explained`` section after the summary, and an ``explanation``
    beside each thing read in the JSON report; without the flag, a one-line hint when there is something
    worth reading. Registered after the other facets: its JSON fields are theirs with the readings added."""

    def __init__(self, results: Results, parts: Any, config: StatsConfig, width: Callable[[], int]) -> None:
        """``parts``: what holds the features' readings (``readings``: the session's registry, or the merge's)."""
        self.results = results
        self.parts = parts
        self.config = config
        self.width = width
        self.explainer = Explainer(config)

    def row_fields(self, row: Any) -> dict[str, Any]:
        if not self.config.explain:
            return {}
        result = self.results.analysis().by_key.get(row.case.key)
        if result is None:
            return {}
        fields: dict[str, Any] = {"explanation": self.explainer.row(result)}
        if result.gate is not None:
            fields["gate"] = {**result.gate.to_dict(row.case.runs), "explanation": self.explainer.gate(result)}
        if result.latency is not None:
            fields["latency"] = {**result.latency.to_dict(), "explanation": self.explainer.latency(result)}
        return fields

    def report_fields(self) -> dict[str, Any]:
        if not self.config.explain:
            return {}
        explain = self.explainer
        aggregates = []
        for aggregate in self.results.analysis().aggregates:
            data = aggregate.to_dict()
            data["explanation"] = explain.aggregate(aggregate)
            for name, metric in data["metrics"].items():
                metric["explanation"] = explain.metric(aggregate, name)
            aggregates.append(data)
        fields: dict[str, Any] = {"aggregates": aggregates}
        for readings in self.parts.readings:
            fields.update(readings.explained_fields())
        return fields

    def readings(self) -> tuple[list[tuple[str, str]], set[str], list[tuple[int, str, str]]]:
        """(title, text) of every line the section reads, the kinds of the statistics' lines among them, and
        the methods of the features that read lines."""
        analysis = self.results.analysis()
        readings: list[tuple[str, str]] = []
        kinds: set[str] = set()
        explain = self.explainer
        for row in analysis.rows:
            label = label_text(row.row.label)
            counts = row.row.counts
            if row.gate is not None:
                readings.append((f"{label}: gate", explain.gate(row)))
                kinds.add("gate")
            elif counts.passes < counts.total or counts.total == 0 or counts.stopped:
                readings.append((label, explain.row(row, terminal=True)))
            if counts.stopped:
                kinds.add("stopped")
            if row.latency is not None:
                readings.append((f"{label}: latency", explain.latency(row)))
                kinds.add("latency")
        for aggregate in analysis.aggregates:
            if aggregate.shown and self.config.intervals:
                readings.append((f"{label_text(aggregate.name)}: over inputs", explain.aggregate(aggregate)))
                kinds.add("inputs")
            if aggregate.metrics and (aggregate.scope != OVERALL or aggregate.functions > 1):
                for name in aggregate.metrics:
                    readings.append((f"{label_text(aggregate.name)}: {name}", explain.metric(aggregate, name)))
                kinds.add("metric")
        more: list[tuple[int, str, str]] = []
        for part in self.parts.readings:
            theirs = part.readings()
            if theirs:
                readings += theirs
                more += part.glossary()
                kinds.add("feature")
        return readings, kinds, more

    def lines(self) -> Sequence[Line]:
        readings, kinds, more = self.readings()
        if not self.config.explain:
            # The hint when there is something worth reading: a gate FAIL or UNDECIDED, a comparison, metric or
            # baseline line, a case stopped early.
            undecided = any(r.verdict in (FAILED, UNDECIDED) for r in self.results.analysis().gated)
            return [("", {}), (f"  {HINT}", {})] if undecided or kinds & {"feature", "metric", "stopped"} else []
        if not readings:
            return []
        width = max(40, self.width() - 4)
        lines: list[Line] = [("", {}), ("  Explained (--prob-explain):", {"bold": True})]
        for title, text in readings:
            lines.append((f"  {title}", {"bold": True}))
            for paragraph in text.split("\n"):
                lines += [
                    (line, {})
                    for line in textwrap.wrap(paragraph, width, initial_indent="    ", subsequent_indent="    ")
                ]
        lines += [("", {}), ("  Methods used:", {"bold": True})]
        for name, text in self.explainer.glossary(kinds.__contains__, more):
            lines += [
                (line, {})
                for line in textwrap.wrap(f"{name}: {text}", width, initial_indent="    ", subsequent_indent="      ")
            ]
        lines.append((f"  {GUIDE}", {}))
        return lines
